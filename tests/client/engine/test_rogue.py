"""The engine against a server that misbehaves on purpose (``rogue_server.py``), over stdio and
HTTP. The server logs every message it receives, so each test asserts what went over the wire
as well as what the caller got."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import pytest

from mcp_elicit.client import (
    Answer,
    Client,
    InvalidSchemaError,
    MalformedMessageError,
    McpClientError,
    MissingCapabilityError,
    RequestTimeoutError,
    RoundLimitError,
    ServerExitedError,
    TimeLimitError,
    UndeclaredRequestError,
    UnsupportedVersionError,
)

from .conftest import Target
from .rogue_server import TRICKY_STATE
from .support import RogueLog, Script, accept, unique_info

PROTOCOL = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"


def connect(target: Target, answerer: Any = None, *, prefix: str = "t", **options: Any) -> tuple[Any, str]:
    info = unique_info(prefix)
    if target.transport == "stdio":
        options.setdefault("stderr", "capture")
    return Client.connect(target.target, answerer=answerer, client_info=info, **options), info["name"]


def log_of(target: Target) -> RogueLog:
    assert target.log is not None
    return target.log


def calls(target: Target, name: str) -> list[dict[str, Any]]:
    return log_of(target).requests(name, "tools/call")


async def eventually(check: Any, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


# -- requestState, ids, isolation ---------------------------------------------------------------
async def test_state_is_echoed_exactly_with_a_new_id_on_the_retry(rogue: Target) -> None:
    connecting, name = connect(rogue, Script(form=accept(ok=True)))
    async with connecting as client:
        result = await client.call_tool("echo_state")
    assert result.text == "echoed"
    first, retry = calls(rogue, name)
    assert "requestState" not in first["params"]
    assert "inputResponses" not in first["params"]
    assert retry["params"]["requestState"] == TRICKY_STATE
    assert retry["params"]["inputResponses"] == {"q": {"action": "accept", "content": {"ok": True}}}
    assert {k: v for k, v in retry["params"].items() if k not in ("requestState", "inputResponses")} == first[
        "params"
    ]
    ids = [m["id"] for m in log_of(rogue).requests(name)]
    assert len(ids) == len(set(ids)) == 3  # discover, the call, its retry


async def test_no_state_sent_means_none_echoed(rogue: Target) -> None:
    connecting, name = connect(rogue, Script(form=accept(ok=False)))
    async with connecting as client:
        result = await client.call_tool("no_state")
    assert result.text == "state present: False"
    assert [("requestState" in c["params"]) for c in calls(rogue, name)] == [False, False]


async def test_state_and_answers_never_leak_into_other_calls(rogue: Target) -> None:
    gate = asyncio.Event()

    async def slow_accept(question: Any) -> Answer:
        await gate.wait()
        return Answer("accept", {"ok": True})

    connecting, name = connect(rogue, Script(form=slow_accept))
    async with connecting as client:
        flow = asyncio.create_task(client.call_tool("echo_state"))
        await eventually(lambda: len(calls(rogue, name)) == 1)
        other = await client.call_tool("plain", {"region": "eu"})  # while the flow waits for its answer
        gate.set()
        assert (await flow).text == "echoed"
    assert other.structured == {"arguments": {"region": "eu"}}
    plain = [c for c in calls(rogue, name) if c["params"]["name"] == "plain"]
    assert len(plain) == 1
    assert set(plain[0]["params"]) == {"_meta", "name", "arguments"}


async def test_a_state_only_round_then_a_question(rogue: Target) -> None:
    connecting, name = connect(rogue, Script(form=accept(ok=True)))
    async with connecting as client:
        result = await client.call_tool("state_then_question")
    assert result.text == 'finished with s2 and {"q": {"action": "accept", "content": {"ok": true}}}'
    shapes = [(c["params"].get("requestState"), "inputResponses" in c["params"]) for c in calls(rogue, name)]
    assert shapes == [(None, False), ("s1", False), ("s2", True)]


# -- results the spec does or does not allow ----------------------------------------------------
async def test_an_absent_result_type_is_complete_and_not_retried(rogue: Target) -> None:
    connecting, name = connect(rogue)
    async with connecting as client:
        result = await client.call_tool("no_result_type")
    assert result.text == "no resultType"
    assert len(calls(rogue, name)) == 1


@pytest.mark.parametrize(
    ("tool", "error", "message"),
    [
        ("unknown_result_type", MalformedMessageError, "unknown resultType 'task'"),
        ("bad_schema", InvalidSchemaError, "/properties/address/type"),
        ("non_object_entry", MalformedMessageError, r"inputRequests\['q'\] must be an object"),
        ("no_method", MalformedMessageError, "method must be elicitation/create"),
        ("unknown_mode", MalformedMessageError, "unknown elicitation mode 'telepathy'"),
        ("empty_input_required", MalformedMessageError, "had neither"),
        ("url_question", UndeclaredRequestError, "elicitation.url"),
        ("sampling_question", UndeclaredRequestError, "sampling"),
        ("roots_question", UndeclaredRequestError, "roots"),
    ],
)
async def test_what_the_server_must_not_send_is_refused(
    rogue: Target, tool: str, error: type[Exception], message: str
) -> None:
    person = Script(form=accept(ok=True), mode_names=("form",))
    connecting, name = connect(rogue, person)
    async with connecting as client:
        with pytest.raises(error, match=message):
            await client.call_tool(tool)
        assert (await client.call_tool("plain")).text == "plain"  # the connection is still fine
    assert person.asked == []  # nothing was put in front of the person
    first = calls(rogue, name)[0]
    assert first["params"]["name"] == tool
    assert first["params"]["_meta"][CAPS] == {"elicitation": {"form": {}}}
    assert [c["params"]["name"] for c in calls(rogue, name)] == [tool, "plain"]  # never retried


async def test_input_required_on_a_list_call_is_refused(rogue: Target) -> None:
    connecting, _ = connect(rogue, Script(form=accept(ok=True)))
    async with connecting as client:
        with pytest.raises(MalformedMessageError, match="prompts/list answered input_required"):
            await client.list_prompts()


# -- errors -------------------------------------------------------------------------------------
async def test_server_errors_are_typed_with_code_message_and_data(rogue: Target) -> None:
    connecting, _ = connect(rogue)
    async with connecting as client:
        with pytest.raises(McpClientError) as caught:
            await client.call_tool("error")
        with pytest.raises(MissingCapabilityError) as missing:
            await client.call_tool("needs_url")
    assert type(caught.value) is McpClientError
    assert (caught.value.code, caught.value.message, caught.value.data) == (
        -32603,
        "the database is on fire",
        {"retryAfter": 5},
    )
    assert missing.value.missing == ("elicitation.url",)


async def test_an_error_the_server_marks_retryable_is_sent_again(
    rogue: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store blip while the person answered: the server says ``retryable``, and the same retry
    (its answers, its state) goes again after a pause, instead of the person's answer being lost.
    A blip that outlasts the pauses is raised as the server's error."""
    monkeypatch.setattr("mcp_elicit.client.client.RETRYABLE_DELAYS", (0.01, 0.02, 0.04))
    connecting, name = connect(rogue, Script(form=accept(ok=True)))
    async with connecting as client:
        result = await client.call_tool("store_blip", {"blips": 2, "flow": name})
        assert result.text == "done after 2 refusals, state blip"
        with pytest.raises(McpClientError) as caught:
            await client.call_tool("store_blip", {"blips": 9, "flow": name})
    assert caught.value.data == {"reason": "state_store_unavailable", "retryable": True}
    retries = [c for c in calls(rogue, name) if c["params"].get("inputResponses") is not None]
    assert len(retries) == 3 + 4  # two refused then one answered; then the first and three more
    assert {repr(r["params"]["inputResponses"]) for r in retries} == {
        repr({"q": {"action": "accept", "content": {"ok": True}}})
    }
    assert len({r["id"] for r in retries}) == len(retries)  # a new id each time


async def test_unsupported_version_is_retried_once_with_a_common_version(rogue: Target) -> None:
    connecting, name = connect(rogue, prefix="reject-version-once")
    async with connecting as client:
        assert client.protocol_version == "2026-07-28"
        assert (await client.call_tool("plain")).text == "plain"
    sent = log_of(rogue).messages(name)
    assert [m["message"]["method"] for m in sent] == ["server/discover", "server/discover", "tools/call"]
    assert sent[0]["message"]["id"] != sent[1]["message"]["id"]
    assert {m["message"]["params"]["_meta"][PROTOCOL] for m in sent} == {"2026-07-28"}


async def test_no_common_version_is_a_clear_error(rogue: Target) -> None:
    connecting, name = connect(rogue, prefix="no-common-version")
    with pytest.raises(UnsupportedVersionError, match="2099-01-01") as caught:
        async with connecting:
            pass
    assert caught.value.code == -32022
    assert caught.value.supported == ("2099-01-01",)
    assert len(log_of(rogue).requests(name)) == 1  # nothing in common: no point retrying


async def test_supported_versions_that_are_not_an_array_list_none(rogue: Target) -> None:
    """-32022 without a usable ``data.supported`` is no modern evidence: the client tries the
    2025-11-25 handshake, which this server does not know either."""
    connecting, _ = connect(rogue, prefix="supported-as-string")
    with pytest.raises(McpClientError, match=r"-32601 to initialize") as caught:
        async with connecting:
            pass
    assert not isinstance(caught.value, UnsupportedVersionError)


async def test_supported_versions_that_are_not_an_array_are_none_when_forced(rogue: Target) -> None:
    connecting, _ = connect(rogue, prefix="supported-as-string", protocol="2026-07-28")
    with pytest.raises(UnsupportedVersionError, match=r"supports \(none listed\)") as caught:
        async with connecting:
            pass
    assert caught.value.supported == ()  # not one version per character


# -- limits -------------------------------------------------------------------------------------
async def test_a_server_that_keeps_asking_hits_the_round_limit(rogue: Target) -> None:
    person = Script(form=accept(ok=True))
    connecting, name = connect(rogue, person, max_rounds=3)
    async with connecting as client:
        with pytest.raises(RoundLimitError, match="after 3 rounds"):
            await client.call_tool("loop_questions")
    assert len(calls(rogue, name)) == 4  # the call and three retries
    assert len(person.asked) == 3


async def test_a_server_that_never_finishes_hits_the_time_limit(rogue: Target) -> None:
    connecting, name = connect(rogue, max_total_seconds=1.5)
    async with connecting as client:
        started = time.monotonic()
        with pytest.raises(TimeLimitError, match=r"not finished after 1\.5 s"):
            await client.call_tool("loop_state")
        elapsed = time.monotonic() - started
    assert 1.4 < elapsed < 3.0
    # Backed off: 0.05 + 0.1 + 0.2 + 0.4 + 0.8 s leaves room for about six requests, not hundreds.
    assert 4 <= len(calls(rogue, name)) <= 7


async def test_request_timeout_is_local_and_cancels_the_request(rogue: Target) -> None:
    connecting, name = connect(rogue, request_timeout=0.5)
    async with connecting as client:
        with pytest.raises(RequestTimeoutError, match=r"no answer within 0\.5 s"):
            await client.call_tool("hang")
    (hung,) = calls(rogue, name)
    await _assert_cancelled_on_the_wire(rogue, hung["id"])


# -- cancellation and dying servers -------------------------------------------------------------
async def _assert_cancelled_on_the_wire(target: Target, request_id: int) -> None:
    log = log_of(target)
    if target.transport == "stdio":

        def cancelled() -> list[dict[str, Any]]:
            return [
                e["message"]
                for e in log.entries()
                if e["kind"] == "message" and e["message"].get("method") == "notifications/cancelled"
            ]

        await eventually(lambda: bool(cancelled()))
        assert cancelled()[0]["params"]["requestId"] == request_id
    else:
        await eventually(lambda: {"kind": "disconnect", "id": request_id} in log.entries())


async def test_cancelling_the_caller_cancels_on_the_wire(rogue: Target) -> None:
    connecting, name = connect(rogue)
    async with connecting as client:
        task = asyncio.create_task(client.call_tool("hang"))
        await eventually(lambda: len(calls(rogue, name)) == 1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        (hung,) = calls(rogue, name)
        await _assert_cancelled_on_the_wire(rogue, hung["id"])
        assert (await client.call_tool("plain")).text == "plain"


async def test_a_server_that_dies_mid_request_fails_the_call_at_once(rogue_stdio: Target) -> None:
    connecting, _ = connect(rogue_stdio)
    async with connecting as client:
        pending = asyncio.create_task(client.call_tool("hang"))
        started = time.monotonic()
        with pytest.raises(ServerExitedError, match="exit code 3") as caught:
            await client.call_tool("die")
        assert time.monotonic() - started < 3
        assert caught.value.returncode == 3
        with pytest.raises(ServerExitedError):
            await pending  # every request in flight fails, none hangs
        with pytest.raises(ServerExitedError):
            await client.call_tool("plain")  # and later ones fail at once


async def test_an_answer_that_cannot_be_read_fails_its_call_at_once(rogue: Target) -> None:
    connecting, _ = connect(rogue)
    async with connecting as client:
        started = time.monotonic()
        with pytest.raises(MalformedMessageError):
            await client.call_tool("unreadable")
        assert time.monotonic() - started < 5  # not the call's timeout
        assert (await client.call_tool("plain")).text == "plain"


async def test_a_server_command_that_does_not_exist() -> None:
    from mcp_elicit.client import TransportError

    with pytest.raises(TransportError, match="cannot start the server"):
        async with Client.connect(["/nonexistent/mcp-server-binary"]):
            pass


async def test_a_server_that_exits_before_answering_discover() -> None:
    command = [sys.executable, "-c", "import sys; sys.stderr.write('no luck here\\n'); sys.exit(4)"]
    with pytest.raises(ServerExitedError, match="exit code 4") as caught:
        async with Client.connect(command, stderr="capture"):
            pass
    assert caught.value.stderr_tail == "no luck here"


# -- HTTP specifics -----------------------------------------------------------------------------
async def test_every_post_carries_the_headers_and_meta(rogue_over_http: Target) -> None:
    rogue = rogue_over_http
    connecting, name = connect(rogue, Script(form=accept(ok=True), mode_names=("form",)))
    async with connecting as client:
        tools = [tool["name"] for tool in await client.list_tools()]
        assert tools == ["plain"]  # the tool with an invalid x-mcp-header is left out
        await client.call_tool("echo_state")
        await client.call_tool("plain", {"region": "Zürich"})
    sent = log_of(rogue).messages(name)
    assert [m["message"]["method"] for m in sent] == [
        "server/discover",
        "tools/list",
        "tools/call",
        "tools/call",
        "tools/call",
    ]
    for entry in sent:
        headers, params = entry["headers"], entry["message"]["params"]
        assert headers["accept"] == "application/json, text/event-stream"
        assert headers["content-type"] == "application/json"
        assert headers["mcp-protocol-version"] == params["_meta"][PROTOCOL] == "2026-07-28"
        assert headers["mcp-method"] == entry["message"]["method"]
        assert params["_meta"][CAPS] == {"elicitation": {"form": {}}}
        assert params["_meta"][INFO]["name"] == name
        assert "mcp-session-id" not in headers
    assert [e["headers"].get("mcp-name") for e in sent] == [None, None, "echo_state", "echo_state", "plain"]
    assert sent[-1]["headers"]["mcp-param-region"] == "=?base64?WsO8cmljaA==?="
    assert "mcp-param-region" not in sent[2]["headers"]


async def test_an_sse_reply_with_a_notification_first(rogue_over_http: Target) -> None:
    connecting, _ = connect(rogue_over_http)
    async with connecting as client:
        result = await client.call_tool("plain", {"region": "x"})
    assert result.structured == {"arguments": {"region": "x"}}


async def test_a_server_remembered_as_legacy_is_probed_again_when_initialize_fails(rogue: Target) -> None:
    """A remembered 2025-11-25 verdict goes straight to ``initialize``; when that fails (this
    server speaks only 2026-07-28: -32601), the verdict is forgotten and ``server/discover``
    decides again, in the same connect."""
    from urllib.parse import urlsplit

    from mcp_elicit.client import era

    if isinstance(rogue.target, list):
        key = f"stdio:{' '.join(rogue.target)}"
    else:
        key = f"http://{urlsplit(rogue.target).netloc}"
    era.remember(key, "legacy")
    try:
        connecting, name = connect(rogue)
        async with connecting as client:
            assert client.era == "modern"
            assert (await client.call_tool("plain")).text
        assert era.remembered(key) == "modern"
    finally:
        era.forget(key)
    received = [entry["message"] for entry in log_of(rogue).entries() if entry["kind"] == "message"]
    opened = [
        m
        for m in received
        if m.get("method") == "initialize"
        and (m.get("params") or {}).get("clientInfo", {}).get("name") == name
    ]
    assert len(opened) == 1  # tried once, as remembered
    assert log_of(rogue).requests(name, "server/discover")  # then asked again
