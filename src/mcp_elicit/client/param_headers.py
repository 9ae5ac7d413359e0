"""``Mcp-Param-*`` headers: tool arguments a server asked to see as HTTP headers.

A tool's ``inputSchema`` property may carry ``x-mcp-header: "<Name>"``; on HTTP, a call then
mirrors that argument as ``Mcp-Param-<Name>`` (booleans as ``true``/``false``, other scalars as
text, base64-sentinel form where needed). Annotations count only on integer, string or boolean
properties reached through ``properties`` alone; a tool with an invalid one is unusable (the
spec has clients drop it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcp_elicit.wire.http import encode_header_value

HeaderMap = dict[tuple[str, ...], str]

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TYPES = frozenset({"string", "integer", "boolean"})
_MAX_DEPTH = 32


class InvalidHeaderAnnotation(ValueError):
    pass


def header_map(input_schema: object) -> HeaderMap:
    """Property path -> header name; raise :class:`InvalidHeaderAnnotation` for a bad annotation."""
    found: HeaderMap = {}
    seen: set[str] = set()
    _walk(input_schema, (), found, seen)
    return found


def _walk(schema: object, path: tuple[str, ...], found: HeaderMap, seen: set[str]) -> None:
    if not isinstance(schema, dict) or len(path) > _MAX_DEPTH:
        return
    token = schema.get("x-mcp-header")
    if token is not None:
        where = ".".join(path) or "(root)"
        if not path:
            raise InvalidHeaderAnnotation("x-mcp-header on the schema root")
        if not isinstance(token, str) or not _TOKEN.fullmatch(token):
            raise InvalidHeaderAnnotation(f"property {where}: x-mcp-header is not an HTTP token")
        if schema.get("type") not in _TYPES:
            raise InvalidHeaderAnnotation(
                f"property {where}: x-mcp-header needs an integer, string or boolean"
            )
        if token.lower() in seen:
            raise InvalidHeaderAnnotation(f"property {where}: x-mcp-header {token!r} is used twice")
        seen.add(token.lower())
        found[path] = token
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, sub in properties.items():
            _walk(sub, (*path, name), found, seen)


def param_headers(mapping: HeaderMap, arguments: Mapping[str, Any]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for path, token in mapping.items():
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (str, int, float)):
            text = str(value)
        else:
            continue  # absent or not a scalar: no header
        headers[f"Mcp-Param-{token}"] = encode_header_value(text)
    return headers
