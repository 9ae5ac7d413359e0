"""Turning what a handler returns into the result the wire expects."""

from __future__ import annotations

import base64
from typing import Any

from mcp_elicit.wire import codec


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _is_content_block(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("type"), str)


def tool_result(value: Any) -> dict[str, Any]:
    """str -> text; dict -> structuredContent plus its JSON as text; a list of content blocks
    as is; None -> no content; other JSON -> its JSON as text."""
    if isinstance(value, str):
        return {"content": [_text(value)], "isError": False}
    if value is None:
        return {"content": [], "isError": False}
    if isinstance(value, dict):
        return {
            "content": [_text(codec.dumps(value).decode())],
            "structuredContent": value,
            "isError": False,
        }
    if isinstance(value, list) and value and all(_is_content_block(v) for v in value):
        return {"content": value, "isError": False}
    return {"content": [_text(codec.dumps(value).decode())], "isError": False}


def tool_error(message: str) -> dict[str, Any]:
    return {"content": [_text(message)], "isError": True}


def prompt_result(value: Any, description: str | None) -> dict[str, Any]:
    """str -> one user message; a list of str or {role, content} messages; a dict with
    ``messages`` as is."""
    if isinstance(value, dict) and "messages" in value:
        return value
    items = value if isinstance(value, list) else [value]
    messages = []
    for item in items:
        if isinstance(item, str):
            messages.append({"role": "user", "content": _text(item)})
        elif isinstance(item, dict) and "role" in item and "content" in item:
            content = item["content"]
            messages.append(
                {"role": item["role"], "content": _text(content) if isinstance(content, str) else content}
            )
        else:
            raise TypeError(
                "a prompt handler must return a str, a list of str or {role, content} messages, "
                f"or a dict with 'messages'; got {type(item).__name__}"
            )
    result: dict[str, Any] = {"messages": messages}
    if description:
        result["description"] = description
    return result


def resource_result(uri: str, value: Any, mime_type: str | None) -> dict[str, Any]:
    """str -> text contents; bytes -> base64 blob; a dict with ``contents`` as is."""
    if isinstance(value, dict) and "contents" in value:
        return value
    entry: dict[str, Any] = {"uri": uri}
    if isinstance(value, (bytes, bytearray)):
        entry["blob"] = base64.b64encode(bytes(value)).decode("ascii")
        entry["mimeType"] = mime_type or "application/octet-stream"
    else:
        entry["text"] = value if isinstance(value, str) else codec.dumps(value).decode()
        entry["mimeType"] = mime_type or ("text/plain" if isinstance(value, str) else "application/json")
    return {"contents": [entry]}
