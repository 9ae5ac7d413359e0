"""Whether a stream is a terminal, asked of streams that may not say: a ``sys.stdin`` replaced by
an object without ``isatty``, a closed or detached stream. Those are not terminals."""

from __future__ import annotations


def isatty(stream: object) -> bool:
    ask = getattr(stream, "isatty", None)
    try:
        return bool(ask()) if callable(ask) else False
    except (OSError, ValueError):  # closed or detached
        return False
