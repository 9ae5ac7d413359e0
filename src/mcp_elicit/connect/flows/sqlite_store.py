"""A :class:`FlowStore` in an SQLite file (one host; any number of processes on that file).

Tables ``mcp_elicit_flows`` and ``mcp_elicit_flows_revoked`` (the pages' sign-outs): fixed names,
no SQL is built from input; use another file for another store. WAL mode; ``":memory:"`` gives a
private store for tests. Every statement runs on a worker thread, so waiting for another process's
write lock never blocks the event loop: flow traffic is a handful of statements per user
interaction, and simplicity wins over the last microsecond.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from mcp_elicit.storage.sqlite import SQLiteDatabase

from ._sql import Statements
from .errors import FlowStoreUnavailable
from .model import DEFAULT_MAX_PENDING_PER_USER, DEFAULT_RETENTION, MAX_FLOW_TTL
from .store import FlowStore

__all__ = ["SQLiteFlowStore"]


class SQLiteFlowStore(FlowStore):
    """Pending flows in an SQLite file. Safe across asyncio tasks, threads and processes.

    ``max_pending_per_user``: open flows allowed per owner (default 3). ``ttl``: default flow
    lifetime (at most, and by default, 600 s). ``retention``: seconds a record is kept after its
    expiry. ``busy_timeout``: seconds to wait for another writer. ``clock``: wall-clock seconds.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = "mcp-elicit-flows.db",
        *,
        max_pending_per_user: int = DEFAULT_MAX_PENDING_PER_USER,
        ttl: float = MAX_FLOW_TTL,
        retention: float = DEFAULT_RETENTION,
        busy_timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        statements = Statements.build("sqlite", "mcp_elicit_flows")
        self._file = SQLiteDatabase(
            os.fspath(path),
            statements.schema,
            label="SQLite flow store",
            unavailable=FlowStoreUnavailable,
            busy_timeout=busy_timeout,
        )
        super().__init__(
            self._file,
            statements,
            max_pending_per_user=max_pending_per_user,
            ttl=ttl,
            retention=retention,
            clock=clock,
        )

    @property
    def path(self) -> str:
        """The SQLite database file."""
        return self._file.path

    def __repr__(self) -> str:
        return f"SQLiteFlowStore({self.path!r})"
