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

Below :mod:`mcp_elicit.state`: nothing here imports the rest of ``mcp_elicit``, and psycopg is
imported only when a PostgreSQL database is made.
"""

from __future__ import annotations

from .database import Database, Dialect, Executor, Index, Row, Schema, Step, in_dialect

__all__ = ["Database", "Dialect", "Executor", "Index", "Row", "Schema", "Step", "in_dialect"]
