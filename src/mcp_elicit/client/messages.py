"""JSON-RPC from the client's side, sans I/O: encode requests, classify what the server sends.

The server side of :mod:`mcp_elicit.wire.jsonrpc` refuses responses (clients never send them);
a client receives exactly those, so it reads messages here: a response (``result`` or
``error``), a notification, or a request -- which a 2026-07-28 server must never send.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_elicit.client.errors import LocalError, MalformedMessageError, McpClientError, MissingCapabilityError
from mcp_elicit.wire import codec
from mcp_elicit.wire.errors import MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_elicit.wire.jsonrpc import RequestId


@dataclass(frozen=True, slots=True)
class Response:
    id: RequestId | None
    result: Any  # the result object when ``error`` is None
    error: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class ServerNotification:
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ServerRequest:
    """A request from the server: forbidden in 2026-07-28, reported and otherwise ignored."""

    id: RequestId
    method: str


Incoming = Response | ServerNotification | ServerRequest


def encode_request(request_id: RequestId, method: str, params: dict[str, Any]) -> bytes:
    """The request as JSON; :class:`LocalError` when a value has no JSON form (an integer past
    64 bits in a tool's arguments, say), so the caller gets a client error, not a TypeError."""
    try:
        return codec.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    except TypeError as exc:  # orjson.JSONEncodeError is a TypeError
        raise LocalError(f"the {method} request cannot be encoded as JSON: {exc}") from None


def encode_notification(method: str, params: dict[str, Any]) -> bytes:
    return codec.dumps({"jsonrpc": "2.0", "method": method, "params": params})


def decode(raw: bytes | bytearray | memoryview | str) -> Incoming:
    """Classify one message; :class:`MalformedMessageError` when it is not JSON-RPC 2.0."""
    try:
        data = codec.loads(raw)
    except codec.JSONDecodeError:
        raise MalformedMessageError("the server sent a message that is not valid JSON") from None
    return classify(data)


def classify(data: object) -> Incoming:
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        raise MalformedMessageError(
            'the server sent something that is not a JSON-RPC 2.0 object ("jsonrpc": "2.0")'
        )
    method = data.get("method")
    request_id = data.get("id")
    if isinstance(request_id, bool) or not (request_id is None or isinstance(request_id, (str, int))):
        raise MalformedMessageError("the server sent a message whose id is neither a string nor an integer")
    if isinstance(method, str):
        if request_id is not None:
            return ServerRequest(request_id, method)
        params = data.get("params")
        return ServerNotification(method, params if isinstance(params, dict) else {})
    if "error" in data:
        error = data["error"]
        if not (
            isinstance(error, dict)
            and isinstance(error.get("code"), int)
            and not isinstance(error.get("code"), bool)
            and isinstance(error.get("message"), str)
        ):
            raise MalformedMessageError("the server sent an error that lacks an integer code or a message")
        return Response(request_id, None, error)
    if "result" in data:
        return Response(request_id, data["result"], None)
    raise MalformedMessageError("the server sent a JSON-RPC message with neither method, result nor error")


def server_error(error: dict[str, Any], method: str) -> McpClientError:
    """The typed exception for a JSON-RPC error object."""
    code: int = error["code"]
    kind = MissingCapabilityError if code == MISSING_REQUIRED_CLIENT_CAPABILITY else McpClientError
    return kind(code, error["message"], error.get("data"), method=method)
