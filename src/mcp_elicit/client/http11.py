"""A small HTTP/1.1 client on asyncio streams: exactly what MCP's Streamable HTTP needs, no more.

One POST at a time per connection, keep-alive connections reused from a per-origin pool, bodies
by ``Content-Length``, ``chunked`` or read-to-close, TLS through :mod:`ssl` for ``https``.
Responses are streamed, so an SSE reply is read event by event. Not here on purpose: proxies,
redirects, cookies, compression (the request says ``Accept-Encoding: identity``), HTTP/2 -- pass
an ``httpx.AsyncClient`` as ``http_client`` when you need those.

Why not httpx by default: a whole MRTR flow over httpx costs this client several times the CPU
of the protocol work itself, and importing it costs more than the rest of the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import select
import ssl
import weakref
from collections.abc import AsyncGenerator
from urllib.parse import quote, urlsplit

from mcp_elicit.client.errors import MalformedMessageError, TransportError

MAX_HEAD_BYTES = 64 * 1024
MAX_INTERIM_REPLIES = 32  # 1xx responses before the final one: a server looping on them is broken
_HEX_DIGITS = b"0123456789abcdefABCDEF"


# What a request target keeps as it is (RFC 3986: unreserved characters are always kept; these are
# the reserved ones a path or query may hold, and "%" of the escapes already there).
_PATH_SAFE = "/:@!$&'()*+,;=%"
_QUERY_SAFE = _PATH_SAFE + "?"
_LONE_PERCENT = re.compile("%(?![0-9A-Fa-f]{2})")


def _percent_encoded(text: str, safe: str) -> str:
    """A URL's path or query as a request line can carry it, as browsers and httpx send it: any
    other character percent-encoded from UTF-8 (``é`` is ``%C3%A9``, a space ``%20``); escapes
    already there are kept, and a ``%`` that starts none is ``%25``."""
    return quote(_LONE_PERCENT.sub("%25", text), safe=safe)


def _ascii_host(host: str) -> str:
    """The host as DNS, TLS and the ``Host`` header take it: an internationalised name in its
    IDNA (punycode) form, ``例え.テスト`` as ``xn--r8jz45g.xn--zckzah``, mapped as browsers map it
    (UTS 46, what the client's URL checks use too)."""
    if host.isascii():
        return host
    from ada_url import idna  # on first use: most hosts are ASCII

    encoded = idna.encode(host)
    if not encoded:
        raise ValueError(f"the host {host!r} is not a valid internationalised domain name")
    return encoded.decode("ascii")


class Origin:
    """Where to connect, from a URL: host, port, TLS, the request target and the Host header."""

    __slots__ = ("host", "host_header", "port", "target", "tls")

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        surrogate = next((c for c in url if "\ud800" <= c <= "\udfff"), None)
        if surrogate is not None:  # (how Python passes on command-line bytes that are not UTF-8)
            raise ValueError(f"the URL holds U+{ord(surrogate):04X}, a lone surrogate: not text")
        self.tls = parts.scheme == "https"
        self.host = _ascii_host(parts.hostname)
        self.port = parts.port or (443 if self.tls else 80)
        path = _percent_encoded(parts.path or "/", _PATH_SAFE)
        self.target = path + (f"?{_percent_encoded(parts.query, _QUERY_SAFE)}" if parts.query else "")
        name = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.tls else 80
        self.host_header = name if self.port == default else f"{name}:{self.port}"


class Reply:
    """A response whose head has been read; the body is read with :meth:`read` or :meth:`chunks`."""

    __slots__ = ("_conn", "_length", "_mode", "done", "headers", "status")

    def __init__(self, conn: Connection, status: int, headers: dict[str, str]) -> None:
        self._conn = conn
        self.status = status
        self.headers = headers
        self.done = False
        encoding = headers.get("transfer-encoding", "").lower()
        length = headers.get("content-length")
        if status in (204, 304):
            # No body by definition (RFC 9112 section 6.3), whatever the headers say: reading to
            # the close would wait for a server that keeps the connection open.
            self._mode, self._length = "length", 0
        elif "chunked" in encoding:
            self._mode, self._length = "chunked", 0
            if length is not None:
                # Both framings: a sign of response smuggling (RFC 9112 section 6.1); chunked
                # wins, and the connection is not trusted with another request.
                conn.reusable = False
        elif length is not None:
            digits = length.strip()
            if not (digits.isascii() and digits.isdigit()):  # "²".isdigit() is True
                raise MalformedMessageError(f"invalid Content-Length {length[:40]!r}")
            self._mode, self._length = "length", int(digits)
        else:
            self._mode, self._length = "close", 0
            conn.reusable = False

    @property
    def content_type(self) -> str:
        return media_type(self.headers.get("content-type", ""))

    async def read(self, limit: int) -> bytes:
        if self._mode == "length":
            if self._length > limit:
                raise MalformedMessageError(f"the server's reply is over the limit of {limit} bytes")
            body = await self._conn.reader.readexactly(self._length) if self._length else b""
            self.done = True
            return body
        parts: list[bytes] = []
        size = 0
        async for chunk in self.chunks():
            size += len(chunk)
            if size > limit:
                raise MalformedMessageError(f"the server's reply is over the limit of {limit} bytes")
            parts.append(chunk)
        return b"".join(parts)

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        """The body as it arrives."""
        reader = self._conn.reader
        if self._mode == "length":
            async for piece in _pieces(reader, self._length):
                yield piece
        elif self._mode == "chunked":
            while True:
                try:
                    line = await reader.readuntil(b"\r\n")
                except asyncio.LimitOverrunError:
                    raise MalformedMessageError("malformed chunked encoding in the server's reply") from None
                token = line.split(b";", 1)[0].strip()
                if not token or len(token) > 16 or token.strip(_HEX_DIGITS):  # no sign, no "0x"
                    raise MalformedMessageError("malformed chunked encoding in the server's reply")
                size = int(token, 16)
                if size == 0:
                    await _lines_to_blank(reader, "trailer fields")  # read, and not needed
                    break
                # In bounded pieces: the size is the server's word, and the caller's limit must be
                # able to stop a huge chunk before it is all in memory.
                async for piece in _pieces(reader, size):
                    yield piece
                if await reader.readexactly(2) != b"\r\n":
                    raise MalformedMessageError("malformed chunked encoding in the server's reply")
        else:
            while chunk := await reader.read(65536):
                yield chunk
        self.done = True


async def _pieces(reader: asyncio.StreamReader, size: int) -> AsyncGenerator[bytes, None]:
    """Exactly ``size`` bytes, as they arrive, at most 64 KiB at a time."""
    while size:
        piece = await reader.read(min(size, 65536))
        if not piece:
            raise asyncio.IncompleteReadError(b"", size)
        size -= len(piece)
        yield piece


class Connection:
    __slots__ = ("__weakref__", "reader", "reusable", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.reusable = True

    def alive(self) -> bool:
        """Whether this idle connection can carry a request. A request that fails is never sent
        again (the server may have run it before the connection dropped), so a connection the
        server has closed must be told apart before use: between requests the server has nothing
        to say, and its close (EOF or reset) makes the socket readable, even before the event
        loop has seen it. Bytes already read past the last reply (a body longer than its
        Content-Length) would be taken for the next reply: such a connection is not reused."""
        if self.reader.at_eof() or self.writer.is_closing() or _buffered(self.reader):
            return False
        sock = self.writer.get_extra_info("socket")
        return sock is None or not _readable(sock.fileno())

    async def request(self, head: bytes, body: bytes) -> Reply:
        self.writer.write(head + body)
        await self.writer.drain()
        for _ in range(MAX_INTERIM_REPLIES + 1):
            status, headers = _parse_head(await _lines_to_blank(self.reader, "response head"))
            if status == 101:
                # Nothing asked to switch protocols: what follows is not HTTP/1.1 any more.
                self.reusable = False
                raise MalformedMessageError("the server switched protocols (HTTP 101) unasked")
            if status >= 200:
                break  # 1xx interim responses (100 Continue, 103 Early Hints) are skipped
        else:
            raise MalformedMessageError(
                f"the server sent more than {MAX_INTERIM_REPLIES} interim (1xx) responses"
            )
        if headers.get("connection", "").lower() == "close":
            self.reusable = False
        return Reply(self, status, headers)

    def abort(self) -> None:
        """Drop the connection at once (what a cancelled request does: the server sees it)."""
        self.reusable = False
        transport = self.writer.transport
        with contextlib.suppress(Exception):
            transport.abort()


def _readable(fd: int) -> bool:
    """Whether the socket has something to read (data, EOF or a reset) right now."""
    if fd < 0:
        return True  # closed
    if hasattr(select, "poll"):  # not select(): it cannot watch a descriptor past FD_SETSIZE
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([fd], [], [], 0)[0])


def _buffered(reader: asyncio.StreamReader) -> int:
    """How many received bytes the reader holds unread (StreamReader has no public peek)."""
    return len(getattr(reader, "_buffer", b""))


async def _lines_to_blank(reader: asyncio.StreamReader, what: str) -> list[bytes]:
    """The lines up to the blank one that ends a head (or the trailers), at most
    :data:`MAX_HEAD_BYTES` in all. A bare LF ends a line as CRLF does (RFC 9112 section 2.2 lets a
    recipient accept it): waiting for a CRLF that never comes would last until the timeout."""
    lines: list[bytes] = []
    size = 0
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.LimitOverrunError:  # one line alone is past the reader's limit
            raise MalformedMessageError(_over_limit(what)) from None
        size += len(line)
        if size > MAX_HEAD_BYTES:
            raise MalformedMessageError(_over_limit(what))
        line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
        if not line:
            return lines
        lines.append(line)


def _over_limit(what: str) -> str:
    return f"the server's {what} is over the limit of {MAX_HEAD_BYTES} bytes"


def _parse_head(lines: list[bytes]) -> tuple[int, dict[str, str]]:
    if not lines:
        raise MalformedMessageError("not an HTTP/1.x response: it begins with a blank line")
    version, _, rest = lines[0].partition(b" ")
    code = rest[:3]
    # Exactly three digits, then a space and a reason or nothing ("HTTP/1.1 200" is valid).
    if (
        not version.startswith(b"HTTP/1.")
        or not (code.isdigit() and rest[3:4] in (b"", b" "))
        or code < b"100"
    ):
        raise MalformedMessageError(f"not an HTTP/1.x response: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep:
            raise MalformedMessageError(f"malformed response header line: {line[:80]!r}")
        key = name.strip().lower().decode("latin-1")
        text = value.strip(b" \t").decode("latin-1")  # only spaces and tabs surround a value
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    if version == b"HTTP/1.0" and headers.get("connection", "").lower() != "keep-alive":
        headers["connection"] = "close"
    return int(code), headers


class Pool:
    """Keep-alive connections to one origin; one request per connection at a time."""

    def __init__(self, origin: Origin, *, connect_timeout: float, max_idle: int = 16) -> None:
        self.origin = origin
        self._connect_timeout = connect_timeout
        self._max_idle = max_idle
        self._idle: list[Connection] = []
        # Those handed out and not given back: a request or a stream uses them. Weak: one its
        # user aborted and dropped is gone from here too.
        self._busy: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._ssl: ssl.SSLContext | None = ssl.create_default_context() if origin.tls else None
        self._closed = False

    async def acquire(self) -> Connection:
        conn = await self._connection()
        self._busy.add(conn)
        return conn

    async def _connection(self) -> Connection:
        while self._idle:
            conn = self._idle.pop()
            if conn.alive():
                return conn
            conn.abort()
        if self._closed:
            raise TransportError("the HTTP client is closed")
        origin = self.origin
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(
                    origin.host,
                    origin.port,
                    ssl=self._ssl,
                    limit=MAX_HEAD_BYTES,
                    server_hostname=origin.host if self._ssl else None,
                ),
                self._connect_timeout,
            )
        except TimeoutError:
            raise TransportError(f"cannot connect to {origin.host}:{origin.port}: timed out") from None
        except OSError as exc:
            raise TransportError(f"cannot connect to {origin.host}:{origin.port}: {exc}") from exc
        return Connection(reader, writer)

    def release(self, conn: Connection) -> None:
        self._busy.discard(conn)
        if conn.reusable and not self._closed and len(self._idle) < self._max_idle and conn.alive():
            self._idle.append(conn)
        else:
            conn.abort()

    async def aclose(self) -> None:
        """Close every connection: the idle ones, and those requests and streams still use
        (what waits on them fails at once, instead of waiting for a reply nobody will read)."""
        self._closed = True
        for conn in list(self._busy):
            conn.abort()
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.writer.close()
        for conn in idle:
            with contextlib.suppress(Exception):
                await conn.writer.wait_closed()


def media_type(content_type: str) -> str:
    """The media type of a ``Content-Type`` value, as compared (RFC 9110 §8.3.1: parameters
    dropped, case-insensitive): ``"text/event-stream"`` for ``" Text/Event-Stream; x=1"``."""
    return content_type.partition(";")[0].strip().lower()
