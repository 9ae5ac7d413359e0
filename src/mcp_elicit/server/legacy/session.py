"""A 2025-11-25 session, whatever carries it: the handshake, the methods, and requests to the
client.

On stdio a session is the whole process (an ``initialize`` chose the era); on Streamable HTTP
it is what an ``Mcp-Session-Id`` names. Either way the transport hands it the client's
messages: requests (:meth:`LegacySession.handle`, which answers with the encoded response),
notifications (:meth:`LegacySession.notification`) and responses to the requests this session
sent (:meth:`LegacySession.receive`: matched only against this session's own pending ids, in an
id space of their own). Everything about one client request goes out through its
:class:`Channel` (on HTTP that request's SSE stream); what belongs to no request (a resource the
client subscribed to has changed: :mod:`~mcp_elicit.server.legacy.subscriptions`) through the
session's :attr:`~LegacySession.standalone` channel, while there is one.

What the session keeps is what 2025-11-25 fixes at ``initialize``: the version (negotiated:
2025-11-25 or 2025-06-18, never a 2026 one), the client's capabilities (``{}`` for elicitation is
form only; at 2025-06-18 form only whatever is declared) and its self-reported info, and the log
level ``logging/setLevel`` sets, and the resources it subscribed to. Calls (``tools/call``,
``prompts/get``, ``resources/read``) run through the
:class:`~mcp_elicit.server.legacy.bridge.Bridge`, on the same engine and handlers as 2026-07-28
requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from typing import TYPE_CHECKING, Any, Literal, Protocol

from mcp_elicit.server.app import encoded
from mcp_elicit.server.auth import Caller
from mcp_elicit.server.legacy.bridge import Bridge, ClientFailed
from mcp_elicit.server.legacy.notices import CallNotices
from mcp_elicit.wire import legacy
from mcp_elicit.wire.errors import INTERNAL_ERROR, McpError, invalid_params, invalid_request, method_not_found
from mcp_elicit.wire.jsonrpc import (
    ErrorResponse,
    InvalidMessage,
    Notification,
    Request,
    RequestId,
    Response,
    Result,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
)
from mcp_elicit.wire.meta import ClientCapabilities, RequestMeta

if TYPE_CHECKING:
    from mcp_elicit.server.app import Server

logger = logging.getLogger("mcp_elicit.server.legacy")

UrlMode = Literal["request", "error"]
DEFAULT_LEG_TIMEOUT = 600.0
DEFAULT_MAX_ROUNDS = 50
# How long a request to the client waits for ``notifications/initialized`` (a client sends it right
# after the initialize result; on HTTP it may cross a call's POST) before the call fails.
INITIALIZED_GRACE = 5.0


class Channel(Protocol):
    """Where the messages about one client request go: its SSE stream on HTTP, stdout on stdio.
    Once the request is answered or cancelled a channel drops what is sent, except ``control``
    messages (the ``notifications/cancelled`` that withdraw this session's own requests).
    ``send`` says whether the message went out: a request to the client that was dropped is
    never withdrawn.
    ``notification`` marks a message the client can do without (a log line, a progress report):
    a channel with no way to the client before the response (an HTTP POST answered with JSON)
    drops it, where it refuses a request to the client."""

    async def send(self, message: bytes, *, control: bool = False, notification: bool = False) -> bool: ...

    async def close(self) -> None:
        """End the connection under a resumable stream now (the client resumes it and gets
        what follows); nothing where there is no such stream (``ctx.close_stream()``)."""
        ...


class SessionClosed(Exception):
    """The session ended (the client went away) while a request to the client was waiting."""


class LegacySession:
    """One 2025-11-25 session of ``server`` (see the module docstring).

    ``caller`` is who opened it (from a validated token; every later request of the session must
    be the same principal: the transport checks). ``leg_timeout``: seconds a request to the
    client may wait for its answer; ``max_rounds``: rounds of questions one call may send;
    ``url_mode``: ``"request"`` sends URL questions as ``elicitation/create`` requests,
    ``"error"`` ends the call with ``-32042`` naming them instead.
    """

    def __init__(
        self,
        server: Server,
        *,
        caller: Caller | None = None,
        leg_timeout: float = DEFAULT_LEG_TIMEOUT,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        url_mode: UrlMode = "request",
    ) -> None:
        self.server = server
        self.caller = caller
        self.leg_timeout = leg_timeout
        self.max_rounds = max_rounds
        self.url_mode = url_mode
        # url_mode "error": (message, url) of the URL questions a -32042 named, that no extension
        # owns -> (their elicitationId, when): the retry the error asks for goes past them once.
        self.urls_named: dict[tuple[str, str], tuple[str, float]] = {}
        self.version: str | None = None
        self.capabilities = ClientCapabilities({})
        self.client_info: dict[str, Any] | None = None
        self.log_level: str | None = None
        self._initialized = asyncio.Event()  # notifications/initialized arrived
        # Where messages that belong to no request go: stdout on stdio, the GET stream on HTTP
        # (None while no GET stream is open); the transport sets it.
        self.standalone: Channel | None = None
        self._ids = itertools.count(1)
        self._pending: dict[RequestId, asyncio.Future[Response]] = {}
        self._closed = False

    @classmethod
    def of(cls, server: Server, caller: Caller | None = None) -> LegacySession:
        """A session with ``server``'s settings (``Server(legacy_url_mode=..., ...)``)."""
        return cls(
            server,
            caller=caller,
            leg_timeout=server.legacy_leg_timeout,
            max_rounds=server.legacy_max_rounds,
            url_mode=server.legacy_url_mode,
        )

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def initialized(self) -> bool:
        """Whether the client sent ``notifications/initialized`` and the session goes on (only then
        is it sent requests)."""
        return self._initialized.is_set() and not self._closed

    # -- what the client sends -----------------------------------------------------------------
    def initialize(self, request: Request) -> dict[str, Any]:
        """Answer ``initialize`` (run at once, before anything the client sends after it)."""
        if self.version is not None:
            raise invalid_request("this session is already initialized")
        params = legacy.read_initialize(request.params)
        version = legacy.negotiate(params.requested)
        self.version = version
        self.capabilities = ClientCapabilities(legacy.session_capabilities(params.capabilities, version))
        self.client_info = params.client_info
        server = self.server
        info: dict[str, Any] = {"name": server.name, "version": server.version}
        if server.title:
            info["title"] = server.title
        return legacy.initialize_result(version, self._server_capabilities(), info, server.instructions)

    def _server_capabilities(self) -> dict[str, Any]:
        """The server's capabilities, as a session of this era has them: resources can be
        subscribed to (``resources/subscribe``, 2025-11-25 only)."""
        capabilities = self.server.capabilities()
        if "resources" in capabilities:
            capabilities["resources"] = {**capabilities["resources"], "subscribe": True}
        return capabilities

    def handle_initialize(self, request: Request) -> bytes:
        """The encoded answer to ``initialize``, made at once (a transport answers it before it
        reads what the client sent after it)."""
        try:
            return encode_result(request.id, self.initialize(request))
        except McpError as exc:
            return encode_error(request.id, exc)

    async def handle(self, request: Request, channel: Channel) -> bytes:
        """The encoded response to one client request (never raises)."""
        error, body = await encoded(request, self._result(request, channel))
        if error is not None and error.code == INTERNAL_ERROR:
            logger.debug("%s on a 2025-11-25 session: %s", request.method, error.message)
        return body

    async def _result(self, request: Request, channel: Channel) -> dict[str, Any]:
        method = request.method
        if method == "initialize":
            return self.initialize(request)
        if self.version is None:
            raise invalid_request("send initialize first")
        if method == "ping":
            return {}
        if method == "logging/setLevel":
            level = request.params.get("level")
            if level not in legacy.LOG_LEVELS:
                raise invalid_params(f"logging/setLevel: level must be one of {', '.join(legacy.LOG_LEVELS)}")
            self.log_level = level
            return {}
        if (
            method in ("resources/subscribe", "resources/unsubscribe")
            and "resources" in self.server.capabilities()
        ):
            subscriptions = self.server.subscriptions
            if method == "resources/subscribe":
                subscriptions.subscribe(self, request.params.get("uri"))
            else:
                subscriptions.unsubscribe(self, request.params.get("uri"))
            return {}
        listed = self.server.listing(request)
        if listed is not None:
            return legacy.legacy_result(listed)
        notices = self._notices(channel)
        found = self.server.call_for(request, self._meta(request), self.caller, notices, channel.close)
        if found is not None:
            entry, call = found
            try:
                return legacy.legacy_result(await Bridge(self, entry, call, channel, notices).run())
            except ClientFailed as failed:
                if method != "tools/call":
                    raise  # -32603: prompts and resources have no error result of their own
                # A tool error, as any failure of the tool: the model reads why it did not finish.
                text = f"Tool {call.target!r} could not finish: {failed.reason}"
                return {"content": [{"type": "text", "text": text}], "isError": True}
        raise method_not_found(method)  # server/discover and other 2026 methods too

    def _meta(self, request: Request) -> RequestMeta:
        """What the engine knows of the client for one call: the session's, and the request's
        progress token."""
        meta = request.params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if isinstance(token, bool) or not isinstance(token, str | int):
            token = None
        assert self.version is not None
        return RequestMeta(self.version, self.capabilities, self.client_info, token, self.log_level)

    def _notices(self, channel: Channel) -> CallNotices:
        """How one call's notifications go out on ``channel``: each once, across the rounds
        (:mod:`~mcp_elicit.server.legacy.notices`)."""

        async def send(method: str, params: dict[str, Any]) -> None:
            await self.notify(method, params, channel)

        return CallNotices(send)

    def notification(self, notification: Notification) -> None:
        """A notification from the client (the transport handles ``notifications/cancelled``,
        which is about one of its requests)."""
        if notification.method == "notifications/initialized" and self.version is not None:
            self._initialized.set()
        # notifications/roots/list_changed: roots are asked again by the next call that needs
        # them (nothing is cached); others are ignored, as the spec asks.

    def receive(self, response: Response) -> bool:
        """A response to one of this session's requests; False when it answers none of them (an
        id never sent, or already answered: logged and dropped)."""
        future = None if response.id is None else self._pending.get(response.id)
        if future is None or future.done():
            logger.info("a response for no request of this session (id %r): dropped", response.id)
            return False
        future.set_result(response)
        return True

    def unreadable(self, failure: InvalidMessage) -> bool:
        """A message that answers one of this session's requests (no ``method``, and its id is
        one) but is not a valid response -- both ``result`` and ``error``, neither, an ``error``
        without an integer code and a string message, a ``jsonrpc`` other than ``"2.0"``: that
        request fails now, as the client let it down, instead of waiting ``leg_timeout`` for an
        answer that has already come. False when it answers none."""
        request_id = failure.request_id if failure.of_response else None
        future = None if request_id is None else self._pending.get(request_id)
        if future is None or future.done():
            return False
        future.set_exception(ClientFailed(f"the client's answer could not be read: {failure.reason}"))
        return True

    # -- what the session sends ----------------------------------------------------------------
    async def request(self, method: str, params: dict[str, Any], channel: Channel) -> Result | ErrorResponse:
        """Send ``method`` to the client on ``channel`` and wait (``leg_timeout`` at most) for its
        answer. A timeout or cancellation tells the client (``notifications/cancelled``)."""
        if self._closed:
            raise ClientFailed("the client has gone away")
        await self._wait_initialized(method)
        request_id = next(self._ids)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Response] = loop.create_future()
        self._pending[request_id] = future
        timer: asyncio.TimerHandle | None = None
        sent = False  # a request the channel dropped never reached the client: nothing to withdraw
        try:
            sent = await channel.send(encode_request(request_id, method, params))
            # A timer that fails the future, where asyncio.timeout would cancel the task and take
            # the cancellation back: 24k instructions less per question (bench/README.md).
            timer = loop.call_later(self.leg_timeout, _time_out, future)
            return await future
        except TimeoutError:
            if sent:
                await self._cancel(request_id, channel, "timed out")
            raise ClientFailed(f"the client did not answer {method} within {self.leg_timeout:g} s") from None
        except SessionClosed:
            raise ClientFailed("the client went away") from None
        except asyncio.CancelledError:
            # An answer read just before the cancellation took effect (both in one read of
            # stdin, say) ended the request: there is nothing in progress to withdraw.
            if sent and not _answered(future):
                await self._cancel(request_id, channel, "the request it belongs to was cancelled")
            raise
        finally:
            if timer is not None:
                timer.cancel()
            self._pending.pop(request_id, None)

    async def _wait_initialized(self, method: str) -> None:
        """The lifecycle's order: nothing but ``ping`` goes to a client before its
        ``notifications/initialized``. A client that sends a call first (allowed once it has the
        initialize result) gets its question once the notification is in; one that never sends
        it gets a clear error after :data:`INITIALIZED_GRACE` seconds, and nothing was sent. One
        that goes away meanwhile fails the wait at once, as it fails an answer's."""
        if self._initialized.is_set():
            return
        try:
            async with asyncio.timeout(min(INITIALIZED_GRACE, self.leg_timeout)):
                await self._initialized.wait()
        except TimeoutError:
            raise invalid_request(
                f"this call must send the client {method}, and the client has not sent "
                "notifications/initialized, which must follow the initialize result before the "
                "server may send it anything"
            ) from None
        if self._closed:  # close() ended the wait
            raise ClientFailed("the client went away")

    async def _cancel(self, request_id: RequestId, channel: Channel, reason: str) -> None:
        if self._closed:
            return
        with contextlib.suppress(Exception):  # the stream may be gone: nothing to tell then
            await channel.send(
                encode_notification("notifications/cancelled", {"requestId": request_id, "reason": reason}),
                control=True,
            )

    async def notify(self, method: str, params: dict[str, Any], channel: Channel) -> None:
        if not self._closed:
            await channel.send(encode_notification(method, params), notification=True)

    async def notify_standalone(self, method: str, params: dict[str, Any]) -> bool:
        """Send a notification that belongs to no request; False when it could not go out (no
        standalone channel open, or the session is over)."""
        channel = self.standalone
        if self._closed or channel is None:
            return False
        await channel.send(encode_notification(method, params), notification=True)
        return True

    def close(self) -> None:
        """The session is over (the client went away, or ended it): requests still waiting for
        the client fail at once."""
        self._closed = True
        self.server.subscriptions.forget(self)
        self._initialized.set()  # wakes the calls still waiting for notifications/initialized
        for future in self._pending.values():
            if not future.done():
                future.set_exception(SessionClosed())


def _answered(future: asyncio.Future[Response]) -> bool:
    """Whether the client's response is in ``future`` (a cancellation cancels a future still
    waiting, and leaves one already answered as it is)."""
    return future.done() and not future.cancelled() and future.exception() is None


def _time_out(future: asyncio.Future[Response]) -> None:
    """The client did not answer in time: the request waiting on ``future`` fails."""
    if not future.done():
        future.set_exception(TimeoutError())
