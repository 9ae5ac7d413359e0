"""What every handler shares: configuration, the stores, cookies, and the checks they all make.

The owner check lives here, once: the flow is read with :meth:`FlowStore.get` (so an other-owner
visit can be told apart and logged) and every other-owner request, whatever the flow's status, gets
the same refusal page. That is the phishing defence of the spec: Alice's link opened by Bob.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

from mcp_elicit.connect.flows import (
    FlowNotFound,
    FlowStateConflict,
    FlowStore,
    PendingFlow,
)
from mcp_elicit.connect.oauth.authorization import AuthorizationCodeGrant
from mcp_elicit.connect.oauth.errors import AuthorizationFailed
from mcp_elicit.connect.oauth.pending import PendingAuthorization
from mcp_elicit.connect.oauth.provider import OAuthProvider
from mcp_elicit.connect.vault import Revoker, Vault
from mcp_elicit.transport.asgi import Header

from . import views
from .cookies import CookiePolicy
from .csrf import csrf_token
from .development_login import DevelopmentLogin
from .oidc_login import OidcLogin
from .paths import PagePaths
from .request import Request
from .response import Response, html_response
from .sealing import CookieSealer
from .session import Session, SessionCookies
from .templates import Page

if TYPE_CHECKING:
    import httpx

__all__ = ["MAX_TRANSACTIONS", "TRANSACTION_TTL", "PagesContext", "Transaction", "log"]

log = logging.getLogger("mcp_elicit.connect.pages")

TRANSACTION_TTL: Final = 600
"""Seconds a sign-in or connection may spend at the provider (the flows' own maximum)."""

MAX_TRANSACTIONS: Final = 4
"""Transaction cookies of one kind a browser keeps: starting one more clears the oldest. Those of
sign-ins and connections abandoned at the provider would otherwise pile up for 10 minutes each,
until the ``Cookie`` header outgrows what the pages (or the proxy in front) read."""


@dataclass(frozen=True, slots=True)
class Transaction:
    """An OAuth round trip in progress, as kept in its sealed cookie."""

    cookie: str
    pending: PendingAuthorization
    data: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class PagesContext:
    paths: PagePaths
    chrome: views.Chrome
    flows: FlowStore
    vault: Vault
    providers: Mapping[str, OAuthProvider]
    oauth: Mapping[str, AuthorizationCodeGrant]  # one per provider: its exact redirect URI
    login: OidcLogin | DevelopmentLogin
    login_flow: AuthorizationCodeGrant | None  # OpenID Connect only
    sessions: SessionCookies
    sealer: CookieSealer
    cookies: CookiePolicy
    http: httpx.AsyncClient | None = None
    clock: Callable[[], float] = time.time
    revokers: Mapping[str, Revoker] = field(default_factory=dict)  # by provider id

    # -------------------------------------------------------------------- pages

    def page(self, page: Page, *headers: Header) -> Response:
        return html_response(page, *headers)

    def not_found(self) -> Response:
        return html_response(views.not_found(self.chrome))

    def login_href(self, next_path: str) -> str:
        return f"{self.paths.path('/login')}?next={quote(next_path, safe='/')}"

    def logout_token(self, session: Session) -> str:
        return csrf_token(session, "logout")

    def revoker(self, provider_id: str) -> Revoker:
        """How ``provider_id``'s grants are revoked: the one given, else RFC 7009 at its
        ``revocation_url`` (a provider without one is only forgotten locally)."""
        found = self.revokers.get(provider_id)
        if found is not None:
            return found
        from mcp_elicit.connect.oauth.revoke import token_revoker

        return token_revoker(self.providers[provider_id], http=self.http)

    # -------------------------------------------------------------------- sessions

    async def session(self, request: Request) -> Session | None:
        """The browser's session, or ``None``: no cookie, a bad or expired one, or one signed out
        (this session, or every session of its principal) in the flow store. A store that
        cannot answer raises :class:`FlowStoreUnavailable` (the 503 page): fail closed."""
        session = self.sessions.read(request)
        if session is None:
            return None
        if await self.flows.session_revoked(session.session_id, session.principal, session.created):
            log.warning(
                "a signed-out session of %r was presented (an old or copied cookie); treated as signed out",
                session.principal.key,
            )
            return None
        return session

    async def end_session(self, session: Session) -> None:
        """Void ``session`` in the flow store (any copy of its cookie too) until it expires."""
        await self.flows.revoke_session(session.session_id, session.expires)

    async def signed_out_page(self, kind: str, flow_id: str, purpose: str) -> Response:
        """A visitor without a session: "Sign in" for a live flow of this kind, else the one 404.
        Changes nothing (link unfurlers fetch these pages too)."""
        try:
            flow = await self.flows.get(flow_id)
        except FlowNotFound:
            return self.not_found()
        if flow.kind != kind or flow.status == "expired":
            return self.not_found()
        path = self.paths.flow_path(kind, flow_id)
        return self.page(views.sign_in(self.chrome, self.login_href(path), purpose))

    # -------------------------------------------------------------------- the owner check

    async def owned_flow(
        self, session: Session, flow_id: str, kind: str, action: str
    ) -> PendingFlow | Response:
        """The flow if ``session`` is its owner, else the response to send instead.

        Unknown, malformed and wrong-kind ids are the generic 404. Another owner's flow, in any
        status, is the refusal page and a WARNING naming both principals."""
        try:
            flow = await self.flows.get(flow_id)
        except FlowNotFound:
            return self.not_found()
        if flow.kind != kind:
            return self.not_found()
        if flow.owner != session.principal.key:
            log.warning(
                "SECURITY: %s of flow %s by another account refused: owner %r, signed in as %r "
                "(a link was opened by someone other than the user it was made for)",
                action,
                flow.fingerprint,
                flow.owner,
                session.principal.key,
            )
            path = self.paths.flow_path(kind, flow_id)
            return html_response(
                views.other_account(self.chrome, session.identity, self.logout_token(session), path)
            )
        return flow

    async def startable_flow(
        self, session: Session, flow_id: str, kind: str, action: str
    ) -> PendingFlow | Response:
        """:meth:`owned_flow`, and its form still usable (:attr:`PendingFlow.can_start`: pending,
        or a connection left at the provider; a secret only while pending): else the page for
        its state."""
        owned = await self.owned_flow(session, flow_id, kind, action)
        if isinstance(owned, Response) or owned.can_start:
            return owned
        return self.state_page(owned.status)

    async def owner_view(
        self, request: Request, kind: str, flow_id: str, purpose: str
    ) -> tuple[Session, PendingFlow] | Response:
        """What a flow's GET page shows: the owner's session and the flow, still usable
        (:meth:`startable_flow`); else the
        response to send instead ("Sign in" to ``purpose``, the 404, the refusal page, the page
        for the flow's state). Changes nothing."""
        session = await self.session(request)
        if session is None:
            return await self.signed_out_page(kind, flow_id, purpose)
        owned = await self.startable_flow(session, flow_id, kind, "view")
        if isinstance(owned, Response):
            return owned
        return session, owned

    async def start_attempt(self, session: Session, flow_id: str) -> PendingFlow | Response:
        """A new attempt of the owner's flow: ``flows.begin`` if it is pending (pending → in
        progress: of two tabs exactly one wins), else ``flows.restart`` if it is a connection in
        progress (Continue pressed again after the provider's page was left without an answer;
        the store refuses to restart a secret, which is in progress only while it is being saved,
        so the other tab gets the page for a flow in use). Every earlier attempt's callback is
        refused from then on, so of two tabs only the one that pressed Continue last can finish.
        The flow, or the response to send instead (the 404, or the page for its state: a callback
        running, a flow ended)."""
        try:
            try:
                return await self.flows.begin(flow_id, session.principal)
            except FlowStateConflict as exc:
                if exc.status != "in_progress":
                    raise
            return await self.flows.restart(flow_id, session.principal)
        except FlowNotFound:
            return self.not_found()
        except FlowStateConflict as exc:
            return self.state_page(exc.status)

    def owner_frame(self, session: Session, flow: PendingFlow) -> views.OwnerFrame:
        """What frames the form on ``flow``'s page for its owner, signed in as ``session``."""
        return views.OwnerFrame(
            identity=session.identity,
            logout_token=self.logout_token(session),
            path=self.paths.flow_path(flow.kind, flow.id),
            token=csrf_token(session, flow.kind, flow.id),
            requester=views.Requester(client=flow.client, server_name=self.chrome.server_name),
        )

    def state_page(self, status: str) -> Response:
        """What the owner sees for a flow that is not pending any more."""
        if status in ("in_progress", "redeeming"):
            return self.page(views.in_use(self.chrome))
        if status == "expired":
            return self.not_found()
        if status == "declined":
            return self.page(views.was_declined(self.chrome))
        if status == "failed":
            return self.page(views.ended_unfinished(self.chrome))
        return self.page(views.already_used(self.chrome))

    # -------------------------------------------------------------------- transaction cookies

    def seal_transaction(
        self, request: Request, kind: str, pending: PendingAuthorization, **data: Any
    ) -> list[Header]:
        """The cookie of a new ``kind`` transaction, and the clearing of this browser's oldest."""
        return self.transaction_cookies(
            request, kind, pending.state, {"pa": pending.to_dict(), **data}, TRANSACTION_TTL
        )

    def transaction_cookies(
        self, request: Request, kind: str, key: str, payload: Mapping[str, Any], ttl: int
    ) -> list[Header]:
        """``Set-Cookie`` headers for a new ``kind`` transaction cookie named after ``key``, and
        ``Max-Age=0`` ones for the ``kind`` cookies ``request`` carries beyond the newest
        :data:`MAX_TRANSACTIONS` ``- 1`` (those that no longer open here go first)."""
        name = self.cookies.transaction(kind, key)
        headers = [self.cookies.set(name, self.sealer.seal(name, payload, ttl), ttl)]
        # Newest first: by sealed expiry, then by place (browsers send the oldest cookies first).
        held: list[tuple[float, int, str]] = []
        for place, other in enumerate(self.cookies.transactions(kind, request.cookie_names())):
            opened = (self.sealer.open(other, value) for value in request.cookies(other))
            expiries = [float(sealed["exp"]) for sealed in opened if sealed is not None]
            held.append((max(expiries, default=0.0), place, other))  # 0.0: unreadable, cleared first
        held.sort(reverse=True)
        headers += [self.cookies.clear(other) for _, _, other in held[MAX_TRANSACTIONS - 1 :]]
        return headers

    def open_transaction(self, request: Request, kind: str, state: str | None) -> Transaction | None:
        """The transaction whose cookie matches the callback's ``state``, or ``None`` (no
        state, no cookie: already used, expired, or started in another browser; or tampered)."""
        if not state or len(state) > 512:
            return None
        name = self.cookies.transaction(kind, state)
        for value in request.cookies(name):
            payload = self.sealer.open(name, value)
            if payload is None:
                continue
            try:
                pending = PendingAuthorization.from_dict(payload.get("pa"))
            except AuthorizationFailed:  # sealed by us but not a usable transaction
                continue
            return Transaction(name, pending, payload)
        return None
