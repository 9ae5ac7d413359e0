"""Key ring use, HKDF subkeys and rotation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from vault_support import OTHER, OWNER, VaultSpec, new_ring

from mcp_elicit.connect.vault import VAULT_KEK_INFO, Vault, VaultCorrupt, VaultKeys
from mcp_elicit.connect.vault.crypto import RecordContext
from mcp_elicit.state import KeyRing, RequestBinding, StateSealer, args_digest
from mcp_elicit.state.key_file import KeyFile


def test_ring_derive_keeps_kids_and_order_and_separates_labels() -> None:
    ring = new_ring(2)
    derived = ring.derive(VAULT_KEK_INFO)
    assert [kid.hex() for kid, _ in derived] == list(ring.kids)
    assert all(len(subkey) == 32 for _, subkey in derived)
    assert derived != ring.derive(b"another purpose")
    with pytest.raises(ValueError, match="non-empty bytes"):
        ring.derive(b"")


def test_vault_keys_are_hkdf_subkeys_not_the_ring_keys() -> None:
    """A ring shared with the requestState sealer never encrypts vault data with the same key."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    material = os.urandom(32)
    ring = KeyRing([material])
    kid = bytes.fromhex(ring.sealing_kid)
    keys = VaultKeys(ring)
    context = RecordContext("secret", OWNER, "k", "id")
    blob = keys.seal(context, b"payload")
    wrap_nonce, wrapped = blob[5:17], blob[17:65]
    with pytest.raises(Exception, match=r"InvalidTag|^$"):  # the raw ring key does not unwrap
        AESGCM(material).decrypt(wrap_nonce, wrapped, context.wrap_aad(kid))
    kek = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=VAULT_KEK_INFO).derive(material)
    dek = AESGCM(kek).decrypt(wrap_nonce, wrapped, context.wrap_aad(kid))
    assert len(dek) == 32
    # ... and the same ring still seals requestState as before.
    binding = RequestBinding("tools/call", "t", args_digest({}), OWNER)
    sealer = StateSealer(ring, audience="https://mcp.example/mcp")
    assert sealer.unseal(sealer.seal({"x": 1}, binding), binding).payload == {"x": 1}


def test_vault_keys_repr_shows_no_material() -> None:
    material = os.urandom(32)
    ring = KeyRing([material])
    assert repr(VaultKeys(ring)) == f"VaultKeys(kids={[ring.sealing_kid]!r})"
    assert material.hex() not in repr(VaultKeys(ring))


async def test_secrets_are_accepted_as_keys(vaults: VaultSpec) -> None:
    secret = KeyRing.generate_secret()
    vault = vaults.make([secret])
    await vault.put_secret(OWNER, "k", "v")
    assert vault.key_ids == KeyRing.from_secrets([secret]).kids
    again = vaults.make(KeyRing.from_secrets([secret]))
    assert (await again.get_secret(OWNER, "k")).value == "v"  # type: ignore[union-attr]


async def test_keys_from_the_environment(vaults: VaultSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = KeyRing.generate_secret()
    monkeypatch.delenv("MCP_ELICIT_STATE_KEYS_FILE", raising=False)
    monkeypatch.setenv("MCP_ELICIT_VAULT_KEYS", secret)
    vault = vaults.make(None)  # type: ignore[arg-type]
    assert vault.key_ids == KeyRing.from_secrets([secret]).kids
    monkeypatch.delenv("MCP_ELICIT_VAULT_KEYS")
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS", secret)
    assert vaults.make(None).key_ids == vault.key_ids  # type: ignore[arg-type]


async def test_the_state_key_file_keys_the_vault_across_a_restart(
    vaults: VaultSpec, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A deployment keyed only by MCP_ELICIT_STATE_KEYS_FILE keeps its secrets across restarts."""
    first, second = KeyRing.generate_secret(), KeyRing.generate_secret()
    key_file = tmp_path / "state-keys"
    key_file.write_text(f"# state keys\n{first}\n\n{second}\n")
    key_file.chmod(0o600)
    monkeypatch.delenv("MCP_ELICIT_VAULT_KEYS", raising=False)
    monkeypatch.delenv("MCP_ELICIT_STATE_KEYS", raising=False)
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS_FILE", str(key_file))

    before = vaults.make(None)  # type: ignore[arg-type]
    assert before.key_ids == KeyRing.from_secrets([first, second]).kids
    stored = await before.put_secret(OWNER, "api-key", "s1")
    await before.close()

    after = vaults.make(None)  # type: ignore[arg-type]  # the process restarted: a new vault
    secret = await after.get_secret(OWNER, "api-key")
    assert secret is not None
    assert (secret.value, secret.id, secret.key_id) == ("s1", stored.id, stored.key_id)
    # The vault keys are the ones the server's sealer gets from the same file.
    assert after.key_ids == KeyFile.from_env().ring.kids  # type: ignore[union-attr]


async def test_vault_keys_come_before_the_state_key_file(
    vaults: VaultSpec, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key_file = tmp_path / "state-keys"
    key_file.write_text(KeyRing.generate_secret() + "\n")
    key_file.chmod(0o600)
    vault_secret = KeyRing.generate_secret()
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS_FILE", str(key_file))
    monkeypatch.setenv("MCP_ELICIT_VAULT_KEYS", vault_secret)
    assert vaults.make(None).key_ids == KeyRing.from_secrets([vault_secret]).kids  # type: ignore[arg-type]


async def test_state_keys_and_a_state_key_file_together_are_refused(
    vaults: VaultSpec, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """As the server refuses them: the two would disagree about the keys."""
    key_file = tmp_path / "state-keys"
    key_file.write_text(KeyRing.generate_secret() + "\n")
    key_file.chmod(0o600)
    monkeypatch.delenv("MCP_ELICIT_VAULT_KEYS", raising=False)
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS_FILE", str(key_file))
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS", KeyRing.generate_secret())
    with pytest.raises(ValueError, match="keep one of the two"):
        vaults.make(None)  # type: ignore[arg-type]


async def test_a_bad_state_key_file_fails_at_start_up(
    vaults: VaultSpec, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key_file = tmp_path / "state-keys"
    key_file.write_text("# no keys yet\n")
    key_file.chmod(0o600)
    monkeypatch.delenv("MCP_ELICIT_VAULT_KEYS", raising=False)
    monkeypatch.delenv("MCP_ELICIT_STATE_KEYS", raising=False)
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS_FILE", str(key_file))
    with pytest.raises(ValueError, match="MCP_ELICIT_STATE_KEYS_FILE"):
        vaults.make(None)  # type: ignore[arg-type]
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS_FILE", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="MCP_ELICIT_STATE_KEYS_FILE: cannot read the state key file"):
        vaults.make(None)  # type: ignore[arg-type]


async def test_no_keys_means_an_ephemeral_key_and_a_warning(
    vaults: VaultSpec, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("MCP_ELICIT_VAULT_KEYS", raising=False)
    monkeypatch.delenv("MCP_ELICIT_STATE_KEYS", raising=False)
    monkeypatch.delenv("MCP_ELICIT_STATE_KEYS_FILE", raising=False)
    with caplog.at_level("WARNING", logger="mcp_elicit.connect.vault"):
        one = vaults.make(None)  # type: ignore[arg-type]
    assert "ephemeral" in caplog.text
    two = vaults.make(None)  # type: ignore[arg-type]
    assert one.key_ids != two.key_ids


async def test_rotation(vaults: VaultSpec) -> None:
    old = new_ring()
    vault = vaults.make(old)
    await vault.put_connection(OWNER, "github", access_token="gh", refresh_token="r")
    await vault.put_connection(OTHER, "gitlab", access_token="gl")
    await vault.put_secret(OWNER, "api-key", "s1")
    old_blob = vaults.raw(f"SELECT sealed FROM {vaults.connections} WHERE provider = 'github'")[0][0]
    assert await vault.key_usage() == {old.sealing_kid: 3}

    # Step 1: a ring [new, old]: old rows still open, new rows use the new kid.
    new_secret = KeyRing.generate_secret()
    both = old.rotated(new_secret)
    new_kid = both.sealing_kid
    during = vaults.make(both)
    assert (await during.get_connection(OWNER, "github")).access_token == "gh"  # type: ignore[union-attr]
    added = await during.put_secret(OTHER, "new-secret", "s2")
    assert added.key_id == new_kid
    assert await during.key_usage() == {old.sealing_kid: 3, new_kid: 1}

    # Step 2: rotate re-wraps every row under the new key (only the wrapped DEK changes).
    report = await during.rotate(both)
    assert (report.rewrapped, report.unchanged, report.failed) == (3, 1, ())
    assert await during.key_usage() == {new_kid: 4}
    new_blob = vaults.raw(f"SELECT sealed FROM {vaults.connections} WHERE provider = 'github'")[0][0]
    assert bytes(new_blob)[1:5].hex() == new_kid
    assert bytes(new_blob)[65:] == bytes(old_blob)[65:]  # the payload ciphertext is unchanged
    assert bytes(new_blob)[:65] != bytes(old_blob)[:65]
    connection = await during.get_connection(OWNER, "github")
    assert connection is not None
    assert connection.key_id == new_kid
    assert connection.refresh_token == "r"

    # Step 3: the old key can go; a vault with only the new key opens everything.
    only_new = vaults.make(both.without(old.sealing_kid))
    assert (await only_new.get_secret(OWNER, "api-key")).value == "s1"  # type: ignore[union-attr]
    assert (await only_new.get_connection(OTHER, "gitlab")).access_token == "gl"  # type: ignore[union-attr]
    # ... while the pre-rotation ciphertext no longer opens with it.
    vaults.raw(f"UPDATE {vaults.connections} SET sealed = ? WHERE provider = 'github'", (bytes(old_blob),))
    with pytest.raises(VaultCorrupt) as info:
        await only_new.get_connection(OWNER, "github")
    assert info.value.reason == "unknown-key"


async def test_rotate_may_drop_old_keys_and_switches_the_vault(vaults: VaultSpec) -> None:
    old, new = new_ring(), new_ring()
    vault = vaults.make(old)
    await vault.put_secret(OWNER, "k", "v")
    report = await vault.rotate(new)  # ``new`` does not contain the old key
    assert report.rewrapped == 1
    assert vault.key_ids == new.kids
    assert (await vaults.make(new).get_secret(OWNER, "k")).value == "v"  # type: ignore[union-attr]
    with pytest.raises(VaultCorrupt):
        await vaults.make(old).get_secret(OWNER, "k")


async def test_rotate_reports_corrupt_rows_and_carries_on(vaults: VaultSpec) -> None:
    ring = new_ring()
    vault = vaults.make(ring)
    await vault.put_secret(OWNER, "good", "v")
    bad = await vault.put_secret(OWNER, "bad", "v")
    vaults.raw(f"UPDATE {vaults.secrets} SET owner = ? WHERE name = 'bad'", (OTHER,))
    report = await vault.rotate(ring.rotated(KeyRing.generate_secret()))
    assert report.rewrapped == 1
    assert report.failed == (bad.id,)


async def test_rotation_pages_through_many_rows(vaults: VaultSpec) -> None:
    ring = new_ring()
    vault: Vault = vaults.make(ring)
    for i in range(230):
        await vault.put_secret(OWNER, f"s{i:03}", f"v{i}")
    report = await vault.rotate(ring.rotated(KeyRing.generate_secret()))
    assert report.rewrapped == 230
    assert (await vault.get_secret(OWNER, "s229")).value == "v229"  # type: ignore[union-attr]
