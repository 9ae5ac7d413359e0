"""The single-use store's SQL, written once for SQLite and PostgreSQL.

One table: ``token_id`` (primary key), ``expires_at`` (seconds since the epoch), and for
redelivery mode ``request_digest``, ``response`` and ``claimed_at`` (null for a token consumed in
strict mode, so that such a token never matches a claim). Only the table's column types and the
index's name differ between the two dialects. No value is ever interpolated: every value is a bound parameter;
names are checked plain identifiers (:mod:`mcp_elicit.storage.names`).
"""

# ruff: noqa: S608 - statements are built from constants and checked names; values are parameters.
from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mcp_elicit.storage.database import Dialect, Index, in_dialect
from mcp_elicit.storage.names import Table

__all__ = ["Statements"]

_COLUMNS: Final = {
    "sqlite": (
        "(token_id TEXT PRIMARY KEY NOT NULL, expires_at REAL NOT NULL, request_digest TEXT, "
        "response BLOB, claimed_at REAL) WITHOUT ROWID"
    ),
    "postgres": (
        "(token_id text PRIMARY KEY, expires_at double precision NOT NULL, request_digest text, "
        "response bytea, claimed_at double precision)"
    ),
}
_INDEX_SUFFIX: Final = {"sqlite": "expires_at", "postgres": "expires_at_idx"}


@dataclass(frozen=True, slots=True)
class Statements:
    """Every statement the single-use store runs, for one dialect and one table."""

    schema: tuple[str | Index, ...]
    consume: str
    claim: str
    claimed: str
    commit: str
    committed: str
    purge: str

    @classmethod
    def build(cls, dialect: Dialect, table: str) -> Statements:
        t = Table.named(dialect, table)
        name = t.sql
        statements = cls(
            schema=(
                f"CREATE TABLE IF NOT EXISTS {name} {_COLUMNS[dialect]}",
                t.index(_INDEX_SUFFIX[dialect], "expires_at"),
            ),
            # First use wins: the primary key makes exactly one insert of an id change a row.
            consume=(
                f"INSERT INTO {name} (token_id, expires_at) VALUES (?, ?) ON CONFLICT (token_id) DO NOTHING"
            ),
            claim=(
                f"INSERT INTO {name} (token_id, expires_at, request_digest, claimed_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (token_id) DO NOTHING"
            ),
            claimed=f"SELECT request_digest, response, claimed_at FROM {name} WHERE token_id = ?",
            # First commit wins; the digest never changes once written, so no transaction is needed.
            commit=(
                f"UPDATE {name} SET response = ? "
                "WHERE token_id = ? AND request_digest = ? AND response IS NULL"
            ),
            committed=f"SELECT response FROM {name} WHERE token_id = ? AND request_digest = ?",
            purge=f"DELETE FROM {name} WHERE expires_at < ?",
        )
        return in_dialect(statements, dialect)
