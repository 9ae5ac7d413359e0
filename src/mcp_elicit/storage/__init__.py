"""The storage layer under the stores that must be shared (single-use state, pending flows, vault).

Each store is one class over a :class:`Database` and keeps its SQL in one place; the database is
where SQLite and PostgreSQL differ:

* :mod:`.database`: the :class:`Database` protocol (``fetchone`` / ``fetchall`` / ``execute``,
  ``write_or_read`` for first-wins writes, ``transaction``, ``exclusive``, ``describe``,
  ``close``), the schema's :class:`Index`, and :func:`in_dialect` for the placeholders.
* :mod:`.sqlite`: :class:`~mcp_elicit.storage.sqlite.SQLiteDatabase` (a private file in WAL
  mode, worker-thread statements, an optional inline fast path, lease rows).
* :mod:`.postgres`: :class:`~mcp_elicit.storage.postgres.PostgresDatabase` (one shared
  connection, bounded operations, advisory locks), on :mod:`.pg_connection`.
* :mod:`.names`: table and index names checked and rendered for a dialect (:class:`~.names.Table`).
* :mod:`.session_router`: :class:`~mcp_elicit.storage.session_router.PostgresSessionRouter`, the
  mailboxes (``LISTEN/NOTIFY``, :mod:`.pg_listener`, :mod:`.notify_frames`) through which the
  instances of a deployment hand each other the messages of 2025-11-25 sessions.

Below :mod:`mcp_elicit.state`: nothing here imports the rest of ``mcp_elicit``, and psycopg is
imported only when a PostgreSQL database is made.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .database import Database, Dialect, Executor, Index, Row, Schema, Step, in_dialect

if TYPE_CHECKING:
    from .session_router import PostgresSessionRouter, SessionRouterUnavailable

# Loaded on first use: importing the storage layer (which mcp_elicit.state does) stays free of
# asyncio and psycopg.
_LAZY = {"PostgresSessionRouter": ".session_router", "SessionRouterUnavailable": ".session_router"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module, __name__), name)


__all__ = [
    "Database",
    "Dialect",
    "Executor",
    "Index",
    "PostgresSessionRouter",
    "Row",
    "Schema",
    "SessionRouterUnavailable",
    "Step",
    "in_dialect",
]
