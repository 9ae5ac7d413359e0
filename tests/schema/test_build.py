"""Building forms from dataclasses and TypedDicts: the eight kinds, options, and refusals."""

import dataclasses
import datetime as dt
import enum
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NewType, NotRequired, Optional, Required, TypedDict

import annotated_types as at
import pytest

from mcp_elicit.schema import (
    Choices,
    Description,
    Email,
    Format,
    NotSecret,
    SchemaBuildError,
    Title,
    Url,
    check_schema,
    form_spec,
)


class Size(enum.StrEnum):
    SMALL = "s"
    LARGE = "l"


class Plain(enum.Enum):  # a plain Enum with string values is fine
    A = "a"
    B = "b"


class Numbered(enum.IntEnum):
    ONE = 1


def props(source: Any) -> dict[str, Any]:
    spec = form_spec(source)
    assert check_schema(spec.schema) == []
    return dict(spec.schema["properties"])


def one(annotation: Any, default: Any = dataclasses.MISSING) -> dict[str, Any]:
    """The property built for a single dataclass field."""
    fields: list[Any] = [
        ("f", annotation) if default is dataclasses.MISSING else ("f", annotation, field(default=default))
    ]
    cls = dataclasses.make_dataclass("One", fields)
    prop: dict[str, Any] = props(cls)["f"]
    return prop


def refused(annotation: Any, default: Any = dataclasses.MISSING) -> str:
    with pytest.raises(SchemaBuildError) as info:
        one(annotation, default)
    assert info.value.field == "f"
    assert str(info.value).startswith("field 'f': ")
    return info.value.reason


# --- the eight kinds ---------------------------------------------------------------------


def test_text() -> None:
    assert one(str) == {"type": "string"}
    assert one(Annotated[str, at.MinLen(1), at.MaxLen(5)]) == {
        "type": "string",
        "minLength": 1,
        "maxLength": 5,
    }
    assert one(Annotated[str, at.Len(2, 3)]) == {"type": "string", "minLength": 2, "maxLength": 3}
    assert one(Email) == {"type": "string", "format": "email"}
    assert one(Url) == {"type": "string", "format": "uri"}
    assert one(Annotated[str, Format("date")]) == {"type": "string", "format": "date"}
    assert one(dt.date) == {"type": "string", "format": "date"}
    assert one(dt.datetime) == {"type": "string", "format": "date-time"}


def test_numbers_and_boolean() -> None:
    assert one(int) == {"type": "integer"}
    assert one(float) == {"type": "number"}
    assert one(bool) == {"type": "boolean"}
    assert one(Annotated[int, at.Ge(18), at.Le(130)]) == {"type": "integer", "minimum": 18, "maximum": 130}
    assert one(Annotated[float, at.Interval(ge=0, le=1.5)]) == {
        "type": "number",
        "minimum": 0,
        "maximum": 1.5,
    }


def test_untitled_single_select() -> None:
    assert one(Literal["a", "b"]) == {"type": "string", "enum": ["a", "b"]}
    assert one(Size) == {"type": "string", "enum": ["s", "l"]}
    assert one(Plain, Plain.B) == {"type": "string", "enum": ["a", "b"], "default": "b"}


def test_titled_single_select() -> None:
    assert one(Annotated[str, Choices({"lo": "Low", "hi": "High"})], "hi") == {
        "type": "string",
        "oneOf": [{"const": "lo", "title": "Low"}, {"const": "hi", "title": "High"}],
        "default": "hi",
    }
    titled = Choices.from_enum(Size, {Size.SMALL: "Small", "l": "Large"})
    assert one(Annotated[Size, titled]) == {
        "type": "string",
        "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
    }
    assert one(Annotated[Literal["y", "n"], Choices([("n", "No"), ("y", "Yes")])]) == {
        "type": "string",
        "oneOf": [{"const": "n", "title": "No"}, {"const": "y", "title": "Yes"}],
    }


def test_legacy_titled_select() -> None:
    assert one(Annotated[str, Choices({"s": "Small", "m": "Medium"}, legacy=True)]) == {
        "type": "string",
        "enum": ["s", "m"],
        "enumNames": ["Small", "Medium"],
    }


def test_untitled_multi_select() -> None:
    assert one(list[Literal["a", "b", "c"]]) == {
        "type": "array",
        "items": {"type": "string", "enum": ["a", "b", "c"]},
    }
    assert one(Annotated[list[Size], at.MinLen(1), at.MaxLen(2)], (Size.LARGE,)) == {
        "type": "array",
        "items": {"type": "string", "enum": ["s", "l"]},
        "minItems": 1,
        "maxItems": 2,
        "default": ["l"],
    }


def test_titled_multi_select() -> None:
    assert one(Annotated[list[str], Choices({"p": "Pizza", "s": "Sushi"})]) == {
        "type": "array",
        "items": {"anyOf": [{"const": "p", "title": "Pizza"}, {"const": "s", "title": "Sushi"}]},
    }
    assert one(list[Annotated[str, Choices({"p": "Pizza"})]]) == {
        "type": "array",
        "items": {"anyOf": [{"const": "p", "title": "Pizza"}]},
    }


# --- a whole dataclass ------------------------------------------------------------------


@dataclass
class Booking:
    guest: Annotated[str, Title("Guest"), Description("Full name")]
    nights: Annotated[int, at.Ge(1)]
    arrival: dt.date
    size: Size = Size.LARGE
    extras: list[Literal["breakfast", "parking"]] = field(default_factory=lambda: ["breakfast"])
    note: str | None = None
    email: Optional[Email] = None  # noqa: UP045 - Optional spelling on purpose
    vip: bool = False
    rate: float = field(default=99.5, metadata={"title": "Rate", "description": "Per night"})


def test_whole_dataclass() -> None:
    spec = form_spec(Booking)
    assert spec.schema == {
        "type": "object",
        "properties": {
            "guest": {"type": "string", "title": "Guest", "description": "Full name"},
            "nights": {"type": "integer", "minimum": 1},
            "arrival": {"type": "string", "format": "date"},
            "size": {"type": "string", "enum": ["s", "l"], "default": "l"},
            "extras": {
                "type": "array",
                "items": {"type": "string", "enum": ["breakfast", "parking"]},
                "default": ["breakfast"],
            },
            "note": {"type": "string"},
            "email": {"type": "string", "format": "email"},
            "vip": {"type": "boolean", "default": False},
            "rate": {"type": "number", "title": "Rate", "description": "Per night", "default": 99.5},
        },
        "required": ["guest", "nights", "arrival"],
    }


def test_zero_field_form() -> None:
    @dataclass
    class Confirm:
        pass

    assert form_spec(Confirm).schema == {"type": "object", "properties": {}}


def test_optional_without_default_is_not_required() -> None:
    @dataclass
    class F:
        a: int | None
        b: Annotated[Optional[int], Title("B")]  # noqa: UP045
        c: Optional[Annotated[int, at.Ge(0)]]  # noqa: UP045
        d: Literal["x", None]

    spec = form_spec(F)
    assert "required" not in spec.schema
    assert spec.schema["properties"] == {
        "a": {"type": "integer"},
        "b": {"type": "integer", "title": "B"},
        "c": {"type": "integer", "minimum": 0},
        "d": {"type": "string", "enum": ["x"]},
    }


def test_defaults_of_every_kind() -> None:
    aware = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)

    @dataclass
    class F:
        day: dt.date = dt.date(2026, 7, 28)
        at: dt.datetime = aware
        n: int = 3
        x: float = 0.5
        c: Literal["a", "b"] = "b"

    assert {k: v.get("default") for k, v in form_spec(F).schema["properties"].items()} == {
        "day": "2026-07-28",
        "at": "2026-01-02T03:04:05+00:00",
        "n": 3,
        "x": 0.5,
        "c": "b",
    }


def test_non_list_factories_are_not_called() -> None:
    def boom() -> str:
        raise AssertionError("called")

    @dataclass
    class F:
        stamp: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
        name: str = field(default_factory=boom)

    assert form_spec(F).schema == {
        "type": "object",
        "properties": {"stamp": {"type": "string", "format": "date-time"}, "name": {"type": "string"}},
    }


def test_new_type_and_aliases() -> None:
    UserName = NewType("UserName", str)
    assert one(UserName) == {"type": "string"}
    assert one(Annotated[Annotated[str, Title("T")], Description("D")]) == {
        "type": "string",
        "title": "T",
        "description": "D",
    }


# --- TypedDict --------------------------------------------------------------------------


class Total(TypedDict):
    a: int
    b: NotRequired[str]


class Partial(TypedDict, total=False):
    a: Required[Annotated[int, Title("A")]]
    b: str
    c: list[Size]


def test_typeddict_requiredness() -> None:
    assert form_spec(Total).schema == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "required": ["a"],
    }
    assert form_spec(Partial).schema == {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "title": "A"},
            "b": {"type": "string"},
            "c": {"type": "array", "items": {"type": "string", "enum": ["s", "l"]}},
        },
        "required": ["a"],
    }


# --- refusals -----------------------------------------------------------------------------


@dataclass
class Address:
    street: str


class AddressDict(TypedDict):
    street: str


@pytest.mark.parametrize(
    ("annotation", "words"),
    [
        (
            Address,
            "nested models are outside the elicitation schema subset (flat objects of "
            "primitives only); split it into separate fields",
        ),
        (AddressDict, "nested models"),
        (dict[str, str], "nested models"),
        (dict, "nested models"),
        (
            list[str],
            "a list of free text is outside the elicitation schema subset; a multi-select "
            "needs fixed choices",
        ),
        (list[int], "list[int] is outside"),
        (list[Address], "lists of objects"),
        (list[list[Literal["a"]]], "lists of objects or lists"),
        (list, "list[Any] is outside"),
        (list[Literal["a"] | None], "None inside a list"),
        (list[Annotated[Literal["a"], Title("A")]], "only Choices may annotate list items"),
        (list[Annotated[Literal["a"], at.MaxLen(3)]], "only Choices may annotate list items"),
        (int | str, "unions of several types (int | str)"),
        (int | str | None, "unions of several types (int | str)"),
        (Literal[1, 2], "Literal values must be text; 1, 2 are not"),
        (Literal["a", 1], "Literal values must be text; 1 are not"),
        (Literal[True], "Literal values must be text"),
        (Numbered, "the enum Numbered has non-text values (ONE=1)"),
        (bytes, "binary data (bytes)"),
        (Any, "Any is outside"),
        (object, "Any is outside"),
        (tuple[str, str], "tuples and sets"),
        (tuple, "tuples and sets"),
        (set[Literal["a"]], "tuples and sets"),
        (frozenset[str], "tuples and sets"),
        (dt.time, "time is outside"),
        (complex, "the type complex is outside"),
        (type(None), "cannot only be None"),
        (
            Annotated[int, at.Gt(1)],
            "exclusive bounds (gt=1) cannot be expressed: the elicitation schema subset only "
            "has inclusive minimum/maximum; use ge=... (for whole numbers, gt=1 is ge=2) instead",
        ),
        (Annotated[int, at.Lt(1)], "use le=... (for whole numbers, lt=1 is le=0) instead"),
        (Annotated[int, at.Gt(0)], "use ge=... (for whole numbers, gt=0 is ge=1) instead"),
        (Annotated[float, at.Gt(0.5)], "use ge=... instead"),
        (Annotated[float, at.Interval(gt=0, le=1)], "exclusive bounds (gt=0)"),
        (Annotated[int, at.MultipleOf(2)], "multiple_of"),
        (Annotated[str, at.Predicate(str.islower)], "the constraint"),
        (Annotated[str, at.Ge(1)], "do not apply to text; use min_length/max_length"),
        (Annotated[int, at.MinLen(1)], "length constraints do not apply to numbers"),
        (Annotated[bool, at.Ge(0)], "do not apply to a boolean"),
        (Annotated[Literal["a"], at.MaxLen(1)], "length constraints do not apply to a choice"),
        (Annotated[dt.date, at.Ge(dt.date(2020, 1, 1))], "bounds on dates"),
        (Annotated[list[Literal["a"]], at.Ge(1)], "do not apply to a list"),
        (Annotated[int, Choices({"1": "One"})], "Choices only apply to text fields and lists"),
        (Annotated[int, Format("email")], "Format only applies to str fields"),
        (Annotated[Literal["a"], Format("email")], "Format only applies to str fields, not to a choice"),
        (Annotated[dt.date, Format("email")], "contradicts date"),
        (
            Annotated[Literal["a", "b"], Choices({"a": "A"})],
            "must be exactly the field's values (missing ['b'], unknown [])",
        ),
        (Annotated[Size, Choices({"s": "S", "m": "M"})], "missing ['l'], unknown ['m']"),
        (Annotated[str, Choices({})], "at least one choice"),
        (
            Annotated[list[str], Choices({"a": "A"}, legacy=True)],
            "legacy enumNames only exist for single-selects",
        ),
    ],
)
def test_refusals(annotation: Any, words: str) -> None:
    assert words in refused(annotation)


def test_empty_enum_is_refused() -> None:
    Empty = enum.Enum("Empty", {})  # type: ignore[misc]
    assert "has no members" in refused(Empty)


def test_default_outside_bounds_is_refused() -> None:
    assert "must be at most 3" in refused(Annotated[int, at.Le(3)], 5)
    assert "not one of the choices" in refused(Literal["a"], "b")
    assert "contradict" not in refused(Annotated[int, at.Ge(5), at.Le(1)])
    naive = dt.datetime(2026, 1, 2, 3, 4, 5)
    assert "date and time with a time zone" in refused(dt.datetime, naive)


def test_bounds_must_be_numbers() -> None:
    assert "ge must be a number" in refused(Annotated[int, at.Ge("1")])
    assert "min_length must be a non-negative integer" in refused(Annotated[str, at.MinLen(-1)])


@pytest.mark.parametrize(
    "source",
    [bool, str, int, list[int], "form", 5, None, Booking(guest="x", nights=1, arrival=dt.date(2026, 1, 1))],
)
def test_top_level_must_be_a_form(source: Any) -> None:
    with pytest.raises(SchemaBuildError) as info:
        form_spec(source)
    assert info.value.field == ""
    assert "a form is built from a pydantic model, a dataclass, a TypedDict or a dict" in str(info.value)
    assert "make a model with one field" in str(info.value)
    assert str(info.value).startswith("form: ")


def test_unresolvable_annotation() -> None:
    @dataclass
    class F:
        a: "Missing"  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(SchemaBuildError) as info:
        form_spec(F)
    assert "cannot resolve the type annotations of F" in str(info.value)


def test_bad_metadata_is_refused() -> None:
    @dataclass
    class F:
        a: str = field(default="x", metadata={"title": 5})

    with pytest.raises(SchemaBuildError, match="metadata 'title' must be a str"):
        form_spec(F)


def test_failing_list_factory_is_reported() -> None:
    def boom() -> list[Literal["x"]]:
        raise RuntimeError("no")

    @dataclass
    class F:
        a: list[Literal["x"]] = field(default_factory=boom)

    with pytest.raises(SchemaBuildError, match="default_factory failed"):
        form_spec(F)


def test_name_with_control_character_is_refused() -> None:
    F = TypedDict("F", {"a\u202eb": int})
    with pytest.raises(SchemaBuildError) as info:
        form_spec(F)
    assert info.value.field == "a\u202eb"
    assert "U+202E" in info.value.reason


def test_not_secret_marker() -> None:
    @dataclass
    class F:
        max_tokens: int = 100
        password_hint: str = ""
        api_key_label: Annotated[str, NotSecret("a label, not the key")] = ""
        token: Annotated[str, NotSecret("a raffle ticket number")] = ""

    assert set(form_spec(F).schema["properties"]) == {"max_tokens", "password_hint", "api_key_label", "token"}


# --- markers --------------------------------------------------------------------------


def test_marker_values() -> None:
    assert Title("x") == Title("x")
    assert Title("x") != Description("x")
    assert hash(Title("x")) == hash(Title("x"))
    assert repr(Choices({"a": "A"}, legacy=True)) == "Choices({'a': 'A'}, legacy=True)"
    assert repr(NotSecret("why")) == "NotSecret('why')"
    with pytest.raises(AttributeError):
        Title("x").text = "y"
    with pytest.raises(AttributeError):
        Choices({"a": "A"}).legacy = True


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: Title(5), TypeError),  # type: ignore[arg-type]
        (lambda: NotSecret(" "), ValueError),
        (lambda: Format("phone"), ValueError),
        (lambda: Choices({"a": 1}), TypeError),  # type: ignore[arg-type]
        (lambda: Choices([("a", "A"), ("a", "B")]), ValueError),
        (lambda: Choices(["ab"]), TypeError),  # type: ignore[list-item]
        (lambda: Choices.from_enum(Numbered), TypeError),
        (lambda: Choices.from_enum(Size, {"x": "X"}), ValueError),
    ],
)
def test_bad_markers(make: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        make()


def test_choices_from_enum_defaults_to_values() -> None:
    assert Choices.from_enum(Plain).options == (("a", "a"), ("b", "b"))
    assert Choices.from_enum(Plain, {Plain.A: "Alpha"}, legacy=True).legacy


def test_build_errors_name_the_keyword() -> None:
    assert (
        refused(Annotated[float, at.Ge(float("nan"))])
        == "minimum: must be a finite number, got the number nan"
    )
    assert refused(Annotated[int, at.Ge(5), at.Le(1)]) == "minimum (5) is greater than maximum (1)"
    assert (
        refused(Annotated[int, at.Le(3)], 5) == "default 5 does not fit the field: must be at most 3 (got 5)"
    )
