"""Sealed state as the engine uses it: TTL, key rotation, principal binding, single use.

Most tests here replay, move or forge a ``requestState``, which no honest client does: they send
their rounds by hand (:class:`tests.helpers.RawCall`); the others run the real client."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.client import Answer, Client, McpClientError
from mcp_elicit.state import KeyRing, SQLiteSingleUseStore
from mcp_elicit.wire.errors import INTERNAL_ERROR, INVALID_PARAMS
from tests.helpers import RawCall, Script, accept, only_key, text

OLD = "old-key-for-engine-tests-0123456789abcdef"
NEW = "new-key-for-engine-tests-0123456789abcdef"


@dataclass
class Name:
    name: str


def server(keys: KeyRing | list[str], **options: object) -> Server:
    app = Server("state-tests", state_keys=keys, **options)  # type: ignore[arg-type]

    @app.tool()
    async def two(ctx: Context) -> str:
        a = await ctx.elicit("A?", Name, key="a")
        b = await ctx.elicit("B?", Name, key="b")
        return a.data.name + b.data.name

    return app


def assert_refused(error: object) -> None:
    assert getattr(error, "code", None) == INVALID_PARAMS
    assert getattr(error, "message", None) == "Invalid or expired requestState"


async def test_state_sealed_under_the_old_key_opens_after_rotation_until_the_key_is_removed() -> None:
    old_ring = KeyRing.from_secrets([OLD])
    flow = RawCall(server(old_ring), "two")
    await flow.send()
    sealed_by_old = flow.state

    rotated = RawCall(server(old_ring.rotated(NEW)), "two")
    rotated.state = sealed_by_old
    second = await rotated.send({"a": accept({"name": "x"})})
    assert only_key(second) == "b"

    removed = RawCall(server(KeyRing.from_secrets([NEW])), "two")
    assert_refused(await removed.error({"a": accept({"name": "x"})}, state=sealed_by_old))


async def test_a_state_under_a_key_this_server_lacks_is_a_warning_for_the_operator(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Instances given different keys refuse each other's states: the client gets the fixed
    refusal, and the operator a warning (once a minute) where other refusals are info lines."""
    caplog.set_level("INFO", logger="mcp_elicit.server")
    instance_a = RawCall(server([OLD]), "two")
    await instance_a.send()
    instance_b = RawCall(server([NEW]), "two")
    for _ in range(3):
        assert_refused(await instance_b.error({"a": accept({"name": "x"})}, state=instance_a.state))
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1
    assert (
        "sealed under a key this server does not hold: give every instance the same state keys"
        in (warnings[0])
    )
    caplog.clear()
    state = instance_a.state
    assert state is not None
    tampered = state[:-2] + ("A" if state[-2] != "A" else "B") + state[-1]
    same_keys = RawCall(server([OLD]), "two")
    assert_refused(await same_keys.error({"a": accept({"name": "x"})}, state=tampered))
    assert not [r for r in caplog.records if r.levelname == "WARNING"]  # a client's doing: info
    # Another user's state is a security event: a warning naming both (every time).
    other_principal = RawCall(server([OLD]), "two", principal="https://idp|bob")
    for _ in range(2):
        assert_refused(await other_principal.error({"a": accept({"name": "x"})}, state=state))
    security = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(security) == 2
    assert security[0].startswith("SECURITY: a requestState sealed for an anonymous caller was sent by ")
    assert "'https://idp|bob'" in security[0]


@pytest.mark.parametrize("state", [5, True, {"v1": "x"}, ["v1."], ""])
async def test_a_state_that_is_not_a_sealed_string_gets_the_same_fixed_refusal(state: object) -> None:
    flow = RawCall(server([OLD]), "two")
    await flow.send()
    assert_refused(await flow.error({"a": accept({"name": "x"})}, state=state))


async def test_expired_state_is_refused() -> None:
    async def answer_late(question: object) -> Answer:
        await asyncio.sleep(0.05)
        return Answer("accept", {"name": "x"})

    person = Script(form=answer_late)
    async with Client.connect(server([OLD], state_ttl=0.01), answerer=person) as client:
        with pytest.raises(McpClientError) as info:
            await client.call_tool("two")
    assert [question.key for question in person.asked] == ["a"]
    assert_refused(info.value)


async def test_state_from_one_principal_is_refused_for_another() -> None:
    app = server([OLD])
    alice = RawCall(app, "two", principal="https://idp|alice")
    await alice.send()
    bob = RawCall(app, "two", principal="https://idp|bob")
    assert_refused(await bob.error({"a": accept({"name": "x"})}, state=alice.state))
    anonymous = RawCall(app, "two")
    assert_refused(await anonymous.error({"a": accept({"name": "x"})}, state=alice.state))
    assert only_key(await alice.send({"a": accept({"name": "x"})})) == "b"


async def test_state_for_other_arguments_is_refused() -> None:
    app = server([OLD])

    @app.tool()
    async def echo(word: str, ctx: Context) -> str:
        answer = await ctx.elicit(f"Say {word}?", Name, key="k")
        return answer.data.name

    one = RawCall(app, "echo", {"word": "one"})
    await one.send()
    other = RawCall(app, "echo", {"word": "two"})
    assert_refused(await other.error({"k": accept({"name": "x"})}, state=one.state))


async def test_single_use_mode_refuses_a_replayed_state(tmp_path: Path) -> None:
    store = SQLiteSingleUseStore(tmp_path / "used.db")
    try:
        flow = RawCall(server([OLD], single_use=store), "two")
        await flow.send()
        first_state = flow.state
        assert only_key(await flow.send({"a": accept({"name": "x"})})) == "b"
        assert_refused(await flow.error({"a": accept({"name": "x"})}, state=first_state))
        assert text(await flow.send({"b": accept({"name": "y"})})) == "xy"
    finally:
        await store.close()


async def test_without_single_use_a_state_can_be_retried() -> None:
    """The default: a client whose response was lost may send the same round again."""
    flow = RawCall(server([OLD]), "two")
    await flow.send()
    first_state = flow.state
    assert only_key(await flow.send({"a": accept({"name": "x"})})) == "b"
    assert only_key(await flow.send({"a": accept({"name": "x"})}, state=first_state)) == "b"


def test_weak_keys_fail_at_start_up() -> None:
    with pytest.raises(ValueError, match="state key"):
        Server("weak", state_keys=["short"])


async def test_answers_too_large_for_the_state_are_the_clients_to_shorten() -> None:
    flow = RawCall(server([OLD]), "two")
    await flow.send()
    error = await flow.error({"a": accept({"name": "x" * 300_000})})  # within the message limit
    assert error.code == INVALID_PARAMS
    assert error.message.startswith("Invalid params: the answers are too large to carry to the next round")
    assert "answer with less text" in error.message
    second = await flow.send({"a": accept({"name": "x" * 1000})}, state=flow.results[0]["requestState"])
    assert only_key(second) == "b"  # the same flow goes on with a shorter answer


@pytest.mark.parametrize("redelivery", [False, True])
async def test_in_single_use_mode_answers_too_large_end_the_flow_and_say_so(
    tmp_path: Path, redelivery: bool
) -> None:
    """The state this request carried is used up: the advice is to call again, and a large
    answer to the last question (no state to carry) is still taken."""
    store = SQLiteSingleUseStore(tmp_path / "used.db")
    try:
        app = server([OLD], single_use=store, single_use_redelivery=redelivery)
        flow = RawCall(app, "two")
        await flow.send()
        error = await flow.error({"a": accept({"name": "x" * 300_000})})
        assert error.code == INVALID_PARAMS
        assert "call again and answer with less text" in error.message
        assert_refused(await flow.error({"a": accept({"name": "x"})}, state=flow.results[0]["requestState"]))

        last = RawCall(app, "two")
        await last.send()
        await last.send({"a": accept({"name": "x"})})
        assert text(await last.send({"b": accept({"name": "y" * 300_000})})) == "x" + "y" * 300_000
    finally:
        await store.close()


async def test_a_handler_keeping_too_much_in_the_state_is_an_internal_error_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = Server("state-tests", state_keys=[OLD])

    @app.tool()
    async def hoard(ctx: Context) -> str:
        await ctx.once("big", lambda: "x" * 300_000)
        answer = await ctx.elicit("A?", Name, key="a")
        return answer.data.name

    async with Client.connect(app, answerer=Script()) as client:
        with pytest.raises(McpClientError) as info:
            await client.call_tool("hoard")
    assert (info.value.code, info.value.message) == (
        INTERNAL_ERROR,
        "Internal error: the handler keeps more in requestState than the server allows",
    )
    (record,) = [r for r in caplog.records if "keeps too much in requestState" in r.getMessage()]
    assert record.exc_info is None  # a clear line for the server's author, not a traceback
    assert "over max_token_bytes=262144" in record.getMessage()
