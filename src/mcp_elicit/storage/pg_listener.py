"""``LISTEN`` on one PostgreSQL channel, on a connection of its own, for as long as it is open.

:class:`PgListener` hands every notification's payload to ``deliver`` in the order PostgreSQL
sends them. It keeps listening through failures: a connection that breaks (the server restarted,
the backend was terminated, or TCP keepalives found the network silent: :data:`KEEPALIVES`,
unless the DSN sets its own) is given up, ``lost`` is called (notifications sent meanwhile are
gone for good: the layer above fails what waited for them), and a new connection listens again,
retried with a growing pause of up to two seconds.

Nothing but ``LISTEN`` ever runs on the connection, so every notification arrives inside
psycopg's ``notifies()`` (none can be taken in by another statement and set aside). The issue-17
rule holds here too: the connection is never closed while psycopg may still wait on its socket
under the event loop's watch. :meth:`PgListener.close` shuts the socket down first, so that the
wait fails by itself inside psycopg, and closes it only once that wait has ended; a ``LISTEN``
that runs out of time is abandoned through :meth:`PgConnection.bounded`. So it runs on uvloop as
well as on asyncio's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from .pg_connection import PgConnection, shut_down

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["PgListener"]

_log = logging.getLogger("mcp_elicit.postgres")
KEEPALIVES: Final[dict[str, Any]] = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
}
"""TCP keepalives of the listening connection: a server gone silent is noticed within about 25 s."""
_FIRST_PAUSE: Final = 0.05
_LONGEST_PAUSE: Final = 2.0
_GRACE: Final = 0.5  # how long close() waits for the reader to end by itself before cancelling it


class PgListener:
    """``LISTEN channel`` over a dedicated connection of ``pg`` (see the module docstring)."""

    def __init__(
        self,
        pg: PgConnection,
        channel: str,
        *,
        deliver: Callable[[str], None],
        lost: Callable[[], None],
    ) -> None:
        from psycopg import sql

        self._pg = pg
        self.channel = channel
        self._listen = sql.SQL("LISTEN {}").format(sql.Identifier(channel))
        self._deliver = deliver
        self._lost = lost
        self._conn: AsyncConnection[Any] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._closing = False

    @property
    def listening(self) -> bool:
        """Whether a connection is listening now (False while one is being replaced)."""
        return self._conn is not None and not self._closing

    async def start(self) -> None:
        """Listen; once this returns, notifications sent to the channel reach ``deliver``. Raises
        the ``PgConnection``'s "unavailable" error when PostgreSQL cannot be reached in time."""
        if self._reader is not None:
            raise RuntimeError("this listener has started already")
        self._conn = await self._connect()
        self._reader = asyncio.ensure_future(self._run())

    async def close(self) -> None:
        """Stop listening and close the connection (never under the event loop's watch)."""
        self._closing = True
        reader = self._reader
        if self._conn is not None:
            shut_down(self._conn)  # the wait for notifications fails by itself, inside psycopg
        if reader is None:
            return
        done, _ = await asyncio.wait({reader}, timeout=_GRACE)
        if not done:  # between two steps of its own: cancelling is safe there
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader

    async def _connect(self) -> AsyncConnection[Any]:
        """A new connection that listens, within the ``PgConnection``'s timeout."""
        pg = self._pg
        used: list[AsyncConnection[Any]] = []

        async def listen() -> AsyncConnection[Any]:
            conn = await pg.connect(**KEEPALIVES)
            used.append(conn)
            await conn.execute(self._listen)
            return conn

        try:
            return await pg.bounded(
                "LISTEN", listen, used, asyncio.get_running_loop().time() + pg.timeout, pg.timeout
            )
        except BaseException:
            for conn in used:
                await pg.drop(conn)
            raise

    async def _run(self) -> None:
        pause = _FIRST_PAUSE
        while not self._closing:
            conn = self._conn
            if conn is None:
                try:
                    conn = await self._connect()
                except Exception as exc:
                    _log.warning("%s: cannot listen again yet (%s)", self._pg.label, exc)
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, _LONGEST_PAUSE)
                    continue
                if self._closing:
                    await self._pg.drop(conn)
                    return
                self._conn = conn
                pause = _FIRST_PAUSE
                _log.info("%s: listening again on %s", self._pg.label, self.channel)
            try:
                async for notification in conn.notifies():
                    try:
                        self._deliver(notification.payload)
                    except Exception:
                        _log.exception("%s: delivering a notification failed", self._pg.label)
            except Exception as exc:  # the connection broke (or close() shut it down)
                if not self._closing:
                    _log.warning("%s: the listening connection failed (%s)", self._pg.label, exc)
            finally:
                self._conn = None
                # psycopg has left the socket (its wait raised): closing is safe now.
                await self._pg.drop(conn)
            if not self._closing:
                self._lost()
