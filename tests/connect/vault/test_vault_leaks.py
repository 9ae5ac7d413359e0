"""No token or secret text in any log record (DEBUG and up), repr/str, exception or the raw database."""

from __future__ import annotations

import asyncio
import logging
import pickle
from pathlib import Path

import pytest
from vault_support import OTHER, OWNER, CountingRefresher, FakeClock, VaultSpec

from mcp_elicit.connect.vault import (
    Connection,
    RefreshResult,
    Secret,
    Vault,
    VaultCorrupt,
    VaultError,
)
from mcp_elicit.state import KeyRing

ACCESS = "AT-7f3a9c1e-access-plaintext"
REFRESH = "RT-52b8d0aa-refresh-plaintext"
NEW_ACCESS = "AT-new-0c4e2f-access-plaintext"
NEW_REFRESH = "RT-new-91d7b3-refresh-plaintext"
SECRET = "sk-live-3c8e1f0b-secret-plaintext"
ALL = (ACCESS, REFRESH, NEW_ACCESS, NEW_REFRESH, SECRET)


def _assert_clean(text: str, where: str) -> None:
    for value in ALL:
        assert value not in text, f"{value!r} leaked into {where}: {text!r}"


def _exception_text(exc: BaseException) -> str:
    import traceback

    return "".join(traceback.format_exception(exc)) + repr(exc) + repr(exc.args) + repr(vars(exc))


async def test_nothing_leaks_anywhere(
    vaults: VaultSpec, ring: KeyRing, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, every level
    errors: list[BaseException] = []
    vault = vaults.make(ring, clock=clock)

    stored = await vault.put_connection(
        OWNER, "github", access_token=ACCESS, refresh_token=REFRESH, expires_at=clock.now - 1
    )
    got = await vault.get_connection(OWNER, "github")
    secret = await vault.put_secret(OWNER, "api-key", SECRET)
    read_secret = await vault.get_secret(OWNER, "api-key")
    await vault.list_connections()

    # Every refresh outcome, including a refresher whose exception text holds the token.
    async def leaky(connection: Connection) -> RefreshResult:
        raise RuntimeError(f"refresh with {connection.refresh_token} / {connection.access_token} failed")

    for refresher in (
        leaky,
        CountingRefresher(lambda c, n: RefreshResult.transient("http 503")),
        CountingRefresher(lambda c, n: RefreshResult.failed("invalid_client")),
    ):
        try:
            await vault.fresh_connection(OWNER, "github", refresher)
        except VaultError as exc:
            errors.append(exc)
    refreshed = await vault.fresh_connection(
        OWNER,
        "github",
        CountingRefresher(lambda c, n: RefreshResult.ok(NEW_ACCESS, refresh_token=NEW_REFRESH, expires_in=1)),
        skew=0,
    )
    clock.advance(10)
    try:
        await vault.fresh_connection(
            OWNER, "github", CountingRefresher(lambda c, n: RefreshResult.invalid_grant())
        )
    except VaultError as exc:
        errors.append(exc)

    # Disconnect: a revoker that fails with the token in its message, then one that works.
    await vault.put_connection(OTHER, "github", access_token=ACCESS, refresh_token=REFRESH)

    async def leaky_revoker(connection: Connection) -> None:
        raise OSError(f"POST /revoke token={connection.refresh_token}")

    async def revoker(connection: Connection) -> None:
        return None

    try:
        await vault.disconnect(OTHER, "github", leaky_revoker)
    except VaultError as exc:
        errors.append(exc)
    try:  # refused overwrite of the unrevoked grant
        await vault.put_connection(OTHER, "github", access_token=NEW_ACCESS)
    except VaultError as exc:
        errors.append(exc)
    await vault.disconnect(OTHER, "github", revoker)

    # Corruption, rotation, deletion.
    await vault.put_secret(OTHER, "api-key", SECRET)
    vaults.raw(f"UPDATE {vaults.secrets} SET owner = 'mallory' WHERE owner = ?", (OTHER,))
    try:
        await vault.get_secret("mallory", "api-key")
    except VaultCorrupt as exc:
        errors.append(exc)
    await vault.rotate(ring.rotated(KeyRing.generate_secret()))
    await vault.mark_needs_reauthorization(OWNER, "github")
    await vault.delete_secret(OWNER, "api-key")
    await vault.delete_connection(OWNER, "github")
    try:
        await vault.put_connection(OWNER, "x", access_token="")
    except ValueError as exc:
        errors.append(exc)

    assert len(errors) == 8, errors
    for record in caplog.records:
        _assert_clean(record.getMessage(), f"log record {record.name}")
        if record.exc_info and record.exc_info[1] is not None:
            _assert_clean(_exception_text(record.exc_info[1]), "a logged exception")
    assert any(r.name == "mcp_elicit.connect.vault" and r.levelno == logging.DEBUG for r in caplog.records)
    for error in errors:
        _assert_clean(_exception_text(error), f"exception {type(error).__name__}")
        _assert_clean(repr(pickle.loads(pickle.dumps(error))), "a pickled exception")
    for obj in (stored, got, secret, read_secret, refreshed, vault):
        _assert_clean(repr(obj), f"repr of {type(obj).__name__}")
        _assert_clean(str(obj), f"str of {type(obj).__name__}")
        _assert_clean(f"{obj}", f"format of {type(obj).__name__}")


def test_record_reprs_show_stars() -> None:
    connection = Connection(OWNER, "github", ACCESS, refresh_token=REFRESH, scopes=("repo",))
    assert "access_token=***" in repr(connection)
    assert "refresh_token=***" in repr(connection)
    assert "refresh_token=None" in repr(Connection(OWNER, "github", ACCESS))
    assert "value=***" in str(Secret(OWNER, "api-key", SECRET))
    ok = RefreshResult.ok(NEW_ACCESS, refresh_token=NEW_REFRESH, expires_in=5)
    assert "access_token=***" in repr(ok)
    for obj in (connection, Secret(OWNER, "k", SECRET), ok):
        _assert_clean(repr(obj), "repr")
        _assert_clean(str(obj), "str")


async def test_database_holds_no_plaintext(vaults: VaultSpec, ring: KeyRing) -> None:
    vault = vaults.make(ring)
    await vault.put_connection(OWNER, "github", access_token=ACCESS, refresh_token=REFRESH, scopes=["repo"])
    await vault.put_secret(OWNER, "api-key", SECRET)
    rows = vaults.raw(f"SELECT * FROM {vaults.connections}") + vaults.raw(f"SELECT * FROM {vaults.secrets}")
    dump = repr(rows)
    for value in ALL:
        assert value not in dump
        for row in rows:
            for cell in row:
                if isinstance(cell, bytes | memoryview):
                    assert value.encode() not in bytes(cell)
    if vaults.kind == "sqlite":  # the file itself, WAL included
        await vault.close()
        import glob

        for path in glob.glob(vaults.location + "*"):
            content = await asyncio.to_thread(Path(path).read_bytes)
            for value in ALL:
                assert value.encode() not in content, path


async def test_unavailable_postgres_names_no_dsn() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dsn = f"host=127.0.0.1 port={port} dbname=test user=postgres password=hunter2-{SECRET}"
    vault = Vault.postgres(dsn, keys=[KeyRing.generate_secret()], timeout=2)
    assert "hunter2" not in repr(vault)
    with pytest.raises(VaultError) as info:
        await vault.get_secret(OWNER, "k")
    _assert_clean(_exception_text(info.value), "VaultUnavailable")
    assert "hunter2" not in _exception_text(info.value)
    assert dsn not in str(info.value)
    await vault.close()
