"""What the engine needs from a transport: send one request, get its response.

Transports are thin shells. They move bytes, route the server's messages to the request they
belong to, and turn the caller's cancellation into the transport's own form of it (stdio:
``notifications/cancelled``; HTTP: closing the response stream). Everything else -- ``_meta``,
retries, the MRTR loop -- is the engine's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from mcp_elicit.wire.jsonrpc import Notification, RequestId, Response

OnNotification = Callable[[Notification], None]


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One encoded request and what a transport needs to know about it without parsing it."""

    id: RequestId
    method: str
    body: bytes
    version: str  # the protocol version in its _meta (the MCP-Protocol-Version header)
    name: str | None = None  # params.name / params.uri of tools/call, prompts/get, resources/read
    headers: Mapping[str, str] | None = None  # extra per-request headers (Mcp-Param-*)
    progress_token: RequestId | None = None


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
