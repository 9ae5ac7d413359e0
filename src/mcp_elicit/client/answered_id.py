"""Whose answer a message is, when the strict decoder refused it (no I/O).

A transport that cannot read a message still has to know whether it answered a request in
flight: that request then fails at once instead of waiting for an answer that already came.
"""

from __future__ import annotations

import json
import re

from mcp_elicit.wire.jsonrpc import RequestId

__all__ = ["answered_id"]

# In a JSON text: a whole string (escapes included), or a run of brackets (one token for a deep
# nest, so that scanning one stays cheap).
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}][\[\]{}\s,]*')
_COLON = re.compile(r"\s*:\s*")
_SCALAR_STARTS = frozenset('"-0123456789')
_SCALAR_DECODER = json.JSONDecoder()


def answered_id(line: bytes | str) -> RequestId | None:
    """The id of a message the strict decoder refused that still reads as a JSON object with an id
    and a result or an error. A shallow scan of the top-level keys, so that what made the strict
    decoder fail (a byte that is not UTF-8, nesting deeper than it goes, a lone surrogate) does
    not hide whose answer it is."""
    text = (line.decode("utf-8", "replace") if isinstance(line, bytes) else line).strip()
    if not text.startswith("{"):
        return None
    request_id: object = None
    answers = False
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        found = token[0]
        if found[0] != '"':
            depth += found.count("[") + found.count("{") - found.count("]") - found.count("}")
            if depth <= 0:
                break  # the end of the top-level object
            continue
        colon = _COLON.match(text, token.end()) if depth == 1 else None
        if colon is None:
            continue  # a value, or a key inside a nested object
        key = _json_scalar(found)
        if key in ("result", "error"):
            answers = True
        elif key == "id" and text[colon.end() : colon.end() + 1] in _SCALAR_STARTS:
            request_id = _json_scalar(text, colon.end())  # never an object or array: no recursion
    if not answers:
        return None
    if isinstance(request_id, float) and request_id.is_integer():
        return int(request_id)  # an id written 7.0: still that request's answer, malformed
    return request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None


def _json_scalar(text: str, start: int = 0) -> object:
    """The JSON string or number at ``start`` (None if there is none)."""
    try:
        return _SCALAR_DECODER.raw_decode(text, start)[0]
    except ValueError:
        return None
