"""JSON-RPC and MCP error codes, and the one exception type the wire layer raises.

Codes in -32020..-32099 are reserved for the MCP specification; we emit only the ones it
defines. -32042 (URLElicitationRequired) belongs to 2025-11-25 and is never emitted here.
"""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022


class McpError(Exception):
    """An error that travels to the peer as a JSON-RPC error object.

    ``message`` must be safe to show to the peer: never put secrets, tracebacks or the reason a
    sealed state was refused in it.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        # Checked here, where the raise is: on the wire a bad one makes the peer refuse the whole
        # response, and the author would never learn which raise it was.
        if type(code) is not int:
            raise TypeError(f"McpError: the code must be an int, not {type(code).__name__}")
        if not isinstance(message, str):
            raise TypeError(f"McpError: the message must be a str, not {type(message).__name__}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        """The JSON-RPC error object: ``code``, ``message`` and, when set, ``data``."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __repr__(self) -> str:
        return f"McpError({self.code}, {self.message!r})"


def parse_error(detail: str) -> McpError:
    return McpError(PARSE_ERROR, f"Parse error: {detail}")


def invalid_request(detail: str) -> McpError:
    return McpError(INVALID_REQUEST, f"Invalid request: {detail}")


def method_not_found(method: str) -> McpError:
    return McpError(METHOD_NOT_FOUND, f"Method not found: {method!r}")


def invalid_params(detail: str, data: Any = None) -> McpError:
    return McpError(INVALID_PARAMS, f"Invalid params: {detail}", data)


def internal_error(detail: str = "the server failed while handling the request") -> McpError:
    return McpError(INTERNAL_ERROR, f"Internal error: {detail}")


def header_mismatch(detail: str) -> McpError:
    return McpError(HEADER_MISMATCH, f"Header mismatch: {detail}")


def missing_capability(required: dict[str, Any], detail: str) -> McpError:
    return McpError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        detail,
        {"requiredCapabilities": required},
    )


def unsupported_version(requested: object, supported: list[str]) -> McpError:
    return McpError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        {"supported": list(supported), "requested": requested},
    )
