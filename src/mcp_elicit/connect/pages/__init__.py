"""The secure pages of the URL-mode kit: sign-in, ``/connect/<id>``, ``/secret/<id>``, the OAuth
callbacks and ``/done``, as one plain ASGI app (:class:`ConnectPages`).

.. code-block:: python

    pages = ConnectPages(
        base_url="https://mcp.example.com",
        login=OidcLogin(mcp_authorization_server),   # the issuer of the MCP access tokens
        flows=flows, vault=vault, providers={"github": github}, keys=keys,
        server_name="Example MCP server",
    )

What the pages guarantee (the spec's phishing section and ``docs/security.md`` §1.3-1.5):

* the person who opens a flow's URL must sign in (OpenID Connect, code + PKCE + state + nonce)
  at the authorization server of the MCP tokens (in a local demo only: the DEMO ONLY
  :class:`DevelopmentLogin`) and be the flow's owner, checked on the page, on the POST and again
  at the OAuth callback; anyone else gets a refusal page and a WARNING log;
* GET never changes a flow; proceeding (Continue, Save) or declining is a POST with a
  per-session, per-flow CSRF token and a same-origin check; each Continue on a connection is a
  new attempt and only the latest one's callback is accepted (so two tabs cannot both finish, and
  a tab left at the provider is no dead end), and a declined flow cannot be continued;
* the owner's page says who asks: the app by the name it gives itself (marked self-reported),
  the server, the provider, and the host Continue goes to; with ``development=True`` every page
  says DEMO ONLY first;
* cookies are sealed (AES-GCM), ``__Host-``, ``Secure``, ``HttpOnly``, ``SameSite=Lax``; every
  response carries a strict CSP, ``X-Frame-Options: DENY``, ``no-store`` and ``no-referrer``;
* each client address has a budget of requests and of failed (4xx) requests; past it, ``429``
  with ``Retry-After`` (:class:`PageRateLimit`);
* no redirect goes anywhere a request chose: only our own flow pages, the pinned provider
  authorize URLs, and the static ``/done`` page.
"""

from __future__ import annotations

from mcp_elicit.connect.rate_limit import PageRateLimit

from .app import ConnectPages
from .development_login import DevelopmentLogin
from .oidc_login import OidcLogin

__all__ = ["ConnectPages", "DevelopmentLogin", "OidcLogin", "PageRateLimit"]
