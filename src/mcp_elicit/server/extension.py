"""What ``Server(connect=...)`` takes: an extension that answers ``ctx.connection`` and
``ctx.secret`` and serves the pages its URL-mode questions send the user to.

The server knows the URL-mode kit (:class:`mcp_elicit.connect.ConnectKit`) only through this
protocol, so that ``server`` never imports ``connect``: the kit drives a call's rounds through
the public extension point of :class:`~mcp_elicit.server.context.Context` (recorded steps, URL
questions asked and read a step at a time, state kept for one run of the handler).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # types only: nothing of these is loaded
    from mcp_elicit.server.app import Server
    from mcp_elicit.server.context import Context
    from mcp_elicit.transport.asgi import ASGIApp


class Extension(Protocol):
    async def connection(
        self, ctx: Context, provider: str, scopes: Iterable[str] | None, reason: str | None
    ) -> Any:
        """``ctx.connection(provider, scopes=..., reason=...)``: the user's connection, fresh."""
        ...

    async def secret(self, ctx: Context, name: str, description: str, message: str | None) -> str:
        """``ctx.secret(name, description, message=...)``: the user's secret."""
        ...

    async def url_step_completed(self, url: str, principal: str | None) -> bool | None:
        """Whether the browser step behind ``url`` (a URL question the extension asked) has
        completed for ``principal``; ``None`` for a URL that is not the extension's. The
        2025-11-25 bridge tells the client so (``notifications/elicitation/complete``)."""
        ...

    def serving_over_stdio(self) -> None:
        """The server is about to answer over stdio, where no request carries an access token
        and no page is served: the extension's refusals should name the transport."""
        ...

    def serving_over_http(self, host: str, port: int, *, tls: bool) -> None:
        """:meth:`Server.run_http() <mcp_elicit.server.Server.run_http>` is about to listen on
        ``host``:``port`` (``tls``: with a certificate): the extension refuses an address its
        settings forbid (``ValueError``) and warns when the links it sends cannot reach it."""
        ...

    def asgi(
        self,
        server: Server,
        *,
        path: str,
        allowed_origins: Sequence[str] | None,
        body_timeout: float,
    ) -> ASGIApp:
        """The whole site: the MCP endpoint behind the extension's identity, and its pages."""
        ...
