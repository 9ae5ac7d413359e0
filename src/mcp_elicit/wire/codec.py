"""JSON encoding used on every wire: orjson, compact, UTF-8 bytes."""

from __future__ import annotations

from typing import Any

import orjson

JSONDecodeError = orjson.JSONDecodeError


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    return orjson.loads(data)


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON. Non-JSON values raise TypeError (never silently stringified)."""
    return orjson.dumps(value)


def dumps_canonical(value: Any) -> bytes:
    """Sorted keys, compact: the form we hash to identify questions and arguments."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
