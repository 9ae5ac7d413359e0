"""``Client``: an MCP client whose calls answer the server's questions for you, in both eras.

::

    async with Client.connect("python examples/tickets.py", answerer=MyAnswerer()) as client:
        result = await client.call_tool("create_ticket", {"title": "Printer on fire"})

Connecting spawns the server (a command line) or opens Streamable HTTP (a URL), then finds out
which era it speaks (:mod:`~mcp_elicit.client.era`): ``server/discover`` first, and on an answer
only a 2025-11-25 server gives, the ``initialize`` handshake (:mod:`~mcp_elicit.client.handshake`).
``protocol="2025-11-25"`` or ``"2026-07-28"`` skips the detection. ``client.server_identity`` is
who the person is told is asking, with the revision spoken.

* **2026-07-28**: every request carries its own ``_meta`` (protocol version, client info and the
  capabilities the configured answerer, sampler and roots can really serve -- never more);
  ``call_tool``, ``get_prompt`` and ``read_resource`` answer ``InputRequiredResult`` rounds until
  the result is complete (:mod:`~mcp_elicit.client.rounds` is the loop,
  :mod:`~mcp_elicit.client.answering` the answers).
* **2025-11-25**: the same capabilities are declared once, in ``initialize``; requests carry no
  ``_meta`` envelope; the server's own ``elicitation/create`` (and sampling, roots, ping) are
  answered as they come (:mod:`~mcp_elicit.client.server_requests`, the same checks and the same
  answerer), with ``request_timeout`` paused meanwhile; ``-32042`` is answered by showing the URLs
  and retrying once (:mod:`~mcp_elicit.client.url_required`); an HTTP session the server ended
  is opened again and the request sent once more.

``max_rounds`` and ``max_total_seconds`` bound each call. Errors: see
:mod:`~mcp_elicit.client.errors`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import shlex
import time
from collections.abc import Coroutine, Generator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, Unpack, cast

from mcp_elicit import __version__
from mcp_elicit.client import era
from mcp_elicit.client.answering import Answering
from mcp_elicit.client.capabilities import Declared
from mcp_elicit.client.era import Era, ProtocolChoice
from mcp_elicit.client.errors import (
    ClientError,
    LocalError,
    MalformedMessageError,
    McpClientError,
    NotMcpServerError,
    RequestTimeoutError,
    RoundLimitError,
    ServerExitedError,
    SessionExpiredError,
    TimeLimitError,
    TransportError,
    UnspokenVersionError,
    UnsupportedVersionError,
    UrlElicitationRequiredError,
)
from mcp_elicit.client.handshake import InitializeResult, initialize_params
from mcp_elicit.client.keepalive import Keepalive
from mcp_elicit.client.messages import encode_request, server_error
from mcp_elicit.client.progress import Progress, ProgressCallback
from mcp_elicit.client.providers import RootsProvider, Sampler, StaticRoots
from mcp_elicit.client.questions import Answerer, ServerIdentity
from mcp_elicit.client.results import DiscoverResult, PromptResult, ResourceResult, ToolResult
from mcp_elicit.client.rounds import AskInputs, Backoff, Complete, Rounds
from mcp_elicit.client.server_requests import ServerRequestHandler, UrlCompleteCallback
from mcp_elicit.client.stdio import StderrMode
from mcp_elicit.client.text import clean
from mcp_elicit.client.timers import PausableTimers
from mcp_elicit.client.transport import LegacyTransport, OnNotification, Outgoing, Transport
from mcp_elicit.client.url_required import open_urls, url_questions
from mcp_elicit.wire import codec
from mcp_elicit.wire.errors import HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION
from mcp_elicit.wire.jsonrpc import ErrorResponse, Notification, Response, Result, encode_notification
from mcp_elicit.wire.meta import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY
from mcp_elicit.wire.param_headers import HeaderMap, InvalidHeaderAnnotation, header_map, param_headers
from mcp_elicit.wire.versions import SUPPORTED_VERSIONS

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger("mcp_elicit.client")
T = TypeVar("T")

DEFAULT_CLIENT_INFO = {"name": "mcp-elicit", "version": __version__}
# What one listing (all its pages) may hold: a server that keeps paging cannot fill memory.
MAX_PAGES = 1000
MAX_LIST_ITEMS = 100_000
MAX_LIST_BYTES = 32 * 1024 * 1024  # of the items' JSON
# Pauses before sending a request again that the server refused as retryable: about 8 s in all,
# long enough for a database to come back, short of a person's patience.
RETRYABLE_DELAYS = (0.25, 0.5, 1.0, 2.0, 4.0)


class ClientOptions(TypedDict, total=False):
    """How a client answers and how long it waits, whatever it is connected to: the keyword
    arguments of :class:`Client` that :meth:`Client.connect` passes on unchanged."""

    answerer: Answerer | None
    sampler: Sampler | None
    roots: RootsProvider | Sequence[Mapping[str, Any]] | None
    client_info: Mapping[str, Any] | None
    max_rounds: int
    max_total_seconds: float | None
    max_answer_attempts: int
    request_timeout: float | None
    connect_timeout: float
    on_progress: ProgressCallback | None
    backoff: Backoff | None
    protocol: ProtocolChoice
    probe_timeout: float
    on_url_complete: UrlCompleteCallback | None
    ping_interval: float | None


class Client:
    """A connection to one MCP server. Make one with :meth:`connect`."""

    def __init__(
        self,
        transport: Transport,
        *,
        answerer: Answerer | None = None,
        sampler: Sampler | None = None,
        roots: RootsProvider | Sequence[Mapping[str, Any]] | None = None,
        client_info: Mapping[str, Any] | None = None,
        max_rounds: int = 50,
        max_total_seconds: float | None = 1800.0,
        max_answer_attempts: int = 3,
        request_timeout: float | None = None,
        connect_timeout: float = 30.0,
        on_progress: ProgressCallback | None = None,
        backoff: Backoff | None = None,
        protocol: ProtocolChoice = "auto",
        probe_timeout: float = 5.0,
        on_url_complete: UrlCompleteCallback | None = None,
        ping_interval: float | None = None,
    ) -> None:
        if protocol not in era.PROTOCOL_CHOICES:
            raise ValueError(f"protocol must be one of {', '.join(era.PROTOCOL_CHOICES)}, not {protocol!r}")
        if ping_interval is not None and not ping_interval > 0:
            raise ValueError(
                f"ping_interval must be a number of seconds above 0, or None, not {ping_interval!r}"
            )
        roots_provider = roots if roots is None or isinstance(roots, RootsProvider) else StaticRoots(roots)
        self._transport = transport
        self._declared = Declared.of(answerer, sampler, roots_provider)
        self._closing = asyncio.Event()  # set by aclose(): what waits on the person ends
        self._answering = Answering(
            answerer, sampler, roots_provider, max_attempts=max_answer_attempts, closing=self._closing
        )
        self._client_info = dict(client_info or DEFAULT_CLIENT_INFO)
        self.max_rounds = max_rounds
        self.max_total_seconds = max_total_seconds
        self.request_timeout = request_timeout
        self.connect_timeout = connect_timeout
        self._on_progress = on_progress
        self._backoff = backoff or Backoff()
        self._ids = itertools.count(1)
        self._version = SUPPORTED_VERSIONS[0]
        self._meta = self._build_meta()
        self._discovery: DiscoverResult | None = None
        self._discovered_at = 0.0
        self._identity: ServerIdentity | None = None
        self._header_maps: dict[str, HeaderMap] = {}
        self._protocol = protocol
        self.probe_timeout = probe_timeout
        self._era: Era | None = None
        self._timers = PausableTimers()
        self._server_requests = ServerRequestHandler(
            self._answering, self._declared, lambda: self.server_identity, self._timers, on_url_complete
        )
        self._initialized: InitializeResult | None = None
        self._opening = "server/discover"  # the request that a connect timeout is reported for
        self._ping_interval = ping_interval
        self._keepalive: Keepalive | None = None
        self._unresponsive: str | None = None  # why the keepalive closed the connection

    # -- connecting ------------------------------------------------------------------------
    @classmethod
    def connect(
        cls,
        target: str | Sequence[str] | Transport | object,
        *,
        stderr: StderrMode = "inherit",
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        **options: Unpack[ClientOptions],
    ) -> Connecting:
        """Connect to ``target``: a URL (``http://``/``https://``: Streamable HTTP), a command line
        (a string, split like a shell would, or a list: spawned, stdio), a server object in this
        process (an :class:`mcp_elicit.Server`, or an ASGI app serving MCP: no socket, see
        :mod:`~mcp_elicit.client.asgi_transport`), or a ready
        :class:`~mcp_elicit.client.transport.Transport`.

        Use as ``async with Client.connect(...) as client`` (closes on exit) or
        ``client = await Client.connect(...)`` (then ``await client.aclose()``).
        ``stderr`` (``"inherit"``, ``"capture"``, ``"devnull"``), ``env`` (extra variables over the
        current environment) and ``cwd`` apply to a spawned server; ``headers`` (e.g.
        ``Authorization``) to HTTP. HTTP runs on a built-in HTTP/1.1 client; pass ``http_client``
        (an ``httpx.AsyncClient``) for proxies, custom TLS or auth flows -- it stays yours to close.

        Every other keyword (:class:`ClientOptions`) goes to :class:`Client` as it is.
        ``protocol``: ``"auto"`` (find out; see :mod:`~mcp_elicit.client.era`), ``"2026-07-28"``
        or ``"2025-11-25"`` (speak that era without asking: a server that speaks both, such as
        the official Python SDK's, otherwise picks 2026-07-28). ``probe_timeout``: how long a
        stdio server may take to answer ``server/discover`` before it is taken for a 2025-11-25
        one. ``connect_timeout`` (30 s): how long connecting may take in all (the probe, the
        handshake), after which it fails with :class:`RequestTimeoutError`; a command whose stdout
        held only lines that are not JSON-RPC fails with :class:`NotMcpServerError` instead, as it
        does at once when such a program exits or writes many of them. ``on_url_complete`` is
        called when a 2025-11-25 server reports that the browser step of a URL the person
        accepted is done. ``ping_interval``: on a 2025-11-25 session, ``ping`` the server this
        often (seconds); one not answered within as long closes the connection, and the calls
        still waiting fail with :class:`TransportError` saying so
        (:mod:`~mcp_elicit.client.keepalive`). Default None: no pings.
        """
        transport = _transport_for(
            target, stderr=stderr, env=env, cwd=cwd, headers=headers, http_client=http_client
        )
        client = cls(transport, **options)
        return Connecting(client)

    async def start(self) -> None:
        """Start the transport and find out the server's era: ``server/discover``, or the
        ``initialize`` handshake (what :meth:`connect` does)."""
        await self._transport.start()
        try:
            # The timeout context turns its cancellation into TimeoutError only when it exits,
            # so the translation to our typed error must sit outside it.
            try:
                async with asyncio.timeout(self.connect_timeout) as deadline:
                    await self._open()
            except TimeoutError:
                if deadline.expired():
                    raise self._no_opening() from None
                raise
        except BaseException:
            await self.aclose()
            raise

    def _no_opening(self) -> NotMcpServerError | RequestTimeoutError:
        """``connect_timeout`` passed: a program that wrote only text on stdout is said to be no
        MCP server (stdio); otherwise the request that got no answer is named."""
        limit = self.connect_timeout
        not_json_rpc = getattr(self._transport, "not_json_rpc", None)
        found: NotMcpServerError | None = None
        if not_json_rpc is not None:
            found = not_json_rpc(f"no answer within {limit:g} s (connect_timeout)")
        return found or RequestTimeoutError(self._opening, limit, "connect_timeout")

    async def _open(self) -> None:
        if self._protocol == "2026-07-28":
            await self.discover(refresh=True)
            return
        if self._protocol == "2025-11-25":
            await self._initialize()
            return
        key = getattr(self._transport, "era_key", None) or self.reached_via
        if era.remembered(key) == "legacy":
            try:
                await self._initialize()
                return
            except (McpClientError, MalformedMessageError):
                era.forget(key)  # the server changed: ask it again
        try:
            await self._probe()
        except ClientError as exc:
            if not era.probe_says_legacy(exc, stdio=self._is_stdio()):
                raise
            if not isinstance(self._transport, LegacyTransport):
                raise self._no_handshake(f"{exc}; a server that answers so may need") from exc
            logger.debug("server/discover says %s is not a 2026-07-28 server: %s", self.reached_via, exc)
            if isinstance(exc, ServerExitedError):
                restart = getattr(self._transport, "restart", None)
                if restart is None:
                    raise
                await restart()  # some servers exit on any request they do not know before initialize
        else:
            era.remember(key, "modern")
            return
        try:
            await self._initialize()
        except McpClientError as exc:
            if not era.is_modern_refusal(exc):
                raise
            # A modern server after all, whose discover answer came too late for the probe.
            await self.discover(refresh=True)
            era.remember(key, "modern")
            return
        era.remember(key, "legacy")

    async def _probe(self) -> None:
        """``server/discover`` as the era probe: on stdio a server that says nothing in
        ``probe_timeout`` seconds counts as a 2025-11-25 one (HTTP has no such rule)."""
        if not self._is_stdio():
            await self.discover(refresh=True)
            return
        try:
            async with asyncio.timeout(self.probe_timeout) as deadline:
                await self.discover(refresh=True)
        except TimeoutError:
            if deadline.expired():
                raise RequestTimeoutError("server/discover", self.probe_timeout, "probe_timeout") from None
            raise

    def _no_handshake(self, who_needs: str) -> TransportError:
        """The error for a transport that cannot carry a 2025-11-25 session (the in-process one)."""
        return TransportError(
            f"{who_needs} the 2025-11-25 initialize handshake, which {type(self._transport).__name__} "
            "cannot carry (use a URL or a command line)"
        )

    def _is_stdio(self) -> bool:
        from mcp_elicit.client.stdio import StdioTransport

        return isinstance(self._transport, StdioTransport)

    async def _initialize(self) -> None:
        """The 2025-11-25 handshake: ``initialize``, check the result, ``notifications/initialized``
        (also what starts a new session after the server ended one)."""
        transport = self._transport
        if not isinstance(transport, LegacyTransport):
            raise self._no_handshake(f"{self.reached_via} needs")
        self._opening = "initialize"
        transport.serve(self._server_requests)  # a ping may come before the answer
        params = initialize_params(self._declared, self._client_info)
        raw = await self._legacy_send("initialize", params, version=None)
        try:
            result = InitializeResult.parse(raw)
        except UnspokenVersionError:
            await transport.aclose()  # the spec: disconnect
            raise
        self._initialized = result
        self._era = "legacy"
        self._identity = result.identity(self.reached_via)
        version = result.protocol_version
        self._opening = "notifications/initialized"
        await transport.notify(encode_notification("notifications/initialized", {}), version)
        self._opening = "the session's GET stream"
        await transport.session_opened(version)
        if self._ping_interval is not None and self._keepalive is None:
            self._keepalive = Keepalive(self._ping_interval, self._ping, self._server_unresponsive)
            self._keepalive.start()

    async def _ping(self) -> None:
        await self._legacy_send("ping", {})

    async def _server_unresponsive(self, why: str) -> None:
        """The keepalive's verdict: the connection is taken as failed (the spec), and closed."""
        self._unresponsive = f"the server stopped answering ({why}): the connection was closed"
        logger.warning("%s: %s", self.reached_via, self._unresponsive)
        await self._transport.aclose()

    async def aclose(self) -> None:
        """Close the connection: stop a spawned server (stdin closed, then SIGTERM, then SIGKILL),
        close HTTP connections. Calls still waiting fail with :class:`TransportError`, those
        waiting on the person too (the question is withdrawn)."""
        self._closing.set()
        if self._keepalive is not None:
            await self._keepalive.aclose()
        await self._transport.aclose()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # -- what we know ----------------------------------------------------------------------
    @property
    def server_identity(self) -> ServerIdentity:
        """Who is asking (from ``serverInfo``, self-reported) and how it was reached."""
        if self._identity is None:
            raise RuntimeError("not connected: use Client.connect(...)")
        return self._identity

    @property
    def discovery(self) -> DiscoverResult:
        """The last ``server/discover`` result; ``RuntimeError`` before the client connected, or
        on a 2025-11-25 server (see :attr:`initialize_result`)."""
        if self._discovery is None:
            if self._era == "legacy":
                raise RuntimeError("a 2025-11-25 server has no server/discover: see initialize_result")
            raise RuntimeError("not connected: use Client.connect(...)")
        return self._discovery

    @property
    def initialize_result(self) -> InitializeResult:
        """What a 2025-11-25 server answered ``initialize``; ``RuntimeError`` on a 2026-07-28 one."""
        if self._initialized is None:
            raise RuntimeError("no initialize handshake: the server speaks 2026-07-28 (see discovery)")
        return self._initialized

    @property
    def era(self) -> Era:
        """``"modern"`` (2026-07-28) or ``"legacy"`` (2025-11-25, the initialize handshake)."""
        if self._era is None:
            raise RuntimeError("not connected: use Client.connect(...)")
        return self._era

    @property
    def protocol_version(self) -> str:
        """The protocol version spoken: on 2026-07-28 the one every request declares (this
        client's most preferred one that the server supports), else the one ``initialize``
        negotiated."""
        if self._initialized is not None:
            return self._initialized.protocol_version
        return self._version

    @property
    def capabilities(self) -> dict[str, Any]:
        """The ``clientCapabilities`` every request declares."""
        return self._declared.to_wire()

    @property
    def reached_via(self) -> str:
        """How the server was reached (the command line or the URL): shown with every question."""
        return self._transport.reached_via

    # -- the calls -------------------------------------------------------------------------
    async def discover(self, *, refresh: bool = False) -> DiscoverResult:
        """``server/discover``, cached for the server's ``ttlMs`` unless ``refresh``."""
        if self._era == "legacy":
            raise LocalError(
                "server/discover: this server speaks MCP 2025-11-25 (the initialize handshake), "
                "which has no server/discover; see Client.initialize_result"
            )
        cached = self._discovery
        if (
            cached is not None
            and not refresh
            and time.monotonic() - self._discovered_at < cached.ttl_ms / 1000
        ):
            return cached
        result = await self._call("server/discover", {})
        if not isinstance(result, dict):
            raise MalformedMessageError("the result of server/discover must be an object")
        discovery = DiscoverResult.parse(result)
        if self._version not in discovery.supported_versions:
            chosen = _common_version(discovery.supported_versions)
            if chosen is None:
                raise UnsupportedVersionError(
                    UNSUPPORTED_PROTOCOL_VERSION,
                    "server/discover lists no version this client speaks",
                    {"supported": list(discovery.supported_versions)},
                    method="server/discover",
                    ours=SUPPORTED_VERSIONS,
                )
            self._set_version(chosen)
        self._discovery = discovery
        self._discovered_at = time.monotonic()
        self._era = "modern"
        self._identity = discovery.identity(self.reached_via, self._version)
        return discovery

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool (all pages). On 2026-07-28, tools with an invalid ``x-mcp-header`` are left
        out (2025-11-25 has no such headers)."""
        listed = await self._list("tools/list", "tools")
        if self._era == "legacy":
            return listed
        tools = []
        for tool in listed:
            name = tool.get("name")
            if not isinstance(name, str):
                continue
            try:
                mapping = header_map(tool.get("inputSchema"))
            except InvalidHeaderAnnotation as exc:
                # The name and the reason (a property name in it) are the server's text.
                logger.warning(
                    "leaving out tool %r: %s",
                    clean(name, single_line=True, max_length=200),
                    clean(str(exc), single_line=True, max_length=500),
                )
                continue
            if mapping:
                self._header_maps[name] = mapping
            else:
                self._header_maps.pop(name, None)
            tools.append(tool)
        return tools

    async def list_prompts(self) -> list[dict[str, Any]]:
        """Every prompt (all pages)."""
        return await self._list("prompts/list", "prompts")

    async def list_resources(self) -> list[dict[str, Any]]:
        """Every resource (all pages)."""
        return await self._list("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        """Every resource template (all pages)."""
        return await self._list("resources/templates/list", "resourceTemplates")

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Call tool ``name`` with ``arguments``, answering every ``InputRequiredResult`` round until
        the result is complete.

        A tool that failed comes back with ``is_error`` set. A JSON-RPC error from the server raises
        :class:`~mcp_elicit.client.errors.McpClientError`; a limit reached (``max_rounds``,
        ``max_total_seconds``, ``request_timeout``) or a dead transport raises a
        :class:`~mcp_elicit.client.errors.LocalError`; a server breaking the protocol, a
        :class:`~mcp_elicit.client.errors.ProtocolViolation`.
        """
        args = dict(arguments) if arguments is not None else {}
        try:
            result = await self._call_tool(name, args)
        except McpClientError as exc:
            if exc.code != HEADER_MISMATCH:
                raise
            # The tool mirrors arguments in Mcp-Param-* headers we did not know of (tools not
            # listed yet, or changed): the spec has the client list the tools again and retry
            # once. The server refused before running anything, so nothing runs twice.
            await self.list_tools()
            result = await self._call_tool(name, args)
        return ToolResult.parse(result)

    async def _call_tool(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        mapping = self._header_maps.get(name)
        headers = param_headers(mapping, args) if mapping else None
        return await self._call("tools/call", {"name": name, "arguments": args}, target=name, headers=headers)

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> PromptResult:
        """``prompts/get`` for prompt ``name``, with its rounds answered and errors raised as
        :meth:`call_tool` does."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return PromptResult.parse(await self._call("prompts/get", params, target=name))

    async def read_resource(self, uri: str) -> ResourceResult:
        """``resources/read`` of ``uri``, with its rounds answered and errors raised as
        :meth:`call_tool` does."""
        return ResourceResult.parse(await self._call("resources/read", {"uri": uri}, target=uri))

    # -- the engine ------------------------------------------------------------------------
    async def _list(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        size = 0
        params: dict[str, Any] = {}
        for _ in range(MAX_PAGES):
            result = await self._call(method, params)
            page = result.get(key)
            if not isinstance(page, list):
                raise MalformedMessageError(f"the result of {method} must have {key!r} as an array")
            kept = [item for item in page if isinstance(item, dict)]
            items.extend(kept)
            try:
                size += len(codec.dumps(kept))  # JSON the codec just read, so it writes it back
            except TypeError:  # but only to 255 levels deep, where it reads up to 1024
                raise MalformedMessageError(
                    f"the result of {method} nests its {key} deeper than 255 levels"
                ) from None
            if len(items) > MAX_LIST_ITEMS:
                raise LocalError(f"{method}: the server listed more than {MAX_LIST_ITEMS} {key}; giving up")
            if size > MAX_LIST_BYTES:
                raise LocalError(
                    f"{method}: the server listed more than {MAX_LIST_BYTES >> 20} MiB of {key}; giving up"
                )
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return items
            params = {"cursor": cursor}
        raise MalformedMessageError(f"{method}: the server returned more than {MAX_PAGES} pages")

    async def _call(
        self,
        method: str,
        params: dict[str, Any],
        *,
        target: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """One call to its final result: every MRTR round (2026-07-28) or the server's own
        requests answered on the way (2025-11-25), within ``max_total_seconds``."""
        if self._era == "legacy":
            return await self._legacy_call(method, params)
        rounds = Rounds(method, params, self._declared, max_rounds=self.max_rounds, backoff=self._backoff)
        answered: dict[str, dict[str, Any]] | None = None  # the last round's answers (to pre-fill)
        try:
            async with asyncio.timeout(self.max_total_seconds) as deadline:
                while True:
                    step = rounds.receive(await self._request(method, rounds.params(), target, headers))
                    if isinstance(step, Complete):
                        return step.result
                    if isinstance(step, AskInputs):
                        asking = self._answering.round(step.requests, self.server_identity, answered)
                        responses = await self._unless_closed(method, asking)
                        rounds.retry_with(responses, step.requests)
                        answered = responses
                    else:
                        await self._unless_closed(method, asyncio.sleep(step.delay))
                        rounds.retry_with(None)
        except TimeoutError:
            if deadline.expired() and self.max_total_seconds is not None:
                raise TimeLimitError(method, self.max_total_seconds) from None
            raise

    async def _unless_closed(self, method: str, work: Coroutine[Any, Any, T]) -> T:
        """``work`` (what waits on the person, or a pause between rounds) to its end, unless the
        client is closed meanwhile: then it is cancelled (the question withdrawn) and the call
        fails as a call waiting for its reply does."""
        closed = TransportError(f"{method} did not finish: the client was closed")

        async def unless_closed_first() -> T:
            # Checked in the task's first step, the one that would put the question to the
            # person: a task starts a turn of the loop after it is made, when aclose() may have
            # begun (or already closed the client).
            if self._closing.is_set():
                work.close()
                raise closed
            return await work

        return await _unless_set(self._closing, closed, unless_closed_first())

    async def _request(
        self, method: str, params: dict[str, Any], target: str | None, headers: Mapping[str, str] | None
    ) -> Any:
        """One JSON-RPC request (a fresh id every time) to its result; -32022 is retried once
        with a version both sides speak, an error the server marks ``retryable`` (its state
        store is briefly down, say) after each of :data:`RETRYABLE_DELAYS`."""
        renegotiated = False
        delays = iter(RETRYABLE_DELAYS)
        while True:
            response = await self._send(method, params, target, headers)
            if isinstance(response, Result):
                return response.result
            error = response
            delay = next(delays, None) if _retryable(error) else None
            if delay is not None:
                logger.info("%s: the server says retry (%s); again in %g s", method, error.message, delay)
                await self._unless_closed(method, asyncio.sleep(delay))
                continue
            if error.code == UNSUPPORTED_PROTOCOL_VERSION:
                data = error.data
                supported = data.get("supported") if isinstance(data, dict) else None
                chosen = _common_version(supported if isinstance(supported, list) else [])
                # Retried once even at the version it was sent at: a server may refuse a first
                # request so (the conformance suite's does).
                if chosen is not None and not renegotiated:
                    renegotiated = True
                    self._set_version(chosen)
                    continue
                raise UnsupportedVersionError(
                    error.code,
                    error.message,
                    data,
                    method=method,
                    ours=SUPPORTED_VERSIONS,
                    sent=self._version,
                )
            raise server_error(error, method)

    async def _send(
        self, method: str, params: dict[str, Any], target: str | None, headers: Mapping[str, str] | None
    ) -> Response:
        request_id = next(self._ids)
        listener: OnNotification | None = None
        meta = self._meta
        if self._on_progress is not None:
            meta = {**meta, "progressToken": request_id}
            listener = self._progress_listener(method, target)
        body = encode_request(request_id, method, {"_meta": meta, **params})
        token = request_id if listener is not None else None
        outgoing = Outgoing(request_id, method, body, self._version, target, headers, token)
        return await self._timed(outgoing, listener)

    async def _timed(self, outgoing: Outgoing, listener: OnNotification | None) -> Response:
        """The transport's answer within ``request_timeout`` (paused while the server waits on
        the person)."""
        if self.request_timeout is None:
            return await self._transport.send(outgoing, listener)
        try:
            async with self._timers.limit(self.request_timeout) as deadline:
                return await self._transport.send(outgoing, listener)
        except TimeoutError:
            if deadline.expired():
                raise RequestTimeoutError(outgoing.method, self.request_timeout) from None
            raise

    # -- 2025-11-25 ----------------------------------------------------------------------------
    async def _legacy_call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request of a 2025-11-25 session to its result, within ``max_total_seconds``: a
        -32042 is answered by opening its URLs and retried once; a failure on this side while
        answering the server's questions is raised as such."""
        try:
            async with asyncio.timeout(self.max_total_seconds) as deadline:
                try:
                    result = await self._legacy_within_rounds(method, params)
                except UrlElicitationRequiredError as exc:
                    questions = url_questions(exc, self._declared)
                    opening = open_urls(
                        questions, self._answering, self._server_requests, self.server_identity, self._timers
                    )
                    if not await self._unless_closed(method, opening):
                        raise
                    result = await self._legacy_within_rounds(method, params)
        except TimeoutError:
            if deadline.expired() and self.max_total_seconds is not None:
                raise TimeLimitError(method, self.max_total_seconds) from None
            raise
        except TransportError as exc:
            if self._unresponsive is not None:  # what closed the connection under this call
                raise TransportError(f"{method}: {self._unresponsive}") from exc
            raise
        except McpClientError as exc:
            failure = self._server_requests.take_failure()
            if failure is not None:
                raise failure from exc  # why the server got no answer: ours, not its error
            raise
        failure = self._server_requests.take_failure()
        if failure is not None:
            raise failure
        if not isinstance(result, dict):
            raise MalformedMessageError(f"the result of {method} must be an object")
        return result

    async def _legacy_within_rounds(self, method: str, params: dict[str, Any]) -> Any:
        """:meth:`_legacy_request`, cancelled (on the wire too) with :class:`RoundLimitError` once
        the server asks more than ``max_rounds`` questions a call (see
        :mod:`~mcp_elicit.client.server_requests`)."""
        with self._server_requests.calls(self.max_rounds) as spent:
            return await _unless_set(
                spent, RoundLimitError(method, self.max_rounds), self._legacy_request(method, params)
            )

    async def _legacy_request(self, method: str, params: dict[str, Any]) -> Any:
        """A request of the session; if the server ended the session (HTTP 404), a new one is
        opened and the request sent once more (a second 404 is raised)."""
        try:
            return await self._legacy_send(method, params)
        except SessionExpiredError:
            logger.info("the server ended the session; starting a new one")
            await self._initialize()
            return await self._legacy_send(method, params)

    async def _legacy_send(self, method: str, params: dict[str, Any], *, version: Any = ...) -> Any:
        """One 2025-11-25 request (no ``_meta`` envelope; a progress token when asked for)."""
        request_id = next(self._ids)
        listener: OnNotification | None = None
        if self._on_progress is not None and method not in ("initialize", "ping"):
            params = {**params, "_meta": {"progressToken": request_id}}
            listener = self._progress_listener(method, params.get("name") or params.get("uri"))
        body = encode_request(request_id, method, params)
        if version is ...:
            version = self.protocol_version
        token = request_id if listener is not None else None
        outgoing = Outgoing(request_id, method, body, version, progress_token=token, legacy=True)
        response = await self._timed(outgoing, listener)
        if isinstance(response, Result):
            return response.result
        raise server_error(response, method, legacy=True)

    def _progress_listener(self, method: str, target: str | None) -> OnNotification:
        callback = self._on_progress
        assert callback is not None

        def listen(notification: Notification) -> None:
            if notification.method != "notifications/progress":
                return
            progress = Progress.from_params(method, target, notification.params)
            if progress is None:
                return
            try:
                callback(progress)
            except Exception:  # a broken callback must not break the transport's reader
                logger.exception("the on_progress callback failed")

        return listen

    def _build_meta(self) -> dict[str, Any]:
        return {
            PROTOCOL_VERSION_KEY: self._version,
            CLIENT_INFO_KEY: self._client_info,
            CLIENT_CAPABILITIES_KEY: self._declared.to_wire(),
        }

    def _set_version(self, version: str) -> None:
        self._version = version
        self._meta = self._build_meta()


class Connecting:
    """What :meth:`Client.connect` returns: ``await`` it, or use it with ``async with``."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def __await__(self) -> Generator[Any, None, Client]:
        return self._connect().__await__()

    async def _connect(self) -> Client:
        await self._client.start()
        return self._client

    async def __aenter__(self) -> Client:
        return await self._connect()

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._client.aclose()


def _common_version(offered: Sequence[object]) -> str | None:
    """Our most preferred version among ``offered``."""
    for version in SUPPORTED_VERSIONS:
        if version in offered:
            return version
    return None


def _is_transport(target: object) -> bool:
    return all(callable(getattr(target, name, None)) for name in ("start", "send", "aclose"))


def _transport_for(
    target: str | Sequence[str] | Transport | object,
    *,
    stderr: StderrMode,
    env: Mapping[str, str] | None,
    cwd: str | None,
    headers: Mapping[str, str] | None,
    http_client: httpx.AsyncClient | None,
) -> Transport:
    if not isinstance(target, str | Sequence) and not _is_transport(target):
        from mcp_elicit.client.asgi_transport import AsgiTransport, app_of

        found = app_of(target)
        if found is None:
            raise TypeError(
                "Client.connect takes a URL, a command line, a Transport, or a server object "
                f"(mcp_elicit.Server, or an ASGI app serving MCP), not {type(target).__name__}"
            )
        app, path = found
        return AsgiTransport(app, url=f"http://in-process{path}", headers=headers)
    if isinstance(target, str):
        if target.startswith(("http://", "https://")):
            if http_client is not None:
                from mcp_elicit.client.httpx_transport import HttpxTransport

                return HttpxTransport(target, http_client, headers=headers)
            from mcp_elicit.client.http import HttpTransport

            return HttpTransport(target, headers=headers)
        argv = shlex.split(target)
        display = target
    elif isinstance(target, Sequence):
        argv = [str(part) for part in target]
        display = shlex.join(argv)
    else:
        return cast(Transport, target)
    from mcp_elicit.client.stdio import StdioTransport

    return StdioTransport(argv, display=display, stderr=stderr, env=env, cwd=cwd)


def _retryable(error: ErrorResponse) -> bool:
    """Whether the server says the request may simply be sent again (``data.retryable``)."""
    return isinstance(error.data, dict) and error.data.get("retryable") is True


async def _unless_set(event: asyncio.Event, error: Exception, work: Coroutine[Any, Any, T]) -> T:
    """``work`` to its end, unless ``event`` is set first: then ``work`` is cancelled and
    ``error`` raised. A caller cancelled meanwhile cancels ``work`` with it."""
    task = asyncio.ensure_future(work)
    stop = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        await _cancelled(task)
        raise
    finally:
        stop.cancel()
    if not task.done():
        await _cancelled(task)
        raise error
    return task.result()


async def _cancelled(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` and wait until it has ended (what it raised is of no interest any more)."""
    task.cancel()
    await asyncio.wait({task})
    if not task.cancelled():
        task.exception()  # retrieved: asyncio would report it at exit otherwise
