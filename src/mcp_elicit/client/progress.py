"""Progress the server reports about a request (``notifications/progress``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Progress:
    """One ``notifications/progress`` about a request this client sent, as given to
    ``on_progress``: ``progress`` out of ``total`` (None when unknown), with an optional
    ``message`` (the server's text)."""

    method: str  # the request it is about
    target: str | None  # its tool / prompt name or resource URI
    progress: float
    total: float | None
    message: str | None

    @classmethod
    def from_params(cls, method: str, target: str | None, params: dict[str, Any]) -> Progress | None:
        """Read the notification's ``params``; None when ``progress`` is not a number. A
        ``total`` or ``message`` of the wrong type is dropped."""
        progress = params.get("progress")
        if isinstance(progress, bool) or not isinstance(progress, (int, float)):
            return None
        total = params.get("total")
        message = params.get("message")
        return cls(
            method,
            target,
            float(progress),
            float(total) if isinstance(total, (int, float)) and not isinstance(total, bool) else None,
            message if isinstance(message, str) else None,
        )


# Called on the event loop for each progress notification; it must not block.
ProgressCallback = Callable[[Progress], None]
