"""What ``mcp-elicit call`` prints of a tool's result: every content block, in order.

Text is printed as it is (cleaned of what a terminal would interpret). The other blocks get a
line in parentheses that says what they hold, never their base64 data: an image or audio clip
its MIME type and size, a resource link its name and URI, an embedded resource its URI (and its
text, if it has some), a block of a type the spec does not name that type. The structured
content is printed as JSON when no block is text: a tool that has both is asked by the spec to
put the same JSON in a text block.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

from mcp_elicit.client.text import clean

if TYPE_CHECKING:
    from mcp_elicit.client.results import ToolResult

_NAME_LENGTH = 300  # for the URIs, names and MIME types in the lines in parentheses


def result_text(result: ToolResult) -> str:
    """The whole result as lines for stdout; empty when it holds nothing."""
    lines = [_block(block) for block in result.content]
    if result.structured is not None and not any(block["type"] == "text" for block in result.content):
        lines.append(_json(result.structured))
    return "\n".join(lines)


def _block(block: dict[str, Any]) -> str:
    kind = block["type"]
    if kind == "text":
        return clean(block["text"])
    if kind in ("image", "audio"):
        return f"({kind}: {_short(block['mimeType'])}, {_size(block['data'])})"
    if kind == "resource_link":
        return _link(block)
    if kind == "resource":
        return _embedded(block["resource"])
    return f"(unknown content type {_short(kind)})"


def _embedded(resource: dict[str, Any]) -> str:
    """An embedded resource: its URI, then its text; or its size, for a blob."""
    mime = resource.get("mimeType")
    about = _short(resource["uri"]) + (f", {_short(mime)}" if isinstance(mime, str) else "")
    text = resource.get("text")
    if isinstance(text, str):
        return f"(resource: {about})\n{clean(text)}"
    return f"(resource: {about}, {_size(resource['blob'])})"


def _link(link: dict[str, Any]) -> str:
    """A resource link: its title (else its name), URI, and MIME type when it has one."""
    title = link.get("title")
    name = _short(title if isinstance(title, str) else link["name"])
    mime = f", {_short(link['mimeType'])}" if isinstance(link.get("mimeType"), str) else ""
    return f'(resource link "{name}": {_short(link["uri"])}{mime})'


def _size(data: str) -> str:
    """How many bytes base64 ``data`` holds."""
    try:
        size = len(base64.b64decode(data, validate=True))
    except ValueError:  # binascii.Error, or text that is not ASCII
        return "data that is not valid base64"
    return "1 byte" if size == 1 else f"{size} bytes"


def _json(value: Any) -> str:
    """The structured content as indented JSON, every control and non-ASCII character escaped
    (as ``tools --json``): safe in a terminal, exact for a script."""
    try:
        return json.dumps(value, ensure_ascii=True, indent=2)
    except RecursionError:  # the reader takes 1024 levels; this encoder about 1000
        return "(structured content nested too deeply to print)"


def _short(text: str) -> str:
    return clean(text, single_line=True, max_length=_NAME_LENGTH)
