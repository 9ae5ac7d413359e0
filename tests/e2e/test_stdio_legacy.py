"""stdio, 2025-11-25: the first request that says chooses the era of the process.

An ``initialize`` opens a 2025-11-25 session for the whole process: the server's questions are
then requests on stdout with ids of their own space, interleaved with the client's requests
still running, and answered by responses on stdin. A request with the 2026-07-28 envelope
makes the process 2026-07-28 instead. A real server process, driven line by line.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.e2e.test_stdio import StdioPeer, running_peer

LEGACY = "2025-11-25"


def initialize(version: str = LEGACY, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"elicitation": {"form": {}}} if capabilities is None else capabilities,
            "clientInfo": {"name": "by-hand", "version": "1"},
        },
    }


async def opened(peer: StdioPeer, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    await peer.send(initialize(capabilities=capabilities))
    answer = await peer.receive()
    await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return answer


async def nothing_within(peer: StdioPeer, seconds: float) -> bool:
    """Whether the server writes nothing for ``seconds``."""
    try:
        await peer.receive(wait=seconds)
    except TimeoutError:
        return True
    return False


async def test_initialize_makes_the_process_2025_11_25(tmp_path: Path) -> None:
    async with running_peer(tmp_path) as peer:
        answer = await opened(peer)
        assert answer["id"] == "init"
        assert answer["result"]["protocolVersion"] == LEGACY
        assert answer["result"]["serverInfo"]["name"] == "e2e"
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
        listed = await peer.receive()
        assert "resultType" not in listed["result"]
        # A 2026-07-28 request on this process is refused (the era was chosen).
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/list",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
            }
        )
        refused = await peer.receive()
        assert refused["error"]["code"] == -32600
        assert "serves MCP 2025-11-25" in refused["error"]["message"]
        await peer.send({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {}})
        assert (await peer.receive())["error"]["code"] == -32601  # a 2026-only method


async def test_a_2026_process_refuses_initialize(tmp_path: Path) -> None:
    async with running_peer(tmp_path) as peer:
        discover = await peer.call(1, "server/discover", {})
        assert discover["result"]["supportedVersions"] == ["2026-07-28"]
        await peer.send(initialize())
        refused = await peer.receive()
        assert refused["error"]["code"] == -32022
        assert refused["error"]["data"]["requested"] == LEGACY
        # About this connection: the same process serves a client that begins with initialize.
        assert "this connection serves MCP 2026-07-28" in refused["error"]["message"]
        assert "connection of its own" in refused["error"]["message"]


async def test_questions_are_requests_interleaved_with_the_clients(tmp_path: Path) -> None:
    async with running_peer(tmp_path) as peer:
        await opened(peer)
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet"}})
        first = await peer.receive()
        assert first["method"] == "elicitation/create"
        assert first["params"]["message"] == "First name?"
        # While the call waits, the client's other requests are answered.
        await peer.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert await peer.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        # A response for an id the server never sent changes nothing.
        await peer.send(
            {"jsonrpc": "2.0", "id": 999, "result": {"action": "accept", "content": {"name": "X"}}}
        )
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": first["id"],
                "result": {"action": "accept", "content": {"name": "Grace"}},
            }
        )
        second = await peer.receive()
        assert second["method"] == "elicitation/create"
        assert second["id"] != first["id"]
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": second["id"],
                "result": {"action": "accept", "content": {"name": "Hopper"}},
            }
        )
        final = await peer.receive()
        assert final == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"content": [{"type": "text", "text": "Hello, Grace Hopper!"}], "isError": False},
        }


async def test_a_task_asked_of_a_server_without_tasks_is_ignored(tmp_path: Path) -> None:
    """Without a ``tasks`` capability the server processes a ``tools/call`` that carries ``task``
    normally, and ignores the ``task`` (2025-11-25 tasks: a receiver that did not declare them)."""
    async with running_peer(tmp_path) as peer:
        answer = await opened(peer)
        assert "tasks" not in answer["result"]["capabilities"]
        params = {"name": "grüßen", "arguments": {}, "task": {"ttl": 60000}}
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        question = await peer.receive()
        assert question["method"] == "elicitation/create"
        result = {"action": "accept", "content": {"name": "Ada"}}
        await peer.send({"jsonrpc": "2.0", "id": question["id"], "result": result})
        final = await peer.receive()
        assert final == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"content": [{"type": "text", "text": "Grüß dich, Ada!"}], "isError": False},
        }


async def test_a_cancelled_call_withdraws_its_question(tmp_path: Path) -> None:
    async with running_peer(tmp_path) as peer:
        await opened(peer)
        await peer.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "greet"}})
        question = await peer.receive()
        assert question["method"] == "elicitation/create"
        await peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
        withdrawn = await peer.receive()
        assert withdrawn["method"] == "notifications/cancelled"
        assert withdrawn["params"]["requestId"] == question["id"]
        # Nothing is answered for the cancelled call; the process goes on.
        await peer.send({"jsonrpc": "2.0", "id": 8, "method": "ping"})
        assert (await peer.receive())["id"] == 8


async def test_eof_ends_a_call_waiting_for_an_answer_at_once(tmp_path: Path) -> None:
    async with running_peer(tmp_path) as peer:
        await opened(peer)
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet"}})
        assert (await peer.receive())["method"] == "elicitation/create"
        assert peer.process.stdin is not None
        peer.process.stdin.close()
        code = await asyncio.wait_for(peer.process.wait(), 10)
        assert code == 0
        assert peer.process.stdout is not None
        rest = (await peer.process.stdout.read()).decode()
        for line in rest.splitlines():
            message = json.loads(line)
            assert message.get("id") == 1  # at most the call's own error, nothing else


async def test_logging_set_level_takes_only_the_levels_of_the_spec(tmp_path: Path) -> None:
    levels = "debug, info, notice, warning, error, critical, alert, emergency"
    async with running_peer(tmp_path) as peer:
        await opened(peer)
        for number, level in enumerate(("loud", 3, None, "notice")):
            await peer.send(
                {"jsonrpc": "2.0", "id": number, "method": "logging/setLevel", "params": {"level": level}}
            )
            answer = await peer.receive()
            if level == "notice":
                assert answer["result"] == {}
            else:
                assert answer["error"]["code"] == -32602
                assert levels in answer["error"]["message"]


async def test_a_ping_before_initialize_is_answered_and_chooses_no_era(tmp_path: Path) -> None:
    async with running_peer(tmp_path) as peer:
        await peer.send({"jsonrpc": "2.0", "id": "early", "method": "ping"})
        assert await peer.receive() == {"jsonrpc": "2.0", "id": "early", "result": {}}
        answer = await opened(peer)
        assert answer["result"]["protocolVersion"] == LEGACY


async def test_initialize_twice_is_refused_and_the_session_goes_on(tmp_path: Path) -> None:
    async with running_peer(tmp_path) as peer:
        await opened(peer)
        await peer.send({**initialize("2025-06-18"), "id": "again"})
        refused = await peer.receive()
        assert refused["id"] == "again"
        assert refused["error"] == {
            "code": -32600,
            "message": "Invalid request: this session is already initialized",
        }
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet"}})
        assert (await peer.receive())["method"] == "elicitation/create"  # still 2025-11-25, as opened


async def test_no_question_goes_out_before_notifications_initialized(tmp_path: Path) -> None:
    """A client may send a call once it has the initialize result; the server asks nothing until
    the client's notifications/initialized is in (and answers ping meanwhile)."""
    async with running_peer(tmp_path) as peer:
        await peer.send(initialize())
        await peer.receive()
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "grüßen"}})
        await peer.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert await peer.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert await nothing_within(peer, 0.5)
        await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        question = await peer.receive()
        assert question["method"] == "elicitation/create"
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"name": "Ada"}},
            }
        )
        assert (await peer.receive())["result"]["content"][0]["text"] == "Grüß dich, Ada!"


async def test_a_client_that_never_sends_initialized_gets_a_clear_error(tmp_path: Path) -> None:
    async with running_peer(tmp_path, "--leg-timeout", "1") as peer:
        await peer.send(initialize())
        await peer.receive()
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet"}})
        refused = await peer.receive(wait=10)
        assert refused["id"] == 1  # the call's error, and no question was sent before it
        assert refused["error"]["code"] == -32600
        assert "has not sent notifications/initialized" in refused["error"]["message"]


async def test_cancelling_a_call_withdraws_each_of_its_questions(tmp_path: Path) -> None:
    async with running_peer(tmp_path) as peer:
        await opened(peer)
        await peer.send(
            {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "two_at_once"}}
        )
        questions = [await peer.receive(), await peer.receive()]
        assert {q["method"] for q in questions} == {"elicitation/create"}
        await peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
        withdrawn = [await peer.receive(), await peer.receive()]
        assert {m["method"] for m in withdrawn} == {"notifications/cancelled"}
        assert sorted(m["params"]["requestId"] for m in withdrawn) == sorted(q["id"] for q in questions)
        for question in questions:  # late answers find nothing waiting, and get no reply
            await peer.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "cancel"}})
        await peer.send({"jsonrpc": "2.0", "id": 8, "method": "ping"})
        assert await peer.receive() == {"jsonrpc": "2.0", "id": 8, "result": {}}


async def test_bad_answers_from_the_client(tmp_path: Path) -> None:
    """A response with both result and error, or neither, an error that is not one, or another
    ``jsonrpc`` version, is refused (-32600, no id) and fails the question it answers at once (on
    stdio nothing else would tell the client, and the call would wait for another answer until
    its timeout); an ElicitResult with an action outside accept/decline/cancel ends the call with
    -32602."""
    async with running_peer(tmp_path) as peer:
        await opened(peer)
        broken = (
            ({"result": {}, "error": {"code": 1, "message": "m"}}, 'it carries both "result" and "error"'),
            ({"error": {"code": 1, "message": None}}, 'integer "code" and a string "message"'),
            ({}, '"method" must be a string'),  # neither result nor error
            ({"jsonrpc": "1.0", "result": {"action": "decline"}}, '"jsonrpc" must be "2.0"'),
        )
        for call_id, (answer, reason) in enumerate(broken, start=1):
            await peer.send(
                {"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": {"name": "grüßen"}}
            )
            question = await peer.receive()
            await peer.send({"jsonrpc": "2.0", "id": question["id"], **answer})
            refused = await peer.receive()
            # Without an id: the question's id is the server's own, and the client's call may
            # have the same number in its own id space.
            assert refused["id"] is None
            assert refused["error"]["code"] == -32600
            assert reason in refused["error"]["message"]
            final = await peer.receive(wait=5)  # not the leg timeout (600 s)
            assert final["id"] == call_id
            assert final["result"]["isError"] is True
            text = final["result"]["content"][0]["text"]
            assert text.startswith("Tool 'grüßen' could not finish: the client's answer could not be read: ")
            assert reason in text
        last = len(broken) + 1
        await peer.send({"jsonrpc": "2.0", "id": last, "method": "tools/call", "params": {"name": "grüßen"}})
        question = await peer.receive()
        await peer.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "maybe"}})
        final = await peer.receive()
        assert final["id"] == last
        assert final["error"]["code"] == -32602
        assert "action must be one of accept, decline, cancel" in final["error"]["message"]


async def test_sampling_with_tools_or_context_is_gated_by_the_sessions_capabilities(tmp_path: Path) -> None:
    async with running_peer(tmp_path) as peer:
        await opened(peer, {"sampling": {}})
        for number, (tool, missing) in enumerate(
            (("sample_with_tools", {"tools": {}}), ("sample_with_context", {"context": {}})), start=1
        ):
            await peer.send(
                {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": tool}}
            )
            refused = await peer.receive()  # the call's error: nothing was sent to the client first
            assert refused["id"] == number
            assert refused["error"]["code"] == -32021
            assert refused["error"]["data"] == {"requiredCapabilities": {"sampling": missing}}
    async with running_peer(tmp_path) as peer:
        await opened(peer, {"sampling": {"tools": {}}})
        await peer.send(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "sample_with_tools"}}
        )
        request = await peer.receive()
        assert request["method"] == "sampling/createMessage"
        assert request["params"]["tools"][0]["name"] == "calc"
        reply = {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"}
        await peer.send({"jsonrpc": "2.0", "id": request["id"], "result": reply})
        assert (await peer.receive())["result"]["content"][0]["text"] == "42"


async def test_a_question_never_answered_ends_the_call_with_a_tool_error(tmp_path: Path) -> None:
    async with running_peer(tmp_path, "--leg-timeout", "1") as peer:
        await opened(peer)
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "grüßen"}})
        question = await peer.receive()
        assert question["method"] == "elicitation/create"
        withdrawn = await peer.receive(wait=10)
        assert withdrawn["method"] == "notifications/cancelled"
        assert withdrawn["params"] == {"requestId": question["id"], "reason": "timed out"}
        final = await peer.receive()
        assert final["id"] == 1
        assert final["result"]["isError"] is True
        assert final["result"]["content"][0]["text"] == (
            "Tool 'grüßen' could not finish: the client did not answer elicitation/create within 1 s"
        )
        # Nothing is left waiting: the late answer is dropped, and the process goes on.
        await peer.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "cancel"}})
        await peer.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert await peer.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}


async def test_a_form_asking_a_secret_or_an_unsafe_url_is_refused_before_anything_is_sent(
    tmp_path: Path,
) -> None:
    """The same checks as on 2026-07-28, before the question would become a request: no secret
    in a form, no credential in a URL."""
    async with running_peer(tmp_path) as peer:
        await opened(peer, {"elicitation": {"form": {}, "url": {}}})
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "log_in"}})
        refused = await peer.receive()  # the call's answer: no elicitation/create came first
        assert refused["id"] == 1
        assert refused["error"]["code"] == -32603
        assert "password" in refused["error"]["message"]
        assert "URL mode" in refused["error"]["message"]
        await peer.send(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "visit_with_token"}}
        )
        unsafe = await peer.receive()
        assert unsafe["id"] == 2
        assert unsafe["result"]["isError"] is True
        assert "abcdef0123456789" not in json.dumps(unsafe)
        assert await nothing_within(peer, 0.3)


async def test_with_url_mode_error_the_retries_go_past_the_urls_a_32042_named(tmp_path: Path) -> None:
    """A plain ``ctx.elicit_url`` (no extension to say when the step is done): each retry the
    -32042 asks for goes past the URLs it named, so a handler that sends the person to two pages
    in turn completes on the second retry. A call after that asks again."""
    async with running_peer(tmp_path, "--url-mode", "error") as peer:
        await opened(peer, capabilities={"elicitation": {"form": {}, "url": {}}})

        async def call(number: int) -> dict[str, Any]:
            await peer.send(
                {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": "two_pages"}}
            )
            return await peer.receive()

        def named(refused: dict[str, Any]) -> list[str]:
            assert refused["error"]["code"] == -32042, refused
            return [page["url"] for page in refused["error"]["data"]["elicitations"]]

        assert named(await call(1)) == ["https://example.com/one"]
        assert named(await call(2)) == ["https://example.com/two"]
        done = await call(3)
        assert done["result"]["content"][0]["text"] == "pages: accept, accept"
        assert named(await call(4)) == ["https://example.com/one"]  # a new call: asked again
