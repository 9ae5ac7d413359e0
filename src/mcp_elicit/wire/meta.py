"""Per-request ``params._meta``: protocol version, client capabilities, client info.

2026-07-28 has no handshake: each request carries what the server needs. A request without
``protocolVersion`` or ``clientCapabilities`` is malformed (-32602, HTTP 400).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_elicit.wire.capabilities import ClientCapabilities, client_capabilities
from mcp_elicit.wire.errors import (
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
    invalid_params,
    unsupported_version,
)
from mcp_elicit.wire.versions import SUPPORTED_VERSIONS

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


@dataclass(frozen=True, slots=True)
class RequestMeta:
    protocol_version: str
    capabilities: ClientCapabilities
    client_info: dict[str, Any] | None
    progress_token: str | int | None
    log_level: str | None


def parse_request_meta(params: dict[str, Any]) -> RequestMeta:
    """Read and check ``params._meta``; raise -32602 naming what is missing or malformed."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise invalid_params(
            "params._meta is required on every 2026-07-28 request and must contain "
            f"{PROTOCOL_VERSION_KEY!r} and {CLIENT_CAPABILITIES_KEY!r}"
        )
    version: Any = meta.get(PROTOCOL_VERSION_KEY)
    capabilities: Any = meta.get(CLIENT_CAPABILITIES_KEY)
    client_info: Any = meta.get(CLIENT_INFO_KEY)
    if not (
        type(version) is str
        and version
        and type(capabilities) is dict
        and (client_info is None or type(client_info) is dict)
    ):
        _check_meta(version, capabilities, client_info)
    # None (the usual value of both) settles each with one comparison.
    token = meta.get("progressToken")
    if token is not None and (isinstance(token, bool) or not isinstance(token, (str, int))):
        token = None
    level = meta.get(LOG_LEVEL_KEY)
    if level is not None and not isinstance(level, str):
        level = None
    # RequestMeta(...) built through its slots: its generated frozen __init__ sets each field
    # through object.__setattr__, twice the cost, on every request. Same result.
    request_meta: RequestMeta = _new(RequestMeta)
    _set_version(request_meta, version)
    _set_capabilities(request_meta, client_capabilities(capabilities))
    _set_info(request_meta, client_info)
    _set_token(request_meta, token)
    _set_level(request_meta, level)
    return request_meta


def _check_meta(version: object, capabilities: object, client_info: object) -> None:
    """The general checks (the fast path in :func:`parse_request_meta` only takes exact types)."""
    if not isinstance(version, str) or not version:
        raise invalid_params(f"params._meta[{PROTOCOL_VERSION_KEY!r}] is required (a string)")
    if not isinstance(capabilities, dict):
        raise invalid_params(
            f"params._meta[{CLIENT_CAPABILITIES_KEY!r}] is required (an object; {{}} declares none)"
        )
    if client_info is not None and not isinstance(client_info, dict):
        raise invalid_params(f"params._meta[{CLIENT_INFO_KEY!r}] must be an object")


_new = object.__new__
_set_version = getattr(RequestMeta, "protocol_version").__set__  # noqa: B009 - the slots' descriptors
_set_capabilities = getattr(RequestMeta, "capabilities").__set__  # noqa: B009
_set_info = getattr(RequestMeta, "client_info").__set__  # noqa: B009
_set_token = getattr(RequestMeta, "progress_token").__set__  # noqa: B009
_set_level = getattr(RequestMeta, "log_level").__set__  # noqa: B009


def check_version(meta: RequestMeta, supported: tuple[str, ...] = SUPPORTED_VERSIONS) -> None:
    if meta.protocol_version not in supported:
        raise unsupported_version(meta.protocol_version, list(supported))


def initialize_refused(params: dict[str, Any]) -> McpError:
    """The answer to ``initialize``, which 2026-07-28 removed; it names the versions this server
    speaks (the spec asks that of a server that speaks only the new ones: an older client cannot
    learn them any other way).

    From a 2026-07-28 client (``_meta`` carries a protocol version) it is an unknown method,
    -32601. From an older client it is -32022, with the version it asked for.
    """
    versions = ", ".join(SUPPORTED_VERSIONS)
    meta = params.get("_meta")
    if isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta:
        return McpError(
            METHOD_NOT_FOUND,
            f"Method not found: 'initialize' (MCP {versions} has no initialize handshake)",
            {"supported": list(SUPPORTED_VERSIONS)},
        )
    requested = params.get("protocolVersion")
    return McpError(
        UNSUPPORTED_PROTOCOL_VERSION,
        f"Unsupported protocol version: this server speaks MCP {versions} only, which has no "
        "initialize handshake (send server/discover, and _meta on every request)",
        {
            "supported": list(SUPPORTED_VERSIONS),
            "requested": requested if isinstance(requested, str) else None,
        },
    )


def server_info_meta(name: str, version: str, title: str | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {"name": name, "version": version}
    if title:
        info["title"] = title
    return {SERVER_INFO_KEY: info}


__all__ = [
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "PROTOCOL_VERSION_KEY",
    "SERVER_INFO_KEY",
    "McpError",
    "RequestMeta",
    "check_version",
    "initialize_refused",
    "parse_request_meta",
    "server_info_meta",
]
