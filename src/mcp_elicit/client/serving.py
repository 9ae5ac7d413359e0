"""The requests a 2025-11-25 server sends on one connection, each answered once in a task of its own.

The server numbers its requests in its own id space, apart from the client's (an
``elicitation/create`` with id 1 is not the answer to the client's request 1): nothing here ever
looks at the client's pending requests. Each request runs in its own task, so a question that
waits for a person does not hold up the next message on the stream, and the response goes back
with ``send`` (stdio: a line on stdin; HTTP: a POST). A request whose id is still open, or was
answered not long ago, is a server reusing an id (which the spec forbids): it is logged and left
unanswered, so the first one is answered exactly once. ``notifications/cancelled`` naming an open
request cancels it, and nothing is sent for it (the spec); naming any other id, it is ignored. A
request that is not valid JSON-RPC but whose id can be read is answered ``-32600`` at once
(:meth:`Serving.invalid_request`): the server would otherwise wait for it until its own timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from mcp_elicit.client.errors import MalformedMessageError
from mcp_elicit.client.text import clean
from mcp_elicit.client.transport import ServerMessages
from mcp_elicit.wire.errors import INTERNAL_ERROR, INVALID_REQUEST
from mcp_elicit.wire.jsonrpc import (
    ErrorResponse,
    Notification,
    Request,
    RequestId,
    Response,
    encode_error,
    encode_result,
)

logger = logging.getLogger("mcp_elicit.client.serving")

# How many answered ids are remembered to recognise a reused one (older ones are forgotten).
REMEMBERED_IDS = 4096
# Server requests open at once on one connection: past this, a server flooding the client with
# questions gets -32603 (nobody answers a thousand dialogs).
MAX_OPEN = 256


def encode_response(response: Response) -> bytes:
    if isinstance(response, ErrorResponse):
        return encode_error(response.id, response.to_error())
    return encode_result(response.id, response.result)


class Serving:
    __slots__ = ("_answered", "_closed", "_messages", "_open", "_send")

    def __init__(self, messages: ServerMessages, send: Callable[[bytes], Awaitable[None]]) -> None:
        self._messages = messages
        self._send = send
        self._open: dict[RequestId, asyncio.Task[None]] = {}
        self._answered: OrderedDict[RequestId, None] = OrderedDict()
        self._closed = False  # closing: no request is answered (nor shown to anyone) any more

    @property
    def messages(self) -> ServerMessages:
        return self._messages

    def request(self, request: Request) -> None:
        """Start answering ``request`` (a duplicate id is logged and dropped)."""
        if self._closed:
            # Read while the client closes: nobody would see the question through, and its
            # answer could not be sent.
            logger.info("the client is closing: the server's %s is left unanswered", request.method)
            return
        if self._known(request.id):
            logger.warning(
                "the server sent request id %r (%s) again while it is open or already answered; "
                "ignored (ids must not be reused)",
                request.id,
                clean(request.method, single_line=True, max_length=100),
            )
            return
        if len(self._open) >= MAX_OPEN:
            self._refuse(request.id, INTERNAL_ERROR, "Too many open requests from this server")
            return
        self._open[request.id] = asyncio.create_task(self._run(request))

    def invalid_request(self, error: MalformedMessageError) -> bool:
        """Answer a request of the server's that could not be read with -32600 (JSON-RPC's Invalid
        Request), when its id could (``error.request_id``); False when there is nothing to answer."""
        request_id = error.request_id
        if request_id is None or self._closed or self._known(request_id):
            return False
        logger.warning("%s; answered -32600", error)
        self._refuse(request_id, INVALID_REQUEST, f"Invalid request: {error.reason}")
        return True

    def _known(self, request_id: RequestId) -> bool:
        """Whether ``request_id`` is open or was answered not long ago (never answered twice)."""
        return request_id in self._open or request_id in self._answered

    def _refuse(self, request_id: RequestId, code: int, message: str) -> None:
        """Answer ``request_id`` with an error at once, without asking anyone."""
        refusal = ErrorResponse(request_id, code, message)
        self._open[request_id] = asyncio.create_task(self._reply(request_id, refusal))

    def notification(self, notification: Notification) -> None:
        """A notification that belongs to no request of the client's."""
        if notification.method == "notifications/cancelled":
            request_id = notification.params.get("requestId")
            task = self._open.get(request_id) if isinstance(request_id, str | int) else None
            if task is not None:
                task.cancel()  # the server gave up on its question: nothing is sent back
            return
        try:
            self._messages.notify(notification)
        except Exception:  # one bad notification must not stop the stream that carried it
            logger.exception("handling the server's %s failed", notification.method)

    async def _run(self, request: Request) -> None:
        try:
            response = await self._messages.answer(request)
        except asyncio.CancelledError:
            self._done(request.id)
            raise
        except Exception:
            logger.exception("answering the server's %s failed", request.method)
            response = ErrorResponse(request.id, -32603, "Internal error: the client failed to answer")
        await self._reply(request.id, response)

    async def _reply(self, request_id: RequestId, response: Response) -> None:
        try:
            await self._send(encode_response(response))
        except Exception as exc:  # the transport gave up (its pipe is gone, its POSTs all failed)
            logger.warning("could not send the answer to the server's request %r: %r", request_id, exc)
        finally:
            self._done(request_id)

    def _done(self, request_id: RequestId) -> None:
        self._open.pop(request_id, None)
        self._answered[request_id] = None
        while len(self._answered) > REMEMBERED_IDS:
            self._answered.popitem(last=False)

    def cancel(self) -> None:
        """Stop answering what is still open, at once: nothing is sent for it (its session is
        over)."""
        for task in list(self._open.values()):
            task.cancel()

    async def aclose(self) -> None:
        """Cancel what is still being answered, and answer nothing more (the connection is
        closing)."""
        self._closed = True
        tasks = list(self._open.values())
        self.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
