"""What the engine needs from a transport: send one request, get its response.

Transports are thin shells. They move bytes, route the server's messages to the request they
belong to, and turn the caller's cancellation into the transport's own form of it (stdio:
``notifications/cancelled``; HTTP: closing the response stream). Everything else -- ``_meta``,
retries, the MRTR loop, the ``initialize`` handshake -- is the engine's.

A 2025-11-25 ("legacy") server also sends requests of its own (``elicitation/create``, ``ping``,
...) and notifications about no request of ours. A transport that can carry that era is a
:class:`LegacyTransport`: the engine hands it :class:`ServerMessages` to answer them with, and
each :class:`Outgoing` says which era's framing it needs (``legacy``: no ``Mcp-Method`` /
``Mcp-Name`` headers; on HTTP the session's ``Mcp-Session-Id`` instead).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from mcp_elicit.wire.jsonrpc import Notification, Request, RequestId, Response

OnNotification = Callable[[Notification], None]


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One encoded request and what a transport needs to know about it without parsing it."""

    id: RequestId
    method: str
    body: bytes
    # The protocol version (the MCP-Protocol-Version header): in its _meta on 2026-07-28; the
    # negotiated one on 2025-11-25, None for initialize itself (sent before there is one).
    version: str | None
    name: str | None = None  # params.name / params.uri of tools/call, prompts/get, resources/read
    headers: Mapping[str, str] | None = None  # extra per-request headers (Mcp-Param-*)
    progress_token: RequestId | None = None
    legacy: bool = False  # a 2025-11-25 request (or initialize, or the answer to a server request)


class Transport(Protocol):
    """A connection to one server, as :class:`~mcp_elicit.client.Client` uses it; pass one to
    ``Client.connect`` to bring your own."""

    @property
    def reached_via(self) -> str:
        """How the server was reached (command line or URL): shown with every question."""
        ...

    async def start(self) -> None:
        """Make the connection ready (spawn the server; HTTP connects on first use)."""
        ...

    async def send(self, request: Outgoing, on_notification: OnNotification | None) -> Response:
        """Send ``request`` and return its response; notifications about it go to
        ``on_notification``. Cancelling the caller cancels the request on the wire."""
        ...

    async def aclose(self) -> None:
        """Close the connection and free what it holds (stop a spawned server)."""
        ...


class ServerMessages(Protocol):
    """What the engine does with what a 2025-11-25 server sends of its own accord."""

    async def answer(self, request: Request) -> Response:
        """The response to one of the server's requests (never raises: a failure is an error
        response)."""
        ...

    def notify(self, notification: Notification) -> None:
        """A notification about none of this client's requests (``notifications/message``,
        ``notifications/elicitation/complete``, ...)."""
        ...


@runtime_checkable
class LegacyTransport(Transport, Protocol):
    """A transport that can also carry a 2025-11-25 session."""

    def serve(self, messages: ServerMessages) -> None:
        """From now on, answer the server's requests and hand its notifications to ``messages``."""
        ...

    async def notify(self, body: bytes, version: str) -> None:
        """Send one notification of the session at ``version`` (``notifications/initialized``)."""
        ...

    async def session_opened(self, version: str) -> None:
        """The ``initialize`` handshake is done at ``version``: start what else the session has
        (on HTTP, the GET stream of the server's own messages)."""
        ...
