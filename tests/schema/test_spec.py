"""form_spec and FormSpec: digests, caching, overrides, and answers back to Python values."""

import copy
import dataclasses
import datetime as dt
import enum
import hashlib
import json
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NotRequired, TypedDict

import pytest

from mcp_elicit.schema import (
    AnswerInvalid,
    Choices,
    FormSpec,
    SchemaBuildError,
    SchemaError,
    SchemaSubsetError,
    SecretFieldError,
    form_spec,
)

from .test_check import SPEC_EXAMPLE


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Order:
    day: dt.date
    at: dt.datetime
    color: Color
    colors: list[Color]
    shade: Literal["light", "dark"]
    titled: Annotated[Color, Choices.from_enum(Color, {Color.RED: "Red", Color.BLUE: "Blue"})]
    price: float
    count: int | None
    note: str | None = None
    rush: bool = False
    extras: list[Literal["gift", "card"]] = field(default_factory=list)


class Profile(TypedDict):
    name: str
    born: dt.date
    nick: str | None
    color: NotRequired[Color]


def test_digest_is_sha256_of_canonical_json() -> None:
    spec = form_spec(SPEC_EXAMPLE)
    canonical = json.dumps(SPEC_EXAMPLE, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert spec.digest == hashlib.sha256(canonical.encode()).hexdigest()
    shuffled = dict(reversed(list(copy.deepcopy(SPEC_EXAMPLE).items())))
    assert form_spec(shuffled).digest == spec.digest
    assert form_spec(shuffled) == spec
    assert hash(form_spec(shuffled)) == hash(spec)


def test_dict_schema_is_copied() -> None:
    schema: dict[str, Any] = copy.deepcopy(SPEC_EXAMPLE)
    spec = form_spec(schema)
    schema["properties"]["age"]["minimum"] = 99
    assert spec.schema["properties"]["age"]["minimum"] == 18
    assert spec.to_python({"a": 1}) == {"a": 1}


def test_dict_outside_subset() -> None:
    with pytest.raises(SchemaSubsetError) as info:
        form_spec({"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}})
    assert [p.pointer for p in info.value.problems] == ["/properties/a/pattern"]
    assert isinstance(info.value, SchemaError)


def test_types_are_cached() -> None:
    first = form_spec(Order)
    assert form_spec(Order) is first
    assert form_spec(first) is first


def test_cache_depends_on_overrides() -> None:
    @dataclass
    class Login:
        pin: str

    with pytest.raises(SecretFieldError):
        form_spec(Login)
    allowed = form_spec(Login, allow_secrets=["pin"])
    assert form_spec(Login, allow_secrets=("pin",)) is allowed
    with pytest.raises(SecretFieldError):
        form_spec(Login)


def test_allow_secrets_must_name_fields() -> None:
    with pytest.raises(SchemaBuildError) as info:
        form_spec(SPEC_EXAMPLE, allow_secrets=["pasword"])
    assert info.value.field == "pasword"
    assert "not in the form" in str(info.value)
    with pytest.raises(TypeError):
        form_spec(SPEC_EXAMPLE, allow_secrets="password")


def test_secret_field_error_for_dicts() -> None:
    schema = {
        "type": "object",
        "properties": {
            "user": {"type": "string"},
            "passwd": {"type": "string"},
            "cvv": {"type": "integer"},
            "remember_password": {"type": "boolean"},
        },
    }
    with pytest.raises(SecretFieldError) as info:
        form_spec(schema)
    assert info.value.fields == ["passwd", "cvv"]
    assert isinstance(info.value, SchemaBuildError)
    assert form_spec(schema, allow_secrets=["passwd", "cvv"]).schema == schema


def test_to_python_dataclass() -> None:
    spec = form_spec(Order)
    order = spec.parse(
        {
            "day": "2026-07-28",
            "at": "2026-07-28T09:30:00Z",
            "color": "blue",
            "colors": ["red", "blue"],
            "shade": "dark",
            "titled": "red",
            "price": 10,
        }
    )
    assert order == Order(
        day=dt.date(2026, 7, 28),
        at=dt.datetime(2026, 7, 28, 9, 30, tzinfo=dt.UTC),
        color=Color.BLUE,
        colors=[Color.RED, Color.BLUE],
        shade="dark",
        titled=Color.RED,
        price=10.0,
        count=None,
        note=None,
        rush=False,
        extras=[],
    )
    assert type(order.price) is float
    assert type(order.shade) is str


def test_to_python_typeddict() -> None:
    spec = form_spec(Profile)
    assert spec.schema["required"] == ["name", "born"]
    assert spec.parse({"name": "Ann", "born": "2000-01-01"}) == {
        "name": "Ann",
        "born": dt.date(2000, 1, 1),
        "nick": None,
    }
    assert spec.parse({"name": "Ann", "born": "2000-01-01", "nick": "A", "color": "red"}) == {
        "name": "Ann",
        "born": dt.date(2000, 1, 1),
        "nick": "A",
        "color": Color.RED,
    }


def test_to_python_raw_dict() -> None:
    spec = form_spec(SPEC_EXAMPLE)
    answer = spec.validate({"email": "a@b.example", "agree": True})
    assert spec.to_python(answer) == {"email": "a@b.example", "agree": True, "color": "Red", "tags": ["a"]}


def test_validate_and_parse_raise_answer_invalid() -> None:
    spec = form_spec(Order)
    with pytest.raises(AnswerInvalid) as info:
        spec.parse({"day": "2026-02-30"})
    assert info.value.errors["day"] == "must be a real calendar date (2026-02-30 does not exist)"
    assert info.value.errors["color"] == "this field is required"


def test_post_init_errors_become_answer_invalid() -> None:
    @dataclass
    class Range:
        low: int
        high: int

        def __post_init__(self) -> None:
            if self.low > self.high:
                raise ValueError("low must not be above high")

    with pytest.raises(AnswerInvalid) as info:
        form_spec(Range).parse({"low": 2, "high": 1})
    assert info.value.errors == {"": "low must not be above high"}


def test_any_error_of_a_post_init_check_becomes_answer_invalid() -> None:
    @dataclass
    class Booking:
        guests: int

        def __post_init__(self) -> None:
            if self.guests > 8:
                raise TypeError("too many guests for one booking")

    spec = form_spec(Booking)
    with pytest.raises(AnswerInvalid) as info:
        spec.parse({"guests": 9})
    assert info.value.errors == {"": "too many guests for one booking"}
    assert isinstance(info.value.__cause__, TypeError)
    assert spec.parse({"guests": 8}) == Booking(8)


def test_hand_made_form_spec_is_checked() -> None:
    made = FormSpec({"type": "object", "properties": {"a": {"type": "integer"}}}, "not-a-digest")
    checked = form_spec(made)
    assert checked.digest != "not-a-digest"
    assert made.validate({"a": 1.0}) == {"a": 1}
    bad = FormSpec({"type": "object", "properties": {"a": {"type": "object"}}}, "x")
    with pytest.raises(SchemaSubsetError):
        bad.validate({})
    with pytest.raises(SchemaSubsetError):
        form_spec(bad)


def test_form_spec_is_immutable() -> None:
    spec = form_spec(SPEC_EXAMPLE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.digest = "x"  # type: ignore[misc]
    assert "_form" not in repr(spec)
    assert spec.digest in repr(spec)


def test_cached_spec_is_fast() -> None:
    import time

    form_spec(Order)
    start = time.perf_counter()
    for _ in range(1000):
        form_spec(Order)
    assert time.perf_counter() - start < 0.1


def test_enum_defaults_convert_back() -> None:
    @dataclass
    class F:
        color: Color = Color.BLUE
        colors: list[Color] = field(default_factory=lambda: [Color.RED])

    spec = form_spec(F)
    assert spec.schema["properties"]["color"]["default"] == "blue"
    assert spec.parse({}) == F(color=Color.BLUE, colors=[Color.RED])


def test_url_fields_of_plain_dataclasses_become_url_objects() -> None:
    from pydantic import HttpUrl

    @dataclass
    class F:
        site: HttpUrl

    value: Any = form_spec(F).parse({"site": "https://example.org"})
    assert isinstance(value.site, HttpUrl)


def test_read_only_mappings_are_accepted() -> None:
    from types import MappingProxyType

    schema = MappingProxyType(
        {
            "type": "object",
            "properties": MappingProxyType({"n": MappingProxyType({"type": "integer", "minimum": 1})}),
        }
    )
    spec = form_spec(schema)
    assert spec.schema == {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}
    assert type(spec.schema) is dict
    assert type(spec.schema["properties"]["n"]) is dict


def test_url_types_bring_their_length_limit_and_tell_their_schemes_on_a_retry() -> None:
    """A client checks the form sent: pydantic's own limits must be in it, or an answer the
    client accepts is refused only after the round trip."""
    from annotated_types import MaxLen
    from pydantic import AnyUrl, HttpUrl

    @dataclass
    class F:
        site: HttpUrl
        any_site: AnyUrl
        short: Annotated[HttpUrl, MaxLen(100)]

    spec = form_spec(F)
    assert spec.schema["properties"]["site"]["maxLength"] == 2083
    assert "maxLength" not in spec.schema["properties"]["any_site"]
    assert spec.schema["properties"]["short"]["maxLength"] == 100
    with pytest.raises(AnswerInvalid) as info:
        spec.parse(
            {"site": "ftp://files.example", "any_site": "ftp://x.example", "short": "https://a.example"}
        )
    assert info.value.errors == {"site": "URL scheme should be 'http' or 'https'"}


def test_forms_of_types_made_per_request_do_not_pile_up() -> None:
    """A server that builds its form type per request (choices from data) must not keep every
    type it ever made: the caches are bounded, the types collected."""
    import dataclasses
    import enum
    import gc
    import weakref

    from mcp_elicit.schema import spec as spec_module
    from mcp_elicit.server import gating

    made: list[weakref.ref[type]] = []
    for n in range(1000):
        choice = enum.Enum("Choice", {f"option_{n}": f"option_{n}", "other": "other"})  # type: ignore[misc]
        pick = dataclasses.make_dataclass("Pick", [("choice", choice)])
        gating.form_spec(pick, ())  # what ctx.elicit(message, pick) does
        made.append(weakref.ref(pick))
    del choice, pick
    gc.collect()
    alive = sum(1 for ref in made if ref() is not None)
    assert alive <= spec_module.MAX_CACHED_TYPES
