"""Building forms from pydantic models and pydantic dataclasses."""

import datetime as dt
import enum
from typing import Annotated, Any, Literal

import pytest
from pydantic import (
    AfterValidator,
    AnyUrl,
    BaseModel,
    ConfigDict,
    EmailStr,
    Field,
    HttpUrl,
    NameEmail,
    RootModel,
    SecretStr,
    StringConstraints,
    conint,
    conlist,
    constr,
    field_validator,
)
from pydantic.dataclasses import dataclass as pydantic_dataclass

from mcp_elicit.schema import (
    AnswerInvalid,
    Choices,
    Description,
    NotSecret,
    SchemaBuildError,
    SecretFieldError,
    Title,
    check_schema,
    form_spec,
)


class Tier(enum.StrEnum):
    FREE = "free"
    PRO = "pro"


class Signup(BaseModel):
    email: EmailStr = Field(title="Email", description="Work address")
    site: HttpUrl | None = None
    home: AnyUrl | None = None
    age: int = Field(ge=18, le=130)
    name: Annotated[str, Field(min_length=1, max_length=40)]
    nick: constr(min_length=2) = "anon"  # type: ignore[valid-type]
    level: conint(ge=0, le=9) = 0  # type: ignore[valid-type]
    tier: Tier = Tier.FREE
    tiers: list[Tier] = [Tier.PRO]
    tags: conlist(Literal["a", "b", "c"], min_length=1, max_length=2) = ["a"]  # type: ignore[valid-type]
    born: dt.date
    seen: dt.datetime | None = None
    pace: Annotated[str, Choices({"slow": "Slow", "fast": "Fast"}), Title("Pace")] = "slow"
    size: Annotated[Literal["s", "m"], Choices({"s": "Small", "m": "Medium"}, legacy=True)] = "m"
    score: float = Field(default=0.5, ge=0, le=1, description="How sure")
    agree: bool = False
    strict: int = Field(default=1, strict=True)
    checked: Annotated[str, AfterValidator(str.strip)] = ""
    max_tokens: int = 256


def test_pydantic_model_schema() -> None:
    spec = form_spec(Signup)
    assert check_schema(spec.schema) == []
    assert spec.schema == {
        "type": "object",
        "properties": {
            "email": {"type": "string", "title": "Email", "description": "Work address", "format": "email"},
            "site": {"type": "string", "maxLength": 2083, "format": "uri"},  # pydantic's own limit
            "home": {"type": "string", "format": "uri"},
            "age": {"type": "integer", "minimum": 18, "maximum": 130},
            "name": {"type": "string", "minLength": 1, "maxLength": 40},
            "nick": {"type": "string", "minLength": 2, "default": "anon"},
            "level": {"type": "integer", "minimum": 0, "maximum": 9, "default": 0},
            "tier": {"type": "string", "enum": ["free", "pro"], "default": "free"},
            "tiers": {
                "type": "array",
                "items": {"type": "string", "enum": ["free", "pro"]},
                "default": ["pro"],
            },
            "tags": {
                "type": "array",
                "items": {"type": "string", "enum": ["a", "b", "c"]},
                "minItems": 1,
                "maxItems": 2,
                "default": ["a"],
            },
            "born": {"type": "string", "format": "date"},
            "seen": {"type": "string", "format": "date-time"},
            "pace": {
                "type": "string",
                "title": "Pace",
                "oneOf": [{"const": "slow", "title": "Slow"}, {"const": "fast", "title": "Fast"}],
                "default": "slow",
            },
            "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"], "default": "m"},
            "score": {
                "type": "number",
                "description": "How sure",
                "minimum": 0,
                "maximum": 1,
                "default": 0.5,
            },
            "agree": {"type": "boolean", "default": False},
            "strict": {"type": "integer", "default": 1},
            "checked": {"type": "string", "default": ""},
            "max_tokens": {"type": "integer", "default": 256},
        },
        "required": ["email", "age", "name", "born"],
    }


def test_pydantic_round_trip() -> None:
    spec = form_spec(Signup)
    value = spec.parse(
        {
            "email": "ann@example.org",
            "site": "https://example.org",
            "age": 30.0,
            "name": "Ann",
            "born": "1996-02-29",
            "seen": "2026-07-28T10:00:00+02:00",
            "tiers": ["free", "pro"],
            "size": "s",
        }
    )
    assert isinstance(value, Signup)
    assert value.age == 30
    assert value.born == dt.date(1996, 2, 29)
    assert value.seen == dt.datetime(2026, 7, 28, 8, 0, tzinfo=dt.UTC)
    assert value.tier is Tier.FREE
    assert value.tiers == [Tier.FREE, Tier.PRO]
    assert str(value.site) == "https://example.org/"
    assert value.home is None
    assert value.size == "s"


class Aliased(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    first_name: str = Field(alias="firstName", title="First name")


def test_aliases_are_wire_names() -> None:
    spec = form_spec(Aliased)
    assert spec.schema["properties"] == {"firstName": {"type": "string", "title": "First name"}}
    assert spec.parse({"firstName": "Ann"}) == Aliased.model_validate({"firstName": "Ann"})


class Checked(BaseModel):
    start: dt.date
    end: dt.date

    @field_validator("end")
    @classmethod
    def after_start(cls, end: dt.date, info: Any) -> dt.date:
        if end < info.data["start"]:
            raise ValueError("must not be before start")
        return end


def test_model_validation_errors_become_answer_invalid() -> None:
    spec = form_spec(Checked)
    with pytest.raises(AnswerInvalid) as info:
        spec.parse({"start": "2026-02-01", "end": "2026-01-01"})
    assert info.value.errors == {"end": "must not be before start"}


class Unlucky(BaseModel):
    qty: int

    @field_validator("qty")
    @classmethod
    def not_thirteen(cls, qty: int) -> int:
        if qty == 13:
            raise TypeError("13 is unlucky")  # pydantic only wraps ValueError and AssertionError
        return qty


def test_any_error_of_a_model_validator_becomes_answer_invalid() -> None:
    spec = form_spec(Unlucky)
    with pytest.raises(AnswerInvalid) as info:
        spec.parse({"qty": 13})
    assert info.value.errors == {"": "13 is unlucky"}
    assert spec.parse({"qty": 12}) == Unlucky(qty=12)


@pydantic_dataclass
class PDC:
    when: dt.date
    count: int = Field(default=1, ge=1, alias="Count")
    kind: Tier = Tier.PRO


def test_pydantic_dataclass() -> None:
    spec = form_spec(PDC)
    assert spec.schema == {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date"},
            "Count": {"type": "integer", "minimum": 1, "default": 1},
            "kind": {"type": "string", "enum": ["free", "pro"], "default": "pro"},
        },
        "required": ["when"],
    }
    value = spec.parse({"when": "2026-01-01", "Count": 3})
    assert (value.when, value.count, value.kind) == (dt.date(2026, 1, 1), 3, Tier.PRO)


class Nested(BaseModel):
    street: str


class WithPattern(BaseModel):
    code: str = Field(pattern=r"^\d+$")


class WithConstrPattern(BaseModel):
    code: constr(pattern=r"^\d+$")  # type: ignore[valid-type]


class WithStringConstraintsPattern(BaseModel):
    code: Annotated[str, StringConstraints(pattern="x")]


class WithGt(BaseModel):
    n: int = Field(gt=0)


class WithLt(BaseModel):
    n: float = Field(lt=1)


class WithConintGt(BaseModel):
    n: conint(gt=0)  # type: ignore[valid-type]


class WithNested(BaseModel):
    address: Nested


class WithUnion(BaseModel):
    v: int | str


class WithNumericLiteral(BaseModel):
    v: Literal[1, 2]


class WithFreeList(BaseModel):
    v: list[str]


class WithSecret(BaseModel):
    v: SecretStr


class WithExtra(BaseModel):
    v: str = Field(json_schema_extra={"oneOf": []})


class WithNameEmail(BaseModel):
    v: NameEmail


class WithMultipleOf(BaseModel):
    v: int = Field(multiple_of=5)


class WithDecimalPlaces(BaseModel):
    v: float = Field(decimal_places=2)


class Root(RootModel[int]):
    pass


@pytest.mark.parametrize(
    ("source", "field", "words"),
    [
        (WithPattern, "code", "regex patterns ('^\\\\d+$') are outside the elicitation schema subset"),
        (WithConstrPattern, "code", "regex patterns"),
        (WithStringConstraintsPattern, "code", "regex patterns"),
        (WithGt, "n", "exclusive bounds (gt=0) cannot be expressed"),
        (WithLt, "n", "exclusive bounds (lt=1) cannot be expressed"),
        (WithConintGt, "n", "exclusive bounds (gt=0)"),
        (
            WithNested,
            "address",
            "nested models are outside the elicitation schema subset (flat objects of "
            "primitives only); split it into separate fields",
        ),
        (WithUnion, "v", "unions of several types (int | str)"),
        (WithNumericLiteral, "v", "Literal values must be text"),
        (WithFreeList, "v", "a list of free text"),
        (WithSecret, "v", "SecretStr asks for a secret; MCP forbids secrets in form mode"),
        (WithExtra, "v", "json_schema_extra is not supported"),
        (WithNameEmail, "v", "the type NameEmail is outside"),
        (WithMultipleOf, "v", "multiple_of"),
        (WithDecimalPlaces, "v", "decimal_places"),
        (Root, "", "RootModel"),
    ],
)
def test_pydantic_refusals(source: type, field: str, words: str) -> None:
    with pytest.raises(SchemaBuildError) as info:
        form_spec(source)
    assert info.value.field == field
    assert words in str(info.value)


class Login(BaseModel):
    username: str
    password: str = Field(description="Your password")
    api_token: str
    hint: Annotated[str, Description("A hint for the password"), NotSecret("a hint is not the password")] = ""


def test_secret_fields_in_a_model() -> None:
    with pytest.raises(SecretFieldError) as info:
        form_spec(Login)
    assert info.value.fields == ["password", "api_token"]
    assert [(f.field, f.where) for f in info.value.findings] == [
        ("password", "name"),
        ("password", "description"),
        ("api_token", "name"),
    ]
    assert "URL mode" in str(info.value)
    assert "NotSecret" in str(info.value)
    spec = form_spec(Login, allow_secrets=["password", "api_token"])
    assert set(spec.schema["properties"]) == {"username", "password", "api_token", "hint"}


class DjangoSignUp(BaseModel):  # the field names of Django's UserCreationForm
    username: str
    password1: str
    password2: str


def test_numbered_secret_fields_in_a_model() -> None:
    with pytest.raises(SecretFieldError) as info:
        form_spec(DjangoSignUp)
    assert info.value.fields == ["password1", "password2"]
