"""Streamable HTTP, 2025-11-25 shape: the bounds of a session and the checks every message of one
gets, end to end (a real server process, raw HTTP, a 2025-11-25 client played by hand).

* a session idle for longer than ``idle_timeout`` is ended: its id answers 404 (initialize again);
* calls running at once in one session are bounded (429, saying so);
* a call's rounds of questions are bounded (the call ends with a tool error naming the cap);
* the bearer token is checked on every message, the answers to the server's questions too: an
  answer POSTed with another user's token (or none) gets the 404 of an unknown session and
  leaves the question waiting for its owner;
* the Origin check of the 2026-07-28 side applies to every 2025-11-25 message and verb;
* a message that names a session but carries the 2026-07-28 version header and no envelope is a
  2026-07-28 request (refused for its missing ``_meta``), never served in the session;
* a plain URL question is never announced complete, to any session;
* a call whose stream is not picked up again within ``resume_grace`` is cancelled: its question
  is withdrawn (``notifications/cancelled``) and a late answer finds nothing waiting.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import HttpServer, running_http_server
from tests.http_session_support import (
    Session,
    answer_questions,
    heard_on,
    initialize,
    messages,
    until_first_question,
)


@pytest.fixture(scope="module")
def tight_server(server_loop: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """The e2e server with tight bounds: idle sessions end after 1 s, one call at a time per
    session, three rounds of questions per call."""
    bounds = ("--idle-timeout", "1", "--max-calls", "1", "--max-rounds", "3")
    with running_http_server(tmp_path_factory.mktemp("markers"), *bounds) as server:
        yield server


@pytest.fixture(scope="module")
def impatient_server(server_loop: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """The e2e server that keeps a dropped stream's call 1 s for the client to pick it up again."""
    with running_http_server(tmp_path_factory.mktemp("markers"), "--resume-grace", "1") as server:
        yield server


def name(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


async def test_an_idle_session_ends_and_its_id_answers_404(
    tight_server: HttpServer, http: httpx.AsyncClient
) -> None:
    session = Session(http, tight_server.url, user="idle")
    await session.open()
    await session.post(session.request("ping"))  # in use: the clock starts again
    await asyncio.sleep(1.5)
    gone = await session.post(session.request("ping"), expect=404)
    assert gone.json()["error"]["code"] == -32600
    assert "initialize again" in gone.json()["error"]["message"]
    again = Session(http, tight_server.url, user="idle")  # the client starts over: a new session
    await again.open()
    assert again.id != session.id


async def test_calls_running_at_once_in_a_session_are_bounded(
    tight_server: HttpServer, http: httpx.AsyncClient
) -> None:
    session = Session(http, tight_server.url, user="busy")
    await session.open()
    first = session.request("tools/call", {"name": "grüßen", "arguments": {}})
    async with session.stream(first) as response:
        async for message in messages(response):
            if message.get("method") != "elicitation/create":
                continue
            second = session.request("tools/call", {"name": "grüßen", "arguments": {}})
            refused = await session.post(second, expect=429)
            assert refused.json()["id"] == second["id"]
            assert refused.json()["error"]["code"] == -32600
            assert "this session has 1 calls running already" in refused.json()["error"]["message"]
            await session.post({"jsonrpc": "2.0", "id": message["id"], "result": name({})}, expect=202)
    # The first call is over: the place is free again.
    _, final = await answer_questions(
        session, session.request("tools/call", {"name": "grüßen", "arguments": {}}), name
    )
    assert final is not None
    assert final["result"]["content"][0]["text"] == "Grüß dich, Ada!"


async def test_a_call_that_keeps_asking_ends_at_the_round_cap(
    tight_server: HttpServer, http: httpx.AsyncClient
) -> None:
    session = Session(http, tight_server.url, user="rounds")
    await session.open()
    seen, final = await asyncio.wait_for(
        answer_questions(session, session.request("tools/call", {"name": "endless", "arguments": {}}), name),
        30,
    )
    questions = [m["params"]["message"] for m in seen if m.get("method") == "elicitation/create"]
    assert questions == ["Question 0?", "Question 1?", "Question 2?", "Question 3?"]
    assert final is not None
    assert final["result"]["isError"] is True
    assert final["result"]["content"][0]["text"] == (
        "Tool 'endless' could not finish: tools/call 'endless' asked the client in more than 3 rounds; "
        "giving up"
    )


async def test_an_answer_with_another_users_token_is_refused_and_the_question_waits(
    http_server: HttpServer, http: httpx.AsyncClient
) -> None:
    alice = Session(http, http_server.url, user="alice")
    await alice.open()
    call = alice.request("tools/call", {"name": "grüßen", "arguments": {}})
    final = None
    async with alice.stream(call) as response:
        async for message in messages(response):
            if message.get("method") == "elicitation/create":
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": name({})}
                as_bob = await http.post(
                    http_server.url, json=answer, headers={**alice.headers(), "authorization": "Bearer bob"}
                )
                assert as_bob.status_code == 404
                no_token = {k: v for k, v in alice.headers().items() if k != "authorization"}
                anonymous = await http.post(http_server.url, json=answer, headers=no_token)
                assert anonymous.status_code == 404
                await alice.post(answer, expect=202)  # still waiting: its owner's answer is taken
            elif message.get("id") == call["id"]:
                final = message
    assert final is not None
    assert final["result"]["content"][0]["text"] == "Grüß dich, Ada!"


async def test_the_origin_is_checked_on_every_2025_message(
    http_server: HttpServer, http: httpx.AsyncClient
) -> None:
    evil = {"origin": "http://evil.example"}
    opening = await http.post(
        http_server.url, json=initialize(), headers={**Session(http, "").headers(), **evil}
    )
    assert opening.status_code == 403
    assert "mcp-session-id" not in opening.headers
    session = Session(http, http_server.url)
    await session.open()
    for method in ("GET", "DELETE"):
        refused = await http.request(method, http_server.url, headers=session.headers(**evil))
        assert refused.status_code == 403, method
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"action": "cancel"}}
    assert (await http.post(http_server.url, json=answer, headers=session.headers(**evil))).status_code == 403
    listed = await http.post(
        http_server.url, json=session.request("tools/list"), headers=session.headers(**evil)
    )
    assert listed.status_code == 403
    # A loopback page is let through (the default for a local server), and the session lives on.
    port = http_server.url.split(":")[2].split("/")[0]
    local = await session.post(session.request("ping"), origin=f"http://127.0.0.1:{port}")
    assert local.json()["result"] == {}


async def test_a_session_message_with_the_2026_header_and_no_envelope_is_a_2026_request(
    http_server: HttpServer, http: httpx.AsyncClient
) -> None:
    session = Session(http, http_server.url)
    await session.open()
    headers = {**session.headers(), "mcp-protocol-version": "2026-07-28"}
    refused = await http.post(http_server.url, json=session.request("tools/list"), headers=headers)
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == -32602
    assert "params._meta is required" in refused.json()["error"]["message"]
    again = await http.post(http_server.url, json=initialize(), headers=headers)
    assert again.status_code == 400
    assert again.json()["error"]["code"] == -32020  # initialize is no 2026-07-28 request


async def test_a_plain_url_question_is_never_announced_complete(
    http_server: HttpServer, http: httpx.AsyncClient
) -> None:
    """The user's accept of a ``ctx.elicit_url`` says they agreed to open the page, not that they
    finished there: no ``notifications/elicitation/complete`` follows, on the asking session or
    any other (the connect kit's announced completions: tests/connect/kit/test_kit_legacy.py)."""
    with_url = initialize(capabilities={"elicitation": {"form": {}, "url": {}}})
    asking, other = Session(http, http_server.url, user="carol"), Session(http, http_server.url, user="carol")
    await asking.open(with_url)
    await other.open(with_url)
    call = asking.request("tools/call", {"name": "visit", "arguments": {}})
    async with heard_on(other) as heard:
        seen, final = await answer_questions(asking, call, lambda params: {"action": "accept"})
    (question,) = [m for m in seen if m.get("method") == "elicitation/create"]
    assert question["params"]["mode"] == "url"
    assert [m for m in seen if m.get("method") == "notifications/elicitation/complete"] == []
    assert final is not None
    assert final["result"]["content"][0]["text"] == "visit: accept"
    assert heard == []  # the other session's stream heard nothing


async def test_a_stream_not_picked_up_again_cancels_its_call_and_withdraws_the_question(
    impatient_server: HttpServer, http: httpx.AsyncClient
) -> None:
    session = Session(http, impatient_server.url, user="gone")
    await session.open()
    call = session.request("tools/call", {"name": "grüßen", "arguments": {}})
    async with until_first_question(session, call) as (last_id, question):
        pass  # the client drops the connection here and does not come back in time
    await asyncio.sleep(1.4)  # past resume_grace (1 s): the call was cancelled
    late = {"jsonrpc": "2.0", "id": question["id"], "result": name({})}
    await session.post(late, expect=400)  # withdrawn: nothing waits for it any more
    async with session.listen(last_id) as stream:
        assert stream.status_code == 200  # the ended stream is kept a while to be read to its end
        resumed = [message async for message in messages(stream)]
    withdrawn = [m for m in resumed if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in withdrawn] == [question["id"]]
    assert not [m for m in resumed if m.get("id") == call["id"]]  # a cancelled call gets no response


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "1999-01-01", "banana", ""])
async def test_a_session_message_naming_a_version_no_session_speaks_is_400(
    http_server: HttpServer, http: httpx.AsyncClient, version: str
) -> None:
    """``MCP-Protocol-Version`` must be a version of the sessions (the spec: 400 for an invalid or
    unsupported one), on every message and verb of a session; without it, the session's own."""
    session = Session(http, http_server.url)
    await session.open()
    headers = {**session.headers(), "mcp-protocol-version": version}
    listed = session.request("tools/list")
    refused = await http.post(http_server.url, json=listed, headers=headers)
    assert refused.status_code == 400
    assert refused.json()["id"] == listed["id"]
    assert refused.json()["error"]["code"] == -32600
    shown = version or "''"  # text that names no version is refused the same way
    assert (
        f"MCP-Protocol-Version {shown} is not a version of this server's"
        in refused.json()["error"]["message"]
    )
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"action": "cancel"}}
    assert (await http.post(http_server.url, json=answer, headers=headers)).status_code == 400
    for verb in ("GET", "DELETE"):
        assert (await http.request(verb, http_server.url, headers=headers)).status_code == 400, verb
    without = {k: v for k, v in session.headers().items() if k != "mcp-protocol-version"}
    assert (
        await http.post(http_server.url, json=session.request("ping"), headers=without)
    ).status_code == 200
    older = {**session.headers(), "mcp-protocol-version": "2025-06-18"}  # one the sessions speak
    assert (await http.post(http_server.url, json=session.request("ping"), headers=older)).status_code == 200
