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
    "WHERE owner = ? AND status IN ('pending', 'in_progress', 'redeeming') AND expires <= ?"
)
PURGE_OWNER: Final = "DELETE FROM {table} WHERE owner = ? AND expires < ?"
COUNT_OPEN: Final = (
    "SELECT COUNT(*) FROM {table} "
    "WHERE owner = ? AND status IN ('pending', 'in_progress', 'redeeming') AND expires > ?"
)

# Transitions: one compare-and-set statement each; exactly one concurrent caller matches.
# "CAST(? AS TEXT) IS NULL OR owner = ?": the owner check is skipped when the owner given is None.
# Every SELECT / RETURNING lists model.COLUMNS, in that order.
BEGIN: Final = (
    "UPDATE {table} SET status = 'in_progress', updated = ? "
    "WHERE flow_key = ? AND status = 'pending' AND expires > ? AND owner = ? "
    "RETURNING owner, kind, provider, scopes, created, expires, status, detail, client, description"
)
# The OAuth callback's claim: one load of it redeems the code, a concurrent one matches nothing.
CLAIM: Final = (
    "UPDATE {table} SET status = 'redeeming', updated = ? "
    "WHERE flow_key = ? AND status = 'in_progress' AND expires > ? AND owner = ? "
    "RETURNING owner, kind, provider, scopes, created, expires, status, detail, client, description"
)
COMPLETE: Final = (
    "UPDATE {table} SET status = 'completed', updated = ? "
    "WHERE flow_key = ? AND status IN ('in_progress', 'redeeming') AND expires > ? "
    "AND (CAST(? AS TEXT) IS NULL OR owner = ?) "
    "RETURNING owner, kind, provider, scopes, created, expires, status, detail, client, description"
)
FAIL: Final = (
    "UPDATE {table} SET status = ?, detail = ?, updated = ? "
    "WHERE flow_key = ? AND status IN ('pending', 'in_progress', 'redeeming') AND expires > ? "
    "AND (CAST(? AS TEXT) IS NULL OR owner = ?) "
    "RETURNING owner, kind, provider, scopes, created, expires, status, detail, client, description"
)

EXPIRE_ALL: Final = (
    "UPDATE {table} SET status = 'expired', updated = ? "
    "WHERE status IN ('pending', 'in_progress', 'redeeming') AND expires <= ?"
)
PURGE_ALL: Final = "DELETE FROM {table} WHERE expires < ?"

# Sign-outs the pages' sessions must honour (store.SessionRevocations). One row per signed-out
# session (key "session:<SHA-256 of its id>": void whatever its age) or per principal signed out
# everywhere (key "owner:<principal>": sessions created up to "since" are void), kept until
# "until" (when every session it can void has expired anyway). Same file or schema as the flows.
CREATE_REVOKED: Final = (
    "CREATE TABLE IF NOT EXISTS {revoked} (revoked_key TEXT PRIMARY KEY NOT NULL, "
    "since DOUBLE PRECISION NOT NULL, until DOUBLE PRECISION NOT NULL)"
)
# A second sign-out of the same key keeps the later cut-off and the later end.
REVOKE: Final = (
    "INSERT INTO {revoked} AS r (revoked_key, since, until) VALUES (?, ?, ?) "
    "ON CONFLICT (revoked_key) DO UPDATE SET "
    "since = CASE WHEN excluded.since > r.since THEN excluded.since ELSE r.since END, "
    "until = CASE WHEN excluded.until > r.until THEN excluded.until ELSE r.until END"
)
IS_REVOKED: Final = (
    "SELECT 1 FROM {revoked} WHERE until >= ? "
    "AND (revoked_key = ? OR (revoked_key = ? AND since >= ?)) LIMIT 1"
)
PURGE_REVOKED: Final = "DELETE FROM {revoked} WHERE until < ?"

# What a backend creates on first use, in order, and every statement it prepares.
SCHEMA: Final = (CREATE_TABLE, CREATE_OWNER_INDEX, CREATE_EXPIRES_INDEX, CREATE_REVOKED)
STATEMENTS: Final = (
    INSERT,
    SELECT,
    EXPIRE_OWNER,
    PURGE_OWNER,
    COUNT_OPEN,
    BEGIN,
    CLAIM,
    COMPLETE,
    FAIL,
    EXPIRE_ALL,
    PURGE_ALL,
    REVOKE,
    IS_REVOKED,
    PURGE_REVOKED,
)
