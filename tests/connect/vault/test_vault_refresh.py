"""Refresh: single-flight (in one process and across processes), outcomes, atomic persistence."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest
from vault_support import OWNER, CountingRefresher, FakeClock, VaultSpec

from mcp_elicit.connect.vault import (
    Connection,
    NeedsReauthorization,
    NotConnected,
    RefreshFailed,
    RefreshResult,
    Vault,
)
from mcp_elicit.state import KeyRing

HERE = Path(__file__).resolve().parent


async def _expired(vault: Vault, clock: FakeClock, **kwargs: object) -> Connection:
    args: dict[str, object] = {"access_token": "old-access", "refresh_token": "old-refresh"}
    args.update(kwargs)
    return await vault.put_connection(OWNER, "github", expires_at=clock.now - 1, **args)  # type: ignore[arg-type]


async def test_fresh_token_is_returned_without_refreshing(vault: Vault, clock: FakeClock) -> None:
    await vault.put_connection(OWNER, "github", access_token="a", refresh_token="r", expires_in=3600)
    refresher = CountingRefresher()
    got = await vault.fresh_connection(OWNER, "github", refresher)
    assert got.access_token == "a"
    assert refresher.calls == 0
    clock.advance(3600 - 61)  # 61 s left: outside the 60 s skew
    assert (await vault.fresh_connection(OWNER, "github", refresher)).access_token == "a"
    clock.advance(2)  # 59 s left: inside it
    assert (await vault.fresh_connection(OWNER, "github", refresher)).access_token == "access-1"
    assert refresher.calls == 1


async def test_unknown_expiry_is_never_refreshed(vault: Vault) -> None:
    await vault.put_connection(OWNER, "github", access_token="a")
    refresher = CountingRefresher()
    assert (await vault.fresh_connection(OWNER, "github", refresher)).access_token == "a"
    assert refresher.calls == 0


async def test_ten_concurrent_callers_cause_one_refresh(vault: Vault, clock: FakeClock) -> None:
    await _expired(vault, clock)
    refresher = CountingRefresher(delay=0.1)
    results = await asyncio.gather(*(vault.fresh_connection(OWNER, "github", refresher) for _ in range(10)))
    assert refresher.calls == 1
    assert {c.access_token for c in results} == {"access-1"}
    assert refresher.seen[0].refresh_token == "old-refresh"
    # Later callers see the stored result, no further refresh.
    assert (await vault.fresh_connection(OWNER, "github", refresher)).access_token == "access-1"
    assert refresher.calls == 1


async def test_two_vault_objects_in_one_process_refresh_once(
    vaults: VaultSpec, ring: KeyRing, clock: FakeClock
) -> None:
    """Two Vault objects (as two instances would have) on the same tables: the database lock
    (advisory lock / lease) plus the re-read make it one refresh."""
    one, two = vaults.make(ring, clock=clock), vaults.make(ring, clock=clock)
    await _expired(one, clock)
    refresher = CountingRefresher(delay=0.2)
    results = await asyncio.gather(
        *(v.fresh_connection(OWNER, "github", refresher) for v in (one, two) for _ in range(5))
    )
    assert refresher.calls == 1
    assert {c.access_token for c in results} == {"access-1"}


async def test_rotated_refresh_token_is_persisted_with_the_access_token(
    vaults: VaultSpec, ring: KeyRing, vault: Vault, clock: FakeClock
) -> None:
    await _expired(vault, clock, scopes=["repo"])
    refresher = CountingRefresher(
        lambda conn, n: RefreshResult.ok("new-access", refresh_token="new-refresh", expires_in=600)
    )
    got = await vault.fresh_connection(OWNER, "github", refresher)
    assert (got.access_token, got.refresh_token, got.expires_at) == (
        "new-access",
        "new-refresh",
        clock.now + 600,
    )
    assert got.last_refresh_at == clock.now
    assert got.scopes == ("repo",)
    stored = await vaults.make(ring).get_connection(OWNER, "github")  # what another instance reads
    assert stored is not None
    assert (stored.access_token, stored.refresh_token) == ("new-access", "new-refresh")
    assert stored.expires_at == clock.now + 600
    assert stored.id == got.id
    # The next refresh uses the rotated refresh token.
    clock.advance(600)
    refresher2 = CountingRefresher()
    await vault.fresh_connection(OWNER, "github", refresher2)
    assert refresher2.seen[0].refresh_token == "new-refresh"


async def test_unrotated_refresh_token_and_new_scopes(vault: Vault, clock: FakeClock) -> None:
    await _expired(vault, clock, scopes=["repo", "user"])
    refresher = CountingRefresher(lambda conn, n: RefreshResult.ok("a2", expires_in=60, scopes=["repo"]))
    got = await vault.fresh_connection(OWNER, "github", refresher, skew=0)
    assert (got.refresh_token, got.scopes) == ("old-refresh", ("repo",))


async def test_invalid_grant_marks_needs_reauthorization(vault: Vault, clock: FakeClock) -> None:
    await _expired(vault, clock)
    refresher = CountingRefresher(lambda conn, n: RefreshResult.invalid_grant("Token revoked"))
    results = await asyncio.gather(
        *(vault.fresh_connection(OWNER, "github", refresher) for _ in range(5)), return_exceptions=True
    )
    assert refresher.calls == 1
    assert all(isinstance(r, NeedsReauthorization) for r in results)
    error = results[0]
    assert isinstance(error, NeedsReauthorization)
    assert isinstance(error, NotConnected)
    assert error.provider == "github"
    assert error.owner == OWNER
    assert error.description == "Token revoked"
    stored = await vault.get_connection(OWNER, "github")
    assert stored is not None
    assert stored.status == "needs_reauthorization"
    # From now on no refresh is attempted: the next ctx.connection() starts a URL flow.
    with pytest.raises(NeedsReauthorization):
        await vault.fresh_connection(OWNER, "github", refresher)
    assert refresher.calls == 1
    # A new grant (the URL flow completed) makes it active again.
    await vault.put_connection(OWNER, "github", access_token="fresh", expires_in=3600)
    assert (await vault.fresh_connection(OWNER, "github", refresher)).access_token == "fresh"


@pytest.mark.parametrize(
    ("answer", "retryable"),
    [
        (RefreshResult.transient("http 503", retry_after=30), True),
        (RefreshResult.failed("invalid_client"), False),
    ],
)
async def test_failures_leave_the_status_alone(
    vault: Vault, clock: FakeClock, answer: RefreshResult, retryable: bool
) -> None:
    before = await _expired(vault, clock)
    refresher = CountingRefresher(lambda conn, n: answer)
    results = await asyncio.gather(
        *(vault.fresh_connection(OWNER, "github", refresher) for _ in range(10)), return_exceptions=True
    )
    assert refresher.calls == 1  # concurrent callers share the failed attempt
    assert all(isinstance(r, RefreshFailed) for r in results)
    error = results[0]
    assert isinstance(error, RefreshFailed)
    assert error.retryable is retryable
    assert error.reason == answer.reason
    assert error.retry_after == answer.retry_after
    after = await vault.get_connection(OWNER, "github")
    assert after == before  # status, tokens, revision: untouched
    # A later call tries again.
    with pytest.raises(RefreshFailed):
        await vault.fresh_connection(OWNER, "github", refresher)
    assert refresher.calls == 2


async def test_refresher_exceptions_are_transient_and_not_chained(vault: Vault, clock: FakeClock) -> None:
    await _expired(vault, clock)

    async def broken(connection: Connection) -> RefreshResult:
        raise ConnectionError(f"POST /token refresh_token={connection.refresh_token} failed")

    with pytest.raises(RefreshFailed) as info:
        await vault.fresh_connection(OWNER, "github", broken)
    assert info.value.retryable
    assert info.value.reason == "refresher raised ConnectionError"
    assert info.value.__cause__ is None
    assert info.value.__context__ is None
    assert "old-refresh" not in str(info.value)
    assert (await vault.get_connection(OWNER, "github")).status == "active"  # type: ignore[union-attr]


async def test_refresher_returning_nonsense(vault: Vault, clock: FakeClock) -> None:
    await _expired(vault, clock)

    async def wrong(connection: Connection) -> RefreshResult:
        return {"access_token": "x"}  # type: ignore[return-value]

    with pytest.raises(RefreshFailed, match="not RefreshResult") as info:
        await vault.fresh_connection(OWNER, "github", wrong)
    assert not info.value.retryable


async def test_refresher_timeout(vaults: VaultSpec, ring: KeyRing, clock: FakeClock) -> None:
    vault = vaults.make(ring, clock=clock, refresh_timeout=0.2)
    await _expired(vault, clock)
    started = time.perf_counter()
    with pytest.raises(RefreshFailed, match="timeout") as info:
        await vault.fresh_connection(OWNER, "github", CountingRefresher(delay=10))
    assert time.perf_counter() - started < 2
    assert info.value.retryable


async def test_missing_and_disconnecting_connections(vault: Vault, vaults: VaultSpec) -> None:
    refresher = CountingRefresher()
    with pytest.raises(NotConnected) as info:
        await vault.fresh_connection(OWNER, "github", refresher)
    assert info.value.status is None
    assert not isinstance(info.value, NeedsReauthorization)
    await vault.put_connection(OWNER, "github", access_token="a")
    vaults.raw(f"UPDATE {vaults.connections} SET status = 'revocation_failed'")
    with pytest.raises(NotConnected) as info:
        await vault.fresh_connection(OWNER, "github", refresher)
    assert info.value.status == "revocation_failed"
    assert refresher.calls == 0


async def test_callers_cancelled_do_not_lose_a_rotated_token(vault: Vault, clock: FakeClock) -> None:
    await _expired(vault, clock)
    refresher = CountingRefresher(delay=0.2)
    caller = asyncio.create_task(vault.fresh_connection(OWNER, "github", refresher))
    await asyncio.sleep(0.05)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    # The shielded refresh goes on without its caller: a later caller joins it (or reads what
    # it stored) instead of starting a second one with the now spent refresh token. No sleep
    # to guess how long a loaded database takes (a fixed 0.4 s failed once in CI).
    again = await vault.fresh_connection(OWNER, "github", refresher)
    assert refresher.calls == 1
    assert again.refresh_token == "refresh-1"
    stored = await vault.get_connection(OWNER, "github")
    assert stored is not None
    assert stored.refresh_token == "refresh-1"


async def test_close_waits_for_an_inflight_refresh(
    vaults: VaultSpec, ring: KeyRing, clock: FakeClock
) -> None:
    vault = vaults.make(ring, clock=clock)
    await _expired(vault, clock)
    caller = asyncio.create_task(vault.fresh_connection(OWNER, "github", CountingRefresher(delay=0.2)))
    await asyncio.sleep(0.05)
    await vault.close()
    assert (await caller).refresh_token == "refresh-1"
    stored = await vaults.make(ring).get_connection(OWNER, "github")
    assert stored is not None
    assert stored.refresh_token == "refresh-1"


async def test_two_processes_refresh_once(vaults: VaultSpec, ring: KeyRing, tmp_path: Path) -> None:
    """Two worker processes x 10 concurrent callers on an expired token: exactly one refresh."""
    secret = KeyRing.generate_secret()
    vault = vaults.make([secret])
    await vault.put_connection(
        OWNER, "github", access_token="old", refresh_token="old-refresh", expires_at=time.time() - 5
    )
    sync = tmp_path / "sync"
    sync.mkdir()
    env = {**os.environ, "MCP_ELICIT_VAULT_KEYS": secret}
    workers = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(HERE / "vault_worker.py"),
            vaults.kind,
            vaults.location,
            vaults.prefix,
            str(sync),
            name,
            "10",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        for name in ("w1", "w2")
    ]
    try:
        deadline = time.monotonic() + 20
        while not all((sync / f"ready-{n}").exists() for n in ("w1", "w2")):
            assert time.monotonic() < deadline, "workers did not get ready"
            assert all(w.returncode is None for w in workers), "a worker died while starting"
            await asyncio.sleep(0.01)
        (sync / "go").touch()
        async with asyncio.timeout(30):
            outputs = [await w.communicate() for w in workers]
    finally:
        for w in workers:
            if w.returncode is None:
                w.kill()
                await w.wait()
    for worker, (_out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err.decode()
    calls = (sync / "calls").read_text().splitlines()
    assert len(calls) == 1, calls
    winner, used_refresh = calls[0].split()
    assert used_refresh == "old-refresh"
    tokens = [t for out, _ in outputs for t in json.loads(out)["tokens"]]
    assert tokens == [f"access-{winner}"] * 20
    stored = await vault.get_connection(OWNER, "github")
    assert stored is not None
    assert stored.refresh_token == f"refresh-{winner}"
