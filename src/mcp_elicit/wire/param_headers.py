"""``Mcp-Param-*`` headers: tool arguments a server asked to see as HTTP headers.

A tool's ``inputSchema`` property may carry ``x-mcp-header: "<Name>"``; on HTTP, a call then
mirrors that argument as ``Mcp-Param-<Name>`` (booleans as ``true``/``false``, other scalars as
text, base64-sentinel form where needed). Annotations count only on integer, string or boolean
properties reached through ``properties`` alone; one anywhere else makes the tool unusable (the
spec has clients drop it). A server that reads the body checks each header against the argument
(:func:`check_param_headers`): an intermediary may have acted on the header.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcp_elicit.schema.text import pointer as json_pointer
from mcp_elicit.wire.errors import header_mismatch
from mcp_elicit.wire.http import encode_header_value, is_token, read_header_value

HeaderMap = dict[tuple[str, ...], str]

_TYPES = frozenset({"string", "integer", "boolean"})
# JSON Schema keywords whose values are subschemas (2020-12, and the older draft spellings).
_ONE_SCHEMA = frozenset(
    {
        "items",
        "additionalItems",
        "contains",
        "additionalProperties",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "if",
        "then",
        "else",
        "not",
    }
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_MAPS = frozenset({"patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"})
_INTEGER = re.compile(r"-?[0-9]{1,40}")
_NUMBER = re.compile(r"-?[0-9]{1,40}(\.[0-9]{1,40})?([eE][+-]?[0-9]{1,4})?")


class InvalidHeaderAnnotation(ValueError):
    pass


def header_map(input_schema: object) -> HeaderMap:
    """Property path -> header name; raise :class:`InvalidHeaderAnnotation` for a bad annotation,
    wherever it sits in the schema (one under ``$defs``, ``anyOf``, ``items``... is bad: no
    argument path leads to it)."""
    found: HeaderMap = {}
    seen: set[str] = set()
    # (path through ``properties`` alone, or None once another keyword was crossed; JSON pointer; node)
    stack: list[tuple[tuple[str, ...] | None, str, object]] = [((), "", input_schema)]
    while stack:
        path, pointer, node = stack.pop()
        if not isinstance(node, dict):
            continue
        if "x-mcp-header" in node:
            _annotation(node, path, pointer, found, seen)
        children: list[tuple[tuple[str, ...] | None, str, object]] = []
        for keyword, value in node.items():
            here = pointer + json_pointer(str(keyword))
            if keyword == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    sub_path = None if path is None else (*path, name)
                    children.append((sub_path, here + json_pointer(str(name)), sub))
            elif keyword in _ONE_SCHEMA:
                children.append((None, here, value))
            elif keyword in _SCHEMA_LISTS and isinstance(value, list):
                children.extend((None, f"{here}/{index}", sub) for index, sub in enumerate(value))
            elif keyword in _SCHEMA_MAPS and isinstance(value, dict):
                children.extend((None, here + json_pointer(str(key)), sub) for key, sub in value.items())
        stack.extend(reversed(children))  # visit in document order
    return found


def _annotation(
    schema: dict[str, Any], path: tuple[str, ...] | None, pointer: str, found: HeaderMap, seen: set[str]
) -> None:
    if path is None:
        raise InvalidHeaderAnnotation(
            f"x-mcp-header at {pointer}: only a property reached through 'properties' alone may carry one"
        )
    if not path:
        raise InvalidHeaderAnnotation("x-mcp-header on the schema root")
    where = ".".join(path)
    token = schema["x-mcp-header"]
    if not isinstance(token, str) or not is_token(token):
        raise InvalidHeaderAnnotation(f"property {where}: x-mcp-header is not an HTTP token")
    kind = schema.get("type")
    if not isinstance(kind, str) or kind not in _TYPES:  # (["string", "null"] is a list: unhashable)
        raise InvalidHeaderAnnotation(f"property {where}: x-mcp-header needs an integer, string or boolean")
    if token.lower() in seen:
        raise InvalidHeaderAnnotation(f"property {where}: x-mcp-header {token!r} is used twice")
    seen.add(token.lower())
    found[path] = token


def _argument(arguments: object, path: tuple[str, ...]) -> Any:
    value: Any = arguments
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def param_headers(mapping: HeaderMap, arguments: Mapping[str, Any]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for path, token in mapping.items():
        value = _argument(arguments, path)
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (str, int, float)):
            text = str(value)
        else:
            continue  # absent or not a scalar: no header
        headers[f"Mcp-Param-{token}"] = encode_header_value(text)
    return headers


def check_param_headers(headers: Mapping[str, str], mapping: HeaderMap, arguments: object) -> None:
    """Check a ``tools/call``'s ``Mcp-Param-*`` headers (lower-case names in ``headers``) against
    its arguments; -32020 when one is missing or differs. An argument that is absent, null or not
    a scalar has no header, and must not have one: an intermediary would act on a value the
    server never sees. Numbers compare by value (``42`` and ``42.0`` agree)."""
    for path, token in mapping.items():
        value = _argument(arguments, path)
        display = f"Mcp-Param-{token}"
        where = ".".join(path)
        raw = headers.get("mcp-param-" + token.lower())
        if value is None or not isinstance(value, (str, int, float)):
            if raw is not None:
                raise header_mismatch(
                    f"the {display} header is sent, but the argument {where!r} has no value in the body "
                    "that a header can carry"
                )
            continue
        if raw is None:
            raise header_mismatch(f"the {display} header is required: the argument {where!r} is in the body")
        text = read_header_value(raw, display)
        if not _same_value(text, value):
            raise header_mismatch(
                f"{display} header value {text!r} does not match the argument {where!r} ({value!r})"
            )


def _same_value(text: str, value: str | int | float) -> bool:
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, str):
        return text == value
    if _NUMBER.fullmatch(text) is None:
        return False
    if isinstance(value, int) and _INTEGER.fullmatch(text) is not None:
        return int(text) == value  # exact, however large
    return float(text) == value
