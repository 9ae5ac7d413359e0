"""Turn a validated answer back into the form's Python type.

The answer has already passed :func:`~mcp_elicit.schema.validate_answer`, so every value
is of the right JSON type; what is left is the Python side: ``date`` / ``datetime``
objects, enum members, floats for ``float`` fields, ``None`` for optional fields the
source requires, and the constructor of the source class.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .errors import AnswerInvalid
from .formats import parse_date, parse_datetime

__all__ = ["Conv", "ConvKind", "make_converter"]

ConvKind = Literal["plain", "float", "date", "datetime", "enum", "enum_list", "url", "list"]


@dataclass(frozen=True, slots=True)
class Conv:
    """How to convert one field."""

    name: str  # key in the answer
    attr: str  # constructor argument
    kind: ConvKind
    target: Any = None  # enum class or URL class
    fill_none: bool = False  # absent -> None (optional for the form, required by the source)


def _value(conv: Conv, value: Any, *, pydantic: bool) -> Any:
    kind = conv.kind
    if kind == "plain":
        return value
    if kind == "float":
        return float(value)
    if kind == "date":
        parsed: datetime.date | None = parse_date(value)
        if parsed is None:
            raise AnswerInvalid({conv.name: "must be a calendar date written YYYY-MM-DD"})
        return parsed
    if kind == "datetime":
        parsed = parse_datetime(value)
        if parsed is None:
            raise AnswerInvalid({conv.name: "must be a date and time with a time zone"})
        return parsed
    if kind == "enum":
        return conv.target(value)
    if kind == "enum_list":
        return [conv.target(v) for v in value]
    if kind == "url":
        # A pydantic model parses URLs itself; elsewhere build the URL object here.
        if pydantic:
            return value
        try:
            return conv.target(value)
        except ValueError as exc:  # the URL type's own limits (HttpUrl: http or https only)
            reasons = _pydantic_errors(exc, set()) or {}
            raise AnswerInvalid({conv.name: reasons.get("", "is not a URL this field takes")}) from exc
    return list(value)


def _pydantic_errors(exc: Exception, names: set[str]) -> dict[str, str] | None:
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return None
    out: dict[str, str] = {}
    for error in errors():
        loc = error.get("loc") or ()
        key = str(loc[0]) if loc and str(loc[0]) in names else ""
        message = str(error.get("msg", "is invalid"))
        # pydantic prefixes what a validator raised; the reason alone reads better.
        out.setdefault(key, message.removeprefix("Value error, "))
    return out


def make_converter(kind: str, cls: type, convs: Sequence[Conv]) -> Callable[[dict[str, Any]], Any]:
    """A function from validated content to an instance of ``cls``.

    ``kind`` is ``"pydantic"`` (``model_validate`` on wire names),
    ``"pydantic_dataclass"`` (constructor on wire names: pydantic takes aliases there),
    ``"dataclass"`` (constructor on attribute names) or ``"typeddict"`` (a plain dict).
    """
    pydantic = kind in ("pydantic", "pydantic_dataclass")
    by_attr = kind == "dataclass"
    names = {c.name for c in convs}

    def convert(content: dict[str, Any]) -> Any:
        data: dict[str, Any] = {}
        try:
            for conv in convs:
                key = conv.attr if by_attr else conv.name
                if conv.name in content:
                    value = content[conv.name]
                    # Most fields need no conversion: spare the call for them.
                    data[key] = value if conv.kind == "plain" else _value(conv, value, pydantic=pydantic)
                elif conv.fill_none:
                    data[key] = None
            if kind == "pydantic":
                return cls.model_validate(data)  # type: ignore[attr-defined]
            if kind in ("dataclass", "pydantic_dataclass"):
                return cls(**data)
        except AnswerInvalid:
            raise
        except Exception as exc:  # pydantic's ValidationError, a __post_init__ or validator check
            # A check may raise TypeError or anything else: whatever it is, the answer
            # was refused by the source's own validation, which is what AnswerInvalid says.
            found = _pydantic_errors(exc, names) if isinstance(exc, ValueError) else None
            raise AnswerInvalid(found or {"": str(exc) or type(exc).__name__}) from exc
        return data

    return convert
