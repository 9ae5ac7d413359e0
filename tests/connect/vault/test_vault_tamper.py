"""Ciphertexts moved between rows, or altered, fail loudly with VaultCorrupt (never a silent success)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vault_support import OTHER, OWNER, VaultSpec, new_ring

from mcp_elicit.connect.vault import VaultCorrupt, VaultKeys
from mcp_elicit.connect.vault.crypto import RecordContext
from mcp_elicit.connect.vault.vault import Vault
from mcp_elicit.state import KeyRing


def _sealed(spec: VaultSpec, table: str, owner: str, label_column: str, label: str) -> bytes:
    (row,) = spec.raw(f"SELECT sealed FROM {table} WHERE owner = ? AND {label_column} = ?", (owner, label))
    return bytes(row[0])


async def test_ciphertext_copied_into_another_users_row(vault: Vault, vaults: VaultSpec) -> None:
    await vault.put_connection(OWNER, "github", access_token="alice-token", refresh_token="alice-r")
    await vault.put_connection(OTHER, "github", access_token="bob-token")
    alice = _sealed(vaults, vaults.connections, OWNER, "provider", "github")
    vaults.raw(f"UPDATE {vaults.connections} SET sealed = ? WHERE owner = ?", (alice, OTHER))
    with pytest.raises(VaultCorrupt) as info:
        await vault.get_connection(OTHER, "github")
    assert info.value.reason == "decrypt-failed"
    assert info.value.kind == "connection"
    assert info.value.label == "github"
    assert "alice-token" not in str(info.value)
    # Alice's own row is untouched.
    assert (await vault.get_connection(OWNER, "github")).access_token == "alice-token"  # type: ignore[union-attr]


async def test_ciphertext_copied_into_another_provider(vault: Vault, vaults: VaultSpec) -> None:
    await vault.put_connection(OWNER, "github", access_token="gh-token")
    await vault.put_connection(OWNER, "gitlab", access_token="gl-token")
    github = _sealed(vaults, vaults.connections, OWNER, "provider", "github")
    vaults.raw(f"UPDATE {vaults.connections} SET sealed = ? WHERE provider = 'gitlab'", (github,))
    with pytest.raises(VaultCorrupt, match="authentication failed"):
        await vault.get_connection(OWNER, "gitlab")


async def test_row_relabelled_to_another_owner_or_provider(vault: Vault, vaults: VaultSpec) -> None:
    """Moving the whole row (changing owner / provider columns) is caught the same way."""
    await vault.put_connection(OWNER, "github", access_token="alice-token")
    vaults.raw(f"UPDATE {vaults.connections} SET owner = ?", (OTHER,))
    with pytest.raises(VaultCorrupt):
        await vault.get_connection(OTHER, "github")
    vaults.raw(f"UPDATE {vaults.connections} SET owner = ?, provider = 'gitlab'", (OWNER,))
    with pytest.raises(VaultCorrupt):
        await vault.get_connection(OWNER, "gitlab")


async def test_record_id_swapped(vault: Vault, vaults: VaultSpec) -> None:
    await vault.put_connection(OWNER, "github", access_token="t")
    vaults.raw(f"UPDATE {vaults.connections} SET id = 'another-record-id'")
    with pytest.raises(VaultCorrupt) as info:
        await vault.get_connection(OWNER, "github")
    assert info.value.record_id == "another-record-id"


async def test_secret_moved_between_users_and_names(vault: Vault, vaults: VaultSpec) -> None:
    await vault.put_secret(OWNER, "api-key", "alice-secret")
    await vault.put_secret(OTHER, "api-key", "bob-secret")
    await vault.put_secret(OWNER, "other-key", "alice-other")
    alice = _sealed(vaults, vaults.secrets, OWNER, "name", "api-key")
    vaults.raw(f"UPDATE {vaults.secrets} SET sealed = ? WHERE owner = ?", (alice, OTHER))
    vaults.raw(f"UPDATE {vaults.secrets} SET sealed = ? WHERE name = 'other-key'", (alice,))
    for owner, name in ((OTHER, "api-key"), (OWNER, "other-key")):
        with pytest.raises(VaultCorrupt) as info:
            await vault.get_secret(owner, name)
        assert info.value.kind == "secret"
    assert (await vault.get_secret(OWNER, "api-key")).value == "alice-secret"  # type: ignore[union-attr]


async def test_secret_ciphertext_in_a_connection_row(vault: Vault, vaults: VaultSpec) -> None:
    """Same owner, a label equal to the provider, but another kind of record: refused."""
    await vault.put_secret(OWNER, "github", "a-secret")
    await vault.put_connection(OWNER, "github", access_token="t")
    (row,) = vaults.raw(f"SELECT id, sealed FROM {vaults.secrets}")
    vaults.raw(f"UPDATE {vaults.connections} SET id = ?, sealed = ?", (row[0], bytes(row[1])))
    with pytest.raises(VaultCorrupt):
        await vault.get_connection(OWNER, "github")


async def test_wrapped_key_spliced_from_another_row(vault: Vault, vaults: VaultSpec) -> None:
    await vault.put_connection(OWNER, "github", access_token="alice-token")
    await vault.put_connection(OTHER, "github", access_token="bob-token")
    alice = _sealed(vaults, vaults.connections, OWNER, "provider", "github")
    bob = _sealed(vaults, vaults.connections, OTHER, "provider", "github")
    spliced = alice[:65] + bob[65:]  # Alice's wrapped DEK, Bob's payload
    vaults.raw(f"UPDATE {vaults.connections} SET sealed = ? WHERE owner = ?", (spliced, OTHER))
    with pytest.raises(VaultCorrupt):
        await vault.get_connection(OTHER, "github")


@pytest.mark.parametrize("position", [0, 3, 10, 40, 70, -1])
async def test_flipped_bit_anywhere_is_corrupt(vault: Vault, vaults: VaultSpec, position: int) -> None:
    await vault.put_connection(OWNER, "github", access_token="t")
    blob = bytearray(_sealed(vaults, vaults.connections, OWNER, "provider", "github"))
    blob[position] ^= 0x01
    vaults.raw(f"UPDATE {vaults.connections} SET sealed = ?", (bytes(blob),))
    with pytest.raises(VaultCorrupt):
        await vault.get_connection(OWNER, "github")


async def test_garbage_and_empty_blobs(vault: Vault, vaults: VaultSpec) -> None:
    await vault.put_connection(OWNER, "github", access_token="t")
    for garbage in (b"", b"\x01", b"\x02" + b"\x00" * 200, b"not a vault record at all" * 5):
        vaults.raw(f"UPDATE {vaults.connections} SET sealed = ?", (garbage,))
        with pytest.raises(VaultCorrupt) as info:
            await vault.get_connection(OWNER, "github")
        assert info.value.reason in {"malformed", "unknown-key"}


async def test_unknown_key_is_reported_by_kid(vaults: VaultSpec) -> None:
    old = new_ring()
    await vaults.make(old).put_secret(OWNER, "k", "v")
    other = vaults.make(new_ring())
    with pytest.raises(VaultCorrupt, match=old.sealing_kid) as info:
        await other.get_secret(OWNER, "k")
    assert info.value.reason == "unknown-key"
    assert info.value.key_id == old.sealing_kid


async def test_corrupt_status_column(vault: Vault, vaults: VaultSpec) -> None:
    await vault.put_connection(OWNER, "github", access_token="t")
    vaults.raw(f"UPDATE {vaults.connections} SET status = 'owned-by-mallory'")
    with pytest.raises(VaultCorrupt, match="malformed"):
        await vault.get_connection(OWNER, "github")


# ------------------------------------------------------------------------------ property tests

_RING: KeyRing = new_ring()
_KEYS = VaultKeys(_RING)
_CONTEXT = RecordContext("connection", OWNER, "github", "record-1")
_BLOB = _KEYS.seal(_CONTEXT, b'{"at": "token"}')

_settings = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(st.binary(max_size=300))
def test_random_bytes_only_raise_vault_corrupt(data: bytes) -> None:
    with pytest.raises(VaultCorrupt):
        _KEYS.open(_CONTEXT, data)


@_settings
@given(st.binary(min_size=1, max_size=300).map(lambda b: b"\x01" + _BLOB[1:5] + b))
def test_random_bytes_under_a_known_kid_only_raise_vault_corrupt(data: bytes) -> None:
    with pytest.raises(VaultCorrupt) as info:
        _KEYS.open(_CONTEXT, data)
    assert info.value.reason in {"malformed", "decrypt-failed"}


@_settings
@given(
    st.lists(
        st.tuples(st.integers(0, len(_BLOB) - 1), st.integers(1, 255)),
        min_size=1,
        max_size=4,
        unique_by=lambda flip: flip[0],  # two flips of one byte could cancel out
    ),
    st.integers(-8, 8),
)
def test_mutated_ciphertexts_only_raise_vault_corrupt(flips: list[tuple[int, int]], resize: int) -> None:
    blob = bytearray(_BLOB)
    for index, mask in flips:
        blob[index] ^= mask
    if resize < 0:
        del blob[resize:]
    elif resize > 0:
        blob.extend(bytes(resize))
    with pytest.raises(VaultCorrupt):
        _KEYS.open(_CONTEXT, bytes(blob))


@_settings
@given(
    st.sampled_from(["connection", "secret"]),
    st.text(max_size=20),
    st.text(max_size=20),
    st.text(max_size=20),
)
def test_any_other_context_only_raises_vault_corrupt(kind: str, owner: str, label: str, record: str) -> None:
    context = RecordContext(kind, owner, label, record)  # type: ignore[arg-type]
    if context == _CONTEXT:
        assert _KEYS.open(context, _BLOB) == b'{"at": "token"}'
        return
    with pytest.raises(VaultCorrupt):
        _KEYS.open(context, _BLOB)


def test_aad_encoding_is_unambiguous() -> None:
    """Moving characters between fields gives another associated data (length prefixes)."""
    a = RecordContext("connection", "ab", "c", "id")
    b = RecordContext("connection", "a", "bc", "id")
    assert a.data_aad() != b.data_aad()
    blob = _KEYS.seal(a, b"x")
    with pytest.raises(VaultCorrupt):
        _KEYS.open(b, blob)
