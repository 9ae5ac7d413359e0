"""CookieSealer: values sealed by the earlier code open (``data/cookie_vectors.json``, written by
commit 849fe11), values sealed now have that code's layout, and only the canonical unpadded
base64url spelling of a value opens."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from mcp_elicit.connect.pages.sealing import CookieSealer
from mcp_elicit.state import KeyRing

VECTORS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "cookie_vectors.json").read_text(encoding="utf-8")
)["cookies"]
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

# The format, as written by the earlier code (literals on purpose).
ASSOCIATED_DATA_PREFIX = b"mcp-elicit/v1 pages cookie\x00"
SUBKEY_INFO = b"mcp-elicit connect pages cookies"


def _open_by_the_format(secrets: list[str], name: str, value: str) -> dict[str, Any]:
    """kid ‖ nonce ‖ AES-256-GCM under HKDF(ring key, SUBKEY_INFO); AD = prefix ‖ cookie name."""
    raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    assert base64.urlsafe_b64encode(raw).rstrip(b"=").decode() == value  # unpadded, canonical
    ring = KeyRing.from_secrets(secrets)
    by_kid = {
        kid: HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=SUBKEY_INFO).derive(material)
        for kid, material in zip(
            (bytes.fromhex(kid) for kid in ring.kids),
            (base64.urlsafe_b64decode(secret + "=") for secret in secrets),
            strict=True,
        )
    }
    plaintext = AESGCM(by_kid[raw[:4]]).decrypt(raw[4:16], raw[16:], ASSOCIATED_DATA_PREFIX + name.encode())
    payload = orjson.loads(plaintext)
    assert isinstance(payload, dict)
    return payload


@pytest.mark.parametrize("vector", VECTORS, ids=[v["label"] for v in VECTORS])
@pytest.mark.parametrize("order", ["as sealed", "reversed"])
def test_values_sealed_by_the_earlier_code_open(vector: dict[str, Any], order: str) -> None:
    secrets = vector["secrets"] if order == "as sealed" else vector["secrets"][::-1]
    sealer = CookieSealer(KeyRing.from_secrets(secrets), clock=lambda: vector["now"])
    assert sealer.open(vector["name"], vector["value"]) == vector["opened"]
    assert vector["opened"] == {**vector["payload"], "exp": vector["now"] + vector["ttl"]}


@pytest.mark.parametrize("vector", VECTORS, ids=[v["label"] for v in VECTORS])
def test_values_sealed_now_open_by_the_earlier_format(vector: dict[str, Any]) -> None:
    sealer = CookieSealer(KeyRing.from_secrets(vector["secrets"]), clock=lambda: vector["now"])
    value = sealer.seal(vector["name"], vector["payload"], vector["ttl"])
    assert _open_by_the_format(vector["secrets"], vector["name"], value) == vector["opened"]
    assert _open_by_the_format(vector["secrets"], vector["name"], vector["value"]) == vector["opened"]
    assert len(value) == len(vector["value"])


def test_a_value_opens_only_for_its_cookie_its_keys_and_its_lifetime() -> None:
    now = [1000.0]
    ring = KeyRing.from_secrets([KeyRing.generate_secret()])
    sealer = CookieSealer(ring, clock=lambda: now[0])
    value = sealer.seal("login", {"t": "x"}, 60)
    assert sealer.open("login", value) == {"t": "x", "exp": 1060.0}
    assert sealer.open("session", value) is None  # the name is the associated data
    other = CookieSealer(KeyRing.from_secrets([KeyRing.generate_secret()]), clock=lambda: now[0])
    assert other.open("login", value) is None  # unknown key
    raw = bytearray(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
    raw[-1] ^= 1
    tampered = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    assert sealer.open("login", tampered) is None
    assert sealer.open("login", value[:40]) is None
    assert sealer.open("login", "") is None
    now[0] = 1060.0
    assert sealer.open("login", value) is None  # expired


def _value_with(sealer: CookieSealer, predicate: Any) -> str:
    for size in range(200):
        value = sealer.seal("c", {"p": "x" * size}, 60)
        if predicate(value):
            return value
    raise AssertionError("no value with the wanted shape")  # pragma: no cover


def _variants(value: str) -> list[str]:
    """Spellings of ``value`` that a lenient base64url decoder reads as the same bytes."""
    variants = [value + "=" * (-len(value) % 4 or 4)]  # padded
    # Characters outside the alphabet, which a lenient decoder skips (four: the padding it
    # computes from the length stays right).
    variants += [value + "    ", value[:10] + "\n\n\n\n" + value[10:], value[:10] + "...." + value[10:]]
    if "-" in value:
        variants.append(value.replace("-", "+"))
    if "_" in value:
        variants.append(value.replace("_", "/"))
    unused = {2: 0x0F, 3: 0x03}.get(len(value) % 4)
    if unused:
        last = ALPHABET.index(value[-1])
        variants.append(value[:-1] + ALPHABET[last | 1])  # non-zero unused low bits
    return variants


@pytest.mark.parametrize("tail", [0, 2, 3])
def test_only_the_canonical_spelling_of_a_value_opens(tail: int) -> None:
    sealer = CookieSealer(KeyRing.from_secrets([KeyRing.generate_secret()]), clock=lambda: 0.0)
    value = _value_with(sealer, lambda v: len(v) % 4 == tail and "-" in v and "_" in v)
    assert sealer.open("c", value) is not None
    for variant in _variants(value):
        lenient = base64.urlsafe_b64decode(variant + "=" * (-len(variant) % 4))
        assert lenient == base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)), variant
        assert sealer.open("c", variant) is None, variant
