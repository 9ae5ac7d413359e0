"""A real OpenID Provider / OAuth authorization server for tests: ``tests/oidc/provider.mjs``
(the npm package oidc-provider, run by the pinned Node 24 from ``.cache``) as a subprocess.

Install once with ``bash scripts/node.sh`` (scripts/test.sh does it before pytest).

* :class:`OidcProvider`: start/stop (also a context manager), :attr:`~OidcProvider.issuer`,
  :attr:`~OidcProvider.metadata`, :meth:`~OidcProvider.register_client` (open dynamic
  registration), :meth:`~OidcProvider.authorize_url`, and async token-endpoint helpers
  (:meth:`~OidcProvider.exchange_code`, :meth:`~OidcProvider.refresh`,
  :meth:`~OidcProvider.revoke`, :meth:`~OidcProvider.userinfo`, :meth:`~OidcProvider.introspect`).
* :func:`login_over_http`: sign in on the provider's pages with httpx (no browser) and return the
  final redirect to the client (``?code=…&state=…&iss=…``) without requesting it.
* :func:`mcp_access_token` / :func:`authorization_code_flow`: the whole code + PKCE flow over HTTP,
  e.g. for an MCP access token (a JWT with ``aud`` = the MCP server URL).
* :func:`sign_in`: the same login in a real browser (Playwright async ``Page``).

Accounts: ``alice`` and ``bob`` (sub = login name; claims name, email), password
:data:`PASSWORD` for both. Consent is granted automatically unless ``consent="page"``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import platform
import re
import secrets
import selectors
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qs, quote, urlencode, urljoin, urlsplit

import httpx

from tests.server_process import stop_process

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = [
    "NODE_SETUP_HINT",
    "PASSWORD",
    "OidcProvider",
    "authorization_code_flow",
    "login_over_http",
    "mcp_access_token",
    "node24_binary",
    "pkce_pair",
    "redirect_params",
    "sign_in",
]

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "tests" / "oidc" / "provider.mjs"
MODULES = REPO / ".cache" / "oidc-provider" / "node_modules"
NODE_SETUP_HINT = "run bash scripts/node.sh"
PASSWORD = "password"
# Never requested: login_over_http stops at the redirect, so nothing needs to listen here.
UNUSED_REDIRECT_URI = "http://127.0.0.1:9/callback"

AuthMethod = Literal["client_secret_basic", "client_secret_post", "none"]


def node24_binary() -> Path:
    """The Node 24 binary scripts/node.sh installs, or a failure saying how to get it."""
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine()
    )
    node = REPO / ".cache" / "node24" / "node_modules" / f"node-linux-{arch}" / "bin" / "node"
    if not node.is_file():
        raise RuntimeError(f"Node 24 is missing ({node}): {NODE_SETUP_HINT}")
    if not (MODULES / "oidc-provider" / "package.json").is_file():
        raise RuntimeError(f"oidc-provider is missing ({MODULES}): {NODE_SETUP_HINT}")
    return node


def pkce_pair() -> tuple[str, str]:
    """``(code_verifier, S256 code_challenge)``."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class OidcProvider:
    """One provider process on ``127.0.0.1`` (a free port), issuer ``http://127.0.0.1:PORT``.

    Keyword arguments map onto provider.mjs's JSON config (see its header): ``name`` (shown on
    its pages), ``accounts``, ``clients`` (static), ``consent`` ("auto" or "page"), ``scopes``
    (extra non-OpenID scopes, e.g. ``["repo"]`` for a fake GitHub), ``resource_scopes`` (scopes of
    any RFC 8707 resource, default ``["mcp"]``), ``access_token_ttl``, ``refresh_token_ttl``,
    ``rotate_refresh_tokens``, ``use_granted_resource``.
    """

    def __init__(self, *, name: str = "Test IdP", start_timeout: float = 20.0, **config: Any) -> None:
        self.name = name
        self._config: dict[str, Any] = {"name": name, **config}
        self._start_timeout = start_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="oidc-provider-", suffix=".log", delete=False)  # noqa: SIM115
        self._issuer: str | None = None
        self._metadata: dict[str, Any] | None = None
        self._public_client: dict[str, Any] | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> OidcProvider:
        if self._process is not None:
            return self
        node = node24_binary()
        env = {**os.environ, "OIDC_PROVIDER_MODULES": str(MODULES), "NODE_ENV": "test"}
        self._process = subprocess.Popen(
            [str(node), str(SCRIPT), json.dumps(self._config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            # A file, not a pipe: nobody drains a pipe during the tests, and a full one would block.
            stderr=self._log,
            env=env,
        )
        try:
            self._issuer = self._await_ready()
            response = httpx.get(f"{self._issuer}/.well-known/openid-configuration", timeout=10)
            response.raise_for_status()
            self._metadata = response.json()
        except BaseException:
            self.stop()
            raise
        return self

    def _await_ready(self) -> str:
        assert self._process is not None
        assert self._process.stdout is not None
        deadline = time.monotonic() + self._start_timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self._process.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if selector.select(timeout=0.1):
                    line = self._process.stdout.readline().decode("utf-8", "replace").strip()
                    if line.startswith("READY "):
                        return line.split(" ", 1)[1]
                    if not line and self._process.poll() is not None:
                        break
                elif self._process.poll() is not None:
                    break
        raise RuntimeError(f"oidc provider did not start:\n{self.log_text()}")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        stop_process(process)
        if process.stdout is not None:
            process.stdout.close()
        self._log.close()
        Path(self._log.name).unlink(missing_ok=True)

    def __enter__(self) -> OidcProvider:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def log_text(self) -> str:
        """The provider's stderr so far (request lines, errors), for failure messages."""
        return Path(self._log.name).read_text(errors="replace")

    # -- facts -----------------------------------------------------------------------------------

    @property
    def issuer(self) -> str:
        if self._issuer is None:
            raise RuntimeError("provider not started")
        return self._issuer

    @property
    def url(self) -> str:
        """Same as :attr:`issuer` (the provider lives at the root of its origin)."""
        return self.issuer

    @property
    def metadata(self) -> dict[str, Any]:
        """The discovery document (``/.well-known/openid-configuration``)."""
        if self._metadata is None:
            raise RuntimeError("provider not started")
        return self._metadata

    def endpoint(self, name: str) -> str:
        """A metadata endpoint by short name: ``endpoint("token")`` = ``token_endpoint``."""
        return str(self.metadata[f"{name}_endpoint"])

    @property
    def jwks_url(self) -> str:
        return str(self.metadata["jwks_uri"])

    # -- clients ---------------------------------------------------------------------------------

    def register_client(
        self,
        redirect_uris: Sequence[str],
        *,
        token_endpoint_auth_method: AuthMethod = "client_secret_basic",
        grant_types: Sequence[str] = ("authorization_code", "refresh_token"),
        scope: str | None = None,
        client_name: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Dynamic client registration (RFC 7591, open). The registration response: ``client_id``,
        ``client_secret`` (absent for ``"none"``), ``redirect_uris``, ... . Sync, so session
        fixtures can use it too; it is a short local request."""
        body: dict[str, Any] = {
            "redirect_uris": list(redirect_uris),
            "token_endpoint_auth_method": token_endpoint_auth_method,
            "grant_types": list(grant_types),
            "response_types": ["code"],
            **extra,
        }
        if scope is not None:
            body["scope"] = scope
        if client_name is not None:
            body["client_name"] = client_name
        response = httpx.post(self.endpoint("registration"), json=body, timeout=10)
        if response.status_code != 201:
            raise RuntimeError(f"registration failed: {response.status_code} {response.text}")
        client: dict[str, Any] = response.json()
        return client

    def public_client(self) -> dict[str, Any]:
        """A public (PKCE-only, ``token_endpoint_auth_method=none``) client, registered once per
        provider, whose redirect URI is never requested: for :func:`login_over_http` flows."""
        if self._public_client is None:
            self._public_client = self.register_client(
                [UNUSED_REDIRECT_URI], token_endpoint_auth_method="none", client_name="MCP test client"
            )
        return self._public_client

    def authorize_url(
        self,
        client: Mapping[str, Any],
        *,
        redirect_uri: str | None = None,
        code_challenge: str,
        state: str | None = None,
        scope: str = "openid",
        resource: str | Iterable[str] | None = None,
        **extra: str,
    ) -> str:
        """The authorization request URL (code flow, S256). ``redirect_uri`` defaults to the
        client's first one; ``extra`` adds parameters such as ``prompt`` or ``login_hint``."""
        params: list[tuple[str, str]] = [
            ("response_type", "code"),
            ("client_id", client["client_id"]),
            ("redirect_uri", redirect_uri or client["redirect_uris"][0]),
            ("scope", scope),
            ("state", state or secrets.token_urlsafe(16)),
            ("code_challenge", code_challenge),
            ("code_challenge_method", "S256"),
        ]
        params += [("resource", r) for r in _many(resource)]
        params += list(extra.items())
        return f"{self.endpoint('authorization')}?{urlencode(params)}"

    # -- token endpoint and friends (async: tests are async) ------------------------------------

    async def exchange_code(
        self,
        client: Mapping[str, Any],
        code: str,
        code_verifier: str,
        *,
        redirect_uri: str | None = None,
        resource: str | Iterable[str] | None = None,
    ) -> dict[str, Any]:
        """``grant_type=authorization_code``: the token response (raises on an error response)."""
        form = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri or client["redirect_uris"][0]),
            ("code_verifier", code_verifier),
        ]
        form += [("resource", r) for r in _many(resource)]
        return await self._token_request(client, form)

    async def refresh(
        self, client: Mapping[str, Any], refresh_token: str, *, resource: str | None = None
    ) -> dict[str, Any]:
        form = [("grant_type", "refresh_token"), ("refresh_token", refresh_token)]
        form += [("resource", r) for r in _many(resource)]
        return await self._token_request(client, form)

    async def token_request_raw(
        self, client: Mapping[str, Any], form: Sequence[tuple[str, str]]
    ) -> httpx.Response:
        """A token request whose error response the test wants to look at."""
        return await self._post(client, self.endpoint("token"), form)

    async def _token_request(
        self, client: Mapping[str, Any], form: Sequence[tuple[str, str]]
    ) -> dict[str, Any]:
        response = await self._post(client, self.endpoint("token"), form)
        if response.status_code != 200:
            raise RuntimeError(f"token request failed: {response.status_code} {response.text}")
        body: dict[str, Any] = response.json()
        return body

    async def revoke(self, client: Mapping[str, Any], token: str, *, hint: str | None = None) -> None:
        """RFC 7009 revocation (200 even for unknown tokens, as the RFC says)."""
        form = [("token", token)] + ([("token_type_hint", hint)] if hint else [])
        response = await self._post(client, self.endpoint("revocation"), form)
        if response.status_code != 200:
            raise RuntimeError(f"revocation failed: {response.status_code} {response.text}")

    async def introspect(self, client: Mapping[str, Any], token: str) -> dict[str, Any]:
        """RFC 7662 introspection by a registered client: ``{"active": bool, ...}``."""
        response = await self._post(client, self.endpoint("introspection"), [("token", token)])
        response.raise_for_status()
        body: dict[str, Any] = response.json()
        return body

    async def userinfo(self, access_token: str) -> httpx.Response:
        """GET userinfo with a bearer token: 200 with claims, or 401 for a dead token. Only
        opaque tokens (issued without ``resource``) are good here; resource tokens are not."""
        async with httpx.AsyncClient(timeout=10) as http:
            return await http.get(
                self.endpoint("userinfo"), headers={"Authorization": f"Bearer {access_token}"}
            )

    async def _post(
        self, client: Mapping[str, Any], url: str, form: Sequence[tuple[str, str]]
    ) -> httpx.Response:
        data = list(form)
        headers: dict[str, str] = {}
        method = client.get("token_endpoint_auth_method", "client_secret_basic")
        if method == "client_secret_basic":
            # RFC 6749 §2.3.1: form-encode id and secret before base64
            pair = f"{quote(client['client_id'], safe='')}:{quote(client['client_secret'], safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        elif method == "client_secret_post":
            data += [("client_id", client["client_id"]), ("client_secret", client["client_secret"])]
        else:
            data.append(("client_id", client["client_id"]))
        async with httpx.AsyncClient(timeout=10) as http:
            return await http.post(url, data=dict_pairs(data), headers=headers)


def dict_pairs(pairs: Sequence[tuple[str, str]]) -> dict[str, str | list[str]]:
    """httpx form data from pairs, keeping repeated keys (several ``resource`` values)."""
    out: dict[str, str | list[str]] = {}
    for key, value in pairs:
        if key in out:
            previous = out[key]
            out[key] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            out[key] = value
    return out


def _many(value: str | Iterable[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


_FORM = re.compile(r'<form id="(login|consent)-form" method="post" action="([^"]+)"')


async def login_over_http(
    authorize_url: str,
    user: str,
    *,
    password: str = PASSWORD,
    http: httpx.AsyncClient | None = None,
    max_steps: int = 12,
) -> str:
    """Follow the provider's own redirects and pages for ``authorize_url``, sign in as ``user``
    (and allow consent if a consent page is shown), and return the first redirect that leaves the
    provider's origin: the client's ``redirect_uri`` with ``code``/``state``/``iss`` (or
    ``error``). That URL is not requested. Pass ``http`` to keep a signed-in session (its
    cookies) across calls; it must not follow redirects itself.
    """
    origin = _origin(authorize_url)
    own = http is None
    client = http or httpx.AsyncClient(timeout=10, follow_redirects=False)
    try:
        url, method, form = authorize_url, "GET", None
        for _ in range(max_steps):
            response = await client.request(method, url, data=form)
            if response.is_redirect:
                url = urljoin(url, response.headers["location"])
                if _origin(url) != origin:
                    return url
                method, form = "GET", None
                continue
            match = _FORM.search(response.text)
            if response.status_code == 401 and match and match.group(1) == "login" and form:
                raise PermissionError(f"the provider refused the login {user!r}")
            if response.status_code != 200 or not match:
                raise RuntimeError(
                    f"unexpected provider page {response.status_code} at {url}: {response.text}"
                )
            url, method = urljoin(url, match.group(2)), "POST"
            form = {"login": user, "password": password} if match.group(1) == "login" else {}
        raise RuntimeError(f"no redirect back to the client after {max_steps} steps")
    finally:
        if own:
            await client.aclose()


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


def redirect_params(url: str) -> dict[str, str]:
    """The query of a redirect back to the client, one value per name (``code``, ``iss``, ...)."""
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


async def authorization_code_flow(
    provider: OidcProvider,
    user: str,
    *,
    client: Mapping[str, Any],
    scope: str = "openid",
    resource: str | None = None,
    redirect_uri: str | None = None,
) -> dict[str, Any]:
    """Authorization code + PKCE over HTTP as ``user``; returns the token response. Checks that
    ``state`` and ``iss`` come back as they should."""
    verifier, challenge = pkce_pair()
    state = secrets.token_urlsafe(16)
    url = provider.authorize_url(
        client,
        redirect_uri=redirect_uri,
        code_challenge=challenge,
        state=state,
        scope=scope,
        resource=resource,
    )
    params = redirect_params(await login_over_http(url, user))
    if "code" not in params:
        raise RuntimeError(f"authorization failed: {params}")
    if params.get("state") != state or params.get("iss") != provider.issuer:
        raise RuntimeError(f"bad authorization response: {params}")
    return await provider.exchange_code(
        client, params["code"], verifier, redirect_uri=redirect_uri, resource=resource
    )


async def mcp_access_token(
    provider: OidcProvider, user: str, resource: str, scopes: Sequence[str] = ("mcp",)
) -> str:
    """A JWT access token for ``user`` with ``aud`` = ``resource`` (the MCP server URL, e.g.
    ``http://127.0.0.1:PORT/mcp``), ``iss`` = the provider's issuer, ``sub`` = ``user``: what an
    MCP client would get. Uses one public (PKCE-only) client per provider, registered once."""
    tokens = await authorization_code_flow(
        provider, user, client=provider.public_client(), scope=" ".join(scopes), resource=resource
    )
    return str(tokens["access_token"])


async def sign_in(page: Page, user: str, *, password: str = PASSWORD, consent: bool = False) -> None:
    """Complete the provider's login form in a browser page already showing it (or navigating
    to it). With ``consent=True`` (a provider with ``consent="page"``) also click "Allow". Returns
    once the form is submitted; wait for the redirect yourself (``page.wait_for_url``)."""
    form = page.locator("form#login-form")
    await form.wait_for()
    await form.locator('input[name="login"]').fill(user)
    await form.locator('input[name="password"]').fill(password)
    await form.get_by_role("button", name="Sign in").click()
    if consent:
        await page.locator("form#consent-form").get_by_role("button", name="Allow").click()
