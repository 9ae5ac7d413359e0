"""JSON encoding used on every wire: orjson, compact, UTF-8 bytes."""

from __future__ import annotations

import math
from typing import Any

import orjson

JSONDecodeError = orjson.JSONDecodeError


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    return orjson.loads(data)


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON. Values orjson cannot write raise TypeError; note that it does write
    datetimes, UUIDs, enums and dataclasses (as strings and objects), and NaN as ``null``: use
    :func:`json_copy` where a value must come back as it went in."""
    return orjson.dumps(value)


_SCALARS = (str, int, bool, type(None))
MAX_COPY_NESTING = 200


def json_copy(value: Any) -> Any:
    """A copy of JSON data, equal to what reading its JSON back gives (tuples become lists).

    ``TypeError`` naming the first value that would not come back as it is: a datetime, a UUID,
    an enum member, a set, a str subclass, NaN or an infinity, a non-string key, an integer
    beyond 64 bits, nesting deeper than :data:`MAX_COPY_NESTING`."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind in _SCALARS:
            continue
        if kind is float:
            if not math.isfinite(item):
                raise TypeError(f"the float {item!r}")
            continue
        if kind is dict:
            for key in item:
                if type(key) is not str:
                    raise TypeError(f"a dict key of type {type(key).__name__}")
            children: Any = item.values()
        elif kind is list or kind is tuple:
            children = item
        else:
            raise TypeError(f"a {kind.__name__}")
        if depth >= MAX_COPY_NESTING:
            raise TypeError(f"data nested more than {MAX_COPY_NESTING} levels deep")
        stack.extend((child, depth + 1) for child in children)
    try:
        return orjson.loads(orjson.dumps(value))
    except orjson.JSONEncodeError:  # an integer beyond 64 bits
        raise TypeError("an integer beyond 64 bits") from None


def dumps_canonical(value: Any) -> bytes:
    """Sorted keys, compact: the form we hash to identify questions and arguments."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
