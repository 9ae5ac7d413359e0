"""``mcp-elicit tools``: a server's tools as a person reads them, and as a script cuts them.

Each tool starts a line with its name (then a tab and its title, if it has one), so that
``grep``/``cut -f1`` still find one line per tool; its description and arguments follow,
indented, wrapped to :data:`WIDTH` columns::

    book_trip	Book a trip
        Books a trip, asking the traveller for the dates.
        - city: string, required
            The city to fly to.
        - nights: integer, optional, default 3

Everything shown is the server's text: cleaned (no escape sequence or control character),
and bounded (lengths, the arguments listed, how deep a type is followed).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from typing import Any

from mcp_elicit.client.text import clean

WIDTH = 80
INDENT = "    "
MAX_ARGUMENTS = 50
MAX_CHOICES = 8
MAX_DEPTH = 3
_TITLE_CHARS = 120
_DESCRIPTION_CHARS = 1000
_DEFAULT_CHARS = 60


def tool_lines(tool: Mapping[str, Any]) -> list[str]:
    """The lines for one tool of a ``tools/list`` result (as the server sent it)."""
    name = _text(tool.get("name"), 200) or "?"
    title = _text(tool.get("title"), _TITLE_CHARS)
    lines = [f"{name}\t{title}" if title and title != name else name]
    description = _text(tool.get("description"), _DESCRIPTION_CHARS)
    if description:
        lines.extend(_wrapped(description, INDENT))
    schema = tool.get("inputSchema")
    lines.extend(argument_lines(schema if isinstance(schema, dict) else {}))
    return lines


def argument_lines(schema: Mapping[str, Any]) -> list[str]:
    """An ``inputSchema``'s properties: name, type, required or optional, default."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return [f"{INDENT}(no arguments)"]
    listed = schema.get("required")
    required = {r for r in listed if isinstance(r, str)} if isinstance(listed, list) else set()
    defs = schema.get("$defs")
    defs = defs if isinstance(defs, dict) else {}
    lines: list[str] = []
    for index, (name, prop) in enumerate(properties.items()):
        if index == MAX_ARGUMENTS:
            lines.append(f"{INDENT}- ... and {len(properties) - MAX_ARGUMENTS} more")
            break
        prop = prop if isinstance(prop, dict) else {}
        said = [type_of(prop, defs), "required" if name in required else "optional"]
        if "default" in prop:
            said.append(f"default {_json(prop['default'], _DEFAULT_CHARS)}")
        head = f"- {_text(name, 100) or '?'}: {', '.join(said)}"
        lines.extend(_wrapped(head, INDENT, INDENT + "  "))
        description = _text(prop.get("description"), _DESCRIPTION_CHARS)
        if description:
            lines.extend(_wrapped(description, INDENT * 2))
    return lines


def type_of(schema: Any, defs: Mapping[str, Any], depth: int = 0) -> str:
    """A JSON Schema's type in a few words: ``string``, ``string (date)``, ``integer | null``,
    ``"eco" | "biz"``, ``array of string``, ``object``; ``any`` when it says nothing."""
    if not isinstance(schema, dict):
        return "any"
    if depth >= MAX_DEPTH:
        return "..."
    ref = schema.get("$ref")
    if isinstance(ref, str):
        found = defs.get(ref.removeprefix("#/$defs/")) if ref.startswith("#/$defs/") else None
        return type_of(found, defs, depth + 1) if isinstance(found, dict) else "object"
    if "const" in schema:
        return _json(schema["const"], 40)
    choices = schema.get("enum")
    if isinstance(choices, list) and choices:
        shown = [_json(value, 40) for value in choices[:MAX_CHOICES]]
        return " | ".join(shown) + (" | ..." if len(choices) > MAX_CHOICES else "")
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            kinds = list(dict.fromkeys(type_of(option, defs, depth + 1) for option in options[:MAX_CHOICES]))
            return " | ".join(kinds)
    kind = schema.get("type")
    if isinstance(kind, list):
        names = dict.fromkeys(_text(k, 20) for k in kind[:MAX_CHOICES] if isinstance(k, str))
        return " | ".join(names) or "any"
    if not isinstance(kind, str):
        return "object" if isinstance(schema.get("properties"), dict) else "any"
    kind = _text(kind, 20)
    if kind == "array":
        items = schema.get("items")
        return f"array of {type_of(items, defs, depth + 1)}" if isinstance(items, dict) else "array"
    shape = _text(schema.get("format"), 30)
    return f"{kind} ({shape})" if shape else kind


def listing_json(server: Mapping[str, Any], tools: list[dict[str, Any]]) -> str:
    """``--json``: the server and its tools as received, in JSON that escapes every control
    character and non-ASCII character (safe in a terminal, exact for a script)."""
    return json.dumps({"server": dict(server), "tools": tools}, ensure_ascii=True, indent=2)


def _text(value: object, limit: int) -> str:
    return clean(value, single_line=True, max_length=limit).strip() if isinstance(value, str) else ""


def _json(value: object, limit: int) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = "?"
    return clean(text, single_line=True, max_length=limit)


def _wrapped(text: str, indent: str, subsequent: str | None = None) -> list[str]:
    # Long words (a URL) stay whole on a line of their own, rather than cut in two.
    return textwrap.wrap(
        text,
        WIDTH,
        initial_indent=indent,
        subsequent_indent=subsequent if subsequent is not None else indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
