"""The URL-mode kit: what a server needs to send people to its own pages safely
(``pip install 'mcp-elicit[connect]'``; importing it without that extra says so).

* :mod:`mcp_elicit.connect.identity`: who is calling (the principal from the validated MCP access
  token), protected-resource metadata and the ``401`` challenge.
* :mod:`mcp_elicit.connect.flows`: pending URL flows (``/connect/<id>``, ``/secret/<id>``), their
  store and the checks made when the client retries.
* :mod:`mcp_elicit.connect.vault`: third-party tokens and secrets, encrypted per record and bound
  to their owner, with single-flight refresh and revocation on disconnect.

* :mod:`mcp_elicit.connect.oauth`: the third-party OAuth client (authorization code + PKCE,
  refresh, revocation, discovery); :mod:`mcp_elicit.connect.pages`: the secure pages.
* :mod:`mcp_elicit.connect.kit`: :class:`~mcp_elicit.connect.kit.ConnectKit`, which wires all of
  it into a server (``Server(connect=kit)``, ``ctx.connection(...)``, ``ctx.secret(...)``, one
  ASGI app); :mod:`mcp_elicit.connect.engine`: how those calls work over rounds.
"""

from mcp_elicit._extras import require

require("connect", part="the URL-mode kit (mcp_elicit.connect)")
