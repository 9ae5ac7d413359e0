"""The MCP wire of both eras, sans I/O: bytes and dicts in, typed values and checked dicts out.

Nothing here reads a socket or runs a handler; the server, the client and the transports import
the module they need:

- :mod:`~mcp_elicit.wire.jsonrpc`: JSON-RPC 2.0 messages in both directions.
- :mod:`~mcp_elicit.wire.errors`: the error codes and :class:`~mcp_elicit.wire.errors.McpError`.
- :mod:`~mcp_elicit.wire.meta`: a 2026-07-28 request's ``_meta`` and the client's capabilities.
- :mod:`~mcp_elicit.wire.mrtr`: input requests, ``InputRequiredResult``, ``inputResponses``.
- :mod:`~mcp_elicit.wire.legacy`: the 2025-11-25 handshake and its ``elicitation/create``.
- :mod:`~mcp_elicit.wire.http`: the Streamable HTTP rules (headers, statuses, Accept).
- :mod:`~mcp_elicit.wire.param_headers`: ``Mcp-Param-*`` headers.
- :mod:`~mcp_elicit.wire.codec`: JSON and base64url.
- :mod:`~mcp_elicit.wire.hosts`: the one loopback rule.
- :mod:`~mcp_elicit.wire.versions`: the protocol versions spoken.
"""
