"""Encodings used on every wire: JSON (orjson, compact, UTF-8 bytes) and canonical unpadded
base64url (the opaque values we mint: ``requestState``, sealed cookies)."""

from __future__ import annotations

import binascii
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


_STD_TO_URL = bytes.maketrans(b"+/", b"-_")
# '-' and '_' become '+' and '/'; '+', '/' and '=' become '!', which the strict standard decoder
# refuses like any character outside its alphabet: one pass checks and decodes.
_URL_TO_STD = bytes.maketrans(b"-_+/=", b"+/!!!")
_PADDING = (b"", b"", b"==", b"=")  # indexed by len(text) % 4 (1 is an impossible length)
_UNUSED_BITS = (0, 0, 0x0F, 0x03)  # low bits of the last character that must be zero
_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_VALUE = bytes(_ALPHABET.index(c) if c in _ALPHABET else 0 for c in range(256))


def b64url_encode(data: bytes) -> str:
    """Unpadded base64url (RFC 4648 §5) of ``data``."""
    return binascii.b2a_base64(data, newline=False).translate(_STD_TO_URL).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """The bytes whose :func:`b64url_encode` is ``text``; ``ValueError`` for any other string.

    Canonical means one spelling per value: padding, ``+`` or ``/``, whitespace and any other
    character, an impossible length, and non-zero unused bits in the last character are all
    refused, where a lenient decoder would read several strings as the same bytes."""
    if not text.isascii():
        raise ValueError("base64url is ASCII")
    encoded = text.encode("ascii")
    tail = len(encoded) % 4
    if tail == 1:
        raise ValueError("not base64url: impossible length")
    try:
        data = binascii.a2b_base64(encoded.translate(_URL_TO_STD) + _PADDING[tail], strict_mode=True)
    except binascii.Error:
        raise ValueError("not base64url") from None
    # The last character of a partial group carries unused low bits, which an encoder writes as
    # zero; other values decode to the same bytes. Refusing them makes this accept exactly what
    # b64url_encode writes (the tests compare it with re-encoding), without encoding again.
    if tail and _VALUE[encoded[-1]] & _UNUSED_BITS[tail]:
        raise ValueError("not canonical base64url: non-zero unused bits")
    return data
