"""JSON-RPC as the client reads and writes it: the wire's messages, with the client's errors.

:mod:`mcp_elicit.wire.jsonrpc` parses and encodes messages for both sides; here its
:class:`~mcp_elicit.wire.jsonrpc.InvalidMessage` becomes :class:`MalformedMessageError` (the
server sent something this client cannot read), a value with no JSON form in a request becomes
:class:`LocalError` (the caller's mistake, caught before anything is sent), and an
:class:`~mcp_elicit.wire.jsonrpc.ErrorResponse` becomes the typed exception the caller sees.
"""

from __future__ import annotations

from typing import Any

from mcp_elicit.client.errors import (
    LocalError,
    MalformedMessageError,
    McpClientError,
    MissingCapabilityError,
    UrlElicitationRequiredError,
)
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.errors import MISSING_REQUIRED_CLIENT_CAPABILITY, PARSE_ERROR
from mcp_elicit.wire.jsonrpc import ErrorResponse, Message, RequestId


def encode_request(request_id: RequestId, method: str, params: dict[str, Any]) -> bytes:
    """The request as JSON; :class:`LocalError` when a value has no JSON form (an integer past
    64 bits in a tool's arguments, say), so the caller gets a client error, not a TypeError."""
    try:
        return jsonrpc.encode_request(request_id, method, params)
    except TypeError as exc:  # orjson.JSONEncodeError is a TypeError
        raise LocalError(f"the {method} request cannot be encoded as JSON: {exc}") from None


def cancelled(request_id: RequestId) -> bytes:
    """``notifications/cancelled`` for a 2025-11-25 request of ours that its caller gave up on."""
    return jsonrpc.encode_notification(
        "notifications/cancelled", {"requestId": request_id, "reason": "cancelled by the client"}
    )


def decode(raw: bytes | bytearray | memoryview | str) -> Message:
    """One message from the server; :class:`MalformedMessageError` when it is not JSON-RPC 2.0."""
    try:
        return jsonrpc.read_message(raw)
    except jsonrpc.InvalidMessage as exc:
        if exc.code == PARSE_ERROR:
            raise MalformedMessageError("the server sent a message that is not valid JSON") from None
        # reply_id is set only for a request (it names a method): an id on anything else may be
        # one of this client's own, and an error carrying it would read as the server's answer.
        raise MalformedMessageError(
            f"the server sent an invalid JSON-RPC message: {exc.reason}",
            request_id=exc.reply_id,
            reason=exc.reason,
        ) from None


# 2025-11-25's URLElicitationRequiredError (wire/errors.py defines only what this project emits).
URL_ELICITATION_REQUIRED = -32042


def server_error(error: ErrorResponse, method: str, *, legacy: bool = False) -> McpClientError:
    """The typed exception for a JSON-RPC error response (``legacy``: from a 2025-11-25 server,
    where -32042 exists)."""
    kind: type[McpClientError] = McpClientError
    if error.code == MISSING_REQUIRED_CLIENT_CAPABILITY:
        kind = MissingCapabilityError
    elif legacy and error.code == URL_ELICITATION_REQUIRED:
        kind = UrlElicitationRequiredError
    return kind(error.code, error.message, error.data, method=method)
