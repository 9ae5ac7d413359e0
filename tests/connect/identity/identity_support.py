"""Helpers for the identity tests: keys, token minting, a real JWKS server on 127.0.0.1.

Ordinary tokens are minted with PyJWT (an implementation independent of the verifier under test);
the hostile ones (``alg: none``, HS256 signed with the RSA public key) are built by hand, because
PyJWT rightly refuses to make them.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm
from tests.helpers import FakeClock as FakeClock

ISSUER = "https://auth.example.test"
AUDIENCE = "https://mcp.example.test/mcp"
NOW = 1_800_000_000.0


@dataclass(frozen=True)
class SigningKey:
    kid: str
    alg: str
    private: Any
    jwk: dict[str, Any]

    def mint(self, claims: dict[str, Any], *, headers: dict[str, Any] | None = None) -> str:
        head = {"kid": self.kid, **(headers or {})}
        return jwt.encode(claims, self.private, algorithm=self.alg, headers=head)

    def mint_raw(self, header: dict[str, Any], payload: dict[str, Any]) -> str:
        """Sign exactly this header and payload (RS256 keys only): for values PyJWT won't encode."""
        return self.mint_bytes(json.dumps(header).encode(), json.dumps(payload).encode())

    def mint_bytes(self, header: bytes, payload: bytes) -> str:
        """Sign exactly these header and payload bytes (RS256 keys only): for JSON that no encoder
        writes (duplicate member names, another character encoding)."""
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        signing_input = f"{b64(header)}.{b64(payload)}"
        signature = self.private.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing_input}.{b64(signature)}"


def _jwk(public: Any, kid: str, alg: str) -> dict[str, Any]:
    if isinstance(public, rsa.RSAPublicKey):
        data = RSAAlgorithm.to_jwk(public, as_dict=True)
    elif isinstance(public, ec.EllipticCurvePublicKey):
        data = ECAlgorithm.to_jwk(public, as_dict=True)
    else:
        data = OKPAlgorithm.to_jwk(public, as_dict=True)
    data.update({"kid": kid, "use": "sig", "alg": alg})
    return data


def rsa_key(kid: str = "rsa-1") -> SigningKey:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return SigningKey(kid, "RS256", private, _jwk(private.public_key(), kid, "RS256"))


def ec_key(kid: str = "ec-1") -> SigningKey:
    private = ec.generate_private_key(ec.SECP256R1())
    return SigningKey(kid, "ES256", private, _jwk(private.public_key(), kid, "ES256"))


def ed_key(kid: str = "ed-1") -> SigningKey:
    private = ed25519.Ed25519PrivateKey.generate()
    return SigningKey(kid, "EdDSA", private, _jwk(private.public_key(), kid, "EdDSA"))


def claims(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "alice",
        "exp": int(NOW) + 600,
        "iat": int(NOW) - 10,
        "nbf": int(NOW) - 10,
        "client_id": "client-123",
        "scope": "mcp:tools files:read",
    }
    for key, value in overrides.items():
        if value is ...:
            base.pop(key, None)
        else:
            base[key] = value
    return base


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hand_made(header: dict[str, Any], payload: dict[str, Any], signature: bytes = b"") -> str:
    return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(payload).encode())}.{b64(signature)}"


def hs256_with_public_key(key: SigningKey, payload: dict[str, Any]) -> list[str]:
    """The algorithm-confusion attack: HS256 tokens whose HMAC secret is the RSA public key, in
    every encoding a vulnerable verifier might use as the secret (PEM, DER, the JWK JSON)."""
    public = key.private.public_key()
    secrets = [
        public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo),
        public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.PKCS1),
        public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo),
        json.dumps(key.jwk).encode(),
    ]
    header = {"alg": "HS256", "typ": "JWT", "kid": key.kid}
    tokens = []
    for secret in secrets:
        head = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(payload).encode())}"
        mac = hmac.new(secret, head.encode(), hashlib.sha256).digest()
        tokens.append(f"{head}.{b64(mac)}")
    return tokens


# ------------------------------------------------------------------------------ servers


@dataclass
class JwksState:
    keys: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    seen_headers: list[dict[str, str]] = field(default_factory=list)
    status: int = 200
    delay: float = 0.0


def jwks_app(state: JwksState) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        state.requests += 1
        state.seen_headers.append({k.decode(): v.decode() for k, v in scope["headers"]})
        if state.delay:
            import asyncio

            await asyncio.sleep(state.delay)
        body = json.dumps({"keys": state.keys}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": state.status,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})

    return app


class SilentServer:
    """A socket on 127.0.0.1 that listens but never accepts or answers (a hung IdP)."""

    def __enter__(self) -> SilentServer:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
