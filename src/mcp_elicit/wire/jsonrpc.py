"""The JSON-RPC 2.0 envelope: bytes in, a typed message out, and bytes back.

Only what MCP 2026-07-28 allows a client to send is accepted: one request or notification per
message (no batches), ``params`` an object, ids strings or integers. Clients never send
responses in this revision, so a response-shaped message is an invalid request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from mcp_elicit.wire.errors import INVALID_REQUEST, PARSE_ERROR, McpError

RequestId = str | int

DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024

# orjson directly (what mcp_elicit.wire.codec wraps): one call less per message on the hot path.
_loads = orjson.loads
_dumps = orjson.dumps
_JSONDecodeError = orjson.JSONDecodeError


@dataclass(frozen=True, slots=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: dict[str, Any]


Message = Request | Notification

# Request(...) on the hot path is built through its slots: the generated frozen __init__ sets each
# field through object.__setattr__, about twice the cost. Same result.
_new = object.__new__
_set_id = getattr(Request, "id").__set__  # noqa: B009 - the slots' descriptors
_set_method = getattr(Request, "method").__set__  # noqa: B009
_set_params = getattr(Request, "params").__set__  # noqa: B009


class InvalidMessage(McpError):
    """A message that cannot be processed; ``request_id`` is set when the id was readable."""

    def __init__(self, code: int, message: str, request_id: RequestId | None = None) -> None:
        super().__init__(code, message)
        self.request_id = request_id


class MessageTooLarge(InvalidMessage):
    """The message exceeds the configured size limit (HTTP maps this to 413)."""


def _valid_id(value: object) -> bool:
    # bool is an int subclass, and JSON-RPC ids are never booleans.
    return (isinstance(value, (str, int))) and not isinstance(value, bool)


def parse_message(
    raw: bytes | bytearray | memoryview | str, *, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
) -> Message:
    """Parse one JSON-RPC message; raise :class:`InvalidMessage` with the right code otherwise."""
    # surrogatepass: a str with a lone surrogate is counted, then refused by the parser (-32700).
    size = (
        len(raw)
        if type(raw) is bytes
        else len(raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw)
    )
    if size > max_bytes:
        raise MessageTooLarge(
            INVALID_REQUEST,
            f"Invalid request: the message is {size} bytes, over the limit of {max_bytes} bytes",
        )
    try:
        data = _loads(raw)
    except _JSONDecodeError as exc:
        raise InvalidMessage(PARSE_ERROR, _parse_failure(raw, exc)) from None
    if type(data) is dict:
        # The usual message, a well-formed request, checked in one go; anything else takes the
        # general path below, which names what is wrong.
        request_id = data.get("id")
        method = data.get("method")
        params = data.get("params")
        if (
            (type(request_id) is int or type(request_id) is str)
            and type(method) is str
            and type(params) is dict
            and data.get("jsonrpc") == "2.0"
        ):
            request: Request = _new(Request)
            _set_id(request, request_id)
            _set_method(request, method)
            _set_params(request, params)
            return request
    return _parse_data(data)


def _parse_failure(raw: bytes | bytearray | memoryview | str, exc: Exception) -> str:
    """The -32700 message. orjson words two common failures misleadingly (any invalid UTF-8
    byte is "surrogates not allowed"; a lone low surrogate escape is an "invalid high
    surrogate"), so those two are named here; the rest keep orjson's words."""
    if not isinstance(raw, str):
        try:
            bytes(raw).decode("utf-8")
        except UnicodeDecodeError as bad:
            return (
                f"Parse error: the message is not valid UTF-8 (byte 0x{bad.object[bad.start]:02x} "
                f"at offset {bad.start})"
            )
    detail = str(exc)
    if "surrogate" in detail:
        return (
            "Parse error: the message holds a lone surrogate (\\ud800-\\udfff without its pair), "
            f"which is not Unicode text ({detail})"
        )
    return f"Parse error: the message is not valid JSON ({detail})"


def _parse_data(data: Any) -> Message:
    if isinstance(data, list):
        raise InvalidMessage(
            INVALID_REQUEST, "Invalid request: JSON-RPC batches are not supported; send one message"
        )
    if not isinstance(data, dict):
        raise InvalidMessage(INVALID_REQUEST, "Invalid request: a JSON-RPC message must be an object")

    has_id = "id" in data
    raw_id = data.get("id")
    request_id: RequestId | None = raw_id if _valid_id(raw_id) else None

    if data.get("jsonrpc") != "2.0":
        raise InvalidMessage(INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"', request_id)
    method = data.get("method")
    if not isinstance(method, str):
        if "result" in data or "error" in data:
            raise InvalidMessage(
                INVALID_REQUEST,
                "Invalid request: clients send no JSON-RPC responses in MCP 2026-07-28; "
                "answers to input requests travel in inputResponses on a retried request",
                request_id,
            )
        raise InvalidMessage(INVALID_REQUEST, 'Invalid request: "method" must be a string', request_id)
    if has_id and request_id is None:
        detail = '"id" must be a string or an integer'
        if type(raw_id) is float and raw_id.is_integer() and abs(raw_id) >= 2**63:
            detail += " (integer ids must fit in 64 bits)"
        raise InvalidMessage(INVALID_REQUEST, f"Invalid request: {detail}", None)
    params = data.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidMessage(INVALID_REQUEST, 'Invalid request: "params" must be an object', request_id)
    if request_id is None:
        return Notification(method, params)
    return Request(request_id, method, params)


def encode_result(request_id: RequestId, result: dict[str, Any]) -> bytes:
    return _dumps({"jsonrpc": "2.0", "id": request_id, "result": result})


def encode_error(request_id: RequestId | None, error: McpError) -> bytes:
    return _dumps({"jsonrpc": "2.0", "id": request_id, "error": error.to_json()})


def encode_notification(method: str, params: dict[str, Any]) -> bytes:
    return _dumps({"jsonrpc": "2.0", "method": method, "params": params})
