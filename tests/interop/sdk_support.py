"""What the interop tests with the official Python SDK client share: the server under test (over
stdio and Streamable HTTP), a tap on the SDK's transport that records every JSON-RPC message each
way, and a scripted person behind the SDK's elicitation callback.

The fixtures (``http_server``, ``make_transport``) are in ``conftest.py``; this module holds the
plain helpers they and the tests use.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
from mcp.client.context import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

SERVER_SCRIPT = Path(__file__).with_name("tickets_server.py")
REPO_ROOT = Path(__file__).resolve().parents[2]
# A fixed sealing key, so the server does not warn about an ephemeral one (and all rounds of a flow
# are opened with the key that sealed them, as in a real deployment).
SERVER_ENV = {"MCP_ELICIT_STATE_KEYS": "interop-tests-state-key-0123456789-abcdefghijklmnop"}
MODERN = "2026-07-28"
FLOW_TIMEOUT = 20.0

# Error codes (wire-2026-07-28.md §5).
INVALID_PARAMS = -32602
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021

# What mcp 2.3.0 declares per request in _meta["io.modelcontextprotocol/clientCapabilities"]
# (ClientSession._build_capabilities): an elicitation callback always declares BOTH modes, form and
# url, even when the callback can only fill forms; a sampling callback declares {"sampling": {}}; a
# list_roots callback declares {"roots": {"listChanged": true}}, a 2025-era member that 2026-07-28 no
# longer defines (notifications/roots/list_changed is removed), which our server must tolerate. No
# callbacks at all: {}.
ELICITING_CLIENT_CAPABILITIES = {"elicitation": {"form": {}, "url": {}}}
FULL_CLIENT_CAPABILITIES = {**ELICITING_CLIENT_CAPABILITIES, "sampling": {}, "roots": {"listChanged": True}}


# --------------------------------------------------------------------------------------------
# Wire tap: records the JSON-RPC messages the SDK transport carries, changes nothing.
# --------------------------------------------------------------------------------------------
@dataclass
class WireLog:
    sent: list[dict[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    # HTTP only: (HTTP method, Mcp-Method header, Mcp-Name header, status) of every HTTP response.
    http: list[tuple[str, str, str, int]] | None = None

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        return [m for m in self.sent if "id" in m and "method" in m and method in (None, m["method"])]

    def reply_to(self, request: dict[str, Any]) -> dict[str, Any]:
        (reply,) = [m for m in self.received if m.get("id") == request["id"] and "method" not in m]
        return reply

    def exchange(self, method: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(params, result-or-error) of every request of ``method``, in order."""
        out = []
        for req in self.requests(method):
            reply = self.reply_to(req)
            out.append((req.get("params", {}), reply.get("result", reply.get("error"))))
        return out


def _dump(message: Any) -> dict[str, Any]:
    inner = getattr(message, "message", message)
    dumped: dict[str, Any] = inner.model_dump(by_alias=True, mode="json", exclude_unset=True)
    return dumped


class _TapRead:
    def __init__(self, inner: Any, log: WireLog) -> None:
        self._inner = inner
        self._log = log

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    def _record(self, item: Any) -> Any:
        if not isinstance(item, Exception):
            self._log.received.append(_dump(item))
        return item

    async def receive(self) -> Any:
        return self._record(await self._inner.receive())

    def __aiter__(self) -> _TapRead:
        return self

    async def __anext__(self) -> Any:
        return self._record(await self._inner.__anext__())

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _TapRead:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc)
        return result


class _TapWrite:
    def __init__(self, inner: Any, log: WireLog) -> None:
        self._inner = inner
        self._log = log

    async def send(self, item: Any, /) -> None:
        self._log.sent.append(_dump(item))
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _TapWrite:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc)
        return result


class Tap:
    """An ``mcp.client.Transport`` that wraps another one and logs both directions."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.log = WireLog(http=getattr(inner, "http_exchanges", None))

    async def __aenter__(self) -> tuple[_TapRead, _TapWrite]:
        read, write = await self._inner.__aenter__()
        return _TapRead(read, self.log), _TapWrite(write, self.log)

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc)
        return result


class HttpTransport:
    """The SDK's ``streamable_http_client`` on an ``httpx2`` client that records each HTTP status."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._stack = AsyncExitStack()
        self.http_exchanges: list[tuple[str, str, str, int]] = []

    async def _record(self, response: httpx2.Response) -> None:
        request = response.request
        headers = request.headers
        self.http_exchanges.append(
            (request.method, headers.get("mcp-method", ""), headers.get("mcp-name", ""), response.status_code)
        )

    async def __aenter__(self) -> Any:
        http = httpx2.AsyncClient(
            timeout=httpx2.Timeout(30, read=300), event_hooks={"response": [self._record]}
        )
        await self._stack.enter_async_context(http)
        return await self._stack.enter_async_context(streamable_http_client(self._url, http_client=http))

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._stack.__aexit__(*exc)


MakeTransport = Callable[[], Any]


# --------------------------------------------------------------------------------------------
# A scripted person behind the SDK's elicitation callback.
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Asked:
    key: str
    mode: str
    message: str
    schema: dict[str, Any] | None


Answer = Callable[[Asked], types.ElicitResult]


@dataclass
class Person:
    """An ``ElicitationFnT``: answers with ``answer`` and records every question it was shown."""

    answer: Answer
    asked: list[Asked] = field(default_factory=list)

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        dumped = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        question = Asked(
            key=str(context.request_id),
            mode=dumped.get("mode", "form"),
            message=dumped["message"],
            schema=dumped.get("requestedSchema"),
        )
        self.asked.append(question)
        return self.answer(question)


def accept(**content: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


def text_of(result: types.CallToolResult) -> str:
    assert result.is_error is False, result
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text
