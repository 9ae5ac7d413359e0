"""The flow store's SQL, written once for SQLite and PostgreSQL (the same text on both).

Two tables: the flows (``<table>``, keyed by the SHA-256 of the flow id; the id is not stored)
and ``<table>_revoked``, the pages' sign-outs, in the same file or schema. No value is ever
interpolated: every value is a bound parameter; names are checked plain identifiers
(:mod:`mcp_elicit.storage.names`).
"""

# ruff: noqa: S608 - statements are built from constants and checked names; values are parameters.
from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mcp_elicit.storage.database import Dialect, Index, in_dialect
from mcp_elicit.storage.names import Table

from .model import COLUMNS

__all__ = ["Statements"]

_OPEN: Final = "('pending', 'in_progress', 'redeeming')"


@dataclass(frozen=True, slots=True)
class Statements:
    """Every statement the flow store runs, for one dialect and one table."""

    schema: tuple[str | Index, ...]
    select: str
    insert: str
    expire_owner: str
    purge_owner: str
    begin: str
    restart: str
    claim: str
    complete: str
    fail: str
    expire_all: str
    purge_all: str
    revoke: str
    is_revoked: str
    purge_revoked: str

    @classmethod
    def build(cls, dialect: Dialect, table: str) -> Statements:
        t = Table.named(dialect, table)
        name = t.sql
        revoked = t.sibling("revoked")

        # A transition: one compare-and-set statement; exactly one concurrent caller matches.
        # "CAST(? AS TEXT) IS NULL OR owner = ?": the owner check is skipped when it is None.
        # Parameters: the assignments', updated, flow_key, the condition's, expires, owner twice.
        def transition(assignments: str, condition: str) -> str:
            return (
                f"UPDATE {name} SET {assignments}, updated = ? WHERE flow_key = ? AND {condition} "
                f"AND expires > ? AND (CAST(? AS TEXT) IS NULL OR owner = ?) RETURNING {COLUMNS}"
            )

        statements = cls(
            schema=(
                f"CREATE TABLE IF NOT EXISTS {name} ("
                "flow_key TEXT PRIMARY KEY NOT NULL, "  # SHA-256 (hex) of the flow id
                "owner TEXT NOT NULL, kind TEXT NOT NULL, provider TEXT NOT NULL, scopes TEXT NOT NULL, "
                "created DOUBLE PRECISION NOT NULL, expires DOUBLE PRECISION NOT NULL, "
                "status TEXT NOT NULL, detail TEXT, updated DOUBLE PRECISION NOT NULL, client TEXT, "
                "description TEXT, attempt INTEGER NOT NULL)",
                t.index("owner_idx", "owner, status"),
                t.index("expires_idx", "expires"),
                # One row per signed-out session (key "session:<SHA-256 of its id>": void whatever
                # its age) or per principal signed out everywhere (key "owner:<principal>":
                # sessions created up to "since" are void), kept until "until" (when every
                # session it can void has expired anyway).
                f"CREATE TABLE IF NOT EXISTS {revoked} (revoked_key TEXT PRIMARY KEY NOT NULL, "
                "since DOUBLE PRECISION NOT NULL, until DOUBLE PRECISION NOT NULL)",
            ),
            select=f"SELECT {COLUMNS} FROM {name} WHERE flow_key = ?",
            # Inserted only while the owner has fewer open flows than the cap (the last
            # parameter): in create's transaction, which one owner's creates take one at a time.
            insert=(
                f"INSERT INTO {name} (flow_key, owner, kind, provider, scopes, created, expires, "
                "status, detail, updated, client, description, attempt) "
                "SELECT ?, ?, ?, ?, ?, ?, ?, 'pending', NULL, ?, ?, ?, 0 "
                f"WHERE (SELECT COUNT(*) FROM {name} WHERE owner = ? AND status IN {_OPEN} "
                "AND expires > ?) < ?"
            ),
            # Housekeeping for one owner, in create's transaction.
            expire_owner=(
                f"UPDATE {name} SET status = 'expired', updated = ? "
                f"WHERE owner = ? AND status IN {_OPEN} AND expires <= ?"
            ),
            purge_owner=f"DELETE FROM {name} WHERE owner = ? AND expires < ?",
            # Each begin and restart is a new attempt; only the latest one can be claimed.
            begin=transition("status = 'in_progress', attempt = attempt + 1", "status = 'pending'"),
            # Continue pressed again on a connection left at the provider. Never a secret (in
            # progress only while it is being saved) nor a claimed flow (a callback is running).
            restart=transition("attempt = attempt + 1", "status = 'in_progress' AND kind = 'connect'"),
            # The OAuth callback's claim, for the attempt its browser started (the parameter):
            # one load of it redeems the code; a concurrent one, or an earlier attempt's callback,
            # matches nothing.
            claim=transition("status = 'redeeming'", "status = 'in_progress' AND attempt = ?"),
            complete=transition("status = 'completed'", "status IN ('in_progress', 'redeeming')"),
            fail=transition("status = ?, detail = ?", f"status IN {_OPEN}"),
            expire_all=(
                f"UPDATE {name} SET status = 'expired', updated = ? WHERE status IN {_OPEN} AND expires <= ?"
            ),
            purge_all=f"DELETE FROM {name} WHERE expires < ?",
            # A second sign-out of the same key keeps the later cut-off and the later end.
            revoke=(
                f"INSERT INTO {revoked} AS r (revoked_key, since, until) VALUES (?, ?, ?) "
                "ON CONFLICT (revoked_key) DO UPDATE SET "
                "since = CASE WHEN excluded.since > r.since THEN excluded.since ELSE r.since END, "
                "until = CASE WHEN excluded.until > r.until THEN excluded.until ELSE r.until END"
            ),
            is_revoked=(
                f"SELECT 1 FROM {revoked} WHERE until >= ? "
                "AND (revoked_key = ? OR (revoked_key = ? AND since >= ?)) LIMIT 1"
            ),
            purge_revoked=f"DELETE FROM {revoked} WHERE until < ?",
        )
        return in_dialect(statements, dialect)
