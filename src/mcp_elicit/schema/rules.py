"""The compiled form: one :class:`FieldRule` per property, and the check of one value.

:mod:`~mcp_elicit.schema.check` turns a schema into rules (or problems);
:mod:`~mcp_elicit.schema.validate` runs the rules over an answer. Defaults in a schema
are checked with the same code, so a default can never be something an answer could not.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal, NamedTuple

from .formats import CHECKS
from .text import describe, quote, show_number

__all__ = ["MAX_SAFE_INTEGER", "CompiledForm", "FieldRule", "Kind", "check_value"]

Kind = Literal["string", "number", "integer", "boolean", "select", "multiselect"]

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")

#: The largest whole number an answer or a default may hold, either sign. Beyond it JSON
#: numbers lose precision in JavaScript clients, and past 64 bits the JSON encoder cannot
#: write them at all: such a value would pass the check and then fail when it is sent.
MAX_SAFE_INTEGER = 2**53 - 1

# How many choices an error message lists before it says "and N more".
_LISTED = 10


class FieldRule(NamedTuple):
    """Everything needed to check one field's value.

    (A NamedTuple rather than a dataclass: it is built once per property and created at
    import time much faster.)
    """

    name: str
    kind: Kind
    required: bool = False
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    options: tuple[str, ...] = ()
    titles: tuple[str, ...] | None = None
    min_items: int | None = None
    max_items: int | None = None
    has_default: bool = False
    default: Any = None
    # Only from a client's tolerant reading of a server's form (compile_schema(tolerant=True)):
    exclusive_minimum: int | float | None = None
    exclusive_maximum: int | float | None = None
    multiple_of: int | float | None = None
    # A select over numbers: ``options`` holds their text (what answerers show and give back),
    # this the numbers themselves, sent in their place (CompiledForm.to_wire).
    option_values: tuple[int | float, ...] | None = None


class CompiledForm:
    """The rules of a whole form, in property order."""

    __slots__ = ("fields", "names")

    def __init__(self, fields: tuple[FieldRule, ...]) -> None:
        self.fields = fields
        self.names = frozenset(rule.name for rule in fields)

    def __repr__(self) -> str:
        return f"CompiledForm({self.fields!r})"

    def to_wire(self, content: dict[str, Any]) -> dict[str, Any]:
        """A checked answer as it is sent: the choice of a select over numbers becomes the
        number (a copy; ``content`` is left as it is)."""
        numeric = [rule for rule in self.fields if rule.option_values is not None and rule.name in content]
        if not numeric:
            return content
        sent = dict(content)
        for rule in numeric:
            assert rule.option_values is not None
            sent[rule.name] = rule.option_values[rule.options.index(sent[rule.name])]
        return sent


def _choices(rule: FieldRule) -> str:
    """The allowed values, with their titles when the field has titles."""
    shown = []
    for i, value in enumerate(rule.options[:_LISTED]):
        item = quote(value)
        if rule.titles is not None and rule.titles[i] != value:
            item += f" ({rule.titles[i]})"
        shown.append(item)
    text = ", ".join(shown)
    if len(rule.options) > _LISTED:
        text += f", and {len(rule.options) - _LISTED} more"
    return text


def _counted(count: int, unit: str) -> str:
    """``count`` and ``unit``, plural unless it is one: "1 character", "3 choices"."""
    return f"{count} {unit}" if count == 1 else f"{count} {unit}s"


def _check_text(rule: FieldRule, value: object) -> tuple[Any, str | None]:
    if not isinstance(value, str):
        return None, f"must be text, got {describe(value)}"
    n = len(value)
    # Lengths first: an over-long answer is refused before anything scans it.
    if rule.min_length is not None and n < rule.min_length:
        return None, f"must be at least {_counted(rule.min_length, 'character')} long (got {n})"
    if rule.max_length is not None and n > rule.max_length:
        return None, f"must be at most {_counted(rule.max_length, 'character')} long (got {n})"
    # Unpaired surrogates cannot be encoded as UTF-8; NUL breaks many stores.
    if _UNSTORABLE.search(value) is not None:
        return None, "contains a character that is not allowed (NUL or a lone surrogate)"
    if rule.format is not None:
        problem = CHECKS[rule.format](value)
        if problem is not None:
            return None, problem
    return value, None


def _check_number(rule: FieldRule, value: object) -> tuple[Any, str | None]:
    whole = rule.kind == "integer"
    wanted = "a whole number" if whole else "a number"
    # bool is a subclass of int in Python, and true is not a number in JSON.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, f"must be {wanted}, got {describe(value)}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return None, f"must be a finite number, got {show_number(value)}"
        if whole:
            if not value.is_integer():
                return None, f"must be a whole number, got {show_number(value)}"
            # JSON has one number type: 3.0 is the integer 3.
            value = int(value)
    if rule.minimum is not None and value < rule.minimum:
        return None, f"must be at least {show_number(rule.minimum)} (got {show_number(value)})"
    if rule.maximum is not None and value > rule.maximum:
        return None, f"must be at most {show_number(rule.maximum)} (got {show_number(value)})"
    if rule.exclusive_minimum is not None and value <= rule.exclusive_minimum:
        return None, f"must be more than {show_number(rule.exclusive_minimum)} (got {show_number(value)})"
    if rule.exclusive_maximum is not None and value >= rule.exclusive_maximum:
        return None, f"must be less than {show_number(rule.exclusive_maximum)} (got {show_number(value)})"
    if rule.multiple_of is not None and not _is_multiple(value, rule.multiple_of):
        return None, f"must be a multiple of {show_number(rule.multiple_of)} (got {show_number(value)})"
    if isinstance(value, int) and not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        return None, (
            f"must be between -{MAX_SAFE_INTEGER} and {MAX_SAFE_INTEGER}: larger whole numbers "
            f"cannot be sent exactly as JSON (got {show_number(value)})"
        )
    return value, None


def _is_multiple(value: int | float, step: int | float) -> bool:
    if isinstance(value, int) and isinstance(step, int):
        return value % step == 0
    if float(step).is_integer():
        # A whole step needs no tolerance (3.0000000001 is no multiple of 1) nor a division
        # (5e-324 / 2 underflows to the whole 0.0): the remainder is exact, as JSON Schema
        # validators read it.
        if isinstance(value, int):
            return value % int(step) == 0
        return math.fmod(value, step) == 0
    quotient = value / step
    if not math.isfinite(quotient):
        return True  # beyond what a float can tell: the server decides
    return math.isclose(quotient, round(quotient), rel_tol=1e-9, abs_tol=1e-9)


def _check_select(rule: FieldRule, value: object) -> tuple[Any, str | None]:
    if rule.option_values is not None and isinstance(value, int | float) and not isinstance(value, bool):
        # A select over numbers takes the number too; its text is what the form holds.
        for text, number in zip(rule.options, rule.option_values, strict=True):
            if value == number:
                return text, None
        return None, f"{show_number(value)} is not one of the choices: {_choices(rule)}"
    if not isinstance(value, str):
        return None, f"must be one of the choices ({_choices(rule)}), got {describe(value)}"
    if value not in rule.options:
        return None, f"{quote(value)} is not one of the choices: {_choices(rule)}"
    return value, None


def _check_multi(rule: FieldRule, value: object) -> tuple[Any, str | None]:
    if not isinstance(value, list):
        return None, f"must be a list of choices, got {describe(value)}"
    seen: set[str] = set()
    for position, item in enumerate(value, 1):
        if not isinstance(item, str):
            return None, f"choice {position} must be text, got {describe(item)}"
        if item not in rule.options:
            return None, f"{quote(item)} is not one of the choices: {_choices(rule)}"
        if item in seen:
            return None, f"{quote(item)} is selected more than once"
        seen.add(item)
    n = len(value)
    if rule.min_items is not None and n < rule.min_items:
        return None, f"select at least {_counted(rule.min_items, 'choice')} (got {n})"
    if rule.max_items is not None and n > rule.max_items:
        return None, f"select at most {_counted(rule.max_items, 'choice')} (got {n})"
    return list(value), None


def check_value(rule: FieldRule, value: object) -> tuple[Any, str | None]:
    """``(normalized value, None)`` when ``value`` fits ``rule``, else ``(None, message)``.

    Normalizing only turns an integral float into an int for ``integer`` fields and
    copies lists; strings are never turned into numbers.

    >>> check_value(FieldRule("age", "integer", minimum=18), 30.0)
    (30, None)
    >>> check_value(FieldRule("age", "integer", minimum=18), "30")
    (None, "must be a whole number, got the text '30'")
    """
    kind = rule.kind
    if kind == "string":
        return _check_text(rule, value)
    if kind in ("number", "integer"):
        return _check_number(rule, value)
    if kind == "boolean":
        if isinstance(value, bool):
            return value, None
        return None, f"must be true or false, got {describe(value)}"
    if kind == "select":
        return _check_select(rule, value)
    return _check_multi(rule, value)
