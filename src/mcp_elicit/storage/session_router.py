"""The mailboxes through which the instances of a deployment hand each other the messages of
2025-11-25 sessions: PostgreSQL ``LISTEN/NOTIFY``, no table, no other broker.

A 2025-11-25 session lives in the memory of the instance that opened it, and its id names that
instance (``<instance>.<random>``). When a message of the session reaches another instance, the
HTTP transport (:mod:`mcp_elicit.transport.session_relay`) hands it to the owner and relays the
answer back; this module is the post it uses: each instance opens a mailbox named after itself
(``LISTEN <channel>_<instance>``, :class:`~mcp_elicit.storage.pg_listener.PgListener`), and
:meth:`PostgresSessionRouter.post` puts a message of any size in another's
(:mod:`~mcp_elicit.storage.notify_frames`: ``NOTIFY`` frames, sent in one transaction). Messages
are opaque bytes here; the transport seals them.

* A message to a mailbox nobody listens on is lost without an error (that is ``NOTIFY``): the
  transport bounds every exchange in time (``owner_timeout``, ``keepalive``).
* Messages from one instance reach a mailbox in the order they were posted, or not at all (only
  while a listening connection is being replaced: ``lost`` is called then).
* Every operation is bounded by ``timeout``; a failure raises :class:`SessionRouterUnavailable`
  (a :class:`ConnectionError`) with a message that never holds the DSN.
* psycopg is imported when a router is made; a router belongs to one event loop.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from .notify_frames import Reassembly, frames
from .pg_connection import PgConnection
from .pg_listener import PgListener

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["Mailbox", "PostgresSessionRouter", "SessionRouterUnavailable"]

_log = logging.getLogger("mcp_elicit.postgres")
_LABEL: Final = "PostgreSQL session router"
_CHANNEL: Final = re.compile(r"[a-z_][a-z0-9_]{0,39}")
_NAME: Final = re.compile(r"[A-Za-z0-9]{1,20}")
_NOTIFY: Final = "SELECT pg_notify(%s, %s)"


class SessionRouterUnavailable(ConnectionError):
    """PostgreSQL cannot be reached (or did not answer in time): no message goes between
    instances until it can."""


class Mailbox:
    """One instance's mailbox: listening while open (see :meth:`PostgresSessionRouter.open_mailbox`)."""

    def __init__(self, name: str, listener: PgListener) -> None:
        self.name = name
        self._listener = listener

    @property
    def listening(self) -> bool:
        """False while the listening connection is being replaced."""
        return self._listener.listening

    async def close(self) -> None:
        await self._listener.close()


class PostgresSessionRouter:
    """The route between instances for the messages of 2025-11-25 sessions, through PostgreSQL
    (``Server(session_router=PostgresSessionRouter(dsn))``; see the module docstring).

    ``dsn``: a libpq connection string or URI, the same database for every instance of the
    deployment. ``channel``: the prefix of the mailboxes' ``NOTIFY`` channels (lower-case letters,
    digits and ``_``, at most 40); two deployments that share a database must each have their
    own. ``timeout``: seconds any one database operation may take.

    How the HTTP transport relays with it (:mod:`mcp_elicit.transport.session_relay`):
    ``owner_timeout``: seconds the instance that holds a session has to acknowledge a message
    handed to it; without an answer the session is taken as gone (404: the client initializes
    again). ``keepalive``: seconds between the "still here" messages two instances exchange
    while they relay for each other; a relay not heard of for three of them is ended.
    ``max_relays``: messages an instance may relay at once, each way (503 beyond).
    """

    def __init__(
        self,
        dsn: str,
        *,
        channel: str = "mcp_elicit_sessions",
        timeout: float = 5.0,
        owner_timeout: float = 3.0,
        keepalive: float = 2.0,
        max_relays: int = 1000,
    ) -> None:
        if not isinstance(channel, str) or not _CHANNEL.fullmatch(channel):
            raise ValueError(
                "channel must be lower-case letters, digits and '_' (not starting with a digit), "
                f"at most 40 characters, not {channel!r}"
            )
        for name, value in (("owner_timeout", owner_timeout), ("keepalive", keepalive)):
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value <= 0
            ):
                raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
        if isinstance(max_relays, bool) or not isinstance(max_relays, int) or max_relays < 1:
            raise ValueError(f"max_relays must be a whole number of at least 1, not {max_relays!r}")
        self._dsn = dsn
        self._timeout = timeout
        self._pg = self._connection()  # checks the DSN and the timeout, imports psycopg
        self.channel = channel
        self.owner_timeout = float(owner_timeout)
        self.keepalive = float(keepalive)
        self.max_relays = max_relays

    def __repr__(self) -> str:  # never the DSN (it may hold a password)
        return f"PostgresSessionRouter(channel={self.channel!r})"

    def _connection(self) -> PgConnection:
        return PgConnection(
            self._dsn, timeout=self._timeout, label=_LABEL, unavailable=SessionRouterUnavailable
        )

    def channel_of(self, name: str) -> str:
        """The ``NOTIFY`` channel of the mailbox ``name`` (letters and digits, at most 20)."""
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ValueError(f"a mailbox name is 1 to 20 letters and digits, not {name!r}")
        return f"{self.channel}_{name}"

    async def open_mailbox(
        self, name: str, *, deliver: Callable[[bytes], None], lost: Callable[[], None]
    ) -> Mailbox:
        """Listen for the messages posted to ``name``: each goes to ``deliver`` whole, in order;
        ``lost`` is called when some may have been missed (the listening connection was
        replaced). Returns once listening; :class:`SessionRouterUnavailable` if that cannot be
        done within ``timeout``."""
        reassembly = Reassembly()

        def received(payload: str) -> None:
            message = reassembly.add(payload)
            if message is not None:
                deliver(message)

        def connection_lost() -> None:
            reassembly.clear()
            lost()

        listener = PgListener(
            self._connection(),
            self.channel_of(name),
            deliver=received,
            lost=connection_lost,
        )
        await listener.start()
        return Mailbox(name, listener)

    async def post(self, to: str, message: bytes) -> None:
        """Put ``message`` in the mailbox ``to`` (all of it or nothing; lost without an error if
        nobody listens there). :class:`SessionRouterUnavailable` when PostgreSQL cannot take it
        within ``timeout`` (then it may or may not have gone)."""
        channel = self.channel_of(to)
        payloads = frames(message)

        async def notify(conn: AsyncConnection[Any]) -> None:
            if len(payloads) == 1:
                await conn.execute(_NOTIFY, (channel, payloads[0]))
                return
            async with conn.transaction(), conn.cursor() as cursor:
                await cursor.executemany(_NOTIFY, [(channel, payload) for payload in payloads])

        await self._pg.run("NOTIFY", notify)

    async def close(self) -> None:
        """Close the connection that posts (each mailbox is closed by its own ``close``)."""
        await self._pg.close()
