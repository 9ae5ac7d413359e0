"""DEMO ONLY: a small OAuth 2.0 authorization server standing in for a third-party "CI service".

``mcp-elicit demo`` connects the demo user's CI account through the URL-mode kit, and the kit needs
a real OAuth provider on the other side to do that end to end and offline. This is it: an ASGI app
that keeps everything in memory, has one account ("demo user"), and exists only so the demo has
someone to talk to. Never deploy it; it is not an identity provider and has no sign-in.

What it does implement, because the kit relies on it: the authorization code grant with PKCE
(``S256`` only, required), exact redirect URIs per registered client, ``iss`` in the authorization
response (RFC 9207, advertised in its RFC 8414 metadata), single-use codes that expire after 60 s,
refresh tokens that rotate, RFC 7009 revocation, and one protected API (``GET /api/builds``) that
the demo tool calls with the access token.

Routes: ``GET /.well-known/oauth-authorization-server``, ``GET /authorize`` (a consent page, no side
effects), ``POST /authorize`` (Allow or Deny, then 303 back to the client), ``POST /token``,
``POST /revoke``, ``GET /api/builds``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl, unquote_plus, urlencode, urlsplit

import orjson

from mcp_elicit.connect.flows.model import clean_label
from mcp_elicit.transport.asgi import Receive, Scope, Send, send_response

__all__ = ["DemoCIProvider", "DemoClient"]

Reply = tuple[int, list[tuple[bytes, bytes]], bytes]  # status, extra headers, body

_CODE_TTL: Final = 60.0
_ACCESS_TTL: Final = 3600
_MAX_BODY: Final = 16 * 1024
_ACCOUNT: Final = "demo-user"
_HEADERS: Final = [
    (b"cache-control", b"no-store"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
]
_PAGE_CSP: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' {also}; frame-ancestors 'none'"
)

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>DEMO ONLY · Demo CI service</title>
<style>body{{font-family:sans-serif;max-width:34rem;margin:3rem auto}}
.demo{{background:#fff3cd;padding:.5rem}}button{{font-size:1.1rem;padding:.5rem 1rem}}
.small{{font-size:.9rem;color:#555}}</style></head>
<body><p class="demo"><strong>DEMO ONLY</strong>: a local stand-in for a third-party service.</p>
<h1>Demo CI service</h1>{body}</body></html>
"""


@dataclass(frozen=True, slots=True)
class DemoClient:
    """A registered OAuth client: its secret, its exact redirect URIs, and the name it was
    registered under (what the consent page calls the application)."""

    client_id: str
    client_secret: str
    redirect_uris: tuple[str, ...]
    name: str | None = None


@dataclass(slots=True)
class _Code:
    client_id: str
    redirect_uri: str
    challenge: str
    scope: str
    expires: float


@dataclass(slots=True)
class _Grant:
    client_id: str
    scope: str
    refresh_token: str


class DemoCIProvider:
    """The demo's third-party OAuth server (an ASGI app). ``issuer`` is its own base URL."""

    def __init__(self, issuer: str, clients: list[DemoClient] | None = None) -> None:
        self.issuer = issuer.rstrip("/")
        self._clients: dict[str, DemoClient] = {c.client_id: c for c in clients or ()}
        self._codes: dict[str, _Code] = {}
        self._access: dict[str, _Grant] = {}
        self._refresh: dict[str, _Grant] = {}

    def register(self, redirect_uri: str, name: str | None = None) -> DemoClient:
        """Register a confidential client for ``redirect_uri`` (exact match), named ``name`` on
        the consent page, and return it."""
        client = DemoClient(secrets.token_urlsafe(12), secrets.token_urlsafe(24), (redirect_uri,), name)
        self.add_client(client)
        return client

    def add_client(self, client: DemoClient) -> None:
        """Register a client with a known id and secret (the guides' ``example-client``)."""
        self._clients[client.client_id] = client

    @property
    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "revocation_endpoint": f"{self.issuer}/revoke",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "authorization_response_iss_parameter_supported": True,
            "scopes_supported": ["builds:read"],
        }

    # ------------------------------------------------------------------------------------- ASGI

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        method, path = scope["method"], scope["path"]
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), max_num_fields=32))
        routes: dict[tuple[str, str], Callable[..., Awaitable[Reply]]] = {
            ("GET", "/.well-known/oauth-authorization-server"): self._metadata,
            ("GET", "/authorize"): self._consent_page,
            ("POST", "/authorize"): self._decide,
            ("POST", "/token"): self._token,
            ("POST", "/revoke"): self._revoke,
            ("GET", "/api/builds"): self._builds,
        }
        handler = routes.get((method, path))
        if handler is None:
            known = {p for _, p in routes}
            status = 405 if path in known else 404
            await _respond(send, status, [], _json({"error": "not_found" if status == 404 else "method"}))
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        form: dict[str, str] = {}
        if method == "POST":
            body = await _read_body(receive)
            if body is None:
                await _respond(send, 413, [], _json({"error": "invalid_request"}))
                return
            form = dict(parse_qsl(body.decode("utf-8", "replace"), max_num_fields=32))
        status, extra, payload = await handler(query=query, form=form, headers=headers)
        await _respond(send, status, extra, payload)

    # ----------------------------------------------------------------------------------- routes

    async def _metadata(self, **_: Any) -> Reply:
        return 200, [], _json(self.metadata)

    def _check_request(self, params: dict[str, str]) -> tuple[DemoClient, str] | str:
        """The client and redirect URI of an authorization request, or why it is refused."""
        client = self._clients.get(params.get("client_id", ""))
        if client is None:
            return "unknown client_id"
        redirect_uri = params.get("redirect_uri", "")
        if redirect_uri not in client.redirect_uris:
            return "redirect_uri is not registered for this client"
        if params.get("response_type") != "code":
            return "response_type must be code"
        if params.get("code_challenge_method") != "S256" or len(params.get("code_challenge", "")) != 43:
            return "PKCE with S256 is required"
        if not params.get("state"):
            return "state is required"
        return client, redirect_uri

    async def _consent_page(self, *, query: dict[str, str], **_: Any) -> Reply:
        checked = self._check_request(query)
        if isinstance(checked, str):  # never redirect to an unchecked redirect_uri
            return _page(400, f"<p>This sign-in request is not valid: {html.escape(checked)}.</p>")
        fields = "".join(
            f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
            for k, v in query.items()
            if k
            in (
                "response_type",  # POST /authorize checks the whole request again
                "client_id",
                "redirect_uri",
                "scope",
                "state",
                "code_challenge",
                "code_challenge_method",
            )
        )
        scope = html.escape(query.get("scope") or "builds:read")
        client, redirect_uri = checked
        return _page(
            200,
            f"<p>Signed in as <strong>{_ACCOUNT}</strong>.</p>"
            f"<p>{_application(client)} asks for <strong>{scope}</strong> access to your demo CI account.</p>"
            f'<form method="post" action="/authorize">{fields}'
            '<button name="decision" value="allow">Allow</button> '
            '<button name="decision" value="deny">Deny</button></form>',
            form_target=redirect_uri,  # the browser applies form-action to the 303 after the POST
        )

    async def _decide(self, *, form: dict[str, str], **_: Any) -> Reply:
        checked = self._check_request(form)
        if isinstance(checked, str):
            return _page(400, f"<p>This sign-in request is not valid: {html.escape(checked)}.</p>")
        client, redirect_uri = checked
        answer = {"state": form["state"], "iss": self.issuer}
        if form.get("decision") == "allow":
            code = secrets.token_urlsafe(32)
            self._codes[code] = _Code(
                client.client_id,
                redirect_uri,
                form["code_challenge"],
                form.get("scope") or "builds:read",
                time.monotonic() + _CODE_TTL,
            )
            answer = {"code": code, **answer}
        else:
            answer = {"error": "access_denied", "error_description": "The user denied access.", **answer}
        return 303, [(b"location", f"{redirect_uri}?{urlencode(answer)}".encode())], b""

    def _client_from(self, form: dict[str, str], headers: dict[str, str]) -> DemoClient | None:
        client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        auth = headers.get("authorization", "")
        if auth.lower().startswith("basic "):
            try:
                decoded = base64.b64decode(auth[6:], validate=True).decode()
            except ValueError:
                return None
            client_id, _, secret = decoded.partition(":")
            client_id, secret = unquote_plus(client_id), unquote_plus(secret)
        client = self._clients.get(client_id)
        if client is None or not secrets.compare_digest(client.client_secret, secret):
            return None
        return client

    async def _token(self, *, form: dict[str, str], headers: dict[str, str], **_: Any) -> Reply:
        client = self._client_from(form, headers)
        if client is None:
            return 401, [(b"www-authenticate", b'Basic realm="demo"')], _json({"error": "invalid_client"})
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            code = self._codes.pop(form.get("code", ""), None)  # single use, whatever happens next
            verifier = form.get("code_verifier", "")
            if (
                code is None
                or code.expires < time.monotonic()
                or code.client_id != client.client_id
                or code.redirect_uri != form.get("redirect_uri")
                or not secrets.compare_digest(code.challenge, _s256(verifier))
            ):
                return 400, [], _json({"error": "invalid_grant"})
            return 200, [], _json(self._issue(client.client_id, code.scope))
        if grant_type == "refresh_token":
            grant = self._refresh.pop(form.get("refresh_token", ""), None)
            if grant is None or grant.client_id != client.client_id:
                return 400, [], _json({"error": "invalid_grant"})
            self._forget(grant)
            return 200, [], _json(self._issue(client.client_id, grant.scope))
        return 400, [], _json({"error": "unsupported_grant_type"})

    def _issue(self, client_id: str, scope: str) -> dict[str, Any]:
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        grant = _Grant(client_id, scope, refresh)
        self._access[access] = grant
        self._refresh[refresh] = grant
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": _ACCESS_TTL,
            "refresh_token": refresh,
            "scope": scope,
        }

    def _forget(self, grant: _Grant) -> None:
        self._refresh.pop(grant.refresh_token, None)
        for token in [t for t, g in self._access.items() if g is grant]:
            del self._access[token]

    async def _revoke(self, *, form: dict[str, str], headers: dict[str, str], **_: Any) -> Reply:
        client = self._client_from(form, headers)
        if client is None:
            return 401, [], _json({"error": "invalid_client"})
        token = form.get("token", "")
        grant = self._refresh.get(token) or self._access.get(token)
        if grant is not None and grant.client_id == client.client_id:
            self._forget(grant)
        return 200, [], b""  # RFC 7009: unknown tokens are not an error

    async def _builds(self, *, headers: dict[str, str], **_: Any) -> Reply:
        auth = headers.get("authorization", "")
        grant = self._access.get(auth[7:]) if auth.startswith("Bearer ") else None
        if grant is None:
            challenge = (b"www-authenticate", b'Bearer error="invalid_token"')
            return 401, [challenge], _json({"error": "invalid_token"})
        return 200, [], _json({"account": _ACCOUNT, "builds": [{"id": 812, "status": "passed"}]})


def _application(client: DemoClient) -> str:
    """Who asks, as the consent page says it: the name the client was registered under (whoever
    registers chooses it, so escaped and cut short) and its client id."""
    client_id = f'<span class="small">(client <code>{html.escape(client.client_id[:64])}</code>)</span>'
    name = clean_label(client.name, 80)
    if name is None:
        return f"The application registered without a name {client_id}"
    return f"The application <strong><bdi>{html.escape(name)}</bdi></strong> {client_id}"


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _json(value: Any) -> bytes:
    return orjson.dumps(value)


def _page(status: int, body: str, *, form_target: str = "") -> Reply:
    parts = urlsplit(form_target)
    also = f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else ""
    csp = _PAGE_CSP.format(also=also).replace(" ;", ";").encode()
    return (
        status,
        [(b"content-type", b"text/html; charset=utf-8"), (b"content-security-policy", csp)],
        _PAGE.format(body=body).encode(),
    )


async def _read_body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > _MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _respond(send: Send, status: int, extra: list[tuple[bytes, bytes]], body: bytes) -> None:
    headers = list(_HEADERS) + extra
    if not any(name == b"content-type" for name, _ in extra) and body:
        headers.append((b"content-type", b"application/json"))
    await send_response(send, status, headers, body)


def main(argv: list[str] | None = None) -> None:
    """``python -m mcp_elicit.demo.ci_provider --port 8771 --client ID:SECRET --redirect-uri URI``:
    serve the DEMO ONLY provider on 127.0.0.1 with one registered client (for the guides)."""
    import argparse

    import uvicorn

    parser = argparse.ArgumentParser(description="DEMO ONLY OAuth server (mcp-elicit guides and demo)")
    parser.add_argument("--port", type=int, default=8771)
    parser.add_argument("--client", required=True, help="client_id:client_secret")
    parser.add_argument("--redirect-uri", required=True, help="the client's exact redirect URI")
    parser.add_argument("--client-name", help="the application's name, shown on the consent page")
    args = parser.parse_args(argv)
    client_id, sep, secret = args.client.partition(":")
    if not sep or not client_id or not secret:
        parser.error("--client must be client_id:client_secret")
    issuer = f"http://127.0.0.1:{args.port}"
    provider = DemoCIProvider(issuer, [DemoClient(client_id, secret, (args.redirect_uri,), args.client_name)])
    print(f"DEMO ONLY CI service at {issuer} (client {client_id!r})", flush=True)
    uvicorn.run(provider, host="127.0.0.1", port=args.port, log_level="warning", lifespan="off")


if __name__ == "__main__":
    main()
