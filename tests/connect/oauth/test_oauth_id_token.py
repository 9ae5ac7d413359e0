"""ID token validation (OIDC Core §3.1.3.7) on tokens minted here with PyJWT, an implementation
independent of the validator; hostile ones (alg none, HS256 with the public key) by hand."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from oauth_support import REDIRECT_URI, Answer, ScriptedServer, scripted_provider, token_body

from mcp_elicit.connect.identity import JWKSCache
from mcp_elicit.connect.oauth import AuthorizationCodeGrant, AuthorizationFailed
from mcp_elicit.connect.oauth.id_token import IdTokenValidator

ISSUER = "https://github.example"
CLIENT = "client-1"
NOW = 1_800_000_000.0
NONCE = "n" * 43
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
JWK = RSAAlgorithm.to_jwk(KEY.public_key(), as_dict=True) | {"kid": "k1", "alg": "RS256", "use": "sig"}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _claims(**changes: Any) -> dict[str, Any]:
    claims = {"iss": ISSUER, "aud": CLIENT, "sub": "alice", "exp": NOW + 300, "iat": NOW, "nonce": NONCE}
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def _mint(claims: dict[str, Any], *, key: Any = KEY, alg: str = "RS256", **headers: Any) -> str:
    return jwt.encode(claims, key, algorithm=alg, headers={"kid": "k1", **headers})


def _validator(**changes: Any) -> IdTokenValidator:
    options: dict[str, Any] = {
        "issuer": ISSUER,
        "client_id": CLIENT,
        "jwks": JWKSCache(static={"keys": [JWK]}),
        "clock": lambda: NOW,
    }
    options.update(changes)
    return IdTokenValidator(**options)


async def _detail(token: str, *, nonce: str | None = NONCE, access_token: str | None = None) -> str | None:
    with pytest.raises(AuthorizationFailed) as info:
        await _validator().validate(token, nonce=nonce, access_token=access_token)
    assert info.value.reason == "id-token"
    return info.value.detail


async def test_valid() -> None:
    claims = await _validator().validate(_mint(_claims()), nonce=NONCE, access_token=None)
    assert claims["sub"] == "alice"


async def test_several_audiences_need_azp() -> None:
    token = _mint(_claims(aud=[CLIENT, "other"], azp=CLIENT))
    assert (await _validator().validate(token, nonce=NONCE, access_token=None))["azp"] == CLIENT
    assert await _detail(_mint(_claims(aud=[CLIENT, "other"]))) == "azp"
    assert await _detail(_mint(_claims(aud=[CLIENT, "other"], azp="other"))) == "azp"
    assert await _detail(_mint(_claims(azp="other"))) == "azp"


@pytest.mark.parametrize(
    ("changes", "detail"),
    [
        ({"iss": ISSUER + "/"}, "issuer"),
        ({"iss": None}, "issuer"),
        ({"aud": "other"}, "audience"),
        ({"aud": []}, "audience"),
        ({"aud": None}, "audience"),
        ({"exp": NOW - 61}, "expired"),
        ({"exp": None}, "exp-missing"),
        ({"exp": "later"}, "exp-not-a-number"),
        ({"iat": NOW + 61}, "issued-in-future"),
        ({"iat": None}, "iat-missing"),
        ({"nbf": NOW + 61}, "not-yet-valid"),
        ({"nonce": "m" * 43}, "nonce"),
        ({"nonce": None}, "nonce"),
        ({"sub": ""}, "subject"),
        ({"sub": None}, "subject"),
        ({"sub": "x" * 256}, "subject"),
    ],
)
async def test_claims(changes: dict[str, Any], detail: str) -> None:
    assert await _detail(_mint(_claims(**changes))) == detail


async def test_leeway_accepts_small_skew() -> None:
    token = _mint(_claims(exp=NOW - 30, iat=NOW + 30))
    await _validator().validate(token, nonce=NONCE, access_token=None)


async def test_signature_and_keys() -> None:
    assert await _detail(_mint(_claims(), key=OTHER_KEY)) == "bad-signature"
    assert await _detail(_mint(_claims(), kid="unknown")) == "unknown-kid"
    assert await _detail("not.a.jwt!") == "malformed"
    assert await _detail("x" * 20_000) == "too-large"
    assert await _detail(_mint(_claims(), crit=["exp"])) == "bad-header"


async def test_alg_none_and_hmac_confusion() -> None:
    payload = _b64(json.dumps(_claims()).encode())
    none = f"{_b64(json.dumps({'alg': 'none', 'kid': 'k1'}).encode())}.{payload}."
    assert await _detail(none) == "alg-not-allowed"
    pem = KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    head = _b64(json.dumps({"alg": "HS256", "kid": "k1"}).encode())
    signature = hmac.new(pem, f"{head}.{payload}".encode(), hashlib.sha256).digest()
    assert await _detail(f"{head}.{payload}.{_b64(signature)}") == "alg-not-allowed"


async def test_alg_outside_the_allow_list() -> None:
    validator = _validator(algorithms=("ES256",))
    with pytest.raises(AuthorizationFailed) as info:
        await validator.validate(_mint(_claims()), nonce=NONCE, access_token=None)
    assert info.value.detail == "alg-not-allowed"
    with pytest.raises(ValueError, match="not allowed"):
        _validator(algorithms=("HS256",))


async def test_at_hash() -> None:
    access = "the-access-token"
    digest = hashlib.sha256(access.encode()).digest()
    good = _mint(_claims(at_hash=_b64(digest[:16])))
    await _validator().validate(good, nonce=NONCE, access_token=access)
    assert await _detail(good, access_token="another-access-token") == "at_hash"


async def test_flow_requires_and_checks_the_id_token(server: ScriptedServer) -> None:
    provider = scripted_provider(
        server, issuer=ISSUER, openid=True, jwks_url=f"{server.base}/jwks", scopes=()
    )
    flow = AuthorizationCodeGrant(
        provider, REDIRECT_URI, clock=lambda: NOW, jwks=JWKSCache(static={"keys": [JWK]})
    )

    async def finish(body: dict[str, Any]) -> Any:
        server.routes["/token"] = Answer(body=body)
        _, pending = flow.begin()
        params = {"code": "c", "state": pending.state, "iss": ISSUER}
        return pending, await flow.finish(pending, params, provider_in_path="github")

    with pytest.raises(AuthorizationFailed) as info:
        await finish(token_body())
    assert (info.value.reason, info.value.detail) == ("id-token", "missing")
    with pytest.raises(AuthorizationFailed) as info:
        await finish(token_body(id_token=_mint(_claims())))  # the nonce is not this flow's
    assert (info.value.reason, info.value.detail) == ("id-token", "nonce")

    server.routes["/token"] = lambda request: Answer(
        body=token_body(scope=None, id_token=_mint(_claims(nonce=nonces[-1])))
    )
    nonces: list[str] = []
    _, pending = flow.begin()
    assert pending.nonce is not None
    nonces.append(pending.nonce)
    grant = await flow.finish(
        pending, {"code": "c", "state": pending.state, "iss": ISSUER}, provider_in_path="github"
    )
    assert grant.subject == "alice"
    assert grant.scopes == ("openid",)


async def test_jwks_unavailable(server: ScriptedServer) -> None:
    server.routes["/jwks"] = Answer(503)
    server.routes["/token"] = Answer(body=token_body(id_token=_mint(_claims())))
    provider = scripted_provider(server, issuer=ISSUER, openid=True, jwks_url=f"{server.base}/jwks")
    flow = AuthorizationCodeGrant(provider, REDIRECT_URI, clock=lambda: NOW)
    _, pending = flow.begin()
    with pytest.raises(AuthorizationFailed) as info:
        await flow.finish(
            pending, {"code": "c", "state": pending.state, "iss": ISSUER}, provider_in_path="github"
        )
    assert info.value.reason == "jwks-unavailable"
