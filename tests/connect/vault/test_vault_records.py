"""Round trips of connections and secrets, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import asyncio

import pytest
from vault_support import OTHER, OWNER, FakeClock, VaultSpec

from mcp_elicit.connect.vault import Connection, RevocationFailed, Secret, Vault
from mcp_elicit.state import KeyRing


async def test_connection_round_trip(vault: Vault, clock: FakeClock, ring: KeyRing) -> None:
    stored = await vault.put_connection(
        OWNER,
        "github",
        access_token="gho_access",
        refresh_token="ghr_refresh",
        expires_in=3600,
        scopes=["repo", "read:user"],
        provider_account_id="12345",
    )
    assert stored.status == "active"
    assert stored.expires_at == clock.now + 3600
    assert stored.key_id == ring.sealing_kid
    assert stored.created_at == stored.updated_at == clock.now

    got = await vault.get_connection(OWNER, "github")
    assert got == stored
    assert isinstance(got, Connection)
    assert got.access_token == "gho_access"
    assert got.refresh_token == "ghr_refresh"
    assert got.scopes == ("repo", "read:user")
    assert got.token_type == "Bearer"
    assert got.provider_account_id == "12345"
    assert got.last_refresh_at is None


async def test_absent_records_are_none(vault: Vault) -> None:
    assert await vault.get_connection(OWNER, "github") is None
    assert await vault.get_secret(OWNER, "api-key") is None
    assert not await vault.delete_connection(OWNER, "github")
    assert not await vault.delete_secret(OWNER, "api-key")
    assert not await vault.mark_needs_reauthorization(OWNER, "github")


async def test_connections_are_per_owner_and_provider(vault: Vault) -> None:
    await vault.put_connection(OWNER, "github", access_token="a-gh")
    await vault.put_connection(OWNER, "gitlab", access_token="a-gl")
    await vault.put_connection(OTHER, "github", access_token="b-gh")
    assert (await vault.get_connection(OWNER, "github")).access_token == "a-gh"  # type: ignore[union-attr]
    assert (await vault.get_connection(OWNER, "gitlab")).access_token == "a-gl"  # type: ignore[union-attr]
    assert (await vault.get_connection(OTHER, "github")).access_token == "b-gh"  # type: ignore[union-attr]
    assert await vault.get_connection(OTHER, "gitlab") is None
    listed = await vault.list_connections(OWNER)
    assert [(c.provider, c.access_token) for c in listed] == [("github", "a-gh"), ("gitlab", "a-gl")]
    assert len(await vault.list_connections()) == 3


async def test_put_replaces_with_a_new_record_id_and_keeps_created_at(vault: Vault, clock: FakeClock) -> None:
    first = await vault.put_connection(OWNER, "github", access_token="one", refresh_token="r1")
    clock.advance(100)
    second = await vault.put_connection(OWNER, "github", access_token="two")
    assert second.id != first.id
    assert second.created_at == first.created_at
    assert second.updated_at == first.updated_at + 100
    got = await vault.get_connection(OWNER, "github")
    assert got is not None
    assert (got.access_token, got.refresh_token, got.id) == ("two", None, second.id)


async def test_put_reactivates_a_connection_that_needed_reauthorization(vault: Vault) -> None:
    await vault.put_connection(OWNER, "github", access_token="old")
    assert await vault.mark_needs_reauthorization(OWNER, "github")
    assert (await vault.get_connection(OWNER, "github")).status == "needs_reauthorization"  # type: ignore[union-attr]
    await vault.put_connection(OWNER, "github", access_token="new")
    got = await vault.get_connection(OWNER, "github")
    assert got is not None
    assert got.status == "active"
    assert got.access_token == "new"


async def test_put_refuses_to_overwrite_an_unrevoked_grant(vault: Vault, vaults: VaultSpec) -> None:
    await vault.put_connection(OWNER, "github", access_token="old")
    vaults.raw(f"UPDATE {vaults.connections} SET status = 'revocation_failed'")
    with pytest.raises(RevocationFailed, match="has not been revoked yet") as info:
        await vault.put_connection(OWNER, "github", access_token="new")
    assert info.value.reason == "unrevoked-grant"
    got = await vault.get_connection(OWNER, "github")
    assert got is not None
    assert got.access_token == "old"
    assert got.status == "revocation_failed"
    await vault.put_connection(OWNER, "github", access_token="new", replace_unrevoked=True)
    got = await vault.get_connection(OWNER, "github")
    assert got is not None
    assert got.access_token == "new"
    assert got.status == "active"


async def test_delete_connection(vault: Vault) -> None:
    await vault.put_connection(OWNER, "github", access_token="x")
    assert await vault.delete_connection(OWNER, "github")
    assert await vault.get_connection(OWNER, "github") is None


async def test_secret_round_trip(vault: Vault, clock: FakeClock) -> None:
    stored = await vault.put_secret(OWNER, "openai-api-key", "sk-live-123")
    got = await vault.get_secret(OWNER, "openai-api-key")
    assert isinstance(got, Secret)
    assert got == stored
    assert got.value == "sk-live-123"
    assert await vault.get_secret(OTHER, "openai-api-key") is None
    clock.advance(5)
    replaced = await vault.put_secret(OWNER, "openai-api-key", "sk-live-456")
    assert replaced.created_at == stored.created_at
    assert replaced.id != stored.id
    assert (await vault.get_secret(OWNER, "openai-api-key")).value == "sk-live-456"  # type: ignore[union-attr]
    await vault.put_secret(OWNER, "another", "v")
    assert await vault.list_secret_names(OWNER) == ["another", "openai-api-key"]
    assert await vault.delete_secret(OWNER, "openai-api-key")
    assert await vault.get_secret(OWNER, "openai-api-key") is None


async def test_unicode_and_long_values(vault: Vault) -> None:
    token = "tök€n-" + "x" * 10_000
    owner = "https://issuer.example|ü-ß-日本"
    await vault.put_connection(owner, "provïder", access_token=token, scopes=["scöpe"])
    got = await vault.get_connection(owner, "provïder")
    assert got is not None
    assert got.access_token == token
    assert got.scopes == ("scöpe",)


async def test_explicit_expiry_and_unknown_expiry(vault: Vault) -> None:
    await vault.put_connection(OWNER, "a", access_token="x", expires_at=1234.5)
    await vault.put_connection(OWNER, "b", access_token="x")
    assert (await vault.get_connection(OWNER, "a")).expires_at == 1234.5  # type: ignore[union-attr]
    assert (await vault.get_connection(OWNER, "b")).expires_at is None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"owner": ""}, "owner must be a non-empty str"),
        ({"owner": "a\x00b"}, "NUL"),
        ({"provider": "x" * 1025}, "longer than"),
        ({"access_token": ""}, "access_token must be a non-empty str"),
        ({"refresh_token": ""}, "refresh_token must be a non-empty str"),
        ({"expires_in": float("nan")}, "expires_in must be a finite number"),
        ({"expires_in": 10, "expires_at": 10}, "not both"),
    ],
)
async def test_put_connection_validates(vault: Vault, kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"owner": OWNER, "provider": "github", "access_token": "tok"}
    args.update(kwargs)
    owner, provider = args.pop("owner"), args.pop("provider")
    with pytest.raises(ValueError, match=message):
        await vault.put_connection(owner, provider, **args)  # type: ignore[arg-type]


async def test_many_tasks_share_one_vault(vault: Vault) -> None:
    async def one(i: int) -> None:
        await vault.put_connection(OWNER, f"p{i}", access_token=f"t{i}")
        await vault.put_secret(OWNER, f"s{i}", f"v{i}")
        got = await vault.get_connection(OWNER, f"p{i}")
        assert got is not None
        assert got.access_token == f"t{i}"
        assert (await vault.get_secret(OWNER, f"s{i}")).value == f"v{i}"  # type: ignore[union-attr]

    await asyncio.gather(*(one(i) for i in range(25)))
    assert len(await vault.list_connections(OWNER)) == 25


async def test_two_vaults_share_the_tables(vaults: VaultSpec, ring: KeyRing) -> None:
    one, two = vaults.make(ring), vaults.make(ring)
    await one.put_connection(OWNER, "github", access_token="shared")
    got = await two.get_connection(OWNER, "github")
    assert got is not None
    assert got.access_token == "shared"


async def test_closed_vault_refuses(vaults: VaultSpec, ring: KeyRing) -> None:
    from mcp_elicit.connect.vault import VaultUnavailable

    vault = vaults.make(ring)
    await vault.put_secret(OWNER, "k", "v")
    await vault.close()
    with pytest.raises(VaultUnavailable, match="closed"):
        await vault.get_secret(OWNER, "k")
