"""``Server``: register tools, prompts and resources; dispatch one request at a time.

``dispatch`` is the whole server side of the protocol for one request; transports call it and
only move bytes. It checks ``_meta`` and the protocol version, routes the method, runs a
handler round through the replay engine, and seals or unseals the flow state.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcp_elicit._extras import require
from mcp_elicit.server import options
from mcp_elicit.server.auth import Authenticate, Caller
from mcp_elicit.server.call import Call, CloseStream, Notify
from mcp_elicit.server.context import Context
from mcp_elicit.server.engine import Complete, Engine, Outcome
from mcp_elicit.server.extension import Extension
from mcp_elicit.server.legacy.subscriptions import Subscriptions
from mcp_elicit.server.registry import Entry, Handler, Prompt, Resource, Tool, first_paragraph
from mcp_elicit.server.signature import analyse
from mcp_elicit.state import KeyRing, SingleUseStore, StateSealer
from mcp_elicit.state.key_file import ENV_FILE_VAR as KEY_FILE_ENV_VAR
from mcp_elicit.state.key_file import KeyFile
from mcp_elicit.state.keys import ENV_VAR as KEYS_ENV_VAR
from mcp_elicit.state.keys import set_but_blank
from mcp_elicit.state.single_use import RedeliveryStore
from mcp_elicit.wire import mrtr
from mcp_elicit.wire.errors import McpError, internal_error, invalid_params, method_not_found
from mcp_elicit.wire.jsonrpc import DEFAULT_MAX_MESSAGE_BYTES, Request, encode_error, encode_result
from mcp_elicit.wire.meta import (
    RequestMeta,
    check_version,
    request_meta,
    server_info_meta,
)
from mcp_elicit.wire.param_headers import HeaderMap, InvalidHeaderAnnotation, header_map
from mcp_elicit.wire.versions import SUPPORTED_VERSIONS

if TYPE_CHECKING:  # types only: Server.asgi() and run_http() import the transport when called
    from mcp_elicit.server.check import CheckResult
    from mcp_elicit.transport.asgi import ASGIApp
    from mcp_elicit.transport.session_relay import SessionBus

logger = logging.getLogger("mcp_elicit.server")

DEBUG_ENV_VAR = "MCP_ELICIT_DEBUG"
"""Read by ``Server(debug=None)``: ``1`` reports handler exceptions to the client (development)."""

EPHEMERAL_KEY_WARNING = (
    "requestState uses an ephemeral key (lost on restart, unknown to other instances): "
    f"run `mcp-elicit keygen` once and set {KEYS_ENV_VAR} to it"
)


def _ephemeral_key_warning() -> str:
    """:data:`EPHEMERAL_KEY_WARNING`, unless a key variable is set but empty (read as unset):
    then the warning says so, rather than telling the operator to set what is set."""
    blank = set_but_blank(KEYS_ENV_VAR, KEY_FILE_ENV_VAR)
    if blank is None:
        return EPHEMERAL_KEY_WARNING
    fix = "run `mcp-elicit keygen` for one" if blank == KEYS_ENV_VAR else "set it to a key file's path"
    return (
        f"{blank} is set but empty, so requestState uses an ephemeral key (lost on restart, unknown "
        f"to other instances): {fix}"
    )


F = TypeVar("F", bound=Handler)
E = TypeVar("E")


class Server:
    """An MCP server whose handlers can ``await ctx.elicit(...)`` anywhere.

    State between rounds is sealed (AES-256-GCM) into ``requestState``. Give every instance of a
    deployment the same ``state_keys`` (or ``MCP_ELICIT_STATE_KEYS``); without keys a
    process-local key is generated and a warning says so. ``state_keys=KeyFile(path)`` (or
    ``MCP_ELICIT_STATE_KEYS_FILE``) re-reads a key file while running, for rotation.

    ``single_use``: a store that makes each ``requestState`` usable once. With
    ``single_use_redelivery=True`` a re-issue of the very same request (same state, same
    ``inputResponses``; after a broken connection or a crashed instance) gets the answer committed
    for it instead of a refusal, and any other use of the token is still refused.
    ``max_message_bytes``: the largest request accepted (bytes of one JSON-RPC message; HTTP
    413 / stdio -32600 beyond it), 4 MiB by default.
    ``connect``: a :class:`~mcp_elicit.connect.kit.ConnectKit` (identity, vault, pending flows,
    pages) for ``ctx.connection(...)`` and ``ctx.secret(...)``; :meth:`asgi` and
    :meth:`run_http` then serve its pages and metadata next to ``/mcp`` and require a valid
    access token on ``/mcp``.

    Clients of both protocol eras are served by the same handlers: 2026-07-28 requests
    statelessly, 2025-11-25 (and 2025-06-18) clients in the session their ``initialize`` opens,
    where each question is a real request to the client (:mod:`mcp_elicit.server.legacy`).
    ``legacy_url_mode``: ``"request"`` asks URL questions as ``elicitation/create`` requests
    (the call goes on by itself when the browser step is done); ``"error"`` ends the call with
    ``-32042`` naming the URLs instead, for the client to retry (the retries go past the URLs it
    named: docs/protocol.md). ``legacy_leg_timeout``: seconds a 2025 client may take to answer
    one question (10 minutes by default: a person answers); ``legacy_max_rounds``: rounds of
    questions one such call may send. Over HTTP such a client has a session:
    ``legacy_max_sessions`` in all, ``legacy_max_sessions_per_user`` per principal, each ended
    after ``legacy_idle_timeout`` seconds without use (see
    :mod:`mcp_elicit.transport.http_sessions`). A session lives in the instance that opened it:
    with several instances, give ``session_router=PostgresSessionRouter(dsn)``
    (:mod:`mcp_elicit.storage.session_router`) and any instance takes any message of any session,
    handing it to the instance that holds the session (this needs the same ``state_keys`` on
    every instance); without it, run one instance, or route on ``Mcp-Session-Id``.

    ``debug``: for development only. A handler's unexpected exception is then reported to the
    client with its type, message and line (``Tool 'x' failed: NameError: ...``) instead of
    the generic "failed with an unexpected error" (the traceback goes to the log either way).
    ``None`` (the default) reads ``MCP_ELICIT_DEBUG`` (``1``/``true``/``yes``/``on`` or
    ``0``/``false``/``no``/``off``); never turn it on where clients are not the developer:
    exception messages can hold paths, data and secrets.
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        state_keys: KeyRing | KeyFile | Sequence[str | bytes] | None = None,
        state_ttl: float = 600.0,
        audience: str | None = None,
        single_use: SingleUseStore | None = None,
        single_use_redelivery: bool = False,
        max_answer_attempts: int = 3,
        replay_grace: float = 2.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        cache_ttl_ms: int = 3_600_000,
        connect: Extension | None = None,
        legacy_url_mode: Literal["request", "error"] = "request",
        legacy_leg_timeout: float = 600.0,
        legacy_max_rounds: int = 50,
        legacy_max_sessions: int = 10_000,
        legacy_max_sessions_per_user: int = 100,
        legacy_idle_timeout: float = 1800.0,
        session_router: SessionBus | None = None,
        debug: bool | None = None,
    ) -> None:
        self._debug = _debug_setting(debug)
        self.name = options.text("name", name)
        self.version = options.text("version", version)
        self.title = options.optional_text("title", title)
        self.instructions = options.optional_text("instructions", instructions)
        self.audience = options.optional_text("audience", audience) or f"mcp-elicit:{name}"
        self.max_answer_attempts = options.whole_number("max_answer_attempts", max_answer_attempts, minimum=1)
        self.replay_grace = options.seconds("replay_grace", replay_grace)
        self.max_message_bytes = options.whole_number("max_message_bytes", max_message_bytes, minimum=1024)
        self.cache_ttl_ms = options.whole_number("cache_ttl_ms", cache_ttl_ms, minimum=0)
        if legacy_url_mode not in ("request", "error"):
            raise ValueError(f"legacy_url_mode must be 'request' or 'error', not {legacy_url_mode!r}")
        self.legacy_url_mode = legacy_url_mode
        self.legacy_leg_timeout = options.seconds("legacy_leg_timeout", legacy_leg_timeout, positive=True)
        self.legacy_max_rounds = options.whole_number("legacy_max_rounds", legacy_max_rounds, minimum=1)
        self.legacy_max_sessions = options.whole_number("legacy_max_sessions", legacy_max_sessions, minimum=1)
        self.legacy_max_sessions_per_user = options.whole_number(
            "legacy_max_sessions_per_user", legacy_max_sessions_per_user, minimum=1
        )
        self.legacy_idle_timeout = options.seconds("legacy_idle_timeout", legacy_idle_timeout, positive=True)
        if single_use is not None and not isinstance(single_use, SingleUseStore):
            raise TypeError(
                "single_use must be a single-use store (SQLiteSingleUseStore or PostgresSingleUseStore), "
                f"not {type(single_use).__name__}"
            )
        if session_router is not None:
            _check_router(session_router, state_keys)
        self.session_router = session_router
        sealer, self._key_warning = _make_sealer(
            state_keys, audience=self.audience, ttl=state_ttl, single_use=single_use
        )
        if single_use_redelivery and not isinstance(single_use, RedeliveryStore):
            raise ValueError(
                "single_use_redelivery needs a single_use store that supports it "
                "(SQLiteSingleUseStore or PostgresSingleUseStore)"
            )
        self.engine = Engine(
            sealer,
            redelivery=single_use_redelivery,
            max_answer_attempts=self.max_answer_attempts,
            replay_grace=self.replay_grace,
            extension=connect,
        )
        self._tools: dict[str, Tool] = {}
        # Tools with arguments mirrored in Mcp-Param-* headers (x-mcp-header): the HTTP
        # transport checks those headers against the body.
        self.param_headers: dict[str, HeaderMap] = {}
        self._prompts: dict[str, Prompt] = {}
        self._resources: list[Resource] = []
        self._result_meta = server_info_meta(name, version, title)
        self.connect = connect
        # What the 2025-11-25 sessions of this server (every transport's) watch.
        self.subscriptions = Subscriptions()

    @property
    def debug(self) -> bool:
        """Whether handler failures name their exception to the client (``debug=``); fixed when
        the server is made, as every handler registered is told."""
        return self._debug

    @property
    def sealer(self) -> StateSealer:
        """What seals and opens this server's ``requestState``."""
        return self.engine.sealer

    # -- registration ----------------------------------------------------------------------
    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: dict[str, Any] | None = None,
    ) -> Callable[[F], F]:
        """Register an async function as a tool; its signature becomes the ``inputSchema``."""
        _called("tool", name)

        def register(fn: F) -> F:
            tool_name = name or fn.__name__
            if tool_name in self._tools:
                raise ValueError(f"a tool named {tool_name!r} is already registered")
            tool = Tool(
                tool_name,
                fn,
                analyse(fn, Context),
                title,
                description or first_paragraph(fn),
                annotations,
                debug=self._debug,
            )
            try:
                mapping = header_map(tool.signature.input_schema)
            except InvalidHeaderAnnotation as exc:
                # Clients must drop such a tool: refuse it here, where the author can fix it.
                raise ValueError(f"tool {tool_name!r}: {exc}") from None
            self._tools[tool_name] = tool
            if mapping:
                self.param_headers[tool_name] = mapping
            return fn

        return register

    def prompt(
        self, name: str | None = None, *, title: str | None = None, description: str | None = None
    ) -> Callable[[F], F]:
        """Register an async function as a prompt; its (string) parameters are the arguments."""
        _called("prompt", name)

        def register(fn: F) -> F:
            prompt_name = name or fn.__name__
            if prompt_name in self._prompts:
                raise ValueError(f"a prompt named {prompt_name!r} is already registered")
            self._prompts[prompt_name] = Prompt(
                prompt_name,
                fn,
                analyse(fn, Context, as_text=True),
                title,
                description or first_paragraph(fn),
                debug=self._debug,
            )
            return fn

        return register

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        ttl_ms: int = 0,
        cache_scope: Literal["public", "private"] = "private",
    ) -> Callable[[F], F]:
        """Register a resource; ``{field}`` parts of ``uri`` make it a template whose fields
        are passed to the handler."""
        if not isinstance(uri, str):
            raise TypeError("@app.resource needs the resource's URI: @app.resource('notes://{id}')")

        def register(fn: F) -> F:
            if any(resource.uri == uri for resource in self._resources):
                raise ValueError(f"a resource {uri!r} is already registered")
            self._resources.append(
                Resource.create(
                    uri,
                    name or fn.__name__,
                    fn,
                    analyse(fn, Context, as_text=True),
                    title=title,
                    description=description or first_paragraph(fn),
                    mime_type=mime_type,
                    ttl_ms=ttl_ms,
                    cache_scope=cache_scope,
                    debug=self._debug,
                )
            )
            return fn

        return register

    def check(self) -> CheckResult:
        """The forms the handlers would be refused at their ``ctx.elicit`` calls, found without
        calling them: each handler's source is read and every form it names is built, with all
        its problems (file, line, handler, message). A list, empty when there are none, so a
        test suite can ``assert not app.check()``; ``mcp-elicit check`` runs it from the command
        line. What it cannot see is in :mod:`mcp_elicit.server.check`."""
        from mcp_elicit.server.check import check_entries  # ast and inspect: only when asked

        return check_entries([*self._tools.values(), *self._prompts.values(), *self._resources])

    # -- dispatch --------------------------------------------------------------------------
    def capabilities(self) -> dict[str, Any]:
        """The server capabilities ``server/discover`` advertises: ``logging``, and ``tools``,
        ``prompts`` and ``resources`` for each kind with at least one handler registered."""
        # Every handler can send log messages (ctx.log) to a request that asks for them.
        caps: dict[str, Any] = {"logging": {}}
        if self._tools:
            caps["tools"] = {}
        if self._prompts:
            caps["prompts"] = {}
        if self._resources:
            caps["resources"] = {}
        return caps

    def describe_tools(self) -> list[dict[str, Any]]:
        """What ``tools/list`` returns: name, description and ``inputSchema`` of each tool."""
        return [t.describe() for t in self._tools.values()]

    async def dispatch(
        self,
        request: Request,
        *,
        meta: RequestMeta | None = None,
        caller: Caller | None = None,
        notify: Notify | None = None,
    ) -> dict[str, Any]:
        """Handle one 2026-07-28 request and return its result (with ``resultType`` and
        ``_meta``), or raise :class:`McpError`.

        ``meta`` is the request's ``params._meta`` as the transport read it
        (:func:`~mcp_elicit.wire.meta.request_meta`, read here when not given).
        ``caller`` comes from a validated token, never from the request; every ``requestState``
        is bound to it.
        """
        method = request.method
        if meta is None:
            meta = request_meta(method, request.params)
        check_version(meta)
        if (found := self.call_for(request, meta, caller, notify)) is not None:
            outcome = await self.engine.run(*found)
            result = outcome.result if isinstance(outcome, Complete) else outcome.result()
        elif method == "server/discover":
            result = self._discover()
        elif (listed := self.listing(request)) is not None:
            result = self._cacheable(listed)
        else:
            raise method_not_found(method)
        # A copy: a prompt or resource handler may return its own dict (a constant, say), which
        # must stay as it was, its own _meta kept beside ours.
        result = {**result}
        result.setdefault("resultType", "complete")
        meta = result.get("_meta")
        result["_meta"] = {**meta, **self._result_meta} if isinstance(meta, dict) else self._result_meta
        return result

    def listing(self, request: Request) -> dict[str, Any] | None:
        """The result of ``tools/list``, ``prompts/list``, ``resources/list`` or
        ``resources/templates/list`` (every item in one page), or None for another method or a
        kind with nothing registered (the same for both protocol eras)."""
        method = request.method
        if method == "tools/list" and self._tools:
            listed: dict[str, Any] = {"tools": self.describe_tools()}
        elif method == "prompts/list" and self._prompts:
            listed = {"prompts": [p.describe() for p in self._prompts.values()]}
        elif method == "resources/list" and self._resources:
            listed = {"resources": [r.describe() for r in self._resources if not r.is_template]}
        elif method == "resources/templates/list" and self._resources:
            listed = {"resourceTemplates": [r.describe() for r in self._resources if r.is_template]}
        else:
            return None
        self._check_cursor(request)
        return listed

    def call_for(
        self,
        request: Request,
        meta: RequestMeta,
        caller: Caller | None = None,
        notify: Notify | None = None,
        close_stream: CloseStream | None = None,
    ) -> tuple[Entry, Call] | None:
        """The entry and the first :class:`Call` of a ``tools/call``, ``prompts/get`` or
        ``resources/read`` (its ``inputResponses`` and ``requestState`` as the request carries
        them), or None for another method or a kind with nothing registered; -32602 for an
        unknown name or URI or malformed params. ``close_stream`` ends the connection under the
        call's resumable stream, where it has one (``ctx.close_stream()``)."""
        method = request.method
        params = request.params
        entry: Entry
        if method == "tools/call" and self._tools:
            target, entry = self._named(request, self._tools, "tool")
            arguments = _arguments(request)
        elif method == "prompts/get" and self._prompts:
            target, entry = self._named(request, self._prompts, "prompt")
            arguments = _arguments(request)
        elif method == "resources/read" and self._resources:
            entry, arguments = self._resource(request)
            target = params["uri"]
        else:
            return None
        responses = mrtr.read_input_responses(params)
        state = params.get("requestState")
        return entry, Call(method, target, arguments, meta, caller, notify, responses, state, close_stream)

    async def respond(
        self,
        request: Request,
        *,
        meta: RequestMeta | None = None,
        caller: Caller | None = None,
        notify: Notify | None = None,
    ) -> tuple[McpError | None, bytes]:
        """:meth:`dispatch` ``request`` and encode the JSON-RPC response (:func:`encoded`): what
        every 2026-07-28 transport sends back."""
        return await encoded(request, self.dispatch(request, meta=meta, caller=caller, notify=notify))

    async def run_call(self, entry: Entry, call: Call) -> Outcome:
        """One round of a call, whatever brought it (the 2026-07-28 transports through
        :meth:`dispatch`, the 2025-11-25 bridge directly)."""
        return await self.engine.run(entry, call)

    async def resource_updated(self, uri: str) -> int:
        """Tell the 2025-11-25 clients that watch ``uri`` that the resource changed
        (``notifications/resources/updated``; 2026-07-28 has no such notification); the number
        of sessions told. Call it after the change is made (a client that hears of it reads the
        resource at once)::

            @app.tool()
            async def rename(ctx: Context, title: str) -> str:
                notes.title = title
                await app.resource_updated("notes://current")
                return "renamed"
        """
        return await self.subscriptions.updated(uri)

    def _cacheable(self, result: dict[str, Any]) -> dict[str, Any]:
        """Discovery and list results are the same for every caller until the server restarts."""
        result["ttlMs"] = self.cache_ttl_ms
        result["cacheScope"] = "public"
        return result

    def _discover(self) -> dict[str, Any]:
        result = self._cacheable(
            {"supportedVersions": list(SUPPORTED_VERSIONS), "capabilities": self.capabilities()}
        )
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    @staticmethod
    def _check_cursor(request: Request) -> None:
        if request.params.get("cursor") is not None:
            raise invalid_params("unknown cursor: this server returns every item in one page")

    @staticmethod
    def _named(request: Request, registry: Mapping[str, E], kind: str) -> tuple[str, E]:
        name = request.params.get("name")
        if not isinstance(name, str):
            raise invalid_params(f"{request.method} needs params.name (a string)")
        entry = registry.get(name)
        if entry is None:
            raise invalid_params(f"Unknown {kind}: {name!r}")
        return name, entry

    def _resource(self, request: Request) -> tuple[Resource, dict[str, Any]]:
        uri = request.params.get("uri")
        if not isinstance(uri, str):
            raise invalid_params("resources/read needs params.uri (a string)")
        for resource in self._resources:
            fields = resource.match(uri)
            if fields is not None:
                return resource, fields
        raise invalid_params(f"Resource not found: {uri!r}", {"uri": uri})  # SEP-2164: data.uri

    # -- running ---------------------------------------------------------------------------
    def warn_if_key_is_ephemeral(self) -> None:
        """Log, once, that ``requestState`` is sealed with a key that dies with the process,
        when no key is configured. The HTTP transport calls it: served over HTTP, a state may
        come back to another instance or after a restart. Over stdio (and in process) the one
        process that sealed a state is the one its client sends it back to, so nothing is said
        there."""
        if self._key_warning is not None:
            # On the logger KeyRing.ephemeral() warns on (filters set for it keep working), in
            # one line: its own warning is a paragraph.
            logging.getLogger("mcp_elicit.state").warning(self._key_warning)
            self._key_warning = None

    def asgi(
        self,
        *,
        path: str = "/mcp",
        allowed_origins: Sequence[str] | None = None,
        authenticate: Authenticate | None = None,
        body_timeout: float = 30.0,
    ) -> ASGIApp:
        """The Streamable HTTP transport as an ASGI app (serve it with uvicorn or any ASGI server).

        With ``Server(connect=kit)`` this is the whole site of the kit (see
        :meth:`ConnectKit.asgi <mcp_elicit.connect.kit.ConnectKit.asgi>`): ``/mcp`` behind the
        kit's identity, the protected-resource metadata and the connect pages; ``path`` must then
        be the kit's ``mcp_path`` and ``authenticate`` is the kit's."""
        if self.connect is not None:
            if authenticate is not None:
                raise ValueError(
                    "this server has a ConnectKit, which authenticates /mcp with its identity: "
                    "do not pass authenticate= as well"
                )
            return self.connect.asgi(
                self, path=path, allowed_origins=allowed_origins, body_timeout=body_timeout
            )
        from mcp_elicit.transport.http_app import HttpApp

        return HttpApp(
            self,
            path=path,
            allowed_origins=allowed_origins,
            authenticate=authenticate,
            body_timeout=body_timeout,
        )

    def run_stdio(self) -> None:
        """Serve on stdin/stdout until stdin closes.

        A server with a ConnectKit is served, with one warning: the kit needs HTTP (over stdio
        no request carries an access token, so ``ctx.connection`` and ``ctx.secret`` refuse)."""
        if self.connect is not None:
            _connect_over_stdio(self.connect)
        from mcp_elicit.transport.stdio_server import run_stdio

        run_stdio(self)

    def run_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        path: str = "/mcp",
        allowed_origins: Sequence[str] | None = None,
        authenticate: Authenticate | None = None,
        body_timeout: float = 30.0,
        quiet: bool = False,
        **uvicorn_options: Any,
    ) -> None:
        """Serve Streamable HTTP with uvicorn (one worker) at ``http://host:port/path`` (and,
        with a ConnectKit, its pages and metadata: everything :meth:`asgi` serves).

        ``path``, ``allowed_origins``, ``authenticate`` and ``body_timeout`` are :meth:`asgi`'s.
        ``head_timeout=`` (seconds, default 10) closes connections that do not finish a request
        head in time; ``timeout_graceful_shutdown=`` (seconds, default 5) is how long requests
        in flight get after SIGTERM or Ctrl-C before they are answered 503; other keyword
        arguments go to ``uvicorn.Config``.

        ``port=0`` listens on a free port the system picks. Once listening it prints one short
        block on stderr: the URL it serves (with the port it listens on) and the tools it offers
        (``quiet=True``: nothing). A port it cannot listen on ends the process with one line that
        says why (``port 8000 on 127.0.0.1: address already in use: ...``), status 1."""
        from mcp_elicit.transport.uvicorn_runner import serve

        require("http", part="Server.run_http()")  # before the app is built: it warns of its key
        if self.connect is not None and not ({"uds", "fd"} & uvicorn_options.keys()):
            self.connect.serving_over_http(host, port, tls=bool(uvicorn_options.get("ssl_certfile")))
        app = self.asgi(
            path=path, allowed_origins=allowed_origins, authenticate=authenticate, body_timeout=body_timeout
        )
        # The path the MCP endpoint is really served at: with a ConnectKit it is under the kit's
        # base_url path (base_url http://host/app: /app/mcp), not the `path` given here.
        served = getattr(app, "path", path)
        started = None if quiet else functools.partial(self._started_message, host, served, uvicorn_options)
        serve(app, host=host, port=port, started_message=started, **uvicorn_options)

    def _started_message(self, host: str, path: str, uvicorn_options: Mapping[str, Any], port: int) -> str:
        """What :meth:`run_http` prints once listening on ``port``: where, and what is served there."""
        if uvicorn_options.get("uds"):
            where = f"the Unix socket {uvicorn_options['uds']}, path {path}"
        else:
            scheme = "https" if uvicorn_options.get("ssl_certfile") else "http"
            shown = f"[{host}]" if ":" in host else host  # an IPv6 address
            where = f"{scheme}://{shown}:{port}{path}"
        lines = [f"{self.name} {self.version}: MCP over Streamable HTTP at {where}"]
        for kind, names in (
            ("tools", list(self._tools)),
            ("prompts", list(self._prompts)),
            ("resources", [r.uri for r in self._resources]),
        ):
            if names or kind == "tools":
                lines.append(f"  {kind}: {_listed(names)}")
        if self._debug:
            lines.append("  debug: on: failures show their exception to the client (for development only)")
        return "\n".join(lines)

    def run(self, transport: str = "stdio", **options: Any) -> None:
        """``run()`` serves stdio; ``run("http", port=...)`` serves Streamable HTTP."""
        if transport == "stdio":
            if options:
                raise TypeError(
                    f"run() serves stdio, which takes no {', '.join(sorted(options))}: "
                    "for HTTP write run('http', ...) or run_http(...)"
                )
            self.run_stdio()
        elif transport == "http":
            self.run_http(**options)
        else:
            raise ValueError(f"unknown transport {transport!r}; use 'stdio' or 'http'")


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})


def _debug_setting(debug: bool | None) -> bool:
    """``debug=`` as given, else :data:`DEBUG_ENV_VAR`; a value that is neither on nor off fails
    here (a typo must not leave a production server in debug, nor a developer without it)."""
    if debug is not None:
        if not isinstance(debug, bool):
            raise ValueError(f"debug must be True, False or None (read {DEBUG_ENV_VAR}), not {debug!r}")
        return debug
    value = os.environ.get(DEBUG_ENV_VAR, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{DEBUG_ENV_VAR} must be 1 or 0 (true/false, yes/no, on/off), not {value!r}")


CONNECT_OVER_STDIO_WARNING = (
    "this server has a ConnectKit, and the URL-mode kit needs HTTP (app.run_http() or app.asgi()): "
    "over stdio no request has an identity (no access token, no pages), so ctx.connection and "
    "ctx.secret refuse every call"
)


def _connect_over_stdio(extension: Extension) -> None:
    """Warn, once, that the kit cannot work over stdio; and tell the kit, so that its refusals
    name the transport as the reason (rather than a missing identity configuration)."""
    logger.warning(CONNECT_OVER_STDIO_WARNING)
    extension.serving_over_stdio()


def _listed(names: Sequence[str], limit: int = 8) -> str:
    """Names for the start-up message: the first ``limit``, then how many more."""
    if not names:
        return "(none)"
    shown = ", ".join(names[:limit])
    return f"{shown}, and {len(names) - limit} more" if len(names) > limit else shown


def _called(decorator: str, name: object) -> None:
    """``@app.tool`` without parentheses hands the function over as ``name``: say how to write it
    (registering nothing, silently, is what happened before)."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"write @app.{decorator}() with parentheses (or @app.{decorator}('name'))")


def _check_router(router: object, keys: object) -> None:
    """A ``session_router`` is one (not a DSN, say), and the instances it joins share keys: the
    letters they relay are sealed with them."""
    if not (callable(getattr(router, "post", None)) and callable(getattr(router, "open_mailbox", None))):
        raise TypeError(
            "session_router must be a session router such as PostgresSessionRouter(dsn) "
            f"(from mcp_elicit.storage), not {type(router).__name__}"
        )
    if keys is None and not (
        os.environ.get(KEY_FILE_ENV_VAR, "").strip() or os.environ.get(KEYS_ENV_VAR, "").strip()
    ):
        raise ValueError(
            "session_router hands messages between instances sealed with the state keys: give every "
            f"instance the same state_keys (or {KEYS_ENV_VAR}; `mcp-elicit keygen` makes one)"
        )


def _make_sealer(
    keys: KeyRing | KeyFile | Sequence[str | bytes] | None,
    *,
    audience: str,
    ttl: float,
    single_use: SingleUseStore | None,
) -> tuple[StateSealer, str | None]:
    """Built when the server is: a bad key configuration fails at start-up, not mid-flow.

    Keys: the ``state_keys`` given (a ring, a :class:`KeyFile`, or secrets), else the file named
    by ``MCP_ELICIT_STATE_KEYS_FILE``, else ``MCP_ELICIT_STATE_KEYS``, else an ephemeral key;
    then also the one line of warning, saying how to set one, that serving over HTTP gives
    (:meth:`Server.warn_if_key_is_ephemeral`)."""
    warning = None
    source: KeyRing | KeyFile
    if isinstance(keys, KeyRing | KeyFile):
        source = keys
    elif keys is None and os.environ.get(KEY_FILE_ENV_VAR, "").strip():
        if os.environ.get(KEYS_ENV_VAR, "").strip():
            raise ValueError(f"both {KEYS_ENV_VAR} and {KEY_FILE_ENV_VAR} are set: keep one of the two")
        key_file = KeyFile.from_env()
        assert key_file is not None
        source = key_file
    elif keys is not None:
        source = KeyRing.from_config(keys)
    else:
        ring = KeyRing.from_env()
        if ring is None:
            warning = _ephemeral_key_warning()
            ring = KeyRing.from_secrets([KeyRing.generate_secret()])
        source = ring
    return StateSealer(source, audience=audience, ttl=ttl, single_use=single_use), warning


def _arguments(request: Request) -> dict[str, Any]:
    arguments = request.params.get("arguments")
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise invalid_params("params.arguments must be an object")
    return arguments


async def encoded(request: Request, work: Awaitable[dict[str, Any]]) -> tuple[McpError | None, bytes]:
    """The JSON-RPC response to ``request`` once ``work`` (its handling) is done: the error (if
    any) and the bytes. Whatever goes wrong is answered with a JSON-RPC error, never a
    traceback on the wire: an :class:`McpError` as it is, a result or error with no JSON form,
    an unexpected exception, a handler calling ``sys.exit()`` or raising another library's
    BaseException as -32603 (the details go to the server log)."""
    try:
        result = await work
        return None, encode_result(request.id, result)
    except McpError as exc:
        try:
            return exc, encode_error(request.id, exc)
        except TypeError:
            # A handler raised McpError with data (or a message) that is not JSON: a server bug.
            logger.exception("could not encode the error %r raised by %s", exc, request.method)
            error = internal_error("the handler raised an error that cannot be sent as JSON")
            return error, encode_error(request.id, error)
    except TypeError:
        # A handler returned something that is not JSON (orjson refuses it): a server bug.
        where = _target(request)
        logger.exception("could not encode the result of %s", where)
        error = internal_error(f"the handler of {where} returned a value that cannot be sent as JSON")
        return error, encode_error(request.id, error)
    except Exception:
        logger.exception("unexpected failure handling %s", request.method)
        error = internal_error()
        return error, encode_error(request.id, error)
    except (KeyboardInterrupt, GeneratorExit, asyncio.CancelledError):
        # Ctrl-C stops the server; the others end this coroutine itself (a GeneratorExit caught
        # here would make close() fail): none is the handler's to swallow.
        raise
    except BaseException:
        # sys.exit() in a handler (argparse inside a tool, say), or a library's own BaseException
        # (pytest's Failed, say), fails this request only: the server and the other
        # requests in flight go on.
        logger.exception("a handler of %s raised a BaseException; the server keeps running", request.method)
        error = internal_error()
        return error, encode_error(request.id, error)


def _target(request: Request) -> str:
    """``tools/call 'name'``: the request's method and what it names, for messages about it."""
    name = request.params.get("uri" if request.method == "resources/read" else "name")
    return f"{request.method} {name!r}" if isinstance(name, str) else request.method
