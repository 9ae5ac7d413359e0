"""Which era a server speaks: what the ``server/discover`` probe's outcome means, and the verdicts
remembered per server.

The rule (wire-2025-11-25.md §8.5): the client asks ``server/discover`` first. Only two answers
are *modern* evidence -- a ``DiscoverResult``, and ``-32022`` whose ``data.supported`` lists a
2026-07-28-era version (the client then retries at a version it lists, or fails if it speaks
none of them). Everything else a legacy server is known to answer means *legacy*: any other
JSON-RPC error (the fallback is never keyed to one code), a reply that is not a
``DiscoverResult``, HTTP 400/404/405 without such a body, and on stdio a timeout or the server
exiting. What says nothing about the era is an error, not a fallback: HTTP 401/403 (credentials),
3xx, 5xx and other statuses, and an HTTP timeout.

A 404 to ``server/discover`` falls back to ``initialize``; a 404 there too (no JSON-RPC in the
reply) means no era at all: nothing serves MCP at that URL, and :func:`not_found` says so, with
the URL to try (``http://127.0.0.1:8000/mcp`` for ``http://127.0.0.1:8000/``).

A verdict is remembered for this process, per stdio command line or HTTP origin: a server
remembered as legacy is sent ``initialize`` straight away (no probe that a legacy server may take
badly), and forgotten when that fails, which sends the next connection through the probe again.
A remembered verdict expires after :data:`VERDICT_TTL` seconds: a legacy server that was upgraded
never fails visibly.
"""

from __future__ import annotations

import time
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from mcp_elicit.client.errors import (
    AuthorizationRequiredError,
    EndpointNotFoundError,
    HttpStatusError,
    McpClientError,
    ProtocolViolation,
    RequestTimeoutError,
    ServerExitedError,
)
from mcp_elicit.wire.errors import UNSUPPORTED_PROTOCOL_VERSION
from mcp_elicit.wire.legacy import LEGACY_VERSIONS

Era = Literal["modern", "legacy"]
ProtocolChoice = Literal["auto", "2025-11-25", "2026-07-28"]
PROTOCOL_CHOICES: tuple[str, ...] = ("auto", "2025-11-25", "2026-07-28")

VERDICT_TTL = 3600.0
_FALLBACK_STATUSES = frozenset({400, 404, 405})

_verdicts: dict[str, tuple[Era, float]] = {}


def remembered(key: str) -> Era | None:
    """The verdict remembered for ``key`` (a command line or an origin), if still fresh."""
    found = _verdicts.get(key)
    if found is None:
        return None
    era, when = found
    if time.monotonic() - when > VERDICT_TTL:
        del _verdicts[key]
        return None
    return era


def remember(key: str, era: Era) -> None:
    _verdicts[key] = (era, time.monotonic())


def forget(key: str) -> None:
    _verdicts.pop(key, None)


def modern_versions(supported: object) -> list[str]:
    """The versions in a ``-32022``'s ``data.supported`` that are not handshake-era ones."""
    if not isinstance(supported, list):
        return []
    return [v for v in supported if isinstance(v, str) and v not in LEGACY_VERSIONS]


def is_modern_refusal(error: McpClientError) -> bool:
    """``-32022`` whose ``data.supported`` names a 2026-07-28-era version: a modern server."""
    if error.code != UNSUPPORTED_PROTOCOL_VERSION:
        return False
    data: Any = error.data
    return bool(modern_versions(data.get("supported") if isinstance(data, dict) else None))


def probe_says_legacy(error: BaseException, *, stdio: bool) -> bool:
    """Whether the failed ``server/discover`` probe means a legacy server (True) or is an error
    to report as it is (False)."""
    if isinstance(error, McpClientError):
        return not is_modern_refusal(error)
    if isinstance(error, AuthorizationRequiredError):
        return False  # credentials missing or refused: no era evidence
    if isinstance(error, HttpStatusError):
        return error.status in _FALLBACK_STATUSES
    if isinstance(error, ProtocolViolation):
        return True  # an answer that is not a DiscoverResult
    # stdio: no answer in time, or the server exited (some do on an unknown method)
    return stdio and isinstance(error, RequestTimeoutError | ServerExitedError)


USUAL_PATH = "/mcp"


def not_found(error: BaseException, url: str) -> EndpointNotFoundError | None:
    """The error to report for ``error``, an HTTP 404 while connecting to ``url`` (the last
    answer of the era detection: ``initialize`` after ``server/discover``), or None for any
    other error. A 404 that carries a JSON-RPC message is the server's answer, not this."""
    if not isinstance(error, HttpStatusError) or isinstance(error, EndpointNotFoundError):
        return None
    if error.status != 404:
        return None
    return EndpointNotFoundError(url, suggested_url(url), str(error))


def suggested_url(url: str) -> str | None:
    """Where an MCP endpoint usually is on ``url``'s origin (:data:`USUAL_PATH`; ``url``'s own
    path without the trailing slash when it ends in ``/mcp/``), or None when ``url``'s path
    already ends in ``/mcp``."""
    parts = urlsplit(url)
    if parts.path.endswith(USUAL_PATH):
        return None
    trimmed = parts.path.rstrip("/")
    path = trimmed if trimmed.endswith(USUAL_PATH) else USUAL_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))
