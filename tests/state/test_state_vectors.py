"""requestState tokens keep their bytes: tokens sealed by the code before the shared AEAD sealer
(``data/request_state_vectors.json``, written by commit 849fe11) open, and tokens sealed now have
exactly the layout that code opened (checked here with the format spelled out, not with our code)."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mcp_elicit.state import KeyRing, RequestBinding, StateSealer

VECTORS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "request_state_vectors.json").read_text(encoding="utf-8")
)["request_states"]

# The format, as written by the earlier code (literals on purpose: a change in src must not move them).
ASSOCIATED_DATA_PREFIX = b"mcp-elicit requestState v1\x00"
KID_LABEL = b"mcp-elicit/v1 requestState key id\x00"


def _binding(vector: dict[str, Any]) -> RequestBinding:
    fields = vector["binding"]
    return RequestBinding(fields["method"], fields["target"], fields["args_digest"], fields["principal"])


def _material(secret: str) -> bytes:
    return base64.urlsafe_b64decode(secret + "=")


def _open_by_the_format(secrets: list[str], token: str) -> list[Any]:
    """Open a token the way the earlier code did: kid ‖ nonce ‖ AES-256-GCM, AD = prefix ‖ kid."""
    assert token.startswith("v1.")
    body = token[3:]
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    assert base64.urlsafe_b64encode(raw).rstrip(b"=").decode() == body  # unpadded, canonical
    by_kid = {hashlib.sha256(KID_LABEL + _material(s)).digest()[:4]: _material(s) for s in secrets}
    kid, nonce, sealed = raw[:4], raw[4:16], raw[16:]
    plaintext = AESGCM(by_kid[kid]).decrypt(nonce, sealed, ASSOCIATED_DATA_PREFIX + kid)
    claims = orjson.loads(plaintext)
    assert isinstance(claims, list)
    return claims


@pytest.mark.parametrize("vector", VECTORS, ids=[v["label"] for v in VECTORS])
@pytest.mark.parametrize("order", ["as sealed", "reversed"])
def test_tokens_sealed_by_the_earlier_code_open(vector: dict[str, Any], order: str) -> None:
    secrets = vector["secrets"] if order == "as sealed" else vector["secrets"][::-1]
    sealer = StateSealer(
        KeyRing.from_secrets(secrets), audience=vector["audience"], clock=lambda: vector["now"]
    )
    opened = sealer.unseal(vector["token"], _binding(vector))
    assert opened.payload == vector["payload"]
    assert opened.token_id == vector["token_id"]
    assert opened.issued_at == vector["issued_at"]
    assert opened.expires_at == vector["expires_at"]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["label"] for v in VECTORS])
def test_tokens_sealed_now_open_by_the_earlier_format(vector: dict[str, Any]) -> None:
    sealer = StateSealer(
        KeyRing.from_secrets(vector["secrets"]), audience=vector["audience"], clock=lambda: vector["now"]
    )
    binding = _binding(vector)
    token = sealer.seal(vector["payload"], binding)
    claims = _open_by_the_format(vector["secrets"], token)
    assert claims[:8] == [
        1,
        vector["issued_at"],
        vector["expires_at"],
        vector["audience"],
        binding.method,
        binding.target,
        binding.args_digest,
        binding.principal,
    ]
    assert len(claims[8]) == 22
    assert claims[9] == vector["payload"]
    # The earlier vector has the same layout too (the reference opener is checked against it).
    assert _open_by_the_format(vector["secrets"], vector["token"])[9] == vector["payload"]
    # Same plaintext length, same token length: nothing was added around the ciphertext.
    assert len(token) == len(vector["token"])


def test_the_vectors_cover_a_second_key_and_non_ascii_text() -> None:
    kids = {vector["token"][3:8] for vector in VECTORS}  # 30 bits, all of the kid
    assert len(kids) == 2  # tokens under both keys of the ring
    assert any(not json.dumps(vector["payload"], ensure_ascii=False).isascii() for vector in VECTORS)
