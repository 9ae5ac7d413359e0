"""Vault record encryption keeps its bytes: blobs sealed by the code before the shared AEAD sealer
(``data/vault_record_vectors.json``, written by commit 849fe11) open and re-wrap, and blobs sealed
now have exactly that code's layout (checked here with the format spelled out)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from mcp_elicit.connect.vault import VaultCorrupt, VaultKeys
from mcp_elicit.connect.vault.crypto import RecordContext
from mcp_elicit.state import KeyRing

VECTORS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "vault_record_vectors.json").read_text(encoding="utf-8")
)["records"]

# The format, as written by the earlier code (literals on purpose).
KEK_INFO = b"mcp-elicit/v1 vault key-encryption key"


def _context(vector: dict[str, Any]) -> RecordContext:
    fields = vector["context"]
    return RecordContext(fields["kind"], fields["owner"], fields["label"], fields["record_id"])


def _parts(context: RecordContext) -> list[bytes]:
    return [
        b"mcp-elicit/vault",
        b"\x01",
        context.kind.encode(),
        context.owner.encode("utf-8", "surrogatepass"),
        context.label.encode("utf-8", "surrogatepass"),
        context.record_id.encode("utf-8", "surrogatepass"),
    ]


def _encode(parts: list[bytes]) -> bytes:
    return b"".join(len(part).to_bytes(4, "big") + part for part in parts)


def _open_by_the_format(secrets: list[str], context: RecordContext, blob: bytes) -> bytes:
    """0x01 ‖ kid ‖ wrap nonce ‖ wrapped DEK ‖ data nonce ‖ payload, each part AES-256-GCM."""
    ring = KeyRing.from_secrets(secrets)
    keks = {
        bytes.fromhex(kid): HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=KEK_INFO).derive(
            base64.urlsafe_b64decode(secret + "=")
        )
        for kid, secret in zip(ring.kids, secrets, strict=True)
    }
    assert blob[0] == 1
    kid = blob[1:5]
    label, _version, *rest = _parts(context)
    dek_aad = _encode([label, b"dek", _version, *rest, kid])
    data_aad = _encode([label, b"data", _version, *rest])
    dek = AESGCM(keks[kid]).decrypt(blob[5:17], blob[17:65], dek_aad)
    return AESGCM(dek).decrypt(blob[65:77], blob[77:], data_aad)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["label"] for v in VECTORS])
@pytest.mark.parametrize("order", ["as sealed", "reversed"])
def test_records_sealed_by_the_earlier_code_open(vector: dict[str, Any], order: str) -> None:
    secrets = vector["secrets"] if order == "as sealed" else vector["secrets"][::-1]
    keys = VaultKeys(KeyRing.from_secrets(secrets))
    blob = bytes.fromhex(vector["blob"])
    assert keys.open(_context(vector), blob) == vector["plaintext"].encode()
    assert VaultKeys.kid_of(blob) == vector["kid"]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["label"] for v in VECTORS])
def test_records_sealed_now_open_by_the_earlier_format(vector: dict[str, Any]) -> None:
    keys = VaultKeys(KeyRing.from_secrets(vector["secrets"]))
    context = _context(vector)
    plaintext = vector["plaintext"].encode()
    blob = keys.seal(context, plaintext)
    assert _open_by_the_format(vector["secrets"], context, blob) == plaintext
    assert _open_by_the_format(vector["secrets"], context, bytes.fromhex(vector["blob"])) == plaintext
    assert len(blob) == len(bytes.fromhex(vector["blob"]))


def test_a_record_of_the_earlier_code_rewraps_to_the_earlier_layout() -> None:
    vector = next(v for v in VECTORS if "before_rewrap" in v)
    first, second = vector["secrets"]
    context = _context(vector)
    before = bytes.fromhex(vector["before_rewrap"])
    keys = VaultKeys(KeyRing.from_secrets([first]), also=(VaultKeys(KeyRing.from_secrets([second])),))
    rewrapped = keys.rewrap(context, before)
    assert rewrapped is not None
    assert rewrapped[65:] == before[65:]  # the payload ciphertext is kept byte for byte
    assert VaultKeys.kid_of(rewrapped) == VaultKeys.kid_of(bytes.fromhex(vector["blob"]))
    assert _open_by_the_format([first, second], context, rewrapped) == vector["plaintext"].encode()
    assert keys.rewrap(context, bytes.fromhex(vector["blob"])) is None  # already under the first key


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda blob: blob[:76], "malformed"),
        (lambda blob: b"\x02" + blob[1:], "malformed"),
        (lambda blob: blob[:1] + bytes(4) + blob[5:], "unknown-key"),
        (lambda blob: blob[:20] + bytes([blob[20] ^ 1]) + blob[21:], "decrypt-failed"),  # wrapped DEK
        (lambda blob: blob[:-1] + bytes([blob[-1] ^ 1]), "decrypt-failed"),  # payload
        (lambda blob: blob + b"\x00", "decrypt-failed"),
    ],
)
def test_a_changed_record_is_corrupt_with_its_reason(change: Any, reason: str) -> None:
    vector = VECTORS[0]
    keys = VaultKeys(KeyRing.from_secrets(vector["secrets"]))
    with pytest.raises(VaultCorrupt) as info:
        keys.open(_context(vector), change(bytes.fromhex(vector["blob"])))
    assert info.value.reason == reason
