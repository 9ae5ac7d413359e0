"""The stdio transport, server side: one JSON-RPC message per line on stdin and stdout.

Only protocol messages go to stdout; logs go to stderr. While ``run_stdio`` serves, whatever else
writes to stdout (a handler's ``print``, a C library, a child process) is sent to stderr, so it
cannot corrupt the protocol. ``notifications/cancelled`` cancels the named request (nothing more is
written for it). EOF on stdin ends the server: requests still running get a short grace period,
then are cancelled. A client that stops reading stdout makes the server wait (it reads nothing
more meanwhile, so memory stays bounded); Ctrl-C still ends it, with status 130.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import select
import shlex
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any, Literal

from mcp_elicit._tty import isatty
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.errors import INVALID_REQUEST, McpError
from mcp_elicit.wire.meta import initialize_refused, is_modern, request_meta

if TYPE_CHECKING:
    from mcp_elicit.server.app import Server
    from mcp_elicit.server.legacy.session import LegacySession

logger = logging.getLogger("mcp_elicit.transport.stdio")

_LEGACY_ONLY = McpError(
    INVALID_REQUEST,
    "Invalid request: this connection serves MCP 2025-11-25 (it began with initialize); requests "
    "carrying the 2026-07-28 _meta envelope are not accepted on it",
)

# An initialize after that: -32022 with the versions, as initialize_refused gives, but about this
# connection (the process also serves 2025-11-25 to a client that begins with initialize).
_MODERN_ONLY = (
    "Unsupported protocol version: this connection serves MCP 2026-07-28 (its first request carried "
    "the _meta envelope); a 2025-11-25 session begins with initialize on a connection of its own"
)


class _RequestChannel:
    """Where a 2025-11-25 request's messages go: stdout, until the request is answered or
    cancelled."""

    def __init__(self, write: Callable[[bytes], None], cancelled: Callable[[], bool]) -> None:
        self._write = write
        self._cancelled = cancelled
        self.answered = False

    async def send(self, message: bytes, *, control: bool = False, notification: bool = False) -> bool:
        """Write ``message``; False when it is dropped."""
        if control or not (self.answered or self._cancelled()):
            self._write(message)
            return True
        return False

    async def close(self) -> None:
        pass  # stdout is the whole connection: there is no stream to resume


EOF_GRACE_SECONDS = 2.0
EXIT_GRACE_SECONDS = 2.0  # after serving ends, before the process exits whatever still runs
_STOP_CHECK_SECONDS = 0.2  # how often a write waiting on a client that does not read looks up
_exit_status = 0  # what the process exits with when the grace runs out


def run_stdio(server: Server) -> None:
    if not logging.getLogger().handlers:
        logging.basicConfig(
            stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
        )
    try:
        import uvloop

        runner: Any = uvloop.run
    except ImportError:
        runner = asyncio.run
    if sys.stdin is None or sys.stdout is None:  # started with <&- or >&-
        logger.error("stdin or stdout is closed: a stdio MCP server talks to its client over both")
        raise SystemExit(1)
    if isatty(sys.stdin):
        # Run by hand (`python server.py`), it would only wait, and answer typed text with -32700.
        print(terminal_hint(), file=sys.stderr, flush=True)
    global _exit_status
    try:
        with _protocol_stdout() as out:
            runner(_serve_then_exit(server, sys.stdin.buffer, out))
    except KeyboardInterrupt:
        _exit_status = 130  # interrupted (Ctrl-C), as shells report it: not a clean end of input
        raise SystemExit(130) from None


def terminal_hint() -> str:
    """The line printed when stdin is a terminal: someone ran the server by hand, while its
    client is meant to start it. It names this process's command when it can tell it."""
    command = _own_command()
    example = f"e.g. mcp-elicit call {shlex.quote(command)} TOOL" if command else "e.g. mcp-elicit call"
    return (
        f"serving MCP on stdio (this terminal): an MCP client starts this command ({example}); Ctrl-C ends it"
    )


def _own_command() -> str | None:
    """How this process was started (``python server.py``), as a shell would take it again; None
    for code given with ``-c``, an interactive session, or a command too long to show."""
    if not sys.argv or sys.argv[0] in ("", "-c"):
        return None
    command = shlex.join(sys.orig_argv)
    return command if len(command) <= 100 else None


async def _serve_then_exit(server: Server, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """:func:`serve_stdio`, then make sure the process ends: what is still running after EOF
    (a handler that ignores its cancellation, a thread of ``asyncio.to_thread``, which the
    interpreter would wait for at exit) gets ``EXIT_GRACE_SECONDS`` more, then the process exits."""
    global _exit_status
    why = "stdin closed"
    try:
        await serve_stdio(server, stdin, stdout)
    except asyncio.CancelledError:
        # Only the runner cancels this task, on Ctrl-C: the status must say so even when the
        # grace below runs out first (a handler's thread the runner would wait for at exit).
        _exit_status = 130
        why = "the interrupt"
        raise
    finally:
        threading.Thread(target=_exit_later, args=(why,), name="mcp-elicit-exit", daemon=True).start()


def _exit_later(why: str) -> None:
    time.sleep(EXIT_GRACE_SECONDS)
    logger.warning("work still running %.0f s after %s; exiting without it", EXIT_GRACE_SECONDS, why)
    for stream in (sys.stderr, sys.__stderr__):
        with contextlib.suppress(Exception):
            stream.flush()  # type: ignore[union-attr]
    os._exit(_exit_status)


@contextlib.contextmanager
def _protocol_stdout() -> Iterator[IO[bytes]]:
    """Keep the client's pipe for protocol messages and point file descriptor 1 (and
    ``sys.stdout``) at stderr meanwhile, so that a stray ``print`` is a log line, not a
    corrupt message."""
    original = sys.stdout
    try:
        original.flush()
        stderr_fd = sys.stderr.fileno()
        protocol_fd: int | None = os.dup(original.fileno())
    except (AttributeError, OSError, ValueError):
        protocol_fd = None
    if protocol_fd is None:  # no real stdout or stderr (embedded, tests): use stdout as it is
        yield original.buffer
        return
    os.dup2(stderr_fd, 1)
    sys.stdout = sys.stderr
    out = os.fdopen(protocol_fd, "wb")
    try:
        yield out
    finally:
        sys.stdout = original
        with contextlib.suppress(OSError):
            out.flush()
            os.dup2(protocol_fd, 1)
        with contextlib.suppress(OSError):
            out.close()


class _LineWriter:
    """Writes one message per line, whole: straight to the file descriptor when there is one.

    stdin and stdout may be one socket (inetd, ``systemd`` socket activation, ``socat EXEC:``);
    reading stdin in the event loop then makes stdout non-blocking too, and a large message
    would be cut where the socket's buffer filled. So a write the descriptor cannot take yet
    waits until it can, and every line goes out complete, in order.

    A client that stops reading holds the server there (nothing more is read or answered, so
    memory stays bounded), but not past ``stop()`` becoming true (Ctrl-C: the serving task is
    being cancelled): messages are then dropped. For that, a pipe or socket is made
    non-blocking while serving, so that the wait is one this process can look up from.
    """

    def __init__(self, out: IO[bytes], stop: Callable[[], bool]) -> None:
        self._out = out
        self.stopped = False  # set once serving is cancelled: every message is dropped from then on
        self._give_up = lambda: self.stopped or stop()
        self._restore_blocking = False
        try:
            self._fd: int | None = out.fileno()
        except (AttributeError, OSError, ValueError):  # an in-memory stream (tests, embedding)
            self._fd = None
        if self._fd is not None:
            out.flush()
            if _is_pipe_or_socket(out):  # never a terminal: its mode is shared with the shell
                with contextlib.suppress(AttributeError, OSError):  # no such mode here: block
                    self._restore_blocking = os.get_blocking(self._fd)
                    os.set_blocking(self._fd, False)

    def close(self) -> None:
        if self._fd is not None and self._restore_blocking:
            with contextlib.suppress(OSError):
                os.set_blocking(self._fd, True)

    def write(self, data: bytes) -> None:
        if self.stopped:
            return
        try:
            if self._fd is None:
                self._out.write(data + b"\n")
                self._out.flush()
            elif not _write_all(self._fd, data + b"\n", self._give_up):
                logger.debug("stopped while the client was not reading; dropping a message")
        except (ConnectionError, ValueError):  # BrokenPipeError is one
            # The client went away; nothing can be delivered any more.
            logger.debug("stdout is closed; dropping a message")
        except OSError as exc:
            logger.warning("cannot write to stdout (%s); dropping a message", exc)


def _write_all(fd: int, line: bytes, stop: Callable[[], bool]) -> bool:
    """Write all of ``line``; False if ``stop()`` came first (the line may then be cut)."""
    view = memoryview(line)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            if stop():
                return False
            select.select([], [fd], [], _STOP_CHECK_SECONDS)
            continue
        view = view[written:]
    return True


class _LineProtocol(asyncio.Protocol):
    """Splits stdin into lines and hands each to ``on_line`` as soon as it arrives, from the
    event loop's read callback (no stream reader, no coroutine per line).

    A line is given with its newline. A line whose content (newline excluded) is longer than
    ``max_line`` is given as None, once, when its newline (or EOF) arrives; its bytes are dropped
    as they come. At EOF an unterminated last line is given unless it is blank. ``done`` gets the
    end: None at EOF, or the error that ended the pipe.
    """

    def __init__(
        self, on_line: Callable[[bytes | None], None], max_line: int, done: asyncio.Future[None]
    ) -> None:
        self._on_line = on_line
        self._max_line = max_line
        self._done = done
        self._partial = bytearray()
        self._skipping = False

    def data_received(self, data: bytes) -> None:
        try:
            self._split(data)
        except BaseException as exc:  # on_line failed: end serving, like an error in the loop would
            self._finish(exc)
            raise

    def _split(self, data: bytes) -> None:
        on_line = self._on_line
        max_line = self._max_line
        start = 0
        if self._skipping or self._partial:
            end = data.find(b"\n")
            if end < 0:
                if not self._skipping:
                    self._partial += data
                    if len(self._partial) > max_line:
                        self._partial.clear()
                        self._skipping = True
                return
            if self._skipping:
                self._skipping = False
                on_line(None)
            else:
                partial = self._partial
                too_long = len(partial) + end > max_line
                partial += data[: end + 1]
                line = bytes(partial)
                partial.clear()
                on_line(None if too_long else line)
            start = end + 1
        end = data.find(b"\n", start)
        while end >= 0:
            on_line(data[start : end + 1] if end - start <= max_line else None)
            start = end + 1
            end = data.find(b"\n", start)
        if start < len(data):
            if len(data) - start > max_line:
                self._skipping = True
            else:
                self._partial += data[start:] if start else data

    def eof_received(self) -> bool:
        try:
            if self._skipping:
                self._skipping = False
                self._on_line(None)
            elif self._partial.strip():
                line = bytes(self._partial)
                self._partial.clear()
                self._on_line(line)
        except BaseException as exc:
            self._finish(exc)
            raise
        self._finish(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish(exc)

    def _finish(self, exc: BaseException | None) -> None:
        if not self._done.done():
            if exc is None:
                self._done.set_result(None)
            else:
                self._done.set_exception(exc)


async def _read_lines(stream: IO[bytes], limit: int, on_line: Callable[[bytes | None], None]) -> None:
    """Give every stdin line to ``on_line`` (None for a line over ``limit``) until EOF."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    # A line may hold limit + 2 bytes before its newline (what the stream reader this replaced
    # allowed); jsonrpc.parse_message refuses those over ``limit`` with the exact size.
    protocol = _LineProtocol(on_line, limit + 2, done)
    if _is_pipe_or_socket(stream):
        transport, _ = await loop.connect_read_pipe(lambda: protocol, stream)
        try:
            await done
        finally:
            transport.close()
        return
    # A regular file, /dev/null or a terminal: the event loop's pipe reader refuses these (uvloop
    # aborts the process on some), so a thread reads and the same splitter cuts the lines.
    _pump_in_thread(stream, protocol, loop)
    await done


def _is_pipe_or_socket(stream: IO[bytes]) -> bool:
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (AttributeError, OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _pump_in_thread(stream: IO[bytes], protocol: _LineProtocol, loop: asyncio.AbstractEventLoop) -> None:
    """Read ``stream`` in a daemon thread (a blocked read never holds up exit) and hand each
    chunk to ``protocol`` on the event loop, in order."""
    read: Callable[[int], bytes] = getattr(stream, "read1", stream.read)

    def pump() -> None:
        try:
            while chunk := read(65536):
                loop.call_soon_threadsafe(protocol.data_received, chunk)
            loop.call_soon_threadsafe(protocol.eof_received)
        except (OSError, ValueError) as exc:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(protocol.connection_lost, exc)
        except RuntimeError:  # the loop closed while a read was pending: nobody is listening
            pass

    threading.Thread(target=pump, name="mcp-elicit-stdin", daemon=True).start()


async def serve_stdio(server: Server, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    serving = asyncio.current_task()
    writer = _LineWriter(stdout, stop=lambda: serving is not None and serving.cancelling() > 0)
    try:
        await _serve(server, stdin, writer)
    except asyncio.CancelledError:
        # The runner takes the cancellation back (uncancel) before it cancels the handlers:
        # what they write then must not wait on the client either.
        writer.stopped = True
        raise
    finally:
        writer.close()
    with contextlib.suppress(OSError):
        stdout.flush()


async def _serve(server: Server, stdin: IO[bytes], writer: _LineWriter) -> None:
    """Serve one client: its era is chosen by the first request that says (an ``initialize``
    without the 2026 envelope opens a 2025-11-25 session for the process; a request with the
    envelope makes the process 2026-07-28), and requests of the other era are refused then."""
    write = writer.write
    running: dict[jsonrpc.RequestId, asyncio.Task[None]] = {}
    # Requests cancelled by the client (or by EOF): nothing more is written for them, even when
    # a handler catches the cancellation and returns something anyway.
    cancelled: set[asyncio.Task[None]] = set()
    limit = server.max_message_bytes
    loop = asyncio.get_running_loop()
    era: Literal["modern", "legacy"] | None = None
    session: LegacySession | None = None

    async def handle(request: jsonrpc.Request) -> None:
        task = asyncio.current_task()
        answered = False  # a task the handler left behind may report progress after the answer

        async def notify(method: str, params: dict[str, Any]) -> None:
            if not answered and task not in cancelled:
                write(jsonrpc.encode_notification(method, params))

        try:
            meta = request_meta(request.method, request.params)
        except McpError as exc:
            write(jsonrpc.encode_error(request.id, exc))
            return
        _, body = await server.respond(request, meta=meta, notify=notify)
        answered = True
        if task not in cancelled:
            write(body)

    async def handle_legacy(request: jsonrpc.Request, session: LegacySession) -> None:
        task = asyncio.current_task()
        channel = _RequestChannel(write, lambda: task in cancelled)
        body = await session.handle(request, channel)
        channel.answered = True
        if task not in cancelled:
            write(body)

    def finished(request_id: jsonrpc.RequestId, task: asyncio.Task[None]) -> None:
        cancelled.discard(task)
        if running.get(request_id) is task:
            del running[request_id]

    def cancel(task: asyncio.Task[None]) -> None:
        cancelled.add(task)
        task.cancel()

    def on_line(line: bytes | None) -> None:
        nonlocal era, session
        if line is None:
            too_large = McpError(
                INVALID_REQUEST, f"Invalid request: a message is longer than the limit of {limit} bytes"
            )
            write(jsonrpc.encode_error(None, too_large))
            return
        if not line.strip():
            return
        # The limit is on the message: its line ending does not count.
        if line.endswith(b"\n"):
            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
        try:
            message = jsonrpc.parse_message(line, max_bytes=limit)
            if isinstance(message, jsonrpc.Result | jsonrpc.ErrorResponse):
                if session is None:
                    raise jsonrpc.refuse_response(message)
                session.receive(message)  # only this session's own requests are answered
                return
        except jsonrpc.InvalidMessage as exc:
            if session is not None:
                session.unreadable(exc)  # an answer to a question of ours: that question fails now
            write(jsonrpc.encode_error(exc.reply_id, exc))
            return
        if isinstance(message, jsonrpc.Notification):
            if message.method == "notifications/cancelled":
                target = message.params.get("requestId")
                # true == 1 in Python: a boolean must not cancel request 1
                if isinstance(target, (str, int)) and not isinstance(target, bool):
                    task = running.get(target)
                    if task is not None:
                        cancel(task)
            elif session is not None:
                session.notification(message)
            return
        if message.id in running:
            error = McpError(INVALID_REQUEST, f"Invalid request: id {message.id!r} is already in use")
            write(jsonrpc.encode_error(message.id, error))
            return
        modern = is_modern(message.params)
        if era is None and not modern and message.method == "ping":
            # A 2025-11-25 client may ping before initialize (the spec: answer it even then);
            # it chooses no era.
            write(jsonrpc.encode_result(message.id, {}))
            return
        if era is None and (modern or message.method == "initialize"):
            era = "modern" if modern else "legacy"
            if era == "legacy":
                # The 2025-11-25 session code loads with the first initialize, not at start-up:
                # a 2026-07-28 client gets its first answer sooner.
                from mcp_elicit.server.legacy.session import LegacySession

                session = LegacySession.of(server)
                # stdout carries what belongs to no request too (a subscribed resource changed)
                session.standalone = _RequestChannel(write, lambda: False)
        if era == "modern" and not modern and message.method == "initialize":
            refused = initialize_refused(message.params)
            write(jsonrpc.encode_error(message.id, McpError(refused.code, _MODERN_ONLY, refused.data)))
            return
        if session is not None:
            if modern:
                write(jsonrpc.encode_error(message.id, _LEGACY_ONLY))
                return
            if message.method == "initialize":
                # Answered at once, before whatever the client sent after it is read.
                write(session.handle_initialize(message))
                return
            work = handle_legacy(message, session)
        else:
            work = handle(message)
        task = loop.create_task(work)
        running[message.id] = task
        task.add_done_callback(functools.partial(finished, message.id))

    await _read_lines(stdin, limit, on_line)
    if session is not None:
        session.close()  # the client is gone: questions waiting for its answers fail at once

    if running:
        _, still_running = await asyncio.wait(list(running.values()), timeout=EOF_GRACE_SECONDS)
        for task in still_running:
            cancel(task)
        if still_running:
            # A handler may take its cancellation slowly, or refuse it: do not wait forever.
            await asyncio.wait(still_running, timeout=EOF_GRACE_SECONDS)
