"""SQL shared by the SQLite and PostgreSQL flow stores.

Written with ``?`` placeholders and a ``{table}`` slot. SQLite fills the slot with its one fixed
table name; PostgreSQL turns ``?`` into ``%s`` and fills the slot with a quoted
``psycopg.sql.Identifier``. No value is ever interpolated: every value is a bound parameter.
"""

from __future__ import annotations

from typing import Final

CREATE_TABLE: Final = (
    "CREATE TABLE IF NOT EXISTS {table} ("
    "flow_key TEXT PRIMARY KEY NOT NULL, "  # SHA-256 (hex) of the flow id; the id is not stored
    "owner TEXT NOT NULL, kind TEXT NOT NULL, provider TEXT NOT NULL, scopes TEXT NOT NULL, "
    "created DOUBLE PRECISION NOT NULL, expires DOUBLE PRECISION NOT NULL, "
    "status TEXT NOT NULL, detail TEXT, updated DOUBLE PRECISION NOT NULL, client TEXT, description TEXT)"
)
# Columns added after the first release (both TEXT, nullable): a store adds them to an older table
# on first use. PostgreSQL says IF NOT EXISTS; SQLite has no such clause, so its store reads
# PRAGMA table_info first (and tolerates losing the race to another process).
ADDED_COLUMNS: Final = ("client", "description")
ADD_COLUMN: Final = "ALTER TABLE {table} ADD COLUMN {column} TEXT"
ADD_COLUMN_IF_NOT_EXISTS: Final = "ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} TEXT"
CREATE_OWNER_INDEX: Final = "CREATE INDEX IF NOT EXISTS {owner_index} ON {table} (owner, status)"
CREATE_EXPIRES_INDEX: Final = "CREATE INDEX IF NOT EXISTS {expires_index} ON {table} (expires)"

INSERT: Final = (
    "INSERT INTO {table} (flow_key, owner, kind, provider, scopes, created, expires, status, detail, "
    "updated, client, description) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', NULL, ?, ?, ?)"
)
SELECT: Final = (
    "SELECT owner, kind, provider, scopes, created, expires, status, detail, client, description "
    "FROM {table} WHERE flow_key = ?"
)

# Housekeeping for one owner, inside create's transaction.
EXPIRE_OWNER: Final = (
    "UPDATE {table} SET status = 'expired', updated = ? "
    "WHERE owner = ? AND status IN ('pending', 'in_progress') AND expires <= ?"
)
PURGE_OWNER: Final = "DELETE FROM {table} WHERE owner = ? AND expires < ?"
COUNT_OPEN: Final = (
    "SELECT COUNT(*) FROM {table} WHERE owner = ? AND status IN ('pending', 'in_progress') AND expires > ?"
)

# Transitions: one compare-and-set statement each; exactly one concurrent caller matches.
# "CAST(? AS TEXT) IS NULL OR owner = ?": the owner check is skipped when the owner given is None.
# Every SELECT / RETURNING lists model.COLUMNS, in that order.
BEGIN: Final = (
    "UPDATE {table} SET status = 'in_progress', updated = ? "
    "WHERE flow_key = ? AND status = 'pending' AND expires > ? AND owner = ? "
    "RETURNING owner, kind, provider, scopes, created, expires, status, detail, client, description"
)
COMPLETE: Final = (
    "UPDATE {table} SET status = 'completed', updated = ? "
    "WHERE flow_key = ? AND status = 'in_progress' AND expires > ? "
    "AND (CAST(? AS TEXT) IS NULL OR owner = ?) "
    "RETURNING owner, kind, provider, scopes, created, expires, status, detail, client, description"
)
FAIL: Final = (
    "UPDATE {table} SET status = ?, detail = ?, updated = ? "
    "WHERE flow_key = ? AND status IN ('pending', 'in_progress') AND expires > ? "
    "AND (CAST(? AS TEXT) IS NULL OR owner = ?) "
    "RETURNING owner, kind, provider, scopes, created, expires, status, detail, client, description"
)

EXPIRE_ALL: Final = (
    "UPDATE {table} SET status = 'expired', updated = ? "
    "WHERE status IN ('pending', 'in_progress') AND expires <= ?"
)
PURGE_ALL: Final = "DELETE FROM {table} WHERE expires < ?"
