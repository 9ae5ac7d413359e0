"""form_problems: every reason form_spec refuses a form, in one list, each with form_spec's text."""

import dataclasses
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypedDict

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_elicit.schema import FormProblem, NotSecret, SchemaError, form_problems, form_spec
from mcp_elicit.schema.spec import FormSpec
from tests.schema.test_properties import mutated_schemas, valid_schemas


@dataclass
class Address:
    city: str


@dataclass
class Signup:
    name: str
    password: str
    address: Address
    age: int = "eighteen"  # type: ignore[assignment]
    anything: Any = None
    plan: Literal["free", "pro"] = "free"


def message_alone(*fields: tuple[Any, ...]) -> str:
    """What form_spec says of a dataclass made of these fields only."""
    with pytest.raises(SchemaError) as refused:
        form_spec(dataclasses.make_dataclass("Alone", list(fields)))
    return str(refused.value)


def test_every_field_of_a_type_is_reported_with_form_spec_s_text() -> None:
    problems = form_problems(Signup)
    assert [p.field for p in problems] == ["address", "anything", "age", "password"]
    assert all(isinstance(p, FormProblem) for p in problems)
    # form_spec stops at the first (the nested model); each text is the one it gives alone.
    assert problems[0].message == message_alone(("address", Address))
    assert problems[1].message == message_alone(("anything", Any, field(default=None)))
    assert problems[2].message == message_alone(("age", int, field(default="eighteen")))
    assert problems[2].message == (
        "field 'age': default 'eighteen' does not fit the field: must be a whole number, "
        "got the text 'eighteen'"
    )
    assert problems[3].message == message_alone(("password", str))
    assert problems[3].message.startswith("the form asks for secrets (field 'password': its name asks")
    assert str(problems[3]) == problems[3].message


def test_a_pydantic_model_is_read_the_same_way() -> None:
    class Inner(pydantic.BaseModel):
        x: int

    class Booking(pydantic.BaseModel):
        inner: Inner
        pin: str = pydantic.Field(alias="pinCode")
        guests: int = pydantic.Field(default=0, ge=1)

    problems = form_problems(Booking)
    assert [p.field for p in problems] == ["inner", "guests", "pinCode"]
    assert "nested" in problems[0].message


def test_a_dict_schema_reports_its_pointers_and_its_secrets() -> None:
    schema = {
        "type": "object",
        "properties": {
            "api_key": {"type": "string"},
            "n": {"type": "integer", "minimum": "1", "default": "x"},
        },
        "required": ["nope"],
    }
    problems = form_problems(schema)
    assert [(p.field, p.message.split(":")[0]) for p in problems] == [
        ("", "/required/0"),
        ("n", "/properties/n/minimum"),
        ("n", "/properties/n/default"),
        ("api_key", "the form asks for secrets (field 'api_key'"),
    ]


def test_what_form_spec_allows_is_allowed() -> None:
    @dataclass
    class Labelled:
        api_key_label: Annotated[str, NotSecret("a label, not the key")]
        password: str = ""

    assert form_problems(Labelled) == [FormProblem("password", form_problems(Labelled)[0].message)]
    assert form_problems(Labelled, allow_secrets=["password"]) == []
    assert [p.message for p in form_problems(Labelled, allow_secrets=["password", "nope"])] == [
        "field 'nope': allow_secrets names a field that is not in the form"
    ]
    assert form_problems(Labelled, allow_secrets="password") == [
        FormProblem("", "allow_secrets takes a list of field names, not one string")
    ]
    assert form_problems(form_spec(Labelled, allow_secrets=["password"])) == []


class Unresolved(TypedDict):
    when: "Later"  # type: ignore[name-defined]  # noqa: F821


class Exploding:
    def __init_subclass__(cls) -> None: ...

    @property
    def __dataclass_fields__(self) -> Any:
        raise RuntimeError("boom")


@pytest.mark.parametrize("source", [5, "text", [1], list[str], Unresolved, Exploding, None])
def test_anything_else_is_one_problem_never_an_exception(source: Any) -> None:
    problems = form_problems(source)
    assert len(problems) == 1
    assert problems[0].field == ""
    with pytest.raises((SchemaError, AttributeError)):  # Exploding's own error
        form_spec(source)


SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SECRETS = st.sampled_from(["password", "api_key", "token", "ssn"])


@st.composite
def schemas(draw: st.DrawFn) -> Any:
    schema = draw(st.one_of(valid_schemas(), mutated_schemas()))
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict) and draw(st.booleans()):
        schema["properties"][draw(SECRETS)] = {"type": "string"}
    return schema


def accepted(source: Any) -> bool:
    try:
        spec = form_spec(source)
    except SchemaError:
        return False
    assert isinstance(spec, FormSpec)
    return True


@SETTINGS
@given(schemas())
def test_no_problems_exactly_when_form_spec_accepts(schema: Any) -> None:
    problems = form_problems(schema)
    assert (problems == []) == accepted(schema)
    if not accepted(schema):
        with pytest.raises(SchemaError) as refused:
            form_spec(schema)
        # What form_spec raises first is among what is listed (its text, or the problem it quotes;
        # the secret lint names every secret field in one message, form_problems each on its own).
        first = str(refused.value)
        assert any(_quotes(first, p) for p in problems), (first, problems)


def _quotes(first: str, problem: FormProblem) -> bool:
    if problem.message in first or first in problem.message:
        return True
    return first.startswith("the form asks for secrets (") and f"field {problem.field!r}: " in first
