""":class:`ConnectPages`: the secure pages of the URL-mode kit, as one plain ASGI app.

Routing, method checks, the security headers on every response, and the last line of defence:
any exception becomes a generic error page (the traceback goes to the log, never to the browser).
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from mcp_elicit.connect.flows import (
    MAX_SESSION_LIFETIME,
    FlowStore,
    FlowStoreUnavailable,
    is_flow_id,
)
from mcp_elicit.connect.flows.urls import check_base_url
from mcp_elicit.connect.identity.principal import Principal
from mcp_elicit.connect.identity.urls import is_loopback_host
from mcp_elicit.connect.oauth.authorization import AuthorizationCodeGrant
from mcp_elicit.connect.oauth.provider import OAuthProvider
from mcp_elicit.connect.rate_limit import DEFAULT_PAGE_RATE_LIMIT, PageRateLimit, PageRateLimiter
from mcp_elicit.connect.vault import Revoker, Vault, VaultUnavailable
from mcp_elicit.state.key_file import KeyFile
from mcp_elicit.state.keys import KeyRing
from mcp_elicit.transport.asgi import Receive, Scope, Send
from mcp_elicit.transport.lifespan import acknowledge_lifespan

from . import views
from .connect import connect_callback, connect_page, connect_post
from .context import PagesContext, log
from .cookies import CookiePolicy
from .development_login import DevelopmentLogin
from .development_signin import development_login_page, development_login_post
from .headers import SecurityHeaders
from .login import login_callback, login_start, logout
from .oidc_login import OidcLogin
from .paths import PagePaths
from .request import MAX_QUERY, BadRequest, Request
from .response import Response, html_response
from .sealing import CookieSealer
from .secret import secret_page, secret_post
from .session import SessionCookies
from .templates import STYLESHEET

if TYPE_CHECKING:
    import httpx

__all__ = ["ConnectPages"]

_FLOW_ROUTE: Final = re.compile(r"/(connect|secret)/([^/]*)")
_CALLBACK_ROUTE: Final = re.compile(r"/oauth/([^/]*)/callback")
_MAX_PATH: Final = 1024
_MAX_SERVER_NAME: Final = 100

Handler = Callable[[], Awaitable[Response]]


class ConnectPages:
    """The pages behind URL-mode flows: sign-in, ``/connect/<id>``, ``/secret/<id>``, the OAuth
    callbacks and ``/done``. An ASGI app; its paths are relative to ``base_url``'s path.

    ``base_url``: where the pages are published (https; ``http://127.0.0.1:<port>`` /
    ``localhost`` / ``[::1]`` only with ``development=True``, which also drops ``Secure`` and the
    ``__Host-`` prefix from the cookies, and labels every page DEMO ONLY). ``login``: sign-in
    against the MCP authorization server (:class:`OidcLogin`; for a demo on this machine only,
    ``development=True``, the DEMO ONLY :class:`DevelopmentLogin`). ``flows``, ``vault``: the
    stores. ``providers``: the third-party providers by id, each registered with the redirect
    URI ``<base_url>/oauth/<id>/callback``. ``keys``: the server's key ring or key file (the cookies use a
    subkey of their own; with a key file it follows the file). ``server_name``: shown on the pages.
    ``http``: the client for the providers' token endpoints and JWKS. ``session_ttl``: seconds a
    sign-in lasts. ``rate_limit``: requests and failed requests (4xx) allowed per client address
    (:class:`~mcp_elicit.connect.rate_limit.PageRateLimit`; behind a reverse proxy, let the
    ASGI server take the address from the proxy), ``None`` for none. ``revokers``: how each
    provider's grants are revoked (default: RFC 7009 at its ``revocation_url``); a connection
    made again over an existing one revokes the earlier grant with it first.
    """

    def __init__(
        self,
        *,
        base_url: str,
        login: OidcLogin | DevelopmentLogin,
        flows: FlowStore,
        vault: Vault,
        providers: Mapping[str, OAuthProvider],
        keys: KeyRing | KeyFile,
        server_name: str,
        development: bool = False,
        http: httpx.AsyncClient | None = None,
        session_ttl: float = 3600,
        rate_limit: PageRateLimit | None = DEFAULT_PAGE_RATE_LIMIT,
        clock: Callable[[], float] = time.time,
        revokers: Mapping[str, Revoker] | None = None,
    ) -> None:
        paths = PagePaths.from_base_url(check_base_url(base_url, development=development))
        parts = urlsplit(paths.base_url)
        if development and not is_loopback_host(parts.hostname):
            raise ValueError(
                f"development=True is only for a base_url on this machine (127.0.0.1, localhost, [::1]), "
                f"not {base_url!r}"
            )
        if not isinstance(login, OidcLogin | DevelopmentLogin):
            raise TypeError("login must be an OidcLogin (or, for a local demo, a DevelopmentLogin)")
        if isinstance(login, DevelopmentLogin) and not development:
            # development=True is also what restricts base_url to loopback (checked above).
            raise ValueError(
                "DevelopmentLogin signs anyone in: it needs development=True and a base_url on this "
                "machine (127.0.0.1, localhost, [::1])"
            )
        if not isinstance(keys, KeyRing | KeyFile):
            raise TypeError("keys must be a KeyRing or a KeyFile")
        if not isinstance(server_name, str) or not server_name.strip() or len(server_name) > _MAX_SERVER_NAME:
            raise ValueError(f"server_name must be a non-empty name of at most {_MAX_SERVER_NAME} characters")
        if (
            isinstance(session_ttl, bool)
            or not isinstance(session_ttl, int | float)
            or not 60 <= session_ttl <= MAX_SESSION_LIFETIME
        ):
            raise ValueError(f"session_ttl must be between 60 and {MAX_SESSION_LIFETIME:.0f} seconds")
        for provider_id, provider in providers.items():
            if not isinstance(provider, OAuthProvider) or provider.id != provider_id:
                raise ValueError(f"providers[{provider_id!r}] must be an OAuthProvider with that id")
        for provider_id, revoker in (revokers or {}).items():
            if provider_id not in providers or not callable(revoker):
                raise ValueError(f"revokers[{provider_id!r}] must be a callable for a configured provider")
        self.development = development
        self._limiter = None if rate_limit is None else PageRateLimiter(rate_limit, clock)
        policy = CookiePolicy(secure=parts.scheme == "https")  # http happens only in loopback development
        sealer = CookieSealer(keys, clock=clock)
        oauth = {
            provider_id: AuthorizationCodeGrant(
                provider, paths.url(f"/oauth/{provider_id}/callback"), http=http, clock=clock
            )
            for provider_id, provider in providers.items()
        }
        self._ctx = PagesContext(
            paths=paths,
            chrome=views.Chrome(
                server_name=server_name.strip(), logout_action=paths.path("/logout"), demo=development
            ),
            flows=flows,
            vault=vault,
            providers=dict(providers),
            oauth=oauth,
            login=login,
            login_flow=(
                AuthorizationCodeGrant(login.provider, paths.url("/login/callback"), http=http, clock=clock)
                if isinstance(login, OidcLogin)
                else None
            ),
            sessions=SessionCookies(sealer, policy, float(session_ttl), clock),
            sealer=sealer,
            cookies=policy,
            http=http,
            clock=clock,
            revokers=dict(revokers or {}),
        )
        # Forms POST to us; only "Continue" then ends at a provider (form-action: SecurityHeaders).
        self._headers = SecurityHeaders.build(
            STYLESHEET, [p.authorize_url for p in providers.values()], development=development
        )

    @property
    def base_url(self) -> str:
        """The public URL the pages live under, without a trailing slash: every link and
        redirect URI starts with it."""
        return self._ctx.paths.base_url

    @property
    def session_cookie_name(self) -> str:
        """The sign-in cookie's name: ``__Host-mcp-elicit-session`` over https,
        ``mcp-elicit-session`` in loopback development over http."""
        return self._ctx.sessions.name

    def redirect_uri(self, provider_id: str) -> str:
        """The exact redirect URI to register at ``provider_id`` (``"login"`` flows excluded)."""
        return self._ctx.paths.url(f"/oauth/{provider_id}/callback")

    @property
    def login_redirect_uri(self) -> str:
        """The redirect URI to register at the sign-in provider."""
        return self._ctx.paths.url("/login/callback")

    def __repr__(self) -> str:
        return f"ConnectPages(base_url={self.base_url!r}, providers={sorted(self._ctx.providers)!r})"

    async def sign_out_everywhere(self, principal: str | Principal) -> None:
        """Void every pages session of ``principal`` created until now, on every instance that
        shares the flow store (an account closed or compromised, a lost device)."""
        await self._ctx.flows.revoke_sessions_of(principal)

    # ------------------------------------------------------------------------------ ASGI

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await acknowledge_lifespan(receive, send)
            return
        if scope["type"] != "http":
            return  # websockets: not ours; closing without accepting refuses them
        limiter = self._limiter
        if limiter is None:
            response = await self._respond(scope, receive)
        else:
            client = scope.get("client")
            address = str(client[0]) if client else None
            wait = limiter.admit(address)
            if wait is not None:
                response = self._too_many_requests(wait)
            else:
                response = await self._respond(scope, receive)
                if 400 <= response.status < 500:
                    limiter.failed(address)
        await response.send(send, self._headers.to_provider if response.to_provider else self._headers.strict)

    def _too_many_requests(self, wait: int) -> Response:
        page = views.message(
            self._ctx.chrome,
            429,
            "Too many requests",
            "This device sent too many requests. Please wait a minute, then try again.",
        )
        return html_response(page, (b"retry-after", str(wait).encode("ascii")))

    async def _respond(self, scope: Scope, receive: Receive) -> Response:
        ctx = self._ctx
        try:
            request = Request.from_scope(scope)
            handler = self._route(request, receive)
            return await handler() if handler is not None else ctx.not_found()
        except BadRequest as exc:
            page = views.message(ctx.chrome, exc.status, "Request refused", exc.message)
            if exc.status == 408:  # the rest of the body may never come: do not wait for it
                return html_response(page, (b"connection", b"close"))
            return html_response(page)
        except (FlowStoreUnavailable, VaultUnavailable) as exc:
            log.error("pages: storage unavailable: %s", exc)
            page = views.message(
                ctx.chrome, 503, "Try again later", "The service is busy. Please try again in a minute."
            )
            return html_response(page)
        except Exception:
            log.exception("pages: unexpected error")
            page = views.message(
                ctx.chrome, 500, "Something went wrong", "Please go back to your app and try again."
            )
            return html_response(page)

    def _route(self, request: Request, receive: Receive) -> Handler | None:
        ctx = self._ctx
        if len(request.path) > _MAX_PATH or len(request.raw_query) > MAX_QUERY:
            raise BadRequest(414, "The address is too long.")
        relative = ctx.paths.relative(request.path, request.root_path)
        if relative is None:
            return None
        method = request.method

        def allow(*methods: str) -> None:
            if method not in methods:
                raise _MethodNotAllowed(methods)

        try:
            match = _FLOW_ROUTE.fullmatch(relative)
            if match is not None:
                kind, flow_id = match.groups()
                allow("GET", "POST")
                if not is_flow_id(flow_id):
                    return None  # the same 404 as an unknown id
                if kind == "connect":
                    if method == "GET":
                        return lambda: connect_page(ctx, request, flow_id)
                    return lambda: connect_post(ctx, request, receive, flow_id)
                if method == "GET":
                    return lambda: secret_page(ctx, request, flow_id)
                return lambda: secret_post(ctx, request, receive, flow_id)
            match = _CALLBACK_ROUTE.fullmatch(relative)
            if match is not None:
                allow("GET")
                provider_id = match.group(1)
                return lambda: connect_callback(ctx, request, provider_id)
            if relative == "/login" and isinstance(ctx.login, DevelopmentLogin):
                allow("GET", "POST")
                if method == "GET":
                    return lambda: _sync(development_login_page(ctx, request))
                return lambda: development_login_post(ctx, request, receive)
            if relative == "/login":
                allow("GET")
                return lambda: _sync(login_start(ctx, request))
            if relative == "/login/callback" and ctx.login_flow is None:
                return None  # no OpenID Connect, no callback
            if relative == "/login/callback":
                allow("GET")
                return lambda: login_callback(ctx, request)
            if relative == "/logout":
                allow("POST")
                return lambda: logout(ctx, request, receive)
            if relative == "/done":
                allow("GET")
                return lambda: _sync(html_response(views.done(ctx.chrome)))
        except _MethodNotAllowed as exc:
            allowed = ", ".join(exc.methods)
            page = views.message(ctx.chrome, 405, "Not allowed", "This page cannot be used that way.")
            response = html_response(page, (b"allow", allowed.encode("ascii")))
            return lambda: _sync(response)
        return None


class _MethodNotAllowed(Exception):
    def __init__(self, methods: tuple[str, ...]) -> None:
        super().__init__(methods)
        self.methods = methods


async def _sync(response: Response) -> Response:
    return response
