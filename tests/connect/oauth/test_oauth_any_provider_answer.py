"""A third-party provider that answers anything: a property test of the connect kit's OAuth client.

Hypothesis plays the provider on a real HTTP server on 127.0.0.1 (:class:`ScriptedServer`) and
draws every answer it gives:

* discovery documents of any shape (served at the OpenID or the RFC 8414 path, or not at all):
  another issuer, endpoints missing, of the wrong type, not https, on a port no socket has, with
  control characters, far too long; any JSON in the other members; a body that is not JSON, not an
  object, or too large;
* token endpoint answers to the code redemption: any status (redirects too), any content type,
  non-JSON bodies, JSON of any shape (``access_token`` missing or odd, ``token_type`` not Bearer
  or in another case, ``expires_in`` as a string, negative, huge, a float or a bool,
  ``refresh_token`` of the wrong type, any ``scope``), ID tokens that are malformed or for another
  audience, nonce or issuer, error answers whose ``error`` and ``error_description`` are of any
  type and size, bodies over the size cap, answers that come too late; and, separately, any ID
  token in an otherwise valid OpenID answer;
* refresh answers through the vault (SQLite and PostgreSQL): rotated refresh token or not,
  ``invalid_grant`` (also GitHub's ``200`` + ``bad_refresh_token``), 429 and 5xx with any
  ``Retry-After``, malformed bodies, with several callers at once;
* revocation answers through the vault's disconnect, one per request.

An oracle written from the documented rules (docs/connect-account.md, the module docstrings of
``connect/oauth``, RFC 6749 §5 and RFC 7009) says what each answer must lead to, and the test
checks exactly that: the tokens the provider issued, unchanged, when the answer is valid;
otherwise the documented error (:class:`AuthorizationFailed` with its reason, :class:`RefreshFailed`
retryable or not, :class:`NeedsReauthorization`, :class:`RevocationFailed`,
:class:`DiscoveryFailed`) and nothing else, with a message that holds no token, client secret,
code, code verifier, state or nonce (not even when the provider copies what it was sent into its
error text); a stored connection changed only as documented (a transient failure
never loses the working refresh token, ``invalid_grant`` marks it for re-authorization and keeps
it); every call ends within a bound; no secret in any log record. Requests go only to the pinned
endpoints. The regressions at the end are what these properties found. ``pytest
--hypothesis-show-statistics`` shows what the examples reached.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import math
import re
import string
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx
import jwt
import pytest
from hypothesis import event, given, note
from hypothesis import strategies as st
from oauth_support import OWNER, REDIRECT_URI, Answer, ScriptedServer, scripted_provider
from test_oauth_discovery import _metadata
from test_oauth_id_token import CLIENT, ISSUER, JWK, KEY, NOW, OTHER_KEY
from tests.strategies import fuzz_settings

from mcp_elicit.connect.identity import JWKSCache
from mcp_elicit.connect.oauth import (
    AuthorizationCodeGrant,
    AuthorizationFailed,
    DiscoveryFailed,
    OAuthProvider,
    TokenGrant,
    discover,
    token_refresher,
    token_revoker,
)
from mcp_elicit.connect.vault import (
    Connection,
    NeedsReauthorization,
    RefreshFailed,
    RevocationFailed,
    Vault,
)

SCALE = 1
"""Raise (e.g. to 20) for a long local hunt; at 1 the whole file takes about 10-20 s."""

TIMEOUT = 1.0
"""The deadline of each request to the provider (the flow's, the refresher's, the revoker's): far
above what a prompt answer on 127.0.0.1 takes even on a loaded machine."""
STALL = TIMEOUT + 0.2
"""How long an answer that comes too late takes."""
WITHIN = 5.0
"""Every call ends, one way or the other, within this many seconds."""
CAP = 64 * 1024
"""The documented cap on a token or revocation endpoint answer."""
METADATA_CAP = 256 * 1024
TEN_YEARS = 10 * 365 * 24 * 3600.0
CLIENT_SECRET = "client-secret-Zq8Lr2Vx7"
STORED_AT = "stored-AT-Jf83kLq02mZx"
STORED_RT = "stored-RT-Pq72nVb19sWe"
PUBLIC_MESSAGES = frozenset(
    {
        "The provider could not complete the authorization. Please try again.",
        "The authorization could not be completed. Please start again.",
    }
)
TRANSIENT = frozenset({429}) | frozenset(range(500, 600))
DEAD_GRANT = frozenset({"invalid_grant", "bad_refresh_token"})
ALREADY_DEAD = frozenset({"invalid_token", "invalid_grant"})
ERROR_CODE = re.compile(r"[A-Za-z0-9_.\-]{1,64}")  # RFC 6749 §5.2 codes, as the kit keeps them
SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,256}")  # RFC 6749 Appendix A.4: NQCHAR


# ---------------------------------------------------------------------------------- strategies

_TOKEN_ALPHABET = string.ascii_letters + string.digits + "-._~+/"


def _secret(prefix: str) -> st.SearchStrategy[str]:
    """A token, code or secret distinctive enough that finding it in a text is never chance."""
    return st.text(_TOKEN_ALPHABET, min_size=12, max_size=40).map(lambda s: f"{prefix}-{s}")


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63) + 1, max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
"""Any JSON value (integers within what a JSON parser keeps exact)."""

hostile_text = st.one_of(
    st.text(max_size=60),
    st.text(st.characters(codec="utf-8"), max_size=60),
    st.sampled_from(
        [
            "<script>alert(1)</script>",
            "line\r\nInjected: header",
            "\u202egnp.exe\u200b\x00\x1b[2J",
            "x" * 5000,
            " \t ",
        ]
    ),
)


@dataclass(frozen=True)
class Echo:
    """A value the provider copies from what it was sent (a code, the verifier, a token)."""

    what: str


@dataclass(frozen=True)
class IdToken:
    """An ID token minted when the answer is rendered (it needs the flow's nonce)."""

    kind: str


ID_TOKEN_VALID = ("valid", "valid-azp", "valid-at_hash")
ID_TOKEN_INVALID = (
    "other-audience",
    "other-nonce",
    "no-nonce",
    "other-issuer",
    "expired",
    "issued-in-future",
    "no-subject",
    "other-key",
    "alg-none",
    "several-audiences-no-azp",
    "wrong-at_hash",
    "malformed",
)
ID_TOKEN_UNREADABLE = ("empty", "too-long", "not-printable")  # refused as a token response


@dataclass(frozen=True)
class RawBody:
    data: bytes


RAW_BODIES = [
    b"",
    b"<html><body>Sign in</body></html>",
    b"[]",
    b'"access_token"',
    b"null",
    b"{not json",
    b"access_token=AT-form-encoded-123456&token_type=bearer",
    b"\xff\xfe{\x00}\x00",
    b'\xef\xbb\xbf{"access_token": "AT-with-a-bom-12345", "token_type": "Bearer"}',
    b'{"access_token": "AT-truncated-1234',
]
CONTENT_TYPES = [
    "application/json",
    "application/json; charset=utf-8",
    "Application/JSON",
    "application/problem+json",
    "application/json-patch",
    "text/plain",
    "text/html; charset=utf-8",
    "application/x-www-form-urlencoded",
    "",
    None,
]


@dataclass
class Reply:
    """One scripted answer of the provider, rendered into an :class:`Answer` per request."""

    status: int
    content_type: str | None
    body: dict[str, Any] | RawBody
    padding: int = 0
    delay: float = 0.0
    retry_after: str | None = None
    redirect: bool = False

    def render(self, context: dict[str, str], base: str) -> tuple[Answer, dict[str, Any] | None, int]:
        """The answer to send, the JSON object it holds (``None`` if it is not one), its size."""
        headers: dict[str, str] = {}
        if self.content_type is not None:
            headers["content-type"] = self.content_type
        if self.retry_after is not None:
            headers["retry-after"] = self.retry_after
        if self.redirect:
            headers["location"] = f"{base}/elsewhere"
        if isinstance(self.body, RawBody):
            data, obj = self.body.data + b" " * self.padding, None
        else:
            obj = _render(self.body, context)
            if self.padding:
                obj["padding"] = "x" * self.padding
            data = json.dumps(obj).encode()
        return Answer(self.status, data, headers, self.delay), obj, len(data)

    @property
    def timely(self) -> bool:
        return self.delay < TIMEOUT


def _render(value: Any, context: dict[str, str]) -> Any:
    if isinstance(value, Echo):
        return context[value.what]
    if isinstance(value, IdToken):
        return _mint_id_token(value.kind, context)
    if isinstance(value, dict):
        return {k: _render(v, context) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, context) for v in value]
    return value


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _mint_id_token(kind: str, context: dict[str, str]) -> str:
    if kind == "empty":
        return ""
    if kind == "too-long":
        return "e" * (16 * 1024 + 1)
    if kind == "not-printable":
        return "eyJ.é.\n"
    if kind == "malformed":
        return "not.a.jwt!"
    claims: dict[str, Any] = {
        "iss": ISSUER,
        "aud": CLIENT,
        "sub": "alice",
        "exp": NOW + 300,
        "iat": NOW,
        "nonce": context["nonce"],
    }
    access = context.get("access_token", "")
    digest = hashlib.sha256(access.encode("ascii", "replace")).digest()
    variants: dict[str, dict[str, Any]] = {
        "valid-azp": {"aud": [CLIENT, "other-client"], "azp": CLIENT},
        "valid-at_hash": {"at_hash": _b64(digest[:16])},
        "other-audience": {"aud": "other-client"},
        "other-nonce": {"nonce": "m" * 43},
        "no-nonce": {"nonce": None},
        "other-issuer": {"iss": "https://evil.example"},
        "expired": {"exp": NOW - 3600},
        "issued-in-future": {"iat": NOW + 3600},
        "no-subject": {"sub": None},
        "several-audiences-no-azp": {"aud": [CLIENT, "other-client"]},
        "wrong-at_hash": {"at_hash": _b64(hashlib.sha256(b"another token").digest()[:16])},
    }
    claims.update(variants.get(kind, {}))
    claims = {k: v for k, v in claims.items() if v is not None}
    if kind == "alg-none":
        head = _b64(json.dumps({"alg": "none", "kid": "k1"}).encode())
        return f"{head}.{_b64(json.dumps(claims).encode())}."
    key = OTHER_KEY if kind == "other-key" else KEY
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})


statuses = st.one_of(
    st.just(200),
    st.just(200),
    st.just(200),
    st.sampled_from([400, 401, 403, 404, 408, 409, 429, 500, 502, 503, 504, 301, 302, 307, 308, 201]),
    st.integers(min_value=200, max_value=599).filter(lambda s: s not in (204, 205, 304)),
)
delays = st.sampled_from([0.0] * 57 + [0.05, 0.05, STALL])  # a stall costs TIMEOUT: rare
paddings = st.sampled_from([0] * 12 + [100, CAP + 1])
retry_afters = st.one_of(
    st.none(),
    st.integers(min_value=0, max_value=10**10).map(str),
    st.floats(min_value=-3 * 86400, max_value=3 * 86400).map(
        lambda delta: formatdate(time.time() + delta, usegmt=True)
    ),
    st.sampled_from(
        ["soon", "-5", "1.5", "0x10", "Wed, 99 Foo 2015 07:28:00 GMT", "Mon, 01 Jan 99999 00:00:00 GMT"]
    ),
)


_ABSENT = object()


@dataclass(frozen=True)
class Member:
    """How one member of a token response may look: valid (``_ABSENT`` allowed where the member
    is optional), or odd."""

    valid: st.SearchStrategy[Any]
    odd: st.SearchStrategy[Any]


MEMBERS = {
    "access_token": Member(
        _secret("AT") | st.just("AT with spaces is VSCHAR 1234"),
        st.sampled_from(["", "tok\nen-1234567890", "tökén-1234567890", "a" * (16 * 1024 + 1), _ABSENT])
        | json_values,
    ),
    "token_type": Member(
        st.sampled_from(["Bearer", "bearer", "BEARER", "bEaReR"]),
        st.sampled_from(["mac", "DPoP", "Bearer ", "bearer\t", "", "N_A", _ABSENT]) | json_values,
    ),
    "refresh_token": Member(
        st.one_of(_secret("RT"), st.just(_ABSENT), st.none()),
        st.sampled_from(["", "rt\x00-1234567890", "ŕt-1234567890", "r" * (8 * 1024 + 1)]) | json_values,
    ),
    "expires_in": Member(
        st.one_of(
            st.integers(min_value=0, max_value=10**6),
            st.floats(min_value=0, max_value=1e6),
            st.sampled_from([10**12, 1e300, "3600", "0", "000000000060", _ABSENT, None]),
        ),
        st.integers(max_value=-1)
        | st.floats(max_value=-1e-9, allow_infinity=False)
        | st.sampled_from([True, False, "-5", "1e3", "3600s", "٣٦٠٠", "0" * 13, " 60", ""])
        | json_values,
    ),
    "scope": Member(
        st.lists(st.from_regex(SCOPE_TOKEN, fullmatch=True).filter(lambda s: len(s) <= 20), max_size=4).map(
            " ".join
        )
        | st.sampled_from(["repo", "repo  repo gist", "", "  ", _ABSENT, None]),
        st.sampled_from(['repo "quoted"', "repo\tgist", "répo", "a\\b", " ".join(["s"] * 300)]) | json_values,
    ),
}
ID_TOKENS_OIDC = st.one_of(  # an OpenID provider's ID token: as often wrong as right
    st.sampled_from(ID_TOKEN_VALID).map(IdToken),
    st.sampled_from([*ID_TOKEN_INVALID, *ID_TOKEN_UNREADABLE, "absent", "null"]).map(
        lambda kind: {"absent": _ABSENT, "null": None}.get(kind, IdToken(kind))
    ),
)
ID_TOKEN_PLAIN = Member(  # a provider that is not OpenID may send one: it is not looked at
    st.one_of(st.just(_ABSENT), st.just(_ABSENT), st.from_regex(r"[ -~]{1,40}", fullmatch=True)),
    st.sampled_from(["", "é", "a\nb"]) | json_values,
)


error_codes = st.one_of(
    st.sampled_from(
        [
            "invalid_grant",
            "bad_refresh_token",
            "invalid_client",
            "unauthorized_client",
            "invalid_request",
            "server_error",
            "temporarily_unavailable",
            "access_denied",
            "unsupported_token_type",
            "invalid_token",
        ]
    ),
    hostile_text,
    json_values,
)
error_descriptions = st.one_of(hostile_text, json_values)


@st.composite
def token_bodies(draw: st.DrawFn, *, openid: bool, refresh: bool) -> dict[str, Any]:
    """A token response object (RFC 6749 §5.1): valid members, except for up to two faults (a
    member missing, of another type, out of range, ...)."""
    members = dict(MEMBERS) if openid else {**MEMBERS, "id_token": ID_TOKEN_PLAIN}
    faults = draw(
        st.sampled_from([0, 0, 0, 1, 1, 2]).flatmap(
            lambda n: st.sets(st.sampled_from(sorted(members)), max_size=n)
        ),
        label="faults",
    )
    for name in sorted(faults):
        event(f"token response: odd {name}")
    body = {
        name: draw(member.odd if name in faults else member.valid, label=name)
        for name, member in members.items()
    }
    if openid:
        body["id_token"] = id_token = draw(ID_TOKENS_OIDC, label="id_token")
        event(f"id_token: {id_token.kind if isinstance(id_token, IdToken) else 'none'}")
    if refresh and draw(st.integers(0, 4)) == 0:
        body["error"] = draw(error_codes, label="error")  # next to a token: the token wins
    return {k: v for k, v in body.items() if v is not _ABSENT}


@st.composite
def error_bodies(draw: st.DrawFn, *, echoes: tuple[str, ...]) -> dict[str, Any]:
    """An error response (RFC 6749 §5.2): any ``error`` and description, maybe a copy of what
    the provider was sent."""
    echo = st.sampled_from(echoes).map(Echo) if echoes else st.nothing()
    body: dict[str, Any] = {}
    if draw(st.integers(0, 5)):
        body["error"] = draw(st.one_of(error_codes, echo), label="error")
    if draw(st.booleans()):
        body["error_description"] = draw(st.one_of(error_descriptions, echo), label="error_description")
    if draw(st.booleans()):
        body["error_uri"] = draw(json_values)
    return body


@st.composite
def replies(
    draw: st.DrawFn, body: st.SearchStrategy[dict[str, Any]], errors: st.SearchStrategy[dict[str, Any]]
) -> Reply:
    status = draw(statuses, label="status")
    if draw(st.integers(0, 7)) == 0:
        content: dict[str, Any] | RawBody = RawBody(draw(st.sampled_from(RAW_BODIES)))
    elif status == 200:
        content = draw(st.one_of(body, body, body, errors))
    else:
        content = draw(st.one_of(errors, errors, errors, body))
    json_type = st.sampled_from(CONTENT_TYPES[:4])
    return Reply(
        status=status,
        content_type=draw(
            st.one_of(json_type, json_type, json_type, json_type, st.sampled_from(CONTENT_TYPES))
        ),
        body=content,
        padding=draw(paddings),
        delay=draw(delays),
        retry_after=draw(retry_afters) if status in (429, 503) or draw(st.booleans()) else None,
        redirect=300 <= status < 400,
    )


# ---------------------------------------------------------------------------------- the oracle


@dataclass(frozen=True)
class Bad:
    """The answer is not an acceptable token response."""


BAD = Bad()


def _is_json_type(content_type: str | None) -> bool:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _json_object(reply: Reply, obj: dict[str, Any] | None) -> dict[str, Any] | None:
    return obj if obj is not None and _is_json_type(reply.content_type) else None


def _token(value: Any, limit: int) -> str | Bad | None:
    """RFC 6749 Appendix A: a token is VSCHAR (printable ASCII), here also non-empty and capped."""
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= limit:
        return BAD
    return value if all(" " <= ch <= "~" for ch in value) else BAD


def _expires_in(value: Any) -> float | Bad | None:
    if value is None:
        return None
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,12}", value):
        value = int(value)  # "3600": some providers send the number as a string
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return BAD
    return BAD if value < 0 else min(float(value), TEN_YEARS)


def _scopes(value: Any) -> tuple[str, ...] | Bad | None:
    if value is None:
        return None
    if not isinstance(value, str):
        return BAD
    tokens: list[str] = []
    for token in value.split(" "):
        if token and token not in tokens:
            tokens.append(token)
    if len(tokens) > 256 or not all(SCOPE_TOKEN.fullmatch(t) for t in tokens):
        return BAD
    return tuple(tokens)


@dataclass(frozen=True)
class Issued:
    """What a valid token response carries."""

    access_token: str
    refresh_token: str | None
    expires_in: float | None
    scopes: tuple[str, ...] | None
    id_token: str | None


def _issued(body: dict[str, Any] | None, *, refresh: bool) -> Issued | Bad:
    """The tokens of an acceptable 200 answer (RFC 6749 §5.1 and the kit's documented rules)."""
    if body is None:
        return BAD
    token_type = body.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        return BAD
    access = _token(body.get("access_token"), 16 * 1024)
    refresh_token = _token(body.get("refresh_token"), 8 * 1024)
    if not isinstance(access, str) or isinstance(refresh_token, Bad):
        return BAD
    expires_in = _expires_in(body.get("expires_in"))
    scopes = _scopes(body.get("scope"))
    id_token = None if refresh else _token(body.get("id_token"), 16 * 1024)
    if refresh:
        # A refresh answer keeps the (possibly rotated) tokens: an unusable expires_in is "expired
        # now" if negative and "unknown" otherwise, an unusable scope is "unchanged".
        if isinstance(expires_in, Bad):
            value = body.get("expires_in")
            negative = not isinstance(value, bool) and isinstance(value, int | float) and value < 0
            expires_in = 0.0 if negative else None
        if isinstance(scopes, Bad):
            scopes = None
    if isinstance(expires_in, Bad) or isinstance(scopes, Bad) or isinstance(id_token, Bad):
        return BAD
    return Issued(access, refresh_token, expires_in, scopes, id_token)


def _error_code(body: dict[str, Any] | None, sent: tuple[str, ...] = ()) -> str | None:
    """The ``error`` the kit keeps: one that looks like a code, holds nothing it sent and is no
    piece of it."""
    value = None if body is None else body.get("error")
    if not isinstance(value, str) or not ERROR_CODE.fullmatch(value):
        return None
    return None if any(secret in value or value in secret for secret in sent) else value


# ---------------------------------------------------------------------------------- checks


@contextmanager
def captured_logs() -> Iterator[list[logging.LogRecord]]:
    """Every log record of every logger while the block runs (DEBUG and up)."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    root = logging.getLogger()
    handler, level = Keep(logging.DEBUG), root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield records
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def _log_text(records: list[logging.LogRecord]) -> str:
    formatter = logging.Formatter("%(levelname)s %(name)s %(message)s")
    return "\n".join(formatter.format(record) for record in records)


def assert_no_secrets(secrets: dict[str, str], **texts: str | None) -> None:
    for where, text in texts.items():
        for what, secret in secrets.items():
            assert secret not in (text or ""), f"the {what} appears in the {where}"


def assert_clean_logs(records: list[logging.LogRecord], secrets: dict[str, str]) -> None:
    assert_no_secrets(secrets, logs=_log_text(records))
    errors = [
        r.getMessage() for r in records if r.levelno >= logging.ERROR and r.name.startswith("mcp_elicit")
    ]
    assert not errors, errors  # an error logged for a provider's answer is an unexpected exception


def _echoed(value: Any) -> set[str]:
    """What the provider copied into its answer from what it was sent (see :class:`Echo`)."""
    if isinstance(value, Echo):
        return {value.what}
    if isinstance(value, dict):
        return set().union(*(_echoed(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_echoed(v) for v in value))
    return set()


def _issued_secrets(obj: dict[str, Any] | None) -> dict[str, str]:
    """Tokens the provider sent, whatever their shape, if distinctive enough to search for (and
    not also sent as a member that may be shown, such as ``scope``)."""
    tokens = ("access_token", "refresh_token", "id_token")
    if obj is None:
        return {}
    shown = json.dumps({k: v for k, v in obj.items() if k not in tokens})
    found: dict[str, str] = {}
    for name in tokens:
        value = obj.get(name)
        if isinstance(value, str) and len(value) >= 12 and len(set(value)) > 4 and value not in shown:
            found[f"issued {name}"] = value
    return found


async def bounded(call: Any) -> Any:
    """``call`` awaited within :data:`WITHIN` seconds; its exception is returned, not raised."""
    started = time.monotonic()
    try:
        result = await asyncio.wait_for(call, WITHIN)
    except (
        AuthorizationFailed,
        DiscoveryFailed,
        RefreshFailed,
        NeedsReauthorization,
        RevocationFailed,
    ) as exc:
        result = exc
    assert time.monotonic() - started < WITHIN
    return result


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """One client for every example (what the kit's pages give the flow); a client per request,
    the default, costs a TLS context each time, and is covered by the other tests."""
    async with httpx.AsyncClient() as client:
        yield client


# ---------------------------------------------------------------------------------- discovery

# Endpoint values a document may hold: acceptable, refused, or a matter of the rules of the day.
LOOPBACK = "127.0.0.1"


def _good_urls(base: str) -> list[str]:
    own = [f"{base}/{path}" for path in ("authorize", "revoke", "jwks", "me")]  # the document's own
    return [
        *own,
        f"{base}/token",
        f"{base}/other/path?x=1",
        "https://as.example/token",
        "https://as.example:8443/t",
    ]


def _bad_urls(base: str) -> list[str]:
    return [
        "http://as.example/token",  # plain http off this machine
        "ftp://127.0.0.1/token",
        "",
        "/token",
        "https://",
        "https://[::1/token",
        f"https://{LOOPBACK}:99999/token",  # no socket has this port
        f"https://{LOOPBACK}:70000/token",
        f"{base}/token\x7f",  # control characters: no HTTP client sends this
        f"{base}/to\x00ken",
        f"{base}/" + "t" * 70_000,  # longer than an HTTP client sends
    ]


def _either_urls(base: str) -> list[str]:
    return [
        f"{base}/to ken",
        "https://user:pw@as.example/token",
        "https://as.example/token#fragment",
        "HTTPS://as.example/token",
        f"http://localhost:{urlsplit(base).port}/token",
        "https://as.example/tök",
    ]


_KEPT_URLS = (
    "authorization_endpoint",
    "token_endpoint",
    "revocation_endpoint",
    "jwks_uri",
    "userinfo_endpoint",
)
_OTHER_URLS = ("registration_endpoint", "introspection_endpoint")
_OTHER_MEMBERS = (
    "scopes_supported",
    "response_modes_supported",
    "grant_types_supported",
    "token_endpoint_auth_signing_alg_values_supported",
    "service_documentation",
    "ui_locales_supported",
    "op_policy_uri",
    "op_tos_uri",
    "revocation_endpoint_auth_methods_supported",
    "introspection_endpoint_auth_methods_supported",
    "id_token_signing_alg_values_supported",
    "unknown_member",
)


@dataclass
class DiscoveryPlan:
    document: dict[str, Any]
    touched: set[str] = field(default_factory=set)  # members whose odd value the rules may take either way


@st.composite
def documents(draw: st.DrawFn, server: ScriptedServer) -> DiscoveryPlan:
    base = server.base
    plan = DiscoveryPlan(_metadata(server))
    doc = plan.document
    url_values = st.sampled_from(_good_urls(base) + _bad_urls(base) + _either_urls(base))
    for _ in range(draw(st.integers(0, 4), label="changes")):
        member = draw(
            st.sampled_from(
                [
                    "issuer",
                    *_KEPT_URLS,
                    *_OTHER_URLS,
                    "code_challenge_methods_supported",
                    "authorization_response_iss_parameter_supported",
                    "response_types_supported",
                    "token_endpoint_auth_methods_supported",
                    *_OTHER_MEMBERS,
                ]
            ),
            label="member",
        )
        event(f"discovery: changed {member}")
        if member == "issuer":
            value: Any = draw(
                st.sampled_from([base + "/", base.upper(), "https://evil.example", base + "?x=1", _ABSENT])
                | json_values
            )
        elif member in _KEPT_URLS or member in _OTHER_URLS:
            value = draw(st.one_of(url_values, url_values, url_values, json_values, st.just(_ABSENT)))
            if member in _OTHER_URLS or value in _either_urls(base):
                plan.touched.add(member)
        elif member == "code_challenge_methods_supported":
            value = draw(
                st.sampled_from([["plain"], "S256", ["S256", "plain"], ["s256"], [], _ABSENT]) | json_values
            )
        elif member == "authorization_response_iss_parameter_supported":
            value = draw(st.sampled_from([True, False, _ABSENT]) | json_values)
        elif member == "response_types_supported":
            value = draw(st.sampled_from([["code"], ["code", "token"], _ABSENT]) | json_values)
            plan.touched.add(member)
        elif member == "token_endpoint_auth_methods_supported":
            value = draw(
                st.sampled_from(
                    [
                        ["client_secret_post"],
                        ["client_secret_basic", "private_key_jwt"],
                        ["private_key_jwt"],
                        ["none"],
                        _ABSENT,
                    ]
                )
                | json_values
            )
            plan.touched.add(member)
        else:
            value = draw(json_values | st.sampled_from([["RS256"], "https://as.example/doc", ["en"]]))
            plan.touched.add(member)
        if value is _ABSENT:
            doc.pop(member, None)
        else:
            doc[member] = value
    return plan


def _acceptable_endpoint(value: Any, base: str) -> bool | None:
    """Whether a kept endpoint is usable: True, False, or None (either way is documented)."""
    if value in _either_urls(base):
        return None
    return isinstance(value, str) and value in _good_urls(base)


def discovery_verdict(plan: DiscoveryPlan, base: str, *, secret: bool, oidc: bool) -> bool | None:
    """Must discovery succeed (True), fail (False), or may it do either (None)?"""
    doc = plan.document
    if doc.get("issuer") != base:  # exact (RFC 8414 §3.3)
        return False
    methods = doc.get("code_challenge_methods_supported")
    if not isinstance(methods, list) or "S256" not in methods:  # PKCE with S256 is not optional
        return False
    flag = "authorization_response_iss_parameter_supported"
    if flag in doc and not isinstance(doc[flag], bool):
        return None if doc[flag] in (0, 1) else False
    undecided = bool(plan.touched)
    for member in _KEPT_URLS:
        value = doc.get(member)
        if member == "userinfo_endpoint" and not oidc:
            # Only the OpenID configuration's userinfo endpoint is kept (one of another type may
            # still be refused as malformed metadata).
            undecided |= value is not None and not isinstance(value, str)
            continue
        if value is None and member not in ("authorization_endpoint", "token_endpoint"):
            continue
        usable = _acceptable_endpoint(value, base)
        if usable is False:
            return False
        undecided |= usable is None
    if secret and "token_endpoint_auth_methods_supported" in doc:
        supported = doc["token_endpoint_auth_methods_supported"]
        if not isinstance(supported, list) or not {"client_secret_basic", "client_secret_post"} & {
            m for m in supported if isinstance(m, str)
        }:
            return False
    return None if undecided else True


@fuzz_settings(100 * SCALE)
@given(data=st.data())
async def test_any_discovery_document_gives_a_pinned_provider_or_discovery_failed(
    server: ScriptedServer, http: httpx.AsyncClient, data: st.DataObject
) -> None:
    base = server.base
    plan = data.draw(documents(server), label="document")
    oidc_status = data.draw(st.sampled_from([200, 200, 200, 404, 500, 301]), label="OpenID status")
    oauth_status = data.draw(st.sampled_from([200, 404]), label="RFC 8414 status")
    shape = data.draw(st.sampled_from(["object"] * 6 + ["raw", "text/html", "huge"]), label="shape")
    secret = data.draw(st.booleans(), label="client secret")
    body: bytes = json.dumps(plan.document).encode()
    headers = {"content-type": "application/json"}
    if shape == "raw":
        body = data.draw(st.sampled_from(RAW_BODIES))
    elif shape == "text/html":
        headers = {"content-type": "text/html"}
    elif shape == "huge":
        body = json.dumps({**plan.document, "padding": "x" * METADATA_CAP}).encode()
    server.routes.clear()
    server.requests.clear()
    server.routes["/.well-known/openid-configuration"] = Answer(oidc_status, body, dict(headers))
    server.routes["/.well-known/oauth-authorization-server"] = Answer(oauth_status, body, dict(headers))
    oidc = oidc_status == 200
    served = oidc or oauth_status == 200
    if not served or shape != "object":
        verdict: bool | None = False
    else:
        verdict = discovery_verdict(plan, base, secret=secret, oidc=oidc)
    event(f"discovery: expected {({True: 'provider', False: 'DiscoveryFailed', None: 'either'})[verdict]}")
    overrides: dict[str, Any] = {"id": "github", "client_id": "client-1", "scopes": ("repo",)}
    if secret:
        overrides["client_secret"] = CLIENT_SECRET
    with captured_logs() as logs:
        result = await bounded(discover(base, http=http, request_timeout=TIMEOUT, **overrides))
    assert_clean_logs(logs, {"client secret": CLIENT_SECRET})
    # Only the two metadata documents were asked for, the second only when the first was missing.
    asked = [(r.method, r.path) for r in server.requests]
    first = ("GET", "/.well-known/openid-configuration")
    assert asked in ([first], [first, ("GET", "/.well-known/oauth-authorization-server")]), asked
    assert (len(asked) == 2) == (oidc_status != 200), asked

    if isinstance(result, DiscoveryFailed):
        event("discovery: DiscoveryFailed")
        assert verdict is not True, f"a valid document was refused: {result}"
        assert str(result)
        assert_no_secrets({"client secret": CLIENT_SECRET}, message=str(result))
        return
    assert isinstance(result, OAuthProvider), result
    event("discovery: provider")
    assert verdict is not False, f"an unacceptable document was accepted: {result!r}"
    doc = plan.document
    # The provider is pinned to exactly what the document of the asked-for issuer says.
    assert result.issuer == base
    assert result.authorize_url == doc["authorization_endpoint"]
    assert result.token_url == doc["token_endpoint"]
    assert result.revocation_url == doc.get("revocation_endpoint")
    assert result.jwks_url == doc.get("jwks_uri")
    assert result.userinfo_url == (doc.get("userinfo_endpoint") if oidc else None)
    assert result.iss_parameter_supported == (
        doc.get("authorization_response_iss_parameter_supported") is True
    )
    supported = doc.get("token_endpoint_auth_methods_supported", ["client_secret_basic"])
    basic = "client_secret_basic" in supported
    assert result.auth_method == (
        "none" if not secret else "client_secret_basic" if basic else "client_secret_post"
    )
    assert not result.openid
    # Whatever was accepted can be used: a code redemption at it ends in tokens or
    # AuthorizationFailed, and only an endpoint on this machine is ever contacted.
    if urlsplit(result.token_url).hostname == LOOPBACK:
        await _redeem_with_discovered(server, http, result)


async def _redeem_with_discovered(
    server: ScriptedServer, http: httpx.AsyncClient, provider: OAuthProvider
) -> None:
    server.routes["/token"] = Answer(
        200,
        json.dumps({"access_token": "AT-discovered-123456", "token_type": "Bearer"}).encode(),
        {"content-type": "application/json"},
    )
    flow = AuthorizationCodeGrant(provider, REDIRECT_URI, http=http, timeout=TIMEOUT)
    _, pending = flow.begin()
    params = {"code": "code-discovered-123456", "state": pending.state, "iss": provider.issuer or ""}
    outcome = await bounded(flow.finish(pending, params, provider_in_path="github"))
    if isinstance(outcome, TokenGrant):
        event("discovery: redeemed at the discovered endpoint")
        assert outcome.access_token == "AT-discovered-123456"
        assert [r.path for r in server.requests][-1:] == ["/token"]
    else:
        event(f"discovery: discovered endpoint gave {getattr(outcome, 'detail', None)}")
        assert isinstance(outcome, AuthorizationFailed), outcome
        assert outcome.reason == "token-endpoint", repr(outcome)


# ---------------------------------------------------------------------------------- code redemption


@fuzz_settings(120 * SCALE)
@given(data=st.data())
async def test_any_answer_to_the_code_redemption_is_the_grant_or_authorization_failed(
    server: ScriptedServer, http: httpx.AsyncClient, data: st.DataObject
) -> None:
    openid = data.draw(st.booleans(), label="openid")
    reply = data.draw(
        replies(
            token_bodies(openid=openid, refresh=False),
            error_bodies(echoes=("code", "code_verifier", "client_secret")),
        ),
        label="token endpoint answer",
    )
    await check_redemption(server, http, reply, openid=openid, code=data.draw(_secret("code"), label="code"))


@fuzz_settings(50 * SCALE)
@given(data=st.data())
async def test_any_id_token_in_an_otherwise_valid_answer_is_checked_as_documented(
    server: ScriptedServer, http: httpx.AsyncClient, data: st.DataObject
) -> None:
    """An OpenID provider's answer that is right in every other way: only the ID token decides."""
    valid = st.fixed_dictionaries({name: member.valid for name, member in MEMBERS.items()})
    body = data.draw(valid, label="body")
    body["id_token"] = id_token = data.draw(ID_TOKENS_OIDC, label="id_token")
    event(f"id_token: {id_token.kind if isinstance(id_token, IdToken) else id_token}")
    reply = Reply(200, "application/json", {k: v for k, v in body.items() if v is not _ABSENT})
    await check_redemption(server, http, reply, openid=True, code=data.draw(_secret("code"), label="code"))


async def check_redemption(
    server: ScriptedServer, http: httpx.AsyncClient, reply: Reply, *, openid: bool, code: str
) -> None:
    """Run one authorization code redemption against ``reply`` and check the outcome the docs give."""
    if openid:
        provider = scripted_provider(
            server, client_secret=CLIENT_SECRET, issuer=ISSUER, openid=True, jwks_url=f"{server.base}/jwks"
        )
        flow = AuthorizationCodeGrant(
            provider,
            REDIRECT_URI,
            http=http,
            timeout=TIMEOUT,
            clock=lambda: NOW,
            jwks=JWKSCache(static={"keys": [JWK]}),
        )
    else:
        provider = scripted_provider(server, client_secret=CLIENT_SECRET)
        flow = AuthorizationCodeGrant(provider, REDIRECT_URI, http=http, timeout=TIMEOUT)
    _, pending = flow.begin()
    context = {
        "code": code,
        "code_verifier": pending.code_verifier,
        "client_secret": CLIENT_SECRET,
        "nonce": pending.nonce or "",
    }
    if isinstance(reply.body, dict) and isinstance(reply.body.get("access_token"), str):
        context["access_token"] = reply.body["access_token"]
    answer, obj, size = reply.render(context, server.base)
    server.routes["/token"] = answer
    server.routes["/elsewhere"] = Answer(200, json.dumps({"access_token": "AT-elsewhere-123456"}).encode())
    server.requests.clear()
    note(f"status={reply.status} type={reply.content_type!r} size={size} delay={reply.delay} body={obj!r}")
    params = {"code": code, "state": pending.state, "iss": provider.issuer or ""}
    with captured_logs() as logs:
        outcome = await bounded(flow.finish(pending, params, provider_in_path="github"))

    secrets = {
        "code": code,
        "code verifier": pending.code_verifier,
        "state": pending.state,
        "client secret": CLIENT_SECRET,
        **({"nonce": pending.nonce} if pending.nonce else {}),
        **_issued_secrets(obj),
    }
    # A provider copying what it was sent into its error text gets it withheld: asserted too.
    for what in sorted(_echoed(reply.body)):
        event(f"redemption: provider echoes the {what}")
    assert_clean_logs(logs, secrets)
    # One request, to the pinned token URL, with the code, the verifier and client authentication.
    (request,) = server.requests
    assert (request.method, request.path) == ("POST", "/token")
    assert request.form == {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT_URI,
        "code_verifier": pending.code_verifier,
    }
    assert request.headers["authorization"].startswith("Basic ")

    body = _json_object(reply, obj)
    issued: Issued | Bad = BAD
    if not reply.timely:
        expected, detail = "token-endpoint", "timeout"
    elif size > CAP and reply.status == 200:
        expected, detail = "token-endpoint", "too-large"
    elif reply.status != 200:  # its body, if over the cap, is not read: the status is what counts
        expected, detail = "token-endpoint", f"http-{reply.status}"
    else:
        issued = _issued(body, refresh=False)
        detail = None
        if isinstance(issued, Bad):
            expected = "token-response"
        elif not openid:
            expected = "ok"
        elif body is None or body.get("id_token") is None:
            expected, detail = "id-token", "missing"
        else:
            assert isinstance(reply.body, dict)
            token = reply.body["id_token"]
            expected = "ok" if isinstance(token, IdToken) and token.kind in ID_TOKEN_VALID else "id-token"
    event(f"redemption: expected {expected}")

    if expected == "ok":
        assert isinstance(outcome, TokenGrant), repr(outcome)
        assert isinstance(issued, Issued)
        # Exactly the tokens the provider issued.
        assert outcome.access_token == issued.access_token
        assert outcome.refresh_token == issued.refresh_token
        assert outcome.expires_in == issued.expires_in
        assert outcome.scopes == (issued.scopes if issued.scopes is not None else flow.requested_scopes())
        assert outcome.token_type == "Bearer"
        assert outcome.subject == ("alice" if openid else None)
        connection = outcome.to_connection(OWNER, "github", now=1000.0)
        assert (connection.access_token, connection.refresh_token) == (
            issued.access_token,
            issued.refresh_token,
        )
        assert connection.expires_at == (None if issued.expires_in is None else 1000.0 + issued.expires_in)
        assert_no_secrets(secrets, repr=repr(outcome))
        return

    assert isinstance(outcome, AuthorizationFailed), repr(outcome)
    event(f"redemption: AuthorizationFailed {outcome.reason} {outcome.detail}")
    assert outcome.reason == expected, (repr(outcome), expected)
    if detail is not None:
        assert outcome.detail == detail
    assert not outcome.declined
    assert outcome.public_message in PUBLIC_MESSAGES
    assert str(outcome) == outcome.public_message
    if expected == "token-endpoint" and detail and detail.startswith("http-"):
        # The provider's error code is kept when it is one; its description only cleaned.
        sent = (code, pending.code_verifier, CLIENT_SECRET)
        assert outcome.error == (_error_code(body, sent) if size <= CAP else None)
        if outcome.provider_error is not None:
            assert 0 < len(outcome.provider_error) <= 200
            assert outcome.provider_error.isprintable()
    else:
        assert (outcome.error, outcome.provider_error) == (None, None)
    assert_no_secrets(secrets, message=str(outcome), detail=outcome.detail)
    assert_no_secrets(secrets, repr=repr(outcome), error=outcome.error, provider_error=outcome.provider_error)


# ---------------------------------------------------------------------------------- refresh


async def _store_expired(vault: Vault, *, refresh_token: str | None = STORED_RT) -> Connection:
    return await vault.put_connection(
        OWNER,
        "github",
        access_token=STORED_AT,
        refresh_token=refresh_token,
        expires_at=time.time() - 5,
        scopes=["repo"],
        replace_unrevoked=True,
    )


def _same_outcome(a: object, b: object) -> bool:
    if isinstance(a, RefreshFailed) and isinstance(b, RefreshFailed):
        return (a.retryable, a.reason) == (b.retryable, b.reason)
    return a is b or a == b or (isinstance(a, NeedsReauthorization) and isinstance(b, NeedsReauthorization))


RefreshExpectation = Literal["ok", "reauthorize", "transient", "failed"]


def expected_refresh(reply: Reply, obj: dict[str, Any] | None, size: int) -> RefreshExpectation:
    """The documented mapping of a token endpoint answer to a refresh outcome."""
    if not reply.timely:
        return "transient"  # timeouts and network errors
    if reply.status in TRANSIENT:
        return "transient"  # 429 and 5xx, whatever they carry
    if size > CAP:
        return "failed"  # a 200 too large to read, or an error answer read by its status alone
    body = _json_object(reply, obj)
    error_answer = body is not None and "error" in body and "access_token" not in body
    if reply.status == 200 and not error_answer:
        return "failed" if isinstance(_issued(body, refresh=True), Bad) else "ok"
    return "reauthorize" if _error_code(body) in DEAD_GRANT else "failed"


def _retry_after(value: str | None) -> tuple[float, float] | None:
    """The bounds the hint must fall in, ``None`` when there must be none."""
    if value is None:
        return None
    if value.isdigit() and len(value) <= 10:
        return (min(float(value), 3600.0),) * 2
    try:
        moment = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    delay = moment - time.time()
    return (max(min(delay - 5, 3600.0), 0.0), max(min(delay + 5, 3600.0), 0.0))


@fuzz_settings(40 * SCALE)
@given(data=st.data())
async def test_any_refresh_answer_stores_the_new_tokens_or_fails_as_documented(
    vault: Vault, server: ScriptedServer, http: httpx.AsyncClient, data: st.DataObject
) -> None:
    reply = data.draw(
        replies(
            token_bodies(openid=False, refresh=True),
            error_bodies(echoes=("client_secret", "refresh_token", "access_token")),
        ),
        label="refresh answer",
    )
    callers = data.draw(st.integers(1, 4), label="callers")
    await _store_expired(vault)
    before = await vault.get_connection(OWNER, "github")
    assert before is not None
    context = {"client_secret": CLIENT_SECRET, "refresh_token": STORED_RT, "access_token": STORED_AT}
    answer, obj, size = reply.render(context, server.base)
    server.routes["/token"] = answer
    server.requests.clear()
    note(f"status={reply.status} type={reply.content_type!r} size={size} delay={reply.delay} body={obj!r}")
    refresher = token_refresher(
        scripted_provider(server, client_secret=CLIENT_SECRET), http=http, timeout=TIMEOUT
    )
    with captured_logs() as logs:
        outcomes = await asyncio.gather(
            *(bounded(vault.fresh_connection(OWNER, "github", refresher)) for _ in range(callers))
        )
    after = await vault.get_connection(OWNER, "github")
    assert after is not None
    secrets = {
        "stored access token": STORED_AT,
        "stored refresh token": STORED_RT,
        "client secret": CLIENT_SECRET,
        **_issued_secrets(obj),
    }
    for what in sorted(_echoed(reply.body)):
        event(f"refresh: provider echoes the {what}")
    assert_clean_logs(logs, secrets)
    expected = expected_refresh(reply, obj, size)
    # Single flight: callers that overlap share one request (one that arrives after a failure
    # has ended may try again), each the refresh grant with the stored refresh token.
    assert 1 <= len(server.requests) <= (1 if expected in ("ok", "reauthorize") else callers)
    for request in server.requests:
        assert (request.method, request.path) == ("POST", "/token")
        assert request.form == {"grant_type": "refresh_token", "refresh_token": STORED_RT}
    outcome = outcomes[0]
    assert all(_same_outcome(o, outcome) for o in outcomes), outcomes
    event(f"refresh: expected {expected}")
    if expected == "ok":
        issued = _issued(_json_object(reply, obj), refresh=True)
        assert isinstance(issued, Issued)
        assert isinstance(outcome, Connection), repr(outcome)
        event(f"refresh: {'rotated' if issued.refresh_token else 'kept'} refresh token")
        assert outcome == after  # what the caller got is what is stored
        assert after.status == "active"
        assert after.access_token == issued.access_token
        assert after.refresh_token == (issued.refresh_token or STORED_RT)
        assert after.scopes == (before.scopes if issued.scopes is None else issued.scopes)
        assert after.token_type == "Bearer"
        if issued.expires_in is None:
            assert after.expires_at is None
        else:
            assert after.last_refresh_at is not None
            assert after.expires_at == after.last_refresh_at + issued.expires_in
        return

    unchanged = (before.access_token, before.refresh_token, before.expires_at, before.scopes)
    # No failure loses the working refresh token (or anything else that is stored).
    assert (after.access_token, after.refresh_token, after.expires_at, after.scopes) == unchanged
    if expected == "reauthorize":
        assert isinstance(outcome, NeedsReauthorization), repr(outcome)
        assert after.status == "needs_reauthorization"
        assert "must connect again" in str(outcome)
    else:
        assert isinstance(outcome, RefreshFailed), repr(outcome)
        assert after == before
        assert outcome.retryable is (expected == "transient"), repr(outcome)
        assert outcome.__cause__ is None
        assert "'github'" in str(outcome)
        assert len(str(outcome)) < 300
        if expected == "transient" and reply.timely and reply.status in TRANSIENT:
            bounds = _retry_after(reply.retry_after)
            if bounds is None:
                assert outcome.retry_after is None
            else:
                assert outcome.retry_after is not None
                assert bounds[0] <= outcome.retry_after <= bounds[1]
    event(f"refresh: {type(outcome).__name__}")
    assert_no_secrets(
        secrets, message=str(outcome), repr=repr(outcome), reason=getattr(outcome, "reason", None)
    )


# ---------------------------------------------------------------------------------- revocation


def _revoke_problem(reply: Reply, obj: dict[str, Any] | None, size: int) -> str | None:
    """``None`` when this answer means "revoked" (RFC 7009 §2.2, and ``400 invalid_token`` /
    ``invalid_grant`` for a token already dead), else what went wrong."""
    if not reply.timely:
        return "timeout"
    if reply.status == 200:
        return "too-large" if size > CAP else None
    if size > CAP:
        return f"HTTP {reply.status}"  # an error answer over the cap is read by its status alone
    error = _error_code(_json_object(reply, obj))
    if reply.status == 400 and error in ALREADY_DEAD:
        return None
    return error or f"HTTP {reply.status}"


revocation_errors = st.builds(
    lambda error, description: {
        **({} if error is _ABSENT else {"error": error}),
        **({} if description is _ABSENT else {"error_description": description}),
    },
    st.one_of(error_codes, st.just(_ABSENT)),
    st.one_of(error_descriptions, st.just(_ABSENT)),
)


@fuzz_settings(40 * SCALE)
@given(data=st.data())
async def test_any_revocation_answer_disconnects_or_keeps_the_row_as_revocation_failed(
    vault: Vault, server: ScriptedServer, http: httpx.AsyncClient, data: st.DataObject
) -> None:
    has_refresh = data.draw(st.booleans(), label="refresh token")
    plans = data.draw(st.lists(replies(revocation_errors, revocation_errors), min_size=2, max_size=2))
    await _store_expired(vault, refresh_token=STORED_RT if has_refresh else None)
    before = await vault.get_connection(OWNER, "github")
    assert before is not None
    rendered = [plan.render({}, server.base) for plan in plans]
    answers = iter([answer for answer, _, _ in rendered])
    server.routes["/revoke"] = lambda _request: next(answers, Answer(500))
    server.requests.clear()
    revoker = token_revoker(
        scripted_provider(server, client_secret=CLIENT_SECRET), http=http, timeout=TIMEOUT
    )
    with captured_logs() as logs:
        outcome = await bounded(vault.disconnect(OWNER, "github", revoker))
    after = await vault.get_connection(OWNER, "github")
    secrets = {"access token": STORED_AT, "refresh token": STORED_RT, "client secret": CLIENT_SECRET}
    assert_clean_logs(logs, secrets)

    # The refresh token first (revoking it ends the grant), then the access token.
    tokens = [(STORED_RT, "refresh_token")] if has_refresh else []
    tokens.append((STORED_AT, "access_token"))
    problems = [
        _revoke_problem(plan, obj, size) for plan, (_, obj, size) in zip(plans, rendered, strict=True)
    ]
    revoked = True
    sent = 0
    for index, (_, hint) in enumerate(tokens):
        sent += 1
        problem = problems[index]
        if problem is None:
            continue
        refresh_revoked = has_refresh and hint == "access_token"
        if not (refresh_revoked and problem == "unsupported_token_type"):
            revoked = False
        break
    assert [(r.path, r.form) for r in server.requests] == [
        ("/revoke", {"token": token, "token_type_hint": hint}) for token, hint in tokens[:sent]
    ]
    assert all(r.headers["authorization"].startswith("Basic ") for r in server.requests)
    event(f"revocation: {'revoked' if revoked else 'failed'} after {sent} request(s)")
    if revoked:
        assert outcome is True, repr(outcome)
        assert after is None
        return
    assert isinstance(outcome, RevocationFailed), repr(outcome)
    assert after is not None
    assert after.status == "revocation_failed"
    assert (after.access_token, after.refresh_token) == (before.access_token, before.refresh_token)
    assert "retry disconnect later" in str(outcome)
    assert_no_secrets(secrets, message=str(outcome), repr=repr(outcome), reason=outcome.reason)


# ---------------------------------------------------------------------------------- regressions
# What the properties above found, as plain examples.

OIDC_PATH = "/.well-known/openid-configuration"


@pytest.mark.parametrize(
    "member",
    [
        {"service_documentation": 123},  # authlib: AttributeError ('int' has no 'decode')
        {"op_policy_uri": ["https://as.example/policy"]},
        {"op_tos_uri": {"en": "https://as.example/tos"}},
        {"grant_types_supported": {"authorization_code": True}},  # authlib: KeyError 0
    ],
)
async def test_metadata_members_of_another_type_are_discovery_failed(
    server: ScriptedServer, member: dict[str, Any]
) -> None:
    server.routes[OIDC_PATH] = Answer(body=_metadata(server, **member))
    (name,) = member
    with pytest.raises(DiscoveryFailed, match=f"{name} is not an? (string|array)"):
        await discover(server.base, id="github", client_id="client-1")


UNREACHABLE_ENDPOINTS = [
    "https://127.0.0.1:99999/token",  # the socket refuses the port: OverflowError in an ExceptionGroup
    "http://127.0.0.1:8080/to\x7fken",  # httpx.InvalidURL
    "https://a\u200bb.example/token",  # httpx.InvalidURL (not a valid IDNA host name)
    "https://as.example/" + "t" * 70_000,  # httpx.InvalidURL (too long)
    "https://as.example/to ken",
]


@pytest.mark.parametrize("url", UNREACHABLE_ENDPOINTS, ids=range(len(UNREACHABLE_ENDPOINTS)))
def test_an_endpoint_no_request_can_be_sent_to_is_refused_in_the_configuration(url: str) -> None:
    with pytest.raises(ValueError, match="token_url"):
        OAuthProvider(id="github", authorize_url="https://as.example/a", token_url=url, client_id="c")


@pytest.mark.parametrize("url", UNREACHABLE_ENDPOINTS[:4], ids=range(4))
async def test_a_discovered_endpoint_no_request_can_be_sent_to_is_discovery_failed(
    server: ScriptedServer, url: str
) -> None:
    # Before: discovery accepted it, and every code redemption, refresh and revocation then
    # raised the HTTP client's own exception instead of AuthorizationFailed & co.
    server.routes[OIDC_PATH] = Answer(body=_metadata(server, token_endpoint=url))
    with pytest.raises(DiscoveryFailed, match="token_url"):
        await discover(server.base, id="github", client_id="client-1")


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_a_429_or_5xx_over_the_size_cap_is_still_a_transient_refresh_failure(
    server: ScriptedServer, status: int
) -> None:
    # Before: "token endpoint answer too large", not retryable, for a provider's maintenance page.
    page = "<html>" + "maintenance " * 6000 + "</html>"
    server.routes["/token"] = Answer(status, page, {"content-type": "text/html", "retry-after": "7"})
    connection = Connection(owner=OWNER, provider="github", access_token=STORED_AT, refresh_token=STORED_RT)
    result = await token_refresher(scripted_provider(server), timeout=TIMEOUT)(connection)
    assert len(page) > CAP
    assert (result.outcome, result.reason, result.retry_after) == (
        "transient",
        f"token endpoint HTTP {status}",
        7.0,
    )


async def test_a_large_404_at_the_openid_path_still_falls_back_to_rfc8414(server: ScriptedServer) -> None:
    server.routes[OIDC_PATH] = Answer(404, "<html>" + "not found " * 30_000 + "</html>")
    server.routes["/.well-known/oauth-authorization-server"] = Answer(body=_metadata(server))
    provider = await discover(server.base, id="github", client_id="client-1")
    assert provider.token_url == f"{server.base}/token"


async def test_a_200_over_the_size_cap_is_still_refused(server: ScriptedServer) -> None:
    server.routes["/token"] = Answer(
        200, json.dumps({"padding": "x" * CAP}), {"content-type": "application/json"}
    )
    connection = Connection(owner=OWNER, provider="github", access_token=STORED_AT, refresh_token=STORED_RT)
    result = await token_refresher(scripted_provider(server), timeout=TIMEOUT)(connection)
    assert (result.outcome, result.reason) == ("failed", "token endpoint answer too large")


# ---------------------------------------------------------------------------------- helpers' self-check


def test_the_oracle_reads_a_plain_answer_as_the_kit_documents_it() -> None:
    """The oracle itself, on answers whose outcome the docs spell out."""
    ok = Reply(200, "application/json", {})
    body = {"access_token": "AT-1", "token_type": "bearer", "expires_in": "7200", "scope": "repo  repo gist"}
    assert _issued(body, refresh=False) == Issued("AT-1", None, 7200.0, ("repo", "gist"), None)
    assert _issued({**body, "expires_in": -5}, refresh=False) is BAD
    assert _issued({**body, "expires_in": -5}, refresh=True) == Issued(
        "AT-1", None, 0.0, ("repo", "gist"), None
    )
    assert _issued({**body, "scope": ["repo"]}, refresh=True) == Issued("AT-1", None, 7200.0, None, None)
    assert _issued({**body, "token_type": "DPoP"}, refresh=True) is BAD
    assert expected_refresh(ok, {"error": "bad_refresh_token"}, 10) == "reauthorize"
    assert expected_refresh(Reply(503, None, RawBody(b"")), None, CAP + 1) == "transient"
    assert expected_refresh(Reply(400, "text/plain", {}), {"error": "invalid_grant"}, 10) == "failed"
    assert _revoke_problem(Reply(400, "application/json", {}), {"error": "invalid_token"}, 10) is None
    assert _revoke_problem(Reply(503, None, {}), None, 10) == "HTTP 503"
