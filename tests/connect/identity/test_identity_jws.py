"""The token checks that must hold now that PyJWT verifies the signatures.

PyJWT is lenient where the verifier must not be: by version it accepts ``=`` padding and
non-canonical base64url, reads a header with duplicate names (the last one wins) and in UTF-16,
and knows ``none`` and HMAC. The hostile tokens are signed with the real key wherever a signature
can be made, so a refusal comes from the rule under test and not from a broken signature.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec as ec_mod
from identity_support import AUDIENCE, ISSUER, FakeClock, SigningKey, b64, claims, hs256_with_public_key

from mcp_elicit.connect.identity import INVALID_TOKEN_MESSAGE, InvalidToken, JWTIdentity
from mcp_elicit.connect.identity.jws import SUPPORTED_ALGORITHMS, parse_compact, verify_signature

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def identity(jwks_url: str, clock: FakeClock) -> JWTIdentity:
    return JWTIdentity(issuer=ISSUER, audience=AUDIENCE, jwks_url=jwks_url, clock=clock)


async def refused(verifier: JWTIdentity, token: str) -> str:
    with pytest.raises(InvalidToken) as info:
        await verifier.verify(token)
    assert str(info.value) == INVALID_TOKEN_MESSAGE
    return info.value.reason


def payload_bytes() -> bytes:
    return json.dumps(claims()).encode()


# ------------------------------------------------------------------------------ the header


async def test_the_signer_is_sound(rsa: SigningKey, jwks_url: str, clock: FakeClock) -> None:
    """The raw signer the other tests use makes tokens the verifier accepts."""
    token = rsa.mint_bytes(b'{"alg":"RS256","kid":"rsa-1"}', payload_bytes())
    assert (await identity(jwks_url, clock).verify(token)).subject == "alice"


@pytest.mark.parametrize(
    "header",
    [
        b'{"alg":"RS256","kid":"rsa-1","kid":"rsa-1"}',
        b'{"alg":"HS256","kid":"rsa-1","alg":"RS256"}',  # last-wins would check RS256
        b'{"alg":"RS256","alg":"RS256","kid":"rsa-1"}',
        b'{"alg":"RS256","kid":"rsa-1","jwk":{"kty":"RSA","kty":"EC"}}',  # nested objects too
    ],
)
async def test_duplicate_header_names_are_refused(
    header: bytes, rsa: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock)
    assert await refused(verifier, rsa.mint_bytes(header, payload_bytes())) == "malformed"


@pytest.mark.parametrize("alg", [["RS256"], {"RS256": True}, None, 256, True, "rs256", " RS256"])
async def test_alg_that_is_not_exactly_an_allowed_name(
    alg: object, rsa: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock)
    token = rsa.mint_raw({"alg": alg, "kid": rsa.kid}, claims())
    assert await refused(verifier, token) == "alg-not-allowed"
    assert verifier.jwks.fetches == 0  # refused before any key was looked up


@pytest.mark.parametrize("kid", [None, 5, ["rsa-1"], {"kid": "rsa-1"}, True, "k" * 513])
async def test_kid_that_is_not_a_usable_string(
    kid: object, rsa: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    """``"kid": null`` in particular is not "no kid" (which would try every key)."""
    verifier = identity(jwks_url, clock)
    assert await refused(verifier, rsa.mint_raw({"alg": "RS256", "kid": kid}, claims())) == "bad-header"


@pytest.mark.parametrize(
    "header",
    [
        '{"alg":"RS256","kid":"rsa-1"}'.encode("utf-16"),  # json.loads(bytes) would read it
        '{"alg":"RS256","kid":"rsa-1"}'.encode("utf-32-le"),
        b'{"alg":"RS256","kid":"rsa-1","x":NaN}',
        b'{"alg":"RS256","kid":"rsa-1","x":-Infinity}',
        b'{"alg":"RS256","kid":"rsa-1","x":' + b"[" * 3000 + b"]" * 3000 + b"}",  # RecursionError
        b'{"alg":"RS256","kid":"\xff"}',
        b'["alg","RS256"]',
    ],
)
async def test_header_that_is_not_a_plain_utf8_json_object(
    header: bytes, rsa: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock)
    assert await refused(verifier, rsa.mint_bytes(header, payload_bytes())) == "malformed"


async def test_detached_payload_form_is_refused(rsa: SigningKey, jwks_url: str, clock: FakeClock) -> None:
    """RFC 7797's detached form (``b64: false``, an empty payload segment), which PyJWT implements."""
    import jwt

    verifier = identity(jwks_url, clock)
    detached = jwt.PyJWS().encode(
        payload_bytes(), rsa.private, algorithm="RS256", headers={"kid": rsa.kid}, is_payload_detached=True
    )
    assert detached.split(".")[1] == ""
    assert await refused(verifier, detached) == "malformed"


# ------------------------------------------------------------------------------ base64url


def _same_bytes_other_spelling(segment: str) -> str:
    """``segment`` with the unused low bits of its last character set: a lenient decoder reads
    the same bytes from it."""
    spare = {2: 4, 3: 2}[len(segment) % 4]
    last = _ALPHABET.index(segment[-1])
    variant = segment[:-1] + _ALPHABET[last | ((1 << spare) - 1)]
    assert variant != segment
    lenient = base64.urlsafe_b64decode(variant + "=" * (-len(variant) % 4))
    assert lenient == base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    return variant


async def test_only_the_canonical_unpadded_spelling_is_accepted(
    rsa: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock)
    token = rsa.mint(claims())
    header, payload, signature = token.split(".")
    assert len(signature) % 4 == 2  # a 2048-bit RSA signature: 342 characters
    assert (await verifier.verify(token)).subject == "alice"
    variants = [
        f"{header}.{payload}.{signature}==",  # the same signature, padded
        f"{header}.{payload}.{_same_bytes_other_spelling(signature)}",
        f"{header}.{payload}.{signature}=",
        f"{header}.{payload}.{signature}AAA",  # 4n+1 characters: no byte string has them
        f"{header}=.{payload}.{signature}",
        f"{header}.{payload}.{signature.replace('-', '+').replace('_', '/')}",  # standard alphabet
        f" {token}",
        f"{token}\n",
    ]
    for variant in variants:
        if variant != token:
            assert await refused(verifier, variant) == "malformed", variant


# ------------------------------------------------------------------------------ algorithms


async def test_ecdsa_signature_must_be_the_raw_r_s_pair(
    ec: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    """RFC 7518 §3.4: a DER-encoded ECDSA signature by the right key is not a JWS signature."""
    verifier = identity(jwks_url, clock)
    signing_input = f"{b64(json.dumps({'alg': 'ES256', 'kid': ec.kid}).encode())}.{b64(payload_bytes())}"
    der = ec.private.sign(signing_input.encode(), ec_mod.ECDSA(hashes.SHA256()))
    assert await refused(verifier, f"{signing_input}.{b64(der)}") == "bad-signature"


@pytest.mark.parametrize("alg", ["none", "HS256", "HS384", "HS512", "ES256K", "ES521", "RS1", ""])
def test_no_other_algorithm_is_reachable(alg: str, rsa: SigningKey) -> None:
    """``verify_signature`` knows only the asymmetric algorithms, whatever PyJWT implements."""
    public = rsa.private.public_key()
    for token in hs256_with_public_key(rsa, claims()):  # HMAC tags made with the public key
        jws = parse_compact(token)
        assert verify_signature(jws, alg, public) is False
    assert alg not in SUPPORTED_ALGORITHMS
    with pytest.raises(ValueError, match="not allowed"):
        JWTIdentity(issuer=ISSUER, audience=AUDIENCE, jwks=[rsa.jwk], algorithms=[alg])


def test_verify_signature_never_raises(rsa: SigningKey, ec: SigningKey, ed: SigningKey) -> None:
    """A signature of the wrong length or an empty one is ``False`` for every algorithm."""
    for key in (rsa, ec, ed):
        public = key.private.public_key()
        header, payload, _ = key.mint(claims()).split(".")
        for signature in ("", "AA", b64(b"\x00" * 600)):
            jws = parse_compact(f"{header}.{payload}.{signature}")
            assert not any(verify_signature(jws, alg, public) for alg in SUPPORTED_ALGORITHMS)


# ------------------------------------------------------------------------------ claims


@pytest.mark.parametrize(
    "aud",
    [
        [AUDIENCE, None],
        [AUDIENCE, 1.5],
        [AUDIENCE, [AUDIENCE]],
        [[AUDIENCE]],
        {AUDIENCE: True},
        [AUDIENCE, {"aud": AUDIENCE}],
        True,
        None,
    ],
)
async def test_audience_of_mixed_types_is_refused(
    aud: object, rsa: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    token = rsa.mint_raw({"alg": "RS256", "kid": rsa.kid}, claims(aud=aud))
    assert await refused(identity(jwks_url, clock), token) == "audience"


# ------------------------------------------------------------------------------ start-up


def test_pyjwt_is_loaded_only_when_a_token_or_key_is_read() -> None:
    probe = (
        "import sys\n"
        "import mcp_elicit.connect.identity as identity\n"
        "print('jwt' in sys.modules)\n"
        "identity.JWTIdentity(issuer='https://a.example', audience='https://r.example',\n"
        "    jwks=[{'kty': 'OKP', 'crv': 'Ed25519', 'x': '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo'}])\n"
        "print('jwt' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]
