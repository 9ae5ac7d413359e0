"""The mailboxes of :class:`PostgresSessionRouter` against a real PostgreSQL server, on asyncio's
loop and on uvloop (``tests/conftest.py``): messages of any size arrive whole and in order, a
mailbox nobody listens on swallows without an error, deployments (channels) do not hear each
other, a terminated listening connection is reported and replaced, an unreachable database fails
in bounded time, and closing never pulls a socket from under the event loop (uvloop would abort
the process)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import psycopg
import pytest
from tests.helpers import find_pg_dsn

from mcp_elicit.storage import PostgresSessionRouter, SessionRouterUnavailable
from mcp_elicit.storage.notify_frames import PIECE_BYTES


@pytest.fixture(scope="module")
def dsn() -> str:
    return find_pg_dsn("the PostgreSQL session router")


@dataclass
class Inbox:
    """What one mailbox received, and how often it was told letters may have been lost."""

    messages: list[bytes] = field(default_factory=list)
    lost: int = 0
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    def deliver(self, message: bytes) -> None:
        self.messages.append(message)
        self.arrived.set()

    def lose(self) -> None:
        self.lost += 1

    async def wait_for(self, count: int, within: float = 10.0) -> list[bytes]:
        deadline = time.monotonic() + within
        while len(self.messages) < count:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{len(self.messages)} of {count} messages arrived"
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), remaining)
        return self.messages


@pytest.fixture
async def routers(dsn: str) -> AsyncIterator[Callable[..., PostgresSessionRouter]]:
    """Routers on a channel of this test's own (tests in parallel never hear each other)."""
    made: list[PostgresSessionRouter] = []
    channel = f"mcp_elicit_test_{secrets.token_hex(6)}"

    def make(**options: object) -> PostgresSessionRouter:
        router = PostgresSessionRouter(dsn, **{"channel": channel, "timeout": 3.0, **options})  # type: ignore[arg-type]
        made.append(router)
        return router

    yield make
    for router in made:
        await router.close()


async def test_messages_arrive_whole_and_in_order(routers: Callable[..., PostgresSessionRouter]) -> None:
    router = routers()
    inbox = Inbox()
    mailbox = await router.open_mailbox("a1", deliver=inbox.deliver, lost=inbox.lose)
    try:
        sent = [b"", b"one", bytes(range(256)) * 10, b"x" * (PIECE_BYTES * 40 + 7), b"last"]
        for message in sent:
            await router.post("a1", message)
        assert await inbox.wait_for(len(sent)) == sent
        # Concurrent posts from one instance still arrive whole (each in one transaction).
        many = [secrets.token_bytes(n) for n in (10, PIECE_BYTES * 3, 1, PIECE_BYTES + 1, 0)]
        await asyncio.gather(*(router.post("a1", message) for message in many))
        received = (await inbox.wait_for(len(sent) + len(many)))[len(sent) :]
        assert sorted(received) == sorted(many)
        assert inbox.lost == 0
    finally:
        await mailbox.close()


async def test_a_message_for_a_mailbox_nobody_listens_on_is_lost_quietly(
    routers: Callable[..., PostgresSessionRouter],
) -> None:
    router = routers()
    inbox = Inbox()
    mailbox = await router.open_mailbox("here1", deliver=inbox.deliver, lost=inbox.lose)
    try:
        await router.post("nobody1", b"into the void")  # no error: that is NOTIFY
        await router.post("here1", b"for me")
        assert await inbox.wait_for(1) == [b"for me"]
    finally:
        await mailbox.close()


async def test_two_deployments_on_one_database_do_not_hear_each_other(
    dsn: str, routers: Callable[..., PostgresSessionRouter]
) -> None:
    ours, theirs = routers(), routers(channel=f"mcp_elicit_other_{secrets.token_hex(4)}")
    mine, other = Inbox(), Inbox()
    boxes = [
        await ours.open_mailbox("a1", deliver=mine.deliver, lost=mine.lose),
        await theirs.open_mailbox("a1", deliver=other.deliver, lost=other.lose),
    ]
    try:
        await theirs.post("a1", b"theirs")
        await ours.post("a1", b"ours")
        assert await mine.wait_for(1) == [b"ours"]
        assert await other.wait_for(1) == [b"theirs"]
    finally:
        for box in boxes:
            await box.close()


async def test_a_terminated_listening_connection_is_reported_and_replaced(
    dsn: str, routers: Callable[..., PostgresSessionRouter]
) -> None:
    router = routers()
    inbox = Inbox()
    mailbox = await router.open_mailbox("b2", deliver=inbox.deliver, lost=inbox.lose)
    try:
        channel = router.channel_of("b2")
        with psycopg.connect(dsn, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE pid <> pg_backend_pid() AND query = %s",
                (f'LISTEN "{channel}"',),
            ).fetchone()
        assert killed == (1,)
        deadline = time.monotonic() + 10
        while inbox.lost == 0 or not mailbox.listening:
            assert time.monotonic() < deadline, "the lost connection was not replaced"
            await asyncio.sleep(0.02)
        assert inbox.lost == 1  # what waited for letters is told they may be gone
        await router.post("b2", b"after the restart")
        assert await inbox.wait_for(1) == [b"after the restart"]
    finally:
        await mailbox.close()


async def test_an_unreachable_database_fails_in_bounded_time() -> None:
    router = PostgresSessionRouter(
        "host=127.0.0.1 port=1 dbname=test user=postgres password=hunter2 connect_timeout=2", timeout=2.0
    )
    try:
        started = time.monotonic()
        with pytest.raises(SessionRouterUnavailable) as opening:
            await router.open_mailbox("a1", deliver=lambda _: None, lost=lambda: None)
        with pytest.raises(SessionRouterUnavailable) as posting:
            await router.post("a1", b"anything")
        assert time.monotonic() - started < 10
        for raised in (opening.value, posting.value):
            assert str(raised).startswith("PostgreSQL session router")
            assert "hunter2" not in str(raised)
            assert isinstance(raised, ConnectionError)  # what the HTTP transport catches (OSError)
    finally:
        await router.close()


async def test_closing_while_waiting_for_notifications_is_safe_on_either_loop(
    routers: Callable[..., PostgresSessionRouter],
) -> None:
    """Issue 17: the listening socket is shut down, never closed, while psycopg waits on it."""
    router = routers()
    for _ in range(3):
        inbox = Inbox()
        mailbox = await router.open_mailbox("c3", deliver=inbox.deliver, lost=inbox.lose)
        await asyncio.sleep(0.05)  # the reader is inside psycopg's wait now
        started = time.monotonic()
        await mailbox.close()
        await mailbox.close()  # twice is harmless
        assert time.monotonic() - started < 2
        assert inbox.lost == 0  # a close is not a loss
        assert not mailbox.listening
    await router.post("c3", b"nobody listens any more")  # the poster is untouched by it


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"channel": "Has-Caps"}, "channel must be lower-case letters"),
        ({"channel": "1starts_with_a_digit"}, "channel must be"),
        ({"channel": "x" * 41}, "at most 40"),
        ({"owner_timeout": 0}, "owner_timeout must be a positive number"),
        ({"keepalive": float("nan")}, "keepalive must be a positive number"),
        ({"max_relays": 0}, "max_relays must be a whole number"),
        ({"timeout": -1}, "timeout must be a positive number"),
    ],
)
def test_bad_settings_are_refused_with_what_to_change(
    dsn: str, options: dict[str, object], needle: str
) -> None:
    with pytest.raises(ValueError, match=needle):
        PostgresSessionRouter(dsn, **options)  # type: ignore[arg-type]


def test_bad_mailbox_names_and_a_bad_dsn_are_refused(dsn: str) -> None:
    router = PostgresSessionRouter(dsn)
    for name in ("", "a.b", "a_b", "x" * 21, "é1"):
        with pytest.raises(ValueError, match="a mailbox name is 1 to 20 letters and digits"):
            router.channel_of(name)
    assert router.channel_of("a1") == "mcp_elicit_sessions_a1"
    assert "dbname" not in repr(router)
    with pytest.raises(ValueError, match="not a valid libpq connection string"):
        PostgresSessionRouter("host=127.0.0.1 port='unterminated")
