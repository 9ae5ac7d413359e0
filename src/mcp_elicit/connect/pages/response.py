"""Responses of the pages: an HTML page or a 303, each with the security headers added on send."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .request import Send
from .templates import Page

__all__ = ["Response", "html_response", "redirect"]

Header = tuple[bytes, bytes]


@dataclass(slots=True)
class Response:
    status: int
    body: bytes = b""
    headers: list[Header] = field(default_factory=list)
    to_provider: bool = False  # a page whose form ends at a provider (see headers.SecurityHeaders)

    async def send(self, send: Send, security: Sequence[Header]) -> None:
        headers = [*security, *self.headers, (b"content-length", str(len(self.body)).encode("ascii"))]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


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
