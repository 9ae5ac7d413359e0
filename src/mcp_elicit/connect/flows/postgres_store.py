"""A :class:`FlowStore` in PostgreSQL (any number of processes and hosts).

The table (name configurable, ``schema.name`` allowed, plain identifiers only) and
``<table>_revoked`` for the pages' sign-outs are created on first use. Every operation (waiting
for the shared connection, connecting, the statements) runs under one deadline, ``timeout``; a
creation takes a per-owner advisory lock (see :mod:`mcp_elicit.storage.postgres`). Any failure
raises :class:`FlowStoreUnavailable`; the next call reconnects. psycopg is imported when a store is
created, not when the package is imported. A store belongs to one event loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from mcp_elicit.storage.postgres import PostgresDatabase

from ._sql import Statements
from .errors import FlowStoreUnavailable
from .model import DEFAULT_MAX_PENDING_PER_USER, DEFAULT_RETENTION, MAX_FLOW_TTL
from .store import FlowStore

__all__ = ["PostgresFlowStore"]


class PostgresFlowStore(FlowStore):
    """Pending flows in a PostgreSQL table, atomic across processes and hosts.

    ``dsn``: a libpq connection string or URI (never included in messages). ``timeout``: bound on
    every operation, in seconds. Other options as for :class:`SQLiteFlowStore`.
    """

    def __init__(
        self,
        dsn: str,
        *,
        table: str = "mcp_elicit_flows",
        max_pending_per_user: int = DEFAULT_MAX_PENDING_PER_USER,
        ttl: float = MAX_FLOW_TTL,
        retention: float = DEFAULT_RETENTION,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        statements = Statements.build("postgres", table)
        database = PostgresDatabase(
            dsn,
            statements.schema,
            label="PostgreSQL flow store",
            unavailable=FlowStoreUnavailable,
            timeout=timeout,
            where=f"table {table!r}",
            lock_scope=f"mcp-elicit-flows\x00{table}",  # one owner's creations, in this table
        )
        super().__init__(
            database,
            statements,
            max_pending_per_user=max_pending_per_user,
            ttl=ttl,
            retention=retention,
            clock=clock,
        )
        self._table = table

    @property
    def table(self) -> str:
        """The flows table's name as given (optionally schema-qualified); the pages' sign-outs are
        kept next to it, in ``<table>_revoked``."""
        return self._table

    def __repr__(self) -> str:  # never the DSN (it may hold a password)
        return f"PostgresFlowStore(table={self._table!r})"
