"""Helpers for the OAuth client tests.

* :class:`ScriptedServer`: a real HTTP server on 127.0.0.1 (a thread) whose answers each test
  scripts per path: status, headers, body, an optional delay. It records every request, so a test
  can assert that nothing was sent (checks that must fail before the token request) or exactly
  what was sent (the pinned URL, the form, the client authentication).
* :func:`scripted_provider`: an :class:`OAuthProvider` whose endpoints live on such a server.
* :func:`abort_over_http`: the "Cancel" path on the real oidc-provider's login page, returning the
  ``error=access_denied`` redirect.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
from tests.oidc_provider import OidcProvider, login_over_http, redirect_params

from mcp_elicit.connect.oauth import AuthorizationCodeGrant, OAuthProvider, discover
from mcp_elicit.connect.vault import Connection, Vault

REDIRECT_URI = "https://mcp.example.test/oauth/github/callback"
# For clients at the real provider. Never requested: the tests stop at the redirect
# (login_over_http), so nothing listens here.
REAL_REDIRECT_URI = "http://127.0.0.1:9/oauth/github/callback"
SECRET_TOKENS = ("AT-secret-access-123", "RT-secret-refresh-456")
OWNER = "https://idp.example.test|alice"  # the MCP user whose third-party account is connected
MakeVault = Callable[[], Vault]  # opens another vault instance on one shared store


@dataclass
class Answer:
    status: int = 200
    body: bytes | str | dict[str, Any] = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    def encoded(self) -> tuple[bytes, dict[str, str]]:
        headers = dict(self.headers)
        if isinstance(self.body, dict):
            headers.setdefault("content-type", "application/json")
            return json.dumps(self.body).encode(), headers
        if isinstance(self.body, str):
            return self.body.encode(), headers
        return self.body, headers


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.body.decode()).items()}


class ScriptedServer:
    """``routes[path]`` is an :class:`Answer` or a callable ``(Recorded) -> Answer``."""

    def __init__(self) -> None:
        self.routes: dict[str, Answer | Callable[[Recorded], Answer]] = {}
        self.requests: list[Recorded] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                path = urlsplit(self.path).path
                record = Recorded(self.command, path, {k.lower(): v for k, v in self.headers.items()}, body)
                owner.requests.append(record)
                route = owner.routes.get(path)
                answer = Answer(404, b"not found") if route is None else route
                if callable(answer):
                    answer = answer(record)
                if answer.delay:
                    time.sleep(answer.delay)
                data, headers = answer.encoded()
                try:
                    self.send_response(answer.status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

            do_GET = do_POST = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


def scripted_provider(server: ScriptedServer, **overrides: Any) -> OAuthProvider:
    fields: dict[str, Any] = {
        "id": "github",
        "authorize_url": f"{server.base}/authorize",
        "token_url": f"{server.base}/token",
        "revocation_url": f"{server.base}/revoke",
        "client_id": "client-1",
        "client_secret": "s3cret:/ x",
        "scopes": ("repo",),
        "issuer": server.base,
        "iss_parameter_supported": True,
    }
    fields.update(overrides)
    return OAuthProvider(**fields)


def token_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "access_token": SECRET_TOKENS[0],
        "refresh_token": SECRET_TOKENS[1],
        "token_type": "Bearer",
        "expires_in": 3600,
        "scope": "repo",
    }
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not None}


_LOGIN_FORM = re.compile(r'<form id="login-form" method="post" action="([^"]+)"')


async def abort_over_http(authorize_url: str) -> str:
    """Open ``authorize_url`` on the real provider and press "Cancel" on its login page; return
    the redirect back to the client (``error=access_denied&state=…&iss=…``), not requested."""
    origin = urlsplit(authorize_url)[:2]
    async with httpx.AsyncClient(timeout=10, follow_redirects=False) as client:
        url, method = authorize_url, "GET"
        for _ in range(10):
            response = await client.request(method, url)
            if response.is_redirect:
                url = urljoin(url, response.headers["location"])
                if urlsplit(url)[:2] != origin:
                    return url
                method = "GET"
                continue
            match = _LOGIN_FORM.search(response.text)
            assert match, response.text
            url = urljoin(url, match.group(1).rsplit("/", 1)[0] + "/abort")
            method = "POST"
    raise AssertionError("no redirect back to the client")


async def connect_at_provider(
    third_party: OidcProvider, client: dict[str, Any]
) -> tuple[OAuthProvider, Connection]:
    """Alice signs in at the real provider and grants ``client`` ``openid repo``: the provider
    (found by discovery) and the connection the grant makes for :data:`OWNER`."""
    provider = await discover(
        third_party.issuer,
        id="github",
        client_id=client["client_id"],
        client_secret=client.get("client_secret"),
        scopes=("openid", "repo"),
    )
    flow = AuthorizationCodeGrant(provider, REAL_REDIRECT_URI)
    url, pending = flow.begin()
    params = redirect_params(await login_over_http(url, "alice"))
    grant = await flow.finish(pending, params, provider_in_path="github")
    return provider, grant.to_connection(OWNER, "github")
