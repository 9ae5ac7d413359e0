"""Check a hand-written ``requestedSchema`` against the elicitation subset.

The subset (MCP 2026-07-28, ``PrimitiveSchemaDefinition``) is a flat object whose
properties are each one of eight shapes:

=====================  ===============================================================
kind                   shape
=====================  ===============================================================
text                   ``type: "string"`` [``minLength``, ``maxLength``, ``format``]
number                 ``type: "number"`` or ``"integer"`` [``minimum``, ``maximum``]
boolean                ``type: "boolean"``
single-select          ``type: "string"``, ``enum: [str…]``
titled single-select   ``type: "string"``, ``oneOf: [{const, title}…]``
legacy titled select   ``type: "string"``, ``enum``, ``enumNames`` (deprecated)
multi-select           ``type: "array"``, ``items: {type: "string", enum}`` [min/maxItems]
titled multi-select    ``type: "array"``, ``items: {anyOf: [{const, title}…]}`` [min/maxItems]
=====================  ===============================================================

Every kind may have ``title``, ``description`` and ``default``. The check is strict: any
other keyword is reported, with a reason, at its JSON pointer.

A client gets forms from servers it does not control, some of which (the official SDKs among
them) send keywords beyond the subset. ``compile_schema(schema, tolerant=True)`` is the client's
reading: what can be checked cheaply is kept (``exclusiveMinimum``, ``exclusiveMaximum``,
``multipleOf``, numeric ``enum`` as a single-select), what only narrows or annotates a value is
left to the server, which validates the answer anyway (``pattern``, an unknown ``format``,
``examples``, ``x-`` extensions, a top-level ``title``...), and an option or a default may hold
what a title may (a tab, a newline). What changes the shape of the form
(nested objects, ``anyOf`` of types, ``$ref``, arrays of free values) is refused in both modes.

>>> check_schema({"type": "object", "properties": {"age": {"type": "integer", "minimum": "18"}}})
[SchemaProblem(pointer='/properties/age/minimum', reason="must be a number, got the text '18'")]
"""

from __future__ import annotations

import math
import unicodedata
from typing import Any, Final

from .errors import SchemaProblem
from .formats import FORMATS
from .limits import MAX_NAME, MAX_OPTIONS, MAX_PROBLEMS, MAX_PROPERTIES, MAX_TEXT
from .rules import MAX_SAFE_INTEGER, CompiledForm, FieldRule, Kind, check_value
from .text import bad_name_char, bad_text_char, describe, pointer, quote, short, show_number

__all__ = ["check_schema", "compile_schema"]

_TOP_KEYS: Final = frozenset({"$schema", "type", "properties", "required"})
_TYPES: Final = ("string", "number", "integer", "boolean", "array")
_COMMON: Final = frozenset({"type", "title", "description", "default"})

# Allowed keywords for each shape, common ones included.
_ALLOWED: Final[dict[str, frozenset[str]]] = {
    "text": _COMMON | {"minLength", "maxLength", "format"},
    "number": _COMMON | {"minimum", "maximum"},
    "boolean": _COMMON,
    "enum": _COMMON | {"enum", "enumNames"},
    "oneOf": _COMMON | {"oneOf"},
    "array": _COMMON | {"items", "minItems", "maxItems"},
}
_KIND_NAMES: Final = {
    "text": "text",
    "number": "number",
    "boolean": "boolean",
    "enum": "single-select (enum)",
    "oneOf": "titled single-select (oneOf)",
    "array": "multi-select",
}
_ANY_KIND: Final = frozenset().union(*_ALLOWED.values())

_NESTED = (
    "nested objects are outside the elicitation schema subset (a form is one flat object "
    "of text, numbers, booleans and choices); split it into separate fields"
)
_COMBINATOR = (
    "{k} is outside the elicitation schema subset; only two enum shapes use combinators: "
    "oneOf of {{const, title}} on a titled single-select and anyOf of {{const, title}} "
    "inside items of a titled multi-select"
)
# Reasons for keywords people often reach for, so the message says what to do instead.
_KNOWN_REASONS: Final = {
    "pattern": (
        "pattern is not part of the elicitation schema subset (MCP removed it; clients "
        "ignore or refuse it); check the value on the server after the answer arrives"
    ),
    "patternProperties": _NESTED,
    "additionalProperties": _NESTED,
    "properties": _NESTED,
    "required": "required belongs at the top level of requestedSchema, not on a field",
    "$ref": "$ref is outside the elicitation schema subset; write the field inline",
    "$defs": "$defs is outside the elicitation schema subset; write fields inline",
    "definitions": "definitions is outside the elicitation schema subset; write fields inline",
    "exclusiveMinimum": (
        "exclusive bounds are outside the elicitation schema subset; use minimum (inclusive) instead"
    ),
    "exclusiveMaximum": (
        "exclusive bounds are outside the elicitation schema subset; use maximum (inclusive) instead"
    ),
    "const": "const is outside the elicitation schema subset; use an enum with one value",
    "nullable": (
        "nullable is outside the elicitation schema subset; make the field optional by "
        "leaving it out of required"
    ),
    **{k: _COMBINATOR.format(k=k) for k in ("allOf", "anyOf", "oneOf", "not", "if", "then", "else")},
}


# Tolerant mode: keywords a client leaves to the server, which validates the answer anyway. They
# narrow or annotate a value without changing the form's shape. (Numeric bounds it can check are
# kept instead: _NUMBER_EXTRAS.)
_ADVISORY: Final = frozenset(
    {
        "pattern",
        "examples",
        "$comment",
        "$id",
        "$anchor",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentEncoding",
        "contentMediaType",
        "uniqueItems",  # a multi-select's answer holds each option once anyway
    }
)
_NUMBER_EXTRAS: Final = ("exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_NUMBER_KEYWORDS: Final = frozenset({"minimum", "maximum", *_NUMBER_EXTRAS})
_ADVISORY_TOP: Final = frozenset({"title", "description", "$comment", "$id", "examples"})


def _const_as_choice(prop: dict[Any, Any], t: object) -> dict[Any, Any]:
    """Tolerant mode: a ``const`` field (what other servers make of ``Literal[value]``) read as
    the form can show it. A text or number is a choice of one; a boolean is a plain checkbox
    ticked as the const says, which the server checks like any answer."""
    rest = {key: value for key, value in prop.items() if key != "const"}
    const = prop["const"]
    if t == "boolean":
        if isinstance(const, bool):
            rest.setdefault("default", const)
        return rest
    if "enum" not in rest and t in ("string", "number", "integer"):
        rest["enum"] = [const]
        return rest
    return prop  # left as it is, to be refused for what it is


def _advisory(key: str) -> bool:
    return key in _ADVISORY or key.startswith("x-")


class _Stop(Exception):
    """Raised internally once the problem list is full."""


class _Problems:
    """The problems found so far, and how the schema is read: ``tolerant``, a client's reading
    (see the module docstring)."""

    def __init__(self, tolerant: bool = False) -> None:
        self.items: list[SchemaProblem] = []
        self.tolerant = tolerant

    def add(self, parts: tuple[str, ...], reason: str) -> None:
        if len(self.items) >= MAX_PROBLEMS - 1:
            self.items.append(SchemaProblem("", f"too many problems; stopped after {len(self.items)}"))
            raise _Stop
        self.items.append(SchemaProblem(pointer(*parts), reason))


# Whole numbers beyond this lose precision in JavaScript clients and do not fit the
# 64-bit integers of common JSON encoders (answers and defaults are held to it too).
_SAFE_INT = MAX_SAFE_INTEGER


def _is_number(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -_SAFE_INT <= value <= _SAFE_INT
    return isinstance(value, float) and math.isfinite(value)


def _is_count(value: object) -> bool:
    """A non-negative integer (lengths and item counts)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _SAFE_INT


def _text(p: _Problems, parts: tuple[str, ...], value: object, *, blank_ok: bool = True) -> bool:
    """Check a title, description or ``$schema``; True when it is fine."""
    if not isinstance(value, str):
        p.add(parts, f"must be text, got {describe(value)}")
        return False
    if len(value) > MAX_TEXT:
        p.add(parts, f"is longer than {MAX_TEXT} characters ({len(value)})")
        return False
    bad = bad_text_char(value)
    if bad is not None:
        p.add(parts, f"contains the control or bidi character U+{ord(bad):04X}")
        return False
    if not blank_ok and not value.strip():
        p.add(parts, "must not be empty")
        return False
    return True


def _value_text(p: _Problems, parts: tuple[str, ...], value: object, what: str) -> bool:
    """Check an option value (``enum`` item or ``const``)."""
    if not isinstance(value, str):
        p.add(
            parts,
            f"{what} must be text, got {describe(value)}; numeric and other non-text "
            "choices are outside the elicitation schema subset",
        )
        return False
    return _shown_text(p, parts, value, what, MAX_TEXT, sent_back=True)


def _shown_text(
    p: _Problems, parts: tuple[str, ...], value: str, what: str, limit: int, *, sent_back: bool
) -> bool:
    """Text a client shows as it is or pre-fills (an option, a property name, a default): at most
    ``limit`` characters, none of them invisible or a control character.

    ``sent_back``: a value the answer carries back as it is (an option, a default), not a key. A
    client reading a server's form (``tolerant``) takes in one what a title may hold (tab,
    newline, zero-width joiners), as servers send them: the official SDKs' forms may carry a
    multi-line default. It shows the value cleaned and sends it back unchanged, and tells apart
    options that look the same on screen."""
    if len(value) > limit:
        p.add(parts, f"{what} is longer than {limit} characters")
        return False
    bad = bad_text_char(value) if sent_back and p.tolerant else bad_name_char(value)
    if bad is not None:
        p.add(parts, f"{what} contains the invisible or control character U+{ord(bad):04X}")
        return False
    return True


def _check_unique(
    p: _Problems, base: tuple[str, ...], values: list[str], what: str, key: str | None = None
) -> bool:
    """Duplicates, including ones that only differ by Unicode normalization."""
    seen: dict[str, int] = {}
    ok = True
    for i, value in enumerate(values):
        norm = unicodedata.normalize("NFC", value)
        if norm in seen:
            parts = (*base, str(i)) if key is None else (*base, str(i), key)
            same = "is the same as" if value == values[seen[norm]] else "looks the same as"
            p.add(parts, f"{what} {quote(value)} {same} {what} {seen[norm]}")
            ok = False
        else:
            seen[norm] = i
    return ok


def _options_list(p: _Problems, parts: tuple[str, ...], value: object, key: str) -> bool:
    if not isinstance(value, list):
        p.add(parts, f"{key} must be a list, got {describe(value)}")
        return False
    if not value:
        p.add(parts, f"{key} must list at least one choice")
        return False
    if len(value) > MAX_OPTIONS:
        p.add(parts, f"{key} has {len(value)} choices; at most {MAX_OPTIONS} are allowed")
        return False
    return True


def _enum_values(p: _Problems, parts: tuple[str, ...], value: object) -> list[str] | None:
    """``enum`` list of a single- or multi-select: non-empty, text, unique."""
    if not _options_list(p, parts, value, "enum"):
        return None
    assert isinstance(value, list)
    ok = True
    for i, item in enumerate(value):
        ok = _value_text(p, (*parts, str(i)), item, "an enum value") and ok
    if not ok:
        return None
    return value if _check_unique(p, parts, value, "enum value") else None


def _numeric_enum(
    p: _Problems, parts: tuple[str, ...], value: object, whole: bool
) -> list[int | float] | None:
    """Tolerant mode: the ``enum`` of a number or integer field, a single-select of numbers."""
    if not _options_list(p, parts, value, "enum"):
        return None
    assert isinstance(value, list)
    numbers: list[int | float] = []
    for i, item in enumerate(value):
        if not _is_number(item) or (whole and not float(item).is_integer()):
            wanted = "whole numbers" if whole else "numbers"
            p.add((*parts, str(i)), f"the choices of this field must be {wanted}, got {describe(item)}")
            return None
        numbers.append(int(item) if whole else item)
    shown = [show_number(n) for n in numbers]
    return numbers if _check_unique(p, parts, shown, "enum value") else None


def _number_extras(prop: dict[Any, Any]) -> dict[str, Any]:
    """Tolerant mode: the bounds a client checks beyond the subset, when they are well formed
    (a malformed one is left to the server, like the keywords it does not check at all)."""
    found: dict[str, Any] = {}
    for key, field in zip(
        _NUMBER_EXTRAS, ("exclusive_minimum", "exclusive_maximum", "multiple_of"), strict=True
    ):
        value: Any = prop.get(key)
        if _is_number(value) and (key != "multipleOf" or value > 0):
            found[field] = value
    return found


def _titled(
    p: _Problems, parts: tuple[str, ...], value: object, key: str
) -> tuple[list[str], list[str]] | None:
    """``oneOf`` / ``anyOf`` list of ``{const, title}``: values and titles."""
    if not _options_list(p, parts, value, key):
        return None
    assert isinstance(value, list)
    consts: list[str] = []
    titles: list[str] = []
    ok = True
    for i, item in enumerate(value):
        here = (*parts, str(i))
        if not isinstance(item, dict):
            p.add(here, f"each {key} entry must be an object {{const, title}}, got {describe(item)}")
            ok = False
            continue
        extra = [k for k in item if k not in ("const", "title")]
        for k in extra:
            reason = f"{quote(str(k))} is not allowed in a choice; a choice is {{const, title}}"
            p.add((*here, str(k)), reason)
        missing = [k for k in ("const", "title") if k not in item]
        for k in missing:
            p.add(here, f"choice is missing {k!r} (a choice needs both const and title)")
        if extra or missing:
            ok = False
            continue
        good = _value_text(p, (*here, "const"), item["const"], "const")
        good = _text(p, (*here, "title"), item["title"], blank_ok=False) and good
        if good:
            consts.append(item["const"])
            titles.append(item["title"])
        ok = ok and good
    if not ok:
        return None
    good = _check_unique(p, parts, consts, "const", "const")
    good = _check_unique(p, parts, titles, "title", "title") and good
    return (consts, titles) if good else None


def _missing_type_reason(prop: dict[Any, Any]) -> str:
    if "oneOf" in prop or "enum" in prop:
        return 'missing "type": a single-select needs "type": "string"'
    if "items" in prop:
        return 'missing "type": a multi-select needs "type": "array"'
    if "properties" in prop:
        return _NESTED
    if "$ref" in prop:
        return _KNOWN_REASONS["$ref"]
    for k in ("anyOf", "allOf", "not", "if"):
        if k in prop:
            return _KNOWN_REASONS[k]
    return 'missing "type" (one of "string", "number", "integer", "boolean", "array")'


def _shape(prop: dict[Any, Any], t: str, tolerant: bool) -> str:
    if t == "string":
        if "oneOf" in prop:
            return "oneOf"
        if "enum" in prop:
            return "enum"
        return "text"
    if t in ("number", "integer"):
        return "enum" if tolerant and "enum" in prop else "number"
    return t


def _unknown_reason(key: str, shape: str) -> str:
    if key == "enumNames" and shape != "enum":
        return "enumNames only goes with enum (the legacy titled single-select)"
    if key == "enum" and shape == "number":
        return (
            "enum is only allowed on text fields; numeric enums are outside the elicitation "
            'schema subset (use "type": "string" with text values)'
        )
    if key == "enum" and shape == "oneOf":
        return "a field has either enum or oneOf, not both"
    if key == "format" and shape != "text":
        return "format only applies to free text fields (not to choices, numbers or lists)"
    if key in _KNOWN_REASONS:
        return _KNOWN_REASONS[key]
    if key in _ANY_KIND:
        return f"{key} does not apply to a {_KIND_NAMES[shape]} field"
    return f"{quote(key)} is not a keyword of the elicitation schema subset"


def _bounds(
    p: _Problems, base: tuple[str, ...], prop: dict[Any, Any], lo: str, hi: str, count: bool
) -> tuple[Any, Any, bool]:
    """Check a pair of bounds; returns (low, high, ok)."""
    ok = True
    values: list[Any] = []
    for key in (lo, hi):
        if key not in prop:
            values.append(None)
            continue
        value = prop[key]
        if count and not _is_count(value):
            if isinstance(value, float) and value.is_integer() and 0 <= value <= _SAFE_INT:
                # describe() shows 1.0 as "1": say what is wrong with it instead.
                p.add((*base, key), f"must be written as an integer: {int(value)}, not {value!r}")
            else:
                reason = f"must be a non-negative integer up to {_SAFE_INT}, got {describe(value)}"
                p.add((*base, key), reason)
            ok, value = False, None
        elif not count and not _is_number(value):
            if isinstance(value, float):
                wanted = "a finite number"
            elif isinstance(value, int) and not isinstance(value, bool):
                wanted = f"a number between -{_SAFE_INT} and {_SAFE_INT}"
            else:
                wanted = "a number"
            p.add((*base, key), f"must be {wanted}, got {describe(value)}")
            ok, value = False, None
        values.append(value)
    low, high = values
    if low is not None and high is not None and low > high:
        p.add((*base, lo), f"{lo} ({show_number(low)}) is greater than {hi} ({show_number(high)})")
        ok = False
    return low, high, ok


def _whole_range(p: _Problems, base: tuple[str, ...], low: float | None, high: float | None) -> None:
    """Bounds in order that still leave an integer field no answer (0.5 to 0.6, or past the
    whole numbers an answer may hold): the field could never be filled in."""
    if low is not None and high is not None and math.ceil(low) > math.floor(high):
        reason = f"no whole number is between minimum ({show_number(low)}) and maximum ({show_number(high)})"
        p.add((*base, "minimum"), reason)
    elif low is not None and low > _SAFE_INT:
        p.add((*base, "minimum"), f"leaves no whole number an answer may hold (at most {_SAFE_INT})")
    elif high is not None and high < -_SAFE_INT:
        p.add((*base, "maximum"), f"leaves no whole number an answer may hold (at least -{_SAFE_INT})")


def _property(p: _Problems, name: str, prop: object, required: bool, tolerant: bool) -> FieldRule | None:
    base = ("properties", name)
    if not isinstance(prop, dict):
        p.add(base, f"a field must be described by a JSON object, got {describe(prop)}")
        return None
    before = len(p.items)
    for key in prop:
        if not isinstance(key, str):
            p.add(base, f"keyword {key!r} is not text")
    # Every problem in one pass: the texts are checked whatever the type, and a field refused
    # for one keyword still has the others (its default too) checked.
    for key in ("title", "description"):
        if key in prop:
            _text(p, (*base, key), prop[key])
    if "type" not in prop:
        p.add(base, _missing_type_reason(prop))
        return None
    t = prop["type"]
    if isinstance(t, list):
        p.add(
            (*base, "type"),
            'type lists such as ["string", "null"] are outside the elicitation schema '
            "subset; to make a field optional, leave it out of required",
        )
        others = [member for member in t if member != "null"]
        if len(others) != 1 or others[0] not in _TYPES:
            return None
        t = others[0]  # the rest of the field is checked as the type it is meant to have
    if t == "object":
        p.add((*base, "type"), _NESTED)
        return None
    if tolerant and "const" in prop:
        prop = _const_as_choice(prop, t)
    if t not in _TYPES:
        shown = quote(t) if isinstance(t, str) else describe(t)
        p.add((*base, "type"), f"unknown type {shown}; use one of {', '.join(_TYPES)}")
        return None
    shape = _shape(prop, t, tolerant)
    for key in prop:
        if isinstance(key, str) and key not in _ALLOWED[shape]:
            if tolerant and (_advisory(key) or (t in ("number", "integer") and key in _NUMBER_KEYWORDS)):
                continue  # left to the server, or (bounds beside a numeric enum) redundant
            if tolerant and key == "format" and shape == "text":
                continue  # an unknown format: plain text here, the server checks it
            p.add((*base, key), _unknown_reason(key, shape))

    kind: Kind
    extra: dict[str, Any] = {}
    if shape == "text":
        kind = "string"
        low, high, _ = _bounds(p, base, prop, "minLength", "maxLength", True)
        extra.update(min_length=low, max_length=high)
        if "format" in prop:
            fmt = prop["format"]
            if isinstance(fmt, str) and fmt in FORMATS:
                extra["format"] = fmt
            elif not tolerant:
                shown = quote(fmt) if isinstance(fmt, str) else describe(fmt)
                p.add((*base, "format"), f"unknown format {shown}; use one of {', '.join(sorted(FORMATS))}")
    elif shape == "number":
        kind = "integer" if t == "integer" else "number"
        low, high, ok = _bounds(p, base, prop, "minimum", "maximum", False)
        if ok and kind == "integer":
            _whole_range(p, base, low, high)
        extra.update(minimum=low, maximum=high)
        if tolerant:
            extra.update(_number_extras(prop))
    elif shape == "boolean":
        kind = "boolean"
    elif shape == "enum" and t != "string":
        kind = "select"
        numbers = _numeric_enum(p, (*base, "enum"), prop["enum"], t == "integer")
        if numbers is not None:
            extra.update(options=tuple(show_number(n) for n in numbers), option_values=tuple(numbers))
    elif shape == "enum":
        kind = "select"
        values = _enum_values(p, (*base, "enum"), prop["enum"])
        if values is not None:
            extra["options"] = tuple(values)
            if "enumNames" in prop:
                names = prop["enumNames"]
                if not isinstance(names, list) or len(names) != len(values):
                    count = f"{len(names)} names" if isinstance(names, list) else describe(names)
                    p.add(
                        (*base, "enumNames"),
                        f"enumNames must be a list with one title per enum value "
                        f"({len(values)}), got {count}",
                    )
                else:
                    good = all(
                        [
                            _text(p, (*base, "enumNames", str(i)), n, blank_ok=False)
                            for i, n in enumerate(names)
                        ]
                    )
                    if good and _check_unique(p, (*base, "enumNames"), names, "title"):
                        extra["titles"] = tuple(names)
    elif shape == "oneOf":
        kind = "select"
        found = _titled(p, (*base, "oneOf"), prop["oneOf"], "oneOf")
        if found is not None:
            extra.update(options=tuple(found[0]), titles=tuple(found[1]))
    else:
        kind = "multiselect"
        options = _items(p, base, prop.get("items"), "items" in prop, tolerant)
        low, high, ok = _bounds(p, base, prop, "minItems", "maxItems", True)
        extra.update(min_items=low, max_items=high)
        if options is not None and ok:
            values, titles = options
            extra.update(options=tuple(values), titles=None if titles is None else tuple(titles))
            for key, bound in (("maxItems", high), ("minItems", low)):
                if bound is not None and bound > len(values):
                    p.add((*base, key), f"{key} ({bound}) is more than the {len(values)} choices")

    rule = FieldRule(name=name, kind=kind, required=required, **extra)
    # A select whose choices could not be read has nothing to hold its default against.
    if "default" in prop and (kind not in ("select", "multiselect") or "options" in extra):
        rule = _with_default(p, base, prop["default"], rule)
    return rule if len(p.items) == before else None


def _with_default(p: _Problems, base: tuple[str, ...], default: object, rule: FieldRule) -> FieldRule:
    """``rule`` with its checked ``default``; a default that does not fit is reported (and
    ``rule`` returned as it is)."""
    # A client pre-fills the default into its input line: a bidi override or an escape
    # there would reach the terminal, so defaults follow the rules of enum values.
    if isinstance(default, str) and not _shown_text(
        p, (*base, "default"), default, "default", MAX_TEXT, sent_back=True
    ):
        return rule
    if isinstance(default, int) and not isinstance(default, bool) and not _is_number(default):
        p.add((*base, "default"), f"default must be between -{_SAFE_INT} and {_SAFE_INT}")
        return rule
    if rule.option_values is not None and not _is_number(default):
        # The rule of a select over numbers holds their text, which a text default would
        # match; but in the schema, as on the wire, the choices are numbers.
        reason = "the choices are numbers, so the default must be one of them"
        p.add((*base, "default"), f"default {short(default)} does not fit the field: {reason}")
        return rule
    normalized, error = check_value(rule, default)
    if error is not None:
        p.add((*base, "default"), f"default {short(default)} does not fit the field: {error}")
        return rule
    return rule._replace(has_default=True, default=normalized)


def _items(
    p: _Problems, base: tuple[str, ...], items: object, present: bool, tolerant: bool = False
) -> tuple[list[str], list[str] | None] | None:
    """The choices of a multi-select ``items``: (values, titles or None). Tolerant mode takes an
    ``enum`` without ``"type": "string"`` (other servers write ``set[Literal[...]]`` so); the
    values must still be text."""
    here = (*base, "items")
    arrays = (
        "arrays are only allowed as multi-selects: items must be "
        '{"type": "string", "enum": [...]} or {"anyOf": [{"const", "title"}...]}'
    )
    if not present:
        p.add(base, f"missing items; {arrays}")
        return None
    if not isinstance(items, dict):
        p.add(here, f"{arrays}, got {describe(items)}")
        return None
    if "anyOf" in items:
        for key in items:
            if key != "anyOf":
                p.add((*here, str(key)), f"{quote(str(key))} is not allowed next to anyOf in items")
        found = _titled(p, (*here, "anyOf"), items["anyOf"], "anyOf")
        return None if found is None else (found[0], found[1])
    if items.get("type") == "object" or "properties" in items:
        p.add(here, "arrays of objects are outside the elicitation schema subset")
        return None
    if "enum" not in items:
        p.add(here, arrays)
        return None
    bad = False
    for key in items:
        if key not in ("type", "enum"):
            p.add((*here, str(key)), f"{quote(str(key))} is not allowed in items; {arrays}")
            bad = True
    if items.get("type") != "string" and not (tolerant and "type" not in items):
        p.add((*here, "type"), 'items of a multi-select must have "type": "string"')
        bad = True
    values = _enum_values(p, (*here, "enum"), items["enum"])
    if values is None or bad:
        return None
    return values, None


def _name(p: _Problems, name: object) -> bool:
    if not isinstance(name, str):
        p.add(("properties",), f"property name {name!r} is not text")
        return False
    parts = ("properties", name)
    if not name.strip():
        p.add(parts, "property names must not be empty or blank")
        return False
    return _shown_text(p, parts, name, "property name", MAX_NAME, sent_back=False)


def _top(p: _Problems, schema: object, tolerant: bool) -> CompiledForm | None:
    if not isinstance(schema, dict):
        p.add((), f"requestedSchema must be a JSON object, got {describe(schema)}")
        return None
    for key in schema:
        if not isinstance(key, str):
            p.add((), f"keyword {key!r} is not text")
        elif key not in _TOP_KEYS:
            if tolerant and (
                key in _ADVISORY_TOP
                or key.startswith("x-")
                or (key == "additionalProperties" and schema[key] is False)
            ):
                continue
            if key == "additionalProperties" and schema[key] is False:
                reason = (
                    "additionalProperties is not part of requestedSchema; remove it (unknown "
                    "fields in an answer are refused anyway)"
                )
            elif key == "additionalProperties" and not isinstance(schema[key], dict):
                reason = (
                    "additionalProperties is not part of requestedSchema; remove it (a form has "
                    "only the fields listed in properties, and an answer with others is refused)"
                )
            elif key in ("title", "description"):
                reason = f"requestedSchema has no {key}; put the text in the elicitation message"
            elif key in ("$defs", "definitions", "$ref", "patternProperties", "additionalProperties"):
                reason = _KNOWN_REASONS[key]
            else:
                reason = (
                    f"{quote(key)} is not allowed at the top of requestedSchema (only type, "
                    "properties, required and $schema)"
                )
            p.add((key,), reason)
    if "$schema" in schema:
        _text(p, ("$schema",), schema["$schema"])
    if "type" not in schema:
        p.add(("type",), 'missing "type": "object"')
    elif schema["type"] != "object":
        p.add(("type",), f'must be "object", got {describe(schema["type"])}')

    required: set[str] = set()
    raw_required = schema.get("required", [])
    if not isinstance(raw_required, list):
        p.add(("required",), f"must be a list of property names, got {describe(raw_required)}")
        raw_required = []
    elif len(raw_required) > MAX_PROPERTIES:
        p.add(("required",), f"lists {len(raw_required)} names; a form has at most {MAX_PROPERTIES} fields")
        raw_required = []

    if "properties" not in schema:
        p.add(("properties",), 'missing "properties" (use {} for a confirm-only form)')
        return None
    properties = schema["properties"]
    if not isinstance(properties, dict):
        p.add(("properties",), f"must be an object mapping field names to fields, got {describe(properties)}")
        return None
    if len(properties) > MAX_PROPERTIES:
        p.add(("properties",), f"has {len(properties)} fields; at most {MAX_PROPERTIES} are allowed")
        return None

    for i, name in enumerate(raw_required):
        if not isinstance(name, str):
            p.add(("required", str(i)), f"must be a property name, got {describe(name)}")
        elif name in required:
            p.add(("required", str(i)), f"{quote(name)} is listed twice")
        elif name not in properties:
            p.add(("required", str(i)), f"{quote(name)} is not one of the properties")
        else:
            required.add(name)

    rules: list[FieldRule] = []
    seen: dict[str, str] = {}
    for name, prop in properties.items():
        if not _name(p, name):
            continue
        norm = unicodedata.normalize("NFC", name)
        if norm in seen:
            p.add(("properties", name), f"property name looks the same as {quote(seen[norm])}")
            continue
        seen[norm] = name
        rule = _property(p, name, prop, name in required, tolerant)
        if rule is not None:
            rules.append(rule)
    if p.items:
        return None
    return CompiledForm(tuple(rules))


def compile_schema(
    schema: object, *, tolerant: bool = False
) -> tuple[CompiledForm | None, list[SchemaProblem]]:
    """Check ``schema`` and compile it: ``(form, [])`` inside the subset, else ``(None, problems)``.

    ``tolerant``: the client's reading of a form from a server (see the module docstring).
    Never raises.
    """
    p = _Problems(tolerant)
    try:
        form = _top(p, schema, tolerant)
    except _Stop:
        return None, p.items
    except Exception as exc:  # a defect here must not turn into a crash of the caller
        p.items.append(SchemaProblem("", f"the schema could not be checked ({type(exc).__name__})"))
        return None, p.items
    if form is None and not p.items:  # pragma: no cover - every None path adds a problem
        p.items.append(SchemaProblem("", "the schema could not be checked"))
    return form, p.items


def check_schema(schema: object) -> list[SchemaProblem]:
    """Where ``schema`` leaves the elicitation subset; ``[]`` means it is inside.

    Never raises, whatever it is given.

    >>> check_schema({"type": "object", "properties": {}})
    []
    >>> [str(p) for p in check_schema({"type": "object", "properties": {"n": {"type": "object"}}})][0][:40]
    '/properties/n/type: nested objects are o'
    """
    return compile_schema(schema)[1]
