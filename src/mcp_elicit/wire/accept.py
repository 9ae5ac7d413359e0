"""What an HTTP ``Accept`` header allows of the two replies a Streamable HTTP server sends: JSON
(``application/json``) and an SSE stream (``text/event-stream``). No I/O.

RFC 9110 §12.5.1: the media ranges are a comma-separated list (repeated header lines are one
list); the most specific range that matches a type decides, and ``q=0`` means "not acceptable".
"""

from __future__ import annotations

from typing import Final

__all__ = ["accepted_replies"]

_JSON: Final = ("application/json", "application/*")
_SSE: Final = ("text/event-stream", "text/*")


def _quality(params: list[str]) -> float:
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                quality = float(value.strip())
            except ValueError:
                return 0.0  # an unreadable weight accepts nothing: the client said something else
            return quality if 0.0 <= quality <= 1.0 else 0.0
    return 1.0


def accepted_replies(accept: str) -> tuple[bool, bool]:
    """``(json, sse)``: whether a JSON reply and whether an SSE reply are acceptable."""
    # specificity (2 exact, 1 type/*, 0 */*) and weight of the best match so far, per reply
    json_match = (-1, 0.0)
    sse_match = (-1, 0.0)
    for item in accept.split(","):
        media, *params = item.split(";")
        media = media.strip().lower()
        if not media:
            continue
        quality = _quality(params)
        if media == "*/*":
            specificity = 0
        elif media in _JSON or media in _SSE:
            specificity = 2 if media in (_JSON[0], _SSE[0]) else 1
        else:
            continue
        if (media == "*/*" or media in _JSON) and specificity > json_match[0]:
            json_match = (specificity, quality)
        if (media == "*/*" or media in _SSE) and specificity > sse_match[0]:
            sse_match = (specificity, quality)
    return json_match[1] > 0, sse_match[1] > 0
