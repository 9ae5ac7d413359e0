"""Bounded HTTP for the OAuth client: one deadline per request, a body size cap, no redirects.

Every request to a provider goes through :func:`request`. The whole exchange (connect, send,
headers, body) shares one ``timeout``, and the body is read in chunks up to ``max_bytes``, so a
slow or hostile endpoint can neither hang a page nor exhaust memory. A ``200`` over the cap is a
failure (``too-large``); any other answer over it comes back without its body, because its status
is what counts (a ``503`` maintenance page is still a ``503``). Redirects are never followed: a
token request redirected elsewhere would carry the code and client credentials to a URL that was
not pinned.

Failures raise :class:`HttpFailure` with a fixed ``kind`` and the exception's *type name* only
(an httpx message may quote the request).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

import orjson

if TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_TIMEOUT", "HttpAnswer", "HttpFailure", "request"]

DEFAULT_TIMEOUT: Final = 10.0


class HttpFailure(Exception):
    """No usable answer: ``timeout``, ``network`` (connect/read errors) or ``too-large`` (a ``200``
    whose body is over the cap)."""

    def __init__(self, kind: Literal["timeout", "network", "too-large"], detail: str = "") -> None:
        super().__init__(f"{kind}{': ' + detail if detail else ''}")
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True, slots=True)
class HttpAnswer:
    status: int
    content_type: str
    retry_after: str | None
    body: bytes

    def json_object(self) -> dict[str, Any] | None:
        """The body as a JSON object when it is declared JSON and parses as an object; else ``None``."""
        media = self.content_type.split(";", 1)[0].strip().lower()
        if media != "application/json" and not media.endswith("+json"):
            return None
        try:
            value = orjson.loads(self.body)
        except orjson.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None


async def request(
    http: httpx.AsyncClient | None,
    method: Literal["GET", "POST"],
    url: str,
    *,
    headers: Mapping[str, str],
    body: str | None = None,
    deadline: float = DEFAULT_TIMEOUT,
    max_bytes: int,
) -> HttpAnswer:
    """Send one request to ``url`` with ``http`` (or a short-lived client of our own), all of it
    within ``deadline`` seconds."""
    import httpx

    try:
        async with asyncio.timeout(deadline):
            if http is not None:
                return await _send(http, method, url, headers, body, max_bytes)
            # The deadline above is the one that counts; httpx's own is only a backstop.
            async with httpx.AsyncClient(timeout=deadline + 1.0, follow_redirects=False) as client:
                return await _send(client, method, url, headers, body, max_bytes)
    except (TimeoutError, httpx.TimeoutException):
        raise HttpFailure("timeout", f"no complete answer within {deadline:g} s") from None
    except httpx.HTTPError as exc:
        raise HttpFailure("network", type(exc).__name__) from None


async def _send(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: str | None,
    max_bytes: int,
) -> HttpAnswer:
    content = None if body is None else body.encode("utf-8")
    async with client.stream(
        method, url, headers=dict(headers), content=content, follow_redirects=False
    ) as response:
        declared = response.headers.get("content-length")
        too_large = (
            declared is not None and declared.isascii() and declared.isdigit() and int(declared) > max_bytes
        )
        chunks: list[bytes] = []
        size = 0
        if not too_large:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    too_large = True
                    break
                chunks.append(chunk)
        if too_large:
            if response.status_code == 200:
                raise HttpFailure("too-large", f"more than {max_bytes} bytes")
            chunks = []  # an error answer: its status is what counts, not its body
        return HttpAnswer(
            status=response.status_code,
            content_type=response.headers.get("content-type", ""),
            retry_after=response.headers.get("retry-after"),
            body=b"".join(chunks),
        )
