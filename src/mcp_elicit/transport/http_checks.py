"""The checks of an MCP request over HTTP, in the order they run, each one small function.

Before the body is read (:data:`METHOD_CHECKS`): the Origin (403; a page in a browser must learn
nothing more), a CORS preflight from an allowed origin (204), the method (405: POST, and GET and
DELETE for 2025-11-25 sessions), a GET's Accept (406), and for a POST Content-Type and
Content-Encoding (415), Accept (406), a declared Content-Length over the limit (413). Each takes
the app's :class:`Policy` and the request's :class:`Head` and returns the early :class:`Reply`,
or ``None`` to go on. Once the body is a JSON-RPC request, :func:`check_request` reads its
``_meta`` and holds the headers against the body (-32602, -32020), raising the error to send.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp_elicit.transport.asgi import Header, Scope, Send, send_json, send_response
from mcp_elicit.wire.errors import INVALID_REQUEST, McpError, header_mismatch
from mcp_elicit.wire.hosts import is_loopback_host
from mcp_elicit.wire.http import accepted_replies, check_request_headers
from mcp_elicit.wire.jsonrpc import Request, encode_error
from mcp_elicit.wire.meta import RequestMeta, is_modern, request_meta
from mcp_elicit.wire.param_headers import HeaderMap, check_param_headers

# The request headers the checks read, by their raw (lower-case) name. Without an authentication
# hook, other headers are skipped undecoded (nothing reads them), except Mcp-* ones, which are
# still checked for duplicates.
_READ_HEADERS: dict[bytes, str] = {
    name.encode("latin-1"): name
    for name in (
        "origin",
        "content-type",
        "content-encoding",
        "accept",
        "content-length",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "access-control-request-method",
        "access-control-request-headers",
        "last-event-id",
    )
}
# Headers that must not appear twice: the Mcp-* ones this server reads (the others, Mcp-Session-Id
# of older revisions say, are ignored like any header it does not use), and Authorization (read
# only with an authentication hook: a proxy in front may have read the other one).
_SINGLE_HEADERS = frozenset({"mcp-protocol-version", "mcp-method", "mcp-name"})
# What a browser page at an allowed origin may send (CORS preflight): the MCP headers, the
# parameter headers a tool declares and a bearer token.
_CORS_ALLOWED_HEADERS = "content-type, accept, authorization, mcp-protocol-version, mcp-method, mcp-name"
_CORS_HEADER_NAME = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_TWO_ORIGINS = "(more than one Origin header)"


@dataclass(frozen=True, slots=True)
class Policy:
    """What the checks hold a request to (an :class:`~mcp_elicit.transport.http_app.HttpApp`'s
    settings)."""

    allowed_origins: frozenset[str] | None  # None: loopback origins only
    max_body: int
    param_headers: dict[str, HeaderMap] = field(default_factory=dict)  # tools with Mcp-Param-*


@dataclass(slots=True)
class Head:
    """The request line and the headers the checks read (lower-case names; the first value of a
    header wins, except Accept and Content-Encoding, whose values are joined into one list)."""

    method: str
    headers: dict[str, str]
    duplicate: str | None = None  # a header sent twice that must not be: refused once the id is known
    accepts_sse: bool = False  # set by the Accept check

    @classmethod
    def read(cls, scope: Scope, *, all_headers: bool) -> Head:
        """``all_headers``: decode every header (an authentication hook sees them all)."""
        headers: dict[str, str] = {}
        duplicate: str | None = None
        for raw_name, raw_value in scope["headers"]:
            # ASGI servers give header names in lower case.
            name = _READ_HEADERS.get(raw_name)
            if name is None:
                if not (all_headers or raw_name.startswith(b"mcp-")):
                    continue
                name = raw_name.decode("latin-1")
            if name in headers:
                if name == "origin":
                    headers[name] = _TWO_ORIGINS  # never an allowed origin
                elif name in ("accept", "content-encoding"):
                    headers[name] += ", " + raw_value.decode("latin-1")  # one list (RFC 9110 §5.3)
                elif name == "authorization" or (
                    duplicate is None and (name in _SINGLE_HEADERS or name.startswith("mcp-param-"))
                ):
                    duplicate = name  # Authorization first: every era refuses it (the Mcp-* ones, 2026)
                continue
            headers[name] = raw_value.decode("latin-1")
        return cls(scope["method"], headers, duplicate)


@dataclass(frozen=True, slots=True)
class Reply:
    """An early answer: ``error`` as a JSON-RPC error body (id null), or an empty body."""

    status: int
    error: McpError | None = None
    headers: tuple[Header, ...] = ()

    async def send(self, send: Send) -> None:
        if self.error is None:
            await send_response(send, self.status, self.headers)
        else:
            await send_json(send, self.status, encode_error(None, self.error), self.headers)


def _refused(status: int, message: str, *headers: Header) -> Reply:
    return Reply(status, McpError(INVALID_REQUEST, message), headers)


# -- the checks before the body ------------------------------------------------------------------


def origin_allowed(policy: Policy, head: Head) -> Reply | None:
    """403 for a browser page at an origin that is not allowed (DNS rebinding, cross-site)."""
    origin = head.headers.get("origin")
    if origin is None or _origin_allowed(policy, origin):
        return None  # no Origin: not a browser
    return _refused(403, f"Forbidden: origin {origin!r} is not allowed")


def cors_preflight(policy: Policy, head: Head) -> Reply | None:
    """204 with what CORS needs for a preflight from an origin the operator listed: POST, the MCP
    headers, and the ``Mcp-Param-*`` ones a tool declares (which the browser names)."""
    origin = head.headers.get("origin")
    if (
        origin is None
        or policy.allowed_origins is None
        or head.method != "OPTIONS"
        or "access-control-request-method" not in head.headers
    ):
        return None
    allowed = _CORS_ALLOWED_HEADERS
    requested = head.headers.get("access-control-request-headers")
    if requested:
        names = [name.strip().lower() for name in requested.split(",") if name.strip()]
        extra = [n for n in names if n.startswith("mcp-param-") and _CORS_HEADER_NAME.issuperset(n)]
        if extra:
            allowed += ", " + ", ".join(dict.fromkeys(extra))
    return Reply(
        204,
        headers=(
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-allow-methods", b"POST"),
            (b"access-control-allow-headers", allowed.encode("latin-1")),
            (b"access-control-max-age", b"600"),
            (b"vary", b"origin"),
        ),  # no Content-Length: a 204 must not carry one (RFC 9110 §8.6)
    )


def known_method(policy: Policy, head: Head) -> Reply | None:
    """405 for anything but POST, and GET and DELETE (a 2025-11-25 session's stream and end)."""
    if head.method in ("POST", "GET", "DELETE"):
        return None
    return _refused(
        405, "Method Not Allowed: send JSON-RPC messages with POST", (b"allow", b"GET, POST, DELETE")
    )


def json_body(policy: Policy, head: Head) -> Reply | None:
    """415 for a body that is not ``application/json``."""
    content_type = head.headers.get("content-type", "")
    if content_type.split(";", 1)[0].strip().lower() == "application/json":
        return None
    return _refused(415, "Unsupported Media Type: the body must be application/json")


def uncompressed(policy: Policy, head: Head) -> Reply | None:
    """415 for a compressed body (it would reach the JSON parser as "not valid UTF-8")."""
    encoding = head.headers.get("content-encoding")
    if encoding is None or all(c.strip().lower() in ("", "identity") for c in encoding.split(",")):
        return None
    return _refused(
        415,
        f"Unsupported Media Type: Content-Encoding {encoding!r} is not supported; send the body uncompressed",
        (b"accept-encoding", b"identity"),
    )


def accepts_json(policy: Policy, head: Head) -> Reply | None:
    """406 unless the client accepts ``application/json`` (read as RFC 9110 media ranges);
    notes whether it accepts ``text/event-stream`` too."""
    accepts, head.accepts_sse = accepted_replies(head.headers.get("accept", "*/*"))
    if accepts:
        return None
    return _refused(406, "Not Acceptable: the client must accept application/json")


def declared_size(policy: Policy, head: Head) -> Reply | None:
    """413 at once for a declared body over the limit (a lying Content-Length is caught while
    reading; one of non-ASCII digits, which ``int`` would read, is left to that too)."""
    declared = head.headers.get("content-length")
    if declared is None or not (declared.isascii() and declared.isdigit()):
        return None
    if int(declared) <= policy.max_body:
        return None
    return too_large(policy)


def too_large(policy: Policy) -> Reply:
    return _refused(413, f"Invalid request: the body is over the limit of {policy.max_body} bytes")


def accepts_events(policy: Policy, head: Head) -> Reply | None:
    """406 for a GET that does not accept ``text/event-stream`` (a GET is answered with a stream)."""
    if head.method != "GET" or accepted_replies(head.headers.get("accept", "*/*"))[1]:
        return None
    return _refused(406, "Not Acceptable: a GET is answered with text/event-stream, which it must accept")


# The checks before the body, in order, by method: a POST's body is checked too, a GET must
# take an event stream.
METHOD_CHECKS: Mapping[str, Sequence[Callable[[Policy, Head], Reply | None]]] = {
    "POST": (origin_allowed, json_body, uncompressed, accepts_json, declared_size),
    "GET": (origin_allowed, accepts_events),
    "DELETE": (origin_allowed,),
}
# Any other method: a CORS preflight (OPTIONS) is answered, anything else gets 405.
OTHER_METHOD_CHECKS: Sequence[Callable[[Policy, Head], Reply | None]] = (
    origin_allowed,
    cors_preflight,
    known_method,
)


def first_reply(policy: Policy, head: Head) -> Reply | None:
    for check in METHOD_CHECKS.get(head.method, OTHER_METHOD_CHECKS):
        reply = check(policy, head)
        if reply is not None:
            return reply
    return None


# -- the checks of a request -----------------------------------------------------------------------


def check_request(policy: Policy, head: Head, request: Request) -> RequestMeta:
    """The request's ``_meta``, once the headers agree with the body; the McpError to answer with
    otherwise."""
    if request.method == "initialize" and not is_modern(request.params):
        raise header_mismatch(
            f"an initialize (the 2025-11-25 handshake) cannot carry MCP-Protocol-Version "
            f"{head.headers.get('mcp-protocol-version')!r}, a 2026-07-28 version: send it without "
            "that header, or send server/discover"
        )
    meta = request_meta(request.method, request.params)
    if head.duplicate is not None:
        raise header_mismatch(f"the {head.duplicate} header appears twice")
    check_request_headers(head.headers, request)
    if policy.param_headers and request.method == "tools/call":
        tool = request.params.get("name")
        mapping = policy.param_headers.get(tool) if isinstance(tool, str) else None
        if mapping:
            check_param_headers(head.headers, mapping, request.params.get("arguments"))
    return meta


# -- origins -------------------------------------------------------------------------------------


def _origin_allowed(policy: Policy, origin: str) -> bool:
    if origin == _TWO_ORIGINS:
        return False  # whatever is allowed, "*" included
    if policy.allowed_origins is None:
        return _loopback_origin(origin)
    return "*" in policy.allowed_origins or origin in policy.allowed_origins


def _loopback_origin(origin: str) -> bool:
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and is_loopback_host(parts.hostname)


def with_cors(send: Send, origin: str) -> Send:
    """``send`` adding the CORS headers that let a page at ``origin`` (allowed) read the reply."""
    cors = [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-expose-headers", b"www-authenticate, retry-after"),
        (b"vary", b"origin"),
    ]

    async def send_with_cors(message: Any) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *cors]}
        await send(message)

    return send_with_cors
