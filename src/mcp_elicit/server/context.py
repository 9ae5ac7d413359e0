"""``Context``: what a handler uses to ask the person (and the client) for input.

Every ``await ctx.elicit(...)`` either returns the recorded answer (the question was answered in
an earlier round), or ends this round: the engine sends the question in an
``InputRequiredResult`` and replays the handler from the top when the client retries.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, overload

# The form machinery (schema compiler, validator, lint) loads at the first form, not at start-up:
# a stdio server answers its first requests sooner.
from mcp_elicit.schema.errors import AnswerInvalid, SchemaError
from mcp_elicit.server.answers import ElicitAnswer, Root, SampledMessage, elicit_answer
from mcp_elicit.server.errors import ToolError, TooManyInvalidAnswers
from mcp_elicit.server.flow import (
    MAX_ANSWER_NESTING,
    RUNNING_STEP,
    FreshAnswer,
    RecordedAnswer,
    Round,
    nested_deeper_than,
    question_digest,
)
from mcp_elicit.server.replay import RetryLater
from mcp_elicit.wire import codec, mrtr
from mcp_elicit.wire.capabilities import required_for_elicitation, required_for_sampling, sampling_needs
from mcp_elicit.wire.errors import McpError, internal_error, invalid_params
from mcp_elicit.wire.meta import RequestMeta

if TYPE_CHECKING:
    from mcp_elicit.connect.kit import ConnectKit
    from mcp_elicit.connect.vault import Connection
    from mcp_elicit.schema.spec import FormSpec

T = TypeVar("T")
A = TypeVar("A")

logger = logging.getLogger("mcp_elicit.server")

Notify = Callable[[str, dict[str, Any]], Awaitable[None]]

_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_EMPTY_FORM: dict[str, Any] = {"type": "object", "properties": {}}


def _summary(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


class Context:
    """Passed to any handler parameter annotated ``Context``."""

    # Positional or keyword: the engine passes them positionally, on every request (nine keyword
    # arguments cost about as much as the rest of building a Context).
    def __init__(
        self,
        method: str,
        target: str,
        arguments: Mapping[str, Any],
        meta: RequestMeta,
        principal: str | None,
        rnd: Round,
        max_answer_attempts: int,
        notify: Notify | None = None,
        connect: ConnectKit | None = None,
        client: str | None = None,
    ) -> None:
        self.method = method
        self.target = target
        self.arguments = arguments
        self.meta = meta
        self.principal = principal
        self._round = rnd
        self._max_attempts = max_answer_attempts
        self._notify = notify
        self._connect = connect
        # The OAuth client the principal's token was issued to (from a validated token, unlike
        # client_info); None without authentication or when the token names none.
        self.client = client

    # -- facts about this request ----------------------------------------------------------
    @property
    def flow_id(self) -> str:
        """Random id of this flow, the same on every round of it."""
        return self._round.record.flow_id

    @property
    def round(self) -> int:
        """0 on the first request of a flow, 1 on the first retry, and so on."""
        return self._round.record.round

    @property
    def client_info(self) -> Mapping[str, Any] | None:
        """Self-reported by the client: display it, never base a security decision on it."""
        return self.meta.client_info

    @property
    def input_responses(self) -> Mapping[str, Any]:
        """This round's raw ``inputResponses`` (for the low-level style)."""
        return self._round.responses

    @property
    def request_state(self) -> str | None:
        """The ``state`` your handler returned in ``InputRequired`` last round, unsealed."""
        return self._round.record.user_state

    def can_elicit(self, mode: str = "form") -> bool:
        """Whether this request's client takes elicitations in ``mode`` (``"form"`` or ``"url"``)."""
        return mode in self.meta.capabilities.modes

    def can_sample(self, *, tools: bool = False, context: bool = False) -> bool:
        """Whether this request's client takes sampling requests (offering the model ``tools``,
        asking it to include ``context``, when those are True)."""
        return self.meta.capabilities.can_sample(tools=tools, context=context)

    def can_list_roots(self) -> bool:
        """Whether this request's client takes ``roots/list`` requests (``ctx.list_roots``)."""
        return self.meta.capabilities.can_list_roots()

    # -- elicitation -----------------------------------------------------------------------
    @overload
    async def elicit(
        self, message: str, schema: type[T], *, key: str | None = ..., allow_secrets: Iterable[str] = ...
    ) -> ElicitAnswer[T]: ...

    @overload
    async def elicit(
        self,
        message: str,
        schema: Mapping[str, Any] | None = ...,
        *,
        key: str | None = ...,
        allow_secrets: Iterable[str] = ...,
    ) -> ElicitAnswer[dict[str, Any]]: ...

    async def elicit(
        self,
        message: str,
        schema: Any = None,
        *,
        key: str | None = None,
        allow_secrets: Iterable[str] = (),
    ) -> ElicitAnswer[Any]:
        """Ask the person to fill in a form.

        ``schema`` is a pydantic model, dataclass or TypedDict (the answer's ``data`` is an
        instance of it), a hand-written ``requestedSchema`` dict (``data`` is a dict), or None for
        a confirm-only question. Forms must not ask for secrets: use ``elicit_url`` for those.
        An accepted answer that fails validation is asked again with the reason added, up to
        the server's ``max_answer_attempts``.
        """
        if "form" not in self.meta.capabilities.modes:  # self.can_elicit("form"), inlined
            raise self._missing(
                required_for_elicitation("form"),
                "This request needs to ask the user for input (form elicitation), but its "
                "clientCapabilities do not declare elicitation.form",
            )
        spec = _form_spec(schema, allow_secrets)
        _warn_about_links(message, spec)
        digest = question_digest("form", [message, spec.digest])
        rnd = self._round
        wire_key = rnd.key_for("elicit", digest, key)
        found = rnd.lookup(wire_key, digest, lambda: _summary(message))
        if isinstance(found, RecordedAnswer):
            action, content = found.value
            if action != "accept" or content is None:
                return elicit_answer(action, content)
            content = _own_copy(content)
            return elicit_answer(action, content, spec.to_python(content))
        if isinstance(found, FreshAnswer):
            action, content = mrtr.check_elicit_result(wire_key, found.value)
            if action != "accept":
                rnd.record_answer(wire_key, digest, [action, None])
                return elicit_answer(action)
            try:
                cleaned = spec.validate(content if content is not None else {})
                content = _own_copy(cleaned)
                data = spec.to_python(content)
            except AnswerInvalid as exc:
                attempts = found.attempts + 1
                reasons = "; ".join(f"{name}: {why}" if name else why for name, why in exc.errors.items())
                if attempts >= self._max_attempts:
                    raise TooManyInvalidAnswers(
                        f"The answer to {_summary(message)} was invalid {attempts} times "
                        f"(last: {reasons}); giving up"
                    ) from None
                retry_message = (
                    f"{message}\n\nThe previous answer was not accepted: {reasons}. Please correct it."
                )
                rnd.ask(wire_key, digest, mrtr.elicit_form(retry_message, spec.schema), attempts)
                return await _wait_forever(rnd)
            rnd.record_answer(wire_key, digest, ["accept", cleaned])
            return elicit_answer("accept", content, data)
        rnd.ask(wire_key, digest, mrtr.elicit_form(message, spec.schema))
        return await _wait_forever(rnd)

    async def elicit_url(self, message: str, url: str, *, key: str | None = None) -> ElicitAnswer[None]:
        """Send the person to ``url`` (out of band: the client never sees what they enter there).

        ``accept`` only means the person agreed to open the URL, not that they finished: check
        your own record of the out-of-band step before relying on it.
        """
        if not self.can_elicit("url"):
            raise self._missing(
                required_for_elicitation("url"),
                "This request needs to send the user to a URL (URL-mode elicitation), but its "
                "clientCapabilities do not declare elicitation.url",
            )
        if not isinstance(message, str):
            raise TypeError(f"ctx.elicit_url: message must be a str, got {type(message).__name__}")
        _check_url(url)
        request = mrtr.elicit_url(message, url)
        return await self._ask("url", [message, url], request, key, lambda: _summary(message), _url_answer)

    # -- URL-mode kit: third-party accounts and secrets ------------------------------------
    async def connection(
        self, provider: str, *, scopes: Iterable[str] | None = None, reason: str | None = None
    ) -> Connection:
        """The signed-in user's connection to the OAuth ``provider`` (``.access_token``), fresh.

        Needs ``Server(connect=ConnectKit(...))`` and an authenticated request. When the user has
        not connected ``provider`` yet (or the provider revoked the grant), this sends them to
        the server's ``/connect/<id>`` page (URL-mode elicitation) and returns once they finished
        there, on a later round. ``reason`` completes "Connect your GitHub account to ..." in
        the message the user sees (e.g. ``"list your repositories"``).

        ``scopes``: what this call needs (default: the provider's). The provider is asked for
        these, its default scopes and any an existing connection holds; the new grant replaces,
        and revokes, the old one. If fewer are granted, the connection is stored as granted and
        this raises :class:`~mcp_elicit.connect.engine.ScopesNotGranted` (a ``ToolError`` naming
        the missing scopes): catch it to go on with less (``ctx.connection(provider)`` without
        ``scopes`` then returns the connection; ``.scopes`` says what it may do). The next call
        asking for them sends one new link. An earlier grant still awaiting revocation is revoked
        first; if that fails, the call ends with a tool error and no link.

        Never put the token in a tool result, an error or a log.
        """
        from mcp_elicit.connect.engine import obtain_connection

        return await obtain_connection(self, self._kit("ctx.connection"), provider, scopes, reason)

    async def secret(self, name: str, description: str, *, message: str | None = None) -> str:
        """The signed-in user's secret ``name`` (an API key...), entered on a secure page.

        When the vault has no such secret for the user, this sends them to the server's
        ``/secret/<id>`` page (URL-mode elicitation: the value never passes through the client)
        and returns the value once they entered it, on a later round. ``description`` says what
        the secret is (shown in the client and on the page); ``message`` replaces the default
        text of the request. Never put the value in a tool result, an error or a log.
        """
        from mcp_elicit.connect.engine import obtain_secret

        return await obtain_secret(self, self._kit("ctx.secret"), name, description, message)

    def _kit(self, what: str) -> ConnectKit:
        if self._connect is None:
            logger.error("%s needs Server(connect=ConnectKit(...)); this server has none", what)
            raise ToolError(
                f"This server is not set up to connect accounts or take secrets ({what} needs "
                "Server(connect=ConnectKit(...)))."
            )
        return self._connect

    def _step_recorded(self, name: str) -> tuple[bool, Any]:
        """The connect kit's step: whether ``ctx.once(name, ...)`` ran in an earlier round of this
        flow (or this run), and its recorded result; nothing is run."""
        return self._round.recorded_step(name)

    def _url_response(self, key: str, message: str, url: str) -> tuple[str, bool] | None:
        """The connect kit's step: the action the client answered to the URL question ``key``
        (``message``, ``url``) and whether the answer arrived in this round (it is recorded
        then), or ``None`` when it is unanswered. Counts as asking ``key`` in this run."""
        digest = question_digest("url", [message, url])
        rnd = self._round
        found = rnd.lookup(key, digest, lambda: _summary(message))
        if found is None:
            return None
        answer = _url_answer(key, found.value)
        fresh = isinstance(found, FreshAnswer)
        if fresh:
            rnd.record_answer(key, digest, found.value)
        return answer.action, fresh

    async def _send_url(self, key: str, message: str, url: str) -> NoReturn:
        """The connect kit's step: end the round with the URL question ``key``."""
        if not self.can_elicit("url"):
            raise self._missing(
                required_for_elicitation("url"),
                "This request needs to send the user to a URL (URL-mode elicitation), but its "
                "clientCapabilities do not declare elicitation.url",
            )
        _check_url(url)
        self._round.ask(key, question_digest("url", [message, url]), mrtr.elicit_url(message, url))
        await _wait_forever(self._round)

    # -- sampling and roots (deprecated in 2026-07-28, still part of it) ---------------------
    async def sample(
        self,
        messages: str | list[dict[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        key: str | None = None,
        **extra: Any,
    ) -> SampledMessage:
        """Ask the client's model for a completion.

        ``extra`` goes into the request as it is (``tools``, ``toolChoice``, ``includeContext``,
        ``temperature``...); offering tools needs the client's ``sampling.tools`` capability and
        an ``includeContext`` other than ``"none"`` its ``sampling.context``.
        """
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens, **extra}
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        tools, context = sampling_needs(params)
        if not self.can_sample(tools=tools, context=context):
            raise self._missing(required_for_sampling(tools, context), _sampling_missing(tools, context))
        return await self._ask("sample", params, mrtr.sample(params), key, "a sampling request", _sampled)

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """Ask the client for its roots (the folders it lets servers work in)."""
        if not self.can_list_roots():
            raise self._missing(
                {"roots": {}},
                "This request needs the client's roots, but its clientCapabilities do not declare roots",
            )
        return await self._ask("roots", None, mrtr.list_roots(), key, "a roots request", _roots)

    def _missing(self, required: dict[str, Any], detail: str) -> McpError:
        """The -32021 error for a capability this request lacks (it also names what other
        branches of this round lack)."""
        return self._round.missing_capability(required, detail)

    async def _ask(
        self,
        kind: str,
        content: Any,
        request: dict[str, Any],
        key: str | None,
        summary: str | Callable[[], str],
        read: Callable[[str, Any], A],
    ) -> A:
        """Ask the client something whose answer needs no validation round: return the recorded
        or fresh answer (read by ``read``, which raises -32602 for a malformed one), or end the
        round with the question."""
        digest = question_digest(kind, content)
        rnd = self._round
        wire_key = rnd.key_for(kind, digest, key)
        found = rnd.lookup(wire_key, digest, summary)
        if found is None:
            rnd.ask(wire_key, digest, request)
            return await _wait_forever(rnd)
        answer = read(wire_key, found.value)
        if isinstance(found, FreshAnswer):
            # Kept in the sealed state as sent: bound its nesting here, with a clear error.
            if nested_deeper_than(found.value, MAX_ANSWER_NESTING):
                raise invalid_params(
                    f"inputResponses[{wire_key!r}] must be JSON data nested at most "
                    f"{MAX_ANSWER_NESTING} levels deep"
                )
            rnd.record_answer(wire_key, digest, found.value)
        return answer

    # -- steps that must run once per flow -------------------------------------------------
    def step_key(self, name: str) -> str:
        """A stable idempotency key for step ``name`` of this flow (flow id + step name)."""
        return f"{self.flow_id}:{name}"

    async def once(self, name: str, fn: Callable[..., Any]) -> Any:
        """Run ``fn`` once per flow and replay its recorded result on later rounds.

        ``fn`` takes no argument, or one: the step's idempotency key (:meth:`step_key`), to pass
        to the store it writes to so that a crash between the write and the response cannot
        double the effect. Its result must be JSON data: it is recorded in the sealed state.
        """
        rnd = self._round
        found, value = rnd.recorded_step(name)
        if found:
            return codec.json_copy(value)  # the record may be sealed again: the handler gets its own
        rnd.step_started(name)
        ok = False
        result: Any = None
        inside = RUNNING_STEP.set(name)
        try:
            result = fn(self.step_key(name)) if _takes_argument(fn) else fn()
            if inspect.isawaitable(result):
                result = await result
            try:
                # What later rounds read back from the state, so this round gets the same.
                result = codec.json_copy(result)
            except TypeError as exc:
                raise TypeError(
                    f"ctx.once step {name!r} returned {exc}, which later rounds could not get "
                    "back from the flow state: return JSON data (str, int, float, bool, None, "
                    "lists and dicts with string keys)"
                ) from None
            ok = True
            return codec.json_copy(result)
        finally:
            RUNNING_STEP.reset(inside)
            rnd.step_finished(name, result, ok)

    def retry_later(self) -> NoReturn:
        """End this round with a state-only ``InputRequiredResult``: the client comes back later
        with the state (and no answers), and the handler runs again from the top."""
        raise RetryLater

    # -- notifications ---------------------------------------------------------------------
    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` (``progress`` out of ``total``, when known, with an
        optional ``message``); does nothing when the request sent no ``progressToken``."""
        token = self.meta.progress_token
        if token is None or self._notify is None:
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._notify("notifications/progress", params)

    async def log(self, level: str, data: Any, *, logger_name: str | None = None) -> None:
        """Send ``notifications/message`` if this request asked for logs at ``level`` or above."""
        wanted = self.meta.log_level
        if wanted not in _LOG_LEVELS or level not in _LOG_LEVELS or self._notify is None:
            return
        if _LOG_LEVELS.index(level) < _LOG_LEVELS.index(wanted):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger_name is not None:
            params["logger"] = logger_name
        await self._notify("notifications/message", params)


_LINK_HINT = re.compile(r"://|www\.|\]\(|<a |mailto:|javascript:|data:|tel:", re.IGNORECASE)
_linted_schemas: set[str] = set()


def _may_hold_link(message: str) -> bool:
    """``_LINK_HINT.search(message)``, cheaper for the usual messages.

    Every hint holds ':', '.', ']' or '<', characters with no other case (in any script), so a
    message without them cannot match. For ASCII text, IGNORECASE matching is matching the
    lower-cased text (the non-ASCII case equivalents, such as the Kelvin sign for 'k', need
    the regex)."""
    if ":" not in message and "." not in message and "]" not in message and "<" not in message:
        return False
    if message.isascii():
        text = message.lower()
        return (
            "://" in text
            or "www." in text
            or "](" in text
            or "<a " in text
            or "mailto:" in text
            or "javascript:" in text
            or "data:" in text
            or "tel:" in text
        )
    return _LINK_HINT.search(message) is not None


def _warn_about_links(message: str, spec: FormSpec) -> None:
    """The spec says servers should not put clickable URLs in form requests (URL mode exists
    for that). Warn once per schema, and for a message only when it could hold a link."""
    check_message = _may_hold_link(message)
    check_schema = spec.digest not in _linted_schemas
    if not (check_message or check_schema):
        return
    if check_schema and len(_linted_schemas) < 10_000:
        _linted_schemas.add(spec.digest)
    from mcp_elicit.schema.lint import lint_form

    findings = lint_form(
        message if check_message else "", spec.schema, allow_secrets=spec.schema["properties"]
    )
    for warning in findings.url_warnings:
        logger.warning("form elicitation: %s (use ctx.elicit_url for links the user should open)", warning)


# Forms of types (and the empty confirm-only form) by type, for ctx.elicit without
# allow_secrets: form_spec's own cache (bounded, most recently used) costs about as much to look
# up as the rest of asking. Bounded too, and emptied when full: a server that builds a type per
# request must neither keep them all nor shut the types it always asks with out of this one.
_SPECS: dict[type | None, FormSpec] = {}
_MAX_SPECS = 128


def _form_spec(schema: Any, allow_secrets: Iterable[str]) -> FormSpec:
    cacheable = (
        (schema is None or isinstance(schema, type)) and type(allow_secrets) is tuple and not allow_secrets
    )
    if cacheable:
        try:
            spec = _SPECS.get(schema)
        except TypeError:  # a metaclass whose instances do not hash
            cacheable = False
        else:
            if spec is not None:
                return spec
    from mcp_elicit.schema.spec import form_spec

    spec = form_spec(_EMPTY_FORM if schema is None else schema, allow_secrets=allow_secrets)
    if cacheable:
        if len(_SPECS) >= _MAX_SPECS:
            _SPECS.clear()
        _SPECS[schema] = spec
    return spec


def vet_elicitation(key: str, mode: str, params: Mapping[str, Any], allow_secrets: tuple[str, ...]) -> None:
    """Check an elicitation a low-level handler wrote itself, as ``ctx.elicit`` (the schema
    subset, no secret fields, a warning for links) and ``ctx.elicit_url`` (a URL safe to send)
    check theirs. A failure is a defect in the handler: -32603 saying what is wrong."""
    message = params.get("message")
    if not isinstance(message, str):
        raise internal_error(f"input request {key!r} has no message (a string)")
    if mode == "url":
        url = params.get("url")
        try:
            _check_url(url if isinstance(url, str) else "")
        except ValueError as exc:
            raise internal_error(f"input request {key!r}: {exc}") from None
        return
    schema = params.get("requestedSchema")
    if not isinstance(schema, dict):
        raise internal_error(f"input request {key!r} has no requestedSchema (an object)")
    try:
        spec = _form_spec(schema, allow_secrets)
    except SchemaError as exc:
        raise internal_error(f"input request {key!r}: {exc}") from None
    _warn_about_links(message, spec)


def _check_url(url: str) -> None:
    from mcp_elicit.server.urls import check_elicitation_url  # ipaddress and urllib: on first use

    check_elicitation_url(url)


def _own_copy(content: dict[str, Any]) -> dict[str, Any]:
    """A form answer the handler may change without changing the recorded one, which is sealed
    into the state again when later questions follow (values are scalars or lists of them)."""
    return {name: value.copy() if type(value) is list else value for name, value in content.items()}


async def _wait_forever(rnd: Round) -> NoReturn:
    """Block this branch until the engine ends the round (it cancels the handler)."""
    await rnd.wait_for_answer()
    raise AssertionError("unreachable")  # pragma: no cover


def _sampling_missing(tools: bool, context: bool) -> str:
    needed = ["sampling"] + ["sampling.tools"] * tools + ["sampling.context"] * context
    return (
        "This request needs the client's model (sampling), but its clientCapabilities do not "
        f"declare all of {', '.join(needed)}"
    )


def _takes_argument(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [
        p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    return len(positional) >= 1 or any(p.kind is p.VAR_POSITIONAL for p in params)


def _url_answer(key: str, value: Any) -> ElicitAnswer[None]:
    action, _ = mrtr.check_elicit_result(key, value)
    return ElicitAnswer(action)


def _sampled(key: str, value: Any) -> SampledMessage:
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("role"), str)
        or "content" not in value
        or not isinstance(value.get("model"), str)
    ):
        raise invalid_params(
            f"inputResponses[{key!r}] must be a CreateMessageResult with role, content and model"
        )
    stop = value.get("stopReason")
    return SampledMessage(
        role=value["role"],
        content=value["content"],
        model=value["model"],
        stop_reason=stop if isinstance(stop, str) else None,
        raw=value,
    )


def _roots(key: str, value: Any) -> list[Root]:
    roots = value.get("roots") if isinstance(value, dict) else None
    if not isinstance(roots, list):
        raise invalid_params(f"inputResponses[{key!r}] must be a ListRootsResult with a roots list")
    out: list[Root] = []
    for index, root in enumerate(roots):
        if not isinstance(root, dict) or not isinstance(root.get("uri"), str):
            raise invalid_params(f"inputResponses[{key!r}].roots[{index}] must have a string uri")
        name = root.get("name")
        out.append(Root(root["uri"], name if isinstance(name, str) else None))
    return out
