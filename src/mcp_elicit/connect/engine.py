"""``ctx.connection`` and ``ctx.secret`` over rounds: the URL-mode kit inside the replay engine.

A handler is replayed from the top on every round, so each call works out where the flow stands
from the sealed state, the flow store and the vault, in this order:

1. **A flow is recorded** in the state (the ``ctx.once`` step ``mcp_elicit.connect-<provider>``
   or ``mcp_elicit.secret-<name>`` holds its id and URL): follow it (step 3). The vault is not
   consulted first, so that the client's answers to the URL questions are consumed the same way
   on every round.
2. **No flow yet**: the vault decides. An active connection (refreshed if it is about to expire)
   or a stored secret is returned at once, with no elicitation. Otherwise (never connected,
   ``needs_reauthorization`` after an ``invalid_grant``, a granted scope set that lacks an
   explicitly requested scope) a :class:`~mcp_elicit.connect.flows.PendingFlow` is created,
   exactly once per MCP flow (``ctx.once``: its id and URL go into the sealed state, which is
   bound to the principal and survives rounds and instances), and the round ends with a URL-mode
   elicitation of ``<base>/connect/<id>`` (or ``/secret/<id>``). A connection whose earlier
   grant still awaits revocation (``revocation_failed``: a disconnect could not reach the
   provider) is revoked first; if that fails again the call ends with a tool error and no link
   (the page could not store a new grant over it).
3. **Later rounds**: the URL question's answer is read. ``decline`` / ``cancel`` close the flow
   (``declined`` / ``failed``) and end the call with a tool error. ``accept`` (it only means the
   person agreed to open the URL) leads to the store: :func:`check_for_retry` with the principal
   of the *current* token. ``Ready``: the connection or secret is read from the vault and
   returned. ``Failed``: a tool error with its message (expired, failed, declined, another
   user's). ``Waiting``: the request is held up to ``kit.hold`` seconds (never past the flow's
   expiry), polling the store every 200 ms (another instance's page may finish it: the store is
   shared), then the round ends with input-required again, with the **same URL**. At most
   :data:`MAX_HOLDS_PER_USER` retries of one user are held at once; more are answered at once.
   Before and after the hold the vault is asked too: if the user connected (or entered the
   secret) through another link meanwhile (an earlier call's), the call finishes with that and
   this flow is left to expire. Once a flow was seen completed, a ``.done`` step records it:
   later rounds of the same call (the handler asks more questions afterwards) go straight to
   the vault.

The same ``ctx.connection`` / ``ctx.secret`` (same provider and scopes, or same name) called
again in one run of the handler, in turn or in ``asyncio.gather``, waits for the first call and
shares its outcome: one flow, one link. The message is one printable line (control and bidi
characters removed, at most 300 characters), the same text the page shows.

Scopes: ``ctx.connection(provider, scopes=[...])`` asks the provider for those scopes, its
default ones and those an existing connection was granted (the new grant replaces it, so nothing
is lost: incremental authorization); the page lists them and the authorize request carries them.
The provider may grant less (RFC 6749 §3.3): the connection is stored as granted, and the call
ends with :class:`ScopesNotGranted` (a :class:`ToolError` naming the missing scopes; a handler
that can do with less catches it, then ``ctx.connection(provider)`` without ``scopes`` returns
the connection as granted, ``.scopes`` saying what it may do). The next call asking for them
sends one new link; no call ever loops. Without ``scopes`` any grant is accepted.

Re-issue keying: an answered question replays its recorded answer, so the same URL cannot be
asked again under the same key. Each re-issue gets the next key of a per-flow sequence
(``connect-github-0``, ``connect-github-1``, ...); on replay the recorded ``accept`` answers walk
the sequence up to the first key without a recorded answer, which is where this round stands.
Every key carries the same message and URL (its digest is checked like any other question).

Errors: no principal, an unknown provider and a client without URL elicitation fail cleanly
(tool error, -32021); :class:`FlowStoreUnavailable` / :class:`VaultUnavailable` become a
retryable JSON-RPC server error, and a record the vault cannot open (:class:`VaultCorrupt`) a tool
error that names it. No token or secret value appears in a result, error or log.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final, NoReturn, TypeVar

from mcp_elicit.connect.client_label import client_label
from mcp_elicit.connect.flows import (
    Failed,
    FlowError,
    FlowKind,
    FlowNotFound,
    FlowStoreUnavailable,
    Ready,
    RetryOutcome,
    TooManyPendingFlows,
    Waiting,
    check_for_retry,
    flow_fingerprint,
    flow_url,
    step_words,
)
from mcp_elicit.connect.flows.model import (
    MAX_DESCRIPTION_LENGTH,
    NAME_RULE,
    checked_provider,
    checked_scopes,
    clean_label,
)
from mcp_elicit.connect.vault import (
    Connection,
    NeedsReauthorization,
    NotConnected,
    RefreshFailed,
    RevocationFailed,
    VaultCorrupt,
    VaultUnavailable,
)
from mcp_elicit.server.errors import ToolError
from mcp_elicit.wire.errors import INTERNAL_ERROR, McpError

if TYPE_CHECKING:
    from mcp_elicit.connect.kit import ConnectKit
    from mcp_elicit.server.context import Context

__all__ = [
    "MAX_HOLDS_PER_USER",
    "POLL_INTERVAL",
    "STORE_UNAVAILABLE_DATA",
    "ScopesNotGranted",
    "obtain_connection",
    "obtain_secret",
]

_log = logging.getLogger("mcp_elicit.connect")

POLL_INTERVAL: Final = 0.2
"""Seconds between two looks at the flow store while a retry is held."""
STORE_UNAVAILABLE_DATA: Final = {"reason": "connect_store_unavailable", "retryable": True}
MAX_HOLDS_PER_USER: Final = 8
"""Retries of one user held at once (a user has a few open flows, one retry each); more are
answered at once, with the same URL, so that a client sending one state many times over cannot
multiply the polling of the store."""

T = TypeVar("T")


class ScopesNotGranted(ToolError):
    """``ctx.connection(provider, scopes=[...])``: the user connected, but the provider granted
    fewer scopes than asked (the user unticked one, an organisation policy...).

    The connection is stored as granted (a later ``ctx.connection(provider)`` without ``scopes``
    returns it; its ``.scopes`` say what it may do). Uncaught, the call ends with a tool error
    naming the missing scopes; a handler that can do with less catches it. The next call that
    asks for the same scopes sends a new link (the user may grant them then): one link per call,
    never a loop. ``provider``, ``missing`` and ``granted`` say what happened.
    """

    def __init__(self, provider: str, title: str, missing: tuple[str, ...], granted: tuple[str, ...]) -> None:
        super().__init__(
            f"Your {title} account was connected, but {title} did not grant "
            f"{', '.join(missing)}, which this needs. Run the tool again and allow "
            f"{'it' if len(missing) == 1 else 'them'} on {title}'s page."
        )
        self.provider = provider
        self.missing = missing
        self.granted = granted


@dataclass(slots=True)
class _Slot:
    """One ``ctx.connection`` / ``ctx.secret`` slot in one run of a handler: calls take turns,
    and once one has followed the flow, ``outcome`` is ``(True, value)`` or ``(False, error)``."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    outcome: tuple[bool, Any] | None = None


# The slots the calls of one run went through (kept by the Context, for that run only).
_SLOTS = object()


def _shared(outcome: tuple[bool, Any]) -> Any:
    ok, value = outcome
    if ok:
        return value
    raise value


@dataclass(frozen=True, slots=True)
class _Request:
    """One ``ctx.connection`` / ``ctx.secret`` call, as the flow machinery needs it."""

    kind: FlowKind
    label: str  # the provider id or the secret's name
    title: str  # what the messages call it: "GitHub", "openai_api_key"
    scopes: tuple[str, ...]
    slot: str  # names the ctx.once step and prefixes the question keys
    message: str  # the URL elicitation's message
    description: str  # stored on the flow, shown on the page


# ------------------------------------------------------------------------------ entry points


async def obtain_connection(
    ctx: Context, kit: ConnectKit, provider: str, scopes: Iterable[str] | None, reason: str | None
) -> Connection:
    """``ctx.connection(provider, scopes=..., reason=...)`` (see the module docstring)."""
    principal = _principal(ctx, "Connecting an account")
    oauth = kit.provider(provider)
    explicit = scopes is not None
    try:
        wanted = checked_scopes(oauth.scopes if scopes is None else scopes)
    except (TypeError, ValueError) as exc:  # the handler's own scopes: say so, not "unexpected"
        _log.error("ctx.connection(%r): %s", provider, exc)
        raise ToolError(f"ctx.connection({provider!r}): scopes: {exc}") from None
    # Asked at the provider: the provider's defaults and these, plus what an existing connection
    # was granted (it is replaced: incremental, so that two tools asking for different scopes do
    # not take turns revoking each other's).
    asked = list(dict.fromkeys((*wanted, *oauth.scopes)))
    title = kit.provider_title(provider)
    # One printable line, as the page shows it (the flow's description is this message): no
    # control or bidi characters, and no dangling "to ." for a reason of dots.
    what = (clean_label(reason, MAX_DESCRIPTION_LENGTH) or "").rstrip(". ") or f"continue with {ctx.target}"
    slot = f"connect-{provider}"
    if explicit:
        slot += "-" + hashlib.sha256(" ".join(sorted(set(wanted))).encode()).hexdigest()[:8]
    message = _one_line(f"Connect your {title} account to {what}.")
    request = _Request("connect", provider, title, wanted, slot, message, message)
    refresher = kit.refresher(provider)

    def missing(connection: Connection) -> tuple[str, ...]:
        # A connection without recorded scopes (the provider never said) is taken as it is.
        if not explicit or not connection.scopes:
            return ()
        return tuple(scope for scope in wanted if scope not in connection.scopes)

    async def current(starting: bool = True) -> Connection | None:
        # starting=False: a flow is waiting, and this only asks whether the user connected
        # through another link meanwhile (no revocation, no error, nothing logged).
        try:
            connection = await kit.vault.fresh_connection(principal, provider, refresher)
        except NeedsReauthorization:
            if starting:
                _log.info("connection to %s needs re-authorization; starting a URL flow", provider)
            return None
        except NotConnected as exc:
            if starting and exc.status == "revocation_failed":
                await _retry_revocation(kit, principal, provider, title)
            return None
        except RefreshFailed as exc:
            if not starting:
                return None
            raise _refresh_failed(exc, title) from None
        if missing(connection):
            if starting:
                _log.info("connection to %s lacks requested scopes; starting a URL flow", provider)
                asked.extend(scope for scope in connection.scopes if scope not in asked)
            return None
        return connection

    async def after_flow() -> Connection:
        try:
            connection = await kit.vault.fresh_connection(principal, provider, refresher)
        except NotConnected:
            raise ToolError(
                f"Your {title} account was connected, but the connection is no longer available. "
                "Run the tool again to connect it."
            ) from None
        except RefreshFailed as exc:
            raise _refresh_failed(exc, title) from None
        lacking = missing(connection)
        if lacking:
            # Stored as granted (RFC 6749 §3.3 lets the provider grant less); a clear outcome for
            # this call rather than a link that can only bring the same answer back.
            _log.info("connection to %s was granted without %s", provider, " ".join(lacking))
            raise ScopesNotGranted(provider, title, lacking, connection.scopes)
        return connection

    def flow_scopes() -> tuple[str, ...]:
        return checked_scopes(asked)

    stored = f"stored {title} connection"
    return await _guarded(_obtain(ctx, kit, principal, request, current, after_flow, flow_scopes), stored)


async def obtain_secret(
    ctx: Context, kit: ConnectKit, name: str, description: str, message: str | None
) -> str:
    """``ctx.secret(name, description, message=...)`` (see the module docstring)."""
    principal = _principal(ctx, "Entering a secret")
    try:
        checked_provider(name)
    except ValueError:
        _log.error("ctx.secret: %r is not a valid secret name", name)
        raise ToolError(f"ctx.secret: {name!r} is not a valid secret name ({NAME_RULE})") from None
    text = clean_label(description, MAX_DESCRIPTION_LENGTH) if isinstance(description, str) else None
    if text is None:  # nothing printable: the page and the client would show no description
        raise ToolError("ctx.secret needs a description of the secret (shown to the user)")
    if message is None:
        message = (
            f"{text} is needed to continue with {ctx.target}. Enter it on this server's secure "
            "page: it goes to the server only, never through this app."
        )
    request = _Request("secret", name, name, (), f"secret-{name}", message, text)

    async def current(starting: bool = True) -> str | None:
        found = await kit.vault.get_secret(principal, name)
        return None if found is None else found.value

    async def after_flow() -> str:
        value = await current()
        if value is None:
            raise ToolError(
                f"The secret {name!r} was entered, but it is no longer available. Run the tool "
                "again to enter it."
            )
        return value

    return await _guarded(
        _obtain(ctx, kit, principal, request, current, after_flow), f"stored secret {name!r}"
    )


# ------------------------------------------------------------------------------ the rounds


async def _obtain(
    ctx: Context,
    kit: ConnectKit,
    principal: str,
    request: _Request,
    current: Callable[[bool], Awaitable[T | None]],
    after_flow: Callable[[], Awaitable[T]],
    flow_scopes: Callable[[], tuple[str, ...]] | None = None,
) -> T:
    step = f"mcp_elicit.{request.slot}"
    slots: dict[str, _Slot] = ctx.run_local(_SLOTS, dict)
    slot = slots.setdefault(step, _Slot())
    # A second call for the same slot in this run (two helpers both asking for GitHub, in turn
    # or in asyncio.gather) waits for the first, then shares its outcome: the flow's question
    # keys can be read only once per run, and its step run only once.
    async with slot.lock:
        if slot.outcome is not None:
            shared: T = _shared(slot.outcome)
            return shared
        recorded, value = ctx.recorded_step(step)
        if not recorded:
            found = await current(True)
            if found is not None:
                return found
            ctx.require("url")  # before creating a flow the client could never open
            asked = request if flow_scopes is None else replace(request, scopes=flow_scopes())
            flow_id, url = _recorded_flow(
                await ctx.once(step, lambda: _create(ctx, kit, principal, asked)), request
            )
            key, refused = _next_key(ctx, kit, flow_id, principal, request, url)
            if refused is not None:
                await refused
            await ctx.ask_url(key, request.message, url)
        flow_id, url = _recorded_flow(value, request)
        try:
            result: T = await _follow(ctx, kit, principal, request, flow_id, url, current, after_flow)
        except Exception as exc:
            slot.outcome = (False, exc)
            raise
        slot.outcome = (True, result)
        return result


async def _follow(
    ctx: Context,
    kit: ConnectKit,
    principal: str,
    request: _Request,
    flow_id: str,
    url: str,
    current: Callable[[bool], Awaitable[T | None]],
    after_flow: Callable[[], Awaitable[T]],
) -> T:
    """A retry of the round that sent the flow's URL: read the client's answers, then where
    the flow stands; finish, fail, or hold and ask again with the same URL."""
    step = f"mcp_elicit.{request.slot}"
    key, refused = _next_key(ctx, kit, flow_id, principal, request, url)
    if refused is not None:
        await refused
    if ctx.recorded_step(step + ".done")[0]:
        return await after_flow()  # completed in an earlier round (later questions followed)
    outcome = await _outcome(kit, flow_id, principal)
    found: T | None = None
    if isinstance(outcome, Waiting):
        # The user may have finished through another link (an earlier call's, in another tab)
        # meanwhile: then this flow would wait for a page nobody opens.
        found = await current(False)
        if found is None:
            outcome = await _hold(kit, flow_id, principal, outcome)
            if isinstance(outcome, Waiting):
                found = await current(False)
    if found is not None:
        _log.info("%s flow %s not needed: done through another link", request.kind, flow_fingerprint(flow_id))
        await ctx.once(step + ".done", lambda: True)
        return found
    if isinstance(outcome, Ready):
        _log.info("%s flow %s completed; finishing %s", request.kind, outcome.flow.fingerprint, ctx.target)
        await ctx.once(step + ".done", lambda: True)
        return await after_flow()
    if isinstance(outcome, Failed):
        raise ToolError(_failure_message(outcome, request))
    await ctx.ask_url(key, request.message, url)


def _next_key(
    ctx: Context, kit: ConnectKit, flow_id: str, principal: str, request: _Request, url: str
) -> tuple[str, Awaitable[NoReturn] | None]:
    """Walk the re-issue sequence: recorded ``accept`` answers move on to the next key. The key
    this round stands at, and, when the client declined or dismissed, the awaitable that closes
    the flow and raises."""
    index = 0
    while True:
        key = f"{request.slot}-{index}"
        answered = ctx.url_answer(key, request.message, url)
        if answered is None:
            return key, None
        action, fresh = answered
        if action != "accept":
            return key, _refused(kit, flow_id, principal, request, action, fresh)
        index += 1
        if fresh:
            return f"{request.slot}-{index}", None


async def _create(ctx: Context, kit: ConnectKit, principal: str, request: _Request) -> list[str]:
    """Create the flow (run once per MCP flow by ``ctx.once``); its id and URL are recorded."""
    try:
        flow = await kit.flows.create(
            principal,
            request.kind,
            request.label,
            request.scopes,
            client=_client_name(ctx),
            description=request.description,
        )
    except TooManyPendingFlows as exc:
        raise ToolError(str(exc)) from None
    return [flow.id, flow_url(kit.base_url, flow, development=kit.development)]


def _recorded_flow(value: object, request: _Request) -> tuple[str, str]:
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(part, str) for part in value)
        and f"/{request.kind}/" in value[1]
    ):
        return value[0], value[1]
    raise ToolError("The state of this request is not what this server recorded; run the tool again.")


async def _hold(kit: ConnectKit, flow_id: str, principal: str, waiting: Waiting) -> RetryOutcome:
    """Hold the request up to ``kit.hold`` seconds (never past the flow's expiry) while the flow
    is waiting, polling the shared store; the last outcome seen."""
    holding = kit.held_retries
    if holding.get(principal, 0) >= MAX_HOLDS_PER_USER:
        _log.info("%d retries of %r already held; answering this one at once", MAX_HOLDS_PER_USER, principal)
        return waiting
    holding[principal] = holding.get(principal, 0) + 1
    try:
        outcome: RetryOutcome = waiting
        loop = asyncio.get_running_loop()
        deadline = loop.time() + waiting.hold_for(kit.hold, kit.clock())
        while (left := deadline - loop.time()) > 0:
            await asyncio.sleep(min(POLL_INTERVAL, left))
            outcome = await _outcome(kit, flow_id, principal)
            if not isinstance(outcome, Waiting):
                return outcome
        return outcome
    finally:
        if holding[principal] > 1:
            holding[principal] -= 1
        else:
            del holding[principal]


async def _outcome(kit: ConnectKit, flow_id: str, principal: str) -> RetryOutcome:
    try:
        flow = await kit.flows.get(flow_id)
    except FlowNotFound:
        return Failed("unknown")
    return check_for_retry(flow, principal, kit.clock())


async def _refused(
    kit: ConnectKit, flow_id: str, principal: str, request: _Request, action: str, fresh: bool
) -> NoReturn:
    """The person declined or dismissed the URL elicitation: close the flow, end the call."""
    declined = action == "decline"
    if fresh:
        try:
            await kit.flows.fail(
                flow_id,
                None if declined else "Dismissed in the client.",
                owner=principal,
                declined=declined,
            )
        except FlowStoreUnavailable as exc:
            _log.warning("could not close a %s flow the user %sd: %s", request.kind, action, exc)
        except FlowError as exc:  # already finished, expired, or not this principal's
            _log.info("a %s flow the user %sd could not be closed: %r", request.kind, action, exc)
    what = _what(request)
    if declined:
        # Not "You declined": a client may decline for the person (ours does, for an address
        # it refuses to show), and the model passes this sentence on to them.
        raise ToolError(f"{what[0].upper()}{what[1:]} was declined in the client.")
    raise ToolError(f"You dismissed the request for {what}. Run the tool again when you want to continue.")


# ------------------------------------------------------------------------------ helpers


def _principal(ctx: Context, what: str) -> str:
    if ctx.principal is None:
        raise ToolError(
            f"{what} needs a signed-in user, and this request carries no validated identity: "
            "configure identity (ConnectKit(identity=...)) so that requests come with an access token."
        )
    return ctx.principal


def _what(request: _Request) -> str:
    return step_words(request.kind, request.title)


def _one_line(text: str) -> str:
    """``text`` as the page shows a flow's description: one printable line, capped."""
    return clean_label(text, MAX_DESCRIPTION_LENGTH) or text


def _failure_message(outcome: Failed, request: _Request) -> str:
    if outcome.reason == "declined":
        return f"You declined {_what(request)}."
    flow = outcome.flow
    if flow is not None and request.kind == "connect":
        flow = replace(flow, provider=request.title)  # "GitHub", not "github", in the message
    return Failed(outcome.reason, flow).message


def _client_name(ctx: Context) -> str | None:
    """Who asks, for the page (:mod:`~mcp_elicit.connect.client_label`): the client's
    self-reported display name (``title``, else ``name``) and the OAuth client id from the
    validated token when there is one, kept apart so the page never presents a name the client
    chose as checked."""
    name = None
    info = ctx.client_info
    if info:
        for field in ("title", "name"):
            value = info.get(field)
            if isinstance(value, str) and value.strip():
                name = value
                break
    return client_label(name, ctx.client)


async def _retry_revocation(kit: ConnectKit, principal: str, provider: str, title: str) -> None:
    """The connection awaits revocation (a disconnect's upstream revocation failed): revoke it
    now, before a new link is sent. A new grant cannot be stored over it (the old tokens would be
    lost unrevoked), so a link sent while it stands could only end in an error page."""
    try:
        await kit.disconnect(principal, provider)
    except RevocationFailed as exc:
        _log.warning(
            "connection of %s to %s still awaits revocation (%s); no link sent",
            principal,
            provider,
            exc.reason,
        )
        raise ToolError(
            f"Your earlier {title} connection has to be revoked at {title} before a new one can be "
            f"made, and {title} could not be reached to revoke it. Nothing was changed; try again later."
        ) from None
    _log.info("connection of %s to %s revoked on retry; starting a URL flow", principal, provider)


def _refresh_failed(exc: RefreshFailed, title: str) -> ToolError:
    _log.warning("refreshing a %s connection failed: %s", title, exc)
    if exc.retryable:
        return ToolError(
            f"Your {title} connection could not be refreshed right now (a temporary problem); "
            "try again shortly."
        )
    return ToolError(
        f"Your {title} connection could not be refreshed ({exc.reason}). Try again, or disconnect "
        "and connect the account again."
    )


async def _guarded(work: Awaitable[T], stored: str) -> T:
    """Store outages become a retryable JSON-RPC server error, not a traceback; a ``stored``
    record the vault cannot open (tampered, or sealed under a key no longer configured) a tool
    error the user can pass on: retrying cannot help, and a new connection would not replace it."""
    try:
        return await work
    except VaultCorrupt as exc:
        _log.error("the %s cannot be opened: %s", stored, exc)
        raise ToolError(
            f"Your {stored} could not be read by this server. Ask the server's operator to check "
            "its vault keys or remove the record, then run the tool again."
        ) from None
    except (FlowStoreUnavailable, VaultUnavailable) as exc:
        _log.warning("the connect kit's store is unavailable: %s", exc)
        raise McpError(
            INTERNAL_ERROR,
            "Internal error: the server's connection store is unavailable; retry the request shortly",
            dict(STORE_UNAVAILABLE_DATA),
        ) from None
