"""The one AEAD sealer (mcp_elicit.state.aead): layout, associated data, key lookup by kid, and
every failure to open is the one error, OpenRefused."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mcp_elicit.state import KeyRing
from mcp_elicit.state.aead import (
    NONCE_BYTES,
    OVERHEAD,
    TAG_BYTES,
    AeadSealer,
    OpenRefused,
    Subkeys,
    decrypt,
    encrypt,
)
from mcp_elicit.state.keys import KID_BYTES

WITH_KID = AeadSealer(kid_in_associated_data=True)
WITHOUT_KID = AeadSealer(kid_in_associated_data=False)
AD = b"purpose\x00"


def _ring(count: int = 1) -> KeyRing:
    return KeyRing([os.urandom(32) for _ in range(count)])


def _refusal(sealer: AeadSealer, keys: KeyRing | Subkeys, sealed: bytes, ad: bytes = AD) -> str:
    with pytest.raises(OpenRefused) as info:
        sealer.open(keys, sealed, ad)
    return info.value.reason


def test_layout_is_kid_nonce_ciphertext_and_the_parameter_says_whether_the_kid_is_authenticated() -> None:
    ring = _ring()
    kid, cipher = ring.sealing_key()
    for sealer, expected_ad in ((WITH_KID, AD + kid), (WITHOUT_KID, AD)):
        sealed = sealer.seal(ring, b"plaintext", AD)
        assert len(sealed) == len(b"plaintext") + OVERHEAD == 9 + KID_BYTES + NONCE_BYTES + TAG_BYTES
        assert sealed[:KID_BYTES] == kid
        nonce = sealed[KID_BYTES : KID_BYTES + NONCE_BYTES]
        assert cipher.decrypt(nonce, sealed[KID_BYTES + NONCE_BYTES :], expected_ad) == b"plaintext"
        assert sealer.open(ring, sealed, AD) == b"plaintext"
    # The two are different formats: neither opens the other's values.
    assert _refusal(WITHOUT_KID, ring, WITH_KID.seal(ring, b"x", AD)) == "decrypt-failed"
    assert _refusal(WITH_KID, ring, WITHOUT_KID.seal(ring, b"x", AD)) == "decrypt-failed"


def test_every_seal_draws_a_fresh_nonce() -> None:
    ring = _ring()
    values = {WITH_KID.seal(ring, b"same", AD) for _ in range(50)}
    assert len({value[KID_BYTES : KID_BYTES + NONCE_BYTES] for value in values}) == 50


def test_the_first_key_seals_and_every_key_opens_by_its_kid() -> None:
    first, second = os.urandom(32), os.urandom(32)
    old = KeyRing([second])
    sealed_by_old = WITH_KID.seal(old, b"old", AD)
    both = KeyRing([first, second])
    assert both.sealing_key()[0] == WITH_KID.seal(both, b"new", AD)[:KID_BYTES] != sealed_by_old[:KID_BYTES]
    assert WITH_KID.open(both, sealed_by_old, AD) == b"old"
    assert _refusal(WITH_KID, KeyRing([first]), sealed_by_old) == "unknown-key"


@pytest.mark.parametrize("sealer", [WITH_KID, WITHOUT_KID])
def test_a_kid_changed_to_another_known_key_fails_authentication(sealer: AeadSealer) -> None:
    both = _ring(2)
    sealed = sealer.seal(both, b"x", AD)
    other_kid = bytes.fromhex(both.kids[1])
    assert _refusal(sealer, both, other_kid + sealed[KID_BYTES:]) == "decrypt-failed"


def test_other_associated_data_fails_authentication() -> None:
    ring = _ring()
    sealed = WITH_KID.seal(ring, b"x", AD)
    assert _refusal(WITH_KID, ring, sealed, b"another purpose\x00") == "decrypt-failed"
    assert _refusal(WITH_KID, ring, sealed, b"") == "decrypt-failed"


@pytest.mark.parametrize("sealer", [WITH_KID, WITHOUT_KID])
def test_every_bit_flip_and_every_truncation_is_refused_with_the_one_error(sealer: AeadSealer) -> None:
    ring = _ring()
    sealed = sealer.seal(ring, b"a short plaintext", AD)
    for position in range(len(sealed)):
        for bit in range(8):
            changed = bytearray(sealed)
            changed[position] ^= 1 << bit
            reason = _refusal(sealer, ring, bytes(changed))
            assert reason == ("unknown-key" if position < KID_BYTES else "decrypt-failed")
    for length in range(len(sealed)):
        reason = _refusal(sealer, ring, sealed[:length])
        assert reason == ("malformed" if length < OVERHEAD else "decrypt-failed"), length
    assert _refusal(sealer, ring, sealed + b"\x00") == "decrypt-failed"


def test_an_empty_plaintext_seals_to_exactly_the_overhead() -> None:
    ring = _ring()
    sealed = WITH_KID.seal(ring, b"", AD)
    assert len(sealed) == OVERHEAD
    assert WITH_KID.open(ring, sealed, AD) == b""


def test_subkeys_derive_from_a_ring_keep_its_kids_and_never_use_its_keys() -> None:
    ring = _ring(2)
    subkeys = Subkeys.derive(ring, b"a purpose")
    assert [kid.hex() for kid, _ in subkeys.ciphers] == list(ring.kids)
    assert subkeys.sealing_key()[0].hex() == ring.sealing_kid
    sealed = WITH_KID.seal(subkeys, b"x", AD)
    assert WITH_KID.open(subkeys, sealed, AD) == b"x"
    assert _refusal(WITH_KID, ring, sealed) == "decrypt-failed"  # same kid, not the same key
    assert _refusal(WITH_KID, Subkeys.derive(ring, b"another purpose"), sealed) == "decrypt-failed"
    assert repr(subkeys) == f"Subkeys(kids={list(ring.kids)!r})"


def test_subkeys_keep_the_first_cipher_of_a_repeated_kid_and_need_one() -> None:
    first, second = AESGCM(os.urandom(32)), AESGCM(os.urandom(32))
    keys = Subkeys([(b"kid1", first), (b"kid2", second), (b"kid1", second)])
    assert keys.sealing_key() == (b"kid1", first)
    assert keys.key_for(b"kid1") is first
    assert keys.key_for(b"kid9") is None
    assert [kid for kid, _ in keys.ciphers] == [b"kid1", b"kid2"]
    with pytest.raises(ValueError, match="at least one"):
        Subkeys([])


def test_encrypt_and_decrypt_are_the_sealer_without_the_kid() -> None:
    cipher = AESGCM(os.urandom(32))
    sealed = encrypt(cipher, b"data", AD)
    assert len(sealed) == NONCE_BYTES + 4 + TAG_BYTES
    assert cipher.decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], AD) == b"data"
    assert decrypt(cipher, sealed, AD) == b"data"
    for changed, reason in (
        (sealed[: NONCE_BYTES + TAG_BYTES - 1], "malformed"),
        (sealed[:-1] + bytes([sealed[-1] ^ 1]), "decrypt-failed"),
    ):
        with pytest.raises(OpenRefused) as info:
            decrypt(cipher, changed, AD)
        assert info.value.reason == reason
    with pytest.raises(OpenRefused):
        decrypt(AESGCM(os.urandom(32)), sealed, AD)


def test_open_refused_says_only_its_reason() -> None:
    error = OpenRefused("unknown-key")
    assert error.reason == "unknown-key"
    assert str(error) == "unknown-key"


def test_importing_the_sealer_loads_no_cryptography() -> None:
    code = "import sys, mcp_elicit.state.aead, mcp_elicit.state; print('cryptography' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
