"""Any bearer token, any Authorization header, any JWKS: a property test of token verification.

Hypothesis plays a hostile client and a broken identity provider against :class:`JWTIdentity`
with real keys, real signatures and a real JWKS endpoint on 127.0.0.1:

* any string as a token: random text, a real token with one part changed (a character replaced,
  inserted or removed, padding, whitespace, segments reordered, doubled, spliced from another
  token, standard base64, far too long);
* tokens really signed (by a published key, a forger's key claiming the same ``kid``, HS256 with
  the RSA public key as the secret, ``none``, garbage) over any header (any ``alg``, ``kid``
  missing, unknown, of another key or not a string, ``jwk`` / ``jku`` / ``x5u`` / ``crit`` /
  ``b64`` / ``typ`` / any member, duplicate names, a BOM, not UTF-8, NaN) and any claims (``iss``,
  ``aud``, ``exp``, ``nbf``, ``iat``, ``sub`` of any JSON type or value, missing, duplicated);
  an oracle written from the documented rules says which of them are really valid;
* any ``Authorization`` header, given straight to :func:`authenticator` and sent through the real
  MCP endpoint (no header, several: refused with 400, another scheme, any case of ``Bearer``, tabs,
  two spaces);
* any JWKS answer: any JSON or none, keys of every type, curve and size, broken, private,
  symmetric, duplicated ``kid``, more keys than allowed, a body over the size limit (plain or
  gzip), redirects and errors, an answer that comes too late or stalls halfway.

Every refused token is :class:`InvalidToken` with the one public message (a ``401`` with the
exact ``WWW-Authenticate`` challenge over HTTP), an unusable JWKS is :class:`IdentityUnavailable`
(a ``503``, never a 401), nothing else is ever raised, every call ends within a bound, a token is
accepted exactly when it is really valid (with the documented principal), and the JWKS request
never carries credentials or the token. ``pytest --hypothesis-show-statistics`` shows what the
examples reached.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import hmac
import itertools
import json
import math
import string
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, get_args

import httpx
import jwt
import orjson
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec as ec_mod
from cryptography.hazmat.primitives.asymmetric import ed448, x25519
from cryptography.hazmat.primitives.asymmetric import rsa as rsa_mod
from hypothesis import currently_in_test_context, event, given, note
from hypothesis import strategies as st
from identity_support import AUDIENCE, ISSUER, NOW, FakeClock, JwksState, SigningKey, _jwk, b64, claims
from test_identity_http import call, live_claims, make_server
from tests.helpers import InProcessServer, bound_socket, no_errors_logged
from tests.strategies import fuzz_settings, json_values

from mcp_elicit.connect.identity import (
    INVALID_TOKEN_MESSAGE,
    IdentityUnavailable,
    InvalidToken,
    JWTIdentity,
    Principal,
    TokenRejectReason,
    authenticator,
    resource_metadata_url,
)
from mcp_elicit.connect.identity.http import INVALID_TOKEN_PUBLIC, MISSING_TOKEN_MESSAGE
from mcp_elicit.connect.identity.jwks import MAX_JWKS_BYTES, MAX_KEYS
from mcp_elicit.server.auth import Caller, Unauthorized

WITHIN = 5.0
"""Every verification ends (one way or the other) within this many seconds."""
LEEWAY = 30.0
REASONS = frozenset(get_args(TokenRejectReason))
B64URL = string.ascii_letters + string.digits + "-_"
PUBLISHED_ALG = {"rsa-1": "RS256", "ec-1": "ES256", "ed-1": "EdDSA"}

SCALE = 1
"""Raise (e.g. to 20) for a long local hunt; CI runs the whole file in a few seconds."""


def record(label: str) -> None:
    """``hypothesis.event`` inside a property (the statistics); nothing in a plain test."""
    if currently_in_test_context():
        event(label)


async def outcome(verify: Any, token: str) -> Principal | InvalidToken:
    """What ``verify(token)`` gives: the principal or the ``InvalidToken``; anything else (another
    exception, no answer within ``WITHIN``) escapes and fails the test."""
    try:
        principal = await asyncio.wait_for(verify(token), WITHIN)
    except InvalidToken as exc:
        refused = exc
    else:
        assert isinstance(principal, Principal)
        record("accepted")
        return principal
    assert str(refused) == INVALID_TOKEN_MESSAGE  # one public message, never the reason
    assert refused.reason in REASONS
    if len(token) >= 16:
        assert token not in repr(refused)
    record(f"refused: {refused.reason}")
    return refused


def verifier(jwks_url: str, clock: FakeClock, **options: Any) -> JWTIdentity:
    return JWTIdentity(issuer=ISSUER, audience=AUDIENCE, jwks_url=jwks_url, clock=clock, **options)


@pytest.fixture
def identity(jwks_url: str, clock: FakeClock) -> JWTIdentity:
    """One verifier for all the examples of a property, as in a running server. The clock stands
    still, so the JWKS is fetched once: a refresh for an unknown kid waits for an interval that
    never passes."""
    return verifier(jwks_url, clock)


# ------------------------------------------------------------------------------ any string


ODD_CHARACTERS = [
    *B64URL,
    ".",
    "=",
    "+",
    "/",
    " ",
    "\t",
    "\n",
    "\x00",
    "é",
    "€",
    "\u2028",
    "\ufeff",
    "\ud800",
]


def mutations(token: str, other: str) -> st.SearchStrategy[tuple[str, str]]:
    """``token`` with one thing changed, labelled."""
    segments = token.split(".")
    index = st.integers(0, len(token) - 1)
    odd = st.sampled_from(ODD_CHARACTERS)

    def with_segment(i: int, value: str) -> str:
        return ".".join(value if j == i else part for j, part in enumerate(segments))

    def spliced(i: int) -> str:
        return with_segment(i, other.split(".")[i])

    return st.one_of(
        st.tuples(index, odd).map(
            lambda a: ("replace a character", token[: a[0]] + a[1] + token[a[0] + 1 :])
        ),
        st.tuples(index, odd).map(lambda a: ("insert a character", token[: a[0]] + a[1] + token[a[0] :])),
        index.map(lambda i: ("delete a character", token[:i] + token[i + 1 :])),
        index.map(lambda i: ("truncate", token[:i])),
        st.tuples(st.integers(0, 2), st.integers(1, 3)).map(
            lambda a: ("padding", with_segment(a[0], segments[a[0]] + "=" * a[1]))
        ),
        st.integers(0, 2).map(lambda i: ("swap case", with_segment(i, segments[i].swapcase()))),
        st.integers(0, 2).map(lambda i: ("empty segment", with_segment(i, ""))),
        st.integers(0, 2).map(lambda i: ("segment of another token", spliced(i))),
        st.permutations(segments).map(lambda p: ("segments reordered", ".".join(p))),
        st.text(B64URL, max_size=40).map(lambda s: ("extra segment", f"{token}.{s}")),
        st.sampled_from([" ", "\t", "\n", "\r\n", "\xa0", "\u3000"]).flatmap(
            lambda ws: st.sampled_from(
                [(f"whitespace {ws!r}", ws + token), (f"whitespace {ws!r}", token + ws)]
            )
        ),
        st.just(("standard base64", token.replace("-", "+").replace("_", "/"))),
        st.just(("doubled", f"{token}.{token}")),
        st.just(("doubled dots", token.replace(".", ".."))),
        st.just(("with scheme", f"Bearer {token}")),
        st.integers(16 * 1024 - len(token) - 4, 70_000).map(lambda n: ("very long", token + "A" * n)),
    )


def any_strings(valid: list[str]) -> st.SearchStrategy[tuple[str, str]]:
    segment = st.text(B64URL, max_size=60)
    return st.one_of(
        st.text(max_size=200).map(lambda s: ("any text", s)),
        st.text(B64URL + ".=", max_size=300).map(lambda s: ("base64url and dots", s)),
        st.tuples(segment, segment, segment).map(lambda s: ("three random segments", ".".join(s))),
        st.tuples(json_values, json_values, st.binary(max_size=80)).map(
            lambda p: (
                "random JSON header and payload",
                ".".join([b64(json.dumps(p[0]).encode()), b64(json.dumps(p[1]).encode()), b64(p[2])]),
            )
        ),
        st.tuples(st.integers(0, len(valid) - 1), st.integers(0, len(valid) - 1)).flatmap(
            lambda i: mutations(valid[i[0]], valid[i[1]])
        ),
    )


@fuzz_settings(250 * SCALE)
@given(data=st.data())
async def test_any_string_is_refused_with_invalid_token(
    data: st.DataObject,
    identity: JWTIdentity,
    jwks_state: JwksState,
    rsa: SigningKey,
    ec: SigningKey,
    ed: SigningKey,
) -> None:
    valid = [key.mint(claims()) for key in (rsa, ec, ed)]
    label, token = data.draw(any_strings(valid), label="token")
    event(label)
    if token in valid:  # a "mutation" that changed nothing (a permutation in order, ...)
        assert (await outcome(identity.verify, token)) == Principal(ISSUER, "alice")
        return
    assert isinstance(await outcome(identity.verify, token), InvalidToken)
    assert jwks_state.requests <= 1


async def test_the_untouched_tokens_are_accepted(
    identity: JWTIdentity, rsa: SigningKey, ec: SigningKey, ed: SigningKey
) -> None:
    """The other side of the property above: the very tokens it changes are valid."""
    for key in (rsa, ec, ed):
        principal = await outcome(identity.verify, key.mint(claims()))
        assert principal == Principal(ISSUER, "alice")
        assert isinstance(principal, Principal)
        assert principal.key == f"{ISSUER}|alice"
        assert principal.client_id == "client-123"


# ------------------------------------------------------------------------------ really signed


@dataclass
class Crafted:
    """A token and whether the documented rules make it valid (then for ``subject``)."""

    token: str
    valid: bool
    subject: object = None


def _number(value: object) -> float | None:
    """A JSON number as the documented rules read it (bool is not a number; no infinity)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer of 309 digits or more
        return None
    return number if math.isfinite(number) else None


def usable_subject(sub: object) -> bool:
    """The principal rules (principal.py): a non-empty str of at most 1024 characters, without
    control characters or lone surrogates."""
    return (
        isinstance(sub, str)
        and 0 < len(sub) <= 1024
        and not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or 0xD800 <= ord(c) <= 0xDFFF for c in sub)
    )


def claims_valid(payload: Mapping[str, Any]) -> bool:
    """The claim rules of jwt_identity.py's docstring, at ``NOW`` with ``LEEWAY``."""
    if payload.get("iss") != ISSUER or not isinstance(payload.get("iss"), str):
        return False
    aud = payload.get("aud")
    if isinstance(aud, str):
        audiences = [aud]
    elif isinstance(aud, list) and all(isinstance(a, str) for a in aud):
        audiences = aud
    else:
        return False
    if AUDIENCE not in audiences:
        return False
    exp = _number(payload.get("exp"))
    if exp is None or exp + LEEWAY <= NOW:
        return False
    for name in ("nbf", "iat"):
        if name in payload:
            value = _number(payload[name])
            if value is None or value > NOW + LEEWAY:
                return False
    return usable_subject(payload.get("sub"))


ALGORITHM_NAMES = [
    "RS256",
    "ES256",
    "EdDSA",
    "PS256",
    "RS512",
    "ES384",
    "none",
    "None",
    "HS256",
    "RS1",
    "",
    "rs256",
]
TIMES = st.one_of(
    st.integers(int(NOW) - 3600, int(NOW) + 3600),
    st.floats(NOW - 3600, NOW + 3600),
    st.integers(-(2**70), 2**70),
    st.integers(300, 400).map(lambda k: 10**k),  # beyond any float
    st.sampled_from([0, -1, 1e308, -1e308, 5e-324, 2**63, 2**64, True, False, None]),
    st.sampled_from([int(NOW) + 600, int(NOW) - 600]).map(str),
    json_values,
)
CLAIM_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "iss": st.sampled_from([ISSUER, ISSUER + "/", ISSUER.upper(), "https://evil.example", "", " " + ISSUER])
    | st.text(max_size=40)
    | json_values,
    "aud": st.sampled_from(
        [
            AUDIENCE,
            [AUDIENCE],
            ["https://other.example/mcp", AUDIENCE],
            [AUDIENCE, 7],
            [AUDIENCE, None],
            [],
            AUDIENCE + "/",
            AUDIENCE.upper(),
            {"aud": AUDIENCE},
        ]
    )
    | st.lists(st.text(max_size=30), max_size=3)
    | json_values,
    "exp": TIMES,
    "nbf": TIMES,
    "iat": TIMES,
    "sub": st.sampled_from(["alice", "auth0|1234", "", "a" * 1024, "a" * 1025, "bad\nsubject", "x\x85", "é"])
    | st.text(max_size=60)
    | json_values,
}


def beyond_double(value: object) -> bool:
    """Whether ``value`` holds a number no double can hold (10**309...). RFC 8259 §6 lets a parser
    refuse it, and the library's codec does: such a payload is not read at all."""
    if isinstance(value, dict):
        return any(beyond_double(v) for v in value.values())
    if isinstance(value, list):
        return any(beyond_double(v) for v in value)
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            float(value)
        except OverflowError:
            return True
    return False


@st.composite
def payloads(draw: st.DrawFn, plan: str) -> tuple[bytes, dict[str, Any] | None]:
    """The payload bytes and the claims a JSON parser keeping the last duplicate reads (RFC 7519
    §4), or None when the bytes are not a JSON object of JSON that parsers agree on."""
    base = claims()
    if plan in ("claims", "anything"):
        for name, values in CLAIM_VALUES.items():
            how = draw(st.sampled_from(["keep", "keep", "drop", "replace"]), label=f"{name}: how")
            if how == "drop":
                base.pop(name)
            elif how == "replace":
                base[name] = draw(values, label=name)
            if how != "keep":
                event(f"claim {name}: {how}")
    elif plan == "valid":  # benign variations of a valid token
        if draw(st.booleans()):
            base["aud"] = ["https://other.example/api", AUDIENCE]
        base["exp"] = draw(st.integers(int(NOW) - 29, int(NOW) + 10**9) | st.floats(NOW - 29, 1e12))
        for name in ("nbf", "iat"):
            choice = draw(st.sampled_from(["drop", "int", "float"]))
            if choice == "drop":
                base.pop(name)
            else:
                base[name] = draw(
                    st.floats(0, NOW + 29) if choice == "float" else st.integers(0, int(NOW) + 29)
                )
        base["sub"] = draw(
            st.text(st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=40)
            | st.just("auth0|1234")
        )
    if plan in ("valid", "claims", "anything"):
        extra = draw(
            st.dictionaries(
                st.text(max_size=10).filter(lambda k: k not in CLAIM_VALUES), json_values, max_size=3
            ),
            label="extra claims",
        )
        base.update(extra)
    encoding = "json"
    if plan in ("encoding", "anything"):
        encoding = draw(
            st.sampled_from(
                ["json", "duplicate", "array", "not json", "latin-1", "infinity", "lone surrogate", "BOM"]
            ),
            label="payload encoding",
        )
        event(f"payload encoding: {encoding}")
    body = json.dumps(base)
    if encoding == "json":
        return body.encode(), None if beyond_double(base) else base
    if encoding == "duplicate":
        decoy = draw(st.sampled_from(["sub", "iss", "aud", "exp"]))
        value = draw(CLAIM_VALUES[decoy])
        unreadable = beyond_double(base) or beyond_double(value)
        # The decoy first, the real member last; and the reverse: the last one counts either way.
        if draw(st.booleans()):
            raw = f'{{"{decoy}": {json.dumps(value)}, {body[1:]}'
            return raw.encode(), None if unreadable else {decoy: value, **base}
        raw = f'{body[:-1]}, "{decoy}": {json.dumps(value)}}}'
        return raw.encode(), None if unreadable else {**base, decoy: value}
    if encoding == "array":
        return json.dumps([base]).encode(), None
    if encoding == "not json":
        return body[:-1].encode(), None
    if encoding == "latin-1":
        return body[:-1].encode() + b', "name": "Zo\xeb"}', None  # not UTF-8
    if encoding == "infinity":
        return body.replace('"exp": ', '"exp": 1e999, "x": ', 1).encode(), None
    if encoding == "lone surrogate":
        return (body[:-1] + ', "x": "\\ud800"}').encode(), None
    return b"\xef\xbb\xbf" + body.encode(), None  # a BOM


@st.composite
def crafted_tokens(draw: st.DrawFn, keys: Mapping[str, SigningKey]) -> Crafted:
    plan = draw(st.sampled_from(["valid", "valid", "header", "claims", "signature", "encoding", "anything"]))
    event(f"plan: {plan}")
    choices = ["rsa", "ec", "ed"]
    if plan in ("signature", "anything"):
        choices += ["forger", "hmac with the public key", "none", "garbage"]
    signer = draw(st.sampled_from(choices), label="signer")
    sig_alg = {"rsa": "RS256", "ec": "ES256", "ed": "EdDSA", "forger": "RS256", "none": "none"}.get(
        signer, "HS256"
    )
    if signer == "garbage":
        sig_alg = draw(st.sampled_from(ALGORITHM_NAMES), label="garbage's alg")
    if signer == "rsa" and plan in ("signature", "anything"):
        sig_alg = draw(st.sampled_from(["RS256", "RS256", "PS256", "RS512"]), label="RSA algorithm")
    own_kid = {"ec": "ec-1", "ed": "ed-1"}.get(signer, "rsa-1")  # the forger claims the real kid

    header: dict[str, Any] = {"alg": sig_alg}
    kid_how = "own"
    if plan in ("header", "anything"):
        if draw(st.integers(0, 3), label="alg changed") == 0:
            header["alg"] = draw(st.sampled_from(ALGORITHM_NAMES) | json_values, label="alg")
        kid_how = draw(
            st.sampled_from(
                ["own", "own", "absent", "another key's", "unknown", "not a string", "very long"]
            ),
            label="kid",
        )
        event(f"kid: {kid_how}")
    elif plan == "valid":
        kid_how = draw(st.sampled_from(["own", "absent"]), label="kid")
    kid_values: dict[str, st.SearchStrategy[Any]] = {
        "own": st.just(own_kid),
        "another key's": st.sampled_from(sorted(set(PUBLISHED_ALG) - {own_kid})),
        "unknown": st.text(max_size=20).filter(lambda k: k not in PUBLISHED_ALG),
        "not a string": json_values.filter(lambda v: not isinstance(v, str)),
        "very long": st.integers(100, 2000).map(lambda n: "k" * n),
    }
    if kid_how != "absent":
        header["kid"] = draw(kid_values[kid_how], label="kid value")
    if plan in ("valid", "header", "anything"):
        key_pointers = {
            "jwk": keys["forger"].jwk,
            "jku": "http://127.0.0.1:1/jwks.json",
            "x5u": "http://127.0.0.1:1/cert.pem",
            "x5c": ["MIIB"],
            "typ": "JWT",
        }
        names = st.sampled_from([*key_pointers, "typ", "cty", "zip", "nonce"])
        if plan != "valid":
            names |= st.sampled_from(["crit", "b64"]) | st.text(max_size=8)
        extra = draw(
            st.dictionaries(
                names.filter(lambda n: n not in ("alg", "kid")),
                st.sampled_from(list(key_pointers.values())) | json_values,
                max_size=3,
            ),
            label="header members",
        )
        header.update(extra)
        for name in extra:
            event(f"header member {name if name in key_pointers or name in ('crit', 'b64') else 'other'}")
    header_encoding = "json"
    if plan in ("encoding", "anything"):
        header_encoding = draw(
            st.sampled_from(
                ["json", "compact", "duplicate alg", "BOM", "latin-1", "array", "NaN", "not json"]
            ),
            label="header encoding",
        )
        event(f"header encoding: {header_encoding}")
    header_json = json.dumps(header)
    header_bytes = {
        "json": header_json.encode(),
        "compact": json.dumps(header, separators=(",", ":")).encode(),
        "duplicate alg": ('{"alg": "none", ' + header_json[1:]).encode(),
        "BOM": b"\xef\xbb\xbf" + header_json.encode(),
        "latin-1": header_json[:-1].encode() + b', "x": "\xe9"}',  # not UTF-8
        "array": json.dumps([header]).encode(),
        "NaN": (header_json[:-1] + ', "x": NaN}').encode(),
        "not json": header_json[:-1].encode(),
    }[header_encoding]
    payload_bytes, payload = draw(payloads(plan))

    signing_input = f"{b64(header_bytes)}.{b64(payload_bytes)}".encode()
    if signer in keys:
        signature = jwt.get_algorithm_by_name(sig_alg).sign(signing_input, keys[signer].private)
    elif signer == "hmac with the public key":  # the algorithm-confusion attack
        public = (
            keys["rsa"]
            .private.public_key()
            .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        )
        signature = hmac.new(public, signing_input, hashlib.sha256).digest()
    elif signer == "none":
        signature = b""
    else:
        signature = draw(st.binary(max_size=600), label="garbage signature")
    token = f"{signing_input.decode()}.{b64(signature)}"

    header_ok = (
        header_encoding in ("json", "compact")
        and signer in ("rsa", "ec", "ed")
        and header.get("alg") == sig_alg == PUBLISHED_ALG[own_kid]
        and kid_how in ("own", "absent")
        and "crit" not in header
        and "b64" not in header
    )
    valid = header_ok and payload is not None and claims_valid(payload)
    event(f"valid: {valid}")
    return Crafted(token, valid, payload.get("sub") if payload is not None else None)


@fuzz_settings(250 * SCALE)
@given(data=st.data())
async def test_a_signed_token_is_accepted_exactly_when_it_is_valid(
    data: st.DataObject,
    identity: JWTIdentity,
    jwks_state: JwksState,
    rsa: SigningKey,
    rsa_other: SigningKey,
    ec: SigningKey,
    ed: SigningKey,
) -> None:
    keys = {"rsa": rsa, "ec": ec, "ed": ed, "forger": rsa_other}
    crafted = data.draw(crafted_tokens(keys), label="token")
    result = await outcome(identity.verify, crafted.token)
    if crafted.valid:
        assert isinstance(result, Principal), result
        assert result == Principal(ISSUER, str(crafted.subject))
        assert result.key == f"{ISSUER}|{crafted.subject}"
    else:
        assert isinstance(result, InvalidToken), result
    # Keys come from the JWKS alone (a jwk / jku / x5u in the token is never fetched), and the
    # one fetch carries no credentials.
    assert jwks_state.requests == identity.jwks.fetches <= 1
    assert all("authorization" not in headers for headers in jwks_state.seen_headers)


# ------------------------------------------------------------------------------ Authorization


METADATA_URL = "https://mcp.example.test/.well-known/oauth-protected-resource/mcp"
MISSING = f'Bearer resource_metadata="{METADATA_URL}"'
INVALID = (
    'Bearer error="invalid_token", error_description="The access token is invalid or expired", '
    f'resource_metadata="{METADATA_URL}"'
)
SCHEMES = ["Bearer", "bearer", "BEARER", "bEaReR", "Basic", "Token", "DPoP", "Bearerr", "Bear", "Bearer:", ""]
SEPARATORS = [" ", "  ", "\t", " \t", "", ",", ":", "\xa0"]
OWS = ["", " ", "\t", " \t "]


@dataclass
class Authorization:
    """One Authorization value built from parts, so the expected answer is known."""

    scheme: str
    separator: str
    credential: str
    credential_valid: bool
    before: str = ""
    after: str = ""

    @property
    def value(self) -> str:
        return f"{self.before}{self.scheme}{self.separator}{self.credential}{self.after}"

    @property
    def accepted(self) -> bool:
        """RFC 6750 §2.1: ``Bearer`` (any case) 1*SP b64token, optional whitespace around."""
        return (
            self.scheme.lower() == "bearer"
            and self.separator.strip(" ") == ""
            and self.separator != ""
            and self.credential_valid
        )

    @property
    def challenge(self) -> str | None:
        """The challenge the documented rules fix for a refused value, when they fix one: a
        ``Bearer`` token that is not valid gets ``error="invalid_token"``, another scheme (or
        none) the bare challenge (RFC 6750 §3.1)."""
        if self.accepted or self.separator.strip(" \t") or not self.separator or not self.credential.strip():
            return None  # no clear scheme / credential split: only "a 401" is fixed
        if not self.scheme or any(c in self.scheme for c in ":,"):
            return None  # not an auth-scheme token (RFC 7235)
        return INVALID if self.scheme.lower() == "bearer" else MISSING


def credentials(good: str, header_safe: bool) -> st.SearchStrategy[tuple[str, bool]]:
    alphabet = st.characters(min_codepoint=0x21, max_codepoint=0x7E) | st.sampled_from("éÿ\xa0")
    if not header_safe:
        alphabet |= st.characters()
    return st.one_of(
        st.just((good, True)),
        st.just((good, True)),
        st.sampled_from(ODD_CHARACTERS)
        .filter(lambda c: not header_safe or c in B64URL + ".=+/")
        .flatmap(lambda c: st.integers(0, len(good) - 1).map(lambda i: (good[:i] + c + good[i + 1 :], False)))
        .filter(lambda t: t[0] != good),
        st.sampled_from(
            [f"{good} {good}", f"{good},{good}", f'"{good}"', good + "=", good.split(".")[0], ""]
        ).map(lambda t: (t, False)),
        st.text(alphabet, max_size=80).map(lambda t: (t, False)),
        st.text(B64URL + "-._~+/=", min_size=1, max_size=80).map(lambda t: (t, False)),
    )


@st.composite
def authorizations(draw: st.DrawFn, good: str, *, header_safe: bool) -> Authorization:
    credential, valid = draw(credentials(good, header_safe), label="credential")
    found = Authorization(
        scheme=draw(st.sampled_from(SCHEMES), label="scheme"),
        separator=draw(st.sampled_from(SEPARATORS), label="separator"),
        credential=credential,
        credential_valid=valid,
        before=draw(st.sampled_from(OWS), label="before"),
        after=draw(st.sampled_from(OWS), label="after"),
    )
    if header_safe:  # what an HTTP/1.1 field value can carry: no whitespace at either end
        found = replace(found, before="", after="", scheme=found.scheme or "Token")
        if not found.credential:
            found = replace(found, credential="x")
    return found


@fuzz_settings(250 * SCALE)
@given(data=st.data())
async def test_any_authorization_header_gets_the_documented_challenge(
    data: st.DataObject, identity: JWTIdentity, rsa: SigningKey
) -> None:
    authenticate = authenticator(identity, resource_metadata_url=METADATA_URL)
    good = rsa.mint(claims())
    shape = data.draw(st.sampled_from(["one", "one", "one", "one", "none", "other name"]), label="headers")
    event(f"headers: {shape}")
    headers: dict[str, str] = {}
    sent = None
    if shape != "none":
        sent = data.draw(authorizations(good, header_safe=False), label="authorization")
        headers["authorization" if shape == "one" else "Authorization"] = sent.value
        note(repr(sent.value))
    try:
        found = await asyncio.wait_for(authenticate(headers), WITHIN)
    except Unauthorized as exc:
        refused = exc
    else:
        event("accepted")
        assert sent is not None
        assert shape == "one"
        assert sent.accepted, sent  # only the RFC 6750 shape with the valid token (whitespace around aside)
        assert found == Caller(f"{ISSUER}|alice", "client-123")
        return
    event(f"401 {'invalid' if refused.www_authenticate == INVALID else 'missing'}")
    assert refused.www_authenticate in (MISSING, INVALID)
    assert refused.message in (MISSING_TOKEN_MESSAGE, INVALID_TOKEN_PUBLIC)
    assert (refused.message == INVALID_TOKEN_PUBLIC) == (refused.www_authenticate == INVALID)
    assert good not in refused.www_authenticate
    if sent is None or shape == "other name":  # header names arrive in lower case (ASGI)
        assert refused.www_authenticate == MISSING
    else:
        assert not sent.accepted, sent
        if sent.challenge is not None:
            assert refused.www_authenticate == sent.challenge, sent


@dataclass
class Deployment:
    base: str
    resource: str
    metadata_url: str


def deploy(jwks_url: str, **options: Any) -> Iterator[Deployment]:
    """The MCP endpoint behind ``authenticator(JWTIdentity(..., **options))`` on 127.0.0.1, with
    the real clock (test_identity_http's ``_serve``, with the verifier's options open)."""
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    resource = f"{base}/mcp"
    metadata_url = resource_metadata_url(resource, development=True)
    identity = JWTIdentity(issuer=ISSUER, audience=resource, jwks_url=jwks_url, **options)
    app = make_server().asgi(
        authenticate=authenticator(identity, resource_metadata_url=metadata_url, development=True)
    )
    with InProcessServer(app, sock=sock):
        yield Deployment(base, resource, metadata_url)


@pytest.fixture
def deployment(jwks_url: str) -> Iterator[Deployment]:
    yield from deploy(jwks_url, jwks_timeout=1.0)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WITHIN) as found:
        yield found


async def whoami(client: httpx.AsyncClient, where: Deployment, authorization: list[bytes]) -> httpx.Response:
    body, headers = call()
    fields = [(k.encode(), v.encode()) for k, v in headers.items()]
    fields += [(b"authorization", value) for value in authorization]
    return await asyncio.wait_for(
        client.post(f"{where.base}/mcp", content=json.dumps(body), headers=fields), WITHIN
    )


@fuzz_settings(60 * SCALE)
@given(data=st.data())
async def test_any_authorization_headers_through_the_mcp_endpoint(
    data: st.DataObject, deployment: Deployment, client: httpx.AsyncClient, rsa: SigningKey
) -> None:
    good = rsa.mint(live_claims(deployment.resource))
    count = data.draw(st.sampled_from([1, 1, 1, 0, 2, 3]), label="how many")
    sent = data.draw(
        st.lists(authorizations(good, header_safe=True), min_size=count, max_size=count),
        label="authorization headers",
    )
    event(f"{len(sent)} authorization headers")
    missing = f'Bearer resource_metadata="{deployment.metadata_url}"'
    invalid = INVALID.replace(METADATA_URL, deployment.metadata_url)
    with no_errors_logged():
        response = await whoami(client, deployment, [a.value.encode("latin-1") for a in sent])
    event(f"HTTP {response.status_code}")
    assert good not in response.text
    if len(sent) > 1:  # which one counts is for no one to guess: refused before the hook runs
        assert response.status_code == 400, response.text
        assert response.json()["error"] == {
            "code": -32020,
            "message": "Header mismatch: the authorization header appears twice",
        }
        return
    if response.status_code == 200:
        assert sent, sent
        assert sent[0].accepted, sent
        assert response.json()["result"]["content"][0]["text"] == f"{ISSUER}|alice"
        return
    assert response.status_code == 401, response.text
    challenge = response.headers["www-authenticate"]
    assert challenge in (missing, invalid)
    assert response.json()["error"]["message"].startswith("Unauthorized: ")
    if len(sent) == 1:
        assert not sent[0].accepted, sent
        expected = sent[0].challenge
        if expected is not None:
            assert challenge == expected.replace(METADATA_URL, deployment.metadata_url)
    else:
        assert challenge == missing


# ------------------------------------------------------------------------------ any JWKS


@dataclass
class Answer:
    """What the identity provider's JWKS endpoint answers."""

    status: int = 200
    body: bytes = b'{"keys": []}'
    headers: tuple[tuple[bytes, bytes], ...] = ()
    delay: float = 0.0  # before the status line
    stall: float = 0.0  # after the first bytes of the body

    @property
    def decoded(self) -> bytes:
        encoded = dict(self.headers).get(b"content-encoding") == b"gzip"
        return gzip.decompress(self.body) if encoded else self.body


JWKS_PATH = "/jwks.json"  # what a deployment is given


@dataclass
class Provider:
    """A JWKS endpoint on 127.0.0.1 that answers whatever ``answer`` says, and what it was sent
    at ``path`` (the JWKS URL in use: ``url``)."""

    answer: Answer = field(default_factory=Answer)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    base: str = ""
    path: str = JWKS_PATH

    @property
    def url(self) -> str:
        return self.base + self.path

    def expect(self, answer: Answer, path: str = JWKS_PATH) -> None:
        """Answer ``answer`` from now on, counting only the requests for ``path``: an example
        with a path of its own does not count a request an earlier example gave up on that
        arrives late (the server runs in another thread, slow on a busy machine)."""
        self.answer = answer
        self.path = path
        self.requests.clear()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        answer = self.answer  # this request's, even when a slow answer outlives its example
        if scope["path"] == self.path:
            self.requests.append(
                (scope["method"], {k.decode(): v.decode("latin-1") for k, v in scope["headers"]})
            )
        try:
            await asyncio.sleep(answer.delay)
            start = {"type": "http.response.start", "status": answer.status, "headers": list(answer.headers)}
            await send(start)
            body = answer.body if answer.status not in (204, 304) else b""
            if answer.stall:
                await send({"type": "http.response.body", "body": body[:8], "more_body": True})
                await asyncio.sleep(answer.stall)
                body = body[8:]
            await send({"type": "http.response.body", "body": body})
        except OSError:  # the verifier gave up and hung up
            pass


EXAMPLES = itertools.count()  # a JWKS path of its own for each example


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    found = Provider()
    with InProcessServer(found) as server:
        found.base = server.base
        yield found


@dataclass(frozen=True)
class ExtraKeys:
    """Keys a broken provider publishes: too small, other curves and types, a second Ed key."""

    jwks: dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def extra_keys() -> ExtraKeys:
    small = rsa_mod.generate_private_key(public_exponent=65537, key_size=1024).public_key()
    x = (
        x25519.X25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    )
    return ExtraKeys(
        {
            "rsa-1024": _jwk(small, "rsa-1", "RS256"),
            "secp256k1": {
                **jwt.algorithms.ECAlgorithm.to_jwk(
                    ec_mod.generate_private_key(ec_mod.SECP256K1()).public_key(), as_dict=True
                ),
                "kid": "ec-1",
            },
            "p-384 named ES256": _jwk(
                ec_mod.generate_private_key(ec_mod.SECP384R1()).public_key(), "ec-1", "ES256"
            ),
            "x25519": {"kty": "OKP", "crv": "X25519", "x": b64(x), "kid": "ed-1"},
            "ed448": _jwk(ed448.Ed448PrivateKey.generate().public_key(), "ed-1", "EdDSA"),
            "oct": {"kty": "oct", "k": b64(b"secret" * 6), "kid": "rsa-1", "alg": "HS256"},
        }
    )


def broken_jwk(jwk: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """``jwk`` with one member removed, replaced, or added."""
    members = sorted(jwk)
    changes: list[dict[str, Any]] = [
        {"kty": "EC"},
        {"kty": "OKP"},
        {"kty": "oct"},
        {"kty": "rsa"},
        {"kty": ["RSA"]},
        {"crv": "P-521"},
        {"crv": "secp256k1"},
        {"use": "enc"},
        {"key_ops": ["encrypt"]},
        {"key_ops": "verify"},
        {"alg": "HS256"},
        {"alg": "none"},
        {"alg": "PS256"},
        {"alg": "ES512"},
        {"d": "AQAB"},
        {"k": "c2VjcmV0"},
        {"kid": None},
        {"kid": 7},
        {"e": "AQ"},
        {"e": "AAAA"},
        {"n": "AQAB"},
        {"x": "AA"},
        {"x": jwk.get("y", "AA")},
        {"n": jwk.get("n", "") + "A"},
    ]
    return st.one_of(
        st.sampled_from(members).map(lambda m: {k: v for k, v in jwk.items() if k != m}),
        st.tuples(st.sampled_from(members), json_values).map(lambda a: {**jwk, a[0]: a[1]}),
        st.sampled_from(changes).map(lambda change: {**jwk, **change}),
    )


@dataclass
class Scenario:
    answer: Answer
    published: list[object]  # the "keys" entries, when the body is a JWK Set


SLOW = 0.6
"""How late a slow provider answers, or how long it stalls halfway through its answer."""


@st.composite
def scenarios(draw: st.DrawFn, keys: Mapping[str, SigningKey], extra: ExtraKeys, *, slow: bool) -> Scenario:
    real = [keys["rsa"].jwk, keys["ec"].jwk, keys["ed"].jwk]
    entry = st.one_of(
        st.sampled_from(real),
        st.sampled_from(real),
        st.just(keys["forger"].jwk),  # a second key under the kid "rsa-1"
        st.sampled_from(sorted(extra.jwks)).map(lambda name: extra.jwks[name]),
        st.sampled_from(real).flatmap(broken_jwk),
        json_values,
    )
    kind = draw(
        st.sampled_from(
            [
                "jwks",
                "jwks",
                "jwks",
                "any json",
                "not json",
                "keys not a list",
                "too many keys",
                "huge",
                "gzip",
            ]
        ),
        label="body",
    )
    published: list[object] = draw(st.lists(entry, max_size=6), label="keys")
    document: object = {"keys": published}
    if draw(st.booleans()):
        document = {**draw(st.dictionaries(st.text(max_size=8), json_values, max_size=2)), "keys": published}
    headers: tuple[tuple[bytes, bytes], ...] = ((b"content-type", b"application/json"),)
    if kind == "any json":
        document = draw(json_values, label="document")
    elif kind == "keys not a list":
        document = {"keys": draw(json_values.filter(lambda v: not isinstance(v, list)), label="keys")}
    elif kind == "too many keys":
        document = {"keys": [keys["rsa"].jwk] * (MAX_KEYS + draw(st.integers(-1, 3)))}
    elif kind in ("huge", "gzip"):
        size = draw(
            st.sampled_from([MAX_JWKS_BYTES - 2000, MAX_JWKS_BYTES + 1, 2 * MAX_JWKS_BYTES]), label="size"
        )
        document = {"keys": [keys["rsa"].jwk], "padding": " " * size}
    keys_list = document.get("keys") if isinstance(document, dict) else None
    published = keys_list if isinstance(keys_list, list) else []
    body = json.dumps(document).encode()
    if kind == "not json":
        body = draw(
            st.sampled_from(
                [b"", b"{", b"<html>Service Unavailable</html>", b'{"keys": [NaN]}', b"\xef\xbb\xbf{}"]
            )
            | st.binary(max_size=200)
            | st.just(b"\xef\xbb\xbf" + json.dumps({"keys": real}).encode()),
            label="not JSON",
        )
        published = []
    elif kind == "gzip":
        body = gzip.compress(body)
        headers += ((b"content-encoding", b"gzip"),)
    if draw(st.integers(0, 4), label="content-type changed") == 0:
        headers = ((b"content-type", b"text/html"), *headers[1:])
    status = draw(st.sampled_from([200] * 6 + [201, 204, 301, 302, 401, 404, 429, 500, 503]), label="status")
    if status in (301, 302):
        headers += ((b"location", b"/jwks.json"),)
    delay = stall = 0.0
    if slow:
        timing = draw(st.sampled_from(["prompt"] * 12 + ["late", "stalls"]), label="timing")
        delay = SLOW if timing == "late" else 0.0
        stall = SLOW if timing == "stalls" else 0.0
        event(f"timing: {timing}")
    event(f"body: {kind}")
    event(f"status: {status}")
    return Scenario(Answer(status, body, headers, delay, stall), published)


def usable(scenario: Scenario, timeout: float) -> bool:
    """Whether the answer is a JWK Set at all (else the documented outcome is IdentityUnavailable)."""
    answer = scenario.answer
    if answer.status != 200 or answer.delay >= timeout or answer.stall >= timeout:
        return False
    body = answer.decoded
    if len(body) > MAX_JWKS_BYTES:
        return False
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return False
    return (
        isinstance(document, dict)
        and isinstance(document.get("keys"), list)
        and len(document["keys"]) <= MAX_KEYS
    )


def carries(entries: list[object], signer: Mapping[str, Any]) -> bool:
    """Whether some entry holds ``signer``'s public key (its RSA modulus, its EC or OKP point)."""
    members = ("n",) if signer["kty"] == "RSA" else ("x", "y") if signer["kty"] == "EC" else ("x",)
    return any(isinstance(e, dict) and all(e.get(m) == signer[m] for m in members) for e in entries)


APPLICATION_SECRETS = ("client-secret-0123", "third-party-token-4567", "proxy-secret-cdef", "cookie-89ab")


@pytest.fixture
async def application_clients() -> AsyncIterator[list[httpx.AsyncClient]]:
    """httpx clients an application also uses for other calls, each with credentials of its own
    (HTTP auth and cookies; default Authorization and Proxy-Authorization headers)."""
    async with (
        httpx.AsyncClient(
            auth=("client-id", APPLICATION_SECRETS[0]), cookies={"s": APPLICATION_SECRETS[3]}
        ) as a,
        httpx.AsyncClient(
            headers={
                "authorization": f"Bearer {APPLICATION_SECRETS[1]}",
                "proxy-authorization": f"Basic {APPLICATION_SECRETS[2]}",
            }
        ) as b,
    ):
        yield [a, b]


def check_jwks_requests(provider: Provider | JwksState, *secrets: str) -> None:
    """The JWKS fetch is a plain GET without credentials, the token or any part of it."""
    requests = (
        provider.requests if isinstance(provider, Provider) else [("GET", h) for h in provider.seen_headers]
    )
    for method, headers in requests:
        assert method == "GET"
        assert not {"authorization", "cookie", "proxy-authorization", "dpop"} & headers.keys(), headers
        for secret in (*secrets, *APPLICATION_SECRETS):
            for part in secret.split("."):
                assert all(part not in value for value in headers.values()), headers


@fuzz_settings(50 * SCALE)
@given(data=st.data())
async def test_any_jwks_answer_fails_closed(
    data: st.DataObject,
    provider: Provider,
    application_clients: list[httpx.AsyncClient],
    extra_keys: ExtraKeys,
    rsa: SigningKey,
    rsa_other: SigningKey,
    ec: SigningKey,
    ed: SigningKey,
) -> None:
    keys = {"rsa": rsa, "ec": ec, "ed": ed, "forger": rsa_other}
    scenario = data.draw(scenarios(keys, extra_keys, slow=True), label="scenario")
    provider.expect(scenario.answer, path=f"/jwks-{next(EXAMPLES)}.json")
    # A short deadline where the provider is slow, else a generous one (a busy CI machine).
    timeout = SLOW / 3 if scenario.answer.delay or scenario.answer.stall else 2.0
    http_client = data.draw(st.sampled_from([None, *application_clients]), label="http_client")
    event(f"http_client: {'default' if http_client is None else 'the application'}")
    identity = JWTIdentity(
        issuer=ISSUER,
        audience=AUDIENCE,
        jwks_url=provider.url,
        clock=FakeClock(),
        jwks_timeout=timeout,
        http_client=http_client,
    )
    tokens = {name: keys[name].mint(claims()) for name in ("rsa", "forger", "ec", "ed")}
    available = usable(scenario, timeout)
    event(f"JWKS usable: {available}")
    with no_errors_logged():
        for name, token in tokens.items():
            started = time.monotonic()
            try:
                result = await outcome(identity.verify, token)
            except IdentityUnavailable as exc:
                unavailable: IdentityUnavailable | None = exc
            else:
                unavailable = None
            if unavailable is not None:
                event("IdentityUnavailable")
                assert not available, unavailable
                assert provider.url in str(unavailable)
                assert all(part not in str(unavailable) for part in token.split("."))
                assert time.monotonic() - started < timeout + 1.0
                continue
            assert available
            signer = keys[name].jwk
            if isinstance(result, Principal):
                assert result == Principal(ISSUER, "alice")
                # Accepted only with a key the provider really published.
                assert carries(scenario.published, signer)
            elif signer in scenario.published:
                raise AssertionError(f"{name}: refused ({result.reason}) although its key is published")
    # One fetch for four tokens: the unknown kid refresh and the retries are rate-limited.
    assert identity.jwks.fetches == 1
    assert len(provider.requests) == 1
    check_jwks_requests(provider, *tokens.values())


@pytest.fixture
def strict_deployment(provider: Provider) -> Iterator[Deployment]:
    """Every request fetches the JWKS anew (no cache, no stale copy, no back-off)."""
    yield from deploy(
        provider.base + JWKS_PATH,
        jwks_timeout=1.0,
        jwks_cache_seconds=0,
        jwks_max_stale=0,
        jwks_failure_backoff=0,
    )


@fuzz_settings(25 * SCALE)
@given(data=st.data())
async def test_any_jwks_answer_through_the_mcp_endpoint_is_200_401_or_503(
    data: st.DataObject,
    strict_deployment: Deployment,
    client: httpx.AsyncClient,
    provider: Provider,
    extra_keys: ExtraKeys,
    rsa: SigningKey,
    rsa_other: SigningKey,
    ec: SigningKey,
    ed: SigningKey,
) -> None:
    keys = {"rsa": rsa, "ec": ec, "ed": ed, "forger": rsa_other}
    scenario = data.draw(scenarios(keys, extra_keys, slow=False), label="scenario")
    provider.expect(scenario.answer)  # the path strict_deployment was given
    token = rsa.mint(live_claims(strict_deployment.resource))
    available = usable(scenario, 1.0)
    response = await whoami(client, strict_deployment, [f"Bearer {token}".encode()])
    event(f"HTTP {response.status_code}")
    assert token not in response.text
    if not available:
        assert response.status_code == 503, response.text
        assert response.headers["retry-after"] == "5"
        assert response.json()["error"]["code"] == -32603
        assert "www-authenticate" not in response.headers
    elif response.status_code == 200:
        assert carries(scenario.published, rsa.jwk)
        assert response.json()["result"]["content"][0]["text"] == f"{ISSUER}|alice"
    else:
        assert response.status_code == 401, response.text
        assert rsa.jwk not in scenario.published
        assert response.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    assert len(provider.requests) == 1
    check_jwks_requests(provider, token)


# ------------------------------------------------------------------------------ regressions


async def until(condition: Any) -> None:
    deadline = time.monotonic() + WITHIN
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.005)


async def test_a_cancelled_jwks_fetch_never_revives_keys_past_max_stale(
    rsa: SigningKey, ec: SigningKey, ed: SigningKey, jwks_url: str, jwks_state: JwksState, clock: FakeClock
) -> None:
    """Regression: verifications waiting behind a JWKS fetch whose caller gave up (a client that
    went away, a request deadline) took the key set as freshly fetched, however old: with two such
    fetches in a row, a token signed by a key the provider had withdrawn was accepted with keys
    far past ``max_stale``, where the documented outcome is a fresh fetch or IdentityUnavailable."""
    identity = verifier(jwks_url, clock, jwks_cache_seconds=300, jwks_max_stale=600, jwks_timeout=WITHIN)
    token = rsa.mint(claims(exp=int(NOW) + 86_400))
    assert await outcome(identity.verify, token) == Principal(ISSUER, "alice")
    clock.advance(5000)  # far past the cache lifetime and the stale window
    jwks_state.keys = [ec.jwk, ed.jwk]  # the RSA key is withdrawn (say, it leaked)
    jwks_state.delay = 1.0
    first = asyncio.ensure_future(identity.verify(token))
    await until(lambda: jwks_state.requests == 2)
    second = asyncio.ensure_future(identity.verify(token))
    third = asyncio.ensure_future(identity.verify(token))
    await asyncio.sleep(0.05)  # both now wait for the fetch in progress
    first.cancel()
    await until(lambda: jwks_state.requests == 3)  # the second one fetches in its turn...
    jwks_state.delay = 0.0
    second.cancel()  # ...and gives up too
    result = await outcome(lambda _: third, token)
    assert isinstance(result, InvalidToken)
    assert result.reason == "unknown-kid"
    assert jwks_state.requests == 4  # the third one fetched the current key set itself
    for task in (first, second):
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_concurrent_verifications_share_one_jwks_refresh(
    rsa: SigningKey, jwks_url: str, jwks_state: JwksState, clock: FakeClock
) -> None:
    """Regression: single-flight (jwks.py). The verifications that arrived while the refresh was
    running fetched the key set a second time once it was done, doubling their wait."""
    identity = verifier(jwks_url, clock, jwks_cache_seconds=300)
    token = rsa.mint(claims(exp=int(NOW) + 86_400))
    await outcome(identity.verify, token)
    clock.advance(301)  # the cached key set has expired
    jwks_state.delay = 0.2
    results = await asyncio.wait_for(asyncio.gather(*(identity.verify(token) for _ in range(10))), WITHIN)
    assert results == [Principal(ISSUER, "alice")] * 10
    assert jwks_state.requests == 2  # the first fetch and one shared refresh
    assert identity.jwks.fetches == 2


async def test_an_application_http_client_lends_no_credentials_to_the_jwks_fetch(
    rsa: SigningKey,
    jwks_url: str,
    jwks_state: JwksState,
    application_clients: list[httpx.AsyncClient],
    clock: FakeClock,
) -> None:
    """Regression: with ``http_client=`` (documented "either way the request carries no
    credentials"), the JWKS GET carried the client's HTTP auth (its Basic client secret), its
    cookies and its default Authorization header to the JWKS endpoint."""
    token = rsa.mint(claims())
    for client in application_clients:
        identity = verifier(jwks_url, clock, http_client=client)
        assert await outcome(identity.verify, token) == Principal(ISSUER, "alice")
    assert jwks_state.requests == 2
    check_jwks_requests(jwks_state, token)
    assert not application_clients[0].is_closed  # the application's client is left open for it
