"""A :class:`SingleUseStore` in PostgreSQL (any number of processes and hosts).

The table (name configurable, ``schema.name`` allowed, plain identifiers only) is created on first
use; every operation, including the wait for the shared connection and a reconnect, is bounded by
``timeout`` (see :mod:`mcp_elicit.storage.postgres`). A consume whose outcome is unknown raises
:class:`StateStoreUnavailable` and is never retried here: the engine must fail closed. psycopg is
imported when a store is created, not when :mod:`mcp_elicit.state` is imported. A store belongs
to one event loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from mcp_elicit.storage.postgres import PostgresDatabase

from ._sql import Statements
from .database_store import DatabaseSingleUseStore
from .errors import StateStoreUnavailable

__all__ = ["PostgresSingleUseStore"]


class PostgresSingleUseStore(DatabaseSingleUseStore):
    """Single-use token ids in a PostgreSQL table, atomic across processes and hosts.

    ``dsn`` is a libpq connection string or URI (it is never included in error messages).
    ``timeout`` bounds every operation (lock wait + connect + query), in seconds.
    ``purge_every``: after that many consumes, expired rows are deleted (``0`` disables it).
    ``clock`` is the time source for that purge; it must agree with the sealer's clock.
    """

    def __init__(
        self,
        dsn: str,
        *,
        table: str = "mcp_elicit_used_state",
        timeout: float = 5.0,
        purge_every: int = 1000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        statements = Statements.build("postgres", table)
        database = PostgresDatabase(
            dsn,
            statements.schema,
            label="PostgreSQL single-use store",
            unavailable=StateStoreUnavailable,
            timeout=timeout,
            where=f"table {table!r}",
            chain=True,
        )
        super().__init__(database, statements, purge_every=purge_every, clock=clock)
        self._table = table

    @property
    def table(self) -> str:
        """The table's name as given (optionally schema-qualified)."""
        return self._table

    def __repr__(self) -> str:  # never shows the DSN (it may hold a password)
        return f"PostgresSingleUseStore(table={self._table!r})"
