"""Table and index names: checked to be plain identifiers, so that they can be written into SQL."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Final

from .database import Dialect, Index

__all__ = ["Table", "sql_name", "suffixed_name", "table_parts"]

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


def suffixed_name(table: str, suffix: str) -> str:
    """``<table>_<suffix>``, kept within PostgreSQL's 63-byte limit and distinct for tables that
    share a long prefix."""
    name = f"{table}_{suffix}"
    if len(name) <= 63:
        return name
    return f"{table[:40]}_{hashlib.sha256(table.encode()).hexdigest()[:8]}_{suffix}"


def sql_name(dialect: Dialect, *parts: str) -> str:
    """The name as SQL text: ``"schema"."name"`` for PostgreSQL (also what ``to_regclass`` reads);
    as it is for SQLite, whose stores have fixed names (and keep their schema text as it always
    was). The parts are plain identifiers (:func:`table_parts`, :func:`suffixed_name`)."""
    if dialect == "sqlite":
        return ".".join(parts)
    return ".".join(f'"{part}"' for part in parts)


@dataclass(frozen=True, slots=True)
class Table:
    """A store's table in one dialect: its name as SQL text (:attr:`sql`), and the names of what
    is made next to it, in the same schema."""

    dialect: Dialect
    parts: tuple[str, ...]

    @classmethod
    def named(cls, dialect: Dialect, table: str) -> Table:
        """``table`` (``name`` or ``schema.name``), checked by :func:`table_parts`."""
        return cls(dialect, table_parts(table))

    @property
    def sql(self) -> str:
        return sql_name(self.dialect, *self.parts)

    def sibling(self, suffix: str) -> str:
        """The companion table ``<table>_<suffix>``, as SQL text."""
        return sql_name(self.dialect, *self.parts[:-1], suffixed_name(self.parts[-1], suffix))

    def index(self, suffix: str, columns: str) -> Index:
        """The index ``<table>_<suffix>`` on ``columns``."""
        name = suffixed_name(self.parts[-1], suffix)
        create = f"CREATE INDEX IF NOT EXISTS {sql_name(self.dialect, name)} ON {self.sql} ({columns})"
        return Index(sql_name(self.dialect, *self.parts[:-1], name), create)
