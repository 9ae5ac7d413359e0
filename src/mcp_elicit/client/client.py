"""``Client``: an MCP 2026-07-28 client whose calls run the Multi Round-Trip loop for you.

::

    async with Client.connect("python examples/tickets.py", answerer=MyAnswerer()) as client:
        result = await client.call_tool("create_ticket", {"title": "Printer on fire"})

Connecting spawns the server (a command line) or opens Streamable HTTP (a URL), then asks
``server/discover`` once and caches the answer (``client.server_identity`` is who the person is
told is asking). Every request carries its own ``_meta``: protocol version, client info and the
capabilities the configured answerer, sampler and roots can really serve -- never more.

``call_tool``, ``get_prompt`` and ``read_resource`` answer ``InputRequiredResult`` rounds until the
result is complete (:mod:`~mcp_elicit.client.rounds` is the loop, :mod:`~mcp_elicit.client.answering`
the answers); ``max_rounds`` and ``max_total_seconds`` bound each call. Errors: see
:mod:`~mcp_elicit.client.errors`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import shlex
import time
from collections.abc import Generator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from mcp_elicit import __version__
from mcp_elicit.client.answering import Answering
from mcp_elicit.client.capabilities import Declared
from mcp_elicit.client.errors import (
    AuthorizationRequiredError,
    HttpStatusError,
    LegacyServerError,
    LocalError,
    MalformedMessageError,
    McpClientError,
    RequestTimeoutError,
    TimeLimitError,
    UnsupportedVersionError,
)
from mcp_elicit.client.messages import encode_request, server_error
from mcp_elicit.client.progress import Progress, ProgressCallback
from mcp_elicit.client.providers import RootsProvider, Sampler, StaticRoots
from mcp_elicit.client.questions import Answerer, ServerIdentity
from mcp_elicit.client.results import DiscoverResult, PromptResult, ResourceResult, ToolResult
from mcp_elicit.client.rounds import AskInputs, Backoff, Complete, Rounds
from mcp_elicit.client.stdio import StderrMode
from mcp_elicit.client.text import clean
from mcp_elicit.client.transport import OnNotification, Outgoing, Transport
from mcp_elicit.wire import codec
from mcp_elicit.wire.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from mcp_elicit.wire.jsonrpc import Notification, Response, Result
from mcp_elicit.wire.meta import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY
from mcp_elicit.wire.param_headers import HeaderMap, InvalidHeaderAnnotation, header_map, param_headers
from mcp_elicit.wire.versions import SUPPORTED_VERSIONS

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger("mcp_elicit.client")

DEFAULT_CLIENT_INFO = {"name": "mcp-elicit", "version": __version__}
# Errors that only a 2026-07-28 server sends: a discover that fails with one of these reached a
# modern server whose complaint is real (SPEC/http: fix the request, do not fall back).
_MODERN_CODES = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION, INVALID_PARAMS}
)
# What one listing (all its pages) may hold: a server that keeps paging cannot fill memory.
MAX_PAGES = 1000
MAX_LIST_ITEMS = 100_000
MAX_LIST_BYTES = 32 * 1024 * 1024  # of the items' JSON


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
    ) -> None:
        roots_provider = roots if roots is None or isinstance(roots, RootsProvider) else StaticRoots(roots)
        self._transport = transport
        self._declared = Declared.of(answerer, sampler, roots_provider)
        self._answering = Answering(answerer, sampler, roots_provider, max_attempts=max_answer_attempts)
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

    # -- connecting ------------------------------------------------------------------------
    @classmethod
    def connect(
        cls,
        target: str | Sequence[str] | Transport | object,
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
        stderr: StderrMode = "inherit",
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
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
        """
        transport = _transport_for(
            target, stderr=stderr, env=env, cwd=cwd, headers=headers, http_client=http_client
        )
        client = cls(
            transport,
            answerer=answerer,
            sampler=sampler,
            roots=roots,
            client_info=client_info,
            max_rounds=max_rounds,
            max_total_seconds=max_total_seconds,
            max_answer_attempts=max_answer_attempts,
            request_timeout=request_timeout,
            connect_timeout=connect_timeout,
            on_progress=on_progress,
            backoff=backoff,
        )
        return Connecting(client)

    async def start(self) -> None:
        """Start the transport and run ``server/discover`` (what :meth:`connect` does)."""
        await self._transport.start()
        try:
            # The timeout context turns its cancellation into TimeoutError only when it exits,
            # so the translation to our typed error must sit outside it.
            try:
                async with asyncio.timeout(self.connect_timeout) as deadline:
                    await self.discover(refresh=True)
            except TimeoutError:
                if deadline.expired():
                    raise RequestTimeoutError("server/discover", self.connect_timeout) from None
                raise
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        """Close the connection: stop a spawned server (stdin closed, then SIGTERM, then SIGKILL),
        close HTTP connections."""
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
        """The last ``server/discover`` result; ``RuntimeError`` before the client connected."""
        if self._discovery is None:
            raise RuntimeError("not connected: use Client.connect(...)")
        return self._discovery

    @property
    def protocol_version(self) -> str:
        """The protocol version every request declares: this client's most preferred one that the
        server supports."""
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
        cached = self._discovery
        if (
            cached is not None
            and not refresh
            and time.monotonic() - self._discovered_at < cached.ttl_ms / 1000
        ):
            return cached
        try:
            result = await self._call("server/discover", {})
        except McpClientError as exc:
            if exc.code in _MODERN_CODES:
                raise
            raise LegacyServerError(self.reached_via, exc) from exc
        except AuthorizationRequiredError:
            raise  # credentials are missing or refused: say so, not "not MCP 2026-07-28"
        except HttpStatusError as exc:
            if 300 <= exc.status < 400:
                raise  # a redirect says where the server is, not that it speaks another version
            raise LegacyServerError(self.reached_via, exc) from exc
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
        self._identity = discovery.identity(self.reached_via)
        return discovery

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool (all pages). Tools with an invalid ``x-mcp-header`` are left out."""
        tools = []
        for tool in await self._list("tools/list", "tools"):
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
            size += len(codec.dumps(kept))  # JSON the codec just read, so it writes it back
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
        """One call to its final result: every MRTR round, within ``max_total_seconds``."""
        rounds = Rounds(method, params, self._declared, max_rounds=self.max_rounds, backoff=self._backoff)
        try:
            async with asyncio.timeout(self.max_total_seconds) as deadline:
                while True:
                    step = rounds.receive(await self._request(method, rounds.params(), target, headers))
                    if isinstance(step, Complete):
                        return step.result
                    if isinstance(step, AskInputs):
                        responses = await self._answering.round(step.requests, self.server_identity)
                        rounds.retry_with(responses, step.requests)
                    else:
                        await asyncio.sleep(step.delay)
                        rounds.retry_with(None)
        except TimeoutError:
            if deadline.expired() and self.max_total_seconds is not None:
                raise TimeLimitError(method, self.max_total_seconds) from None
            raise

    async def _request(
        self, method: str, params: dict[str, Any], target: str | None, headers: Mapping[str, str] | None
    ) -> Any:
        """One JSON-RPC request (a fresh id every time) to its result; -32022 is retried once
        with a version both sides speak."""
        renegotiated = False
        while True:
            response = await self._send(method, params, target, headers)
            if isinstance(response, Result):
                return response.result
            error = response
            if error.code == UNSUPPORTED_PROTOCOL_VERSION:
                data = error.data
                supported = data.get("supported") if isinstance(data, dict) else None
                chosen = _common_version(supported if isinstance(supported, list) else [])
                if chosen is not None and not renegotiated:
                    renegotiated = True
                    self._set_version(chosen)
                    continue
                raise UnsupportedVersionError(
                    error.code, error.message, data, method=method, ours=SUPPORTED_VERSIONS
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
        if self.request_timeout is None:
            return await self._transport.send(outgoing, listener)
        try:
            async with asyncio.timeout(self.request_timeout) as deadline:
                return await self._transport.send(outgoing, listener)
        except TimeoutError:
            if deadline.expired():
                raise RequestTimeoutError(method, self.request_timeout) from None
            raise

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
