"""Disconnect: revoke upstream, then delete; a failed revocation is kept and flagged, never dropped."""

from __future__ import annotations

import asyncio

import pytest
from vault_support import OWNER, CountingRefresher, FakeClock, VaultSpec

from mcp_elicit.connect.vault import Connection, NotConnected, RevocationFailed, Vault, VaultCorrupt
from mcp_elicit.state import KeyRing


class Revoker:
    def __init__(self, error: BaseException | None = None, delay: float = 0.0) -> None:
        self.calls: list[Connection] = []
        self.error = error
        self.delay = delay

    async def __call__(self, connection: Connection) -> None:
        self.calls.append(connection)
        await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error


async def test_disconnect_revokes_then_deletes(vault: Vault) -> None:
    await vault.put_connection(OWNER, "github", access_token="a", refresh_token="r")
    order: list[str] = []

    async def revoker(connection: Connection) -> None:
        order.append("revoke")
        assert connection.refresh_token == "r"  # the revoker gets the decrypted grant
        # The row is still there while revoking.
        assert await vault.get_connection(OWNER, "github") is not None

    assert await vault.disconnect(OWNER, "github", revoker)
    assert order == ["revoke"]
    assert await vault.get_connection(OWNER, "github") is None
    assert not await vault.disconnect(OWNER, "github", revoker)  # nothing left: no call
    assert order == ["revoke"]


async def test_failed_revocation_keeps_and_flags_the_row(vault: Vault) -> None:
    await vault.put_connection(OWNER, "github", access_token="a", refresh_token="secret-r")
    failing = Revoker(OSError("connect to https://provider/revoke?token=secret-r refused"))
    with pytest.raises(RevocationFailed) as info:
        await vault.disconnect(OWNER, "github", failing)
    assert len(failing.calls) == 1
    assert info.value.reason == "revoker raised OSError"
    assert "secret-r" not in str(info.value)
    assert info.value.__context__ is None
    kept = await vault.get_connection(OWNER, "github")
    assert kept is not None
    assert kept.status == "revocation_failed"
    assert kept.refresh_token == "secret-r"
    # Not usable meanwhile, and mark_needs_reauthorization does not hide the flag.
    with pytest.raises(NotConnected):
        await vault.fresh_connection(OWNER, "github", CountingRefresher())
    assert not await vault.mark_needs_reauthorization(OWNER, "github")
    # Retrying later succeeds and deletes.
    working = Revoker()
    assert await vault.disconnect(OWNER, "github", working)
    assert len(working.calls) == 1
    assert working.calls[0].refresh_token == "secret-r"
    assert await vault.get_connection(OWNER, "github") is None


async def test_revoker_timeout_counts_as_failure(vaults: VaultSpec, ring: KeyRing) -> None:
    vault = vaults.make(ring, refresh_timeout=0.2)
    await vault.put_connection(OWNER, "github", access_token="a")
    with pytest.raises(RevocationFailed, match="timeout"):
        await vault.disconnect(OWNER, "github", Revoker(delay=5))
    assert (await vault.get_connection(OWNER, "github")).status == "revocation_failed"  # type: ignore[union-attr]


async def test_disconnect_waits_for_an_inflight_refresh(vault: Vault, clock: FakeClock) -> None:
    await vault.put_connection(
        OWNER, "github", access_token="a", refresh_token="r0", expires_at=clock.now - 1
    )
    refresher = CountingRefresher(delay=0.2)
    revoker = Revoker()
    refreshing = asyncio.create_task(vault.fresh_connection(OWNER, "github", refresher))
    await asyncio.sleep(0.05)
    assert await vault.disconnect(OWNER, "github", revoker)
    await refreshing
    # The revoker saw the refreshed (rotated) grant, not the one the refresh replaced.
    assert revoker.calls[0].refresh_token == "refresh-1"
    assert await vault.get_connection(OWNER, "github") is None


async def test_corrupt_record_cannot_be_disconnected_but_can_be_deleted(
    vault: Vault, vaults: VaultSpec
) -> None:
    await vault.put_connection(OWNER, "github", access_token="a")
    vaults.raw(f"UPDATE {vaults.connections} SET id = 'moved'")
    revoker = Revoker()
    with pytest.raises(VaultCorrupt):
        await vault.disconnect(OWNER, "github", revoker)
    assert revoker.calls == []
    assert vaults.raw(f"SELECT status FROM {vaults.connections}") == [("active",)]
    assert await vault.delete_connection(OWNER, "github")
