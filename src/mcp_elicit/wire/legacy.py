"""The 2025-11-25 wire ("legacy"), sans I/O: the handshake, its results, and elicitation as a
real request.

Revision 2025-11-25 (and 2025-06-18 before it) opens every session with ``initialize``: the
client names the newest version it speaks, its capabilities and itself; the server answers with
a version it speaks (the same one, or its own latest: never a 2026 one inside ``initialize``),
its capabilities and ``serverInfo``. Capabilities are then fixed for the session. Results carry
no ``resultType``; a server asks the user with an ``elicitation/create`` *request* on the back
channel and gets an ``ElicitResult`` back. What differs from 2026-07-28, as this module writes it:

* :func:`negotiate` and :func:`initialize_result` -- the handshake;
* :func:`read_initialize` -- the client's ``initialize`` params, checked;
* :func:`legacy_result` -- a result as a 2025 client reads it (no ``resultType``, no 2026 caching
  fields, no 2026 ``_meta`` keys);
* :func:`elicitation_request` -- a 2026 input request as the 2025 request that carries it (a URL
  elicitation gets its required ``elicitationId``; at 2025-06-18 the form is written in that
  revision's smaller schema);
* :func:`read_elicit_result` -- the client's ``ElicitResult``, as the engine's ``inputResponses``
  entry (its ``_meta`` dropped);
* :func:`url_elicitation_required` -- the ``-32042`` error, for servers that send URLs that way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcp_elicit.wire.errors import McpError, invalid_params, invalid_request
from mcp_elicit.wire.meta import SERVER_INFO_KEY
from mcp_elicit.wire.mrtr import ELICIT, check_elicit_result

LATEST_LEGACY: Final = "2025-11-25"
LEGACY_VERSIONS: Final = (LATEST_LEGACY, "2025-06-18")
"""The handshake-era versions this implementation speaks, newest first. 2025-06-18 has no URL
mode (elicitation was form only then), so URL questions are never sent on its sessions."""

URL_ELICITATION_REQUIRED: Final = -32042
LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# What 2026-07-28 added to results, which a 2025 client does not expect.
_MODERN_RESULT_KEYS: Final = ("resultType", "ttlMs", "cacheScope")


def is_legacy_version(version: object) -> bool:
    """Whether ``version`` names a revision with the ``initialize`` handshake (any of them, also
    those this implementation does not speak: they all predate 2026-07-28)."""
    return isinstance(version, str) and len(version) == 10 and version < "2026-07-28"


def is_modern_version(version: object) -> bool:
    """Whether ``version`` names a revision without the handshake: a date from 2026-07-28 on
    (later ones too, which this implementation does not speak). Text that is no date names
    neither era."""
    return (
        isinstance(version, str)
        and version >= "2026-07-28"
        and re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", version) is not None
    )


def check_version_header(value: str | None) -> None:
    """The ``MCP-Protocol-Version`` header of a message in a 2025-11-25 session (any but its
    ``initialize``): absent, or a version these sessions speak. Any other value is refused
    (-32600, HTTP 400: the spec's MUST), rather than served as if it named the session's."""
    if value is None or value in LEGACY_VERSIONS:
        return
    shown = value if 0 < len(value) <= 40 and value.isprintable() else repr(value[:40])
    shown += "..." if len(value) > 40 else ""
    raise invalid_request(
        f"MCP-Protocol-Version {shown} is not a version of this server's 2025-11-25 sessions "
        f"({', '.join(LEGACY_VERSIONS)}): send the one initialize answered"
    )


def negotiate(requested: object) -> str:
    """The version to answer an ``initialize`` asking for ``requested``: the same when this server
    speaks it, else its latest legacy one -- never a 2026 version, whatever was asked."""
    if isinstance(requested, str) and requested in LEGACY_VERSIONS:
        return requested
    return LATEST_LEGACY


@dataclass(frozen=True, slots=True)
class InitializeParams:
    requested: str
    capabilities: dict[str, Any]
    client_info: dict[str, Any]


def read_initialize(params: Mapping[str, Any]) -> InitializeParams:
    """The ``initialize`` params; -32602 naming what is missing or malformed."""
    requested = params.get("protocolVersion")
    capabilities = params.get("capabilities")
    client_info = params.get("clientInfo")
    if not isinstance(requested, str) or not requested:
        raise invalid_params("initialize needs params.protocolVersion (a string)")
    if not isinstance(capabilities, dict):
        raise invalid_params("initialize needs params.capabilities (an object; {} declares none)")
    if not isinstance(client_info, dict) or not isinstance(client_info.get("name"), str):
        raise invalid_params("initialize needs params.clientInfo with a name")
    return InitializeParams(requested, capabilities, client_info)


def session_capabilities(capabilities: dict[str, Any], version: str) -> dict[str, Any]:
    """The client capabilities a session may use: at 2025-06-18 elicitation was form only, so a
    ``url`` mode declared there is not believed (such a client cannot take URL questions)."""
    if version != "2025-06-18":
        return capabilities
    elicitation = capabilities.get("elicitation")
    if not isinstance(elicitation, dict) or "url" not in elicitation:
        return capabilities
    return {**capabilities, "elicitation": {k: v for k, v in elicitation.items() if k != "url"} or {}}


def initialize_result(
    version: str,
    capabilities: dict[str, Any],
    server_info: dict[str, Any],
    instructions: str | None,
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": capabilities,
        "serverInfo": server_info,
    }
    if instructions:
        result["instructions"] = instructions
    return result


def legacy_result(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` as a 2025 client reads it: without the keys 2026-07-28 added (``resultType``,
    ``ttlMs``, ``cacheScope``, the ``serverInfo`` in ``_meta``)."""
    out = {key: value for key, value in result.items() if key not in _MODERN_RESULT_KEYS}
    meta = out.get("_meta")
    if isinstance(meta, dict) and SERVER_INFO_KEY in meta:
        rest = {key: value for key, value in meta.items() if key != SERVER_INFO_KEY}
        if rest:
            out["_meta"] = rest
        else:
            del out["_meta"]
    return out


def elicitation_request(
    params: Mapping[str, Any], elicitation_id: str | None, version: str = LATEST_LEGACY
) -> dict[str, Any]:
    """The params of the ``elicitation/create`` request that asks a 2026 elicitation's question
    (``params`` of its input request) at ``version``: a URL one carries ``elicitation_id``; at
    2025-06-18 the form is rewritten (:func:`form_for_2025_06_18`)."""
    out = dict(params)
    if out.get("mode") == "url":
        if elicitation_id is None:
            raise ValueError("a URL elicitation needs an elicitationId at 2025-11-25")
        out["elicitationId"] = elicitation_id
    elif version == "2025-06-18":
        del out["mode"]  # (a form: URL questions never go to such a session)
        out["requestedSchema"] = form_for_2025_06_18(out["requestedSchema"])
    return out


def form_for_2025_06_18(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A form (inside the elicitation subset) in the schema of 2025-06-18, which knew no titled
    choices, no multi-select and no defaults but a boolean's: a titled single choice becomes
    ``enum`` with ``enumNames``, a default other than a boolean's is left out (the answer's
    check applies it when the field is left empty). :class:`ValueError` names a multi-select
    field, which that revision cannot ask."""
    properties = {}
    for name, field in schema["properties"].items():
        if field.get("type") == "array":
            raise ValueError(f"the form's field {name!r} is a multi-select, which its forms cannot hold")
        out = {key: value for key, value in field.items() if key not in ("oneOf", "anyOf", "default")}
        if field.get("type") == "boolean" and "default" in field:
            out["default"] = field["default"]
        choices = field.get("oneOf", field.get("anyOf"))
        if isinstance(choices, list):
            out["enum"] = [choice["const"] for choice in choices]
            out["enumNames"] = [choice.get("title", choice["const"]) for choice in choices]
        properties[name] = out
    return {**schema, "properties": properties}


def read_elicit_result(result: object) -> dict[str, Any]:
    """The client's ``ElicitResult`` as the ``inputResponses`` entry the engine reads:
    ``{"action": ..., "content": ...}``, read as 2026-07-28 reads it: a result that is not one
    is the client's fault, -32602 naming what is wrong (an action outside
    accept/decline/cancel, accepted content that is not an object). A decline or cancel is one
    whatever else it carries: content sent with it is dropped, never passed on. ``_meta`` is
    dropped."""
    where = "the client's ElicitResult"
    if not isinstance(result, dict):
        raise invalid_params(f"{where} is not an object")
    action, content = check_elicit_result(ELICIT, result, where=where)
    if action != "accept":
        return {"action": action}
    return {"action": "accept"} if content is None else {"action": "accept", "content": content}


def url_elicitation_required(elicitations: list[dict[str, Any]], message: str) -> McpError:
    """``-32042``: the call cannot go on until the user has opened these URLs (each an
    ``elicitation/create`` URL-mode params object with its ``elicitationId``); the client
    retries the call once they are done."""
    return McpError(URL_ELICITATION_REQUIRED, message, {"elicitations": elicitations})
