"""One HTTP request to the pages, read from plain ASGI, with every input bounded.

Query strings and form bodies are parsed strictly: at most a few fields, no repeated names (a
duplicated ``state`` or ``code`` is a classic parser-differential trick), valid UTF-8 only.
Bodies must be ``application/x-www-form-urlencoded``, at most :data:`MAX_BODY` bytes, and arrive
within :data:`FORM_TIMEOUT` seconds (a client trickling a body must not hold a page open). Every
violation is a :class:`BadRequest` carrying the 4xx status to answer with.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import parse_qsl

from mcp_elicit.transport.asgi import Receive, Scope

from .cookies import parse_cookie_header

__all__ = ["FORM_TIMEOUT", "MAX_BODY", "MAX_QUERY", "BadRequest", "Request", "parse_fields"]


MAX_BODY: Final = 16 * 1024
MAX_QUERY: Final = 8 * 1024
MAX_FIELDS: Final = 16
FORM_TIMEOUT: Final = 30.0  # seconds for a whole form body (a browser sends its 16 KiB at once)
FORM_TYPE: Final = "application/x-www-form-urlencoded"


class BadRequest(Exception):
    """The request cannot be served as sent: answer ``status`` with ``message`` (plain words)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def parse_fields(text: str, what: str) -> dict[str, str]:
    """``name -> value`` of a query string or form body; repeated names are refused."""
    try:
        pairs = parse_qsl(text, keep_blank_values=True, max_num_fields=MAX_FIELDS, errors="strict")
    except (ValueError, UnicodeDecodeError):
        raise BadRequest(400, f"The {what} could not be read.") from None
    fields: dict[str, str] = {}
    for name, value in pairs:
        if name in fields:
            # Not naming it: the name is whatever the link says, and the error page must not
            # show a link's text (a sentence planted there would read as ours).
            raise BadRequest(400, f"The {what} repeats a parameter.")
        fields[name] = value
    return fields


@dataclass(slots=True)
class Request:
    """The parts of an ASGI ``http`` scope the pages use (header names lower-case)."""

    method: str
    path: str
    root_path: str
    raw_query: bytes
    headers: Mapping[str, str]
    _cookies: Mapping[str, list[str]] | None = field(default=None, repr=False)

    @classmethod
    def from_scope(cls, scope: Scope) -> Request:
        headers: dict[str, str] = {}
        for name, value in scope.get("headers", ()):
            key = bytes(name).decode("latin-1").lower()
            text = bytes(value).decode("latin-1")
            # Repeated headers are joined as RFC 9110 §5.3 allows (Cookie with "; ").
            if key in headers:
                headers[key] += ("; " if key == "cookie" else ", ") + text
            else:
                headers[key] = text
        return cls(
            method=str(scope.get("method", "GET")).upper(),
            path=str(scope.get("path", "/")),
            root_path=str(scope.get("root_path", "")),
            raw_query=bytes(scope.get("query_string", b"")),
            headers=headers,
        )

    def query(self) -> dict[str, str]:
        if len(self.raw_query) > MAX_QUERY:
            raise BadRequest(414, "The address is too long.")
        try:
            text = self.raw_query.decode("ascii")
        except UnicodeDecodeError:
            raise BadRequest(400, "The address could not be read.") from None
        return parse_fields(text, "address")

    def _parsed_cookies(self) -> Mapping[str, list[str]]:
        if self._cookies is None:
            self._cookies = parse_cookie_header(self.headers.get("cookie"))
        return self._cookies

    def cookies(self, name: str) -> list[str]:
        """Every value sent for cookie ``name`` (usually one, or none)."""
        return list(self._parsed_cookies().get(name, ()))

    def cookie_names(self) -> list[str]:
        """The names of the pages' cookies sent, in the order sent."""
        return list(self._parsed_cookies())

    async def form(self, receive: Receive) -> dict[str, str]:
        """The form body: 415 for another type, 413 above :data:`MAX_BODY`, 408 when it takes
        longer than :data:`FORM_TIMEOUT`, 400 if unreadable."""
        content_type = self.headers.get("content-type", "")
        media_type, _, params = content_type.partition(";")
        if media_type.strip().lower() != FORM_TYPE:
            raise BadRequest(415, "This page only accepts its own form.")
        charset = params.strip().lower()
        if charset and charset not in ("charset=utf-8", 'charset="utf-8"'):
            raise BadRequest(415, "This page only accepts UTF-8 forms.")
        declared = self.headers.get("content-length")
        if declared is not None:
            if not (declared.isascii() and declared.isdigit()):  # "²".isdigit(), but int() refuses it
                raise BadRequest(400, "The request has an invalid Content-Length.")
            if int(declared) > MAX_BODY:
                raise BadRequest(413, "The form is too large.")
        try:
            async with asyncio.timeout(FORM_TIMEOUT):
                body = await _read_body(receive)
        except TimeoutError:
            raise BadRequest(408, "The form took too long to arrive. Please try again.") from None
        try:
            text = bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest(400, "The form could not be read.") from None
        if not text.isascii():  # a browser percent-encodes everything; raw bytes are not a form
            raise BadRequest(400, "The form could not be read.")
        return parse_fields(text, "form")


async def _read_body(receive: Receive) -> bytearray:
    body = bytearray()
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            raise BadRequest(400, "The request was interrupted.")
        body += message.get("body", b"")
        if len(body) > MAX_BODY:  # chunked bodies have no Content-Length to check up front
            raise BadRequest(413, "The form is too large.")
        if not message.get("more_body", False):
            return body
