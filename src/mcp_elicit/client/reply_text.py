"""What an error quotes of an HTTP reply's body that is no JSON-RPC message.

A web server that is not an MCP server (``python -m http.server``, a framework's error page, a
proxy) answers with an HTML page: quoted as it is, the error would be a wall of markup. An HTML
body is quoted by its visible text (what the page says, such as "Error code: 501 Message:
Unsupported method ('POST')"), or by its title when it has no text, and always briefly.
"""

from __future__ import annotations

from html.parser import HTMLParser

from mcp_elicit.client.text import clean

EXCERPT_CHARS = 200
_READ_BYTES = 16 * 1024  # of an HTML body: its start says what the page is
_HIDDEN = frozenset({"head", "script", "style", "template", "noscript"})


def body_excerpt(body: bytes, limit: int = EXCERPT_CHARS) -> str:
    """``body`` as an error may quote it: one clean line of at most ``limit`` characters
    (an HTML page as "an HTML page: <its text>"), or "(empty body)"."""
    if _is_html(body):
        text = _page_text(body[:_READ_BYTES])
        return clean(f"an HTML page: {text}" if text else "an HTML page", single_line=True, max_length=limit)
    text = body[:limit].decode("utf-8", "replace")
    return clean(text, single_line=True, max_length=limit).strip() or "(empty body)"


def _is_html(body: bytes) -> bool:
    start = body[:64].lstrip().lower()
    return start.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<title", b"<h1"))


def _page_text(body: bytes) -> str:
    reader = _Text()
    reader.feed(body.decode("utf-8", "replace"))
    text = " ".join(" ".join(reader.text).split())
    return text or " ".join(" ".join(reader.title).split())


class _Text(HTMLParser):
    """The text a browser would show (not what is in ``<head>``, scripts or styles), and the title."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.title: list[str] = []
        self._hidden = 0  # inside <head>, <script>, ...
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self._hidden += 1
        self._in_title = self._in_title or tag == "title"

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._hidden:
            self.text.append(data)
