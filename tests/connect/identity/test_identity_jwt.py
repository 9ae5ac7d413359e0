"""JWTIdentity against real tokens and a real JWKS served over HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time

import pytest
from identity_support import (
    AUDIENCE,
    ISSUER,
    NOW,
    FakeClock,
    JwksState,
    SigningKey,
    SilentServer,
    claims,
    closed_port,
    hand_made,
    hs256_with_public_key,
)

from mcp_elicit.connect.identity import (
    INVALID_TOKEN_MESSAGE,
    IdentityUnavailable,
    InvalidToken,
    JWTIdentity,
    Principal,
    Verifier,
)
from mcp_elicit.connect.identity.jwks import parse_jwks


def identity(jwks_url: str, clock: FakeClock, **options: object) -> JWTIdentity:
    settings: dict[str, object] = {
        "issuer": ISSUER,
        "audience": AUDIENCE,
        "jwks_url": jwks_url,
        "clock": clock,
    }
    settings.update(options)
    return JWTIdentity(**settings)  # type: ignore[arg-type]


async def refused(verifier: JWTIdentity, token: str) -> str:
    with pytest.raises(InvalidToken) as info:
        await verifier.verify(token)
    assert str(info.value) == INVALID_TOKEN_MESSAGE  # never the reason, never the token
    if token:
        assert token not in repr(info.value)
    return info.value.reason


# ------------------------------------------------------------------------------ accepted


@pytest.mark.parametrize("key_name", ["rsa", "ec", "ed"])
async def test_valid_token_gives_the_principal(
    key_name: str, request: pytest.FixtureRequest, jwks_url: str, clock: FakeClock
) -> None:
    key: SigningKey = request.getfixturevalue(key_name)
    verifier = identity(jwks_url, clock)
    assert isinstance(verifier, Verifier)
    principal = await verifier.verify(key.mint(claims()))
    assert principal == Principal(ISSUER, "alice")
    assert principal.key == "https://auth.example.test|alice"
    assert principal.client_id == "client-123"
    assert principal.scopes == {"mcp:tools", "files:read"}


async def test_audience_list_containing_this_resource_is_accepted(
    rsa: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock)
    token = rsa.mint(claims(aud=["https://other.example/api", AUDIENCE]))
    assert (await verifier.verify(token)).subject == "alice"


async def test_leeway_tolerates_small_clock_skew(rsa: SigningKey, jwks_url: str, clock: FakeClock) -> None:
    verifier = identity(jwks_url, clock, leeway=30)
    token = rsa.mint(claims(exp=int(NOW) - 20, nbf=int(NOW) + 20, iat=int(NOW) + 20))
    assert (await verifier.verify(token)).subject == "alice"


async def test_static_jwks_needs_no_network(rsa: SigningKey, clock: FakeClock) -> None:
    verifier = JWTIdentity(issuer=ISSUER, audience=AUDIENCE, jwks={"keys": [rsa.jwk]}, clock=clock)
    assert (await verifier.verify(rsa.mint(claims()))).subject == "alice"
    assert verifier.jwks.fetches == 0
    assert await refused(verifier, rsa.mint(claims(), headers={"kid": "other"})) == "unknown-kid"


# ------------------------------------------------------------------------------ refused


async def test_wrong_signature(
    rsa: SigningKey, rsa_other: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock)
    assert await refused(verifier, rsa_other.mint(claims())) == "bad-signature"


async def test_tampered_payload(rsa: SigningKey, jwks_url: str, clock: FakeClock) -> None:
    verifier = identity(jwks_url, clock)
    good = rsa.mint(claims())
    evil = rsa.mint(claims(sub="admin"))
    spliced = ".".join([good.split(".")[0], evil.split(".")[1], good.split(".")[2]])
    assert await refused(verifier, spliced) == "bad-signature"


@pytest.mark.parametrize("iss", ["https://evil.example", ISSUER + "/", ISSUER.upper(), ..., 42])
async def test_wrong_issuer_exact_comparison(
    iss: object, rsa: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock)
    token = rsa.mint_raw({"alg": "RS256", "kid": rsa.kid}, claims(iss=iss))
    assert await refused(verifier, token) == "issuer"


@pytest.mark.parametrize(
    "aud",
    ["https://other.example/mcp", AUDIENCE + "/", ["https://other.example/mcp"], [], ..., 7, [AUDIENCE, 7]],
)
async def test_token_for_another_resource_is_refused(
    aud: object, rsa: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock)
    assert await refused(verifier, rsa.mint(claims(aud=aud))) == "audience"


async def test_expiry(rsa: SigningKey, jwks_url: str, clock: FakeClock) -> None:
    verifier = identity(jwks_url, clock, leeway=30)
    assert await refused(verifier, rsa.mint(claims(exp=int(NOW) - 31))) == "expired"
    assert await refused(verifier, rsa.mint(claims(exp=...))) == "expired"
    assert await refused(verifier, rsa.mint(claims(exp="2099-01-01"))) == "bad-claims"
    assert await refused(verifier, rsa.mint(claims(exp=True))) == "bad-claims"
    token = rsa.mint(claims(exp=int(NOW) + 60))
    assert (await verifier.verify(token)).subject == "alice"
    clock.advance(91)
    assert await refused(verifier, token) == "expired"


async def test_not_before_and_issued_at_in_the_future(
    rsa: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock, leeway=30)
    assert await refused(verifier, rsa.mint(claims(nbf=int(NOW) + 120))) == "not-yet-valid"
    assert await refused(verifier, rsa.mint(claims(iat=int(NOW) + 120))) == "issued-in-future"
    assert await refused(verifier, rsa.mint(claims(nbf="soon"))) == "bad-claims"


@pytest.mark.parametrize("sub", [..., "", 123, None, "bad\nsubject"])
async def test_missing_or_unusable_subject(
    sub: object, rsa: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock)
    assert await refused(verifier, rsa.mint(claims(sub=sub))) == "no-subject"


@pytest.mark.parametrize("alg", ["none", "None", "NONE", "nOnE"])
async def test_alg_none_is_refused(alg: str, rsa: SigningKey, jwks_url: str, clock: FakeClock) -> None:
    verifier = identity(jwks_url, clock)
    for header in ({"alg": alg}, {"alg": alg, "kid": rsa.kid, "typ": "JWT"}):
        assert await refused(verifier, hand_made(header, claims())) == "alg-not-allowed"


async def test_hs256_signed_with_the_rsa_public_key_is_refused(
    rsa: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock, algorithms=("RS256", "ES256", "EdDSA", "PS256"))
    for token in hs256_with_public_key(rsa, claims()):
        assert await refused(verifier, token) == "alg-not-allowed"
    assert verifier.jwks.fetches == 0  # refused before any key was even looked up


async def test_key_of_another_type_is_never_used(
    rsa: SigningKey, ec: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock)
    # An ES256 token that names the RSA key, and the reverse: no key fits, whatever the signature.
    forged = hand_made({"alg": "ES256", "kid": rsa.kid}, claims(), b"\x01" * 64)
    assert await refused(verifier, forged) == "no-matching-key"
    signed_by_ec_named_rsa = ec.mint(claims(), headers={"kid": rsa.kid})
    assert await refused(verifier, signed_by_ec_named_rsa) == "no-matching-key"


async def test_algorithm_outside_the_allow_list(rsa: SigningKey, jwks_url: str, clock: FakeClock) -> None:
    verifier = identity(jwks_url, clock, algorithms=("ES256",))
    assert await refused(verifier, rsa.mint(claims())) == "alg-not-allowed"


@pytest.mark.parametrize(
    "token",
    [
        "",
        "abc",
        "a.b",
        "a.b.c.d",
        "a b.c.d",
        "e30.e30.",
        "!!!.e30.AA",
        "eyJhbGciOiJSUzI1NiJ9=.e30.AA",
        "x" * 70000,
    ],
)
async def test_malformed_tokens(token: str, jwks_url: str, clock: FakeClock) -> None:
    verifier = identity(jwks_url, clock)
    assert await refused(verifier, token) in {"malformed", "too-large", "alg-not-allowed"}


async def test_not_a_string(jwks_url: str, clock: FakeClock) -> None:
    verifier = identity(jwks_url, clock)
    with pytest.raises(InvalidToken) as info:
        await verifier.verify(b"bytes")  # type: ignore[arg-type]
    assert info.value.reason == "not-a-string"


async def test_crit_and_b64_headers_are_refused(rsa: SigningKey, jwks_url: str, clock: FakeClock) -> None:
    verifier = identity(jwks_url, clock)
    assert await refused(verifier, rsa.mint(claims(), headers={"crit": ["exp"]})) == "bad-header"
    assert await refused(verifier, rsa.mint_raw({"alg": "RS256", "kid": 5}, claims())) == "bad-header"
    b64_false = rsa.mint_raw({"alg": "RS256", "kid": rsa.kid, "b64": False, "crit": ["b64"]}, claims())
    assert await refused(verifier, b64_false) == "bad-header"
    # The raw signer itself is sound: the same header without the extras is accepted.
    assert (
        await verifier.verify(rsa.mint_raw({"alg": "RS256", "kid": rsa.kid}, claims()))
    ).subject == "alice"


async def test_token_type_when_configured(rsa: SigningKey, jwks_url: str, clock: FakeClock) -> None:
    verifier = identity(jwks_url, clock, token_types={"at+jwt"})
    assert (await verifier.verify(rsa.mint(claims(), headers={"typ": "at+jwt"}))).subject == "alice"
    assert (
        await verifier.verify(rsa.mint(claims(), headers={"typ": "application/at+jwt"}))
    ).subject == "alice"
    assert await refused(verifier, rsa.mint(claims(), headers={"typ": "JWT"})) == "bad-header"


async def test_keys_named_in_the_token_are_ignored(
    rsa_other: SigningKey, jwks_url: str, clock: FakeClock
) -> None:
    """A token that brings its own key (jwk / jku headers) is still checked against the JWKS."""
    verifier = identity(jwks_url, clock)
    token = rsa_other.mint(claims(), headers={"jwk": rsa_other.jwk, "jku": "http://127.0.0.1:1/evil"})
    assert await refused(verifier, token) == "bad-signature"


# ------------------------------------------------------------------------------ JWKS fetching


async def test_unknown_kid_refetches_once_then_refuses(
    rsa: SigningKey, jwks_url: str, jwks_state: JwksState, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock, jwks_refresh_min_interval=30)
    await verifier.verify(rsa.mint(claims()))
    assert jwks_state.requests == 1
    clock.advance(31)
    unknown = rsa.mint(claims(), headers={"kid": "not-published"})
    assert await refused(verifier, unknown) == "unknown-kid"
    assert jwks_state.requests == 2  # exactly one refetch
    assert await refused(verifier, unknown) == "unknown-kid"
    assert jwks_state.requests == 2  # and not again within the interval


async def test_key_rotation_is_picked_up(
    rsa: SigningKey, rsa_rotated: SigningKey, jwks_url: str, jwks_state: JwksState, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock, jwks_refresh_min_interval=30)
    await verifier.verify(rsa.mint(claims()))
    jwks_state.keys.append(rsa_rotated.jwk)
    fresh = rsa_rotated.mint(claims())
    assert await refused(verifier, fresh) == "unknown-kid"  # within the interval: no refetch yet
    assert jwks_state.requests == 1
    clock.advance(30)
    assert (await verifier.verify(fresh)).subject == "alice"
    assert jwks_state.requests == 2


async def test_kid_storm_is_rate_limited(
    rsa: SigningKey, jwks_url: str, jwks_state: JwksState, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock, jwks_refresh_min_interval=30)
    await verifier.verify(rsa.mint(claims()))
    clock.advance(31)
    storm = [rsa.mint(claims(), headers={"kid": secrets.token_hex(8)}) for _ in range(60)]
    results = await asyncio.gather(*(verifier.verify(t) for t in storm), return_exceptions=True)
    assert all(isinstance(r, InvalidToken) and r.reason == "unknown-kid" for r in results)
    assert jwks_state.requests == 2  # 60 concurrent unknown kids: one shared refetch
    for token in storm:
        clock.advance(0.4)  # 24 s of steady bogus traffic
        assert await refused(verifier, token) == "unknown-kid"
    assert jwks_state.requests == 2
    clock.advance(10)
    assert await refused(verifier, storm[0]) == "unknown-kid"
    assert jwks_state.requests == 3  # one per interval at most


async def test_cache_lifetime(
    rsa: SigningKey, jwks_url: str, jwks_state: JwksState, clock: FakeClock
) -> None:
    verifier = identity(jwks_url, clock, jwks_cache_seconds=300)
    token = rsa.mint(claims(exp=int(NOW) + 3600))
    for _ in range(5):
        await verifier.verify(token)
    assert jwks_state.requests == 1
    clock.advance(301)
    await verifier.verify(token)
    assert jwks_state.requests == 2


async def test_jwks_request_carries_no_credentials(
    rsa: SigningKey, jwks_url: str, jwks_state: JwksState, clock: FakeClock
) -> None:
    """No passthrough: the only outbound request is a plain GET without the token."""
    verifier = identity(jwks_url, clock)
    token = rsa.mint(claims())
    await verifier.verify(token)
    clock.advance(31)
    await refused(verifier, rsa.mint(claims(), headers={"kid": "x"}))
    assert jwks_state.requests == 2
    for headers in jwks_state.seen_headers:
        assert "authorization" not in headers
        assert "cookie" not in headers
        assert all(token not in value and token.split(".")[2] not in value for value in headers.values())


async def test_jwks_endpoint_down_is_a_clear_error_without_a_hang(rsa: SigningKey, clock: FakeClock) -> None:
    url = f"http://127.0.0.1:{closed_port()}/jwks.json"
    verifier = identity(url, clock, jwks_timeout=2.0, jwks_failure_backoff=5)
    token = rsa.mint(claims())
    started = time.monotonic()
    with pytest.raises(IdentityUnavailable) as info:
        await verifier.verify(token)
    assert time.monotonic() - started < 2.5
    assert url in str(info.value)
    assert token not in str(info.value)
    assert verifier.jwks.fetches == 1
    with pytest.raises(IdentityUnavailable):  # within the back-off: fails at once, no new fetch
        await verifier.verify(token)
    assert verifier.jwks.fetches == 1
    clock.advance(6)
    with pytest.raises(IdentityUnavailable):
        await verifier.verify(token)
    assert verifier.jwks.fetches == 2


async def test_jwks_endpoint_that_never_answers_times_out(rsa: SigningKey, clock: FakeClock) -> None:
    with SilentServer() as silent:
        verifier = identity(f"http://127.0.0.1:{silent.port}/jwks.json", clock, jwks_timeout=0.5)
        started = time.monotonic()
        with pytest.raises(IdentityUnavailable, match=r"no complete answer within 0\.5 s"):
            await verifier.verify(rsa.mint(claims()))
        assert time.monotonic() - started < 2.0


async def test_jwks_http_error_and_stale_keys(
    rsa: SigningKey, jwks_url: str, jwks_state: JwksState, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    verifier = identity(jwks_url, clock, jwks_cache_seconds=300, jwks_max_stale=600)
    token = rsa.mint(claims(exp=int(NOW) + 7200))
    await verifier.verify(token)
    jwks_state.status = 503
    clock.advance(301)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.connect.identity"):
        assert (await verifier.verify(token)).subject == "alice"  # the cached keys keep working
    assert any("HTTP 503" in r.getMessage() for r in caplog.records)
    clock.advance(700)  # now past cache lifetime + max_stale
    with pytest.raises(IdentityUnavailable, match="HTTP 503"):
        await verifier.verify(token)


async def test_jwks_that_is_not_a_jwks(
    jwks_url: str, jwks_state: JwksState, rsa: SigningKey, clock: FakeClock
) -> None:
    jwks_state.keys = [{"kty": "oct", "k": "c2VjcmV0", "kid": rsa.kid}]
    verifier = identity(jwks_url, clock)
    # The symmetric key is skipped: the kid is unknown, and HS256 would be refused anyway.
    assert await refused(verifier, rsa.mint(claims())) == "unknown-kid"
    for token in hs256_with_public_key(rsa, claims()):
        assert await refused(verifier, token) == "alg-not-allowed"


def test_parse_jwks_skips_dangerous_and_unusable_keys(
    rsa: SigningKey, ec: SigningKey, caplog: pytest.LogCaptureFixture
) -> None:
    private_member = {**rsa.jwk, "d": "AQAB"}
    with caplog.at_level(logging.DEBUG, logger="mcp_elicit.connect.identity"):
        keys = parse_jwks(
            {
                "keys": [
                    rsa.jwk,
                    {"kty": "oct", "k": "c2VjcmV0"},
                    private_member,
                    {**ec.jwk, "use": "enc"},
                    {**ec.jwk, "alg": "RS256"},
                    {**ec.jwk, "x": ec.jwk["y"]},  # not on the curve
                    {"kty": "RSA", "n": "AQAB", "e": "AQAB"},  # far too small
                    "junk",
                ]
            }
        )
    assert [k.kid for k in keys] == [rsa.kid]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2  # the symmetric key and the private key are worth a warning
    with pytest.raises(ValueError, match="not a JWK Set"):
        parse_jwks({"nokeys": []})


# ------------------------------------------------------------------------------ configuration


@pytest.mark.parametrize("algorithms", [("none",), ("HS256",), ("RS256", "HS512"), ()])
def test_unsafe_algorithm_lists_are_refused(algorithms: tuple[str, ...], rsa: SigningKey) -> None:
    with pytest.raises(ValueError, match=r"algorithm|empty"):
        JWTIdentity(issuer=ISSUER, audience=AUDIENCE, jwks={"keys": [rsa.jwk]}, algorithms=algorithms)


def test_configuration_errors(rsa: SigningKey) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        JWTIdentity(issuer=ISSUER, audience=AUDIENCE)
    with pytest.raises(ValueError, match="exactly one"):
        JWTIdentity(
            issuer=ISSUER, audience=AUDIENCE, jwks_url="https://a.example/j", jwks={"keys": [rsa.jwk]}
        )
    with pytest.raises(ValueError, match="https"):
        JWTIdentity(issuer=ISSUER, audience=AUDIENCE, jwks_url="http://auth.example/jwks")
    with pytest.raises(ValueError, match="'\\|'"):
        JWTIdentity(issuer="https://a|b", audience=AUDIENCE, jwks={"keys": [rsa.jwk]})
    with pytest.raises(ValueError, match="audience"):
        JWTIdentity(issuer=ISSUER, audience="", jwks={"keys": [rsa.jwk]})


@pytest.mark.parametrize("alg", ["PS256", "PS384", "PS512", "RS384", "RS512", "ES384", "ES512", "EdDSA-448"])
async def test_other_supported_algorithms(alg: str, rsa: SigningKey, clock: FakeClock) -> None:
    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec as ec_mod
    from cryptography.hazmat.primitives.asymmetric import ed448
    from identity_support import _jwk

    private: object
    if alg.startswith(("PS", "RS")):
        private = rsa.private
    elif alg == "ES384":
        private = ec_mod.generate_private_key(ec_mod.SECP384R1())
    elif alg == "ES512":
        private = ec_mod.generate_private_key(ec_mod.SECP521R1())
    else:
        private = ed448.Ed448PrivateKey.generate()
    name = "EdDSA" if alg == "EdDSA-448" else alg
    jwk = _jwk(private.public_key(), "k", name)  # type: ignore[attr-defined]
    verifier = JWTIdentity(issuer=ISSUER, audience=AUDIENCE, jwks=[jwk], algorithms=[name], clock=clock)
    token = jwt.encode(claims(), private, algorithm=name, headers={"kid": "k"})  # type: ignore[arg-type]
    assert (await verifier.verify(token)).subject == "alice"
    # The same key under another algorithm of its family is not accepted (the JWK pins its alg).
    other = {"PS256": "RS256", "RS384": "PS384"}.get(name)
    if other is not None:
        wide = JWTIdentity(
            issuer=ISSUER, audience=AUDIENCE, jwks=[jwk], algorithms=[name, other], clock=clock
        )
        forged = jwt.encode(claims(), private, algorithm=other, headers={"kid": "k"})  # type: ignore[arg-type]
        assert await refused(wide, forged) == "no-matching-key"


async def test_jwks_keys_without_kid(rsa: SigningKey, ec: SigningKey, clock: FakeClock) -> None:
    bare = {k: v for k, v in rsa.jwk.items() if k != "kid"}
    verifier = JWTIdentity(issuer=ISSUER, audience=AUDIENCE, jwks=[bare, ec.jwk], clock=clock)
    assert (await verifier.verify(rsa.mint(claims()))).subject == "alice"  # token names "rsa-1"
    assert (await verifier.verify(rsa.mint_raw({"alg": "RS256"}, claims()))).subject == "alice"
    assert (await verifier.verify(ec.mint(claims()))).subject == "alice"
    # A kid that no key has, and a signature by another key: still refused.
    assert await refused(verifier, ec.mint(claims(), headers={"kid": "nope"})) == "no-matching-key"
