"""Streamable HTTP over an ``httpx.AsyncClient`` that you configure (proxies, custom TLS, auth).

``Client.connect(url, http_client=httpx.AsyncClient(...))`` uses this instead of the built-in
HTTP/1.1 transport; the MCP side (headers, JSON or SSE replies, cancellation by closing the
stream) is the same. The client stays yours: closing the MCP client does not close it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mcp_elicit.client.errors import MalformedMessageError, TransportError
from mcp_elicit.client.http import (
    DEFAULT_MAX_MESSAGE_BYTES,
    check_header_values,
    json_reply,
    request_headers,
    sse_reply,
)
from mcp_elicit.client.http11 import media_type
from mcp_elicit.client.transport import OnNotification, Outgoing
from mcp_elicit.wire.jsonrpc import Response

if TYPE_CHECKING:
    import httpx


class HttpxTransport:
    def __init__(
        self,
        url: str,
        http_client: httpx.AsyncClient,
        *,
        headers: Mapping[str, str] | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self._url = url
        self._client = http_client
        self._extra = check_header_values(headers or {})
        self._limit = max_message_bytes
        self._errors: tuple[type[Exception], ...] = ()

    @property
    def reached_via(self) -> str:
        return self._url

    async def start(self) -> None:
        import httpx

        self._errors = (httpx.TransportError, httpx.StreamError)

    async def send(self, request: Outgoing, on_notification: OnNotification | None) -> Response:
        headers = {**self._extra, **request_headers(request)}
        try:
            async with self._client.stream("POST", self._url, content=request.body, headers=headers) as reply:
                kind = media_type(reply.headers.get("content-type", ""))
                if kind == "text/event-stream" and reply.status_code == 200:
                    return await sse_reply(reply.aiter_bytes(), request, on_notification, self._limit)
                chunks: list[bytes] = []
                size = 0
                async for chunk in reply.aiter_bytes():
                    size += len(chunk)
                    if size > self._limit:
                        raise MalformedMessageError(
                            f"the server's reply is over the limit of {self._limit} bytes"
                        )
                    chunks.append(chunk)
                challenge, location = reply.headers.get("www-authenticate"), reply.headers.get("location")
                return json_reply(
                    reply.status_code, b"".join(chunks), request, self._url, challenge, location
                )
        except self._errors as exc:
            raise TransportError(f"HTTP {request.method} to {self._url} failed: {exc!r}") from exc

    async def aclose(self) -> None:
        pass  # the caller's client: the caller closes it
