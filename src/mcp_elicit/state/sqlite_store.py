"""A :class:`SingleUseStore` in an SQLite file (one host; any number of processes on that file).

The table is ``used_state`` (fixed name; use another file for another store), in WAL mode, with
the inline fast path of :mod:`mcp_elicit.storage.sqlite`: a consume on a free file runs on the
event loop thread in about 10 microseconds; one that meets a locked file waits on a worker thread,
never on the loop. ``durable=True`` switches to ``synchronous=FULL`` (an fsync per consume, so a
power cut cannot forget a consumed id), and then every statement runs on the worker thread.
``":memory:"`` gives a private in-memory store (this process only), handy in tests.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from mcp_elicit.storage.sqlite import SQLiteDatabase

from ._sql import Statements
from .database_store import DatabaseSingleUseStore
from .errors import StateStoreUnavailable

__all__ = ["SQLiteSingleUseStore"]


class SQLiteSingleUseStore(DatabaseSingleUseStore):
    """Single-use token ids in an SQLite file. Safe across asyncio tasks, threads and processes.

    ``busy_timeout``: seconds to wait for another writer before giving up with
    :class:`StateStoreUnavailable`. ``purge_every``: after that many consumes, expired records are
    deleted (``0`` disables it; call :meth:`purge_expired` yourself then). ``clock`` is the time
    source for that automatic purge; it must agree with the clock of the sealer.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = "mcp-elicit-state.db",
        *,
        busy_timeout: float = 5.0,
        purge_every: int = 1000,
        durable: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        statements = Statements.build("sqlite", "used_state")
        self._file = SQLiteDatabase(
            os.fspath(path),
            statements.schema,
            label="SQLite single-use store",
            unavailable=StateStoreUnavailable,
            busy_timeout=busy_timeout,
            durable=durable,
            inline=True,
        )
        super().__init__(self._file, statements, purge_every=purge_every, clock=clock)

    @property
    def path(self) -> str:
        """The database file (or ``":memory:"``, a database in this process's memory only)."""
        return self._file.path

    def __repr__(self) -> str:
        return f"SQLiteSingleUseStore({self.path!r})"
