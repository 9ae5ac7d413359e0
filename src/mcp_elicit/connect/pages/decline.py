"""Decline on the owner's page: ``POST /connect/<id>`` or ``/secret/<id>`` with ``choice=decline``.

The POST has passed the same checks as Continue or Save (:mod:`.guards`: same origin, a signed-in
session, this session's CSRF token for this action on this flow) and the owner check. Then the
flow starts a new attempt as Continue does (``begin`` from pending; ``restart`` for a connection
in progress, whose page offers Decline again after the provider's page was left), which refuses
every earlier attempt's callback, and at once goes ``in_progress → declined``
(``fail(declined=True)``). A connection whose callback is running (claimed) is not declined. The
client's next retry reads ``declined`` and the tool's ``ctx.connection`` / ``ctx.secret`` ends
with "You declined …" (see :func:`~mcp_elicit.connect.flows.check_for_retry`). A flow that can no
longer start (declined already, completed, a secret being saved) is answered with the page for its
state and left as it is, so a replayed Decline changes nothing and a declined flow cannot be
continued.
"""

from __future__ import annotations

from mcp_elicit.connect.flows import FlowKind, FlowNotFound, FlowStateConflict

from . import views
from .context import PagesContext, log
from .request import BadRequest
from .response import Response
from .session import Session

__all__ = ["decline", "declines"]


def declines(form: dict[str, str]) -> bool:
    """Whether the form was sent with Decline (``choice=decline``) rather than Continue or Save
    (``choice=continue``, or no ``choice``: the form before Decline existed); any other
    ``choice`` is refused (400) before anything is read or changed."""
    pressed = form.get("choice", "continue")
    if pressed not in ("continue", "decline"):
        raise BadRequest(400, "This form was not sent by this page. Nothing was changed.")
    return pressed == "decline"


async def decline(ctx: PagesContext, session: Session, kind: FlowKind, flow_id: str) -> Response:
    """End the owner's pending ``kind`` flow as declined (see the module docstring)."""
    owned = await ctx.owned_flow(session, flow_id, kind, "decline")
    if isinstance(owned, Response):
        return owned
    started = await ctx.start_attempt(session, flow_id)
    if isinstance(started, Response):
        return started
    try:
        flow = await ctx.flows.fail(flow_id, None, owner=started.owner, declined=True)
    except FlowNotFound:
        return ctx.not_found()
    except FlowStateConflict as exc:
        return ctx.state_page(exc.status)
    log.info("flow %s: declined on the page by %r", flow.fingerprint, flow.owner)
    if kind == "connect":
        provider = ctx.providers.get(flow.provider)
        title = provider.display_name if provider is not None else flow.provider
        return ctx.page(views.declined_here(ctx.chrome, f"connecting your {title} account", "connected"))
    what = f"the request for “{flow.description or flow.provider}”"
    return ctx.page(views.declined_here(ctx.chrome, what, "stored"))
