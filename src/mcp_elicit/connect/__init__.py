"""The URL-mode kit: what a server needs to send people to its own pages safely.

* :mod:`mcp_elicit.connect.identity`: who is calling (the principal from the validated MCP access
  token), protected-resource metadata and the ``401`` challenge.
* :mod:`mcp_elicit.connect.flows`: pending URL flows (``/connect/<id>``, ``/secret/<id>``), their
  store and the checks made when the client retries.
* :mod:`mcp_elicit.connect.vault`: third-party tokens and secrets, encrypted per record and bound
  to their owner, with single-flight refresh and revocation on disconnect.

Still to come (see the URL-mode kit issue): the secure pages, the third-party OAuth client and
``ctx.connection`` / ``ctx.secret`` in the engine.
"""
