"""Single-use state in redelivery mode: a re-issued request after a crash gets through, and a
token still cannot be used for a second, different round or a doubled side effect.

"Two instances" are two ``Server`` objects with the same keys and two store objects on the same
file or table, exactly what two processes of a deployment share.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.state import KeyRing, RequestBinding, StateRejected, StateSealer, seal
from mcp_elicit.state.binding import request_digest
from mcp_elicit.wire.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from mcp_elicit.wire.jsonrpc import Request
from tests.reliability.conftest import StoreFactory

KEY = "reliability-tests-only-secret-0123456789abcdef"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
_ids = itertools.count(1)


@dataclass
class Pick:
    value: str


@dataclass
class Effects:
    """A side-effect store that deduplicates on the idempotency key, like the harness's table."""

    rows: dict[str, str] = field(default_factory=dict)
    calls: int = 0
    started: asyncio.Event = field(default_factory=asyncio.Event)
    gate: asyncio.Event | None = None  # when set, the step blocks after writing (a "crash" window)

    async def write(self, key: str, value: str) -> str:
        self.calls += 1
        self.rows.setdefault(key, value)
        self.started.set()
        if self.gate is not None:
            await self.gate.wait()
        return key


def make_server(store: Any, effects: Effects, *, redelivery: bool = True) -> Server:
    app = Server(
        "reliability-tests",
        state_keys=[KEY],
        single_use=store,
        single_use_redelivery=redelivery,
    )
    app.handler_runs = 0  # type: ignore[attr-defined]

    @app.tool()
    async def order(item: str, ctx: Context) -> str:
        app.handler_runs += 1  # type: ignore[attr-defined]
        answer = await ctx.elicit(f"Which value for {item}?", Pick, key="pick")
        assert answer.data is not None
        value = answer.data.value
        await ctx.once("effect", lambda key: effects.write(key, value))
        return f"{item}={value}"

    return app


def call(params: dict[str, Any]) -> Request:
    return Request(next(_ids), "tools/call", {"_meta": META, **params})


def first(item: str) -> Request:
    return call({"name": "order", "arguments": {"item": item}})


def retry(item: str, state: str, value: str) -> Request:
    return call(
        {
            "name": "order",
            "arguments": {"item": item},
            "inputResponses": {"pick": {"action": "accept", "content": {"value": value}}},
            "requestState": state,
        }
    )


def strip_meta(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "_meta"}


def text_of(result: dict[str, Any]) -> str:
    assert result["resultType"] == "complete", result
    return str(result["content"][0]["text"])


async def refused(server: Server, request: Request) -> McpError:
    with pytest.raises(McpError) as info:
        await server.dispatch(request)
    assert info.value.code == INVALID_PARAMS
    assert info.value.message == "Invalid or expired requestState"
    return info.value


async def test_reissue_after_a_crash_between_side_effect_and_answer_completes_once(
    make_store: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The re-issue waits this long for the dead attempt's answer before it runs the round itself.
    monkeypatch.setattr(seal, "CLAIM_WAIT", 0.3)
    effects = Effects(gate=asyncio.Event())
    a, b = make_server(make_store(), effects), make_server(make_store(), effects)
    state = (await a.dispatch(first("book")))["requestState"]

    # Instance A runs the retry round, writes the side effect, and dies before answering.
    doomed = asyncio.ensure_future(a.dispatch(retry("book", state, "v-1")))
    await asyncio.wait_for(effects.started.wait(), 5)
    doomed.cancel()
    with pytest.raises(asyncio.CancelledError):
        await doomed
    effects.gate = None

    # The client re-issues the same request (same requestState, new id) on instance B.
    result = await b.dispatch(retry("book", state, "v-1"))  # (after waiting for A, in vain)
    assert text_of(result) == "book=v-1"
    assert effects.calls == 2  # the step ran in both attempts ...
    assert list(effects.rows.values()) == ["v-1"]  # ... and its idempotency key made it count once

    # Any further re-issue gets that same answer back, from the store: nothing runs again.
    runs = b.handler_runs  # type: ignore[attr-defined]
    again = await a.dispatch(retry("book", state, "v-1"))
    assert strip_meta(again) == strip_meta(result)
    assert b.handler_runs == runs  # type: ignore[attr-defined]
    assert effects.calls == 2


async def test_reissue_after_the_answer_was_committed_gets_the_same_answer(make_store: StoreFactory) -> None:
    effects = Effects()
    a, b = make_server(make_store(), effects), make_server(make_store(), effects)
    state = (await a.dispatch(first("pen")))["requestState"]
    on_a = await a.dispatch(retry("pen", state, "v-2"))
    on_b = await b.dispatch(retry("pen", state, "v-2"))
    assert strip_meta(on_a) == strip_meta(on_b)
    assert text_of(on_b) == "pen=v-2"
    assert a.handler_runs + b.handler_runs == 2  # type: ignore[attr-defined]  # round 0 + round 1
    assert effects.calls == 1


async def test_a_committed_intermediate_round_is_redelivered_with_the_same_next_state(
    make_store: StoreFactory,
) -> None:
    app = Server("two-rounds", state_keys=[KEY], single_use=make_store(), single_use_redelivery=True)

    @app.tool()
    async def two(ctx: Context) -> str:
        x = await ctx.elicit("X?", Pick, key="x")
        y = await ctx.elicit("Y?", Pick, key="y")
        assert x.data is not None
        assert y.data is not None
        return x.data.value + y.data.value

    s0 = (await app.dispatch(call({"name": "two", "arguments": {}})))["requestState"]
    answer_x = {"x": {"action": "accept", "content": {"value": "a"}}}
    r1 = await app.dispatch(call({"name": "two", "inputResponses": answer_x, "requestState": s0}))
    r1_again = await app.dispatch(call({"name": "two", "inputResponses": answer_x, "requestState": s0}))
    # One next state per token: the flow cannot fork into two continuations.
    assert r1_again["requestState"] == r1["requestState"]
    assert strip_meta(r1_again) == strip_meta(r1)
    answer_y = {"y": {"action": "accept", "content": {"value": "b"}}}
    s1 = r1["requestState"]
    done = await app.dispatch(call({"name": "two", "inputResponses": answer_y, "requestState": s1}))
    assert text_of(done) == "ab"


async def test_a_redelivered_round_is_gated_by_the_reissued_requests_capabilities(
    make_store: StoreFactory,
) -> None:
    app = Server("form-then-url", state_keys=[KEY], single_use=make_store(), single_use_redelivery=True)

    @app.tool()
    async def link(ctx: Context) -> str:
        picked = await ctx.elicit("Which one?", Pick, key="pick")
        go = await ctx.elicit_url("Now connect", "https://mcp.example.com/connect/abc", key="go")
        return f"{picked.action} {go.action}"

    def with_caps(params: dict[str, Any], capabilities: dict[str, Any]) -> Request:
        meta = {**META, "io.modelcontextprotocol/clientCapabilities": capabilities}
        return Request(next(_ids), "tools/call", {"_meta": meta, **params})

    both = {"elicitation": {"form": {}, "url": {}}}
    s0 = (await app.dispatch(with_caps({"name": "link"}, both)))["requestState"]
    retry_params = {
        "name": "link",
        "inputResponses": {"pick": {"action": "accept", "content": {"value": "a"}}},
    }
    retry_params["requestState"] = s0
    r1 = await app.dispatch(with_caps(retry_params, both))
    assert r1["inputRequests"]["go"]["params"]["mode"] == "url"
    # The same request again, now declaring form mode only: the stored URL question must not go out.
    for capabilities in ({"elicitation": {"form": {}}}, {}):
        with pytest.raises(McpError) as info:
            await app.dispatch(with_caps(retry_params, capabilities))
        assert info.value.code == -32021
        assert info.value.data == {"requiredCapabilities": {"elicitation": {"url": {}}}}
    assert strip_meta(await app.dispatch(with_caps(retry_params, both))) == strip_meta(r1)


async def test_a_replay_with_other_answers_is_refused_and_runs_nothing(make_store: StoreFactory) -> None:
    effects = Effects()
    a, b = make_server(make_store(), effects), make_server(make_store(), effects)
    state = (await a.dispatch(first("car")))["requestState"]
    assert text_of(await a.dispatch(retry("car", state, "no"))) == "car=no"
    runs = a.handler_runs + b.handler_runs  # type: ignore[attr-defined]
    await refused(b, retry("car", state, "yes"))
    await refused(a, retry("car", state, "yes"))
    assert a.handler_runs + b.handler_runs == runs  # type: ignore[attr-defined]
    assert list(effects.rows.values()) == ["no"]
    assert effects.calls == 1


async def test_a_claimed_but_unanswered_token_refuses_other_answers(
    make_store: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even before any answer was committed (the first attempt died), the token is bound to the
    request that claimed it: it cannot be re-used with other answers."""
    monkeypatch.setattr(seal, "CLAIM_WAIT", 0.3)  # how long the re-issue waits for the dead one
    effects = Effects(gate=asyncio.Event())
    a, b = make_server(make_store(), effects), make_server(make_store(), effects)
    state = (await a.dispatch(first("hat")))["requestState"]
    doomed = asyncio.ensure_future(a.dispatch(retry("hat", state, "red")))
    await asyncio.wait_for(effects.started.wait(), 5)
    doomed.cancel()
    with pytest.raises(asyncio.CancelledError):
        await doomed
    effects.gate = None
    await refused(b, retry("hat", state, "blue"))
    assert set(effects.rows.values()) == {"red"}
    assert text_of(await b.dispatch(retry("hat", state, "red"))) == "hat=red"


async def test_concurrent_attempts_of_one_request_run_it_once(
    make_store: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A double click on two instances: the later copies wait for the first one's answer instead
    of running the round (and its side effect) again."""
    monkeypatch.setattr(seal, "CLAIM_WAIT", 3.0)  # the default, which tests/conftest.py cuts short
    effects = Effects(gate=asyncio.Event())
    servers = [make_server(make_store(), effects) for _ in range(2)]
    state = (await servers[0].dispatch(first("cup")))["requestState"]
    runs = sum(server.handler_runs for server in servers)  # type: ignore[attr-defined]
    attempts = [asyncio.ensure_future(servers[i % 2].dispatch(retry("cup", state, "v"))) for i in range(8)]
    await asyncio.wait_for(effects.started.wait(), 5)
    await asyncio.sleep(0.3)  # the step is slow: every other copy has claimed meanwhile
    assert effects.gate is not None
    effects.gate.set()
    results = await asyncio.gather(*attempts)
    assert len({repr(strip_meta(r)) for r in results}) == 1
    assert text_of(results[0]) == "cup=v"
    assert list(effects.rows.values()) == ["v"]
    assert effects.calls == 1
    assert sum(server.handler_runs for server in servers) == runs + 1  # type: ignore[attr-defined]


async def test_concurrent_attempts_with_different_answers_let_exactly_one_through(
    make_store: StoreFactory,
) -> None:
    effects = Effects()
    servers = [make_server(make_store(), effects) for _ in range(2)]
    state = (await servers[0].dispatch(first("mug")))["requestState"]
    values = [f"v{i}" for i in range(6)]
    outcomes = await asyncio.gather(
        *(servers[i % 2].dispatch(retry("mug", state, v)) for i, v in enumerate(values)),
        return_exceptions=True,
    )
    done = [o for o in outcomes if isinstance(o, dict)]
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(done) == 1
    assert len(errors) == 5
    assert all(isinstance(e, McpError) and e.code == INVALID_PARAMS for e in errors)
    winner = text_of(done[0]).split("=")[1]
    assert list(effects.rows.values()) == [winner]
    assert effects.calls == 1


async def test_strict_mode_still_refuses_any_second_use(make_store: StoreFactory) -> None:
    effects = Effects()
    app = make_server(make_store(), effects, redelivery=False)
    state = (await app.dispatch(first("box")))["requestState"]
    assert text_of(await app.dispatch(retry("box", state, "v"))) == "box=v"
    await refused(app, retry("box", state, "v"))


async def test_a_token_consumed_in_strict_mode_is_refused_by_a_claim(make_store: StoreFactory) -> None:
    store = make_store()
    sealer = StateSealer(KeyRing.from_secrets([KEY]), audience="a", single_use=store)
    binding = RequestBinding("tools/call", "t", "d" * 64, None)
    token = sealer.seal({}, binding)
    await sealer.open(token, binding)
    with pytest.raises(StateRejected) as info:
        await sealer.claim(token, binding, request_digest(binding, {}))
    assert info.value.reason == "replayed"


async def test_store_primitives(make_store: StoreFactory) -> None:
    store = make_store()
    far = time.time() + 600
    assert (await store.claim("t1", "d1", far)).first
    found = await store.claim("t1", "d1", far)
    assert (found.first, found.same_request, found.response) == (False, True, None)
    other = await store.claim("t1", "d2", far)
    assert (other.first, other.same_request, other.response) == (False, False, None)
    assert await store.commit("t1", "d2", b"x") is None  # no claim with that digest
    assert await store.commit("t1", "d1", b"first") == b"first"
    assert await store.commit("t1", "d1", b"second") == b"first"
    stored = await store.claim("t1", "d1", far)
    assert (stored.first, stored.same_request, stored.response) == (False, True, b"first")
    assert not await store.consume("t1", far)
    assert await store.consume("t2", far)
    assert not (await store.claim("t2", "d1", far)).same_request


async def test_store_unavailable_is_a_retryable_internal_error(make_store: StoreFactory) -> None:
    store = make_store()
    effects = Effects()
    app = make_server(store, effects)
    state = (await app.dispatch(first("key")))["requestState"]
    await store.close()
    with pytest.raises(McpError) as info:
        await app.dispatch(retry("key", state, "v"))
    assert info.value.code == INTERNAL_ERROR
    assert info.value.data == {"reason": "state_store_unavailable", "retryable": True}
    assert effects.calls == 0


def test_redelivery_needs_a_store_that_supports_it() -> None:
    with pytest.raises(ValueError, match="single_use_redelivery"):
        Server("x", state_keys=[KEY], single_use_redelivery=True)
