"""Encodings used on every wire: JSON (orjson, compact, UTF-8 bytes) and canonical unpadded
base64url (the opaque values we mint: ``requestState``, sealed cookies)."""

from __future__ import annotations

import binascii
import json
import math
from typing import Any

import orjson

JSONDecodeError = orjson.JSONDecodeError

# orjson reads an integer literal outside -2**63 .. 2**64 - 1 as a float, rounded: a number field
# would take 2**64 + 1 as 2**64, an int argument another number than was sent. Such a literal has
# 19 digits in a row or more; only a text holding such a run (rare: mostly long digit strings) is
# read again, by the standard library, which keeps every integer exact. Mapping digits to "0" and
# the rest to " " finds the run in C: 1 us for an 850-byte round, where a regular expression
# takes 4-14 us.
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_DIGIT_RUN = b"0" * 19
MIN_INTEGER, MAX_INTEGER = -(2**63), 2**64 - 1


class IntegerOutOfRange(JSONDecodeError):
    """A JSON text holding an integer outside :data:`MIN_INTEGER` .. :data:`MAX_INTEGER`, which
    orjson neither reads exactly nor writes: ``value`` is the text read exactly, ``path`` where
    the first such integer sits in it (keys and list indexes), ``literal`` that integer as sent
    (cut to 40 characters)."""

    value: Any
    path: tuple[str | int, ...]
    literal: str


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """A JSON text's value: ``JSONDecodeError`` for anything that is not JSON, and
    :class:`IntegerOutOfRange` for one of the rare texts whose integers orjson would round."""
    value = orjson.loads(data)
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if _DIGIT_RUN in raw.translate(_DIGITS_AS_ZEROS):
        # (A literal past 4300 digits, which int() refuses, is infinite as a float: orjson has
        # refused it already.)
        try:
            exact = json.loads(raw)
        except RecursionError:  # orjson goes 1024 levels deep, the standard library ~1000
            raise JSONDecodeError(
                "the JSON is nested too deeply", raw.decode("utf-8", "replace"), 0
            ) from None
        found = _integer_out_of_range(exact)
        if found is not None:
            path, number = found
            text = str(number)
            literal = text if len(text) <= 40 else f"{text[:20]}...({len(text.lstrip('-'))} digits)"
            error = IntegerOutOfRange(
                f"the integer {literal} is outside -2**63 .. 2**64 - 1",
                raw.decode("utf-8", "replace"),
                max(raw.find(text.encode("ascii")), 0),
            )
            error.value, error.path, error.literal = exact, path, literal
            raise error
    return value


def _integer_out_of_range(value: Any) -> tuple[tuple[str | int, ...], int] | None:
    """Where the first integer outside orjson's range sits in ``value``, and that integer."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if type(item) is int and not MIN_INTEGER <= item <= MAX_INTEGER:
            return path, item
        if type(item) is dict:
            stack.extend(((*path, key), child) for key, child in reversed(item.items()))
        elif type(item) is list:
            stack.extend(((*path, index), child) for index, child in reversed(list(enumerate(item))))
    return None


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
