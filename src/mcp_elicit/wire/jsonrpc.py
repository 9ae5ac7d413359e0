"""JSON-RPC 2.0 messages in both directions: bytes in, a typed message out, and bytes back.

Four kinds of message travel between an MCP client and server, whichever of them sends:

* :class:`Request` -- ``id``, ``method``, ``params``: the peer must answer it;
* :class:`Notification` -- ``method``, ``params`` and no ``id``: nothing answers it;
* :class:`Result` -- ``id`` and ``result``: the answer to a request that went well;
* :class:`ErrorResponse` -- ``id`` (``None`` when the failing request's id could not be read)
  and ``error``: the answer to a request that failed.

:func:`parse_message` checks the envelope only, the same way for both sides: one message per
payload (no batches), ``"jsonrpc": "2.0"``, ids that are strings or integers (never booleans,
never fractions), ``params`` an object when present, a response with exactly one of ``result``
and ``error``. Which kinds a peer accepts is the peer's rule, not the parser's: a 2026-07-28
server takes requests and notifications only (:func:`refuse_response`), a 2025-11-25 server also
takes the responses to the requests it sent, a client takes all four.

Failures raise :class:`InvalidMessage` with the JSON-RPC code a server answers with (``-32700``
for bytes that are not JSON, ``-32600`` for JSON that is not a message) and, when it could be
read, the id of the request that failed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import orjson

from mcp_elicit.wire import codec
from mcp_elicit.wire.errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, McpError

RequestId = str | int

DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024


# Not frozen: one per message read, and a frozen dataclass's __init__ sets each field through
# object.__setattr__ (~1.3k instructions a field; bench/README.md). Never modified.
@dataclass(slots=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any]


@dataclass(slots=True)
class Notification:
    method: str
    params: dict[str, Any]


@dataclass(slots=True)
class Result:
    id: RequestId
    result: Any  # an object in every MCP result; the receiver checks what it expects


@dataclass(slots=True)
class ErrorResponse:
    id: RequestId | None
    code: int
    message: str
    data: Any = None

    def to_error(self) -> McpError:
        return McpError(self.code, self.message, self.data)


Response = Result | ErrorResponse
Message = Request | Notification | Result | ErrorResponse


class InvalidMessage(McpError):
    """A message that cannot be processed; ``request_id`` is set when the id was readable.

    ``of_response``: the message was a response, so its id is one of the *receiver's own*
    requests (each side numbers its own): an error sent back about it must not carry that id, or
    the peer would take it for the answer to its own request with the same number."""

    def __init__(
        self, code: int, message: str, request_id: RequestId | None = None, *, of_response: bool = False
    ) -> None:
        super().__init__(code, message)
        self.request_id = request_id
        self.of_response = of_response

    @property
    def reply_id(self) -> RequestId | None:
        """The id the error sent back about this message carries (see ``of_response``)."""
        return None if self.of_response else self.request_id

    @property
    def reason(self) -> str:
        """What is wrong with the message, without the kind of error in front (``Invalid
        request: ``, ``Invalid response: ``, ``Parse error: ``)."""
        return self.message.split(": ", 1)[-1]


class MessageTooLarge(InvalidMessage):
    """The message exceeds the configured size limit (HTTP maps this to 413)."""


def _valid_id(value: object) -> bool:
    # bool is an int subclass, and JSON-RPC ids are never booleans; an integer past 64 bits could
    # not be written back in the reply.
    if type(value) is str:
        return True
    return type(value) is int and codec.MIN_INTEGER <= value <= codec.MAX_INTEGER


def parse_message(
    raw: bytes | bytearray | memoryview | str, *, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
) -> Message:
    """Parse one JSON-RPC message; raise :class:`InvalidMessage` with the right code otherwise."""
    # surrogatepass: a str with a lone surrogate is counted, then refused by the parser (-32700).
    size = len(raw.encode("utf-8", "surrogatepass")) if isinstance(raw, str) else len(raw)
    if size > max_bytes:
        raise MessageTooLarge(
            INVALID_REQUEST,
            f"Invalid request: the message is {size} bytes, over the limit of {max_bytes} bytes",
        )
    return read_message(raw)


def read_message(raw: bytes | bytearray | memoryview | str) -> Message:
    """:func:`parse_message` without the size limit (a peer's own reader has one of its own)."""
    try:
        data = codec.loads(raw)
    except codec.IntegerOutOfRange as exc:
        raise _out_of_range(exc) from None
    except codec.JSONDecodeError as exc:
        raise InvalidMessage(PARSE_ERROR, _parse_failure(raw, exc)) from None
    return message_from(data)


def _out_of_range(exc: codec.IntegerOutOfRange) -> InvalidMessage:
    """Valid JSON with an integer past 64 bits, which is neither rounded nor carried on: a bad
    id is -32600 (as any bad id), one in a request's params -32602, anywhere else -32600."""
    message = message_from(exc.value)  # (raises for the id, and for any other fault first)
    reason = f"the integer {exc.literal} at {_path(exc.path)} is outside -2**63 .. 2**64 - 1"
    if isinstance(message, Request) and exc.path[0] == "params":
        return InvalidMessage(INVALID_PARAMS, f"Invalid params: {reason}", message.id)
    return InvalidMessage(
        INVALID_REQUEST,
        f"Invalid request: {reason}",
        getattr(message, "id", None),
        of_response=isinstance(message, Response),
    )


def message_from(data: object) -> Message:
    """The message a decoded JSON value is (see :func:`parse_message`)."""
    if isinstance(data, list):
        raise InvalidMessage(
            INVALID_REQUEST, "Invalid request: JSON-RPC batches are not supported; send one message"
        )
    if not isinstance(data, dict):
        raise InvalidMessage(INVALID_REQUEST, "Invalid request: a JSON-RPC message must be an object")

    has_id = "id" in data
    raw_id = data.get("id")
    request_id: RequestId | None = raw_id if _valid_id(raw_id) else None

    method = data.get("method")
    # A message without a method is no request: it answers (or was meant to) one of the receiver's
    # own requests, so an error about it must not carry its id (see InvalidMessage.of_response).
    of_response = method is None
    if data.get("jsonrpc") != "2.0":
        raise InvalidMessage(
            INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"', request_id, of_response=of_response
        )
    if of_response and ("result" in data or "error" in data):
        return _response(data, request_id, has_id)
    if not isinstance(method, str):
        raise InvalidMessage(
            INVALID_REQUEST, 'Invalid request: "method" must be a string', request_id, of_response=of_response
        )
    if has_id and request_id is None:
        raise InvalidMessage(INVALID_REQUEST, f"Invalid request: {_id_problem(raw_id)}", None)
    params = data.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidMessage(INVALID_REQUEST, 'Invalid request: "params" must be an object', request_id)
    if request_id is None:
        return Notification(method, params)
    return Request(request_id, method, params)


def _id_problem(raw_id: object) -> str:
    detail = '"id" must be a string or an integer'
    if type(raw_id) is int or (type(raw_id) is float and raw_id.is_integer() and abs(raw_id) >= 2**63):
        detail += " (integer ids must fit in 64 bits)"
    return detail


def _response(data: dict[str, Any], request_id: RequestId | None, has_id: bool) -> Response:
    if "result" in data and "error" in data:
        raise InvalidMessage(
            INVALID_REQUEST,
            'Invalid response: it carries both "result" and "error"',
            request_id,
            of_response=True,
        )
    raw_id = data.get("id")
    if "result" in data:
        if request_id is None:
            raise InvalidMessage(
                INVALID_REQUEST, f"Invalid response: {_id_problem(raw_id)}", None, of_response=True
            )
        return Result(request_id, data["result"])
    if has_id and raw_id is not None and request_id is None:
        raise InvalidMessage(
            INVALID_REQUEST, f"Invalid response: {_id_problem(raw_id)}", None, of_response=True
        )
    error = data["error"]
    code = error.get("code") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if not (isinstance(code, int) and not isinstance(code, bool) and isinstance(message, str)):
        raise InvalidMessage(
            INVALID_REQUEST,
            'Invalid response: "error" must be an object with an integer "code" and a string "message"',
            request_id,
            of_response=True,
        )
    assert isinstance(error, dict)
    return ErrorResponse(request_id, code, message, error.get("data"))


def refuse_response(message: Response) -> InvalidMessage:
    """What a 2026-07-28 server answers a client that sent a response: in that revision servers
    send no requests, and answers to input requests travel in ``inputResponses``."""
    return InvalidMessage(
        INVALID_REQUEST,
        "Invalid request: clients send no JSON-RPC responses in MCP 2026-07-28; "
        "answers to input requests travel in inputResponses on a retried request",
        message.id,
    )


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")


def _path(steps: tuple[str | int, ...]) -> str:
    """``params.arguments.n``, ``result.items[2]``; a key that is no plain name is shown as a
    JSON string, escaped and cut (``params["\\u001b..."]``): it may be the peer's hostile text."""
    shown = []
    for step in steps:
        if isinstance(step, int):
            shown.append(f"[{step}]")
        elif _NAME.fullmatch(step):
            shown.append(f".{step}")
        else:
            key = step if len(step) <= 40 else step[:40] + "..."
            shown.append(f"[{json.dumps(key)}]")
    return "".join(shown).lstrip(".")


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


# -- encoding ----------------------------------------------------------------------------------
# orjson raises TypeError (JSONEncodeError) for a value with no JSON form; callers that take
# values from user code turn it into an error of their own.


def encode_request(request_id: RequestId, method: str, params: dict[str, Any]) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def encode_notification(method: str, params: dict[str, Any]) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "method": method, "params": params})


def encode_result(request_id: RequestId, result: dict[str, Any]) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": result})


def encode_error(request_id: RequestId | None, error: McpError) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "error": error.to_json()})
