"""Helpers shared by the vault tests and the cross-process worker (not collected)."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.helpers import FakeClock as FakeClock

from mcp_elicit.connect.vault import Connection, RefreshResult, Vault
from mcp_elicit.state import KeyRing

OWNER = "https://issuer.example|alice"
OTHER = "https://issuer.example|bob"


def unique_prefix() -> str:
    return f"vt_{uuid.uuid4().hex[:12]}_"


def drop_pg_tables(dsn: str, prefix: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        for suffix in ("connections", "secrets", "locks"):
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(prefix + suffix)))


def new_ring(count: int = 1) -> KeyRing:
    return KeyRing.from_secrets([KeyRing.generate_secret() for _ in range(count)])


@dataclass
class VaultSpec:
    """Where a vault lives, so tests, raw SQL and worker processes can open the same one."""

    kind: str  # "sqlite" | "postgres"
    location: str  # file path or DSN
    prefix: str
    opened: list[Vault] = field(default_factory=list)

    def make(self, keys: KeyRing | Sequence[str | bytes], **kwargs: Any) -> Vault:
        if self.kind == "sqlite":
            vault = Vault.sqlite(self.location, keys=keys, table_prefix=self.prefix, **kwargs)
        else:
            vault = Vault.postgres(self.location, keys=keys, table_prefix=self.prefix, **kwargs)
        self.opened.append(vault)
        return vault

    @property
    def connections(self) -> str:
        return f'"{self.prefix}connections"'

    @property
    def secrets(self) -> str:
        return f'"{self.prefix}secrets"'

    def raw(self, query: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """Run SQL directly against the database (``?`` placeholders), as an attacker with
        database access would. Returns the rows, if any."""
        if self.kind == "sqlite":
            with sqlite3.connect(self.location, isolation_level=None) as conn:
                cursor = conn.execute(query, tuple(params))
                return [tuple(row) for row in cursor.fetchall()] if cursor.description else []
        import psycopg

        with psycopg.connect(self.location, autocommit=True) as pg:
            cur = pg.execute(query.replace("?", "%s"), tuple(params))
            rows = cur.fetchall() if cur.description else []
            return [tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in rows]


class CountingRefresher:
    """A refresher that counts its calls and returns what ``answer`` makes of the connection."""

    def __init__(
        self, answer: Callable[[Connection, int], RefreshResult] | None = None, *, delay: float = 0.05
    ) -> None:
        self.calls = 0
        self.seen: list[Connection] = []
        self._answer = answer or (
            lambda conn, n: RefreshResult.ok(f"access-{n}", refresh_token=f"refresh-{n}", expires_in=3600)
        )
        self._delay = delay

    async def __call__(self, connection: Connection) -> RefreshResult:
        self.calls += 1
        n = self.calls
        self.seen.append(connection)
        await asyncio.sleep(self._delay)
        return self._answer(connection, n)
