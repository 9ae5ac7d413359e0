"""What a tool's arguments are held to before pydantic reads them: the values pydantic would take
although the ``inputSchema`` it wrote forbids them.

pydantic compares a value with the choices of an ``Enum`` or a ``Literal`` by Python equality,
where ``True == 1``: an integer choice takes ``true`` and a boolean one takes ``1``, strict mode or
not. And it reads a list into a ``set`` by dropping duplicates, where its schema says
``uniqueItems``. A client checks its arguments against the schema, which tells a boolean from a
number and refuses duplicates: so does :func:`misfit`, so that the server takes exactly what its
schema allows (the plain signature path checks its own types and needs none of this).

It walks the arguments along the schema (``properties``, ``additionalProperties``, ``items``,
``prefixItems``, through ``$ref``) only where the way is certain: past an ``anyOf`` with more than
one branch for an object or an array it stops, and leaves the value to pydantic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

__all__ = ["misfit", "resolved"]

_MAX_REFS = 32  # $ref hops followed to reach a schema (pydantic writes one)


def misfit(
    arguments: Mapping[str, Any], schema: Mapping[str, Any], defs: Mapping[str, Any]
) -> dict[str, str]:
    """The arguments holding a value that ``schema`` forbids and pydantic would take: for each,
    its first such value said as ``argument 'where' must be ...``."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    found: dict[str, str] = {}
    for name, value in arguments.items():
        if name in properties:
            problem = _first_misfit(value, properties[name], defs, name)
            if problem is not None:
                found[name] = problem
    return found


def _first_misfit(value: Any, schema: Any, defs: Mapping[str, Any], name: str) -> str | None:
    """The first (in document order) value of argument ``name`` that its schema forbids."""
    stack: list[tuple[Any, Any, str]] = [(value, schema, name)]
    while stack:
        value, node, where = stack.pop()
        node = _selected(node, _kind(value), defs)
        if node is None:
            continue
        if isinstance(value, bool | int | float) and not _admits(node, _kind(value), defs):
            return f"argument {where!r} must be {_expected(node, defs)}, not {_json(value)}"
        children: list[tuple[Any, Any, str]] = []
        if isinstance(value, dict):
            properties = node.get("properties")
            rest = node.get("additionalProperties")
            for key, item in value.items():
                sub = properties.get(key) if isinstance(properties, dict) else None
                if sub is None and isinstance(rest, dict):
                    sub = rest
                if sub is not None:
                    children.append((item, sub, f"{where}.{key}"))
        elif isinstance(value, list):
            if node.get("uniqueItems") is True and _has_duplicates(value):
                return f"argument {where!r} must not hold the same item twice"
            prefix = node.get("prefixItems")
            prefix = prefix if isinstance(prefix, list) else []
            items = node.get("items")
            for index, item in enumerate(value):
                sub = prefix[index] if index < len(prefix) else items
                if isinstance(sub, dict):
                    children.append((item, sub, f"{where}[{index}]"))
        stack.extend(reversed(children))  # the first child is looked at first
    return None


def _kind(value: Any) -> str:
    """The JSON kind this guard tells apart: a boolean, a number, an object, an array, or other."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "other"


def resolved(node: Any, defs: Mapping[str, Any]) -> dict[str, Any] | None:
    """``node`` past its ``$ref`` (``#/$defs/<name>``, as pydantic writes them); None when it is no
    schema this can read."""
    for _ in range(_MAX_REFS):
        if not isinstance(node, dict):
            return None
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return node
        if not ref.startswith("#/$defs/"):
            return None
        node = defs.get(ref[len("#/$defs/") :])
    return None


def _selected(node: Any, kind: str, defs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The schema to walk into for a value of ``kind``: ``node`` itself, or the one branch of its
    ``anyOf``/``oneOf`` that takes that kind; None when that is not certain."""
    schema = resolved(node, defs)
    if schema is None:
        return None
    branches = schema.get("anyOf", schema.get("oneOf"))
    if not isinstance(branches, list):
        return schema
    if kind not in ("object", "array"):
        return schema  # a scalar is checked against every branch (_admits)
    resolved_branches = [resolved(branch, defs) for branch in branches]
    fitting = [b for b in resolved_branches if b is not None and _may_be(b, kind)]
    return fitting[0] if len(fitting) == 1 else None


def _may_be(node: dict[str, Any], kind: str) -> bool:
    """Whether a schema may take a value of ``kind`` (object or array) by its ``type``."""
    declared = node.get("type")
    if declared is None:
        return True
    types = declared if isinstance(declared, list) else [declared]
    return kind in types


def _admits(node: Any, kind: str, defs: Mapping[str, Any], depth: int = 0) -> bool:
    """Whether a schema may take a boolean or a number (``kind``); False only when it cannot."""
    schema = resolved(node, defs)
    if schema is None or depth > _MAX_REFS:
        return True  # not a schema this can read: pydantic decides
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if (
            isinstance(branches, list)
            and branches
            and not any(_admits(b, kind, defs, depth + 1) for b in branches)
        ):
            return False
    branches = schema.get("allOf")
    if isinstance(branches, list) and not all(_admits(b, kind, defs, depth + 1) for b in branches):
        return False
    if "const" in schema and _kind(schema["const"]) != kind:
        return False
    choices = schema.get("enum")
    if isinstance(choices, list) and not any(_kind(choice) == kind for choice in choices):
        return False
    declared = schema.get("type")
    if declared is not None:
        types = declared if isinstance(declared, list) else [declared]
        wanted = ("boolean",) if kind == "boolean" else ("integer", "number")
        if not any(t in wanted for t in types):
            return False
    return True


def _expected(node: dict[str, Any], defs: Mapping[str, Any], depth: int = 0) -> str:
    """What a schema takes, in words."""
    branches = node.get("anyOf", node.get("oneOf"))
    if isinstance(branches, list) and branches and depth < _MAX_REFS:
        schemas = [resolved(branch, defs) for branch in branches]
        return " or ".join(_expected(b, defs, depth + 1) for b in schemas if b is not None)
    if "const" in node:
        return _json(node["const"])
    choices = node.get("enum")
    if isinstance(choices, list) and choices:
        return "one of " + ", ".join(_json(choice) for choice in choices)
    words = {
        "boolean": "true or false",
        "integer": "an integer",
        "number": "a number",
        "string": "a string",
        "null": "null",
    }
    declared = node.get("type")
    if isinstance(declared, str) and declared in words:
        return words[declared]
    return "of another kind (see the tool's inputSchema)"


def _json(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()[:60]
    except TypeError:
        return repr(value)[:60]


def _has_duplicates(items: list[Any]) -> bool:
    seen: set[bytes] = set()
    for item in items:
        try:
            key = orjson.dumps(item, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            return False  # not JSON this can compare: pydantic decides
        if key in seen:
            return True
        seen.add(key)
    return False
