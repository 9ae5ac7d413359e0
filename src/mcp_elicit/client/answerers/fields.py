"""A form's fields as an answerer shows and checks them (no terminal code here).

The rules come from :mod:`mcp_elicit.schema` itself (``compile_schema`` and
``check_value``, the functions ``validate_answer`` runs), so a value the answerer accepts
while the person types is exactly a value the engine accepts afterwards. Every string
taken from the schema for display is passed through :func:`mcp_elicit.client.text.clean`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from mcp_elicit.client.text import clean
from mcp_elicit.schema.check import compile_schema
from mcp_elicit.schema.rules import FieldRule, check_value

__all__ = [
    "DESCRIPTION_MAX",
    "LABEL_MAX",
    "MESSAGE_MAX",
    "NAME_MAX",
    "NUMBER_TEXT_MAX",
    "OMIT",
    "TITLE_MAX",
    "VALUE_MAX",
    "Choice",
    "Field",
    "FormNotShown",
    "form_fields",
    "humanise",
    "show_value",
]

#: Display caps, in characters, for server-supplied text.
MESSAGE_MAX: Final = 5000
TITLE_MAX: Final = 200
DESCRIPTION_MAX: Final = 2000
LABEL_MAX: Final = 200
VALUE_MAX: Final = 500
NAME_MAX: Final = 120

_FORMAT_HINTS: Final = {
    "email": "an email address, such as name@example.com",
    "uri": "an absolute URI, such as https://example.com/page",
    "date": "a date written YYYY-MM-DD, such as 2026-01-31",
    "date-time": "a date and time with a time zone, such as 2026-01-31T09:30:00Z",
}
# A JSON-style number, with an optional leading "+"; no "1_000", no "0x10", no "nan".
_NUMBER: Final = re.compile(r"[+-]?(?:0|[0-9]+)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# Longer typed numbers are refused before int() or float() reads them: no number a form can
# hold needs more characters, and int() raises past Python's digit limit (4300).
NUMBER_TEXT_MAX: Final = 100


class _Omit:
    """The value of a field left empty: it is not sent (the form's default, if any, applies)."""

    _instance: _Omit | None = None

    def __new__(cls) -> _Omit:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "OMIT"

    def __bool__(self) -> bool:
        return False


#: A field left empty.
OMIT: Final = _Omit()


class FormNotShown(Exception):
    """The schema cannot be shown as a form (it is outside the subset); ``problems`` says why."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass(frozen=True, slots=True)
class Choice:
    """One option of a select: ``value`` is sent, ``label`` (cleaned, unique) is shown."""

    value: str
    label: str


def _number_text(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


@dataclass(frozen=True, slots=True)
class Field:
    """One property of a form, ready to display and check."""

    rule: FieldRule
    label: str  # the title (cleaned), or the name made readable (humanise) when there is none
    name: str  # the property name, cleaned for display
    description: str | None
    choices: tuple[Choice, ...]
    #: Whether to show ``name`` next to ``label``: the label is a title that says something
    #: else, or another field's label looks the same.
    show_name: bool = False

    @property
    def key(self) -> str:
        """The property name as sent (not cleaned)."""
        return self.rule.name

    @property
    def kind(self) -> str:
        return self.rule.kind

    @property
    def required(self) -> bool:
        return self.rule.required

    @property
    def has_default(self) -> bool:
        return self.rule.has_default

    @property
    def default(self) -> Any:
        return self.rule.default

    def check(self, value: Any) -> tuple[Any, str | None]:
        """``(normalized value, None)`` or ``(None, message)``; :data:`OMIT` is checked too."""
        if value is OMIT:
            if self.required:
                return None, "this field is required"
            return OMIT, None
        return check_value(self.rule, value)

    def parse_text(self, text: str) -> tuple[Any, str | None]:
        """What typing ``text`` into this text or number field means: a value, or :data:`OMIT`.

        An empty entry leaves an optional field out (its default, if any, then applies).
        A required text field accepts ``""`` when its rules do.
        """
        kind = self.rule.kind
        if kind == "string":
            if text == "" and not self.required:
                return OMIT, None
            return check_value(self.rule, text)
        if kind in ("number", "integer"):
            stripped = text.strip()
            if stripped == "":
                return self.check(OMIT)
            if len(stripped) > NUMBER_TEXT_MAX:
                return (
                    None,
                    f"is too long for a number ({len(stripped)} characters; at most {NUMBER_TEXT_MAX})",
                )
            if _NUMBER.fullmatch(stripped) is None:
                wanted = "a whole number" if kind == "integer" else "a number"
                return None, f"must be {wanted}, such as {'42' if kind == 'integer' else '4.2'}"
            number: int | float
            if re.fullmatch(r"[+-]?[0-9]+", stripped):
                number = int(stripped)
            else:
                number = float(stripped)
                if not math.isfinite(number):
                    return None, "must be a finite number"
            return check_value(self.rule, number)
        raise TypeError(f"field {self.key!r} ({kind}) is not typed in as text")

    def text_of(self, value: Any) -> str:
        """The editable text for ``value`` in a text or number field ('' for none)."""
        if value is OMIT or value is None or isinstance(value, bool):
            return ""
        if isinstance(value, str):
            return value
        if isinstance(value, int | float):
            return _number_text(value)
        return ""

    def constraints(self) -> list[str]:
        """Short phrases a person can read: what the field accepts."""
        r = self.rule
        out: list[str] = ["required" if r.required else "optional"]
        if r.kind == "string":
            lo, hi = r.min_length, r.max_length
            if lo is not None and hi is not None:
                out.append(f"{lo}–{hi} characters" if lo != hi else f"exactly {lo} characters")
            elif lo is not None and lo > 0:
                out.append(f"at least {lo} character{'s' if lo != 1 else ''}")
            elif hi is not None:
                out.append(f"at most {hi} character{'s' if hi != 1 else ''}")
            if r.format is not None:
                out.append(_FORMAT_HINTS.get(r.format, f"format {r.format}"))
        elif r.kind in ("number", "integer"):
            out.append("a whole number" if r.kind == "integer" else "a number")
            lo_n, hi_n = r.minimum, r.maximum
            if lo_n is not None and hi_n is not None:
                out.append(f"from {_number_text(lo_n)} to {_number_text(hi_n)}")
            elif lo_n is not None:
                out.append(f"at least {_number_text(lo_n)}")
            elif hi_n is not None:
                out.append(f"at most {_number_text(hi_n)}")
            if r.exclusive_minimum is not None:
                out.append(f"more than {_number_text(r.exclusive_minimum)}")
            if r.exclusive_maximum is not None:
                out.append(f"less than {_number_text(r.exclusive_maximum)}")
            if r.multiple_of is not None:
                out.append(f"a multiple of {_number_text(r.multiple_of)}")
        elif r.kind == "boolean":
            out.append("yes or no")
        elif r.kind == "select":
            out.append(f"choose one of {len(r.options)}")
        else:
            lo_i, hi_i = r.min_items, r.max_items
            if lo_i is not None and hi_i is not None and lo_i > 0:
                out.append(f"choose {lo_i}–{hi_i}" if lo_i != hi_i else f"choose exactly {lo_i}")
            elif lo_i is not None and lo_i > 0:
                out.append(f"choose at least {lo_i}")
            elif hi_i is not None:
                out.append(f"choose at most {hi_i}")
            else:
                out.append("choose any")
            out[-1] += f" of {len(r.options)}"
        if r.has_default:
            out.append(f"default: {show_value(self, r.default)}")
        return out

    def label_of(self, value: str) -> str:
        for choice in self.choices:
            if choice.value == value:
                return choice.label
        return clean(value, single_line=True, max_length=LABEL_MAX)

    def prefill(self, previous: Mapping[str, Any] | None) -> Any:
        """The starting value: the previous answer's (even if it was wrong, so the person
        can fix it), else the default, else :data:`OMIT`."""
        if previous is not None and self.key in previous:
            value = previous[self.key]
            if self._fits_kind(value):
                return list(value) if isinstance(value, list) else value
        if self.has_default:
            default = self.default
            return list(default) if isinstance(default, list) else default
        return OMIT

    def _fits_kind(self, value: Any) -> bool:
        kind = self.rule.kind
        if kind == "string":
            return isinstance(value, str)
        if kind in ("number", "integer"):
            return isinstance(value, int | float) and not isinstance(value, bool)
        if kind == "boolean":
            return isinstance(value, bool)
        if kind == "select":
            return isinstance(value, str) and value in self.rule.options
        return isinstance(value, list) and all(isinstance(v, str) and v in self.rule.options for v in value)


def show_value(field: Field, value: Any) -> str:
    """``value`` as a person reads it in a summary (cleaned, single line, capped)."""
    if value is OMIT:
        return "(left empty)"
    kind = field.rule.kind
    if kind == "boolean" and isinstance(value, bool):
        return "yes" if value else "no"
    if kind == "select" and isinstance(value, str):
        return field.label_of(value)
    if kind == "multiselect" and isinstance(value, list):
        if not value:
            return "(none selected)"
        return clean(
            ", ".join(field.label_of(v) if isinstance(v, str) else repr(v) for v in value),
            single_line=True,
            max_length=VALUE_MAX,
        )
    if isinstance(value, str):
        if value == "":
            return '"" (empty text)'
        return clean(value, single_line=True, max_length=VALUE_MAX)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _number_text(value)
    return clean(repr(value), single_line=True, max_length=VALUE_MAX)


# Characters that show as nothing yet are not format characters (which clean() removes): the
# rest of Unicode's Default_Ignorable_Code_Point (variation selectors, Hangul fillers, the
# combining grapheme joiner, Mongolian and Khmer ones, unassigned ignorables).
_INVISIBLE: Final = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\ufff0-\ufff8\U000e0000-\U000e0fff]"
)


def _looks(label: str) -> str:
    """What a label looks like on screen, roughly: without invisible characters and spaces, case
    folded. Two labels with the same look are told apart; a label that looks empty is replaced."""
    return "".join(_INVISIBLE.sub("", label).split()).casefold()


def _value_text(value: str) -> str:
    """A choice's value as it can be shown, even when it is blank or invisible."""
    shown = clean(value, single_line=True, max_length=LABEL_MAX)
    if _looks(shown):
        return shown
    if value == "":
        return '"" (empty text)'
    return (
        "(blank: " + " ".join(f"U+{ord(ch):04X}" for ch in value[:8]) + ("…" if len(value) > 8 else "") + ")"
    )


def _choices(rule: FieldRule) -> tuple[Choice, ...]:
    labels: list[str] = []
    for i, value in enumerate(rule.options):
        title = rule.titles[i] if rule.titles is not None else value
        label = clean(title, single_line=True, max_length=LABEL_MAX).strip()
        # A choice that shows as nothing (an empty or blank value, an invisible title) would be
        # a blank line in the list: show its value, or say what it is.
        labels.append(label if _looks(label) else _value_text(value))
    # Two options must never look the same (titles differing only by characters that
    # cleaning removed or that show as nothing, by spacing, or by what the cap cut off): tell
    # them apart by value.
    seen: dict[str, int] = {}
    for label in labels:
        seen[_looks(label)] = seen.get(_looks(label), 0) + 1
    result: list[Choice] = []
    shown: set[str] = set()
    for i, (value, label) in enumerate(zip(rule.options, labels, strict=True)):
        if seen[_looks(label)] > 1:
            label = f"{label} [{_value_text(value)}]"
        if _looks(label) in shown:
            label = f"{label} [#{i + 1}]"
        shown.add(_looks(label))
        result.append(Choice(value, label))
    return tuple(result)


def humanise(name: str) -> str:
    """A property name as a label, when the schema gives no title: words split at ``_``,
    ``-``, ``.``, spaces and case changes, the first capitalised, the others lower case unless
    they are acronyms. ``departure_date`` -> "Departure date", ``numGuests`` -> "Num guests",
    ``userID`` -> "User ID". ``name`` is cleaned already; a name with no letters or digits
    stays as it is."""
    words: list[str] = []
    word = ""
    for i, ch in enumerate(name):
        if ch in "_-. " or not ch.isprintable():
            words.append(word)
            word = ""
            continue
        if word:
            prev = word[-1]
            nxt = name[i + 1] if i + 1 < len(name) else ""
            # aB -> a B; ABc -> A Bc (the end of an acronym); a1 and 1a stay together
            if (prev.islower() and ch.isupper()) or (prev.isupper() and ch.isupper() and nxt.islower()):
                words.append(word)
                word = ""
        word += ch
    words.append(word)
    words = [w if len(w) > 1 and w.isupper() else w.lower() for w in words if w]
    if not words:
        return name
    return " ".join([words[0][:1].upper() + words[0][1:], *words[1:]])


def form_fields(schema: Mapping[str, Any]) -> list[Field]:
    """The fields of ``schema``, in property order; :class:`FormNotShown` if it is not a form."""
    form, problems = compile_schema(schema, tolerant=True)
    if form is None:
        raise FormNotShown([clean(str(p), single_line=True, max_length=VALUE_MAX) for p in problems[:10]])
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    fields: list[Field] = []
    for rule in form.fields:
        prop = props.get(rule.name)
        prop = prop if isinstance(prop, Mapping) else {}
        name = clean(rule.name, single_line=True, max_length=NAME_MAX)
        title = prop.get("title")
        label = clean(title, single_line=True, max_length=TITLE_MAX).strip() if isinstance(title, str) else ""
        description = prop.get("description")
        desc = clean(description, max_length=DESCRIPTION_MAX).strip() if isinstance(description, str) else ""
        shown = label or humanise(name)
        fields.append(Field(rule, shown, name, desc or None, _choices(rule), bool(label) and label != name))
    # Two fields must not look the same: show the names of those whose labels do.
    looks: dict[str, int] = {}
    for f in fields:
        looks[_looks(f.label)] = looks.get(_looks(f.label), 0) + 1
    return [replace(f, show_name=True) if looks[_looks(f.label)] > 1 else f for f in fields]
