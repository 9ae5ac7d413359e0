"""The stdio transport, client side: spawn the server, one JSON-RPC message per line.

One task reads the server's stdout and routes each response to the request with its id, and
each progress notification to the request that owns its token. If the server dies, every
request in flight fails at once with :class:`ServerExitedError` (with the exit code and, when
captured, the end of its stderr) instead of hanging, even when a child process it started keeps
its stdout open. A program whose stdout holds only lines that are not JSON-RPC (``yes``, a web
server, a script that prints text) is no MCP server: after :data:`NOT_JSON_RPC_LINES` of them, or
when it exits, requests fail with :class:`NotMcpServerError` naming its first line, instead of a
warning for every line for ever. Cancelling a request writes
``notifications/cancelled`` for its id. Closing closes stdin, waits, then escalates to SIGTERM
and SIGKILL, each wait bounded.

A captured stderr is kept as a ring buffer of its last bytes (a chatty server cannot fill memory),
read to its end when the process exits (what it wrote last, a traceback, is what explains a
failure), and handed chunk by chunk to ``on_stderr`` as it comes, to be shown live.

On a 2025-11-25 session (after :meth:`StdioTransport.serve`) the server's own requests are
answered through :class:`~mcp_elicit.client.serving.Serving`, in the server's id space: only a
*response* is ever matched against this client's pending requests, so a server request whose id
equals one of ours completes nothing. Before that (2026-07-28, where servers send no requests)
they are logged and ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from mcp_elicit.client.answered_id import answered_id
from mcp_elicit.client.errors import (
    MalformedMessageError,
    NotMcpServerError,
    ServerExitedError,
    TransportError,
    exit_status,
)
from mcp_elicit.client.messages import cancelled, decode
from mcp_elicit.client.serving import Serving
from mcp_elicit.client.text import clean
from mcp_elicit.client.transport import OnNotification, Outgoing, ServerMessages
from mcp_elicit.wire.jsonrpc import (
    ErrorResponse,
    Notification,
    Request,
    RequestId,
    Response,
    Result,
)

logger = logging.getLogger("mcp_elicit.client.stdio")

StderrMode = Literal["inherit", "capture", "devnull"]

DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
STDERR_KEEP_BYTES = 64 * 1024  # captured stderr is a ring buffer: a chatty server cannot fill memory
STDERR_READ_BYTES = 64 * 1024  # one read of it (a server writing megabytes costs few wake-ups)
STDERR_DRAIN_SECONDS = 0.2  # once the process has exited, how long its stderr may take to end
EXIT_WAIT_SECONDS = 1.0  # after stdout closes, how long to wait for the exit code
# Lines that are not JSON-RPC before the first one that is, after which the program is taken for
# no MCP server (a server may print a banner first, against the spec, but not this many).
NOT_JSON_RPC_LINES = 20

OnStderr = Callable[[bytes], None]
"""``on_stderr(chunk)``: bytes the server wrote to its stderr, as read (not split into lines)."""


class StdioTransport:
    def __init__(
        self,
        argv: Sequence[str],
        *,
        display: str,
        stderr: StderrMode = "inherit",
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        close_timeout: float = 2.0,
        on_stderr: OnStderr | None = None,
    ) -> None:
        if not argv:
            raise ValueError("the server command is empty")
        if on_stderr is not None and stderr != "capture":
            raise ValueError('on_stderr needs stderr="capture"')
        self._argv = list(argv)
        self._display = display
        self._stderr_mode = stderr
        # Extra variables over the current environment (a bare env would lose PATH and HOME).
        self._env = {**os.environ, **env} if env is not None else None
        self._cwd = cwd
        self._limit = max_message_bytes
        self._close_timeout = close_timeout
        self._proc: asyncio.subprocess.Process | None = None
        self._transport: asyncio.SubprocessTransport | None = None
        self._exited: asyncio.Future[None] | None = None  # resolved when the process has exited
        self._pending: dict[RequestId, asyncio.Future[Response]] = {}
        self._outgoing: dict[RequestId, Outgoing] = {}  # the requests of _pending
        # The client numbers its requests 1, 2, 3...: an id above this one, or of another type,
        # was never sent (a late answer to a finished request is no such thing).
        self._highest_id = 0
        self._listeners: dict[RequestId, OnNotification] = {}
        self._dead: TransportError | None = None
        self._reader: asyncio.Task[None] | None = None
        self._exit_watcher: asyncio.Task[None] | None = None
        self._stderr_reader: asyncio.Task[None] | None = None
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._on_stderr = on_stderr
        self._serving: Serving | None = None
        self._write_lock = asyncio.Lock()
        self._reset_strays()

    def _reset_strays(self) -> None:
        self._spoken = False  # a JSON-RPC message has come: lines that are not are then only noise
        self._first_stray: bytes | None = None  # until then, the first line that was not one
        self._strays = 0
        self._cut_off = False  # the output ended in the middle of a message: said in the error

    @property
    def reached_via(self) -> str:
        return self._display

    @property
    def era_key(self) -> str:
        """What an era verdict is cached under: the command line."""
        return f"stdio:{self._display}"

    def serve(self, messages: ServerMessages) -> None:
        self._serving = Serving(messages, self._write_line)

    async def notify(self, body: bytes, version: str) -> None:
        await self._write_line(body)

    async def session_opened(self, version: str) -> None:
        pass  # stdio carries everything on the one pipe

    async def restart(self) -> None:
        """Stop this server process and start a new one (a server that exits when it gets a
        request it does not know before ``initialize``, as some do with ``server/discover``)."""
        await self.aclose()
        self._proc = self._transport = self._exited = None
        self._pending.clear()
        self._outgoing.clear()
        self._listeners.clear()
        self._dead = None
        self._reader = self._exit_watcher = self._stderr_reader = None
        self._stderr.clear()
        self._stderr_size = 0
        self._reset_strays()
        await self.start()

    async def _write_line(self, line: bytes) -> None:
        """One message of ours that is not a request (the answer to a server request)."""
        proc = self._proc
        if self._dead is not None or proc is None or proc.stdin is None or proc.stdin.is_closing():
            raise self._dead or TransportError("the stdio transport is not started")
        async with self._write_lock:
            proc.stdin.write(line + b"\n")
            await proc.stdin.drain()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def not_json_rpc(self, ended: str) -> NotMcpServerError | None:
        """The error to report when only lines that are not JSON-RPC have come so far (``ended``:
        how the wait for an answer ended), or None: nothing came, or a message did."""
        if self._spoken or self._first_stray is None:
            return None
        return NotMcpServerError(self._display, self._first_stray, ended)

    @property
    def stderr_text(self) -> str:
        """What the server wrote to stderr (the last 64 KiB), when ``stderr="capture"``."""
        return b"".join(self._stderr).decode("utf-8", "replace")

    async def start(self) -> None:
        pipe = asyncio.subprocess.PIPE
        stderr = {"inherit": None, "capture": pipe, "devnull": asyncio.subprocess.DEVNULL}[self._stderr_mode]
        loop = asyncio.get_running_loop()
        exited = self._exited = loop.create_future()
        try:
            # asyncio.create_subprocess_exec, with a protocol that says when the process exits:
            # Process.wait() waits for its pipes to close as well, which a child may never do.
            transport, protocol = await loop.subprocess_exec(
                lambda: _ExitAwareProtocol(self._limit + 1, loop, exited),
                *self._argv,
                stdin=pipe,
                stdout=pipe,
                stderr=stderr,
                env=self._env,
                cwd=self._cwd,
            )
        except OSError as exc:
            raise TransportError(f"cannot start the server {self._display!r}: {exc}") from exc
        self._transport = transport
        self._proc = asyncio.subprocess.Process(transport, protocol, loop)
        self._reader = asyncio.create_task(self._read_stdout())
        self._exit_watcher = asyncio.create_task(self._watch_exit(exited))
        if self._stderr_mode == "capture":
            self._stderr_reader = asyncio.create_task(self._read_stderr())

    async def send(self, request: Outgoing, on_notification: OnNotification | None) -> Response:
        if self._dead is not None:
            raise self._dead
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise TransportError("the stdio transport is not started")
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._pending[request.id] = future
        self._outgoing[request.id] = request
        if type(request.id) is int:
            self._highest_id = max(self._highest_id, request.id)
        token = request.progress_token
        if on_notification is not None and token is not None:
            self._listeners[token] = on_notification
        try:
            try:
                proc.stdin.write(request.body + b"\n")
                await proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError):
                # Raised here: the reader must not also fail this future when it sees the exit
                # (an exception set on a future nobody awaits is reported at exit as never retrieved).
                self._pending.pop(request.id, None)
                if future.done():
                    return await future  # the reader said why first (and so it is retrieved)
                raise await self._death() from None
            return await future
        except _ClientClosed:
            raise TransportError(
                f"{request.method} to {self._display} did not finish: the client was closed"
            ) from None
        except asyncio.CancelledError:
            # Cancelling the task cancels the future it waits on; only a set result means answered.
            if future.cancelled() or not future.done():
                self._cancel_on_wire(request)
            else:
                future.exception()  # retrieved: moot once the caller has gone, whatever it holds
            raise
        finally:
            self._pending.pop(request.id, None)
            self._outgoing.pop(request.id, None)
            if token is not None:
                self._listeners.pop(token, None)

    def _cancel_on_wire(self, request: Outgoing) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdin.is_closing():
            return  # (a server that died: its stdin was closed when its stdout ended)
        if request.method == "initialize":
            return  # the spec: a client must not cancel it
        with contextlib.suppress(OSError, RuntimeError):
            # Buffered: a cancelled task must not wait on a pipe.
            proc.stdin.write(cancelled(request.id) + b"\n")

    # -- reading -----------------------------------------------------------------------------
    async def _read_stdout(self) -> None:
        assert self._proc is not None
        assert self._proc.stdout is not None
        stdout = self._proc.stdout
        try:
            while True:
                try:
                    line = await stdout.readuntil(b"\n")
                except asyncio.IncompleteReadError as exc:
                    if exc.partial.strip():
                        self._route(exc.partial, cut_off=True)
                    break
                except asyncio.LimitOverrunError as exc:
                    if await self._skip_long_line(stdout, exc.consumed):
                        continue
                    break
                self._route(line)
                if isinstance(self._dead, NotMcpServerError):
                    break  # the program is no MCP server: what else it writes is not read
        except Exception:  # a reader that dies must still fail the requests waiting on it
            logger.exception("reading the server's stdout failed")
        finally:
            await self._on_stdout_closed()

    async def _skip_long_line(self, stdout: asyncio.StreamReader, consumed: int) -> bool:
        """Drop a line over the size limit. Its request cannot be answered: fail them all.
        Returns False when stdout ended inside that line."""
        error = MalformedMessageError(f"the server sent a message over the limit of {self._limit} bytes")
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)
        await stdout.readexactly(consumed)
        while True:
            try:
                await stdout.readuntil(b"\n")
                return True
            except asyncio.LimitOverrunError as again:
                await stdout.readexactly(again.consumed)
            except asyncio.IncompleteReadError:
                return False

    def _route(self, line: bytes, *, cut_off: bool = False) -> None:
        """Hand one line to the request it answers. ``cut_off``: the output ended without a line
        ending after it (a whole last message is still taken)."""
        if not line.strip():
            return
        try:
            message = decode(line)
        except MalformedMessageError as exc:
            self._unreadable(line, exc, cut_off=cut_off)
            return
        self._heard()
        if isinstance(message, Result | ErrorResponse):
            if message.id is None:
                self._route_unattributed(message)
                return
            future = self._pending.get(message.id)
            if future is None and type(message.id) is int and 0 < message.id <= self._highest_id:
                logger.info("ignoring a response for finished request %r", message.id)
            elif future is None:
                logger.warning(
                    "the server answered a request this client never sent (id %r, a server bug): ignored",
                    message.id,
                )
            elif not future.done():
                future.set_result(message)
        elif isinstance(message, Notification):
            # Only progress goes to the request that owns its token (a completion or a
            # cancellation carrying one is still for the session); bool is no token (True == 1).
            token = message.params.get("progressToken")
            listener = None
            progress = message.method == "notifications/progress"
            if progress and isinstance(token, str | int) and not isinstance(token, bool):
                listener = self._listeners.get(token)
            if listener is not None:
                listener(message)
            elif self._serving is not None:
                self._serving.notification(message)
        elif isinstance(message, Request) and self._serving is not None:
            self._serving.request(message)
        else:
            logger.warning(
                "the server sent a %s request; servers send no requests in MCP 2026-07-28, ignored",
                clean(message.method, single_line=True, max_length=200),  # the server's text, in a log
            )

    def _unreadable(self, line: bytes, exc: MalformedMessageError, *, cut_off: bool) -> None:
        """A line that is no JSON-RPC message. ``cut_off``: the output ended inside it."""
        if cut_off and (self._spoken or line.lstrip().startswith(b"{")):
            # The server stopped in the middle of writing: its exit, not its message, is what
            # the requests waiting fail with, and that error says so (one line, not two).
            logger.debug("the server's output ended inside a message: %r", line[:200])
            self._cut_off = True
            return
        if not cut_off:
            # The answer to a request in flight that cannot be read fails that request (waiting
            # would last until the call's timeout).
            answered = answered_id(line)
            future = None if answered is None else self._pending.get(answered)
            if future is not None and not future.done():
                self._heard()
                future.set_exception(MalformedMessageError(f"the server's answer cannot be read: {exc}"))
                return
            if self._serving is not None and self._serving.invalid_request(exc):
                self._heard()
                return  # a request of the server's: answered -32600, so it does not wait for ever
        if self._spoken:  # any other line (a banner a server prints on stdout, say) is skipped
            logger.warning("ignoring a line on the server's stdout (%s): %r", exc, line[:200])
            return
        self._stray(line)

    def _stray(self, line: bytes) -> None:
        """A line that is not JSON-RPC before any that is: counted, and after
        :data:`NOT_JSON_RPC_LINES` of them the program is taken for no MCP server."""
        self._strays += 1
        if self._first_stray is None:
            self._first_stray = line
        logger.debug("a line on the server's stdout that is not JSON-RPC: %r", line[:200])
        if self._strays < NOT_JSON_RPC_LINES or self._dead is not None:
            return
        self._dead = NotMcpServerError(
            self._display, self._first_stray, f"it wrote {self._strays} such lines and no message"
        )
        for future in self._pending.values():
            if not future.done():
                future.set_exception(self._dead)

    def _heard(self) -> None:
        """A JSON-RPC message has come: the lines before it that were not are noise, said once."""
        if self._spoken:
            return
        self._spoken = True
        if self._first_stray is not None:
            logger.warning(
                "ignoring %d line(s) on the server's stdout before its first message, which are not "
                "JSON-RPC (the first: %r)",
                self._strays,
                self._first_stray[:200],
            )

    def _route_unattributed(self, message: Response) -> None:
        """An error with a null id: the server could not read a request's id (one over its size
        limit, say). With one request waiting it can only be that one, which fails now instead of
        waiting until a timeout; with several, nothing tells which, so none is failed."""
        if not isinstance(message, ErrorResponse):
            logger.warning("ignoring a result with a null id on the server's stdout")
            return
        waiting = [future for future in self._pending.values() if not future.done()]
        if len(waiting) == 1:
            waiting[0].set_result(message)
            return
        logger.warning(
            "the server reported an error for a request it could not identify (%d in flight): %s",
            len(waiting),
            clean(message.message, single_line=True, max_length=200),
        )

    async def _read_stderr(self) -> None:
        assert self._proc is not None
        assert self._proc.stderr is not None
        stderr = self._proc.stderr
        while chunk := await stderr.read(STDERR_READ_BYTES):
            self._stderr.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size > STDERR_KEEP_BYTES and len(self._stderr) > 1:
                self._stderr_size -= len(self._stderr.popleft())
            if self._on_stderr is not None:
                try:
                    self._on_stderr(chunk)
                except Exception:  # the display failing must not stop the reading (the pipe would fill)
                    logger.exception("on_stderr failed")

    def _stderr_tail(self, lines: int = 20) -> str:
        if self._stderr_mode != "capture":
            return ""
        return "\n".join(self.stderr_text.rstrip().splitlines()[-lines:])

    async def _wait_exit(self, within: float) -> int | None:
        """The exit code, waiting at most ``within`` seconds (None if still running). Unlike
        ``Process.wait()``, this does not wait for the process's pipes to close."""
        if self._exited is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._exited), within)
        return self._proc.returncode if self._proc is not None else None

    async def _watch_exit(self, exited: asyncio.Future[None]) -> None:
        """When the process has exited, give its stdout a moment to end; if it stays open (a
        child inherited it), the server is still gone: fail what waits for it."""
        await exited
        reader = self._reader
        if reader is not None:
            await asyncio.wait({reader}, timeout=EXIT_WAIT_SECONDS)
            if not reader.done():
                await self._on_stdout_closed()

    async def _on_stdout_closed(self) -> None:
        if self._dead is None:
            returncode = await self._wait_exit(EXIT_WAIT_SECONDS)
            if self._stderr_reader is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self._stderr_reader), 0.2)
            detail = "the server process exited" if returncode is not None else "the server closed its stdout"
            if self._cut_off:
                detail += " in the middle of writing a message"
            ended = "then it exited" if returncode is not None else "then it closed its stdout"
            # A program that printed only text and ended is no MCP server: not one to start again.
            self._dead = self.not_json_rpc(ended + exit_status(returncode)) or ServerExitedError(
                f"{detail} ({self._display})", returncode, self._stderr_tail()
            )
        for future in self._pending.values():
            if not future.done():
                future.set_exception(self._dead)
        # A write waiting for a server that stopped reading would wait for good: end it now (its
        # request has just failed).
        proc = self._proc
        if proc is not None and proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.transport.abort()

    async def _death(self) -> TransportError:
        """The error to report when a write finds the pipe broken (once the reader knows why)."""
        if self._reader is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._reader), EXIT_WAIT_SECONDS + 0.5)
        return self._dead or ServerExitedError(f"the server stopped reading its stdin ({self._display})")

    # -- closing -----------------------------------------------------------------------------
    async def aclose(self) -> None:
        proc = self._proc
        if proc is None:
            return
        alive = self._dead is None
        if alive:
            self._dead = TransportError("the client is closed")
        # The calls still waiting end now, not once the server has exited (which can take its
        # grace for the calls it runs, seconds); the server is told they are cancelled, as over
        # HTTP, rather than left to finish what the caller is told did not.
        for request_id, future in self._pending.items():
            if not future.done():
                future.set_exception(_ClientClosed())
                if alive:
                    self._cancel_on_wire(self._outgoing[request_id])
        if self._serving is not None:
            await self._serving.aclose()
        try:
            if proc.returncode is None:
                await self._stop(proc)
            elif proc.stdin is not None and not proc.stdin.is_closing():
                proc.stdin.close()  # already dead: still release our end of the pipe
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            raise
        finally:
            await self._drain_stderr()
            for task in (self._reader, self._exit_watcher, self._stderr_reader):
                if task is not None and not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
            if self._transport is not None:
                self._transport.close()  # our ends of the pipes, even if a child holds the others

    async def _drain_stderr(self) -> None:
        """Once the process has exited, let the stderr reader take what is left in the pipe (a
        grandchild holding it open only delays closing by :data:`STDERR_DRAIN_SECONDS`)."""
        reader = self._stderr_reader
        if reader is None or reader.done() or self._proc is None or self._proc.returncode is None:
            return
        with contextlib.suppress(Exception):
            await asyncio.wait({reader}, timeout=STDERR_DRAIN_SECONDS)

    async def _stop(self, proc: asyncio.subprocess.Process) -> None:
        """Close stdin, wait; then SIGTERM, wait; then SIGKILL (the spec's shutdown order)."""
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        if await self._wait_exit(self._close_timeout) is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        if await self._wait_exit(self._close_timeout) is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await self._wait_exit(self._close_timeout)


class _ExitAwareProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's own protocol for subprocess streams, which also resolves ``exited`` as soon as
    the process exits (its pipes may stay open longer)."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop, exited: asyncio.Future[None]) -> None:
        super().__init__(limit=limit, loop=loop)
        self._exited = exited

    def process_exited(self) -> None:
        super().process_exited()
        if not self._exited.done():
            self._exited.set_result(None)


class _ClientClosed(TransportError):
    """What a call still waiting gets from :meth:`StdioTransport.aclose` (worded by ``send``,
    which knows the request)."""
