"""``Server``: register tools, prompts and resources; dispatch one request at a time.

``dispatch`` is the whole server side of the protocol for one request; transports call it and
only move bytes. It checks ``_meta`` and the protocol version, routes the method, runs a
handler round through the replay engine, and seals or unseals the flow state.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcp_elicit.schema import SchemaError
from mcp_elicit.server import options
from mcp_elicit.server.context import Context, Notify, vet_elicitation
from mcp_elicit.server.errors import HandlerDefect, ToolError, TooManyInvalidAnswers
from mcp_elicit.server.flow import MAX_ANSWER_NESTING, FlowRecord, MalformedFlow, Round, nested_deeper_than
from mcp_elicit.server.lowlevel import InputRequired
from mcp_elicit.server.registry import Handler, Prompt, Resource, Tool, first_paragraph
from mcp_elicit.server.replay import Completed, run_round
from mcp_elicit.server.results import prompt_result, resource_result, tool_error, tool_result
from mcp_elicit.server.signature import ArgumentError, analyse
from mcp_elicit.state import (
    INVALID_STATE_MESSAGE,
    KeyRing,
    RequestBinding,
    SingleUseStore,
    StateRejected,
    StateSealer,
    StateStoreUnavailable,
    StateTooLarge,
    args_digest,
)
from mcp_elicit.state.binding import MAX_NESTING, bound_principal, request_digest
from mcp_elicit.state.key_file import ENV_FILE_VAR as KEY_FILE_ENV_VAR
from mcp_elicit.state.key_file import KeyFile
from mcp_elicit.state.keys import ENV_VAR as KEYS_ENV_VAR
from mcp_elicit.state.seal import Claimed
from mcp_elicit.state.single_use import RedeliveryStore
from mcp_elicit.wire import codec, mrtr
from mcp_elicit.wire.capabilities import (
    ClientCapabilities,
    merge_required,
    required_for_elicitation,
    required_for_sampling,
    sampling_needs,
)
from mcp_elicit.wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    McpError,
    internal_error,
    invalid_params,
    method_not_found,
    missing_capability,
)
from mcp_elicit.wire.jsonrpc import DEFAULT_MAX_MESSAGE_BYTES, Request
from mcp_elicit.wire.meta import (
    RequestMeta,
    check_version,
    initialize_refused,
    parse_request_meta,
    server_info_meta,
)
from mcp_elicit.wire.param_headers import HeaderMap, InvalidHeaderAnnotation, header_map
from mcp_elicit.wire.versions import SUPPORTED_VERSIONS

if TYPE_CHECKING:
    from mcp_elicit.connect.kit import ConnectApp, ConnectKit
    from mcp_elicit.transport.http_server import Authenticate, HttpApp

logger = logging.getLogger("mcp_elicit.server")

F = TypeVar("F", bound=Handler)
E = TypeVar("E")


@dataclass(slots=True)  # not frozen: that __init__ costs twice as much, on every request
class _Call:
    """One request on its way through the server (never modified)."""

    request: Request
    meta: RequestMeta
    principal: str | None
    notify: Notify | None
    client: str | None  # the OAuth client the principal's token was issued to


INVALID_STATE_DATA = {"reason": "invalid_request_state"}


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
        connect: ConnectKit | None = None,
    ) -> None:
        self.name = options.text("name", name)
        self.version = options.text("version", version)
        self.title = options.optional_text("title", title)
        self.instructions = options.optional_text("instructions", instructions)
        self.audience = options.optional_text("audience", audience) or f"mcp-elicit:{name}"
        self.max_answer_attempts = options.whole_number("max_answer_attempts", max_answer_attempts, minimum=1)
        self.replay_grace = options.seconds("replay_grace", replay_grace)
        self.max_message_bytes = options.whole_number("max_message_bytes", max_message_bytes, minimum=1024)
        self.cache_ttl_ms = options.whole_number("cache_ttl_ms", cache_ttl_ms, minimum=0)
        if single_use is not None and not isinstance(single_use, SingleUseStore):
            raise TypeError(
                "single_use must be a single-use store (SQLiteSingleUseStore or PostgresSingleUseStore), "
                f"not {type(single_use).__name__}"
            )
        self.sealer = _make_sealer(state_keys, audience=self.audience, ttl=state_ttl, single_use=single_use)
        if single_use_redelivery and not isinstance(single_use, RedeliveryStore):
            raise ValueError(
                "single_use_redelivery needs a single_use store that supports it "
                "(SQLiteSingleUseStore or PostgresSingleUseStore)"
            )
        self.single_use_redelivery = single_use_redelivery
        self._tools: dict[str, Tool] = {}
        # Tools with arguments mirrored in Mcp-Param-* headers (x-mcp-header): the HTTP
        # transport checks those headers against the body.
        self.param_headers: dict[str, HeaderMap] = {}
        self._prompts: dict[str, Prompt] = {}
        self._resources: list[Resource] = []
        self._result_meta = server_info_meta(name, version, title)
        self.connect = connect

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
                prompt_name, fn, analyse(fn, Context, as_text=True), title, description or first_paragraph(fn)
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
                )
            )
            return fn

        return register

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
        principal: str | None = None,
        notify: Notify | None = None,
        client: str | None = None,
    ) -> dict[str, Any]:
        """Handle one request and return its result (with ``resultType`` and ``_meta``), or
        raise :class:`McpError`.

        ``principal`` (the user) and ``client`` (the OAuth client the token was issued to) come
        from a validated token, never from the request; ``requestState`` is bound to both.
        """
        if meta is None:
            if request.method == "initialize":
                raise initialize_refused(request.params)
            meta = parse_request_meta(request.params)
        if meta.protocol_version not in SUPPORTED_VERSIONS:  # check_version(meta), inlined
            check_version(meta)
        method = request.method
        if method == "tools/call" and self._tools:
            result = await self._call_tool(_Call(request, meta, principal, notify, client))
        elif method == "server/discover":
            result = self._discover()
        elif method == "tools/list" and self._tools:
            self._check_cursor(request)
            result = self._cacheable({"tools": self.describe_tools()})
        elif method == "prompts/list" and self._prompts:
            self._check_cursor(request)
            result = self._cacheable({"prompts": [p.describe() for p in self._prompts.values()]})
        elif method == "prompts/get" and self._prompts:
            result = await self._get_prompt(_Call(request, meta, principal, notify, client))
        elif method == "resources/list" and self._resources:
            self._check_cursor(request)
            result = self._cacheable(
                {"resources": [r.describe() for r in self._resources if not r.is_template]}
            )
        elif method == "resources/templates/list" and self._resources:
            self._check_cursor(request)
            result = self._cacheable(
                {"resourceTemplates": [r.describe() for r in self._resources if r.is_template]}
            )
        elif method == "resources/read" and self._resources:
            result = await self._read_resource(_Call(request, meta, principal, notify, client))
        elif method == "initialize":
            raise initialize_refused(request.params)
        else:
            raise method_not_found(method)
        result.setdefault("resultType", "complete")
        result["_meta"] = self._result_meta
        return result

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

    async def _call_tool(self, call: _Call) -> dict[str, Any]:
        name, tool = self._named(call.request, self._tools, "tool")
        arguments = _arguments(call.request)
        try:
            kwargs = tool.signature.bind(arguments)
        except ArgumentError as exc:
            return tool_error(f"Invalid arguments for tool {name!r}: {exc}")
        try:
            outcome = await self._round(call, tool, name, arguments, kwargs)
        except ToolError as exc:
            return tool_error(str(exc))
        except (McpError, HandlerDefect):
            raise
        except Exception:
            logger.exception("tool %r failed", name)
            return tool_error(f"Tool {name!r} failed with an unexpected error; the server log has details")
        if isinstance(outcome, dict):
            return outcome
        return tool_result(outcome.value)

    async def _get_prompt(self, call: _Call) -> dict[str, Any]:
        name, prompt = self._named(call.request, self._prompts, "prompt")
        arguments = _arguments(call.request)
        try:
            kwargs = prompt.signature.bind(arguments)
        except ArgumentError as exc:
            raise invalid_params(f"arguments for prompt {name!r}: {exc}") from None
        outcome = await self._guarded_round(call, prompt, name, arguments, kwargs)
        if isinstance(outcome, dict):
            return outcome
        return prompt_result(outcome.value, prompt.description)

    async def _read_resource(self, call: _Call) -> dict[str, Any]:
        uri = call.request.params.get("uri")
        if not isinstance(uri, str):
            raise invalid_params("resources/read needs params.uri (a string)")
        for resource in self._resources:
            fields = resource.match(uri)
            if fields is not None:
                break
        else:
            raise invalid_params(f"Resource not found: {uri!r}", {"uri": uri})  # SEP-2164: data.uri
        try:
            kwargs = resource.signature.bind(fields)
        except ArgumentError as exc:
            raise invalid_params(f"resource {uri!r}: {exc}", {"uri": uri}) from None
        outcome = await self._guarded_round(call, resource, uri, fields, kwargs)
        if isinstance(outcome, dict):
            return outcome
        result = resource_result(uri, outcome.value, resource.mime_type)
        # A read that went through input rounds is about one user: never cache it for others.
        params = call.request.params
        interactive = "requestState" in params or "inputResponses" in params
        result.setdefault("ttlMs", 0 if interactive else resource.ttl_ms)
        result.setdefault("cacheScope", "private" if interactive else resource.cache_scope)
        return result

    async def _guarded_round(
        self,
        call: _Call,
        entry: Prompt | Resource,
        target: str,
        arguments: dict[str, Any],
        kwargs: dict[str, Any],
    ) -> Completed | dict[str, Any]:
        """A prompt or resource round: unexpected handler failures become -32603."""
        try:
            return await self._round(call, entry, target, arguments, kwargs)
        except (McpError, HandlerDefect):
            raise
        except TooManyInvalidAnswers as exc:
            # The client kept sending answers that fail validation: its request is at fault.
            raise invalid_params(str(exc)) from None
        except ToolError as exc:
            raise McpError(INTERNAL_ERROR, str(exc)) from None
        except Exception:
            logger.exception("handler for %s %r failed", call.request.method, target)
            raise internal_error() from None

    async def _round(
        self,
        call: _Call,
        entry: Tool | Prompt | Resource,
        target: str,
        arguments: dict[str, Any],
        kwargs: dict[str, Any],
    ) -> Completed | dict[str, Any]:
        """Run one round of a flow. Returns the handler's completion, or an
        ``InputRequiredResult`` dict when the handler is waiting for input.

        In redelivery mode (``single_use_redelivery``) a round that carries a ``requestState``
        returns its final result dict instead of a completion, because that dict is what gets
        committed to the single-use store and sent again to a re-issue of the same request."""
        request = call.request
        params = request.params
        responses = mrtr.read_input_responses(params)
        # Whatever it holds, the sealer judges it: a non-string gets the one fixed refusal too.
        token: object = params.get("requestState")
        claimed: Claimed | None = None
        binding: RequestBinding | None = None
        sent: bytes | None = None
        if token is None:
            record = FlowRecord()
            # A handler may change nested arguments in place: the state must be bound to those
            # the client sent. Kept as JSON (fast) and digested only if a state is sealed.
            for value in arguments.values():  # _has_nested, inlined: every first round runs it
                if type(value) is dict or type(value) is list:
                    sent = _snapshot(arguments)
                    if sent is None:  # not JSON orjson writes back (beyond 64 bits): digest now
                        binding = self._checked_binding(
                            request.method, target, arguments, bound_principal(call.principal, call.client)
                        )
                    break
        else:
            binding = self._checked_binding(
                request.method, target, arguments, bound_principal(call.principal, call.client)
            )
            if self.single_use_redelivery:
                claimed, record = await self._claim_state(token, binding, responses, request.method, target)
                if claimed.response is not None:
                    stored = _stored_result(claimed.response)
                    requests = stored.get("inputRequests")
                    if isinstance(requests, dict):
                        # Sent again to a re-issue of the request, which may declare less than
                        # the request that produced it (the questions were vetted then).
                        _gate(InputRequired(requests), call.meta.capabilities, vet=False)
                    return stored
            else:
                record = await self._open_state(token, binding, request.method, target)
        rnd = Round(record, responses, call.meta.capabilities)
        context_param = entry.signature.context_param
        if context_param is not None:
            kwargs[context_param] = Context(
                request.method,
                target,
                arguments,
                call.meta,
                call.principal,
                rnd,
                self.max_answer_attempts,
                call.notify,
                self.connect,
                call.client,
            )
        try:
            outcome = await run_round(entry.fn, kwargs, rnd, self.replay_grace)
        except (HandlerDefect, SchemaError) as exc:
            # A defect in the handler, not in the request: say so loudly, on both sides.
            logger.error("%s in %s %r: %s", type(exc).__name__, request.method, target, exc)
            raise McpError(INTERNAL_ERROR, f"Internal error: {exc}") from None
        if isinstance(outcome, Completed) and not isinstance(outcome.value, InputRequired):
            if claimed is None:
                return outcome
            return await self._commit(claimed, _final_result(entry, target, outcome.value), target)
        if isinstance(outcome, Completed):
            lowlevel: InputRequired = outcome.value
            _gate(lowlevel, call.meta.capabilities)
            requests = {key: mrtr.as_input_request(entry) for key, entry in lowlevel.input_requests.items()}
            payload = rnd.next_payload(lowlevel.state)
        else:
            requests = outcome.requests
            payload = rnd.next_payload(record.user_state)
        if binding is None:
            binding = self._checked_binding(
                request.method,
                target,
                arguments if sent is None else codec.loads(sent),
                bound_principal(call.principal, call.client),
            )
        try:
            state = self.sealer.seal(payload, binding)
        except TypeError:
            # Raw answers (sampling, roots) are kept in the state as sent; JSON nested too deeply
            # to be encoded again is the request's fault, not the handler's.
            if nested_deeper_than(responses, MAX_ANSWER_NESTING):
                raise invalid_params(
                    f"inputResponses must be JSON data nested at most {MAX_ANSWER_NESTING} levels deep"
                ) from None
            raise
        except StateTooLarge as exc:
            single_use = token is not None and self.sealer.single_use is not None
            raise _state_too_large(exc, payload, request.method, target, single_use) from None
        result = mrtr.input_required_result(requests, state)
        if claimed is None:
            return result
        return await self._commit(claimed, result, target)

    def _binding(
        self, method: str, target: str, arguments: dict[str, Any], principal: str | None
    ) -> RequestBinding:
        return RequestBinding(method, target, args_digest(arguments), principal)

    def _checked_binding(
        self, method: str, target: str, arguments: dict[str, Any], principal: str | None
    ) -> RequestBinding:
        """:meth:`_binding`, with arguments that cannot be digested (nested too deeply) refused
        as -32602 instead of failing inside the engine."""
        try:
            return self._binding(method, target, arguments, principal)
        except (TypeError, RecursionError):
            raise invalid_params(
                f"arguments must be JSON data nested at most {MAX_NESTING} levels deep"
            ) from None

    async def _open_state(
        self, token: object, binding: RequestBinding, method: str, target: str
    ) -> FlowRecord:
        try:
            unsealed = await self.sealer.open(token, binding)
            return FlowRecord.from_payload(unsealed.payload)
        except StateStoreUnavailable as exc:
            raise _store_unavailable(exc) from None
        except (StateRejected, MalformedFlow) as exc:
            raise _refused_state(exc, method, target) from None

    async def _claim_state(
        self,
        token: object,
        binding: RequestBinding,
        responses: dict[str, Any],
        method: str,
        target: str,
    ) -> tuple[Claimed, FlowRecord]:
        """Redelivery mode: claim the token for this exact request (see
        :mod:`mcp_elicit.state.single_use`). The record is empty when an answer is stored."""
        try:
            digest = request_digest(binding, responses)
        except (TypeError, RecursionError):
            raise invalid_params(
                f"inputResponses must be JSON data nested at most {MAX_NESTING} levels deep"
            ) from None
        try:
            claimed = await self.sealer.claim(token, binding, digest)
            if claimed.response is not None:
                logger.info("redelivering the committed answer on %s %r", method, target)
                return claimed, FlowRecord()
            return claimed, FlowRecord.from_payload(claimed.unsealed.payload)
        except StateStoreUnavailable as exc:
            raise _store_unavailable(exc) from None
        except (StateRejected, MalformedFlow) as exc:
            raise _refused_state(exc, method, target) from None

    async def _commit(self, claimed: Claimed, result: dict[str, Any], target: str) -> dict[str, Any]:
        """Redelivery mode: store this round's answer; return the one to send (the first
        committed for the token: ours, or that of a concurrent attempt that won)."""
        encoded = codec.dumps(result)
        try:
            stored = await self.sealer.commit(claimed, encoded)
        except StateStoreUnavailable as exc:
            raise _store_unavailable(exc) from None
        except StateRejected as exc:
            raise _refused_state(exc, "commit", target) from None
        return result if stored is encoded else _stored_result(stored)

    # -- running ---------------------------------------------------------------------------
    def asgi(
        self,
        *,
        path: str = "/mcp",
        allowed_origins: Sequence[str] | None = None,
        authenticate: Authenticate | None = None,
        body_timeout: float = 30.0,
    ) -> HttpApp | ConnectApp:
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
        from mcp_elicit.transport.http_server import HttpApp

        return HttpApp(
            self,
            path=path,
            allowed_origins=allowed_origins,
            authenticate=authenticate,
            body_timeout=body_timeout,
        )

    def run_stdio(self) -> None:
        """Serve on stdin/stdout until stdin closes."""
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
        **uvicorn_options: Any,
    ) -> None:
        """Serve Streamable HTTP with uvicorn (one worker) at ``http://host:port/path`` (and,
        with a ConnectKit, its pages and metadata: everything :meth:`asgi` serves).

        ``path``, ``allowed_origins``, ``authenticate`` and ``body_timeout`` are :meth:`asgi`'s.
        ``head_timeout=`` (seconds, default 10) closes connections that do not finish a request
        head in time; ``timeout_graceful_shutdown=`` (seconds, default 5) is how long requests
        in flight get after SIGTERM or Ctrl-C before they are answered 503; other keyword
        arguments go to ``uvicorn.Config``."""
        from mcp_elicit.transport.http_server import serve

        app = self.asgi(
            path=path, allowed_origins=allowed_origins, authenticate=authenticate, body_timeout=body_timeout
        )
        serve(app, host=host, port=port, **uvicorn_options)

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


def _called(decorator: str, name: object) -> None:
    """``@app.tool`` without parentheses hands the function over as ``name``: say how to write it
    (registering nothing, silently, is what happened before)."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"write @app.{decorator}() with parentheses (or @app.{decorator}('name'))")


def _make_sealer(
    keys: KeyRing | KeyFile | Sequence[str | bytes] | None,
    *,
    audience: str,
    ttl: float,
    single_use: SingleUseStore | None,
) -> StateSealer:
    """Built when the server is: a bad key configuration fails at start-up, not mid-flow.

    Keys: the ``state_keys`` given (a ring, a :class:`KeyFile`, or secrets), else the file named
    by ``MCP_ELICIT_STATE_KEYS_FILE``, else ``MCP_ELICIT_STATE_KEYS``, else an ephemeral key."""
    source: KeyRing | KeyFile
    if isinstance(keys, KeyRing | KeyFile):
        source = keys
    elif keys is None and os.environ.get(KEY_FILE_ENV_VAR, "").strip():
        if os.environ.get(KEYS_ENV_VAR, "").strip():
            raise ValueError(f"both {KEYS_ENV_VAR} and {KEY_FILE_ENV_VAR} are set: keep one of the two")
        key_file = KeyFile.from_env()
        assert key_file is not None
        source = key_file
    else:
        source = KeyRing.from_config(keys)
    return StateSealer(source, audience=audience, ttl=ttl, single_use=single_use)


STORE_UNAVAILABLE_DATA = {"reason": "state_store_unavailable", "retryable": True}


def _store_unavailable(exc: StateStoreUnavailable) -> McpError:
    """The single-use store could not answer: fail closed with an error worth retrying."""
    logger.warning("the single-use state store is unavailable: %s", exc)
    return McpError(
        INTERNAL_ERROR,
        "Internal error: the server's state store is unavailable; retry the request shortly",
        dict(STORE_UNAVAILABLE_DATA),
    )


def _refused_state(exc: StateRejected | MalformedFlow, method: str, target: str) -> McpError:
    reason = getattr(exc, "reason", str(exc))
    logger.info("refused requestState on %s %r: %s", method, target, reason)
    return McpError(INVALID_PARAMS, INVALID_STATE_MESSAGE, dict(INVALID_STATE_DATA))


def _final_result(entry: Tool | Prompt | Resource, target: str, value: Any) -> dict[str, Any]:
    """The result a completion becomes, built here (redelivery mode) so that exactly what is
    committed is what is sent. The same shapes as ``_call_tool``, ``_get_prompt`` and
    ``_read_resource`` build (a read with a ``requestState`` is never cacheable)."""
    if isinstance(entry, Tool):
        return tool_result(value)
    if isinstance(entry, Prompt):
        return prompt_result(value, entry.description)
    result = resource_result(target, value, entry.mime_type)
    result.setdefault("ttlMs", 0)
    result.setdefault("cacheScope", "private")
    return result


def _snapshot(arguments: dict[str, Any]) -> bytes | None:
    try:
        return codec.dumps(arguments)
    except TypeError:
        return None


def _state_too_large(
    exc: StateTooLarge, payload: dict[str, Any], method: str, target: str, single_use: bool
) -> McpError:
    """Blame whoever made the state too large: the client's answers (every answer so far is kept
    in it) when the state would fit without them, otherwise the handler's own state."""
    answers_bytes = len(codec.dumps(payload.get("a", {})))
    if exc.size - answers_bytes * 4 // 3 <= exc.limit:  # base64 makes 4 bytes of every 3
        # In single-use mode the state this request carried is used up: only a new call can go on.
        advice = "call again and answer with less text" if single_use else "answer with less text"
        return invalid_params(
            f"the answers are too large to carry to the next round (requestState would be {exc.size} "
            f"bytes; the server's limit is {exc.limit}): {advice}"
        )
    logger.error("%s %r keeps too much in requestState: %s", method, target, exc)
    return internal_error("the handler keeps more in requestState than the server allows")


def _stored_result(stored: bytes) -> dict[str, Any]:
    result = codec.loads(stored)
    if not isinstance(result, dict):  # only dicts are committed
        raise internal_error("the stored answer for this requestState is corrupt")
    return result


def _arguments(request: Request) -> dict[str, Any]:
    arguments = request.params.get("arguments")
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise invalid_params("params.arguments must be an object")
    return arguments


def _gate(lowlevel: InputRequired, caps: ClientCapabilities, *, vet: bool = True) -> None:
    """Refuse to send an input request this request's client capabilities do not declare, with
    one -32021 naming everything missing; and (``vet``) check the elicitations a low-level
    handler wrote the way ``ctx.elicit`` and ``ctx.elicit_url`` check theirs."""
    required: dict[str, Any] = {}
    missing: list[str] = []
    for key, entry in lowlevel.input_requests.items():
        method = entry.get("method") if isinstance(entry, dict) else None
        params = entry.get("params") if isinstance(entry, dict) else None
        if not isinstance(params, dict):
            params = {}
        if method == mrtr.ELICIT:
            mode = params.get("mode", "form")
            if mode not in ("form", "url"):
                raise internal_error(f"input request {key!r} has an unknown elicitation mode {mode!r}")
            if mode in caps.elicitation_modes():
                if vet:
                    vet_elicitation(key, mode, params, lowlevel.allow_secrets)
                continue
            need, what = required_for_elicitation(mode), f"{mode}-mode elicitation"
        elif method == mrtr.SAMPLE:
            tools, context = sampling_needs(params)
            if caps.can_sample(tools=tools, context=context):
                continue
            need = required_for_sampling(tools, context)
            what = "sampling" + (" with tools" if tools else "") + (" with context" if context else "")
        elif method == mrtr.LIST_ROOTS:
            if caps.can_list_roots():
                continue
            need, what = {"roots": {}}, "roots"
        else:
            raise internal_error(f"input request {key!r} has an unsupported method {method!r}")
        merge_required(required, need)
        if what not in missing:
            missing.append(what)
    if missing:
        raise missing_capability(
            required, f"This request needs {', '.join(missing)}, which its clientCapabilities do not declare"
        )
