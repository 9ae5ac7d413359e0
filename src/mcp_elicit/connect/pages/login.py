"""Sign-in and sign-out: ``GET /login``, ``GET /login/callback``, ``POST /logout``.

* ``GET /login?next=<our flow page>``: starts OpenID Connect (code + PKCE + state + nonce, by
  :class:`AuthorizationCodeGrant`) against the MCP authorization server; the pending authorization
  and ``next`` go into a sealed, 10-minute cookie named after the ``state``. A ``next`` that is
  not one of our own flow pages is refused (no open redirect).
* ``GET /login/callback``: the cookie for the returned ``state`` is required (a login response
  this browser did not ask for, the login-CSRF trick, is refused), cleared (used once), then the
  code is redeemed and the ID token checked; the session cookie is set and the browser goes back
  to ``next`` with a 303.
* ``POST /logout``: CSRF-checked; clears the session cookie and goes back to ``next``.
"""

from __future__ import annotations

from mcp_elicit.connect.oauth.authorization import AuthorizationCodeGrant
from mcp_elicit.connect.oauth.errors import AuthorizationFailed
from mcp_elicit.transport.asgi import Receive

from . import views
from .context import PagesContext, log
from .csrf import same_origin, valid_csrf_token
from .oidc_login import OidcLogin
from .request import BadRequest, Request
from .response import Response, redirect

__all__ = ["login_callback", "login_start", "logout"]


def _oidc(ctx: PagesContext) -> tuple[OidcLogin, AuthorizationCodeGrant]:
    if not isinstance(ctx.login, OidcLogin) or ctx.login_flow is None:  # routed here only for OIDC
        raise BadRequest(404, "This page does not exist.")
    return ctx.login, ctx.login_flow


def login_start(ctx: PagesContext, request: Request) -> Response:
    _, login_flow = _oidc(ctx)
    next_path = ctx.paths.checked_next(request.query().get("next"))
    if next_path is None:
        log.info("sign-in refused: missing or foreign next")
        raise BadRequest(400, "This sign-in link is not valid. Open the link from your app again.")
    url, pending = login_flow.begin()
    return redirect(url, *ctx.seal_transaction(request, "login", pending, next=next_path))


async def login_callback(ctx: PagesContext, request: Request) -> Response:
    login, login_flow = _oidc(ctx)
    query = request.query()
    transaction = ctx.open_transaction(request, "login", query.get("state"))
    if transaction is None:
        log.info("sign-in callback refused: no matching sign-in in this browser")
        return ctx.page(views.stale_callback(ctx.chrome))
    clear = ctx.cookies.clear(transaction.cookie)  # used once, whatever happens next
    next_path = ctx.paths.checked_next(str(transaction.data.get("next", "")))
    if next_path is None:  # cannot happen for a cookie we sealed; fail closed anyway
        return ctx.page(views.stale_callback(ctx.chrome), clear)
    try:
        grant = await login_flow.finish(transaction.pending, query, provider_in_path=login.provider.id)
    except AuthorizationFailed as exc:
        if exc.declined:
            page = views.message(
                ctx.chrome,
                200,
                "Not signed in",
                "Sign-in was cancelled.",
                "Close this tab, or open the link again.",
            )
        else:
            page = views.failed(ctx.chrome, exc.public_message, exc.provider_error)
        return ctx.page(page, clear)
    principal = login.principal(grant.id_claims)
    if principal is None:
        log.warning("sign-in refused: the ID token does not name a user of %r", login.provider.issuer)
        page = views.failed(ctx.chrome, "The sign-in could not be completed. Please start again.", None)
        return ctx.page(page, clear)
    name, email = await login.display_claims(grant, ctx.http)
    session = ctx.sessions.new(principal, name, email)
    log.info("signed in on the pages: %r", principal.key)
    return redirect(next_path, clear, ctx.sessions.set_cookie(session))


async def logout(ctx: PagesContext, request: Request, receive: Receive) -> Response:
    if not same_origin(request.headers, ctx.paths.origin):
        raise BadRequest(403, "This form was not sent from this site.")
    form = await request.form(receive)
    next_path = ctx.paths.checked_next(form.get("next"))
    session = await ctx.session(request)
    if session is not None and not valid_csrf_token(session, "logout", "", form.get("csrf")):
        raise BadRequest(403, "This form has expired. Reload the page and try again.")
    if session is not None:
        await ctx.end_session(session)
    clear = ctx.sessions.clear_cookie()
    if next_path is None:
        return ctx.page(views.message(ctx.chrome, 200, "Signed out", "You are signed out."), clear)
    return redirect(next_path, clear)
