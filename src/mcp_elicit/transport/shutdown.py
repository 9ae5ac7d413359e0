"""What a request still running gets when the server stops.

On SIGTERM or Ctrl-C, :func:`~mcp_elicit.transport.uvicorn_runner.serve` lets the requests in
flight finish for a while, then uvicorn cancels those still running. Each is answered all the
same: a 503 with a JSON-RPC error when nothing was sent yet (clients retry it), and an SSE reply
that has begun ends with its last event, never with a cut connection. The code that answers
catches the cancellation, answers, then takes the cancellation back (``Task.uncancel``), so that
uvicorn does not log the request as an "Exception in ASGI application".
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_elicit.transport.asgi import Send, send_json
from mcp_elicit.wire.errors import McpError, internal_error
from mcp_elicit.wire.jsonrpc import RequestId, encode_error


def stopping_task() -> asyncio.Task[Any] | None:
    """The current task when a cancellation of it is under way (what uvicorn does to the requests
    still running at the end of a graceful shutdown), else None: a ``CancelledError`` that is
    not the task's own is not for the request to answer."""
    task = asyncio.current_task()
    return task if task is not None and task.cancelling() > 0 else None


def shutdown_error() -> McpError:
    return internal_error("the server is shutting down; retry the request")


async def answer_shutdown(send: Send, request_id: RequestId | None) -> None:
    """The answer to a request the server stopped before it finished: 503, which clients retry."""
    await send_json(send, 503, encode_error(request_id, shutdown_error()), [(b"connection", b"close")])
