"""The vault's SQL, written once for SQLite and PostgreSQL (``?`` placeholders, turned into the
dialect's by :func:`~mcp_elicit.storage.database.in_dialect`); only the column types differ.
Table names come from a validated prefix and are double-quoted.

Tables (``P`` = the prefix):

* ``P connections``: ``id`` (random, primary key), ``owner``, ``provider`` (unique together),
  ``status``, ``expires_at`` (a clear copy for queries; the authenticated copy is in the payload),
  ``key_id`` (a clear copy of the kid in ``sealed``, for :meth:`Vault.key_usage`), ``sealed`` (the
  envelope blob), ``revision`` (bumped whenever ``sealed`` changes, so that a rotation never
  overwrites a concurrent refresh), ``created_at``, ``updated_at``, ``last_refresh_at``.
* ``P secrets``: ``id``, ``owner``, ``name`` (unique together), ``key_id``, ``sealed``, ``revision``,
  ``created_at``, ``updated_at``.
* ``P locks`` (SQLite only): refresh leases, so that single-flight holds across processes sharing
  one file (:meth:`~mcp_elicit.storage.sqlite.SQLiteDatabase.exclusive`; PostgreSQL uses advisory
  locks instead).
"""

# ruff: noqa: S608 - statements are built from constants and a prefix checked by check_prefix()
# (a plain identifier, double-quoted); every value travels as a bound parameter.
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from mcp_elicit.storage.database import Dialect, in_dialect

__all__ = ["CONNECTION_COLUMNS", "SECRET_COLUMNS", "Statements", "check_prefix", "lease_table"]

_PREFIX_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")

CONNECTION_COLUMNS: Final = (
    "id, owner, provider, status, expires_at, key_id, sealed, revision, created_at, updated_at, "
    "last_refresh_at"
)
SECRET_COLUMNS: Final = "id, owner, name, key_id, sealed, revision, created_at, updated_at"  # noqa: S105


def check_prefix(prefix: str) -> str:
    if not isinstance(prefix, str):
        raise TypeError("table_prefix must be a str")
    if not _PREFIX_RE.fullmatch(prefix):
        raise ValueError(
            "table_prefix must be a plain identifier of at most 40 characters (letters, digits, "
            f"underscore; not starting with a digit): {prefix!r}"
        )
    return prefix


def lease_table(prefix: str) -> str:
    """The SQLite vault's table of refresh leases."""
    return f'"{check_prefix(prefix)}locks"'


@dataclass(frozen=True, slots=True)
class Statements:
    """Every statement the vault runs, for one dialect and one table prefix."""

    schema: tuple[str, ...]
    tables: tuple[str, str]
    get_connection: str
    list_connections: str
    list_owner_connections: str
    upsert_connection: str
    update_tokens: str
    mark_reauth: str
    mark_reauth_by_id: str
    flag_revocation: str
    delete_connection_by_id: str
    delete_connection: str
    page_connections: str
    get_connection_by_id: str
    rewrap_connection: str
    get_secret: str
    upsert_secret: str
    delete_secret: str
    list_secret_names: str
    page_secrets: str
    get_secret_by_id: str
    rewrap_secret: str
    key_usage: str

    @classmethod
    def build(cls, dialect: Dialect, prefix: str) -> Statements:
        check_prefix(prefix)
        conns = f'"{prefix}connections"'
        secrets = f'"{prefix}secrets"'
        real = "REAL" if dialect == "sqlite" else "double precision"
        blob = "BLOB" if dialect == "sqlite" else "bytea"
        integer = "INTEGER" if dialect == "sqlite" else "bigint"
        schema = (
            f"CREATE TABLE IF NOT EXISTS {conns} (id TEXT PRIMARY KEY NOT NULL, owner TEXT NOT NULL, "
            f"provider TEXT NOT NULL, status TEXT NOT NULL, expires_at {real}, key_id TEXT NOT NULL, "
            f"sealed {blob} NOT NULL, revision {integer} NOT NULL, created_at {real} NOT NULL, "
            f"updated_at {real} NOT NULL, last_refresh_at {real}, UNIQUE (owner, provider))",
            f"CREATE TABLE IF NOT EXISTS {secrets} (id TEXT PRIMARY KEY NOT NULL, owner TEXT NOT NULL, "
            f"name TEXT NOT NULL, key_id TEXT NOT NULL, sealed {blob} NOT NULL, "
            f"revision {integer} NOT NULL, created_at {real} NOT NULL, updated_at {real} NOT NULL, "
            "UNIQUE (owner, name))",
        )

        statements = cls(
            schema=schema,
            tables=(f"{prefix}connections", f"{prefix}secrets"),
            get_connection=f"SELECT {CONNECTION_COLUMNS} FROM {conns} WHERE owner = ? AND provider = ?",
            list_connections=f"SELECT {CONNECTION_COLUMNS} FROM {conns} ORDER BY owner, provider",
            list_owner_connections=(
                f"SELECT {CONNECTION_COLUMNS} FROM {conns} WHERE owner = ? ORDER BY provider"
            ),
            # A new id on every put: the payload is sealed for that id. The WHERE refuses to
            # overwrite a row whose grant could not be revoked, unless the last parameter is true.
            upsert_connection=(
                f"INSERT INTO {conns} ({CONNECTION_COLUMNS}) VALUES (?, ?, ?, 'active', ?, ?, ?, 1, ?, ?, "
                f"NULL) ON CONFLICT (owner, provider) DO UPDATE SET id = excluded.id, status = 'active', "
                "expires_at = excluded.expires_at, key_id = excluded.key_id, sealed = excluded.sealed, "
                f"revision = {conns}.revision + 1, updated_at = excluded.updated_at, "
                f"last_refresh_at = NULL WHERE {conns}.status <> 'revocation_failed' OR ? "
                "RETURNING created_at, revision"
            ),
            update_tokens=(
                f"UPDATE {conns} SET sealed = ?, key_id = ?, expires_at = ?, revision = revision + 1, "
                "updated_at = ?, last_refresh_at = ? WHERE id = ? RETURNING revision"
            ),
            mark_reauth=(
                f"UPDATE {conns} SET status = 'needs_reauthorization', updated_at = ? "
                "WHERE owner = ? AND provider = ? AND status <> 'revocation_failed'"
            ),
            mark_reauth_by_id=(
                f"UPDATE {conns} SET status = 'needs_reauthorization', updated_at = ? "
                "WHERE id = ? AND status <> 'revocation_failed'"
            ),
            flag_revocation=(f"UPDATE {conns} SET status = 'revocation_failed', updated_at = ? WHERE id = ?"),
            delete_connection_by_id=f"DELETE FROM {conns} WHERE id = ?",
            delete_connection=f"DELETE FROM {conns} WHERE owner = ? AND provider = ?",
            page_connections=(
                f"SELECT id, owner, provider, sealed, revision FROM {conns} WHERE id > ? ORDER BY id LIMIT ?"
            ),
            get_connection_by_id=f"SELECT id, owner, provider, sealed, revision FROM {conns} WHERE id = ?",
            rewrap_connection=(
                f"UPDATE {conns} SET sealed = ?, key_id = ?, revision = revision + 1 "
                "WHERE id = ? AND revision = ?"
            ),
            get_secret=f"SELECT {SECRET_COLUMNS} FROM {secrets} WHERE owner = ? AND name = ?",
            upsert_secret=(
                f"INSERT INTO {secrets} ({SECRET_COLUMNS}) VALUES (?, ?, ?, ?, ?, 1, ?, ?) "
                "ON CONFLICT (owner, name) DO UPDATE SET id = excluded.id, key_id = excluded.key_id, "
                f"sealed = excluded.sealed, revision = {secrets}.revision + 1, "
                "updated_at = excluded.updated_at RETURNING created_at, revision"
            ),
            delete_secret=f"DELETE FROM {secrets} WHERE owner = ? AND name = ?",
            list_secret_names=f"SELECT name FROM {secrets} WHERE owner = ? ORDER BY name",
            page_secrets=(
                f"SELECT id, owner, name, sealed, revision FROM {secrets} WHERE id > ? ORDER BY id LIMIT ?"
            ),
            get_secret_by_id=f"SELECT id, owner, name, sealed, revision FROM {secrets} WHERE id = ?",
            rewrap_secret=(
                f"UPDATE {secrets} SET sealed = ?, key_id = ?, revision = revision + 1 "
                "WHERE id = ? AND revision = ?"
            ),
            key_usage=(
                f"SELECT key_id, COUNT(*) FROM (SELECT key_id FROM {conns} UNION ALL "
                f"SELECT key_id FROM {secrets}) AS k GROUP BY key_id"
            ),
        )
        return in_dialect(statements, dialect)
