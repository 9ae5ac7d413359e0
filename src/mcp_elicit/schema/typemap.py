"""Map one field's Python type and metadata to a property of the subset.

The whole mapping is a small table: ``bool`` -> boolean, ``int`` -> integer, ``float``
-> number, ``str`` -> text, ``date`` / ``datetime`` -> text with a format, ``Literal`` of
strings and string-valued ``Enum`` -> single-select, ``list`` of those -> multi-select,
``T | None`` -> optional. Anything else is refused with the reason and what to do.
"""

from __future__ import annotations

import datetime
import enum
import sys
import types
import typing
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union

from .convert import ConvKind
from .errors import SchemaBuildError
from .markers import Choices, Description, Format, NotSecret, Title
from .sources import SourceField, from_module, is_field_info, is_pydantic_model, is_typeddict

__all__ = ["Mapped", "encode_default", "map_field"]

_NONE = type(None)
_OUTSIDE = "outside the elicitation schema subset"
_EXCLUSIVE = (
    "exclusive bounds ({which}) cannot be expressed: the elicitation schema subset only has "
    "inclusive minimum/maximum; use {instead} instead"
)
_NESTED = f"nested models are {_OUTSIDE} (flat objects of primitives only); split it into separate fields"
# pydantic metadata that only affects how pydantic validates or serializes, never what
# the form may accept: kept, and left for pydantic to apply.
_PYDANTIC_PASSIVE = frozenset(
    {
        "Strict",
        "AllowInfNan",
        "AfterValidator",
        "BeforeValidator",
        "WrapValidator",
        "PlainValidator",
        "PlainSerializer",
        "WrapSerializer",
        "FailFast",
    }
)


@dataclass(slots=True)
class _Facts:
    """What the metadata of a field says."""

    title: str | None = None
    description: str | None = None
    choices: Choices | None = None
    format: str | None = None
    not_secret: bool = False
    minimum: Any = None  # checked to be a number once the field is known to be one
    maximum: Any = None
    min_len: int | None = None
    max_len: int | None = None


@dataclass(slots=True)
class Mapped:
    """A mapped field: its property (without ``default``) and how to convert it back."""

    prop: dict[str, Any]
    nullable: bool
    not_secret: bool
    multi: bool
    conv_kind: ConvKind
    target: Any = None
    options: tuple[str, ...] = field(default=())


def _bound(name: str, value: object, what: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SchemaBuildError(name, f"{what} must be a number, got {value!r}")
    return value


def _length(name: str, value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SchemaBuildError(name, f"{what} must be a non-negative integer, got {value!r}")
    return value


def _exclusive(name: str, key: str, value: object) -> SchemaBuildError:
    # Refused rather than turned into ge/le: "gt=0" on a float has no inclusive twin, and a
    # silent change of bound would surprise whoever reads the model.
    instead = f"{'ge' if key == 'gt' else 'le'}=..."
    if isinstance(value, int) and not isinstance(value, bool):
        twin = value + 1 if key == "gt" else value - 1
        instead += f" (for whole numbers, {key}={value} is {instead[:2]}={twin})"
    return SchemaBuildError(name, _EXCLUSIVE.format(which=f"{key}={value!r}", instead=instead))


def _absorb_annotated_types(name: str, facts: _Facts, item: Any) -> None:
    kind = type(item).__name__
    if kind in ("Gt", "Lt"):
        key = kind.lower()
        raise _exclusive(name, key, getattr(item, key))
    if kind == "Ge":
        facts.minimum = item.ge
    elif kind == "Le":
        facts.maximum = item.le
    elif kind == "Interval":
        for key in ("gt", "lt"):
            if getattr(item, key) is not None:
                raise _exclusive(name, key, getattr(item, key))
        if item.ge is not None:
            facts.minimum = item.ge
        if item.le is not None:
            facts.maximum = item.le
    elif kind == "MinLen":
        facts.min_len = _length(name, item.min_length, "min_length")
    elif kind == "MaxLen":
        facts.max_len = _length(name, item.max_length, "max_length")
    elif kind == "Len":
        if item.min_length:
            facts.min_len = _length(name, item.min_length, "min_length")
        if item.max_length is not None:
            facts.max_len = _length(name, item.max_length, "max_length")
    elif kind == "DocInfo":
        facts.description = facts.description or item.documentation
    elif kind == "MultipleOf":
        raise SchemaBuildError(name, f"multiple_of is {_OUTSIDE}")
    else:
        raise SchemaBuildError(name, f"the constraint {item!r} is {_OUTSIDE}")


def _absorb_pydantic(name: str, facts: _Facts, item: Any) -> None:
    kind = type(item).__name__
    if is_field_info(item):
        if item.json_schema_extra is not None:
            raise SchemaBuildError(
                name,
                "json_schema_extra is not supported in elicitation forms; use Title, "
                "Description and Choices markers instead",
            )
        if item.title is not None:
            facts.title = item.title
        if item.description is not None:
            facts.description = item.description
        for inner in item.metadata:
            _absorb(name, facts, inner)
    elif kind == "StringConstraints":
        if item.pattern is not None:
            raise SchemaBuildError(name, _pattern(item.pattern))
        if getattr(item, "ascii_only", None):
            raise SchemaBuildError(name, f"ascii_only is {_OUTSIDE}")
        if item.min_length is not None:
            facts.min_len = _length(name, item.min_length, "min_length")
        if item.max_length is not None:
            facts.max_len = _length(name, item.max_length, "max_length")
    elif kind == "_PydanticGeneralMetadata":
        values = vars(item)
        if values.get("pattern") is not None:
            raise SchemaBuildError(name, _pattern(values["pattern"]))
        for key in ("max_digits", "decimal_places"):
            if values.get(key) is not None:
                raise SchemaBuildError(name, f"{key} is {_OUTSIDE}")
    elif kind not in _PYDANTIC_PASSIVE:
        raise SchemaBuildError(name, f"the pydantic annotation {kind} is not supported in forms")


def _pattern(pattern: object) -> str:
    return (
        f"regex patterns ({pattern!r}) are {_OUTSIDE} (MCP removed pattern); check the "
        "value in your code after the answer arrives, or offer fixed choices"
    )


def _absorb(name: str, facts: _Facts, item: Any) -> None:
    """Fold one metadata object into ``facts``; refuse what the subset cannot say."""
    if item is None:
        return
    if isinstance(item, Title):
        facts.title = item.text
    elif isinstance(item, Description):
        facts.description = item.text
    elif isinstance(item, Choices):
        facts.choices = item
    elif isinstance(item, Format):
        facts.format = item.name
    elif isinstance(item, NotSecret):
        facts.not_secret = True
    elif from_module(item, "annotated_types"):
        _absorb_annotated_types(name, facts, item)
    elif from_module(item, "pydantic"):
        _absorb_pydantic(name, facts, item)
    elif type(item).__name__ == "Doc" and isinstance(getattr(item, "documentation", None), str):
        facts.description = facts.description or item.documentation
    # Metadata of other libraries is theirs to interpret, as typing recommends.


def _is_union(tp: Any) -> bool:
    origin = typing.get_origin(tp)
    return origin is Union or origin is types.UnionType


def _unwrap(name: str, tp: Any, facts: _Facts) -> tuple[Any, bool]:
    """Peel ``Annotated``, ``Optional``, ``NewType`` and type aliases; returns (core, nullable)."""
    nullable = False
    for _ in range(50):  # bounded: a self-referencing alias must not loop forever
        origin = typing.get_origin(tp)
        if origin is Annotated:
            for item in tp.__metadata__:
                _absorb(name, facts, item)
            tp = typing.get_args(tp)[0]
        elif _is_union(tp):
            args = typing.get_args(tp)
            rest = [a for a in args if a is not _NONE]
            nullable = nullable or len(rest) != len(args)
            if len(rest) != 1:
                shown = " | ".join(_type_name(a) for a in rest)
                raise SchemaBuildError(
                    name,
                    f"unions of several types ({shown}) are {_OUTSIDE}; use one type "
                    "(T | None is fine for an optional field)",
                )
            tp = rest[0]
        elif origin is Literal and None in typing.get_args(tp):
            nullable = True
            kept = tuple(a for a in typing.get_args(tp) if a is not None)
            if not kept:
                raise SchemaBuildError(name, "a field cannot only be None")
            tp = Literal[kept]
        elif hasattr(tp, "__supertype__"):  # typing.NewType
            tp = tp.__supertype__
        elif type(tp).__name__ == "TypeAliasType":
            tp = tp.__value__
        else:
            return tp, nullable
    raise SchemaBuildError(name, "the type is nested too deeply")


def _type_name(tp: Any) -> str:
    if tp is _NONE:
        return "None"
    if isinstance(tp, type):
        return tp.__name__
    return repr(tp).replace("typing.", "")


def _enum_values(name: str, cls: type[enum.Enum]) -> tuple[str, ...]:
    members = list(cls)
    if not members:
        raise SchemaBuildError(name, f"the enum {cls.__name__} has no members")
    bad = [m for m in members if not isinstance(m.value, str)]
    if bad:
        shown = ", ".join(f"{m.name}={m.value!r}" for m in bad[:5])
        raise SchemaBuildError(
            name,
            f"the enum {cls.__name__} has non-text values ({shown}); choices in the "
            "elicitation schema subset are strings: give the members string values",
        )
    return tuple(m.value for m in members)


def _literal_values(name: str, tp: Any) -> tuple[str, ...]:
    values = typing.get_args(tp)
    bad = [v for v in values if type(v) is not str]
    if bad:
        raise SchemaBuildError(
            name,
            f"Literal values must be text; {', '.join(map(repr, bad[:5]))} are not "
            f"(numeric and other non-text choices are {_OUTSIDE})",
        )
    return tuple(values)


def _choice_values(name: str, tp: Any) -> tuple[tuple[str, ...], type[enum.Enum] | None] | None:
    """Values of a Literal or string Enum, or None when ``tp`` is neither."""
    if typing.get_origin(tp) is Literal:
        return _literal_values(name, tp), None
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum_values(name, tp), tp
    return None


def _select_prop(
    name: str, values: tuple[str, ...] | None, choices: Choices | None, *, multi: bool
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``enum`` / ``oneOf`` / ``enumNames`` / ``items`` for a select."""
    if choices is None:
        assert values is not None
        if multi:
            return {"type": "array", "items": {"type": "string", "enum": list(values)}}, values
        return {"type": "string", "enum": list(values)}, values
    keys = tuple(value for value, _ in choices.options)
    if not keys:
        raise SchemaBuildError(name, "Choices needs at least one choice")
    if values is not None and set(keys) != set(values):
        missing = [v for v in values if v not in keys]
        extra = [k for k in keys if k not in values]
        raise SchemaBuildError(
            name,
            f"the Choices keys must be exactly the field's values (missing {missing}, unknown {extra})",
        )
    titled = [{"const": value, "title": title} for value, title in choices.options]
    if multi:
        if choices.legacy:
            raise SchemaBuildError(name, "legacy enumNames only exist for single-selects; drop legacy=True")
        return {"type": "array", "items": {"anyOf": titled}}, keys
    if choices.legacy:
        prop = {"type": "string", "enum": list(keys), "enumNames": [t for _, t in choices.options]}
        return prop, keys
    return {"type": "string", "oneOf": titled}, keys


def _no_constraints(name: str, facts: _Facts, what: str) -> None:
    if facts.minimum is not None or facts.maximum is not None:
        raise SchemaBuildError(name, f"minimum/maximum (ge/le) do not apply to {what}")
    if facts.min_len is not None or facts.max_len is not None:
        raise SchemaBuildError(name, f"length constraints do not apply to {what}")


def _no_choices(name: str, facts: _Facts, what: str) -> None:
    if facts.choices is not None:
        raise SchemaBuildError(name, f"Choices only apply to text fields and lists, not to {what}")


def _no_format(name: str, facts: _Facts, what: str) -> None:
    if facts.format is not None:
        raise SchemaBuildError(name, f"Format only applies to str fields, not to {what}")


def _pydantic_special(tp: type) -> str | None:
    """What a pydantic type means here: "email", "uri", "secret", or None (not special)."""
    if not from_module(tp, "pydantic"):
        return None
    if tp.__name__ == "EmailStr":
        return "email"
    if tp.__name__ in ("SecretStr", "SecretBytes", "Secret"):
        return "secret"
    networks = sys.modules.get("pydantic.networks")
    if networks is not None and issubclass(tp, networks.AnyUrl):
        return "uri"
    return None


def _map_list(name: str, tp: Any, facts: _Facts) -> Mapped:
    args = typing.get_args(tp)
    item = args[0] if args else Any
    item_facts = _Facts()
    item, item_nullable = _unwrap(name, item, item_facts)
    if item_nullable:
        raise SchemaBuildError(name, f"None inside a list is {_OUTSIDE}")
    if item_facts != _Facts(choices=item_facts.choices):
        raise SchemaBuildError(
            name,
            "only Choices may annotate list items; put titles, descriptions and item counts "
            "(min_length/max_length) on the list itself",
        )
    choices = facts.choices or item_facts.choices
    found = _choice_values(name, item)
    if found is None and not (item is str and choices is not None):
        if item is str:
            reason = (
                f"a list of free text is {_OUTSIDE}; a multi-select needs fixed choices: use "
                "list[Literal[...]], list[SomeEnum] or Annotated[list[str], Choices({...})]"
            )
        elif (
            is_pydantic_model(item)
            or is_typeddict(item)
            or (isinstance(item, type) and hasattr(item, "__dataclass_fields__"))
            or typing.get_origin(item) in (dict, list)
        ):
            reason = f"lists of objects or lists are {_OUTSIDE}"
        else:
            reason = (
                f"list[{_type_name(item)}] is {_OUTSIDE}; lists are only multi-selects of "
                "text choices (list[Literal[...]] or list[SomeEnum])"
            )
        raise SchemaBuildError(name, reason)
    values, enum_cls = found if found is not None else (None, None)
    if facts.minimum is not None or facts.maximum is not None:
        raise SchemaBuildError(name, "minimum/maximum (ge/le) do not apply to a list")
    _no_format(name, facts, "a list")
    prop, options = _select_prop(name, values, choices, multi=True)
    if facts.min_len is not None:
        prop["minItems"] = facts.min_len
    if facts.max_len is not None:
        prop["maxItems"] = facts.max_len
    return Mapped(
        prop,
        nullable=False,
        not_secret=facts.not_secret,
        multi=True,
        conv_kind="enum_list" if enum_cls is not None else "list",
        target=enum_cls,
        options=options,
    )


def _map_core(name: str, tp: Any, facts: _Facts) -> Mapped:
    def done(
        prop: dict[str, Any], kind: ConvKind, target: Any = None, options: tuple[str, ...] = ()
    ) -> Mapped:
        return Mapped(prop, False, facts.not_secret, False, kind, target, options)

    if tp is Any or tp is object:
        raise SchemaBuildError(name, f"Any is {_OUTSIDE}; give the field a concrete type")
    if tp is _NONE:
        raise SchemaBuildError(name, "a field cannot only be None")
    origin = typing.get_origin(tp)
    if origin is list or tp is list:
        return _map_list(name, tp, facts)
    found = _choice_values(name, tp)
    if found is not None:
        values, enum_cls = found
        _no_constraints(name, facts, "a choice")
        _no_format(name, facts, "a choice")
        prop, options = _select_prop(name, values, facts.choices, multi=False)
        return done(prop, "enum" if enum_cls is not None else "plain", enum_cls, options)
    if origin in (tuple, set, frozenset) or tp in (tuple, set, frozenset):
        raise SchemaBuildError(
            name,
            f"tuples and sets are {_OUTSIDE}; for a multi-select use list[Literal[...]] or list[SomeEnum]",
        )
    if origin is dict or tp is dict or is_typeddict(tp) or is_pydantic_model(tp):
        raise SchemaBuildError(name, _NESTED)
    if origin is not None:
        raise SchemaBuildError(name, f"{_type_name(tp)} is {_OUTSIDE}")
    if not isinstance(tp, type):
        raise SchemaBuildError(name, f"{_type_name(tp)} is not a type the form understands")
    if hasattr(tp, "__dataclass_fields__"):
        raise SchemaBuildError(name, _NESTED)
    if issubclass(tp, bool):
        _no_constraints(name, facts, "a boolean")
        _no_choices(name, facts, "a boolean")
        _no_format(name, facts, "a boolean")
        return done({"type": "boolean"}, "plain")
    special = _pydantic_special(tp)
    if special == "secret":
        raise SchemaBuildError(
            name,
            f"{tp.__name__} asks for a secret; MCP forbids secrets in form mode: ask for it "
            "in URL mode instead",
        )
    if special in ("email", "uri"):
        if facts.format is not None and facts.format != special:
            raise SchemaBuildError(name, f"Format({facts.format!r}) contradicts {tp.__name__}")
        facts.format = special
        # pydantic's own length limit (HttpUrl: 2083) goes into the form, so that a client
        # refuses what the server would; its scheme limits are told on a retry (no schema keyword).
        limit = getattr(getattr(tp, "_constraints", None), "max_length", None)
        if special == "uri" and isinstance(limit, int) and (facts.max_len is None or limit < facts.max_len):
            facts.max_len = limit
        kind: ConvKind = "url" if special == "uri" else "plain"
        mapped = _map_text(name, facts)
        mapped.conv_kind, mapped.target = kind, tp if special == "uri" else None
        return mapped
    if issubclass(tp, int):
        return _map_number(name, facts, "integer", tp)
    if issubclass(tp, float):
        return _map_number(name, facts, "number", tp)
    if issubclass(tp, datetime.datetime) or issubclass(tp, datetime.date):
        fmt = "date-time" if issubclass(tp, datetime.datetime) else "date"
        _no_constraints(name, facts, "a date (bounds on dates are outside the subset)")
        _no_choices(name, facts, "a date")
        if facts.format is not None and facts.format != fmt:
            raise SchemaBuildError(name, f"Format({facts.format!r}) contradicts {tp.__name__}")
        return done({"type": "string", "format": fmt}, "datetime" if fmt == "date-time" else "date")
    if issubclass(tp, str):
        if facts.choices is not None:
            _no_constraints(name, facts, "a choice")
            _no_format(name, facts, "a choice")
            prop, options = _select_prop(name, None, facts.choices, multi=False)
            return done(prop, "plain", None, options)
        return _map_text(name, facts)
    if issubclass(tp, bytes | bytearray):
        raise SchemaBuildError(name, f"binary data (bytes) is {_OUTSIDE}; use str")
    if tp in (datetime.time, datetime.timedelta):
        raise SchemaBuildError(name, f"{tp.__name__} is {_OUTSIDE}; use str, date or datetime")
    raise SchemaBuildError(
        name,
        f"the type {tp.__name__} is {_OUTSIDE} (text, numbers, booleans, dates, Literal, "
        "Enum and lists of choices only)",
    )


def _map_text(name: str, facts: _Facts) -> Mapped:
    if facts.minimum is not None or facts.maximum is not None:
        raise SchemaBuildError(
            name, "minimum/maximum (ge/le) do not apply to text; use min_length/max_length"
        )
    _no_choices(name, facts, "this field")
    prop: dict[str, Any] = {"type": "string"}
    if facts.min_len is not None:
        prop["minLength"] = facts.min_len
    if facts.max_len is not None:
        prop["maxLength"] = facts.max_len
    if facts.format is not None:
        prop["format"] = facts.format
    return Mapped(prop, False, facts.not_secret, False, "plain")


def _map_number(name: str, facts: _Facts, kind: str, tp: type) -> Mapped:
    if facts.min_len is not None or facts.max_len is not None:
        raise SchemaBuildError(
            name, "length constraints do not apply to numbers; use ge/le (minimum/maximum)"
        )
    _no_choices(name, facts, "a number")
    _no_format(name, facts, "a number")
    if tp not in (int, float):
        raise SchemaBuildError(name, f"the type {tp.__name__} is {_OUTSIDE}; use int or float")
    prop: dict[str, Any] = {"type": kind}
    if facts.minimum is not None:
        prop["minimum"] = _bound(name, facts.minimum, "ge")
    if facts.maximum is not None:
        prop["maximum"] = _bound(name, facts.maximum, "le")
    return Mapped(prop, False, facts.not_secret, False, "float" if kind == "number" else "plain")


def map_field(source: SourceField) -> Mapped:
    """Map one source field; raises :class:`SchemaBuildError` naming it when impossible."""
    name = source.name
    facts = _Facts(title=source.title, description=source.description)
    for item in source.metadata:
        _absorb(name, facts, item)
    core, nullable = _unwrap(name, source.annotation, facts)
    mapped = _map_core(name, core, facts)
    mapped.nullable = nullable
    head: dict[str, Any] = {"type": mapped.prop.pop("type")}
    if facts.title is not None:
        head["title"] = facts.title
    if facts.description is not None:
        head["description"] = facts.description
    mapped.prop = head | mapped.prop
    return mapped


def encode_default(value: Any) -> Any:
    """A Python default as JSON: enum members by value, dates in ISO form, lists as lists."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [encode_default(v) for v in value]
    if from_module(value, "pydantic") and type(value).__name__.endswith("Url"):
        return str(value)
    return value
