"""The MCP 2026-07-28 wire, sans I/O: JSON-RPC envelope, ``_meta``, errors, MRTR shapes, HTTP rules."""

from mcp_elicit.wire.errors import McpError
from mcp_elicit.wire.jsonrpc import (
    InvalidMessage,
    Message,
    MessageTooLarge,
    Notification,
    Request,
    RequestId,
    encode_error,
    encode_notification,
    encode_result,
    parse_message,
)
from mcp_elicit.wire.meta import ClientCapabilities, RequestMeta, parse_request_meta
from mcp_elicit.wire.versions import LATEST_VERSION, SUPPORTED_VERSIONS

__all__ = [
    "LATEST_VERSION",
    "SUPPORTED_VERSIONS",
    "ClientCapabilities",
    "InvalidMessage",
    "McpError",
    "Message",
    "MessageTooLarge",
    "Notification",
    "Request",
    "RequestId",
    "RequestMeta",
    "encode_error",
    "encode_notification",
    "encode_result",
    "parse_message",
    "parse_request_meta",
]
