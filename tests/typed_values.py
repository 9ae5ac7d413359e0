"""What a handler received, held to what it should have: the same type (an enum member itself,
no bool for an int, no int for a float) and the same value, through lists, dicts, dataclasses and
models. Shared by the properties over typed handlers (``tests/server/test_typed_any_input.py``,
``tests/server/test_any_tool_signature.py``)."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import math
from dataclasses import dataclass
from typing import Any

import pydantic


@dataclass(frozen=True)
class Loose:
    """An expected value compared with ``==`` alone (an ``Any`` argument, where ``1.0`` may
    arrive as ``1``)."""

    value: Any


def same(expected: Any, got: Any) -> bool:
    """``got`` is ``expected``'s type (exactly) and equal, recursively; NaN is NaN, a datetime
    keeps its offset."""
    if isinstance(expected, Loose):
        return bool(expected.value == got)
    if isinstance(expected, enum.Enum):
        return got is expected
    if isinstance(expected, pydantic.BaseModel):
        return type(got) is type(expected) and all(
            same(getattr(expected, name), getattr(got, name)) for name in type(expected).model_fields
        )
    if dataclasses.is_dataclass(expected) and not isinstance(expected, type):
        return type(got) is type(expected) and all(
            same(getattr(expected, f.name), getattr(got, f.name)) for f in dataclasses.fields(expected)
        )
    if isinstance(expected, dict):
        return (
            type(got) is dict
            and expected.keys() == got.keys()
            and all(same(value, got[key]) for key, value in expected.items())
        )
    if isinstance(expected, list):
        return (
            type(got) is list
            and len(got) == len(expected)
            and all(same(e, g) for e, g in zip(expected, got, strict=True))
        )
    if isinstance(expected, float) and isinstance(got, float) and math.isnan(expected):
        return math.isnan(got)
    if isinstance(expected, datetime.datetime):
        return type(got) is datetime.datetime and got == expected and got.utcoffset() == expected.utcoffset()
    return type(got) is type(expected) and bool(got == expected)


def unloose(value: Any) -> Any:
    """``value`` with its :class:`Loose` wrappers taken off (what a Python default holds), through
    lists, dicts and dataclasses."""
    if isinstance(value, Loose):
        return value.value
    if isinstance(value, list):
        return [unloose(item) for item in value]
    if isinstance(value, dict):
        return {key: unloose(item) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(
            value, **{f.name: unloose(getattr(value, f.name)) for f in dataclasses.fields(value)}
        )
    return value
