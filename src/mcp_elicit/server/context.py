"""``Context``: what a handler uses to ask the person (and the client) for input.

Every ``await ctx.elicit(...)`` either returns the recorded answer (the question was answered in
an earlier round), or ends this round: the engine sends the question in an
``InputRequiredResult`` and replays the handler from the top when the client retries.
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, NoReturn, TypeVar, overload

from mcp_elicit.schema.errors import AnswerInvalid
from mcp_elicit.server import gating
from mcp_elicit.server.answers import ElicitAnswer, Root, SampledMessage
from mcp_elicit.server.auth import Caller
from mcp_elicit.server.call import Call
from mcp_elicit.server.errors import ToolError, TooManyInvalidAnswers
from mcp_elicit.server.extension import Extension
from mcp_elicit.server.record import MAX_ANSWER_NESTING, nested_deeper_than, question_digest
from mcp_elicit.server.replay import RetryLater
from mcp_elicit.server.round import RUNNING_STEP, FreshAnswer, RecordedAnswer, Round
from mcp_elicit.wire import codec, mrtr
from mcp_elicit.wire.errors import invalid_params
from mcp_elicit.wire.meta import RequestMeta

if TYPE_CHECKING:  # types only
    from mcp_elicit.connect.vault import Connection

T = TypeVar("T")
A = TypeVar("A")

logger = logging.getLogger("mcp_elicit.server")

_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_NEEDS: dict[str, gating.Need] = {"form": gating.FORM, "url": gating.URL, "roots": gating.ROOTS}


def _summary(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


class Context:
    """Passed to any handler parameter annotated ``Context``: one per run of the handler."""

    def __init__(
        self, call: Call, rnd: Round, *, max_answer_attempts: int = 3, extension: Extension | None = None
    ) -> None:
        self._call = call
        self._round = rnd
        self._max_attempts = max_answer_attempts
        self._extension = extension
        self._run_local: dict[object, Any] = {}

    # -- facts about this request ----------------------------------------------------------
    @property
    def method(self) -> str:
        """``tools/call``, ``prompts/get`` or ``resources/read``."""
        return self._call.method

    @property
    def target(self) -> str:
        """The tool or prompt name, or the resource URI."""
        return self._call.target

    @property
    def arguments(self) -> Mapping[str, Any]:
        """The arguments as the client sent them."""
        return self._call.arguments

    @property
    def meta(self) -> RequestMeta:
        """This request's ``_meta``: protocol version, capabilities, client info, progress token."""
        return self._call.meta

    @property
    def caller(self) -> Caller | None:
        """Who is calling, from a validated token (None without authentication)."""
        return self._call.caller

    @property
    def principal(self) -> str | None:
        """The user of the validated token (``caller.principal``), or None."""
        caller = self._call.caller
        return None if caller is None else caller.principal

    @property
    def client(self) -> str | None:
        """The OAuth client the principal's token was issued to (from a validated token, unlike
        ``client_info``); None without authentication or when the token names none."""
        caller = self._call.caller
        return None if caller is None else caller.client

    @property
    def call_id(self) -> str:
        """Random id of this call, the same on every round of it."""
        return self._round.record.call_id

    @property
    def round(self) -> int:
        """0 on the first request of a call, 1 on the first retry, and so on."""
        return self._round.record.round

    @property
    def client_info(self) -> Mapping[str, Any] | None:
        """Self-reported by the client: display it, never base a security decision on it."""
        return self._call.meta.client_info

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
        return mode in self._call.meta.capabilities.modes

    def can_sample(self, *, tools: bool = False, context: bool = False) -> bool:
        """Whether this request's client takes sampling requests (offering the model ``tools``,
        asking it to include ``context``, when those are True)."""
        return self._call.meta.capabilities.can_sample(tools=tools, context=context)

    def can_list_roots(self) -> bool:
        """Whether this request's client takes ``roots/list`` requests (``ctx.list_roots``)."""
        return self._call.meta.capabilities.can_list_roots()

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
        self._round.require(gating.FORM)
        spec = gating.form_spec(schema, allow_secrets)
        gating.warn_about_links(message, spec)
        digest = question_digest("form", [message, spec.digest])
        rnd = self._round
        wire_key = rnd.key_for("elicit", digest, key)
        found = rnd.lookup(wire_key, digest, lambda: _summary(message))
        if isinstance(found, RecordedAnswer):
            action, content = found.value
            if action != "accept" or content is None:
                return ElicitAnswer(action, content)
            content = _own_copy(content)
            return ElicitAnswer(action, content, spec.to_python(content))
        if isinstance(found, FreshAnswer):
            action, content = mrtr.check_elicit_result(wire_key, found.value)
            if action != "accept":
                rnd.record_answer(wire_key, digest, [action, None])
                return ElicitAnswer(action)
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
            return ElicitAnswer("accept", content, data)
        rnd.ask(wire_key, digest, mrtr.elicit_form(message, spec.schema))
        return await _wait_forever(rnd)

    async def elicit_url(self, message: str, url: str, *, key: str | None = None) -> ElicitAnswer[None]:
        """Send the person to ``url`` (out of band: the client never sees what they enter there).

        ``accept`` only means the person agreed to open the URL, not that they finished: check
        your own record of the out-of-band step before relying on it.
        """
        self._round.require(gating.URL)
        if not isinstance(message, str):
            raise TypeError(f"ctx.elicit_url: message must be a str, got {type(message).__name__}")
        gating.check_url(url)
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
        connection: Connection = await self._kit("ctx.connection").connection(self, provider, scopes, reason)
        return connection

    async def secret(self, name: str, description: str, *, message: str | None = None) -> str:
        """The signed-in user's secret ``name`` (an API key...), entered on a secure page.

        When the vault has no such secret for the user, this sends them to the server's
        ``/secret/<id>`` page (URL-mode elicitation: the value never passes through the client)
        and returns the value once they entered it, on a later round. ``description`` says what
        the secret is (shown in the client and on the page); ``message`` replaces the default
        text of the request. Never put the value in a tool result, an error or a log.
        """
        return await self._kit("ctx.secret").secret(self, name, description, message)

    def _kit(self, what: str) -> Extension:
        if self._extension is None:
            logger.error("%s needs Server(connect=ConnectKit(...)); this server has none", what)
            raise ToolError(
                f"This server is not set up to connect accounts or take secrets ({what} needs "
                "Server(connect=ConnectKit(...)))."
            )
        return self._extension

    # -- the extension point: what the URL-mode kit builds ctx.connection and ctx.secret on ----
    def require(self, kind: Literal["form", "url", "roots"]) -> None:
        """Raise the -32021 error unless this request's client takes ``kind`` input requests
        (before doing anything a refusal would leave half done)."""
        self._round.require(_NEEDS[kind])

    def recorded_step(self, name: str) -> tuple[bool, Any]:
        """Whether ``ctx.once(name, ...)`` ran in an earlier round of this call (or earlier in
        this run), and its recorded result; nothing is run."""
        return self._round.recorded_step(name)

    def url_answer(self, key: str, message: str, url: str) -> tuple[str, bool] | None:
        """The action the client answered to the URL question ``key`` (``message``, ``url``), and
        whether the answer arrived in this round (it is recorded then); ``None`` when it is
        unanswered. Counts as asking ``key`` in this run: ask it with :meth:`ask_url`."""
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

    async def ask_url(self, key: str, message: str, url: str) -> NoReturn:
        """End this round with the URL question ``key``; its answer comes back through
        :meth:`url_answer` on the retry."""
        self._round.require(gating.URL)
        gating.check_url(url)
        self._round.ask(key, question_digest("url", [message, url]), mrtr.elicit_url(message, url))
        await _wait_forever(self._round)

    def run_local(self, key: object, factory: Callable[[], T]) -> T:
        """The value kept under ``key`` for this run of the handler (made by ``factory`` the
        first time): state an extension shares between the calls of one run."""
        if key not in self._run_local:
            self._run_local[key] = factory()
        value: T = self._run_local[key]
        return value

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
        self._round.require(gating.sampling(params))
        return await self._ask("sample", params, mrtr.sample(params), key, "a sampling request", _sampled)

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """Ask the client for its roots (the folders it lets servers work in)."""
        self._round.require(gating.ROOTS)
        return await self._ask("roots", None, mrtr.list_roots(), key, "a roots request", _roots)

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
        """A stable idempotency key for step ``name`` of this call (call id + step name)."""
        return f"{self.call_id}:{name}"

    async def once(self, name: str, fn: Callable[..., Any]) -> Any:
        """Run ``fn`` once per call and replay its recorded result on later rounds.

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
        optional ``message``); does nothing when the request sent no ``progressToken``.

        ``progress`` and ``total`` must be finite numbers (the spec's ``number``; NaN would go out
        as null) and ``message`` a str: ValueError or TypeError otherwise, whether or not this
        request asked for progress, so that the mistake shows on the first run."""
        _check_progress_number("progress", progress)
        if total is not None:
            _check_progress_number("total", total)
        if message is not None and not isinstance(message, str):
            raise TypeError(f"report_progress: message must be a str, not {type(message).__name__}")
        token = self._call.meta.progress_token
        notify = self._call.notify
        if token is None or notify is None:
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await notify("notifications/progress", params)

    async def close_stream(self) -> None:
        """End the connection that carries this call's messages now, without ending the call.

        On a 2025-11-25 session over Streamable HTTP a call is answered on a resumable SSE
        stream; closing its connection frees it while the handler works on (SEP-1699 polling):
        the client reconnects after the stream's ``retry`` time (``GET`` with ``Last-Event-ID``)
        and gets everything sent since, the result too. Nothing sent after this goes out on the
        old connection. Elsewhere (2026-07-28 requests, stdio, a call answered as plain JSON)
        there is no such stream and this does nothing.

        Like any side effect it runs again when the handler is replayed after a question: the
        client then reconnects once more, which costs a round trip and nothing else.
        """
        close = self._call.close_stream
        if close is not None:
            await close()

    async def log(self, level: str, data: Any, *, logger_name: str | None = None) -> None:
        """Send ``notifications/message`` if this request asked for logs at ``level`` or above."""
        wanted = self._call.meta.log_level
        notify = self._call.notify
        if wanted not in _LOG_LEVELS or level not in _LOG_LEVELS or notify is None:
            return
        if _LOG_LEVELS.index(level) < _LOG_LEVELS.index(wanted):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger_name is not None:
            params["logger"] = logger_name
        await notify("notifications/message", params)


def _own_copy(content: dict[str, Any]) -> dict[str, Any]:
    """A form answer the handler may change without changing the recorded one, which is sealed
    into the state again when later questions follow (values are scalars or lists of them)."""
    return {name: value.copy() if type(value) is list else value for name, value in content.items()}


async def _wait_forever(rnd: Round) -> NoReturn:
    """Block this branch until the engine ends the round (it cancels the handler)."""
    await rnd.wait_for_answer()
    raise AssertionError("unreachable")  # pragma: no cover


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


def _check_progress_number(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"report_progress: {name} must be a number, not {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"report_progress: {name} must be a finite number, not {value}")
    if isinstance(value, int) and not codec.MIN_INTEGER <= value <= codec.MAX_INTEGER:
        raise ValueError(f"report_progress: {name} is too large to send (past 64 bits)")
