"""The checks every state-changing POST makes, in order, before touching a flow.

1. ``Origin`` / ``Sec-Fetch-Site`` say the form came from this site (403 otherwise);
2. the body is a small url-encoded form (415 / 413 / 400);
3. the browser is signed in (403: a POST is never the place to start signing in);
4. the CSRF token is the one this session rendered for this action on this flow (403).

The owner check comes after, in :meth:`PagesContext.owned_flow`. None of these steps changes
anything, so a refused POST leaves the flow exactly as it was.
"""

from __future__ import annotations

from mcp_elicit.transport.asgi import Receive

from .context import PagesContext, log
from .csrf import same_origin, valid_csrf_token
from .request import BadRequest, Request
from .session import Session

__all__ = ["checked_post"]


async def checked_post(
    ctx: PagesContext, request: Request, receive: Receive, route: str, flow_id: str
) -> tuple[Session, dict[str, str]]:
    """The session and form of a POST that passed the checks above; :class:`BadRequest` if not."""
    if not same_origin(request.headers, ctx.paths.origin):
        log.warning("POST %s refused: cross-origin (Origin %r)", route, request.headers.get("origin"))
        raise BadRequest(403, "This form was not sent from this site. Nothing was changed.")
    form = await request.form(receive)
    session = await ctx.session(request)
    if session is None:
        raise BadRequest(403, "You are not signed in (or your session expired). Open the link again.")
    if not valid_csrf_token(session, route, flow_id, form.get("csrf")):
        log.warning(
            "POST %s refused: missing or wrong CSRF token (signed in as %r)", route, session.principal.key
        )
        raise BadRequest(403, "This form has expired. Reload the page and try again. Nothing was changed.")
    return session, form
