"""Streamable HTTP, 2025-11-25 shape, end to end: a real server process, raw HTTP.

A 2025-11-25 client opens a session with ``initialize``, names it (``Mcp-Session-Id``) on every
later message, gets each call's questions as requests on the call's SSE stream and POSTs its
answers back. These tests play such a client by hand, so that every status, header and event
is checked as it travels, and they play it badly too: the bad input of issue 19.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import HttpServer, running_http_server
from tests.http_session_support import ACCEPT, LEGACY, Session, answer_questions, events, initialize, messages

SESSION_ID = re.compile(r"[0-9a-f]{8}\.[A-Za-z0-9_-]{32}")


@pytest.fixture(scope="module")
def bounded_server(server_loop: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """The e2e server with small session bounds and a short wait for answers."""
    bounds = ("--max-sessions", "4", "--sessions-per-user", "2", "--leg-timeout", "1.5")
    with running_http_server(tmp_path_factory.mktemp("markers"), *bounds) as server:
        yield server


async def test_initialize_opens_a_session_with_a_secure_id(
    http_server: HttpServer, http: httpx.AsyncClient
) -> None:
    session = Session(http, http_server.url)
    result = await session.open()
    assert session.id is not None
    assert SESSION_ID.fullmatch(session.id), session.id  # visible ASCII, 192 random bits
    assert result["protocolVersion"] == LEGACY
    assert result["serverInfo"]["name"] == "e2e"
    assert "resultType" not in result
    assert {"tools", "logging"} <= set(result["capabilities"])
    listed = (await session.post(session.request("tools/list"))).json()["result"]
    assert "greet" in {tool["name"] for tool in listed["tools"]}
    assert not {"resultType", "ttlMs", "cacheScope", "_meta"} & set(listed)
    ping = (await session.post(session.request("ping"))).json()
    assert ping["result"] == {}


@pytest.mark.parametrize(
    ("asked", "answered"),
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("1.0.0", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ],
)
async def test_the_version_answered_is_one_the_server_speaks_and_never_a_2026_one(
    http_server: HttpServer, http: httpx.AsyncClient, asked: str, answered: str
) -> None:
    result = await Session(http, http_server.url).open(initialize(asked))
    assert result["protocolVersion"] == answered


async def test_a_call_asks_on_its_stream_and_gets_the_answers_posted_back(
    http_server: HttpServer, http: httpx.AsyncClient
) -> None:
    session = Session(http, http_server.url)
    await session.open()
    call = session.request("tools/call", {"name": "greet", "arguments": {}})
    seen: list[tuple[str | None, dict[str, Any] | None]] = []
    async with session.stream(call) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["mcp-session-id"] == session.id
        async for event_id, data in events(response):
            message = json.loads(data) if data else None
            seen.append((event_id, message))
            if message is not None and message.get("method") == "elicitation/create":
                name = {"First name?": "Grace", "Last name?": "Hopper"}[message["params"]["message"]]
                answer = {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"action": "accept", "content": {"name": name}},
                }
                posted = await session.post(answer, expect=202)
                assert posted.content == b""
    first_id, priming = seen[0]
    assert priming is None  # the priming event: an id, no data
    assert first_id is not None
    assert first_id.endswith(".0")
    questions = [m for _, m in seen if m is not None and m.get("method") == "elicitation/create"]
    assert [q["params"]["message"] for q in questions] == ["First name?", "Last name?"]
    assert len({q["id"] for q in questions}) == 2
    # The server's own requests have ids of their own space (1 may be its first question's id too).
    (final,) = [m for _, m in seen if m is not None and m.get("id") == call["id"] and "method" not in m]
    assert final["result"]["content"][0]["text"] == "Hello, Grace Hopper!"
    assert "resultType" not in final["result"]
    ids = [event_id for event_id, _ in seen]
    assert len(set(ids)) == len(ids)  # event ids unique in the session


async def test_messages_without_a_session_or_for_a_gone_one(
    http_server: HttpServer, http: httpx.AsyncClient
) -> None:
    session = Session(http, http_server.url)
    await session.open()
    headers = {"content-type": "application/json", "accept": ACCEPT, "mcp-protocol-version": LEGACY}
    missing = await http.post(http_server.url, json=session.request("tools/list"), headers=headers)
    assert missing.status_code == 400
    assert "Mcp-Session-Id header is required" in missing.json()["error"]["message"]
    unknown = await http.post(
        http_server.url, json=session.request("tools/list"), headers={**headers, "mcp-session-id": "0.nope"}
    )
    assert unknown.status_code == 404
    ended = await http.delete(http_server.url, headers=session.headers())
    assert ended.status_code == 200
    gone = await http.post(http_server.url, json=session.request("tools/list"), headers=session.headers())
    assert gone.status_code == 404  # the client initializes again
    assert "initialize again" in gone.json()["error"]["message"]


async def test_initialize_twice_on_one_session_is_refused(
    http_server: HttpServer, http: httpx.AsyncClient
) -> None:
    session = Session(http, http_server.url)
    await session.open()
    again = await session.post(initialize(), expect=400)
    assert again.json()["error"]["code"] == -32600
    assert "already initialized" in again.json()["error"]["message"]


async def test_responses_that_answer_no_question_are_refused(
    http_server: HttpServer, http: httpx.AsyncClient
) -> None:
    alice, other = Session(http, http_server.url), Session(http, http_server.url)
    await alice.open()
    await other.open()
    never_sent = {"jsonrpc": "2.0", "id": 9999, "result": {"action": "decline"}}
    refused = await alice.post(never_sent, expect=400)
    assert "no question of this session" in refused.json()["error"]["message"]
    both = {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}
    malformed = await alice.post(both, expect=400)
    assert malformed.json()["error"]["code"] == -32600
    assert malformed.json()["id"] is None  # 1 is the server's own request id, not the client's
    # A question of one session, answered twice, and in the other session.
    call = alice.request("tools/call", {"name": "grüßen", "arguments": {}})
    async with alice.stream(call) as response:
        async for message in messages(response):
            if message.get("method") == "elicitation/create":
                answer = {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"action": "accept", "content": {"name": "Ada"}},
                }
                elsewhere = await other.post(answer, expect=400)
                assert "no question of this session" in elsewhere.json()["error"]["message"]
                await alice.post(answer, expect=202)
                await alice.post(answer, expect=400)  # already answered


@pytest.mark.parametrize(
    ("result", "needle"),
    [
        ({"action": "maybe"}, "action must be one of accept, decline, cancel"),
        ({"action": "accept", "content": ["x"]}, "content must be an object"),
    ],
)
async def test_a_malformed_answer_ends_the_call_with_invalid_params(
    http_server: HttpServer, http: httpx.AsyncClient, result: dict[str, Any], needle: str
) -> None:
    session = Session(http, http_server.url)
    await session.open()
    call = session.request("tools/call", {"name": "grüßen", "arguments": {}})
    _, final = await answer_questions(session, call, lambda params: result)
    assert final is not None
    assert final["error"]["code"] == -32602
    assert needle in final["error"]["message"]


async def test_a_client_that_never_answers_gets_a_clear_error(
    bounded_server: HttpServer, http: httpx.AsyncClient
) -> None:
    session = Session(http, bounded_server.url, user="patient")
    await session.open()
    call = session.request("tools/call", {"name": "grüßen", "arguments": {}})
    async with session.stream(call) as response:
        seen = [message async for message in messages(response)]
    (question,) = [m for m in seen if m.get("method") == "elicitation/create"]
    (withdrawn,) = [m for m in seen if m.get("method") == "notifications/cancelled"]
    assert withdrawn["params"]["requestId"] == question["id"]
    (final,) = [m for m in seen if m.get("id") == call["id"] and "method" not in m]
    # A tool error that says why (the model reads it), not a protocol error.
    assert final["result"] == {
        "content": [
            {
                "type": "text",
                "text": "Tool 'grüßen' could not finish: "
                "the client did not answer elicitation/create within 1.5 s",
            }
        ],
        "isError": True,
    }
    late = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "cancel"}}
    await session.post(late, expect=400)  # withdrawn: nothing waits for it any more


async def test_sessions_are_bounded_per_user_and_in_all(
    bounded_server: HttpServer, http: httpx.AsyncClient
) -> None:
    opened = []
    for _ in range(2):
        session = Session(http, bounded_server.url, user="flood")
        await session.open()
        opened.append(session)
    third = await http.post(
        bounded_server.url,
        json=initialize(),
        headers=Session(http, bounded_server.url, user="flood").headers(),
    )
    assert third.status_code == 429
    assert "sessions open already" in third.json()["error"]["message"]
    others = []
    for user in ("u1", "u2", "u3", "u4"):
        response = await http.post(
            bounded_server.url,
            json=initialize(),
            headers=Session(http, bounded_server.url, user=user).headers(),
        )
        others.append(response.status_code)
    # 2 of "flood" plus what "patient" may have left: the total of 4 is reached on the way.
    assert 503 in others
    full = [r for r in others if r == 503]
    assert all(status in (200, 503) for status in others), others
    assert full
    for session in opened:  # ending sessions frees the places
        ended = await http.delete(bounded_server.url, headers=session.headers())
        assert ended.status_code == 200
    after = await http.post(
        bounded_server.url,
        json=initialize(),
        headers=Session(http, bounded_server.url, user="flood").headers(),
    )
    assert after.status_code == 200


async def test_a_session_is_not_authentication(http_server: HttpServer, http: httpx.AsyncClient) -> None:
    """The session records the principal whose token opened it; a request whose token names
    another principal gets the 404 of an unknown session, and one with no token too."""
    alice = Session(http, http_server.url, user="alice")
    await alice.open()
    assert (await alice.post(alice.request("tools/list"))).status_code == 200
    as_bob = await http.post(
        http_server.url,
        json=alice.request("tools/list"),
        headers={**alice.headers(), "authorization": "Bearer bob"},
    )
    assert as_bob.status_code == 404
    headers = {k: v for k, v in alice.headers().items() if k != "authorization"}
    anonymous = await http.post(http_server.url, json=alice.request("tools/list"), headers=headers)
    assert anonymous.status_code == 404


async def test_a_session_is_bound_to_the_oauth_client_too(
    http_server: HttpServer, http: httpx.AsyncClient
) -> None:
    """The spec binds elicitations to the client and the user: another OAuth client of the same
    user, holding the session id, can neither answer the session's question nor use it."""
    alice = Session(http, http_server.url, user="alice@app-a")
    await alice.open()
    as_other_app = {**alice.headers(), "authorization": "Bearer alice@app-b"}
    listed = await http.post(http_server.url, json=alice.request("tools/list"), headers=as_other_app)
    assert listed.status_code == 404
    call = alice.request("tools/call", {"name": "grüßen", "arguments": {}})
    async with alice.stream(call) as response:
        async for message in messages(response):
            if message.get("method") == "elicitation/create":
                answer = {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"action": "accept", "content": {"name": "Mallory"}},
                }
                stolen = await http.post(http_server.url, json=answer, headers=as_other_app)
                assert stolen.status_code == 404
                answer["result"]["content"] = {"name": "Ada"}
                await alice.post(answer, expect=202)
            elif message.get("id") == call["id"]:
                assert message["result"]["content"][0]["text"] == "Grüß dich, Ada!"
                break
        else:
            raise AssertionError("the call's stream ended without its response")


async def test_each_era_on_its_own_path(http_server: HttpServer, http: httpx.AsyncClient) -> None:
    """A 2026-07-28 request that carries a session id is served statelessly (the id is ignored);
    a request without the 2026 envelope but with a 2026 version header is a 2026 request, which
    lacks its _meta."""
    from tests.e2e.test_http import body, headers_for

    session = Session(http, http_server.url)
    await session.open()
    modern = body("tools/list")
    served = await http.post(
        http_server.url, json=modern, headers={**headers_for(modern), "mcp-session-id": session.id or ""}
    )
    assert served.status_code == 200
    assert served.json()["result"]["resultType"] == "complete"
    bare = {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}}
    refused = await http.post(http_server.url, json=bare, headers=headers_for(bare))
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == -32602
    assert "params._meta is required" in refused.json()["error"]["message"]


async def test_a_2025_06_18_client_is_never_sent_a_url(
    http_server: HttpServer, http: httpx.AsyncClient
) -> None:
    """URL mode arrived in 2025-11-25: a 2025-06-18 session is form only, whatever it declares."""
    session = Session(http, http_server.url)
    await session.open(initialize("2025-06-18", {"elicitation": {"form": {}, "url": {}}}))
    assert session.version == "2025-06-18"
    call = session.request("tools/call", {"name": "visit", "arguments": {}})
    async with session.stream(call) as response:
        seen = [message async for message in messages(response)]
    assert not [m for m in seen if m.get("method") == "elicitation/create"]
    (final,) = [m for m in seen if m.get("id") == call["id"] and "method" not in m]
    assert final["error"]["code"] == -32021
    assert final["error"]["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}


async def test_a_2025_06_18_client_is_sent_forms_in_its_own_schema(
    http_server: HttpServer, http: httpx.AsyncClient
) -> None:
    """2025-06-18 forms had no ``mode``, no titled choices (``enum`` with ``enumNames``), no
    default but a boolean's and no multi-select: the same handler's form is written so, a
    default left out still applies, and a multi-select ends the call saying why."""
    session = Session(http, http_server.url)
    await session.open(initialize("2025-06-18", {"elicitation": {}}))
    call = session.request("tools/call", {"name": "order", "arguments": {}})
    asked: list[dict[str, Any]] = []

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"size": "l"}}

    _, final = await answer_questions(session, call, answer)
    (params,) = asked
    assert "mode" not in params
    assert params["requestedSchema"]["properties"] == {
        "size": {"type": "string", "enum": ["s", "l"], "enumNames": ["Small", "Large"]},
        "note": {"type": "string"},
        "count": {"type": "integer", "minimum": 1},
        "gift": {"type": "boolean", "default": False},
    }
    assert final is not None
    text = final["result"]["content"][0]["text"]
    assert text == "order: accept [('count', 1), ('gift', False), ('note', 'none'), ('size', 'l')]"

    call = session.request("tools/call", {"name": "order_extras", "arguments": {}})
    seen, final = await answer_questions(session, call, answer)
    assert not [m for m in seen if m.get("method") == "elicitation/create"]
    assert final is not None
    assert final["result"]["isError"] is True
    assert (
        "the client speaks MCP 2025-06-18, and the form's field 'extras' is a multi-select"
        in (final["result"]["content"][0]["text"])
    )
    assert len(asked) == 1


async def test_a_get_stream_per_session_and_its_bounds(
    http_server: HttpServer, http: httpx.AsyncClient
) -> None:
    session = Session(http, http_server.url)
    await session.open()
    get_headers = session.headers(accept="text/event-stream")
    async with session.listen() as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        second = await http.get(http_server.url, headers=get_headers)
        assert second.status_code == 409
    wrong = await http.get(http_server.url, headers={**session.headers(), "accept": "application/json"})
    assert wrong.status_code == 406
    unknown = await http.get(http_server.url, headers={**get_headers, "last-event-id": "s99.3"})
    assert unknown.status_code == 404


def test_session_ids_are_random(tmp_path: Path) -> None:
    """192 bits from the system's CSPRNG, URL-safe base64 (never a counter or a time)."""
    import asyncio

    from mcp_elicit import Server
    from mcp_elicit.transport.http_sessions import SessionTable

    async def mint() -> list[str]:
        table = SessionTable(Server("ids"), instance="abcd1234")
        return [table.create(None).id for _ in range(200)]

    ids = asyncio.run(mint())
    assert len(set(ids)) == 200
    assert all(SESSION_ID.fullmatch(i) for i in ids)


async def test_the_same_handlers_log_reaches_both_eras(
    http_server: HttpServer, http: httpx.AsyncClient
) -> None:
    """``ctx.log`` in one handler: on a 2025-11-25 session, a ``notifications/message`` on the
    call's stream at the level ``logging/setLevel`` chose; on a 2026-07-28 request, the same
    notification on its SSE reply at the level its ``_meta`` ``io.modelcontextprotocol/logLevel``
    asks (the 2026 equivalent of the session's level). Below the level, nothing."""
    from tests.e2e.test_http import body, headers_for

    session = Session(http, http_server.url)
    await session.open()
    logged = []
    for level in ("warning", "error"):
        await session.post(session.request("logging/setLevel", {"level": level}))
        seen, final = await answer_questions(
            session, session.request("tools/call", {"name": "noisy", "arguments": {}}), lambda p: {}
        )
        assert final is not None
        assert final["result"]["content"][0]["text"] == "quiet on stdout"
        logged.append([m["params"] for m in seen if m.get("method") == "notifications/message"])
    assert logged == [[{"level": "warning", "data": "a log message"}], []]
    modern = []
    for level in ("warning", "error"):
        message = body("tools/call", {"name": "noisy", "arguments": {}})
        message["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = level
        reply = await http.post(http_server.url, json=message, headers=headers_for(message))
        assert reply.status_code == 200
        messages = []
        if reply.headers["content-type"].startswith("text/event-stream"):
            messages = [
                json.loads(line[5:])
                for line in reply.text.splitlines()
                if line.startswith("data:") and line[5:].strip()
            ]
        else:
            messages = [reply.json()]
        modern.append([m["params"] for m in messages if m.get("method") == "notifications/message"])
        (result,) = [m for m in messages if m.get("id") == message["id"]]
        assert result["result"]["resultType"] == "complete"
    assert modern == [[{"level": "warning", "data": "a log message"}], []]
