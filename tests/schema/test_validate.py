"""validate_answer: messages a person can act on, defaults, no coercion (security.md §5.6)."""

import copy
from typing import Any

import pytest

from mcp_elicit.schema import AnswerInvalid, SchemaSubsetError, validate_answer
from mcp_elicit.schema.limits import MAX_UNKNOWN_REPORTED
from mcp_elicit.schema.text import quote

from .test_check import SPEC_EXAMPLE

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 5},
        "age": {"type": "integer", "minimum": 18, "maximum": 130},
        "score": {"type": "number", "minimum": 0, "maximum": 1.5},
        "agree": {"type": "boolean", "default": False},
        "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
        "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["Apple", "Banana"]},
        "tags": {
            "type": "array",
            "items": {"type": "string", "enum": ["x", "y", "z"]},
            "minItems": 1,
            "maxItems": 2,
            "default": ["x"],
        },
        "flags": {
            "type": "array",
            "items": {"anyOf": [{"const": "p", "title": "P"}, {"const": "q", "title": "Q"}]},
        },
        "email": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri"},
        "day": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
    },
    "required": ["name", "age"],
}


def errors(content: object, schema: dict[str, Any] = SCHEMA) -> dict[str, str]:
    with pytest.raises(AnswerInvalid) as info:
        validate_answer(schema, content)
    return info.value.errors


def error(field: str, value: object) -> str:
    found = errors({"name": "Bob", "age": 30, field: value})
    assert list(found) == [field], found
    return found[field]


def test_minimal_answer_gets_defaults() -> None:
    assert validate_answer(SCHEMA, {"name": "Bob", "age": 30}) == {
        "name": "Bob",
        "age": 30,
        "agree": False,
        "color": "red",
        "tags": ["x"],
    }


def test_full_answer_round_trips() -> None:
    content = {
        "name": "Ann",
        "age": 18,
        "score": 1.5,
        "agree": True,
        "color": "green",
        "size": "l",
        "legacy": "b",
        "tags": ["y", "z"],
        "flags": [],
        "email": "ann@example.org",
        "site": "https://example.org/a?b=c#d",
        "day": "2024-02-29",
        "at": "2026-07-28T09:30:00.5+02:00",
    }
    assert validate_answer(SCHEMA, content) == content


def test_spec_example_answer() -> None:
    content = {
        "email": "a@b.example",
        "age": 30,
        "agree": True,
        "color": "Red",
        "hex": "#0000FF",
        "tags": ["a", "c"],
        "hexes": ["#FF0000"],
        "legacy": "m",
    }
    assert validate_answer(SPEC_EXAMPLE, content) == content


def test_result_is_a_new_dict_and_defaults_are_copies() -> None:
    content = {"name": "Bob", "age": 30}
    schema = copy.deepcopy(SCHEMA)
    result = validate_answer(schema, content)
    assert result is not content
    assert content == {"name": "Bob", "age": 30}
    result["tags"].append("y")
    assert schema["properties"]["tags"]["default"] == ["x"]
    assert validate_answer(schema, content)["tags"] == ["x"]


# --- the Kotlin SDK #895 set and other whole-answer cases ----------------------------------


def test_empty_answer() -> None:
    assert errors({}) == {"name": "this field is required", "age": "this field is required"}


def test_kotlin_examples() -> None:
    assert errors({"name": 42, "age": 30}) == {"name": "must be text, got the number 42"}
    assert errors({"name": "Alice", "age": -5}) == {"age": "must be at least 18 (got -5)"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "the answer must be an object mapping field names to values, got null"),
        ([], "the answer must be an object mapping field names to values, got a list"),
        ("x", "the answer must be an object mapping field names to values, got the text 'x'"),
    ],
)
def test_content_not_an_object(content: object, message: str) -> None:
    assert errors(content) == {"": message}


def test_unknown_fields() -> None:
    assert errors({"name": "Bob", "age": 30, "admin": True}) == {"admin": "unknown field 'admin'"}
    assert errors({"name": "Bob", "age": 30, 1: True}) == {"1": "unknown field '1'"}


def test_unknown_field_names_are_escaped_and_cut_short() -> None:
    """The client chooses the name: it must not carry raw controls or megabytes into messages."""
    hostile = "\x1b]8;;https://evil.example\x07click\n" + "x" * 100_000
    found = errors({"name": "Bob", "age": 30, hostile: 1, "": 2})
    assert sorted(found) == sorted([quote(hostile), "''"])  # never "", the answer-as-a-whole slot
    assert quote(hostile).startswith("'\\x1b]8;;https://evil.example\\x07click\\x0axx")
    assert all(len(key) < 60 and len(message) < 80 for key, message in found.items())
    assert found["''"] == "unknown field ''"


def test_unknown_fields_are_capped() -> None:
    content: dict[str, Any] = {"name": "Bob", "age": 30}
    content.update({f"x{i}": 1 for i in range(1000)})
    found = errors(content)
    assert len(found) == MAX_UNKNOWN_REPORTED + 1
    assert found[""] == f"and {1000 - MAX_UNKNOWN_REPORTED} more unknown fields"


def test_all_errors_reported_together() -> None:
    assert errors({"age": "30", "x": 1}) == {
        "name": "this field is required",
        "age": "must be a whole number, got the text '30'",
        "x": "unknown field 'x'",
    }


def test_str_of_answer_invalid() -> None:
    with pytest.raises(AnswerInvalid) as info:
        validate_answer(SCHEMA, {"name": "Bob", "age": 3})
    assert str(info.value) == "invalid answer: age: must be at least 18 (got 3)"


# --- per-kind errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        # wrong types, never coerced
        ("age", "5", "must be a whole number, got the text '5'"),
        ("age", 3.5, "must be a whole number, got 3.5"),
        ("age", True, "must be a whole number, got true"),
        ("age", None, "must be a whole number, got null"),
        ("age", [30], "must be a whole number, got a list"),
        ("age", {"v": 30}, "must be a whole number, got an object"),
        ("age", float("nan"), "must be a finite number, got nan"),
        ("score", True, "must be a number, got true"),
        ("score", "1", "must be a number, got the text '1'"),
        ("score", float("inf"), "must be a finite number, got inf"),
        ("agree", "true", "must be true or false, got the text 'true'"),
        ("agree", 1, "must be true or false, got the number 1"),
        ("name", 5, "must be text, got the number 5"),
        ("name", None, "must be text, got null"),
        ("name", ["Bob"], "must be text, got a list"),
        # ranges and lengths
        ("age", 17, "must be at least 18 (got 17)"),
        ("age", 131, "must be at most 130 (got 131)"),
        ("score", 1.6, "must be at most 1.5 (got 1.6)"),
        ("score", -0.5, "must be at least 0 (got -0.5)"),
        ("name", "B", "must be at least 2 characters long (got 1)"),
        ("name", "Bobbie", "must be at most 5 characters long (got 6)"),
        # choices
        ("color", "blue", "'blue' is not one of the choices: 'red', 'green'"),
        ("color", "Red", "'Red' is not one of the choices: 'red', 'green'"),
        ("color", 1, "must be one of the choices ('red', 'green'), got the number 1"),
        ("size", "Small", "'Small' is not one of the choices: 's' (Small), 'l' (Large)"),
        ("legacy", "c", "'c' is not one of the choices: 'a' (Apple), 'b' (Banana)"),
        ("color", "re\u200bd", "'re\\u200bd' is not one of the choices: 'red', 'green'"),
        # multi-selects
        ("tags", "x", "must be a list of choices, got the text 'x'"),
        ("tags", [], "select at least 1 choice (got 0)"),
        ("tags", ["x", "y", "z"], "select at most 2 choices (got 3)"),
        ("tags", ["x", "x"], "'x' is selected more than once"),
        ("tags", ["w"], "'w' is not one of the choices: 'x', 'y', 'z'"),
        ("tags", [1], "choice 1 must be text, got the number 1"),
        ("tags", ["x", None], "choice 2 must be text, got null"),
        ("flags", ["P"], "'P' is not one of the choices: 'p' (P), 'q' (Q)"),
        # text hygiene
        ("name", "a\x00b", "contains a character that is not allowed (NUL or a lone surrogate)"),
        ("name", "a\ud800", "contains a character that is not allowed (NUL or a lone surrogate)"),
    ],
)
def test_field_errors(field: str, value: object, message: str) -> None:
    assert error(field, value) == message


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("email", "not-an-email"),
        ("email", "@"),
        ("email", "a@b"),
        ("email", "a b@c.org"),
        ("site", "javascript:alert(1)"),
        ("site", "example.com"),
        ("site", "https://exa mple.com"),
        ("day", "2024-02-30"),
        ("day", "yesterday"),
        ("day", "2024-2-3"),
        ("at", "yesterday"),
        ("at", "2026-01-02T03:04:05"),
        ("at", "2026-01-02 03:04:05Z"),
    ],
)
def test_format_errors(field: str, value: str) -> None:
    message = error(field, value)
    assert message.startswith("must ")


def test_integral_float_is_an_integer() -> None:
    result = validate_answer(SCHEMA, {"name": "Bob", "age": 30.0})
    assert result["age"] == 30
    assert type(result["age"]) is int


def test_number_accepts_ints_and_huge_floats() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number"}, "i": {"type": "integer"}}}
    limit = 2**53 - 1
    assert validate_answer(schema, {"n": 3, "i": limit}) == {"n": 3, "i": limit}
    assert validate_answer(schema, {"n": 1e300, "i": -limit}) == {"n": 1e300, "i": -limit}
    assert validate_answer(schema, {"i": 9.0e15}) == {"i": 9 * 10**15}


@pytest.mark.parametrize("value", [2**53, -(2**53), 2**64, -(2**63) - 1, 10**40, 1e20])
@pytest.mark.parametrize("field", ["n", "i"])
def test_whole_numbers_past_the_json_safe_range_are_refused(field: str, value: float) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number"}, "i": {"type": "integer"}}}
    if field == "n" and isinstance(value, float):
        assert validate_answer(schema, {field: value}) == {field: value}  # a float stays a float
        return
    with pytest.raises(AnswerInvalid) as caught:
        validate_answer(schema, {field: value})
    message = caught.value.errors[field]
    assert message.startswith("must be between -9007199254740991 and 9007199254740991: ")
    assert "cannot be sent exactly as JSON" in message


def test_length_counts_code_points() -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 2}}}
    assert validate_answer(schema, {"s": "😀😀"}) == {"s": "😀😀"}
    assert validate_answer(schema, {"s": "é"}) == {"s": "é"}  # one code point (NFC)
    with pytest.raises(AnswerInvalid):
        validate_answer(schema, {"s": "e\u0301e"})  # three code points


def test_nfd_is_not_an_nfc_option() -> None:
    schema = {"type": "object", "properties": {"c": {"type": "string", "enum": ["caf\u00e9"]}}}
    with pytest.raises(AnswerInvalid):
        validate_answer(schema, {"c": "cafe\u0301"})


def test_optional_fields_may_be_absent_or_null() -> None:
    """Clients built on typed models (the official Python SDK) send null for an empty optional
    field: it counts as left out, and the default applies. A required field is never null."""
    assert "size" not in validate_answer(SCHEMA, {"name": "Bob", "age": 30})
    content = {"name": "Bob", "age": 30, "size": None, "color": None, "tags": None, "agree": None}
    answer = validate_answer(SCHEMA, content)
    assert "size" not in answer
    assert answer["color"] == "red"
    assert answer["tags"] == ["x"]
    assert answer["agree"] is False
    assert errors({"name": None, "age": 30}) == {"name": "must be text, got null"}


def test_confirm_only_form() -> None:
    schema = {"type": "object", "properties": {}}
    assert validate_answer(schema, {}) == {}
    assert errors({"x": 1}, schema) == {"x": "unknown field 'x'"}


def test_unchecked_schema_raises_subset_error() -> None:
    with pytest.raises(SchemaSubsetError) as info:
        validate_answer({"type": "object", "properties": {"a": {"type": "object"}}}, {})
    assert info.value.problems[0].pointer == "/properties/a/type"
    assert str(info.value).startswith("requestedSchema is outside the elicitation schema subset: ")
    with pytest.raises(SchemaSubsetError):
        validate_answer("nonsense", {})  # type: ignore[arg-type]


def test_long_values_are_cut_in_messages() -> None:
    message = error("color", "x" * 1000)
    assert len(message) < 120
    assert "…" in message


def test_many_choices_are_cut_in_messages() -> None:
    schema = {"type": "object", "properties": {"c": {"type": "string", "enum": [f"v{i}" for i in range(50)]}}}
    message = errors({"c": "nope"}, schema)["c"]
    assert message.endswith("'v9', and 40 more")


def test_unreadable_content_is_an_answer_error() -> None:
    class Weird(dict[str, Any]):
        def __iter__(self) -> Any:
            raise RuntimeError("no")

    found = errors(Weird({"name": "Bob", "age": 30}))
    assert found == {"": "the answer could not be read (RuntimeError)"}
