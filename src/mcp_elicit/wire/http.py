"""HTTP rules of the Streamable HTTP transport that need no sockets: header encoding, the
header-versus-body check, what an ``Accept`` header allows, and the HTTP status of each JSON-RPC
error.

Header values that are not plain header-safe ASCII travel as ``=?base64?<base64 of UTF-8>?=``.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any, Final

from mcp_elicit.wire.errors import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    header_mismatch,
)
from mcp_elicit.wire.jsonrpc import Request
from mcp_elicit.wire.meta import PROTOCOL_VERSION_KEY

SENTINEL_PREFIX = "=?base64?"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 section 5.6.2
SENTINEL_SUFFIX = "?="

# Methods whose target travels in the Mcp-Name header, and the params key holding it.
NAMED_METHODS: Mapping[str, str] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
}

_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    METHOD_NOT_FOUND: 404,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    # An internal error is still a well-formed JSON-RPC answer; it is not an HTTP failure.
    INTERNAL_ERROR: 200,
}


def is_token(text: str) -> bool:
    """Whether ``text`` is an HTTP token: a field name, or an ``x-mcp-header`` name."""
    return _TOKEN.fullmatch(text) is not None


def status_for_error(code: int) -> int:
    return _STATUS.get(code, 200)


def _header_safe(value: str) -> bool:
    # Anything that starts like the sentinel is encoded, even if it does not end like it: a
    # receiver that reads only the prefix still gets it right.
    return (
        value == value.strip(" \t")
        and all(0x20 <= ord(ch) <= 0x7E for ch in value)
        and not value.startswith(SENTINEL_PREFIX)
    )


def _is_sentinel(value: str) -> bool:
    """Whether a received value is in the ``=?base64?...?=`` form. Only the whole form counts: a
    plain value such as ``=?base64?x`` is what other implementations send as it is."""
    return (
        value.startswith(SENTINEL_PREFIX)
        and value.endswith(SENTINEL_SUFFIX)
        and len(value) >= len(SENTINEL_PREFIX) + len(SENTINEL_SUFFIX)
    )


def encode_header_value(value: str) -> str:
    """Plain when header-safe, otherwise the base64 sentinel form."""
    if _header_safe(value):
        return value
    encoded = base64.b64encode(value.encode("utf-8")).decode("ascii")
    return f"{SENTINEL_PREFIX}{encoded}{SENTINEL_SUFFIX}"


def decode_header_value(value: str, header: str) -> str:
    """Undo :func:`encode_header_value`; a sentinel that does not hold canonical base64 of UTF-8
    text is a -32020 error (so a corrupt header never matches a body value by accident)."""
    if not _is_sentinel(value):
        return value
    body = value[len(SENTINEL_PREFIX) : -len(SENTINEL_SUFFIX)]
    try:
        raw = base64.b64decode(body, validate=True)
        if base64.b64encode(raw).decode("ascii") != body:  # other bits in the padding, say
            raise ValueError("not canonical")
        return raw.decode("utf-8")
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        raise header_mismatch(
            f"{header} header is not valid base64 of UTF-8 text inside =?base64?...?="
        ) from None


def read_header_value(raw: str, header: str) -> str:
    """A received Mcp-* header value, decoded: a plain value must be visible ASCII (anything else
    travels in the ``=?base64?...?=`` form); -32020 otherwise."""
    if _is_sentinel(raw):
        return decode_header_value(raw, header)
    if not (raw.isascii() and raw.isprintable()):
        raise header_mismatch(
            f"the {header} header holds characters other than visible ASCII; send such values "
            "as =?base64?<base64 of UTF-8>?="
        )
    return raw


def check_request_headers(headers: Mapping[str, str], request: Request) -> None:
    """Check MCP-Protocol-Version, Mcp-Method and Mcp-Name against the body (-32020 otherwise).

    ``headers`` uses lower-case names. Call it after ``_meta`` has been checked.
    """
    params = request.params
    meta: Any = params.get("_meta")
    body_version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    method = request.method
    version = headers.get("mcp-protocol-version")
    # Equal values pass at once, unless they hold more than ASCII (a header value decoded as
    # Latin-1 can equal a non-ASCII body value): those _expect refuses.
    if (
        version is None
        or version != body_version
        or headers.get("mcp-method") != method
        or not (method.isascii() and version.isascii())
    ):
        _expect(headers, "mcp-protocol-version", "MCP-Protocol-Version", body_version, decode=False)
        _expect(headers, "mcp-method", "Mcp-Method", method, decode=False)
    key = NAMED_METHODS.get(method)
    if key is not None:
        target = params.get(key)
        if not isinstance(target, str):
            return  # the dispatcher reports the missing name/uri as -32602
        name = headers.get("mcp-name")
        if name != target or not (name.isascii() and name.isprintable()) or _is_sentinel(name):
            _expect(headers, "mcp-name", "Mcp-Name", target, decode=True)


def _expect(headers: Mapping[str, str], name: str, display: str, body_value: object, *, decode: bool) -> None:
    raw = headers.get(name)
    if raw is None:
        raise header_mismatch(f"the {display} header is required on this request")
    value = read_header_value(raw, display) if decode else raw
    if not decode and not (value.isascii() and value.isprintable()):
        raise header_mismatch(f"the {display} header holds characters other than visible ASCII")
    if value != body_value:
        raise header_mismatch(
            f"{display} header value {value!r} does not match the body value {body_value!r}"
        )


# -- Accept -------------------------------------------------------------------------------------
# What an Accept header allows of the two replies a Streamable HTTP server sends: JSON
# (application/json) and an SSE stream (text/event-stream). RFC 9110 §12.5.1: the media ranges
# are a comma-separated list (repeated header lines are one list); the most specific range that
# matches a type decides, and q=0 means "not acceptable".

_JSON: Final = ("application/json", "application/*")
_SSE: Final = ("text/event-stream", "text/*")
# What MCP clients send, so what nearly every request carries: known without parsing it.
_MCP_ACCEPT: Final = "application/json, text/event-stream"


def _quality(params: list[str]) -> float:
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                quality = float(value.strip())
            except ValueError:
                return 0.0  # an unreadable weight accepts nothing: the client said something else
            return quality if 0.0 <= quality <= 1.0 else 0.0
    return 1.0


def accepted_replies(accept: str) -> tuple[bool, bool]:
    """``(json, sse)``: whether a JSON reply and whether an SSE reply are acceptable."""
    if accept == _MCP_ACCEPT:
        return True, True
    # specificity (2 exact, 1 type/*, 0 */*) and weight of the best match so far, per reply
    json_match = (-1, 0.0)
    sse_match = (-1, 0.0)
    for item in accept.split(","):
        media, *params = item.split(";")
        media = media.strip().lower()
        if not media:
            continue
        quality = _quality(params)
        if media == "*/*":
            specificity = 0
        elif media in _JSON or media in _SSE:
            specificity = 2 if media in (_JSON[0], _SSE[0]) else 1
        else:
            continue
        if (media == "*/*" or media in _JSON) and specificity > json_match[0]:
            json_match = (specificity, quality)
        if (media == "*/*" or media in _SSE) and specificity > sse_match[0]:
            sse_match = (specificity, quality)
    return json_match[1] > 0, sse_match[1] > 0
