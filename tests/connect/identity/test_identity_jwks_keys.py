"""Which JWKS entries become verification keys, now that PyJWT's ``PyJWK`` builds them.

PyJWK loads whatever it is given: an ``oct`` key as an HMAC secret, a JWK with ``d`` as a private
key, a 1024-bit RSA key, a secp256k1 key; and it cannot load an Ed448 key that names no ``alg``.
Our rules decide first; PyJWK only builds what they let through.
"""

from __future__ import annotations

import logging
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec as ec_mod
from cryptography.hazmat.primitives.asymmetric import ed448, ed25519, x25519
from cryptography.hazmat.primitives.asymmetric import rsa as rsa_mod
from identity_support import AUDIENCE, ISSUER, FakeClock, JwksState, SigningKey, b64, claims
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from mcp_elicit.connect.identity import INVALID_TOKEN_MESSAGE, InvalidToken, JWTIdentity
from mcp_elicit.connect.identity.jwks import parse_jwks


def without_alg(jwk: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in jwk.items() if k != "alg"}


def verifier(jwks: list[dict[str, Any]], clock: FakeClock, algorithms: list[str]) -> JWTIdentity:
    return JWTIdentity(issuer=ISSUER, audience=AUDIENCE, jwks=jwks, algorithms=algorithms, clock=clock)


async def refused(identity: JWTIdentity, token: str) -> str:
    with pytest.raises(InvalidToken) as info:
        await identity.verify(token)
    assert str(info.value) == INVALID_TOKEN_MESSAGE
    return info.value.reason


async def test_a_key_without_alg_serves_its_whole_family(rsa: SigningKey, clock: FakeClock) -> None:
    identity = verifier([without_alg(rsa.jwk)], clock, ["RS256", "RS512", "PS256", "PS384"])
    for alg in ("RS256", "RS512", "PS256", "PS384"):
        token = jwt.encode(claims(), rsa.private, algorithm=alg, headers={"kid": rsa.kid})
        assert (await identity.verify(token)).subject == "alice", alg


async def test_an_ec_key_without_alg_serves_only_its_own_curve(clock: FakeClock) -> None:
    p384 = ec_mod.generate_private_key(ec_mod.SECP384R1())
    p256 = ec_mod.generate_private_key(ec_mod.SECP256R1())
    jwk = {**ECAlgorithm.to_jwk(p384.public_key(), as_dict=True), "kid": "k"}
    identity = verifier([jwk], clock, ["ES256", "ES384"])
    token = jwt.encode(claims(), p384, algorithm="ES384", headers={"kid": "k"})
    assert (await identity.verify(token)).subject == "alice"
    forged = jwt.encode(claims(), p256, algorithm="ES256", headers={"kid": "k"})
    assert await refused(identity, forged) == "no-matching-key"


async def test_an_ed448_key_without_alg_is_usable(clock: FakeClock) -> None:
    """PyJWK picks no algorithm for it by itself (PyJWT 2.15: "Unsupported crv: Ed448")."""
    private = ed448.Ed448PrivateKey.generate()
    jwk = {**OKPAlgorithm.to_jwk(private.public_key(), as_dict=True), "kid": "k"}
    identity = verifier([jwk], clock, ["EdDSA"])
    token = jwt.encode(claims(), private, algorithm="EdDSA", headers={"kid": "k"})
    assert (await identity.verify(token)).subject == "alice"


def _unusable(rsa: SigningKey, ec: SigningKey, ed: SigningKey) -> list[tuple[dict[str, Any], bool]]:
    """JWKS entries that must be skipped, each with whether the skip is worth a warning."""
    small = rsa_mod.generate_private_key(public_exponent=65537, key_size=1024)
    k1 = ec_mod.generate_private_key(ec_mod.SECP256K1())
    ec_private = ECAlgorithm.to_jwk(ec_mod.generate_private_key(ec_mod.SECP256R1()), as_dict=True)
    x25519_public = x25519.X25519PrivateKey.generate().public_key().public_bytes_raw()
    return [
        ({"kty": "oct", "k": "c2VjcmV0", "alg": "HS256", "kid": "hmac"}, True),
        ({**ec_private, "kid": "ec-private"}, True),
        ({**OKPAlgorithm.to_jwk(ed25519.Ed25519PrivateKey.generate(), as_dict=True), "kid": "ed-d"}, True),
        ({**rsa.jwk, "p": "cHJpbWUtZmFjdG9y"}, True),
        ({**RSAAlgorithm.to_jwk(small.public_key(), as_dict=True), "kid": "small"}, False),
        ({**ECAlgorithm.to_jwk(k1.public_key(), as_dict=True), "kid": "k1"}, False),
        ({**ECAlgorithm.to_jwk(k1.public_key(), as_dict=True), "alg": "ES256"}, False),
        ({"kty": "OKP", "crv": "X25519", "x": b64(x25519_public), "kid": "ecdh"}, False),
        ({**ec.jwk, "alg": ["ES256"]}, False),  # not a str: once a TypeError that took the set down
        ({**without_alg(ec.jwk), "crv": ["P-256"]}, False),
        ({**ec.jwk, "crv": ["P-256"]}, False),
        ({**ec.jwk, "alg": "ES384"}, False),  # a P-256 key
        ({**rsa.jwk, "alg": "ES256"}, False),
        ({**rsa.jwk, "alg": "HS256"}, False),
        ({**ed.jwk, "alg": "RS256"}, False),
        ({**without_alg(rsa.jwk), "n": 5}, False),
        ({"kty": "RSA", "e": "AQAB", "kid": "no-n"}, False),
        ({"kty": "EC", "crv": "P-256", "x": ec.jwk["x"], "kid": "no-y"}, False),
        ({"kty": ["RSA"], "n": rsa.jwk["n"], "e": "AQAB"}, False),
        ({"kty": "RSA", "n": rsa.jwk["n"], "e": "AQAB", "kid": 7}, False),
        ({**ed.jwk, "use": "enc"}, False),
        ({**ed.jwk, "key_ops": ["encrypt"]}, False),
    ]


def test_only_public_signing_keys_of_supported_types_are_kept(
    rsa: SigningKey, ec: SigningKey, ed: SigningKey, caplog: pytest.LogCaptureFixture
) -> None:
    entries = _unusable(rsa, ec, ed)
    with caplog.at_level(logging.DEBUG, logger="mcp_elicit.connect.identity"):
        keys = parse_jwks({"keys": [entry for entry, _ in entries] + [rsa.jwk, ec.jwk, ed.jwk]})
    assert [k.kid for k in keys] == [rsa.kid, ec.kid, ed.kid]
    skipped = [r for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skipped) == len(entries)
    warned = [r.levelno == logging.WARNING for r in skipped]
    assert warned == [dangerous for _, dangerous in entries]
    assert any("1024 bits" in r.getMessage() for r in skipped)
    secrets = [entry[m] for entry, _ in entries for m in ("d", "p", "k") if m in entry]
    assert len(secrets) == 4
    assert not any(secret in r.getMessage() for secret in secrets for r in caplog.records)


async def test_a_fetched_jwks_with_odd_entries_still_serves_its_good_keys(
    rsa: SigningKey, ec: SigningKey, ed: SigningKey, jwks_url: str, jwks_state: JwksState, clock: FakeClock
) -> None:
    jwks_state.keys = [entry for entry, _ in _unusable(rsa, ec, ed)] + [rsa.jwk]
    identity = JWTIdentity(issuer=ISSUER, audience=AUDIENCE, jwks_url=jwks_url, clock=clock)
    assert (await identity.verify(rsa.mint(claims()))).subject == "alice"
    assert await refused(identity, ec.mint(claims())) == "unknown-kid"
    assert jwks_state.requests == 1
