"""Small PostgreSQL helpers shared by the stores (single-use state, pending flows, vault).

No psycopg import at run time here: the stores import psycopg lazily, when one is created.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import select
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from psycopg import AsyncConnection

_IDENT_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def table_parts(table: str) -> tuple[str, ...]:
    """``name`` or ``schema.name``, each a plain identifier (so it can be quoted safely)."""
    if not isinstance(table, str):
        raise TypeError("table must be a str")
    parts = tuple(table.split("."))
    if len(parts) > 2 or not all(_IDENT_RE.fullmatch(part) for part in parts):
        raise ValueError(
            "table must be 'name' or 'schema.name', each part a plain identifier of at most 63 "
            f"characters (letters, digits, underscore): {table!r}"
        )
    return parts


def index_name(table: str, suffix: str) -> str:
    """``<table>_<suffix>``, kept within PostgreSQL's 63-byte limit and distinct for tables that
    share a long prefix."""
    name = f"{table}_{suffix}"
    if len(name) <= 63:
        return name
    return f"{table[:40]}_{hashlib.sha256(table.encode()).hexdigest()[:8]}_{suffix}"


def has_unread_data(conn: AsyncConnection[Any]) -> bool:
    """Whether an idle connection's socket is readable: the server is closing it (terminated
    backend, restart, idle timeout), so it is replaced before use instead of failing a call."""
    try:
        fd = conn.fileno()
        if hasattr(select, "poll"):
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            return bool(poller.poll(0))
        readable, _, _ = select.select([fd], [], [], 0)  # pragma: no cover - Windows
        return bool(readable)  # pragma: no cover
    except Exception:
        return True


def retrieve(task: asyncio.Task[Any]) -> None:
    """Mark an abandoned task's outcome as seen (no "exception was never retrieved" noise)."""
    if not task.cancelled():
        task.exception()
