"""Capturing a secret (an API key, a password): ``/secret/<id>``.

* ``GET``: no side effects; signed out → "Sign in"; the owner → who is signed in, who asks, what
  is asked (the flow's description, else the secret's name) and a password field with "Save";
  anyone else → the refusal page.
* ``POST``: the checks of :mod:`.guards`; Decline (``choice=decline``) goes to :mod:`.decline`,
  whatever the value field holds (it is not read). Save: the owner check, the value (stripped
  of surrounding whitespace, non-empty, at most :data:`MAX_SECRET_CHARS`, with no control or
  invisible character; checked *before* the flow is begun, so a typo costs nothing), then
  ``begin`` (atomic), ``vault.put_secret(owner, <secret name>, value)``, ``complete`` and a 303
  to ``/done``. The value is never logged, echoed or put in a page, not even when it is
  refused.
"""

from __future__ import annotations

from typing import Final

from mcp_elicit.connect.flows import FlowNotFound, FlowStateConflict, PendingFlow
from mcp_elicit.schema.text import bad_name_char
from mcp_elicit.transport.asgi import Receive

from . import views
from .context import PagesContext, log
from .decline import decline, declines
from .guards import checked_post
from .request import Request
from .response import Response, redirect
from .session import Session

__all__ = ["MAX_SECRET_CHARS", "secret_page", "secret_post"]

MAX_SECRET_CHARS: Final = 4096


def _form(ctx: PagesContext, session: Session, flow: PendingFlow, problem: str | None = None) -> Response:
    frame = ctx.owner_frame(session, flow)
    return ctx.page(
        views.secret_form(
            ctx.chrome, frame, name=flow.provider, description=flow.description, problem=problem
        )
    )


async def secret_page(ctx: PagesContext, request: Request, flow_id: str) -> Response:
    viewed = await ctx.owner_view(request, "secret", flow_id, "enter this information")
    if isinstance(viewed, Response):
        return viewed
    session, owned = viewed
    return _form(ctx, session, owned)


async def secret_post(ctx: PagesContext, request: Request, receive: Receive, flow_id: str) -> Response:
    session, form = await checked_post(ctx, request, receive, "secret", flow_id)
    if declines(form):
        return await decline(ctx, session, "secret", flow_id)
    owned = await ctx.startable_flow(session, flow_id, "secret", "save")  # pending, for a secret
    if isinstance(owned, Response):
        return owned
    value = form.get("value", "").strip()
    if not value:
        return _form(ctx, session, owned, "Enter a value.")
    if len(value) > MAX_SECRET_CHARS:
        return _form(ctx, session, owned, f"That is too long (at most {MAX_SECRET_CHARS} characters).")
    # Controls (C0, DEL, C1), invisible format characters (zero-width, bidi, BOM), surrogates,
    # line separators: none is part of a key, and pasted along with one it would be stored inside
    # it, unseen. The rule that keeps such characters out of form keys.
    if bad_name_char(value) is not None:
        return _form(
            ctx,
            session,
            owned,
            "That contains invisible or control characters, which cannot be part of a key.",
        )
    flow = await ctx.start_attempt(session, flow_id)
    if isinstance(flow, Response):
        return flow
    try:
        await ctx.vault.put_secret(flow.owner, flow.provider, value)
    except Exception:
        await ctx.flows.fail(flow_id, "The secret could not be stored.", owner=flow.owner)
        raise
    try:
        await ctx.flows.complete(flow_id, owner=flow.owner)
    except (FlowNotFound, FlowStateConflict) as exc:
        log.info("flow %s: secret stored but the flow could not complete (%r)", flow.fingerprint, exc)
    log.info("flow %s: secret %r stored for %r", flow.fingerprint, flow.provider, flow.owner)
    return redirect(ctx.paths.path("/done"))
