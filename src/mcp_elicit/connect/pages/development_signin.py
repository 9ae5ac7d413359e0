"""The DEMO ONLY sign-in pages (:class:`~mcp_elicit.connect.pages.DevelopmentLogin`).

* ``GET /login?next=<our flow page>``: a page that says "DEMO ONLY sign-in: continue as <subject>"
  with one button. ``next`` must be one of our own flow pages (no open redirect). There is no
  session yet to bind a CSRF token to, so the page's token also goes into a sealed 10-minute
  cookie named after it (with ``next``): only the browser that loaded the page can post it.
* ``POST /login``: same-origin check, then the form's token must open its cookie (constant-time
  comparison); the cookie is cleared (used once), the normal sealed session is issued for the
  development principal, and a 303 goes back to ``next``.

Everything after the sign-in (confirmation page, CSRF, owner checks, OAuth) is the real code.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Final

from mcp_elicit.transport.asgi import Receive

from . import views
from .context import PagesContext, log
from .csrf import same_origin
from .development_login import DevelopmentLogin
from .request import BadRequest, Request
from .response import Response, redirect
from .templates import Identity

__all__ = ["development_login_page", "development_login_post"]

_KIND: Final = "devlogin"
_TTL: Final = 600
_MAX_TOKEN: Final = 128
_EXPIRED: Final = "This sign-in form has expired. Open the link from your app again."


def _login(ctx: PagesContext) -> DevelopmentLogin:
    login = ctx.login
    if not isinstance(login, DevelopmentLogin):  # routed here only for DevelopmentLogin
        raise BadRequest(404, "This page does not exist.")
    return login


def development_login_page(ctx: PagesContext, request: Request) -> Response:
    login = _login(ctx)
    next_path = ctx.paths.checked_next(request.query().get("next"))
    if next_path is None:
        log.info("development sign-in refused: missing or foreign next")
        raise BadRequest(400, "This sign-in link is not valid. Open the link from your app again.")
    token = secrets.token_urlsafe(32)
    cookies = ctx.transaction_cookies(request, _KIND, token, {"t": token, "next": next_path}, _TTL)
    principal = login.principal
    identity = Identity(label=login.display_name, subject=principal.subject, issuer=principal.issuer)
    page = views.development_sign_in(
        ctx.chrome, identity=identity, action=ctx.paths.path("/login"), token=token
    )
    return ctx.page(page, *cookies)


async def development_login_post(ctx: PagesContext, request: Request, receive: Receive) -> Response:
    login = _login(ctx)
    if not same_origin(request.headers, ctx.paths.origin):
        log.warning("development sign-in refused: cross-origin (Origin %r)", request.headers.get("origin"))
        raise BadRequest(403, "This form was not sent from this site.")
    form = await request.form(receive)
    token = form.get("csrf") or ""
    if not token or len(token) > _MAX_TOKEN:
        log.warning("development sign-in refused: missing CSRF token")
        raise BadRequest(403, _EXPIRED)
    name = ctx.cookies.transaction(_KIND, token)
    next_path: str | None = None
    for value in request.cookies(name):
        payload = ctx.sealer.open(name, value)
        if payload is None:
            continue
        sealed = payload.get("t")
        if isinstance(sealed, str) and hmac.compare_digest(sealed.encode(), token.encode()):
            next_path = ctx.paths.checked_next(str(payload.get("next", "")))
            break
    if next_path is None:
        log.warning("development sign-in refused: the CSRF token matches no sign-in of this browser")
        raise BadRequest(403, _EXPIRED)
    session = ctx.sessions.new(login.principal, login.display_name, None)
    log.info("signed in on the pages with the DEVELOPMENT sign-in: %r", login.principal.key)
    return redirect(next_path, ctx.cookies.clear(name), ctx.sessions.set_cookie(session))
