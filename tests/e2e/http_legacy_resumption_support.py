"""What ``test_http_legacy_resumption_any.py`` needs besides its model: the server it drives and a
raw HTTP/1.1 client for event streams that can cut its connection at a precise byte.

The server (:func:`build`) has tools whose every message names the call that sent it (the
``label`` argument), so that a test can tell which stream, session and principal an event belongs
to: ``ask`` asks ``count`` forms in turn (pausing ``pause`` s before each) and says what was
answered; ``poll`` does too, closing its connection (``ctx.close_stream()``) before each question
and before its response; ``nap`` reports progress, sleeps, reports progress again; ``big``
answers with a large result; ``touch`` tells the sessions that watch a resource that it changed
(``notifications/resources/updated``, the traffic of a session's ``GET`` stream).
``Authorization: Bearer <name>`` names the principal ``test|<name>``.

:class:`RawStream` sends one request over its own socket (any header bytes, Latin-1 and UTF-8
ones included, which httpx refuses) and reads the reply as it comes: the head, then a chunked
``text/event-stream`` body parsed into events (or a whole JSON body), calling ``on_event`` for
each complete event. It can stop reading at a byte of the reply (``cut``: in the head or at an
offset into the body) and close the socket there (a FIN, or a RST), or be cut at any moment
(:meth:`RawStream.cut_now`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_elicit import Context, Server

STATE_KEY = "resumption-tests-only-secret-abcdefghijklmnopqrstuvwxyz"
FIXED_NOTE = "note://fixed"


@dataclass
class Name:
    name: str


def build(**settings: Any) -> Server:
    """The server of the resumption tests (``settings``: more ``Server`` options)."""
    server = Server("resumption", version="1", state_keys=[STATE_KEY], **settings)

    @server.tool()
    async def ask(label: str, count: int, pause: float, ctx: Context) -> str:
        """``count`` forms in turn, each message starting with ``label``."""
        said = []
        for number in range(count):
            if pause:
                await asyncio.sleep(pause)
            answer = await ctx.elicit(f"{label} q{number}?", Name, key=f"q{number}")
            said.append(answer.data.name if answer.accepted else str(answer.action))
        return f"{label} done: {' '.join(said)}"

    @server.tool()
    async def poll(label: str, count: int, ctx: Context) -> str:
        """As ``ask``, but lets go of the connection (``ctx.close_stream()``, SEP-1699 polling)
        before each question and before its response: the client resumes to get them."""
        said = []
        for number in range(count):
            await ctx.close_stream()
            answer = await ctx.elicit(f"{label} q{number}?", Name, key=f"q{number}")
            said.append(answer.data.name if answer.accepted else str(answer.action))
        await ctx.close_stream()
        return f"{label} done: {' '.join(said)}"

    @server.tool()
    async def nap(label: str, seconds: float, ctx: Context) -> str:
        """Runs ``seconds`` asking nothing, with progress before and after."""
        await ctx.report_progress(0, 1, f"{label} napping")
        await asyncio.sleep(seconds)
        await ctx.report_progress(1, 1, f"{label} awake")
        return f"{label} napped"

    @server.tool()
    async def touch(uri: str) -> str:
        """Tells the sessions that watch ``uri`` that it changed."""
        return f"told {await server.resource_updated(uri)}"

    @server.tool()
    async def big(label: str, size: int) -> str:
        """A result of ``size`` characters or more."""
        return f"{label} " + "x" * size

    @server.resource(FIXED_NOTE, mime_type="text/plain")
    async def note() -> str:
        return "a note"

    return server


async def bearer(headers: Mapping[str, str]) -> str | None:
    value = headers.get("authorization", "")
    return f"test|{value[7:]}" if value.startswith("Bearer ") else None


# -- a raw HTTP/1.1 client for event streams -------------------------------------------------------


class _Cut(Exception):
    """The client stops reading here (the drawn byte)."""


class _Eof(Exception):
    """The server closed the connection."""


@dataclass(frozen=True)
class Cut:
    """Where the client closes its connection: ``offset`` bytes into the reply's head (``in_head``)
    or into its body; ``reset``: with a RST (``abort``) rather than a FIN."""

    offset: int
    in_head: bool = False
    reset: bool = False


@dataclass(eq=False)
class RawStream:
    """One request on a socket of its own, its reply read as it comes (see the module docstring).

    ``on_event(stream, event_id, data)`` is called for each complete event of an event-stream
    reply; ``status``, ``headers``, ``body`` (of a reply that is not an event stream) are set as
    they arrive; ``clean_end``: the reply ended (the last chunk came); ``cut``: the client cut it;
    ``broken``: the server closed the connection before the reply's end."""

    port: int
    method: str
    headers: Sequence[tuple[bytes, bytes]]
    body: bytes = b""
    cut_at: Cut | None = None
    on_event: Callable[[RawStream, str | None, str], None] = lambda stream, event_id, data: None
    status: int | None = None
    reply_headers: dict[str, str] = field(default_factory=dict)
    reply_body: bytes = b""
    events: list[tuple[str | None, str]] = field(default_factory=list)
    clean_end: bool = False
    cut: bool = False
    broken: bool = False
    error: BaseException | None = None
    head_read: asyncio.Event = field(default_factory=asyncio.Event)
    changed: Callable[[], None] = lambda: None
    _writer: asyncio.StreamWriter | None = None
    _task: asyncio.Task[None] | None = None
    _received: int = 0
    _limit: int | None = None  # the byte of the reply at which reading stops

    def start(self) -> RawStream:
        self._task = asyncio.ensure_future(self._run())
        return self

    @property
    def task(self) -> asyncio.Task[None]:
        assert self._task is not None
        return self._task

    @property
    def over(self) -> bool:
        return self._task is not None and self._task.done()

    @property
    def is_event_stream(self) -> bool:
        return self.status == 200 and self.reply_headers.get("content-type", "").startswith(
            "text/event-stream"
        )

    def cut_now(self, *, reset: bool = False) -> None:
        """Close the connection now (a FIN, or a RST)."""
        if self.over:
            return
        self.cut = True
        self._close(reset)

    def _close(self, reset: bool) -> None:
        writer = self._writer
        if writer is None:
            return
        if reset:
            writer.transport.abort()
        else:
            writer.close()

    async def _run(self) -> None:
        try:
            reader, self._writer = await asyncio.open_connection("127.0.0.1", self.port)
            head = [f"{self.method} /mcp HTTP/1.1".encode(), f"host: 127.0.0.1:{self.port}".encode()]
            head += [name + b": " + value for name, value in self.headers]
            if self.method == "POST":
                head.append(b"content-length: %d" % len(self.body))
            self._writer.write(b"\r\n".join(head) + b"\r\n\r\n" + self.body)
            if self.cut_at is not None and self.cut_at.in_head:
                self._limit = self.cut_at.offset
            await self._read(reader)
        except _Cut:
            self.cut = True
            assert self.cut_at is not None
            self._close(self.cut_at.reset)
        except _Eof:
            self.broken = not self.cut
        except (ConnectionError, OSError) as exc:
            if not self.cut:
                self.broken = True
                self.error = exc
        finally:
            self.head_read.set()
            if self._writer is not None:
                self._writer.close()
                with contextlib.suppress(Exception):
                    await self._writer.wait_closed()
            self.changed()

    async def _more(self, reader: asyncio.StreamReader) -> bytes:
        size = 65536 if self._limit is None else self._limit - self._received
        if size <= 0:
            raise _Cut
        data = await reader.read(size)
        if not data:
            raise _Eof
        self._received += len(data)
        return data

    async def _read(self, reader: asyncio.StreamReader) -> None:
        buffer = b""
        while b"\r\n\r\n" not in buffer:
            buffer += await self._more(reader)
        head, _, buffer = buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split(" ")[1])
        for line in lines[1:]:
            name, _, value = line.partition(":")
            self.reply_headers[name.strip().lower()] = value.strip()
        if self.cut_at is not None and not self.cut_at.in_head:
            self._limit = self._received - len(buffer) + self.cut_at.offset
        self.head_read.set()
        self.changed()
        if self.reply_headers.get("transfer-encoding", "").lower() != "chunked":
            length = int(self.reply_headers.get("content-length", "0"))
            while len(buffer) < length:
                buffer += await self._more(reader)
            self.reply_body = buffer[:length]
            self.clean_end = True
            return
        sse = b""
        while True:
            while b"\r\n" not in buffer:
                buffer += await self._more(reader)
            size_line, _, buffer = buffer.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            while len(buffer) < size + 2:
                buffer += await self._more(reader)
            chunk, buffer = buffer[:size], buffer[size + 2 :]
            if size == 0:
                self.clean_end = True
                return
            if not self.is_event_stream:
                self.reply_body += chunk
                continue
            sse += chunk
            while b"\n\n" in sse:
                raw, _, sse = sse.partition(b"\n\n")
                self._event(raw.decode("utf-8"))

    def _event(self, raw: str) -> None:
        event_id: str | None = None
        data: list[str] = []
        for line in raw.split("\n"):
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "id":
                event_id = value
            elif name == "data":
                data.append(value)
        event = (event_id, "\n".join(data))
        self.events.append(event)
        self.on_event(self, *event)
        self.changed()

    def json(self) -> Any:
        return json.loads(self.reply_body)

    async def close(self) -> None:
        """Cut it (if still open) and wait for its reader."""
        self.cut_now()
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await self._task
