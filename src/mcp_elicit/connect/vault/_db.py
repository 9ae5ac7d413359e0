"""The small database interface the vault is written against (two implementations: SQLite and
PostgreSQL). Statements come from :mod:`._sql`; rows are plain tuples."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

__all__ = ["Database", "Executor", "Row"]

Row = tuple[Any, ...]


class Executor(Protocol):
    """Runs one statement at a time. Failures raise :class:`VaultUnavailable`."""

    async def fetchone(self, query: str, params: Sequence[object]) -> Row | None: ...

    async def fetchall(self, query: str, params: Sequence[object]) -> list[Row]: ...

    async def execute(self, query: str, params: Sequence[object]) -> int:
        """Run a statement; returns the number of rows it changed."""
        ...


class Database(Executor, Protocol):
    def exclusive(
        self, owner: str, provider: str, *, wait: float, hold: float
    ) -> AbstractAsyncContextManager[Executor]:
        """Hold the per-connection refresh lock across processes; statements run through the
        executor it yields (on PostgreSQL: inside the transaction that holds the advisory lock,
        committed when the block exits normally, rolled back if it raises). ``wait`` bounds the
        wait for the lock; ``hold`` is the longest the block may keep it."""
        ...

    def describe(self) -> str:
        """A short description for ``repr()`` (never a DSN)."""
        ...

    async def close(self) -> None: ...
