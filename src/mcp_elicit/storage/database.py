"""The small database interface every store is written against.

A store (single-use state, pending flows, the vault) holds one :class:`Database` and its own SQL,
written once with ``?`` placeholders (:func:`in_dialect` turns them into the dialect's own); rows
are plain tuples. Two implementations: :class:`~mcp_elicit.storage.sqlite.SQLiteDatabase` and
:class:`~mcp_elicit.storage.postgres.PostgresDatabase`. Every failure of the database (down,
locked, timed out, closed) raises the store's own "unavailable" error, given when the database is
made, with a message that starts with the store's label and never contains a DSN or password.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["Database", "Dialect", "Executor", "Index", "Row", "Schema", "Step", "in_dialect"]

_D = TypeVar("_D", bound="DataclassInstance")
Row = tuple[Any, ...]
Dialect = Literal["sqlite", "postgres"]
Step = tuple[str, Sequence[object]]
"""A statement and its parameters."""


@dataclass(frozen=True, slots=True)
class Index:
    """A ``CREATE INDEX IF NOT EXISTS`` statement and the index's name as the catalog knows it
    (for PostgreSQL: quoted and schema-qualified like its table). PostgreSQL looks the name up
    before creating: ``CREATE INDEX IF NOT EXISTS`` takes a SHARE lock on the table *before* it
    looks, and the schema is run on every new connection."""

    name: str
    create: str


Schema = Sequence[str | Index]
"""What a database creates when it first connects, in order: ``CREATE TABLE IF NOT EXISTS``
statements and :class:`Index` es, each in the dialect's final shape (nothing is migrated)."""


def in_dialect(statements: _D, dialect: Dialect) -> _D:
    """``statements`` (a dataclass whose ``str`` fields are queries written with ``?``
    placeholders) with every query in ``dialect``'s placeholders (psycopg's are ``%s``). Called
    once, when a store builds its statements; the queries hold no ``?`` or ``%`` of their own."""
    if dialect == "sqlite":
        return statements
    queries = {field.name: getattr(statements, field.name) for field in dataclasses.fields(statements)}
    converted = {name: query.replace("?", "%s") for name, query in queries.items() if isinstance(query, str)}
    return dataclasses.replace(statements, **converted)


class Executor(Protocol):
    """Runs one statement at a time. ``what`` names the operation in failure messages."""

    async def fetchone(self, query: str, params: Sequence[object] = (), *, what: str = "query") -> Row | None:
        """The first row (a write with ``RETURNING`` is complete when this returns)."""
        ...

    async def fetchall(
        self, query: str, params: Sequence[object] = (), *, what: str = "query"
    ) -> list[Row]: ...

    async def execute(self, query: str, params: Sequence[object] = (), *, what: str = "write") -> int:
        """Run a statement; returns the number of rows it changed."""
        ...


class Database(Executor, Protocol):
    """A store's database: single statements (autocommit), short transactions, a long-held
    cross-process lock. It connects on first use and creates its :data:`Schema` then."""

    @property
    def dialect(self) -> Dialect: ...

    async def write_or_read(self, write: Step, read: Step, *, what: str) -> tuple[int, Row | None]:
        """Run ``write``; when it changed no row, run ``read`` too, in the same operation (one
        turn of the connection; no transaction: each statement commits by itself). Returns the
        write's row count and the row read (``None`` when the write changed rows, or when there
        is none). For a first-wins write whose loser must learn what won. On SQLite's inline
        path a busy file makes both run again on the worker thread, which gives the same answer:
        a write that changed nothing can be repeated."""
        ...

    async def transaction(
        self, steps: Sequence[Step], *, lock: str | None = None, what: str = "write"
    ) -> list[int]:
        """Run ``steps`` in one transaction; returns each statement's row count. With ``lock``,
        transactions that name the same lock run one at a time, across processes (SQLite: every
        transaction takes the file's write lock; PostgreSQL: an advisory transaction lock). Never
        run on SQLite's inline path: a long statement (a purge) belongs here too."""
        ...

    def exclusive(
        self, name: str, *, wait: float, hold: float, what: str
    ) -> AbstractAsyncContextManager[Executor]:
        """Hold the lock ``name`` across processes for the block, which may await other work (a
        token refresh over the network); its statements run through the executor it yields (on
        PostgreSQL: inside the transaction that holds an advisory lock, committed when the block
        exits normally, rolled back if it raises). ``wait`` bounds the wait for the lock, ``hold``
        is the longest the block may keep it; ``what`` (e.g. ``"the refresh lock of 'github'"``)
        names it in messages."""
        ...

    def describe(self) -> str:
        """A short description for ``repr()`` (never a DSN)."""
        ...

    async def close(self) -> None:
        """Release the connections; later calls raise the store's "unavailable" error."""
        ...
