""":class:`ConnectKit`: identity, vault, pending flows and pages, wired into one server.

.. code-block:: python

    kit = ConnectKit(
        base_url="https://mcp.example.com",
        identity=JWTIdentity(issuer=..., jwks_url=..., audience="https://mcp.example.com/mcp"),
        login=OidcLogin(mcp_authorization_server),       # sign-in for the pages (same issuer)
        vault=Vault.sqlite("vault.db"),
    )
    kit.oauth_provider("github", authorize_url=..., token_url=..., client_id=..., client_secret=...,
                       scopes=["repo"], title="GitHub")
    app = Server("repos", connect=kit)

    @app.tool()
    async def list_repos(ctx: Context) -> list[str]:
        github = await ctx.connection("github", reason="list your repositories")
        return await fetch_repos(github.access_token)

    app.run_http(port=8000)          # or uvicorn on app.asgi(): one ASGI app for all of it

What :meth:`Server.asgi <mcp_elicit.server.Server.asgi>` serves with a kit (all under
``base_url``'s path):

* ``/mcp``: the MCP endpoint; every request needs a valid access token (``401`` with
  ``WWW-Authenticate: Bearer resource_metadata="..."`` otherwise); ``ctx.principal`` is
  ``"<iss>|<sub>"`` of that token;
* ``/.well-known/oauth-protected-resource[/mcp]``: the RFC 9728 metadata (its authorization
  server is the identity's issuer, or ``authorization_servers=``);
* ``/connect/<id>``, ``/secret/<id>``, ``/login``, ``/login/callback``, ``/logout``,
  ``/oauth/<provider>/callback``, ``/done``: the pages
  (:class:`~mcp_elicit.connect.pages.ConnectPages`). Without ``login`` they answer ``503``.

Defaults: ``flows=None`` keeps pending flows in SQLite next to an SQLite vault (``vault.db`` →
``vault-flows.db``; in memory for an in-memory vault); with a PostgreSQL vault pass
``flows=PostgresFlowStore(dsn)`` (every instance must see the same flows). ``hold`` (default 10 s,
at most 60) is how long a retry waits for the browser step before input-required is re-issued
with the same URL. How the rounds work: :mod:`mcp_elicit.connect.engine`.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from mcp_elicit.connect.flows import FlowError, FlowNotFound, FlowStore, check_base_url, flow_id_in
from mcp_elicit.connect.identity import (
    DevelopmentIdentity,
    Principal,
    ProtectedResourceMetadataApp,
    Verifier,
    authenticator,
    protected_resource_metadata,
    resource_metadata_url,
)
from mcp_elicit.connect.oauth.provider import OAuthProvider
from mcp_elicit.connect.rate_limit import DEFAULT_PAGE_RATE_LIMIT, PageRateLimit
from mcp_elicit.connect.vault import Connection, Refresher, RefreshResult, Revoker, Vault
from mcp_elicit.server.auth import Authenticate
from mcp_elicit.server.errors import ToolError
from mcp_elicit.state import KeyFile, KeyRing
from mcp_elicit.transport.asgi import Receive, Scope, Send, send_text
from mcp_elicit.transport.http_app import HttpApp
from mcp_elicit.wire.hosts import is_loopback_host

if TYPE_CHECKING:
    from mcp_elicit.connect.pages import ConnectPages, DevelopmentLogin, OidcLogin
    from mcp_elicit.server.app import Server
    from mcp_elicit.server.context import Context

__all__ = ["MAX_HOLD", "PAGE_ROUTES", "ConnectApp", "ConnectKit"]

_log = logging.getLogger("mcp_elicit.connect")

MAX_HOLD: Final = 60.0
"""The longest a retry may be held waiting for the browser step (clients time requests out)."""
PAGE_ROUTES: Final = ("/connect/", "/secret/", "/login", "/logout", "/oauth/", "/done")
"""Path prefixes (under ``base_url``'s path) that belong to the pages."""

_KNOWN_TITLES: Final = {
    "github": "GitHub",
    "gitlab": "GitLab",
    "google": "Google",
    "microsoft": "Microsoft",
    "slack": "Slack",
    "linkedin": "LinkedIn",
    "atlassian": "Atlassian",
    "notion": "Notion",
    "dropbox": "Dropbox",
}

_PLAIN_HEADERS: Final = ((b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"))
_PAGES_MISSING: Final = (
    b"The sign-in pages of this server are not set up (ConnectKit(login=...) is missing), so this "
    b"link cannot be completed here. Ask the server's operator.\n"
)


class ConnectKit:
    """The URL-mode kit of one MCP server (see the module docstring).

    ``base_url``: the public origin (and optional path) of the server: its root, not its MCP
    endpoint (one ending with ``mcp_path`` is refused); pages live under it and flow URLs are
    ``<base_url>/connect/<id>``. ``identity``: verifies the MCP access tokens (a
    :class:`~mcp_elicit.connect.identity.JWTIdentity`, or any
    :class:`~mcp_elicit.connect.identity.Verifier`). ``login``: the pages' sign-in
    (:class:`~mcp_elicit.connect.pages.OidcLogin` at the same issuer; in a local demo, the
    DEMO ONLY :class:`~mcp_elicit.connect.pages.DevelopmentLogin`). ``vault``: tokens and
    secrets. ``flows``: pending URL flows (default above). ``hold``: seconds a retry is held
    waiting for the browser step. ``development``: allow ``http://`` on loopback (and a
    :class:`~mcp_elicit.connect.identity.DevelopmentIdentity`). ``mcp_path``: where the MCP
    endpoint is (``resource`` = ``base_url + mcp_path``, the audience tokens must carry).
    ``authorization_servers``: for the metadata (default: the identity's ``issuer``).
    ``keys``: the key ring or key file for the pages' cookies (default: the server's state keys,
    its key file when it has one; the pages derive a subkey, which follows a key file).
    ``page_rate_limit``: requests and failed (4xx) requests the pages allow per client address
    (:class:`~mcp_elicit.connect.rate_limit.PageRateLimit`), ``None`` for none.
    ``clock``: wall-clock seconds, for everything the kit dates: its checks of a flow's expiry, the
    default flow store, the pages (cookies, transactions, rate limits). A store given with
    ``flows=`` keeps its own.
    """

    def __init__(
        self,
        *,
        base_url: str,
        identity: Verifier,
        vault: Vault,
        login: OidcLogin | DevelopmentLogin | None = None,
        flows: FlowStore | None = None,
        hold: float = 10.0,
        development: bool = False,
        mcp_path: str = "/mcp",
        authorization_servers: Sequence[str] | None = None,
        scopes_supported: Sequence[str] | None = None,
        resource_name: str | None = None,
        keys: KeyRing | KeyFile | None = None,
        page_rate_limit: PageRateLimit | None = DEFAULT_PAGE_RATE_LIMIT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.base_url = check_base_url(base_url, development=development)
        self.development = bool(development)
        if self.development and not is_loopback_host(urlsplit(self.base_url).hostname):
            # Development mode trusts a demo identity: never on an address others can reach.
            raise ValueError(
                "development=True is only for a base_url on this machine (127.0.0.1, localhost, [::1]), "
                f"not {base_url!r}"
            )
        if not isinstance(identity, Verifier):
            raise TypeError("identity must be a Verifier (e.g. JWTIdentity)")
        if isinstance(identity, DevelopmentIdentity) and not development:
            raise ValueError("DevelopmentIdentity trusts everyone: it needs ConnectKit(development=True)")
        if login is not None and not development:
            from mcp_elicit.connect.pages import DevelopmentLogin  # the pages serve a login anyway

            if isinstance(login, DevelopmentLogin):
                raise ValueError("DevelopmentLogin signs anyone in: it needs ConnectKit(development=True)")
        if not isinstance(vault, Vault):
            raise TypeError("vault must be a Vault (Vault.sqlite(...) or Vault.postgres(...))")
        if isinstance(hold, bool) or not isinstance(hold, int | float) or not math.isfinite(hold):
            raise ValueError("hold must be a number of seconds")
        if not 0 <= hold <= MAX_HOLD:
            raise ValueError(f"hold must be between 0 and {MAX_HOLD:g} seconds")
        if not isinstance(mcp_path, str) or not mcp_path.startswith("/") or mcp_path.rstrip("/") == "":
            raise ValueError("mcp_path must be a path such as '/mcp'")
        _check_root(self.base_url, mcp_path.rstrip("/"))
        if keys is not None and not isinstance(keys, KeyRing | KeyFile):
            raise TypeError("keys must be a KeyRing or a KeyFile")
        if page_rate_limit is not None and not isinstance(page_rate_limit, PageRateLimit):
            raise TypeError("page_rate_limit must be a PageRateLimit (or None for no limits)")
        self.identity = identity
        self.vault = vault
        self.login = login
        self.flows: FlowStore = flows if flows is not None else _default_flows(vault, clock)
        self.hold = float(hold)
        self.mcp_path = mcp_path.rstrip("/")
        self.resource = self.base_url + self.mcp_path
        self.keys = keys
        self.page_rate_limit = page_rate_limit
        self.clock = clock
        # How many retries of each principal are being held waiting for the browser step.
        self.held_retries: dict[str, int] = {}
        # Set by Server.run_stdio(): no request will carry an identity (see serving_over_stdio).
        self._over_stdio = False
        self._providers: dict[str, OAuthProvider] = {}
        self._refreshers: dict[str, Refresher] = {}
        self._revokers: dict[str, Revoker] = {}
        self._metadata = self._build_metadata(authorization_servers, scopes_supported, resource_name)
        self._authenticate = self._build_authenticate()

    # ------------------------------------------------------------------------------ the extension
    # What Server(connect=kit) calls (mcp_elicit.server.extension.Extension): ctx.connection and
    # ctx.secret run their rounds in connect/engine.py, on the Context's extension point.

    async def connection(
        self, ctx: Context, provider: str, scopes: Iterable[str] | None, reason: str | None
    ) -> Connection:
        self._refuse_over_stdio(ctx, "Connecting an account")
        from mcp_elicit.connect.engine import obtain_connection

        return await obtain_connection(ctx, self, provider, scopes, reason)

    async def secret(self, ctx: Context, name: str, description: str, message: str | None) -> str:
        self._refuse_over_stdio(ctx, "Entering a secret")
        from mcp_elicit.connect.engine import obtain_secret

        return await obtain_secret(ctx, self, name, description, message)

    def serving_over_stdio(self) -> None:
        """Called by :meth:`Server.run_stdio() <mcp_elicit.server.Server.run_stdio>`: this kit's
        server answers over stdio, where no request carries an access token (and no page is
        served), so ``ctx.connection`` / ``ctx.secret`` refuse, naming the transport."""
        self._over_stdio = True

    def serving_over_http(self, host: str, port: int, *, tls: bool) -> None:
        """Called by :meth:`Server.run_http() <mcp_elicit.server.Server.run_http>` before it
        listens. In development mode the kit trusts a demo identity and sign-in, so it may listen
        on this machine only (``ValueError`` otherwise; a check of ``base_url`` alone let
        ``host="0.0.0.0"`` through). And there, where no proxy stands between, a ``base_url``
        whose scheme or port is not what is served gets a warning: every link sent would fail."""
        if not self.development:
            return  # behind a proxy the public base_url rightly differs from the listening address
        if not (isinstance(host, str) and is_loopback_host(host.strip("[]"))):
            raise ValueError(
                f"ConnectKit(development=True) serves this machine only: run_http(host={host!r}) "
                "would let anyone who reaches it sign in as anyone; listen on 127.0.0.1, localhost "
                "or ::1"
            )
        base = urlsplit(self.base_url)
        served = f"{'https' if tls else 'http'}://{host}:{port}"
        if base.scheme == "https" and not tls:
            _log.warning(
                "base_url %s is https, but run_http serves plain http at %s: the links the kit "
                "sends will not load (use http:// in development)",
                self.base_url,
                served,
            )
        elif port != 0 and (base.port or (443 if base.scheme == "https" else 80)) != port:
            _log.warning(
                "base_url %s names another port than run_http listens on (%s): the links the kit "
                "sends go where nothing answers (give both the same port)",
                self.base_url,
                served,
            )

    def _refuse_over_stdio(self, ctx: Context, what: str) -> None:
        # Over stdio the missing identity is the transport's doing, not a missing identity=
        # (which the engine's own refusal would suggest configuring).
        if self._over_stdio and ctx.principal is None:
            raise ToolError(
                f"{what} needs a signed-in user, and this server runs over stdio, where requests "
                "carry no identity: the URL-mode kit (ConnectKit) works over HTTP only; serve it "
                "with app.run_http() or app.asgi()."
            )

    async def url_step_completed(self, url: str, principal: str | None) -> bool | None:
        """Whether the flow behind ``url`` completed for ``principal`` (its owner); ``None`` for
        a URL that is no flow link of this kit. ``False`` when the store cannot say: the client
        is then not told, rather than told wrongly."""
        flow_id = flow_id_in(self.base_url, url)
        if flow_id is None:
            return None
        try:
            flow = await self.flows.get(flow_id)
        except FlowNotFound:
            return False
        except FlowError as exc:
            _log.warning("whether a flow completed could not be read: %s", exc)
            return False
        return flow.owner == principal and flow.status == "completed"

    async def sign_out_everywhere(self, principal: str | Principal) -> None:
        """Void every pages session of ``principal`` (``"issuer|subject"`` or a
        :class:`~mcp_elicit.connect.identity.principal.Principal`) created until now, on every
        instance sharing the flow store: after an account is closed or a device lost. Their MCP
        access tokens are the authorization server's to revoke."""
        await self.flows.revoke_sessions_of(principal)

    def __repr__(self) -> str:
        return (
            f"ConnectKit(base_url={self.base_url!r}, identity={self.identity!r}, vault={self.vault!r}, "
            f"flows={self.flows!r}, providers={sorted(self._providers)!r})"
        )

    # ------------------------------------------------------------------------------ providers

    def oauth_provider(
        self,
        provider: str | OAuthProvider,
        *,
        authorize_url: str | None = None,
        token_url: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        scopes: Iterable[str] = (),
        refresher: Refresher | None = None,
        revoker: Revoker | None = None,
        **options: Any,
    ) -> OAuthProvider:
        """Register a third-party OAuth provider for ``ctx.connection(id)`` and the pages.

        Give an :class:`OAuthProvider`, or its id and settings (``authorize_url``, ``token_url``,
        ``client_id``, ``client_secret``, ``scopes``, and any other :class:`OAuthProvider` field
        in ``options``: ``title``, ``revocation_url``, ``issuer``...). Register the redirect URI
        ``<base_url>/oauth/<id>/callback`` at the provider. ``refresher`` / ``revoker`` replace
        the standard refresh-token grant and RFC 7009 revocation for providers that differ.
        Returns the provider.
        """
        if isinstance(provider, OAuthProvider):
            if authorize_url or token_url or client_id or client_secret or tuple(scopes) or options:
                raise TypeError("give an OAuthProvider or its settings, not both")
            configured = provider
        else:
            if authorize_url is None or token_url is None or client_id is None:
                raise _missing_settings(
                    provider, authorize_url=authorize_url, token_url=token_url, client_id=client_id
                )
            if isinstance(scopes, str):
                raise TypeError("scopes must be a list of scope tokens, not a str")
            configured = OAuthProvider(
                id=provider,
                authorize_url=authorize_url,
                token_url=token_url,
                client_id=client_id,
                client_secret=client_secret,
                scopes=tuple(scopes),
                **options,
            )
        if configured.id in self._providers:
            raise ValueError(f"an OAuth provider named {configured.id!r} is already registered")
        self._providers[configured.id] = configured
        if refresher is not None:
            self._refreshers[configured.id] = refresher
        if revoker is not None:
            self._revokers[configured.id] = revoker
        return configured

    @property
    def providers(self) -> Mapping[str, OAuthProvider]:
        """The registered providers by id (a copy)."""
        return dict(self._providers)

    def provider(self, provider_id: str) -> OAuthProvider:
        """The provider ``provider_id``; a tool error (and an ERROR log) when none is registered:
        a handler asking for one is a bug in the server, which the user should hear about."""
        found = self._providers.get(provider_id) if isinstance(provider_id, str) else None
        if found is None:
            _log.error(
                "ctx.connection(%r): no such OAuth provider; registered: %s",
                provider_id,
                sorted(self._providers) or "none",
            )
            raise ToolError(
                f"This server has no account provider named {provider_id!r} configured "
                "(kit.oauth_provider(...)); this is a bug in the server."
            )
        return found

    def provider_title(self, provider_id: str) -> str:
        """What messages call the provider: its title, a well-known name, or its id."""
        provider = self.provider(provider_id)
        return provider.title or _KNOWN_TITLES.get(provider.id) or provider.id

    def refresher(self, provider_id: str) -> Refresher:
        """The refresher for ``provider_id``'s connections (the standard refresh-token grant
        unless one was given). The OAuth client is loaded on the first refresh."""
        custom = self._refreshers.get(provider_id)
        if custom is not None:
            return custom
        provider = self.provider(provider_id)

        async def refresh(connection: Connection) -> RefreshResult:
            built = self._refreshers.get(provider_id)
            if built is None:
                from mcp_elicit.connect.oauth.refresh import token_refresher

                built = self._refreshers.setdefault(provider_id, token_refresher(provider))
            return await built(connection)

        return refresh

    def revoker(self, provider_id: str) -> Revoker:
        """The revoker for ``provider_id`` (RFC 7009 at its ``revocation_url`` unless one was
        given; a provider without one is only deleted locally)."""
        custom = self._revokers.get(provider_id)
        if custom is not None:
            return custom
        from mcp_elicit.connect.oauth.revoke import token_revoker

        return self._revokers.setdefault(provider_id, token_revoker(self.provider(provider_id)))

    async def disconnect(self, principal: str | Principal, provider: str) -> bool:
        """Revoke ``principal``'s grant at ``provider`` and delete it from the vault. ``False``
        if there was none; :class:`~mcp_elicit.connect.vault.RevocationFailed` if revocation
        failed (the row is kept; call again later)."""
        owner = principal.key if isinstance(principal, Principal) else principal
        return await self.vault.disconnect(owner, provider, self.revoker(provider))

    async def aclose(self) -> None:
        """Close the flow store and the vault (in the event loop that used them)."""
        try:
            await self.flows.close()
        finally:
            await self.vault.close()

    # ------------------------------------------------------------------------------ HTTP

    @property
    def authenticate(self) -> Authenticate:
        """The ``HttpApp(authenticate=...)`` hook made from ``identity``."""
        return self._authenticate

    @property
    def metadata(self) -> dict[str, Any] | None:
        """The RFC 9728 document served, or ``None`` (no authorization server known)."""
        return None if self._metadata is None else dict(self._metadata)

    def asgi(
        self,
        server: Server,
        *,
        path: str | None = None,
        allowed_origins: Sequence[str] | None = None,
        body_timeout: float = 30.0,
    ) -> ConnectApp:
        """One ASGI app for ``server`` with this kit (see the module docstring). Usually reached
        through ``server.asgi()`` / ``server.run_http()`` with ``Server(connect=kit)``."""
        if path is not None and path.rstrip("/") != self.mcp_path:
            raise ValueError(
                f"this ConnectKit serves MCP at {self.mcp_path!r} (the resource {self.resource!r}); "
                f"set ConnectKit(mcp_path={path!r}) to use {path!r}"
            )
        if server.connect is not self:
            _log.warning("ConnectKit.asgi: the server was not built with connect=this kit")
        base_path = _base_path(self.base_url)
        mcp = HttpApp(
            server,
            path=base_path + self.mcp_path,
            allowed_origins=allowed_origins,
            authenticate=self._authenticate,
            body_timeout=body_timeout,
        )
        metadata = None if self._metadata is None else ProtectedResourceMetadataApp(self._metadata)
        return ConnectApp(mcp, metadata, self._pages(server), base_path)

    def _pages(self, server: Server) -> ConnectPages | None:
        if self.login is None:
            _log.warning("ConnectKit has no login=: the connect pages answer 503 until one is configured")
            return None
        from mcp_elicit.connect.pages import ConnectPages

        return ConnectPages(
            base_url=self.base_url,
            login=self.login,
            flows=self.flows,
            vault=self.vault,
            providers=dict(self._providers),
            # A key file is passed on as such: the cookies' keys follow it like requestState's.
            keys=self.keys if self.keys is not None else (server.sealer.key_file or server.sealer.keys),
            server_name=(server.title or server.name)[:100],
            development=self.development,
            rate_limit=self.page_rate_limit,
            # The kit's revokers (custom ones included) also revoke a grant a reconnect replaces.
            revokers={provider_id: self.revoker(provider_id) for provider_id in self._providers},
            clock=self.clock,
        )

    def _build_metadata(
        self,
        authorization_servers: Sequence[str] | None,
        scopes_supported: Sequence[str] | None,
        resource_name: str | None,
    ) -> dict[str, Any] | None:
        servers = authorization_servers
        if servers is None:
            issuer = getattr(self.identity, "issuer", None)
            servers = [issuer] if isinstance(issuer, str) else None
        if not servers:
            return None
        return protected_resource_metadata(
            resource=self.resource,
            authorization_servers=list(servers),
            scopes_supported=scopes_supported,
            resource_name=resource_name,
            development=self.development,
        )

    def _build_authenticate(self) -> Authenticate:
        if isinstance(self.identity, DevelopmentIdentity):
            return self.identity.authenticate
        return authenticator(
            self.identity,
            resource_metadata_url=resource_metadata_url(self.resource, development=self.development),
            development=self.development,
        )


class ConnectApp:
    """The ASGI app :meth:`ConnectKit.asgi` builds: routes ``/mcp`` to :attr:`mcp`, the RFC 9728
    paths to the metadata, and the page routes to the pages (``503`` without ``login``)."""

    def __init__(
        self,
        mcp: HttpApp,
        metadata: ProtectedResourceMetadataApp | None,
        pages: ConnectPages | None,
        base_path: str = "",
    ) -> None:
        self.mcp = mcp
        self.metadata = metadata
        self.pages = pages
        self._page_prefixes = tuple(base_path + route for route in PAGE_ROUTES)

    @property
    def path(self) -> str:
        """The path the MCP endpoint is served at (``base_url``'s path + ``mcp_path``), as
        :class:`HttpApp`'s ``path``: what ``run_http()`` prints."""
        return self.mcp.path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self.mcp(scope, receive, send)  # acknowledges startup and shutdown
            return
        if kind != "http":
            return
        path: str = scope["path"]
        if (path.rstrip("/") or "/") == self.mcp.path:
            await self.mcp(scope, receive, send)
        elif self.metadata is not None and path in self.metadata.paths:
            await self.metadata(scope, receive, send)
        elif self.pages is not None:
            await self.pages(scope, receive, send)
        elif path.startswith(self._page_prefixes):
            await send_text(send, 503, _PAGES_MISSING, _PLAIN_HEADERS)
        else:
            await send_text(send, 404, b"Not Found", _PLAIN_HEADERS)


def _base_path(base_url: str) -> str:
    return urlsplit(base_url).path.rstrip("/")


def _check_root(base_url: str, mcp_path: str) -> None:
    """Refuse a ``base_url`` that already ends with the MCP endpoint's path: the endpoint is
    ``base_url + mcp_path``, so ``.../mcp`` would serve MCP at ``.../mcp/mcp`` and the URL the
    user meant would answer 404. ``base_url`` is the server's root, under which the endpoint
    and the pages live."""
    parts = urlsplit(base_url)
    if not _base_path(base_url).endswith(mcp_path):
        return
    root = parts._replace(path=parts.path.rstrip("/")[: -len(mcp_path)]).geturl()
    raise ValueError(
        f"base_url is the server's root, not its MCP endpoint: give base_url={root!r} (MCP is then "
        f"served at {root + mcp_path!r}), not {base_url!r}, which would serve it at "
        f"{base_url + mcp_path!r}"
    )


def _missing_settings(provider: str, **settings: str | None) -> TypeError:
    """The error for ``oauth_provider(id, ...)`` without some of these settings: it names the
    ones missing (listing all three would leave the reader to find which)."""
    missing = [name for name, value in settings.items() if value is None]
    return TypeError(
        f"oauth_provider({provider!r}): {' and '.join(missing)} missing (the settings are "
        "authorize_url, token_url, client_id and, for a confidential client, client_secret)"
    )


def _default_flows(vault: Vault, clock: Callable[[], float]) -> FlowStore:
    """The flow store for ``flows=None``: SQLite next to an SQLite vault's file (``vault.db`` →
    ``vault-flows.db``), in memory for an in-memory vault. A PostgreSQL vault means several
    instances, which must share their flows: then the store must be given."""
    from mcp_elicit.connect.flows.sqlite_store import SQLiteFlowStore

    path = vault.sqlite_path
    if path is None:
        raise ValueError(
            "with a PostgreSQL vault, pass flows=PostgresFlowStore(dsn): every instance of the "
            "server must see the same pending flows"
        )
    if path == ":memory:" or path.startswith("file::memory:"):
        return SQLiteFlowStore(":memory:", clock=clock)
    vault_file = Path(path)
    return SQLiteFlowStore(
        os.fspath(vault_file.with_name(f"{vault_file.stem}-flows{vault_file.suffix or '.db'}")), clock=clock
    )
