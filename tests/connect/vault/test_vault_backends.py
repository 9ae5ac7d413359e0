"""Backend specifics: failures are quick, typed and clear; tables, files and locks."""

from __future__ import annotations

import os
import socket
import stat
import time
from pathlib import Path

import psycopg
import pytest
from tests.store_support import until_server_hung_up
from vault_support import OWNER, VaultSpec, drop_pg_tables, new_ring, unique_prefix

from mcp_elicit.connect.vault import Vault, VaultUnavailable
from mcp_elicit.connect.vault.vault import advisory_key


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_unreachable_postgres_fails_fast_and_clearly() -> None:
    dsn = f"host=127.0.0.1 port={_closed_port()} dbname=test user=postgres password=hunter2secret"
    vault = Vault.postgres(dsn, keys=new_ring(), timeout=3)
    started = time.perf_counter()
    with pytest.raises(VaultUnavailable, match="PostgreSQL vault") as info:
        await vault.put_secret(OWNER, "k", "v")
    assert time.perf_counter() - started < 4
    assert info.value.retryable
    assert "hunter2secret" not in str(info.value)
    assert "port=" not in str(info.value)
    assert "hunter2secret" not in repr(vault)
    await vault.close()


async def test_silent_postgres_times_out_instead_of_hanging() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # handshakes complete, nobody ever answers
    try:
        port = listener.getsockname()[1]
        vault = Vault.postgres(f"host=127.0.0.1 port={port} dbname=test", keys=new_ring(), timeout=0.5)
        started = time.perf_counter()
        with pytest.raises(VaultUnavailable, match=r"no answer to query within 0\.5 s"):
            await vault.get_connection(OWNER, "github")
        assert time.perf_counter() - started < 2
        await vault.close()
    finally:
        listener.close()


async def test_postgres_comes_back_after_the_connection_is_killed(pg_dsn: str) -> None:
    prefix = unique_prefix()
    vault = Vault.postgres(pg_dsn, keys=new_ring(), table_prefix=prefix)
    try:
        await vault.put_secret(OWNER, "k", "v")
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND query LIKE %s AND pg_terminate_backend(pid)",
                (f"%{prefix}%",),
            ).fetchone()
        assert killed is not None
        assert killed[0] == 1  # the vault's idle connection
        await until_server_hung_up(vault._db._pg)  # type: ignore[attr-defined]
        assert (await vault.get_secret(OWNER, "k")).value == "v"  # type: ignore[union-attr]
    finally:
        await vault.close()
        drop_pg_tables(pg_dsn, prefix)


async def test_postgres_tables_use_the_prefix(pg_dsn: str) -> None:
    prefix = unique_prefix()
    vault = Vault.postgres(pg_dsn, keys=new_ring(), table_prefix=prefix)
    try:
        await vault.put_secret(OWNER, "k", "v")
        with psycopg.connect(pg_dsn) as conn:
            names = {
                row[0]
                for row in conn.execute(
                    "SELECT tablename FROM pg_tables WHERE tablename LIKE %s", (prefix + "%",)
                )
            }
        assert names == {prefix + "connections", prefix + "secrets"}
    finally:
        await vault.close()
        drop_pg_tables(pg_dsn, prefix)


async def test_refresh_lock_wait_is_bounded_on_postgres(pg_dsn: str) -> None:
    """Another holder of the advisory lock: a waiter gives up with VaultUnavailable, not a hang."""
    prefix = unique_prefix()
    vault = Vault.postgres(pg_dsn, keys=new_ring(), table_prefix=prefix, timeout=0.3, refresh_timeout=0.3)
    try:
        await vault.put_connection(OWNER, "github", access_token="a", expires_at=time.time() - 5)
        with psycopg.connect(pg_dsn) as holder:
            holder.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key(prefix, OWNER, "github"),))
            started = time.perf_counter()
            with pytest.raises(VaultUnavailable, match="refresh lock"):
                await vault.disconnect(OWNER, "github", _never_called)
            assert time.perf_counter() - started < 5
            holder.rollback()
        assert await vault.get_connection(OWNER, "github") is not None
    finally:
        await vault.close()
        drop_pg_tables(pg_dsn, prefix)


async def _never_called(connection: object) -> None:
    raise AssertionError("the revoker must not run without the lock")


def test_advisory_keys_are_64_bit_and_distinct() -> None:
    keys = {advisory_key(p, o, q) for p in ("a_", "b_") for o in ("x", "y") for q in ("github", "gitlab")}
    assert len(keys) == 8
    assert all(-(2**63) <= k < 2**63 for k in keys)
    assert advisory_key("a_", "x|y", "z") != advisory_key("a_", "x", "y|z")


async def test_sqlite_file_is_private_and_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "vault.db"
    vault = Vault.sqlite(path, keys=new_ring())
    try:
        await vault.put_secret(OWNER, "k", "v")
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        import sqlite3

        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        await vault.close()


def _vault_whose_folder_went_away(tmp_path: Path) -> tuple[Vault, Path]:
    """A vault made in a folder that is removed before its first use (a path that is wrong from
    the start is refused when the vault is made: test_vault_config_mistakes.py)."""
    folder = tmp_path / "gone-dir"
    folder.mkdir()
    path = folder / "vault.db"
    vault = Vault.sqlite(path, keys=new_ring())
    folder.rmdir()
    return vault, path


async def test_sqlite_in_an_unwritable_place_is_unavailable(tmp_path: Path) -> None:
    vault, _ = _vault_whose_folder_went_away(tmp_path)
    with pytest.raises(VaultUnavailable, match="SQLite vault"):
        await vault.put_secret(OWNER, "k", "v")
    await vault.close()


async def test_sqlite_failure_names_the_file(tmp_path: Path) -> None:
    # An operator reading the log must know which file (as for the other SQLite stores).
    vault, path = _vault_whose_folder_went_away(tmp_path)
    with pytest.raises(VaultUnavailable) as info:
        await vault.put_secret(OWNER, "k", "v")
    assert str(path) in str(info.value)
    await vault.close()


async def test_sqlite_memory_database() -> None:
    async with Vault.sqlite(":memory:", keys=new_ring()) as vault:
        await vault.put_secret(OWNER, "k", "v")
        assert (await vault.get_secret(OWNER, "k")).value == "v"  # type: ignore[union-attr]


async def test_sqlite_lease_wait_is_bounded(tmp_path: Path) -> None:
    path = str(tmp_path / "vault.db")
    vault = Vault.sqlite(path, keys=new_ring(), timeout=0.2, refresh_timeout=0.2)
    try:
        await vault.put_connection(OWNER, "github", access_token="a")
        spec = VaultSpec("sqlite", path, "mcp_elicit_vault_")
        spec.raw(
            'INSERT INTO "mcp_elicit_vault_locks" VALUES (?, ?, ?)',
            (f"refresh\x00{OWNER}\x00github", "another-process", time.time() + 60),
        )
        started = time.perf_counter()
        with pytest.raises(VaultUnavailable, match="refresh lock"):
            await vault.disconnect(OWNER, "github", _never_called)
        assert time.perf_counter() - started < 3
        # An expired lease (its holder crashed) is taken over.
        spec.raw('UPDATE "mcp_elicit_vault_locks" SET expires_at = ?', (time.time() - 1,))
        revoked: list[object] = []

        async def revoker(connection: object) -> None:
            revoked.append(connection)

        assert await vault.disconnect(OWNER, "github", revoker)
        assert len(revoked) == 1
        assert spec.raw('SELECT COUNT(*) FROM "mcp_elicit_vault_locks"') == [(0,)]  # released
    finally:
        await vault.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"table_prefix": "bad-prefix"}, "table_prefix"),
        ({"table_prefix": "x" * 41}, "table_prefix"),
        ({"timeout": 0}, "timeout"),
        ({"refresh_timeout": float("inf")}, "refresh_timeout"),
        ({"keys": "just-one-string"}, "sequence of secrets"),
    ],
)
def test_constructor_validation(kwargs: dict[str, object], message: str, tmp_path: Path) -> None:
    args: dict[str, object] = {"keys": new_ring()}
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=message):
        Vault.sqlite(tmp_path / "v.db", **args)  # type: ignore[arg-type]


def test_invalid_dsn_is_refused_without_echoing_it() -> None:
    with pytest.raises(ValueError, match="not a valid libpq") as info:
        Vault.postgres("host=x password=hunter2 ===", keys=new_ring())
    assert "hunter2" not in str(info.value)


async def test_repr_names_the_backend_and_key_ids(spec: VaultSpec) -> None:
    ring = new_ring()
    vault = spec.make(ring)
    text = repr(vault)
    assert spec.kind in text
    assert ring.sealing_kid in text
    if spec.kind == "postgres":
        assert "dbname" not in text
        assert "127.0.0.1" not in text
    await vault.close()


def test_sqlite_path_names_the_file_and_is_none_for_postgres(tmp_path: Path) -> None:
    ring = new_ring()
    assert Vault.sqlite(str(tmp_path / "v.db"), keys=ring).sqlite_path == str(tmp_path / "v.db")
    assert Vault.sqlite(":memory:", keys=ring).sqlite_path == ":memory:"
    assert Vault.postgres("postgresql://127.0.0.1:5432/test", keys=ring).sqlite_path is None
