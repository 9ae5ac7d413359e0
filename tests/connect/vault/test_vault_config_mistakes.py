"""Configuration mistakes in a vault are refused when it is made, in words about the vault: a
path SQLite can never open (not, at the first tool call, "unavailable; retry"), and a bad
vault key (called a vault key, not a state key)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from vault_support import OWNER, new_ring

from mcp_elicit.connect.vault import VAULT_KEYS_ENV, Vault
from mcp_elicit.state import KeyRing


def test_a_missing_folder_is_refused_when_the_vault_is_made(tmp_path: Path) -> None:
    folder = tmp_path / "nonexistent" / "dir"
    path = folder / "vault.db"
    with pytest.raises(ValueError, match="no such directory") as info:
        Vault.sqlite(path, keys=new_ring())
    assert str(info.value) == f"Vault.sqlite: cannot create {str(path)!r}: no such directory {str(folder)!r}"


def test_a_file_where_the_folder_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plain-file").write_text("x")
    with pytest.raises(ValueError, match=r"cannot create .*: not a directory .*plain-file'"):
        Vault.sqlite(tmp_path / "plain-file" / "vault.db", keys=new_ring())


def test_a_directory_is_refused_rather_than_used_as_a_prefix(tmp_path: Path) -> None:
    # Accepted before, with the kit's flow store put beside it, outside it (<dir>-flows.db).
    with pytest.raises(ValueError, match="is a directory") as info:
        Vault.sqlite(tmp_path, keys=new_ring())
    assert str(info.value).startswith(f"Vault.sqlite: {str(tmp_path)!r} is a directory")
    assert repr(os.path.join(tmp_path, "vault.db")) in str(info.value)


def test_an_unwritable_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root may write anywhere (the test machine may run as root): the folder's permission is
    # what os.access reports, so that is what this test sets.
    folder = tmp_path / "read-only"
    folder.mkdir()
    real_access = os.access

    def access(path: object, mode: int, **kwargs: object) -> bool:
        if os.fspath(path) == str(folder) and mode & os.W_OK:  # type: ignore[arg-type]
            return False
        return real_access(path, mode)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)
    with pytest.raises(ValueError, match=r"cannot create .*: the directory .*read-only' is not writable"):
        Vault.sqlite(folder / "vault.db", keys=new_ring())


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to a folder without write permission")
def test_an_unwritable_folder_is_refused_for_real(tmp_path: Path) -> None:
    folder = tmp_path / "read-only"
    folder.mkdir(mode=0o500)
    try:
        with pytest.raises(ValueError, match="is not writable by this process"):
            Vault.sqlite(folder / "vault.db", keys=new_ring())
    finally:
        folder.chmod(0o700)


async def test_good_paths_still_work(tmp_path: Path) -> None:
    for path in (tmp_path / "vault.db", ":memory:"):
        async with Vault.sqlite(path, keys=new_ring()) as vault:
            await vault.put_secret(OWNER, "k", "v")
    async with Vault.sqlite(tmp_path / "vault.db", keys=new_ring()) as again:  # an existing file
        assert again.sqlite_path == str(tmp_path / "vault.db")


def test_a_bad_vault_key_in_the_environment_is_called_a_vault_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAULT_KEYS_ENV, "abc")
    with pytest.raises(ValueError, match="vault key") as info:
        Vault.sqlite(":memory:")
    message = str(info.value)
    assert message.startswith(f"{VAULT_KEYS_ENV}: vault key #0: a passphrase must be at least 32 characters")
    assert "state key" not in message


def test_a_bad_vault_key_given_in_code_is_called_a_vault_key() -> None:
    with pytest.raises(ValueError, match="vault key") as info:
        Vault.sqlite(":memory:", keys=["x" * 40])
    assert str(info.value).startswith("vault key #0: the passphrase uses fewer than")
    with pytest.raises(ValueError, match=r"^no vault keys given"):
        Vault.sqlite(":memory:", keys=[])
    with pytest.raises(TypeError, match=r"^vault key #1: a secret must be str or bytes"):
        Vault.sqlite(":memory:", keys=[KeyRing.generate_secret(), 7])  # type: ignore[list-item]
