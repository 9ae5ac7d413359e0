"""Responses of the pages: an HTML page or a 303, each with the security headers added on send."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from mcp_elicit.transport.asgi import Header, Send, send_response

from .templates import Page

__all__ = ["Response", "html_response", "redirect"]


@dataclass(slots=True)
class Response:
    status: int
    body: bytes = b""
    headers: list[Header] = field(default_factory=list)
    to_provider: bool = False  # a page whose form ends at a provider (see headers.SecurityHeaders)

    async def send(self, send: Send, security: Sequence[Header]) -> None:
        await send_response(send, self.status, [*security, *self.headers], self.body)


def html_response(page: Page, *headers: Header) -> Response:
    return Response(
        page.status,
        page.html.encode("utf-8"),
        [(b"content-type", b"text/html; charset=utf-8"), *headers],
    )


def redirect(location: str, *headers: Header) -> Response:
    """A 303 See Other (the browser follows it with a GET, whatever the request's method).

    ``location`` is always built by us: our own paths, or a provider's pinned authorize URL."""
    return Response(
        303,
        b"",
        [(b"location", location.encode("ascii")), *headers],
    )
