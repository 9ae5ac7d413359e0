"""Per-request ``params._meta``: protocol version, client capabilities, client info.

2026-07-28 has no handshake: each request carries what the server needs. A request without
``protocolVersion`` or ``clientCapabilities`` is malformed (-32602, HTTP 400).

Client capabilities (:class:`ClientCapabilities`), and what each kind of input request needs of
them: ``{"elicitation": {}}`` means form mode only (backward compatibility); a client that wants
URL mode must say ``{"elicitation": {"url": {}}}``. A URL-only client does not support forms.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp_elicit.wire.errors import (
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
    invalid_params,
    unsupported_version,
)
from mcp_elicit.wire.versions import SUPPORTED_VERSIONS

# -- client capabilities -------------------------------------------------------------------------

ElicitMode = Literal["form", "url"]


_NONE: frozenset[str] = frozenset()
_FORM: frozenset[str] = frozenset({"form"})
_URL: frozenset[str] = frozenset({"url"})
_BOTH: frozenset[str] = frozenset({"form", "url"})


def _modes(raw: dict[str, Any]) -> frozenset[str]:
    elicitation = raw.get("elicitation")
    if not isinstance(elicitation, dict):
        return _NONE
    form = isinstance(elicitation.get("form"), dict)
    url = isinstance(elicitation.get("url"), dict)
    if url:
        return _BOTH if form else _URL
    return _FORM  # {"form": {}} or the backward-compatible {}


# Not frozen: one per request, and a frozen dataclass's __init__ sets each field through
# object.__setattr__ (~1.3k instructions a field; bench/README.md). Never modified.
@dataclass(slots=True)
class ClientCapabilities:
    raw: dict[str, Any]
    modes: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.modes = _modes(self.raw)

    def elicitation_modes(self) -> frozenset[str]:
        return self.modes

    def can_elicit(self, mode: ElicitMode = "form") -> bool:
        return mode in self.modes

    def can_sample(self, *, tools: bool = False, context: bool = False) -> bool:
        sampling = self.raw.get("sampling")
        if not isinstance(sampling, dict):
            return False
        if tools and not isinstance(sampling.get("tools"), dict):
            return False
        return not (context and not isinstance(sampling.get("context"), dict))

    def can_list_roots(self) -> bool:
        return isinstance(self.raw.get("roots"), dict)

    def input_kinds(self) -> int:
        """The kinds of input request this client takes, as bits (form, URL, sampling, sampling
        with tools, sampling with context, roots): two requests with the same value allow a
        handler the same questions."""
        modes = self.modes
        bits = ("form" in modes) | ("url" in modes) << 1
        raw = self.raw
        sampling = raw.get("sampling")
        if isinstance(sampling, dict):
            bits |= 4 | isinstance(sampling.get("tools"), dict) << 3
            bits |= isinstance(sampling.get("context"), dict) << 4
        if isinstance(raw.get("roots"), dict):
            bits |= 32
        return bits


def required_for_elicitation(mode: ElicitMode) -> dict[str, Any]:
    """The ``requiredCapabilities`` object of a -32021 error for this elicitation mode."""
    return {"elicitation": {mode: {}}}


def sampling_needs(params: Mapping[str, Any]) -> tuple[bool, bool]:
    """What a ``sampling/createMessage`` with these ``params`` needs beyond ``sampling``: whether
    it offers the model tools (``sampling.tools``) and whether it asks the client to include
    context (``sampling.context``, for an ``includeContext`` other than ``"none"``)."""
    tools = "tools" in params or "toolChoice" in params
    context = params.get("includeContext", "none")
    return tools, context is not None and context != "none"


def required_for_sampling(tools: bool = False, context: bool = False) -> dict[str, Any]:
    """The ``requiredCapabilities`` object of a -32021 error for a sampling request."""
    sampling: dict[str, Any] = {}
    if tools:
        sampling["tools"] = {}
    if context:
        sampling["context"] = {}
    return {"sampling": sampling}


def merge_required(into: dict[str, Any], more: Mapping[str, Any]) -> dict[str, Any]:
    """Add the capabilities of ``more`` to ``into`` (both ``requiredCapabilities`` objects), so
    that one -32021 error can name everything a request was missing; returns ``into``."""
    for name, value in more.items():
        present = into.get(name)
        if isinstance(present, dict) and isinstance(value, Mapping):
            merge_required(present, value)
        elif name not in into:
            into[name] = dict(value) if isinstance(value, Mapping) else value
    return into


# -- _meta ----------------------------------------------------------------------------------------

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


# Not frozen: one per request, and a frozen dataclass's __init__ sets each field through
# object.__setattr__ (~1.3k instructions a field; bench/README.md). Never modified.
@dataclass(slots=True)
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
    if not isinstance(version, str) or not version:
        raise invalid_params(f"params._meta[{PROTOCOL_VERSION_KEY!r}] is required (a string)")
    if not isinstance(capabilities, dict):
        raise invalid_params(
            f"params._meta[{CLIENT_CAPABILITIES_KEY!r}] is required (an object; {{}} declares none)"
        )
    if client_info is not None and not isinstance(client_info, dict):
        raise invalid_params(f"params._meta[{CLIENT_INFO_KEY!r}] must be an object")
    token = meta.get("progressToken")
    if isinstance(token, bool) or not isinstance(token, str | int):
        token = None
    level = meta.get(LOG_LEVEL_KEY)
    if not isinstance(level, str):
        level = None
    return RequestMeta(version, ClientCapabilities(capabilities), client_info, token, level)


def is_modern(params: dict[str, Any]) -> bool:
    """Whether a request carries the 2026-07-28 envelope: ``_meta`` with a protocol version (the
    one sign of the era; a bare ``_meta``, say with only a progress token, is not one)."""
    meta = params.get("_meta")
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


def request_meta(method: str, params: dict[str, Any]) -> RequestMeta:
    """The ``_meta`` of a 2026-07-28 request: what every transport reads before the server runs
    anything. ``initialize``, which 2026-07-28 removed, is refused naming the versions this
    server speaks (:func:`initialize_refused`); a missing or malformed ``_meta`` is -32602."""
    if method == "initialize":
        raise initialize_refused(params)
    return parse_request_meta(params)


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
    "ClientCapabilities",
    "McpError",
    "RequestMeta",
    "check_version",
    "initialize_refused",
    "is_modern",
    "parse_request_meta",
    "request_meta",
    "server_info_meta",
]
