"""Deeply nested JSON from a client is a -32602, never a failure inside the engine."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.wire.errors import INVALID_PARAMS, McpError
from mcp_elicit.wire.jsonrpc import Request

KEY = "reliability-tests-only-secret-0123456789abcdef"
_ids = itertools.count(1)


@dataclass
class Pick:
    value: str


def nested(depth: int, leaf: Any = "leaf") -> Any:
    for _ in range(depth):
        leaf = [leaf]
    return leaf


def call(params: dict[str, Any], capabilities: dict[str, Any]) -> Request:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    return Request(next(_ids), "tools/call", {"_meta": meta, **params})


async def test_deeply_nested_arguments() -> None:
    app = Server("deep", state_keys=[KEY])

    @app.tool()
    async def take(data: dict[str, Any], ctx: Context) -> str:
        await ctx.elicit("ok?", Pick, key="k")
        return "done"

    form = {"elicitation": {"form": {}}}
    ok = await app.dispatch(call({"name": "take", "arguments": {"data": {"x": nested(300)}}}, form))
    assert ok["resultType"] == "input_required"
    with pytest.raises(McpError) as info:
        await app.dispatch(call({"name": "take", "arguments": {"data": {"x": nested(600)}}}, form))
    assert info.value.code == INVALID_PARAMS
    assert "nested" in info.value.message


async def test_a_raw_answer_too_deep_to_keep_in_the_state() -> None:
    app = Server("deep", state_keys=[KEY])

    @app.tool()
    async def ask(ctx: Context) -> str:
        await ctx.sample("one", max_tokens=5, key="s")
        await ctx.sample("two", max_tokens=5, key="t")
        return "done"

    sampling = {"sampling": {}}
    state = (await app.dispatch(call({"name": "ask"}, sampling)))["requestState"]

    def answer(depth: int) -> dict[str, Any]:
        content = {"type": "text", "text": "a", "extra": nested(depth)}
        return {"s": {"role": "assistant", "content": content, "model": "m"}}

    def retry(depth: int) -> Request:
        return call({"name": "ask", "inputResponses": answer(depth), "requestState": state}, sampling)

    with pytest.raises(McpError) as info:
        await app.dispatch(retry(300))
    assert info.value.code == INVALID_PARAMS
    assert "nested" in info.value.message
    fine = await app.dispatch(retry(100))
    assert fine["resultType"] == "input_required"
