"""A 2025-11-25 session over stdio against a server that misbehaves on purpose
(``legacy_rogue_server.py``, a real subprocess): the handshake's checks, the server's own
requests in their own id space, each answered once, and the checks an ``elicitation/create``
goes through before anything is shown."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit.client import (
    Answer,
    Client,
    MalformedMessageError,
    RequestTimeoutError,
    RoundLimitError,
    UnspokenVersionError,
    UrlElicitationRequiredError,
)
from mcp_elicit.client.era import forget, remembered

from .support import Script, accept

ROGUE = Path(__file__).with_name("legacy_rogue_server.py")


def command(*extra: str) -> list[str]:
    return [sys.executable, str(ROGUE), *extra]


def connect(answerer: Any = None, *extra: str, **options: Any) -> Any:
    options.setdefault("stderr", "capture")
    return Client.connect(command(*extra), answerer=answerer, **options)


async def test_auto_falls_back_to_initialize_and_remembers_it() -> None:
    key = f"stdio:{' '.join(command())}"
    forget(key)
    async with connect() as client:
        assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
        assert client.server_identity.name == "legacy-rogue"
        with pytest.raises(RuntimeError, match="no server/discover"):
            _ = client.discovery
    assert remembered(key) == "legacy"
    forget(key)


async def test_the_server_request_is_answered_with_the_checked_form() -> None:
    person = Script(form=accept(ok=True), mode_names=("form",))
    async with connect(person) as client:
        assert (await client.call_tool("ask")).text == '{"action": "accept", "content": {"ok": true}}'
    (question,) = person.asked
    assert question.server.protocol_version == "2025-11-25"


async def test_a_server_request_with_our_pending_id_is_its_request_not_our_answer() -> None:
    async with connect(Script(form=accept(ok=True))) as client:
        result = await client.call_tool("same_id_as_yours")
    assert result.text == 'answered {"action": "accept", "content": {"ok": true}}'


async def test_a_reused_server_request_id_is_answered_once() -> None:
    person = Script(form=accept(ok=True))
    async with connect(person) as client:
        result = await client.call_tool("duplicate_id")
    assert result.text.startswith("1 answer(s) to dup: ")
    assert [q.message for q in person.asked] == ["Confirm?"]


async def test_a_response_for_an_id_we_never_sent_is_ignored_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Ignored, since it answers nothing waiting; but a warning, not an info line the CLI never
    shows: a server that answers with the wrong id leaves its caller waiting."""
    caplog.set_level("WARNING", logger="mcp_elicit.client.stdio")
    async with connect() as client:
        assert (await client.call_tool("stray_response")).text == "the real result"
    assert "never sent (id 987654, a server bug): ignored" in caplog.text


async def test_a_second_response_to_a_finished_request_is_no_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("INFO", logger="mcp_elicit.client.stdio")
    async with connect() as client:
        assert (await client.call_tool("answers_twice")).text == "first"
        assert (await client.call_tool("ping")).text  # by its result, the second "answer" was read
    assert "ignoring a response for finished request" in caplog.text
    assert not [record for record in caplog.records if record.levelname == "WARNING"]


async def test_a_response_with_both_result_and_error_is_refused() -> None:
    async with connect() as client:
        started = time.monotonic()
        with pytest.raises(MalformedMessageError, match="cannot be read"):
            await client.call_tool("result_and_error")
        assert time.monotonic() - started < 5  # failed at once, not at a timeout


async def test_an_undeclared_mode_gets_32602_and_nothing_is_shown() -> None:
    person = Script(form=accept(ok=True), mode_names=("form",))
    async with connect(person) as client:
        result = await client.call_tool("url")
    assert result.text == "error -32602: Elicitation mode 'url' was not declared by this client"
    assert person.asked == []


async def test_no_answerer_declares_no_elicitation() -> None:
    async with connect() as client:
        assert client.capabilities == {}
        result = await client.call_tool("ask")
    assert result.text == "error -32602: Elicitation mode 'form' was not declared by this client"


async def test_a_schema_outside_the_subset_gets_an_error_and_is_not_shown() -> None:
    person = Script(form=accept(ok=True))
    async with connect(person) as client:
        result = await client.call_tool("bad_schema")
    assert result.text.startswith("error -32602: Invalid params: input request 'b-1': requestedSchema")
    assert person.asked == []


async def test_a_url_question_without_its_elicitation_id_is_refused() -> None:
    person = Script(url=lambda _q: Answer("accept"))
    async with connect(person) as client:
        result = await client.call_tool("url_without_id")
    assert "elicitationId" in result.text
    assert result.text.startswith("error -32602")
    assert person.asked == []


async def test_completion_notices_tell_the_user_and_unknown_ids_are_ignored() -> None:
    done: list[Any] = []
    person = Script(url=lambda _q: Answer("accept"))
    async with connect(person, on_url_complete=done.append) as client:
        assert (await client.call_tool("url_then_complete")).text == '{"action": "accept"}'
    assert [(d.elicitation_id, d.message, d.url) for d in done] == [
        ("e-2", "Open it", "https://example.com/x")
    ]


async def test_a_server_that_keeps_asking_hits_the_round_limit() -> None:
    """``max_rounds`` bounds a call's questions as it bounds its 2026-07-28 rounds: the next one
    is refused and the call ends at once with RoundLimitError, not after ``max_total_seconds``
    of a person answering."""
    person = Script(form=accept(ok=True))
    async with connect(person, max_rounds=3, max_total_seconds=30) as client:
        started = time.monotonic()
        with pytest.raises(RoundLimitError, match="tools/call: the server still wanted input after 3 rounds"):
            await client.call_tool("endless")
        assert time.monotonic() - started < 10
        assert [question.message for question in person.asked] == ["#0?", "#1?", "#2?"]
        # The next call starts afresh.
        assert (await client.call_tool("ask")).text == '{"action": "accept", "content": {"ok": true}}'
    assert len(person.asked) == 4


async def test_calls_running_together_each_get_their_rounds() -> None:
    """Nothing ties a 2025-11-25 question to its call on stdio, so calls running together share
    their budget: two calls of two questions each fit ``max_rounds=2``."""
    person = Script(form=accept(ok=True))
    async with connect(person, max_rounds=2) as client:
        first, second = await asyncio.gather(client.call_tool("ask_twice"), client.call_tool("ask_twice"))
    assert first.text == second.text
    assert len(person.asked) == 4


async def test_a_request_that_is_not_valid_json_rpc_gets_32600_and_nothing_is_shown() -> None:
    # Answered, as JSON-RPC asks: left unanswered, the server would wait for ever.
    person = Script(form=accept(ok=True), mode_names=("form",))
    async with connect(person) as client:
        text = (await client.call_tool("invalid_request")).text
    assert text == 'error -32600: Invalid request: "params" must be an object'
    assert person.asked == []


async def test_ping_is_answered() -> None:
    async with connect() as client:
        assert (await client.call_tool("ping")).text == "{}"


async def test_sampling_and_roots_without_providers_get_32601() -> None:
    async with connect() as client:
        assert (await client.call_tool("sampling")).text.startswith("error -32601")
        assert (await client.call_tool("roots")).text.startswith("error -32601")
        assert (await client.call_tool("unknown_method")).text.startswith("error -32601")


class Model:
    async def create_message(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}


async def test_sampling_and_roots_with_providers() -> None:
    async with connect(sampler=Model(), roots=[{"uri": "file:///tmp/x", "name": "x"}]) as client:
        sampled = (await client.call_tool("sampling")).text
        assert '"model": "m"' in sampled
        assert (await client.call_tool("roots")).text == '{"roots": [{"name": "x", "uri": "file:///tmp/x"}]}'
        tooled = await client.call_tool("sampling", {"tools": [{"name": "t", "inputSchema": {}}]})
    assert tooled.text.startswith("error -32602")
    assert "sampling.tools" in tooled.text


async def test_a_request_the_server_cancels_is_not_answered() -> None:
    never = asyncio.Event()

    async def wait(_question: Any) -> Answer:
        await never.wait()
        return Answer("accept", {"ok": True})

    async with connect(Script(form=wait)) as client:
        assert (await client.call_tool("cancelled")).text == "c-1 answered: False"


async def test_url_elicitation_required_is_shown_then_retried_once() -> None:
    person = Script(url=lambda _q: Answer("accept"))
    async with connect(person) as client:
        assert (await client.call_tool("needs_url")).text == "connected"
    (question,) = person.asked
    assert (question.url, question.message) == ("https://example.com/connect", "Connect")


async def test_url_elicitation_required_declined_is_raised() -> None:
    person = Script(url=lambda _q: Answer("decline"))
    async with connect(person) as client:
        with pytest.raises(UrlElicitationRequiredError) as caught:
            await client.call_tool("needs_url")
    assert caught.value.elicitations[0]["elicitationId"] == "n-1"


@pytest.mark.parametrize(("mode", "shown"), [("modern", "2026-07-28"), ("unknown", "1999-01-01")])
async def test_an_initialize_result_with_a_version_we_do_not_speak(mode: str, shown: str) -> None:
    with pytest.raises(UnspokenVersionError, match=shown) as caught:
        async with connect(None, "--initialize", mode, protocol="2025-11-25"):
            pass
    assert caught.value.version == shown


async def test_an_initialize_result_without_server_info() -> None:
    with pytest.raises(MalformedMessageError, match="no serverInfo"):
        async with connect(None, "--initialize", "no-server-info", protocol="2025-11-25"):
            pass


async def test_a_server_that_never_answers_initialize_is_bounded_by_connect_timeout() -> None:
    started = time.monotonic()
    with pytest.raises(RequestTimeoutError, match=r"initialize: no answer within 1\.5 s"):
        async with connect(None, "--initialize", "silent", protocol="2025-11-25", connect_timeout=1.5):
            pass
    assert time.monotonic() - started < 6


async def test_a_server_that_exits_on_discover_is_started_again_for_initialize(tmp_path: Path) -> None:
    """Some servers exit on a request they do not know before initialize: the probe's process
    is gone, and a new one gets the handshake."""
    script = tmp_path / "picky.py"
    script.write_text(
        "import importlib.util, json, sys\n"
        "line = sys.stdin.readline()\n"
        "if json.loads(line)['method'] != 'initialize':\n"
        "    sys.exit(3)\n"
        f"spec = importlib.util.spec_from_file_location('rogue', {str(ROGUE)!r})\n"
        "rogue = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(rogue)\n"
        "rogue.PENDING.append(json.loads(line))\n"
        "sys.argv = ['rogue']\n"
        "rogue.main()\n"
    )
    async with Client.connect([sys.executable, str(script)], stderr="capture") as client:
        assert client.era == "legacy"
        assert (await client.call_tool("ping")).text == "{}"
