"""The Streamable HTTP transport, client side (MCP 2026-07-28).

Every request is its own POST carrying ``Accept: application/json, text/event-stream``,
``MCP-Protocol-Version`` (equal to the ``_meta`` version), ``Mcp-Method`` and, for
``tools/call`` / ``prompts/get`` / ``resources/read``, ``Mcp-Name`` (base64-sentinel form when the
name is not plain header-safe ASCII). The reply is one JSON body, or an SSE stream of
notifications about the request followed by its response. Closing the stream is the
cancellation: a cancelled caller drops the connection, which the server sees.

:class:`HttpTransport` runs on :mod:`~mcp_elicit.client.http11` (asyncio streams, keep-alive);
:class:`~mcp_elicit.client.httpx_transport.HttpxTransport` does the same over an
``httpx.AsyncClient`` you configure (proxies, custom TLS, auth flows).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

from mcp_elicit.client.answered_id import answered_id
from mcp_elicit.client.errors import (
    AuthorizationRequiredError,
    HttpStatusError,
    MalformedMessageError,
    TransportError,
)
from mcp_elicit.client.http11 import Connection, Origin, Pool
from mcp_elicit.client.messages import decode
from mcp_elicit.client.sse import SseDecoder
from mcp_elicit.client.text import clean
from mcp_elicit.client.transport import OnNotification, Outgoing
from mcp_elicit.wire.http import encode_header_value, is_token
from mcp_elicit.wire.jsonrpc import ErrorResponse, Notification, Response, Result

logger = logging.getLogger("mcp_elicit.client.http")

DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
ACCEPT = "application/json, text/event-stream"


def request_headers(request: Outgoing) -> dict[str, str]:
    """The MCP headers of one POST (without the connection-level ones)."""
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": request.version,
        "Mcp-Method": request.method,
    }
    if request.name is not None:
        headers["Mcp-Name"] = encode_header_value(request.name)
    if request.headers:
        headers.update(request.headers)
    return headers


# Headers the client writes (or that frame the request and its connection): a second copy
# would make the request malformed or contradict the MCP headers, and the server would then be
# blamed for refusing it. Every Mcp-* name is the protocol's own too.
_CLIENT_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "connection",
        "content-encoding",
        "content-length",
        "content-type",
        "expect",
        "host",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)


def reserved_header(name: str) -> str | None:
    """Why a caller cannot send header ``name`` (the client writes it), or None if it can."""
    lowered = name.lower()
    if lowered.startswith("mcp-"):
        return "mcp-elicit sets the Mcp-* headers of the protocol itself"
    if lowered in _CLIENT_HEADERS:
        return f"mcp-elicit sets {name} itself"
    return None


def header_value_problem(value: str) -> str | None:
    """Why a request head cannot carry this header value, or None: a control character other
    than tab (CR and LF would start another header), or one past Latin-1, the encoding the head
    is written in."""
    for char in value:
        code = ord(char)
        if (code < 0x20 and char != "\t") or code == 0x7F or code > 0xFF:
            return f"U+{code:04X} is not allowed in an HTTP header value"
    return None


def check_header_values(headers: Mapping[str, str]) -> dict[str, str]:
    """Caller-supplied headers, refused if they could break the request head or repeat one the
    client writes itself."""
    for name, value in headers.items():
        if not is_token(name):
            raise ValueError(f"invalid HTTP header {name!r}: the name is not an HTTP field name")
        problem = header_value_problem(value)
        if problem is not None:
            raise ValueError(f"invalid HTTP header {name!r}: {problem}")
        reason = reserved_header(name)
        if reason is not None:
            raise ValueError(f"header {name!r} cannot be given: {reason}")
    return dict(headers)


def json_reply(
    status: int,
    body: bytes,
    request: Outgoing,
    url: str,
    www_authenticate: str | None = None,
    location: str | None = None,
) -> Response:
    """The JSON-RPC response in a non-SSE reply, or the right error."""
    if 300 <= status < 400:
        # Never followed: a POST sent again elsewhere could run a tool at a host nobody chose.
        where = clean(location, single_line=True, max_length=300) if location else "(no Location given)"
        raise HttpStatusError(
            status, f"{request.method} to {url}: the server redirects to {where}; redirects are not followed"
        )
    try:
        message: Any = decode(body) if body.lstrip().startswith(b"{") else None
    except MalformedMessageError:
        message = None
    if status in (401, 403):  # whatever the body says: credentials are missing or refused
        said = message.message if isinstance(message, ErrorResponse) else None
        snippet = (said if isinstance(said, str) else "") or body[:200].decode("utf-8", "replace")
        snippet = clean(snippet, single_line=True, max_length=200) or "(empty body)"
        raise AuthorizationRequiredError(status, f"{request.method} to {url}: {snippet}", www_authenticate)
    if (isinstance(message, ErrorResponse) and message.id in (request.id, None)) or (  # only an error
        isinstance(message, Result) and message.id == request.id and 200 <= status < 300  # may have a null id
    ):
        return message
    if 200 <= status < 300:
        raise MalformedMessageError(
            f"the reply to {request.method} (HTTP {status}) is not the JSON-RPC response to id {request.id!r}"
        )
    snippet = body[:200].decode("utf-8", "replace")
    raise HttpStatusError(status, f"{request.method} to {url}: {snippet or '(empty body)'}")


async def sse_reply(
    chunks: AsyncIterator[bytes], request: Outgoing, on_notification: OnNotification | None, limit: int
) -> Response:
    """Read an SSE reply up to the response to ``request``; notifications go to the callback."""
    decoder = SseDecoder(limit)
    async for chunk in chunks:
        response = _first_answer(decoder.feed(chunk), request, on_notification)
        if response is not None:
            return response
    response = _first_answer(decoder.end(), request, on_notification)
    if response is not None:
        return response
    raise TransportError(f"the server ended the event stream of {request.method} without answering it")


def _first_answer(
    events: list[bytes], request: Outgoing, on_notification: OnNotification | None
) -> Response | None:
    """The response to ``request`` among these events' data, if there; notifications before it
    go to the callback."""
    for data in events:
        try:
            message = decode(data)
        except MalformedMessageError:
            if answered_id(data) == request.id:
                raise  # the answer itself cannot be read
            # A notification (a log line, progress) this client cannot read: the answer may
            # still come, as an unreadable line on stdio does not stop a call either.
            logger.warning("ignoring an unreadable event in the reply to %s", request.method)
            continue
        if isinstance(message, Result | ErrorResponse):
            if message.id == request.id or (message.id is None and isinstance(message, ErrorResponse)):
                return message
        elif isinstance(message, Notification):
            if on_notification is not None:
                on_notification(message)
        else:
            # Servers send no requests in 2026-07-28 (an elicitation/create request is the
            # 2025-11-25 way): never answered, and said in the log as stdio does.
            logger.warning(
                "the server sent a %s request in the reply to %s; servers send no requests in "
                "MCP 2026-07-28, ignored",
                clean(message.method, single_line=True, max_length=200),
                request.method,
            )
    return None


def _compression(headers: Mapping[str, str]) -> str | None:
    """The header and coding that compress a reply's body (this client decodes none), or None."""
    for name, ignored in (("Content-Encoding", ""), ("Transfer-Encoding", "chunked")):
        for coding in headers.get(name.lower(), "").lower().split(","):
            if coding.strip() not in ("", "identity", ignored):
                return f"{name}: {coding.strip()}"
    return None


class HttpTransport:
    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 10.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self._url = url
        self._origin = Origin(url)
        extra = check_header_values(headers or {})
        if not any(name.lower() == "user-agent" for name in extra):  # the caller's replaces ours
            extra["User-Agent"] = "mcp-elicit"
        self._head_start = (
            f"POST {self._origin.target} HTTP/1.1\r\nHost: {self._origin.host_header}\r\n"
            "Accept-Encoding: identity\r\n" + "".join(f"{k}: {v}\r\n" for k, v in extra.items())
        ).encode("latin-1")
        self._pool = Pool(self._origin, connect_timeout=connect_timeout)
        self._limit = max_message_bytes

    @property
    def reached_via(self) -> str:
        return self._url

    async def start(self) -> None:
        pass  # connections open on first use

    async def send(self, request: Outgoing, on_notification: OnNotification | None) -> Response:
        lines = "".join(f"{k}: {v}\r\n" for k, v in request_headers(request).items())
        head = self._head_start + f"{lines}Content-Length: {len(request.body)}\r\n\r\n".encode("latin-1")
        conn = await self._pool.acquire()  # a kept-alive one only if the server has not closed it
        try:
            response = await self._exchange(conn, head, request, on_notification)
        except (asyncio.IncompleteReadError, OSError) as exc:
            # Never sent again: the server may have received the request and run it before the
            # connection dropped, and nothing tells that apart from a connection it had closed.
            conn.abort()
            why = (
                "the connection closed before the reply was complete"
                if isinstance(exc, EOFError)
                else repr(exc)
            )
            raise TransportError(
                f"HTTP {request.method} to {self._url} failed: {why} (not sent again: it may have run)"
            ) from exc
        except BaseException:
            conn.abort()  # cancelled or failed mid-reply: closing the stream tells the server
            raise
        self._pool.release(conn)
        return response

    async def _exchange(
        self, conn: Connection, head: bytes, request: Outgoing, on_notification: OnNotification | None
    ) -> Response:
        reply = await conn.request(head, request.body)
        coding = _compression(reply.headers)
        if coding is not None and 200 <= reply.status < 300:
            # The request said Accept-Encoding: identity; a compressed body can never be read.
            shown = clean(coding, single_line=True, max_length=60)
            raise MalformedMessageError(
                f"the reply to {request.method} is compressed ({shown}), which the request did not accept"
            )
        if reply.status == 200 and reply.content_type == "text/event-stream":
            chunks = reply.chunks()
            try:
                response = await sse_reply(chunks, request, on_notification, self._limit)
            finally:
                await chunks.aclose()
            if not reply.done:
                conn.reusable = False  # the rest of the stream is not ours to read
            return response
        body = await reply.read(self._limit)
        headers = reply.headers
        return json_reply(
            reply.status, body, request, self._url, headers.get("www-authenticate"), headers.get("location")
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
