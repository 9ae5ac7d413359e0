"""Connecting a third-party account: ``/connect/<id>`` and ``/oauth/<provider>/callback``.

* ``GET /connect/<id>``: no side effects (chat apps and scanners fetch links). Signed out: a
  "Sign in" page. Signed in as the owner: who is signed in, who asks (the app as it calls
  itself, marked self-reported; the server), the provider and scopes, the host "Continue" goes
  to (the provider's authorize URL's), and a CSRF-protected POST form with "Continue" and
  "Decline". Anyone else: the refusal page. The owner sees the same page for a connection already
  in progress (Continue was pressed, then the provider's page left without an answer: a closed
  tab, Back, an error at the provider), saying so: else the link would stay unusable until it
  expires, and the app can only hand out the same link again.
* ``POST /connect/<id>``: the checks of :mod:`.guards`, the owner check, then for Continue
  (``choice=continue``, or no ``choice``) a new attempt (``flows.begin`` for a pending flow,
  ``flows.restart`` for one in progress: atomically, and each time with a new ``state`` and PKCE
  verifier) and a 303 to the provider's pinned authorize URL. The pending authorization, flow id,
  owner and attempt number go into a sealed cookie named after the ``state``. Decline
  (``choice=decline``): :mod:`.decline`.
* ``GET /oauth/<provider>/callback``: the transaction cookie for the returned ``state`` (absent:
  replayed, expired or another browser → refused, nothing changes); the signed-in user must still
  be the flow's owner; the callback claims the flow for its attempt, so a flow no longer in
  progress, or one whose Continue was pressed again since (an earlier attempt's late callback), is
  answered before the code is redeemed (a spent code presented again gets the grant revoked);
  :meth:`AuthorizationCodeGrant.finish` checks the rest (provider in the path, state, ``iss``,
  PKCE, tokens). Just before the code is redeemed, the owner's existing connection to the
  provider, if any, is revoked upstream and deleted (a reconnect must not leave the old grant
  live); if that fails the code is not redeemed, the old connection stays ``revocation_failed``
  and the page says so (502). Success: the vault stores the connection for the owner, the flow
  completes, and a 303 to ``/done`` takes the code out of the address bar. A redeemed grant that
  cannot be stored (the flow ended meanwhile, the vault refused or is down) is revoked at once,
  and the page says the connection was not made.
"""

from __future__ import annotations

import asyncio
from typing import Final, Literal

from mcp_elicit.connect.flows import FlowNotFound, FlowStateConflict, PendingFlow
from mcp_elicit.connect.oauth.errors import AuthorizationFailed
from mcp_elicit.connect.oauth.grant import TokenGrant
from mcp_elicit.connect.vault import RevocationFailed, VaultCorrupt, VaultUnavailable
from mcp_elicit.transport.asgi import Receive

from . import views
from .context import PagesContext, log
from .decline import decline, declines
from .guards import checked_post
from .headers import origin_of
from .request import Request
from .response import Response, redirect
from .templates import Page

__all__ = ["connect_callback", "connect_page", "connect_post"]

_DETAIL_LIMIT = 200
_AGAIN: Final = "Go back to your app and try again in a minute."
_WITHDRAW_TIMEOUT: Final = 30.0  # seconds for revoking a grant that could not be stored


def _unconfigured(ctx: PagesContext, flow: PendingFlow) -> Response:
    """A flow whose provider is not configured (any more): the 404, and an error for the operator."""
    log.error("flow %s names provider %r, which is not configured", flow.fingerprint, flow.provider)
    return ctx.not_found()


def _host(url: str) -> str:
    """Where a URL takes the browser, as the page names it: host and non-default port (an
    internationalised host in its ``xn--`` form, so no look-alike letters)."""
    return origin_of(url).split("://", 1)[1]


async def connect_page(ctx: PagesContext, request: Request, flow_id: str) -> Response:
    viewed = await ctx.owner_view(request, "connect", flow_id, "connect an account")
    if isinstance(viewed, Response):
        return viewed
    session, owned = viewed
    provider = ctx.providers.get(owned.provider)
    if provider is None:
        return _unconfigured(ctx, owned)
    response = ctx.page(
        views.connect_confirm(
            ctx.chrome,
            ctx.owner_frame(session, owned),
            provider_name=provider.display_name,
            destination=_host(provider.authorize_url),
            scopes=owned.scopes,
            description=owned.description,
            again=owned.status == "in_progress",
        )
    )
    response.to_provider = True  # "Continue" ends at the provider, after its own redirects
    return response


async def connect_post(ctx: PagesContext, request: Request, receive: Receive, flow_id: str) -> Response:
    session, form = await checked_post(ctx, request, receive, "connect", flow_id)
    if declines(form):
        return await decline(ctx, session, "connect", flow_id)
    owned = await ctx.owned_flow(session, flow_id, "connect", "continue")
    if isinstance(owned, Response):
        return owned
    oauth = ctx.oauth.get(owned.provider)
    if oauth is None:
        return _unconfigured(ctx, owned)
    # A new attempt, also when Continue was pressed before (the provider's page was left): the
    # earlier attempt's callback is refused from now on (its cookie names an older attempt).
    flow = await ctx.start_attempt(session, flow_id)
    if isinstance(flow, Response):
        return flow
    url, pending = oauth.begin(flow.scopes)  # the flow's scopes, as the confirmation page listed
    cookies = ctx.seal_transaction(
        request, "tx", pending, flow=flow_id, owner=flow.owner, attempt=flow.attempt
    )
    log.info(
        "flow %s: %r sent to provider %r (attempt %d)",
        flow.fingerprint,
        flow.owner,
        flow.provider,
        flow.attempt,
    )
    return redirect(url, *cookies)


async def connect_callback(ctx: PagesContext, request: Request, provider_id: str) -> Response:
    oauth = ctx.oauth.get(provider_id)
    if oauth is None:
        return ctx.not_found()
    query = request.query()
    transaction = ctx.open_transaction(request, "tx", query.get("state"))
    if transaction is None:
        log.info("callback for provider %r refused: no matching transaction in this browser", provider_id)
        return ctx.page(views.stale_callback(ctx.chrome))
    clear = ctx.cookies.clear(transaction.cookie)  # used once, whatever happens next
    flow_id, owner = transaction.data.get("flow"), transaction.data.get("owner")
    attempt = transaction.data.get("attempt")
    if not isinstance(flow_id, str) or not isinstance(owner, str) or type(attempt) is not int:
        return ctx.page(views.stale_callback(ctx.chrome), clear)

    # The identity is checked again here, at the end of the flow (SEP-1036): the browser may have
    # signed out and in as someone else while at the provider.
    session = await ctx.session(request)
    if session is None or session.principal.key != owner:
        log.warning(
            "SECURITY: callback of provider %r refused: flow owner %r, signed in as %r",
            provider_id,
            owner,
            None if session is None else session.principal.key,
        )
        await _fail(ctx, flow_id, owner, "The account signed in changed during the connection.")
        page = views.message(
            ctx.chrome,
            403,
            "Not connected",
            "The account signed in here is not the one this connection was started for.",
            "Nothing was stored. Go back to your app and start again.",
        )
        return ctx.page(page, clear)

    # The callback claims the flow before anything else happens (in_progress -> redeeming, one
    # compare-and-set, for the attempt this browser started): a second load of it running at the
    # same time (a reload, a double navigation), or any later one, finds the flow taken and changes
    # nothing. Without the claim it would revoke the connection the first load just stored as an
    # "earlier" one, and present the spent code again, which makes the provider revoke the tokens
    # it issued for it (RFC 6749 §4.1.2). The callback of an attempt a later Continue replaced
    # finds the flow still in progress under another attempt: refused, the later one untouched.
    try:
        before = await ctx.flows.claim(flow_id, owner, attempt)
    except FlowNotFound:
        return ctx.page(views.not_found(ctx.chrome), clear)
    except FlowStateConflict as exc:
        log.info(
            "callback of provider %r refused: attempt %d, the flow is %s", provider_id, attempt, exc.status
        )
        replaced = exc.status == "in_progress"
        return ctx.page(views.superseded(ctx.chrome) if replaced else views.already_used(ctx.chrome), clear)

    provider_name = ctx.providers[provider_id].display_name if provider_id in ctx.providers else provider_id

    async def revoke_earlier() -> None:
        await _revoke_earlier(ctx, owner, provider_id, before.fingerprint)

    try:
        grant = await oauth.finish(
            transaction.pending,
            query,
            provider_in_path=provider_id,
            scopes=before.scopes,
            before_redeem=revoke_earlier,
        )
    except AuthorizationFailed as exc:
        if exc.declined:
            await _fail(ctx, flow_id, owner, None, declined=True)
            return ctx.page(views.declined(ctx.chrome, provider_name), clear)
        await _fail(ctx, flow_id, owner, exc.public_message)
        return ctx.page(views.failed(ctx.chrome, exc.public_message, exc.provider_error), clear)
    except _NotReplaced as exc:  # the code was not redeemed: nothing new exists upstream
        await _fail(ctx, flow_id, owner, exc.detail)
        return ctx.page(exc.page(ctx.chrome, provider_name), clear)

    # From here a grant exists upstream: every way out stores it or revokes it.
    try:
        flow = await ctx.flows.get(flow_id)
    except FlowNotFound:
        await _withdraw(ctx, owner, provider_id, grant, "its flow is gone")
        return ctx.page(views.not_found(ctx.chrome), clear)
    except Exception:
        await _withdraw(ctx, owner, provider_id, grant, "the flow store failed")
        raise
    if flow.owner != owner or flow.provider != provider_id:
        await _withdraw(ctx, owner, provider_id, grant, "the flow does not match")
        return ctx.page(views.stale_callback(ctx.chrome), clear)
    if flow.status != "redeeming":
        await _withdraw(ctx, owner, provider_id, grant, f"the flow is {flow.status}")
        return ctx.page(
            views.not_found(ctx.chrome) if flow.status == "expired" else views.already_used(ctx.chrome), clear
        )
    try:
        await ctx.vault.put_connection(
            owner,
            provider_id,
            access_token=grant.access_token,
            refresh_token=grant.refresh_token,
            expires_in=grant.expires_in,
            scopes=grant.scopes,
            token_type=grant.token_type,
            provider_account_id=grant.subject,
        )
    except Exception as exc:
        # Not stored (vault down, an earlier grant flagged unrevoked meanwhile...): a grant we
        # cannot keep is withdrawn, and the flow must not stay "in progress" with nothing behind it.
        log.error("flow %s: the new connection could not be stored: %r", flow.fingerprint, exc)
        withdrawn = await _withdraw(ctx, owner, provider_id, grant, "it could not be stored")
        await _fail(ctx, flow_id, owner, "The connection could not be stored; try again.")
        return ctx.page(views.not_stored(ctx.chrome, provider_name, withdrawn=withdrawn), clear)
    try:
        await ctx.flows.complete(flow_id, owner=owner)
    except (FlowNotFound, FlowStateConflict) as exc:
        # Stored for its owner all the same; the client's retry will see the flow's real status.
        log.info("flow %s: connection stored but the flow could not complete (%r)", flow.fingerprint, exc)
    return redirect(ctx.paths.path("/done"), clear)


class _NotReplaced(Exception):
    """The connection an owner already has could not be revoked, so the new code is not
    redeemed (a new grant could not be stored over the old one, which must not be dropped)."""

    def __init__(self, detail: str, why: Literal["not-revoked", "unreadable", "busy"]) -> None:
        super().__init__(detail)
        self.detail = detail
        self.why = why

    def page(self, chrome: views.Chrome, provider_name: str) -> Page:
        if self.why == "unreadable":
            return views.earlier_unreadable(chrome, provider_name)
        if self.why == "busy":
            return views.message(
                chrome, 503, "Try again later", "The service is busy; nothing was connected.", _AGAIN
            )
        return views.earlier_not_revoked(chrome, provider_name)


async def _revoke_earlier(ctx: PagesContext, owner: str, provider_id: str, fingerprint: str) -> None:
    """Revoke (then delete) the owner's existing connection before the code is redeemed.

    Deleting or overwriting a row revokes nothing upstream, so a reconnect must end the old grant
    itself. Before redemption, because a provider that hands the same grant (or refresh token)
    back, or revokes all of a user's tokens for this client, would otherwise take the new tokens
    down with the old. If revocation fails, the old row stays as ``revocation_failed`` (the
    vault's disconnect rule: retried by the next ``ctx.connection``) and no code is redeemed."""
    try:
        replaced = await ctx.vault.disconnect(owner, provider_id, ctx.revoker(provider_id))
    except RevocationFailed as exc:
        log.warning(
            "flow %s: the earlier %r connection of %r could not be revoked (%s); code not redeemed",
            fingerprint,
            provider_id,
            owner,
            exc.reason,
        )
        raise _NotReplaced(
            "Your earlier connection could not be revoked, so no new one was made.", "not-revoked"
        ) from None
    except VaultCorrupt as exc:
        log.error(
            "flow %s: the earlier %r connection of %r cannot be read (%s); code not redeemed",
            fingerprint,
            provider_id,
            owner,
            exc.reason,
        )
        raise _NotReplaced(
            "Your earlier connection cannot be read here, so no new one was made.", "unreadable"
        ) from None
    except VaultUnavailable as exc:  # the flow fails now rather than waiting for its expiry
        log.error("flow %s: the vault is unavailable; code not redeemed: %s", fingerprint, exc)
        raise _NotReplaced("The connection could not be stored; try again.", "busy") from None
    if replaced:
        log.info("flow %s: the earlier %r connection of %r was revoked", fingerprint, provider_id, owner)


async def _withdraw(ctx: PagesContext, owner: str, provider_id: str, grant: TokenGrant, why: str) -> bool:
    """Revoke a grant that will not be stored (``why``), so that no live grant exists upstream
    without a vault row to revoke it from. ``True`` if revoked (or nothing to call)."""
    try:
        async with asyncio.timeout(_WITHDRAW_TIMEOUT):
            await ctx.revoker(provider_id)(grant.to_connection(owner, provider_id))
    except Exception as exc:  # the revoker's own failures, a timeout: logged, never the token
        log.error(
            "SECURITY: a new %r grant of %r was not stored (%s) and revoking it failed (%s): it "
            "stays valid at the provider until it expires",
            provider_id,
            owner,
            why,
            type(exc).__name__,
        )
        return False
    log.warning("a new %r grant of %r was revoked: %s", provider_id, owner, why)
    return True


async def _fail(
    ctx: PagesContext, flow_id: str, owner: str, detail: str | None, *, declined: bool = False
) -> None:
    """Mark the flow failed (or declined) for its owner; a flow no longer open stays as it is."""
    text = None if detail is None else " ".join(detail.split())[:_DETAIL_LIMIT]
    try:
        await ctx.flows.fail(flow_id, text, owner=owner, declined=declined)
    except (FlowNotFound, FlowStateConflict) as exc:
        log.info("could not mark a flow failed: %r", exc)
