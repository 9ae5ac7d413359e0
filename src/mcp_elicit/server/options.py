"""Checks of the options a server is built and run with: a wrong type or value fails where it is
given, naming the option, instead of on the first request that needs it (or, worse, on the wire,
as a ``ttlMs`` that is not a number)."""

from __future__ import annotations

import math


def whole_number(option: str, value: object, *, minimum: int) -> int:
    """``value`` if it is an int (not a bool) of at least ``minimum``; ``ValueError`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{option} must be a whole number, not {value!r}")
    if value < minimum:
        raise ValueError(f"{option} must be at least {minimum}, not {value!r}")
    return value


def seconds(option: str, value: object, *, positive: bool = False) -> float:
    """``value`` as a finite, non-negative number of seconds (above zero when ``positive``)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{option} must be a finite number of seconds, not {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{option} must be {'above' if positive else 'at least'} 0 seconds, not {value!r}")
    return float(value)


def text(option: str, value: object) -> str:
    """``value`` if it is a str with more than spaces in it; ``ValueError`` otherwise."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{option} must be a non-empty str, not {value!r}")
    return value


def optional_text(option: str, value: object) -> str | None:
    """:func:`text`, or None (for None and ``""``: ``os.environ.get(name, "")`` means unset)."""
    return None if value is None or value == "" else text(option, value)
