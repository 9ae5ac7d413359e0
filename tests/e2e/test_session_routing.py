"""Several instances behind a load balancer that does not stick: two real server processes
(``routing_server.py``, uvicorn on 127.0.0.1) sharing a real PostgreSQL database, a 2025-11-25
session opened on A, and its other messages sent to B, where B hands them to A through
``LISTEN/NOTIFY`` and relays A's answers back.

Raw HTTP (httpx), so that each request goes to the instance the test chooses, and our own client
through a round-robin HTTP proxy. Every module here runs on uvloop and on asyncio's loop
(``tests/e2e/conftest.py``); each run has its own ``NOTIFY`` channel, so runs in parallel (other
worktrees, the other loop) never hear each other.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
import signal
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit.client import Client
from mcp_elicit.client.answerers import ScriptedAnswerer
from mcp_elicit.state import KeyRing, StateSealer
from mcp_elicit.storage import PostgresSessionRouter
from mcp_elicit.transport.relay_letters import Letter, LetterSealer
from tests.e2e import routing_server
from tests.e2e.conftest import HttpServer
from tests.helpers import InProcessServer, find_pg_dsn, free_port, wait_for_text
from tests.http_session_support import (
    ACCEPT,
    LEGACY,
    Session,
    answer_questions,
    events,
    messages,
    until_first_question,
)
from tests.server_process import PY, running_server

SERVER = Path(__file__).with_name("routing_server.py")
OWNER_TIMEOUT = 1.5  # what routing_server.py is given (seconds)
KEEPALIVE = 0.5  # so a silent relay is over after 1.5 s
SLACK = 3.0  # a loaded machine (2 shared cores) answers later than the bound says


@dataclass
class Instance(HttpServer):
    """An instance of the deployment, and the name it gives the sessions it holds."""

    name: str


@contextmanager
def running_instance(dsn: str, channel: str, markers: Path, *extra: str) -> Iterator[Instance]:
    """An instance of ``routing_server.py`` (its output in ``markers/server.log``), stopped when
    the block ends."""
    name = "i" + secrets.token_hex(4)
    port = free_port()
    markers.mkdir(parents=True, exist_ok=True)
    argv = [
        PY,
        str(SERVER),
        "--port",
        str(port),
        "--dsn",
        dsn,
        "--instance",
        name,
        "--channel",
        channel,
        "--marker-dir",
        str(markers),
        "--owner-timeout",
        str(OWNER_TIMEOUT),
        "--keepalive",
        str(KEEPALIVE),
        *extra,
    ]
    with running_server(argv, log=markers / "server.log", port=port) as running:
        yield Instance(running, markers, name)


@contextmanager
def running_pair(dsn: str, channel: str, root: Path) -> Iterator[tuple[Instance, Instance]]:
    """Instances A and B of one deployment (A holds the sessions the tests open)."""
    with running_instance(dsn, channel, root / "a") as a, running_instance(dsn, channel, root / "b") as b:
        yield a, b


@pytest.fixture(scope="module")
def dsn() -> str:
    return find_pg_dsn("routing 2025-11-25 sessions between instances")


@pytest.fixture(scope="module")
def channel(server_loop: str) -> str:
    return f"mcp_elicit_test_{secrets.token_hex(6)}"


@pytest.fixture(scope="module")
def pair(
    dsn: str, channel: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Instance, Instance]]:
    with running_pair(dsn, channel, tmp_path_factory.mktemp("routing")) as both:
        yield both


async def open_on(http: httpx.AsyncClient, owner: Instance, user: str = "alice") -> Session:
    session = Session(http, owner.url, user)
    await session.open()
    assert session.id is not None
    assert session.id.startswith(owner.name + ".")
    return session


def at(session: Session, instance: Instance) -> Session:
    """The same session, its requests sent to ``instance`` (ids still counted by ``session``)."""
    other = Session(
        session.http, instance.url, token=session.auth["authorization"][7:] if session.auth else None
    )
    other.id, other.version, other._ids = session.id, session.version, session._ids
    return other


async def open_across(
    http: httpx.AsyncClient, owner: Instance, other: Instance, user: str = "alice"
) -> tuple[Session, Session]:
    """A session opened on ``owner``, and the same session with its requests sent to ``other``."""
    session = await open_on(http, owner, user)
    return session, at(session, other)


def answer(question: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": content}}


NAMES = {"First name?": "Grace", "Last name?": "Hopper"}


def by_name(params: dict[str, Any]) -> dict[str, Any]:
    """The answer to the ``greet`` tool's question in ``params``: Grace, then Hopper."""
    return {"action": "accept", "content": {"name": NAMES[params["message"]]}}


def cancel(request: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request["id"]}}


async def until_get_stream_opens(session: Session, deadline: float, failure: str) -> None:
    """Ask for the session's GET stream until it is granted (409 while another one is held), and
    fail with ``failure`` if that takes past ``deadline`` (``time.monotonic()``)."""
    while True:
        async with session.listen() as again:
            if again.status_code == 200:
                return
        assert again.status_code == 409
        assert time.monotonic() < deadline, failure
        await asyncio.sleep(0.05)


# -- response POSTs, calls, cancels, DELETE on the other instance ---------------------------------


async def test_every_answer_posted_to_the_other_instance_completes_the_call_on_the_owner(
    pair: tuple[Instance, Instance], http: httpx.AsyncClient
) -> None:
    a, b = pair
    session, on_b = await open_across(http, a, b)
    call = session.request("tools/call", {"name": "greet", "arguments": {}})
    # Each answer's 202, with no body, is the owner's own, relayed.
    seen, _ = await answer_questions(session, call, by_name, answering=[on_b])
    questions = [m["params"]["message"] for m in seen if m.get("method") == "elicitation/create"]
    assert questions == ["First name?", "Last name?"]  # two questions in sequence
    (final,) = [m for m in seen if m.get("id") == call["id"] and "method" not in m]
    assert final["result"]["content"][0]["text"] == "Hello, Grace Hopper!"


async def test_calls_sent_to_the_other_instance_run_on_the_owner_and_stream_back(
    pair: tuple[Instance, Instance], http: httpx.AsyncClient
) -> None:
    a, b = pair
    session, on_b = await open_across(http, a, b)
    listed = (await on_b.post(on_b.request("tools/list"))).json()["result"]
    assert "greet" in {tool["name"] for tool in listed["tools"]}
    # A call POSTed to B: its SSE stream comes over B's connection, and it runs on A.
    call = on_b.request("tools/call", {"name": "whoami", "arguments": {}})
    async with on_b.stream(call) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["mcp-session-id"] == session.id
        got = [(event_id, data) async for event_id, data in events(response)]
    assert got[0][0] is not None  # the owner's priming event: an id, no data
    assert got[0][1] == ""
    assert json.loads(got[-1][1])["result"]["content"][0]["text"] == a.name
    # Questions on B's connection, answers to A and to B in turn.
    call = on_b.request("tools/call", {"name": "greet", "arguments": {}})
    _, final = await answer_questions(on_b, call, by_name, answering=[session, on_b])
    assert final is not None
    assert final["result"]["content"][0]["text"] == "Hello, Grace Hopper!"
    # A call that does not accept SSE is answered with JSON, relayed whole.
    plain = await http.post(
        b.url,
        json=on_b.request("tools/call", {"name": "big", "arguments": {"size": 3_000_000}}),
        headers={**on_b.headers(), "accept": "application/json"},
    )
    assert plain.status_code == 200
    assert plain.json()["result"]["content"][0]["text"] == "x" * 3_000_000  # several letters of 1 MiB


async def test_a_cancel_sent_to_the_other_instance_cancels_the_call_on_the_owner(
    pair: tuple[Instance, Instance], http: httpx.AsyncClient
) -> None:
    a, b = pair
    session, on_b = await open_across(http, a, b)
    # A call waiting for its question's answer: the cancel withdraws the question.
    call = session.request("tools/call", {"name": "greet", "arguments": {}})
    seen: list[dict[str, Any]] = []
    async with session.stream(call) as response:
        async for message in messages(response):
            seen.append(message)
            if message.get("method") == "elicitation/create":
                await on_b.post(cancel(call), expect=202)
    (question,) = [m for m in seen if m.get("method") == "elicitation/create"]
    (withdrawn,) = [m for m in seen if m.get("method") == "notifications/cancelled"]
    assert withdrawn["params"]["requestId"] == question["id"]
    assert not [m for m in seen if m.get("id") == call["id"] and "method" not in m]  # no response: cancelled
    late = await on_b.post(answer(question, {"name": "Ada"}), expect=400)
    assert "no question of this session" in late.json()["error"]["message"]
    # A running handler is cancelled on the owner (its markers are A's).
    label = secrets.token_hex(4)
    slow = on_b.request("tools/call", {"name": "slow", "arguments": {"label": label}})
    async with on_b.stream(slow) as response:
        stream = events(response)
        await anext(stream)  # the priming event: the call runs
        assert await wait_for_text(a.markers / f"started-{label}", "started", within=10) == "started"
        await on_b.post(cancel(slow), expect=202)
        rest = [data async for _, data in stream]
    assert not [d for d in rest if d]  # the stream ended without a response
    assert await wait_for_text(a.markers / f"cancelled-{label}", "cancelled", within=10) == "cancelled"
    assert not (b.markers / f"started-{label}").exists()


async def test_delete_sent_to_the_other_instance_ends_the_session_on_the_owner(
    pair: tuple[Instance, Instance], http: httpx.AsyncClient
) -> None:
    a, b = pair
    session, on_b = await open_across(http, a, b)
    ended = await http.delete(b.url, headers=on_b.headers())
    assert ended.status_code == 200
    on_a = await session.post(session.request("tools/list"), expect=404)
    assert "initialize again" in on_a.json()["error"]["message"]
    again = await http.delete(b.url, headers=on_b.headers())
    assert again.status_code == 404  # the owner's answer, relayed


async def test_a_get_stream_opened_on_the_other_instance_gets_the_owners_notifications(
    pair: tuple[Instance, Instance], http: httpx.AsyncClient
) -> None:
    a, b = pair
    session, on_b = await open_across(http, a, b)
    await on_b.post(on_b.request("resources/subscribe", {"uri": "notes://current"}))
    async with on_b.listen() as stream:
        assert stream.status_code == 200
        received = events(stream)
        assert (await anext(received))[1] == ""  # the owner's priming event
        # The session has its one GET stream (on A, relayed): a second one is refused.
        second = await http.get(a.url, headers=session.headers(accept="text/event-stream"))
        assert second.status_code == 409
        # A change on A, told to the sessions A holds, reaches the client over B.
        other = await open_on(http, a, user="bob")
        touched = await other.post(
            other.request("tools/call", {"name": "touch", "arguments": {"uri": "notes://current"}}),
            accept="application/json",
        )
        assert touched.json()["result"]["content"][0]["text"] == "told 1"
        _, data = await asyncio.wait_for(anext(received), 10)
    update = json.loads(data)
    assert update == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "notes://current"},
    }
    # The client closed its GET stream on B: A hears of it, and the session may open another.
    deadline = time.monotonic() + 3 * KEEPALIVE + SLACK
    await until_get_stream_opens(session, deadline, "the owner never heard that the client went away")


async def test_a_client_that_leaves_the_other_instance_mid_call_resumes_there(
    pair: tuple[Instance, Instance], http: httpx.AsyncClient
) -> None:
    """The client's connection to B drops mid-call: A keeps the call and its events, and a GET
    with ``Last-Event-ID`` (on B again) picks the stream up where it was left."""
    a, b = pair
    session, on_b = await open_across(http, a, b)
    call = on_b.request("tools/call", {"name": "greet", "arguments": {}})
    async with until_first_question(on_b, call) as (first_id, first):
        pass  # the connection is closed here
    # The answer goes to A, the resumption to B.
    await session.post(answer(first, {"name": "Grace"}), expect=202)
    seen, final = await answer_questions(on_b, call, by_name, resume_from=first_id)
    questions = [m["params"]["message"] for m in seen if m.get("method") == "elicitation/create"]
    assert questions == ["Last name?"]  # nothing replayed twice
    assert final is not None
    assert final["result"]["content"][0]["text"] == "Hello, Grace Hopper!"


# -- who may use a session, and bad input ----------------------------------------------------------


async def test_a_relayed_message_of_another_principal_gets_the_same_404(
    pair: tuple[Instance, Instance], http: httpx.AsyncClient
) -> None:
    a, b = pair
    session, on_b = await open_across(http, a, b, user="alice")
    assert (await on_b.post(on_b.request("tools/list"))).status_code == 200
    as_bob = await http.post(
        b.url, json=on_b.request("tools/list"), headers={**on_b.headers(), "authorization": "Bearer bob"}
    )
    assert as_bob.status_code == 404
    assert "initialize again" in as_bob.json()["error"]["message"]
    anonymous = {k: v for k, v in on_b.headers().items() if k != "authorization"}
    assert (await http.post(b.url, json=on_b.request("tools/list"), headers=anonymous)).status_code == 404
    assert (
        await http.delete(b.url, headers={**on_b.headers(), "authorization": "Bearer bob"})
    ).status_code == 404
    assert (await session.post(session.request("tools/list"))).status_code == 200  # still alice's


async def test_bad_input_through_the_relay(pair: tuple[Instance, Instance], http: httpx.AsyncClient) -> None:
    a, b = pair
    _, on_b = await open_across(http, a, b)
    never_sent = await on_b.post(
        {"jsonrpc": "2.0", "id": 987654, "result": {"action": "decline"}}, expect=400
    )
    assert never_sent.json()["error"]["code"] == -32600
    assert (
        "no question of this session waits for an answer with id 987654"
        in never_sent.json()["error"]["message"]
    )
    headers = {
        "content-type": "application/json",
        "accept": ACCEPT,
        "mcp-protocol-version": LEGACY,
        "authorization": "Bearer alice",
    }
    # An instance that does not exist: no answer within the owner's timeout, so 404, in time.
    nobody = "n" + secrets.token_hex(4) + ".abcdefghijklmnopqrstuvwxyz012345"
    started = time.monotonic()
    missing = await http.post(
        b.url, json=on_b.request("tools/list"), headers={**headers, "mcp-session-id": nobody}
    )
    took = time.monotonic() - started
    assert missing.status_code == 404
    assert "initialize again" in missing.json()["error"]["message"]
    assert OWNER_TIMEOUT * 0.9 <= took < OWNER_TIMEOUT + SLACK
    gone_get = await http.get(
        b.url, headers={**headers, "mcp-session-id": nobody, "accept": "text/event-stream"}
    )
    assert gone_get.status_code == 404
    # Ids whose instance part no instance mints: 404 at once, nothing relayed.
    for malformed in ("no-dot-at-all", "bad-instance!.abc", ".abc", "abc.", "x" * 21 + ".abc"):
        started = time.monotonic()
        refused = await http.post(
            b.url, json=on_b.request("tools/list"), headers={**headers, "mcp-session-id": malformed}
        )
        assert refused.status_code == 404, malformed
        assert time.monotonic() - started < 1.0, malformed
    # A body the relay carries is checked like any: not JSON-RPC -> 400 on B, nothing relayed.
    broken = await http.post(b.url, content=b"{not json", headers=on_b.headers())
    assert broken.status_code == 400
    assert broken.json()["error"]["code"] == -32700


# -- an owner that dies ----------------------------------------------------------------------------


async def test_the_owner_killed_while_the_other_instance_relays(
    dsn: str, channel: str, tmp_path: Path, http: httpx.AsyncClient
) -> None:
    with running_pair(dsn, channel, tmp_path) as (a, b):
        _, on_b = await open_across(http, a, b)
        label = secrets.token_hex(4)
        call = on_b.request("tools/call", {"name": "slow", "arguments": {"label": label}})
        async with on_b.stream(call) as response:
            stream = events(response)
            await anext(stream)  # priming: A runs the call, B relays its stream
            assert await wait_for_text(a.markers / f"started-{label}", "started", within=10) == "started"
            a.process.kill()  # SIGKILL: no goodbye to anyone
            a.process.wait()
            killed = time.monotonic()
            rest = [data async for _, data in stream]
        # B gave up on the silent owner within three keepalives, and the stream just ended.
        assert time.monotonic() - killed < 3 * KEEPALIVE + SLACK
        assert not [d for d in rest if d]
        # Later messages of the session: 404 within the owner's timeout, so the client starts over.
        started = time.monotonic()
        lost = await on_b.post(on_b.request("tools/list"), expect=404)
        assert time.monotonic() - started < OWNER_TIMEOUT + SLACK
        assert "initialize again" in lost.json()["error"]["message"]
        resume = await http.get(
            b.url, headers={**on_b.headers(), "accept": "text/event-stream", "last-event-id": "s1.0"}
        )
        assert resume.status_code == 404
        # B itself is fine: a new session there works.
        fresh = await open_on(http, b)
        assert (await fresh.post(fresh.request("tools/list"))).status_code == 200


async def test_an_owner_that_stalls_past_its_timeout_never_runs_what_the_client_was_told_is_lost(
    dsn: str, channel: str, tmp_path: Path, http: httpx.AsyncClient
) -> None:
    """A is stopped (SIGSTOP) longer than ``owner_timeout``: B answers a call sent to it 404, and
    the client starts over. When A wakes, the letter is still in its mailbox; A must not run that
    call, or it would run a tool nobody waits for (and the client's retry would run it twice)."""
    with running_pair(dsn, channel, tmp_path) as (a, b):
        _, on_b = await open_across(http, a, b)
        label = secrets.token_hex(4)
        a.process.send_signal(signal.SIGSTOP)
        try:
            call = on_b.request("tools/call", {"name": "slow", "arguments": {"label": label}})
            lost = await on_b.post(call, expect=404)
            assert "initialize again" in lost.json()["error"]["message"]
        finally:
            a.process.send_signal(signal.SIGCONT)
        # A is awake and has read its mailbox (letters come in order): the session relays again.
        deadline = time.monotonic() + 10
        while True:
            listed = await http.post(b.url, json=on_b.request("tools/list"), headers=on_b.headers())
            if listed.status_code == 200:
                break
            assert time.monotonic() < deadline, f"A never relayed again after it woke: {listed.text}"
            await asyncio.sleep(0.1)
        await asyncio.sleep(KEEPALIVE)
        assert not (a.markers / f"started-{label}").exists(), "A ran a call the client was told is lost"


@dataclass
class FakeOwner:
    """A mailbox of the test's own on the deployment's channel, with its keys: the test plays the
    instance that holds a session, letter by letter."""

    name: str
    router: PostgresSessionRouter
    letters: LetterSealer
    inbox: asyncio.Queue[Letter]

    async def next(self, kind: str, within: float = OWNER_TIMEOUT + SLACK) -> Letter | None:
        """The next letter of ``kind`` (others are skipped), or None if none comes ``within``."""
        deadline = time.monotonic() + within
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                letter = await asyncio.wait_for(self.inbox.get(), remaining)
            except TimeoutError:
                break
            if letter.kind == kind:
                return letter
        return None

    async def answer(self, to: Letter, kind: str) -> None:
        await self.router.post(to.sender, self.letters.seal(to.sender, kind, to.relay))


@asynccontextmanager
async def fake_owner(dsn: str, channel: str) -> AsyncIterator[FakeOwner]:
    name = "f" + secrets.token_hex(4)
    router = PostgresSessionRouter(dsn, channel=channel)
    keys = StateSealer(KeyRing.from_secrets(routing_server.KEYS), audience="fake owner")
    owner = FakeOwner(name, router, LetterSealer(keys, name), asyncio.Queue())

    def deliver(sealed: bytes) -> None:
        letter = owner.letters.open(sealed)
        if letter is not None:
            owner.inbox.put_nowait(letter)

    mailbox = await router.open_mailbox(name, deliver=deliver, lost=lambda: None)
    try:
        yield owner
    finally:
        await mailbox.close()
        await router.close()


async def test_a_relayed_request_runs_only_while_its_asker_still_waits(
    dsn: str, channel: str, pair: tuple[Instance, Instance], http: httpx.AsyncClient
) -> None:
    """B relays to an owner the test plays. An acknowledgement that comes after ``owner_timeout``
    gets no go (B has answered 404: the request must never run); one in time gets go, and an owner
    that falls silent after it gets 503, not 404: the request may have taken effect."""
    _, b = pair
    async with fake_owner(dsn, channel) as owner:
        session = Session(http, b.url, "alice")
        session.id = f"{owner.name}.s1"
        late = asyncio.ensure_future(session.post(session.request("tools/list"), expect=404))
        opened = await owner.next("open")
        assert opened is not None
        assert "initialize again" in (await late).json()["error"]["message"]
        await owner.answer(opened, "ack")
        assert await owner.next("go", within=3 * KEEPALIVE) is None, "B let a request it gave up on run"

        started = time.monotonic()
        silent = asyncio.ensure_future(session.post(session.request("tools/list"), expect=503))
        opened = await owner.next("open")
        assert opened is not None
        await owner.answer(opened, "ack")
        go = await owner.next("go")
        assert go is not None
        assert go.relay == opened.relay
        message = (await silent).json()["error"]["message"]
        assert "may have taken effect" in message, message
        assert time.monotonic() - started < OWNER_TIMEOUT + 3 * KEEPALIVE + SLACK


async def test_the_relaying_instance_killed_mid_call(
    dsn: str, channel: str, tmp_path: Path, http: httpx.AsyncClient
) -> None:
    """B dies (SIGKILL) while it relays A's streams: A lets go of them within three keepalives
    (the session may open a GET stream again), and the call, still running on A, is resumed
    there with ``Last-Event-ID``."""
    with running_pair(dsn, channel, tmp_path) as (a, b):
        session, on_b = await open_across(http, a, b)
        call = on_b.request("tools/call", {"name": "greet", "arguments": {}})
        async with on_b.listen() as listening:
            assert listening.status_code == 200
            async with until_first_question(on_b, call) as (first_id, first):
                b.process.kill()
                b.process.wait()
                killed = time.monotonic()
        # A gives the GET stream up once B has been silent long enough.
        await until_get_stream_opens(session, killed + 3 * KEEPALIVE + SLACK, "A never let go of B's relay")
        await session.post(answer(first, {"name": "Grace"}), expect=202)
        _, final = await answer_questions(session, call, by_name, resume_from=first_id)
        assert final is not None
        assert final["result"]["content"][0]["text"] == "Hello, Grace Hopper!"


async def test_a_lost_listening_connection_ends_the_relays_and_comes_back(
    dsn: str, channel: str, pair: tuple[Instance, Instance], http: httpx.AsyncClient
) -> None:
    """PostgreSQL terminates B's listening connection while B relays a call's stream: letters may
    have been lost, so the stream ends (the client resumes); B listens again, and relays on."""
    import psycopg

    a, b = pair
    _, on_b = await open_across(http, a, b)
    label = secrets.token_hex(4)
    call = on_b.request("tools/call", {"name": "slow", "arguments": {"label": label}})
    async with on_b.stream(call) as response:
        stream = events(response)
        await anext(stream)
        with psycopg.connect(dsn, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query = %s",
                (f'LISTEN "{channel}_{b.name}"',),
            ).fetchone()
        assert killed == (1,)
        ended = await asyncio.wait_for(_rest(stream), 3 * KEEPALIVE + SLACK)
    assert not [d for d in ended if d]
    deadline = time.monotonic() + 10
    while True:  # B listens again within a few seconds
        reply = await http.post(b.url, json=on_b.request("tools/list"), headers=on_b.headers())
        if reply.status_code == 200:
            break
        assert reply.status_code in (404, 503), reply.text
        assert time.monotonic() < deadline, "B never relayed again"
        await asyncio.sleep(0.2)
    # The call itself went on on A (a dropped connection is not a cancellation): resume it.
    assert not (a.markers / f"cancelled-{label}").exists()
    await on_b.post(cancel(call), expect=202)
    assert await wait_for_text(a.markers / f"cancelled-{label}", "cancelled", within=10) == "cancelled"


async def _rest(stream: AsyncIterator[tuple[str | None, str]]) -> list[str]:
    return [data async for _, data in stream]


async def test_relays_are_bounded(
    dsn: str, channel: str, pair: tuple[Instance, Instance], tmp_path: Path, http: httpx.AsyncClient
) -> None:
    """An instance that relays ``max_relays`` messages already answers 503 (and says why); a
    body over what a relay carries gets 413, even where the instance takes larger ones."""
    a, _ = pair
    bounds = ("--max-relays", "1", "--max-message-bytes", "40000000")
    with running_instance(dsn, channel, tmp_path / "c", *bounds) as c:
        _, on_c = await open_across(http, a, c)
        async with on_c.listen() as held:
            assert held.status_code == 200  # the one relay C may hold
            busy = await on_c.post(on_c.request("tools/list"), expect=503)
            assert "relays as many requests as it may" in busy.json()["error"]["message"]
            assert busy.headers["retry-after"] == "1"
        huge = on_c.request(
            "tools/call", {"name": "greet", "arguments": {"padding": "x" * (33 * 1024 * 1024)}}
        )
        too_big = await on_c.post(huge, expect=413)
        assert "relays bodies of at most 33554432 bytes" in too_big.json()["error"]["message"]
        deadline = time.monotonic() + 10
        while (
            await http.post(c.url, json=on_c.request("tools/list"), headers=on_c.headers())
        ).status_code != 200:
            assert time.monotonic() < deadline, "the relay was never given back"
            await asyncio.sleep(0.1)


async def test_without_its_database_an_instance_opens_no_session(
    channel: str, tmp_path: Path, http: httpx.AsyncClient
) -> None:
    """The router cannot reach PostgreSQL: no 2025-11-25 session is opened (the other instances
    could not reach it), relayed messages get 503, in bounded time; 2026-07-28 requests, which
    need no session, are served."""
    from tests.e2e.test_http import body, headers_for
    from tests.http_session_support import initialize

    dead = "host=127.0.0.1 port=1 dbname=test user=postgres connect_timeout=2"
    with running_instance(dead, channel, tmp_path / "lone", "--timeout", "2") as lone:
        headers = {"content-type": "application/json", "accept": ACCEPT, "authorization": "Bearer alice"}
        started = time.monotonic()
        refused = await http.post(lone.url, json=initialize(), headers=headers)
        assert refused.status_code == 503
        assert "the instances cannot reach each other" in refused.json()["error"]["message"]
        relayed = await http.post(
            lone.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={**headers, "mcp-session-id": "other1.abcdefghijklmnop", "mcp-protocol-version": LEGACY},
        )
        assert relayed.status_code == 503
        assert relayed.headers["retry-after"] == "1"
        assert time.monotonic() - started < 2 * (2 + SLACK)
        modern = body("tools/list")
        served = await http.post(
            lone.url, json=modern, headers={**headers_for(modern), "authorization": "Bearer alice"}
        )
        assert served.status_code == 200


async def test_both_instances_run_on_the_loop_under_test(
    pair: tuple[Instance, Instance], http: httpx.AsyncClient, server_loop: str
) -> None:
    a, b = pair
    session, on_b = await open_across(http, a, b)
    reply = await on_b.post(
        session.request("tools/call", {"name": "event_loop", "arguments": {}}), accept="application/json"
    )
    assert reply.json()["result"]["content"][0]["text"] == server_loop


# -- our own client through a round-robin proxy ----------------------------------------------------


async def _disconnected(receive: Any) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class RoundRobin:
    """A minimal HTTP reverse proxy (ASGI) that sends each request to the next backend in turn,
    as a load balancer without session affinity does; it records where each went."""

    def __init__(self, backends: list[Instance]) -> None:
        self.backends = backends
        self._turn = itertools.count()
        self.sent: list[tuple[str, str | None]] = []  # (backend's instance, Mcp-Session-Id)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        backend = self.backends[next(self._turn) % len(self.backends)]
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        skip = {b"host", b"content-length", b"connection", b"transfer-encoding"}
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"] if k not in skip]
        self.sent.append((backend.name, dict(headers).get("mcp-session-id")))
        async with httpx.AsyncClient(timeout=None) as upstream:
            forwarding = asyncio.ensure_future(
                _forward(upstream, scope["method"], backend.url, headers, body, send)
            )
            watching = asyncio.ensure_future(_disconnected(receive))
            await asyncio.wait({forwarding, watching}, return_when=asyncio.FIRST_COMPLETED)
            for task in (forwarding, watching):  # the client went away: so does the request upstream
                task.cancel()
            await asyncio.gather(forwarding, watching, return_exceptions=True)


async def _forward(
    upstream: httpx.AsyncClient, method: str, url: str, headers: list[tuple[str, str]], body: bytes, send: Any
) -> None:
    started = False
    try:
        async with upstream.stream(method, url, headers=headers, content=body) as response:
            hop_by_hop = ("content-length", "transfer-encoding", "connection")
            kept = [
                (k.encode("latin-1"), v.encode("latin-1"))
                for k, v in response.headers.items()
                if k not in hop_by_hop
            ]
            await send({"type": "http.response.start", "status": response.status_code, "headers": kept})
            started = True
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
    except httpx.HTTPError:  # the backend went away (the test is over): so does the reply
        if not started:
            await send({"type": "http.response.start", "status": 502, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def test_our_client_through_a_round_robin_balancer(pair: tuple[Instance, Instance]) -> None:
    a, b = pair
    proxy = RoundRobin([a, b])
    with InProcessServer(proxy) as served:
        grace, hopper = ({"action": "accept", "content": {"name": name}} for name in ("Grace", "Hopper"))
        answers = ScriptedAnswerer([grace, hopper, grace, hopper])  # in order: 2025 questions have no keys
        async with Client.connect(
            served.base + "/mcp",
            answerer=answers,
            protocol="2025-11-25",
            headers={"authorization": "Bearer carol"},
        ) as client:
            assert client.protocol_version == LEGACY
            for _ in range(2):
                result = await client.call_tool("greet")
                assert result.text == "Hello, Grace Hopper!"
            owner = (await client.call_tool("whoami")).text
    # Requests of the session went to both instances, so some reached the one that does not hold it.
    assert owner in (a.name, b.name)
    elsewhere = [sid for name, sid in proxy.sent if sid is not None and not sid.startswith(name + ".")]
    assert elsewhere, proxy.sent
