"""The stdio transport, server side: one JSON-RPC message per line on stdin and stdout.

Only protocol messages go to stdout; logs go to stderr. ``notifications/cancelled`` cancels the
named request (nothing more is written for it). EOF on stdin ends the server: requests still
running get a short grace period, then are cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sys
from typing import IO, TYPE_CHECKING, Any

from mcp_elicit.transport.answer import answer
from mcp_elicit.wire.errors import INVALID_REQUEST, McpError
from mcp_elicit.wire.jsonrpc import (
    InvalidMessage,
    Notification,
    RequestId,
    encode_error,
    encode_notification,
    parse_message,
)

if TYPE_CHECKING:
    from mcp_elicit.server.app import Server

logger = logging.getLogger("mcp_elicit.transport.stdio")

EOF_GRACE_SECONDS = 2.0


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
    with contextlib.suppress(KeyboardInterrupt):
        runner(serve_stdio(server, sys.stdin.buffer, sys.stdout.buffer))


class _LineWriter:
    def __init__(self, out: IO[bytes]) -> None:
        self._out = out

    def write(self, data: bytes) -> None:
        try:
            self._out.write(data + b"\n")
            self._out.flush()
        except (BrokenPipeError, ValueError):
            # The client went away; nothing can be delivered any more.
            logger.debug("stdout is closed; dropping a message")


async def _lines(stream: IO[bytes], limit: int) -> Any:
    """Yield stdin lines without blocking the loop; a line over ``limit`` yields None."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit + 2)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stream)
    except (ValueError, OSError):
        # Not a pipe or socket (a regular file, say): read it in a thread instead.
        while True:
            line = await asyncio.to_thread(stream.readline, limit + 2)
            if not line:
                return
            yield None if len(line) > limit + 1 and not line.endswith(b"\n") else line
        return
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                yield exc.partial
            return
        except asyncio.LimitOverrunError as exc:
            # Skip the oversized line up to and including its newline.
            await reader.readexactly(exc.consumed)
            with contextlib.suppress(asyncio.LimitOverrunError, asyncio.IncompleteReadError):
                while True:
                    try:
                        await reader.readuntil(b"\n")
                        break
                    except asyncio.LimitOverrunError as again:
                        await reader.readexactly(again.consumed)
            yield None
            continue
        yield line


async def serve_stdio(server: Server, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    writer = _LineWriter(stdout)
    running: dict[RequestId, asyncio.Task[None]] = {}
    limit = server.max_message_bytes

    async def notify(method: str, params: dict[str, Any]) -> None:
        writer.write(encode_notification(method, params))

    async def handle(request: Any) -> None:
        _, body = await answer(server, request, notify=notify)
        writer.write(body)

    def finished(request_id: RequestId, task: asyncio.Task[None]) -> None:
        if running.get(request_id) is task:
            del running[request_id]

    async for line in _lines(stdin, limit):
        if line is None:
            too_large = McpError(
                INVALID_REQUEST, f"Invalid request: a message is longer than the limit of {limit} bytes"
            )
            writer.write(encode_error(None, too_large))
            continue
        if not line.strip():
            continue
        try:
            message = parse_message(line, max_bytes=limit)
        except InvalidMessage as exc:
            writer.write(encode_error(exc.request_id, exc))
            continue
        if isinstance(message, Notification):
            if message.method == "notifications/cancelled":
                target = message.params.get("requestId")
                task = running.get(target) if isinstance(target, (str, int)) else None
                if task is not None:
                    task.cancel()
            continue
        if message.id in running:
            error = McpError(INVALID_REQUEST, f"Invalid request: id {message.id!r} is already in use")
            writer.write(encode_error(message.id, error))
            continue
        task = asyncio.get_running_loop().create_task(handle(message))
        running[message.id] = task
        task.add_done_callback(functools.partial(finished, message.id))

    if running:
        _, still_running = await asyncio.wait(list(running.values()), timeout=EOF_GRACE_SECONDS)
        for task in still_running:
            task.cancel()
        if still_running:
            await asyncio.wait(still_running)
    with contextlib.suppress(OSError):
        stdout.flush()
