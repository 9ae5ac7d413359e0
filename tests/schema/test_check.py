"""check_schema: every way a hand-written schema can leave the subset, with its pointer."""

import math
from typing import Any

import pytest

from mcp_elicit.schema import SchemaProblem, check_schema
from mcp_elicit.schema.limits import MAX_OPTIONS, MAX_PROBLEMS, MAX_PROPERTIES, MAX_TEXT

# The example from wire-2026-07-28.md §4.4, exercising every kind.
SPEC_EXAMPLE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email", "title": "Email", "maxLength": 120},
        "age": {"type": "integer", "minimum": 18, "maximum": 130},
        "agree": {"type": "boolean", "default": False},
        "color": {"type": "string", "enum": ["Red", "Green", "Blue"], "default": "Red"},
        "hex": {
            "type": "string",
            "oneOf": [{"const": "#FF0000", "title": "Red"}, {"const": "#0000FF", "title": "Blue"}],
        },
        "tags": {
            "type": "array",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "enum": ["a", "b", "c"]},
            "default": ["a"],
        },
        "hexes": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "#FF0000", "title": "Red"},
                    {"const": "#00FF00", "title": "Green"},
                ]
            },
        },
        "legacy": {
            "type": "string",
            "enum": ["s", "m", "l"],
            "enumNames": ["Small", "Medium", "Large"],
        },
    },
    "required": ["email", "agree"],
}


def form(prop: object, **top: object) -> dict[str, object]:
    return {"type": "object", "properties": {"a": prop}, **top}


def pointers(schema: object) -> list[str]:
    return [p.pointer for p in check_schema(schema)]


def only(schema: object) -> SchemaProblem:
    problems = check_schema(schema)
    assert len(problems) == 1, problems
    return problems[0]


# --- inside the subset ------------------------------------------------------------------


def test_spec_example_is_inside() -> None:
    assert check_schema(SPEC_EXAMPLE) == []


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "string"},
        {"type": "string", "minLength": 0, "maxLength": 0},
        {"type": "string", "format": "uri", "title": "Site", "description": "Your site"},
        {"type": "string", "format": "date", "default": "2024-02-29"},
        {"type": "string", "format": "date-time", "default": "2026-01-02T03:04:05Z"},
        {"type": "number", "minimum": -1.5, "maximum": 1e300, "default": 0},
        {"type": "integer", "minimum": 1, "maximum": 1, "default": 1.0},
        {"type": "boolean", "default": True},
        {"type": "string", "enum": ["x"], "default": "x"},
        {"type": "string", "enum": [""]},
        {"type": "string", "oneOf": [{"const": "x", "title": "X"}], "default": "x"},
        {"type": "string", "enum": ["x", "y"], "enumNames": ["X", "Y"], "default": "y"},
        {"type": "array", "items": {"type": "string", "enum": ["x"]}, "default": []},
        {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}, "maxItems": 1},
        {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "minItems": 2},
    ],
)
def test_every_kind_is_inside(prop: dict[str, object]) -> None:
    assert check_schema(form(prop)) == []


def test_confirm_only_form_and_schema_uri() -> None:
    assert check_schema({"type": "object", "properties": {}}) == []
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **form({"type": "boolean"})}
    assert check_schema(schema) == []


# --- the top level ----------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, [], "object", 5, True, 1.5])
def test_not_an_object(value: object) -> None:
    problem = only(value)
    assert problem.pointer == ""
    assert problem.reason.startswith("requestedSchema must be a JSON object")


def test_top_type_must_be_object() -> None:
    assert only({"type": "array", "properties": {}}) == SchemaProblem(
        "/type", "must be \"object\", got the text 'array'"
    )
    assert only({"properties": {}}) == SchemaProblem("/type", 'missing "type": "object"')


def test_properties_missing_or_wrong() -> None:
    assert pointers({"type": "object"}) == ["/properties"]
    assert "confirm-only" in only({"type": "object"}).reason
    assert pointers({"type": "object", "properties": []}) == ["/properties"]


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("$defs", {"x": {"type": "string"}}, "$defs is outside"),
        ("definitions", {}, "definitions is outside"),
        ("patternProperties", {"^x": {"type": "string"}}, "nested objects"),
        ("additionalProperties", {"type": "string"}, "nested objects"),
        ("additionalProperties", False, "refused anyway"),
        ("additionalProperties", True, "only the fields listed in properties"),
        ("title", "Form", "put the text in the elicitation message"),
        ("allOf", [], "only type, properties, required and $schema"),
        ("$schema", 5, "must be text"),
    ],
)
def test_top_level_keywords(key: str, value: object, words: str) -> None:
    problem = only({"type": "object", "properties": {}, key: value})
    assert problem.pointer == "/" + key
    assert words in problem.reason


def test_non_text_keys() -> None:
    assert pointers({"type": "object", "properties": {}, 1: 2}) == [""]
    assert pointers({"type": "object", "properties": {1: {"type": "string"}}}) == ["/properties"]


# --- required -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("required", "pointer", "words"),
    [
        ("a", "/required", "must be a list of property names"),
        (["b"], "/required/0", "'b' is not one of the properties"),
        ([1], "/required/0", "must be a property name"),
        (["a", "a"], "/required/1", "'a' is listed twice"),
    ],
)
def test_required(required: object, pointer: str, words: str) -> None:
    problem = only(form({"type": "string"}, required=required))
    assert problem.pointer == pointer
    assert words in problem.reason


# --- shapes outside the subset ----------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "pointer", "words"),
    [
        ({"type": "object", "properties": {}}, "/properties/a/type", "nested objects"),
        ({"properties": {"x": {"type": "string"}}}, "/properties/a", "nested objects"),
        ({"type": "array", "items": {"type": "string"}}, "/properties/a/items", "multi-selects"),
        ({"type": "array", "items": {"type": "object"}}, "/properties/a/items", "arrays of objects"),
        ({"type": "array", "items": [{"type": "string"}]}, "/properties/a/items", "multi-selects"),
        ({"type": "array"}, "/properties/a", "missing items"),
        ({"$ref": "#/$defs/x"}, "/properties/a", "$ref is outside"),
        ({"type": "string", "$ref": "#/$defs/x"}, "/properties/a/$ref", "$ref is outside"),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, "/properties/a", "anyOf"),
        ({"type": "string", "allOf": [{"minLength": 1}]}, "/properties/a/allOf", "allOf"),
        ({"type": "string", "not": {"const": "x"}}, "/properties/a/not", "not is outside"),
        ({"type": "string", "if": {}}, "/properties/a/if", "if is outside"),
        ({"type": "number", "oneOf": [{"const": 1, "title": "1"}]}, "/properties/a/oneOf", "oneOf"),
        ({"type": "string", "pattern": "^x$"}, "/properties/a/pattern", "pattern is not part"),
        ({"type": "string", "patternProperties": {}}, "/properties/a/patternProperties", "nested"),
        ({"type": "string", "additionalProperties": {}}, "/properties/a/additionalProperties", "nested"),
        ({"type": ["string", "null"]}, "/properties/a/type", "type lists"),
        ({"type": "date"}, "/properties/a/type", "unknown type 'date'"),
        ({"type": "null"}, "/properties/a/type", "unknown type 'null'"),
        ({"type": 5}, "/properties/a/type", "unknown type the number 5"),
        ({"title": "x"}, "/properties/a", 'missing "type"'),
        ({"enum": ["x"]}, "/properties/a", 'needs "type": "string"'),
        ({"oneOf": [{"const": "x", "title": "X"}]}, "/properties/a", 'needs "type": "string"'),
        ({"items": {"type": "string", "enum": ["x"]}}, "/properties/a", 'needs "type": "array"'),
        ({"type": "string", "format": "phone"}, "/properties/a/format", "unknown format 'phone'"),
        ({"type": "string", "format": ["email"]}, "/properties/a/format", "unknown format a list"),
        ({"type": "integer", "format": "email"}, "/properties/a/format", "only applies to free text"),
        ({"type": "string", "enum": ["x"], "format": "email"}, "/properties/a/format", "free text"),
        ({"type": "integer", "enum": [1, 2]}, "/properties/a/enum", "numeric enums"),
        ({"type": "string", "minimum": 1}, "/properties/a/minimum", "does not apply to a text"),
        ({"type": "integer", "minLength": 1}, "/properties/a/minLength", "does not apply to a number"),
        ({"type": "boolean", "enum": [True]}, "/properties/a/enum", "does not apply to a boolean"),
        ({"type": "string", "exclusiveMinimum": 1}, "/properties/a/exclusiveMinimum", "exclusive"),
        ({"type": "number", "exclusiveMaximum": 1}, "/properties/a/exclusiveMaximum", "exclusive"),
        ({"type": "number", "multipleOf": 2}, "/properties/a/multipleOf", "not a keyword"),
        ({"type": "string", "const": "x"}, "/properties/a/const", "enum with one value"),
        ({"type": "string", "nullable": True}, "/properties/a/nullable", "leaving it out"),
        ({"type": "string", "examples": ["x"]}, "/properties/a/examples", "not a keyword"),
        ({"type": "string", "required": ["x"]}, "/properties/a/required", "top level"),
        ({"type": "string", "enumNames": ["X"]}, "/properties/a/enumNames", "only goes with enum"),
        (
            {"type": "string", "enum": ["x"], "oneOf": [{"const": "x", "title": "X"}]},
            "/properties/a/enum",
            "either enum or oneOf",
        ),
        ("text", "/properties/a", "must be described by a JSON object"),
    ],
)
def test_property_outside_subset(prop: object, pointer: str, words: str) -> None:
    problems = check_schema(form(prop))
    assert problems, prop
    assert problems[0].pointer == pointer
    assert words in problems[0].reason


# --- enums and options ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "pointer", "words"),
    [
        ({"type": "string", "enum": [1, 2]}, "/properties/a/enum/0", "must be text"),
        ({"type": "string", "enum": [None]}, "/properties/a/enum/0", "must be text"),
        ({"type": "string", "enum": []}, "/properties/a/enum", "at least one choice"),
        ({"type": "string", "enum": "x"}, "/properties/a/enum", "must be a list"),
        ({"type": "string", "enum": ["x", "x"]}, "/properties/a/enum/1", "is the same as"),
        ({"type": "string", "enum": ["\u00e9", "e\u0301"]}, "/properties/a/enum/1", "looks the same"),
        ({"type": "string", "enum": ["Re\u200bd"]}, "/properties/a/enum/0", "U+200B"),
        ({"type": "string", "oneOf": []}, "/properties/a/oneOf", "at least one choice"),
        ({"type": "string", "oneOf": ["x"]}, "/properties/a/oneOf/0", "{const, title}"),
        ({"type": "string", "oneOf": [{"const": "x"}]}, "/properties/a/oneOf/0", "missing 'title'"),
        ({"type": "string", "oneOf": [{"title": "X"}]}, "/properties/a/oneOf/0", "missing 'const'"),
        (
            {"type": "string", "oneOf": [{"const": "x", "title": "X", "description": "d"}]},
            "/properties/a/oneOf/0/description",
            "not allowed in a choice",
        ),
        ({"type": "string", "oneOf": [{"const": 1, "title": "X"}]}, "/properties/a/oneOf/0/const", "text"),
        ({"type": "string", "oneOf": [{"const": "x", "title": 1}]}, "/properties/a/oneOf/0/title", "text"),
        ({"type": "string", "oneOf": [{"const": "x", "title": " "}]}, "/properties/a/oneOf/0/title", "empty"),
        (
            {"type": "string", "oneOf": [{"const": "x", "title": "X"}, {"const": "x", "title": "Y"}]},
            "/properties/a/oneOf/1/const",
            "is the same as",
        ),
        (
            {"type": "string", "oneOf": [{"const": "x", "title": "X"}, {"const": "y", "title": "X"}]},
            "/properties/a/oneOf/1/title",
            "is the same as",
        ),
        (
            {"type": "string", "enum": ["x", "y"], "enumNames": ["X"]},
            "/properties/a/enumNames",
            "one title per",
        ),
        ({"type": "string", "enum": ["x"], "enumNames": "X"}, "/properties/a/enumNames", "one title per"),
        ({"type": "string", "enum": ["x"], "enumNames": [1]}, "/properties/a/enumNames/0", "must be text"),
        (
            {"type": "array", "items": {"type": "string", "enum": ["x"], "minLength": 1}},
            "/properties/a/items/minLength",
            "not allowed in items",
        ),
        (
            {"type": "array", "items": {"type": "integer", "enum": [1]}},
            "/properties/a/items/type",
            '"string"',
        ),
        ({"type": "array", "items": {"enum": ["x"]}}, "/properties/a/items/type", '"string"'),
        (
            {"type": "array", "items": {"type": "string", "anyOf": [{"const": "x", "title": "X"}]}},
            "/properties/a/items/type",
            "next to anyOf",
        ),
        ({"type": "array", "items": {"anyOf": [{"const": "x"}]}}, "/properties/a/items/anyOf/0", "title"),
    ],
)
def test_bad_options(prop: object, pointer: str, words: str) -> None:
    problems = check_schema(form(prop))
    assert problems, prop
    assert problems[0].pointer == pointer
    assert words in problems[0].reason


# --- bounds -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "pointer", "words"),
    [
        ({"type": "number", "minimum": 5, "maximum": 1}, "/properties/a/minimum", "greater than"),
        ({"type": "string", "minLength": 5, "maxLength": 1}, "/properties/a/minLength", "greater than"),
        ({"type": "string", "minLength": -1}, "/properties/a/minLength", "non-negative integer"),
        ({"type": "string", "maxLength": 1.0}, "/properties/a/maxLength", "integer: 1, not 1.0"),
        ({"type": "string", "maxLength": True}, "/properties/a/maxLength", "non-negative integer"),
        ({"type": "number", "minimum": math.nan}, "/properties/a/minimum", "finite number"),
        ({"type": "number", "maximum": math.inf}, "/properties/a/maximum", "finite number"),
        ({"type": "number", "minimum": True}, "/properties/a/minimum", "must be a number, got true"),
        ({"type": "integer", "maximum": "9"}, "/properties/a/maximum", "must be a number"),
        ({"type": "number", "minimum": None}, "/properties/a/minimum", "must be a number, got null"),
        (
            {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "minItems": 2, "maxItems": 1},
            "/properties/a/minItems",
            "greater than",
        ),
        (
            {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "maxItems": 3},
            "/properties/a/maxItems",
            "more than the 2 choices",
        ),
        (
            {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}, "minItems": 2},
            "/properties/a/minItems",
            "more than the 1 choices",
        ),
        (
            {"type": "array", "items": {"type": "string", "enum": ["x"]}, "minItems": -1},
            "/properties/a/minItems",
            "non-negative integer",
        ),
    ],
)
def test_bad_bounds(prop: object, pointer: str, words: str) -> None:
    problem = only(form(prop))
    assert problem.pointer == pointer
    assert words in problem.reason


def test_bound_message_is_exact() -> None:
    assert only(form({"type": "integer", "minimum": 10, "maximum": 5})) == SchemaProblem(
        "/properties/a/minimum", "minimum (10) is greater than maximum (5)"
    )


# --- defaults ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "words"),
    [
        ({"type": "string", "default": 5}, "must be text, got the number 5"),
        ({"type": "string", "default": None}, "must be text, got null"),
        ({"type": "integer", "default": "5"}, "must be a whole number, got the text '5'"),
        ({"type": "integer", "default": 1.5}, "must be a whole number, got 1.5"),
        ({"type": "number", "default": True}, "must be a number, got true"),
        ({"type": "boolean", "default": "true"}, "must be true or false"),
        ({"type": "string", "enum": ["x"], "default": "y"}, "'y' is not one of the choices: 'x'"),
        (
            {"type": "string", "oneOf": [{"const": "x", "title": "X"}], "default": "X"},
            "'X' is not one of the choices: 'x' (X)",
        ),
        ({"type": "array", "items": {"type": "string", "enum": ["x"]}, "default": "x"}, "a list"),
        ({"type": "array", "items": {"type": "string", "enum": ["x"]}, "default": ["y"]}, "'y'"),
        (
            {"type": "array", "items": {"type": "string", "enum": ["x"]}, "default": ["x", "x"]},
            "more than once",
        ),
        ({"type": "string", "minLength": 3, "default": "ab"}, "at least 3 characters"),
        ({"type": "number", "maximum": 3, "default": 4}, "must be at most 3 (got 4)"),
        ({"type": "string", "format": "date", "default": "2024-02-30"}, "real calendar date"),
        ({"type": "string", "format": "email", "default": "nobody"}, "email address"),
        (
            {
                "type": "array",
                "items": {"type": "string", "enum": ["x", "y"]},
                "minItems": 2,
                "default": ["x"],
            },
            "select at least 2 choices (got 1)",
        ),
        ({"type": "string", "default": "x" * (MAX_TEXT + 1)}, "longer than"),
        # Past the range an answer may hold: the encoder could not send it, or not exactly.
        ({"type": "integer", "default": 1e20}, "cannot be sent exactly as JSON"),
        ({"type": "integer", "default": 2**53}, "must be between -9007199254740991 and 9007199254740991"),
        ({"type": "number", "default": -(2**64)}, "must be between -9007199254740991"),
        ({"type": "integer", "maximum": 2**53 - 1, "default": 9.1e15}, "must be at most 9007199254740991"),
        # A default is pre-filled into the client's input line: the same rules as enum values.
        ({"type": "string", "default": "pay\u202eusd"}, "U+202E"),
        ({"type": "string", "default": "a\u2066b"}, "U+2066"),
        ({"type": "string", "default": "zero\u200bwidth"}, "U+200B"),
        ({"type": "string", "default": "\x1b]52;c;eA==\x07"}, "U+001B"),
        ({"type": "string", "default": "line\nbreak"}, "U+000A"),
        ({"type": "string", "default": "bom\ufeff"}, "U+FEFF"),
    ],
)
def test_bad_default(prop: dict[str, object], words: str) -> None:
    problem = only(form(prop))
    assert problem.pointer == "/properties/a/default"
    assert words in problem.reason


# --- property names and texts -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("", "empty or blank"),
        ("   ", "empty or blank"),
        ("a\u202eb", "U+202E"),
        ("a\x00", "U+0000"),
        ("a\x1b[2J", "U+001B"),
        ("zero\u200bwidth", "U+200B"),
        ("line\u2028sep", "U+2028"),
        ("x" * 257, "longer than 256"),
    ],
)
def test_bad_property_names(name: str, words: str) -> None:
    problem = only({"type": "object", "properties": {name: {"type": "string"}}})
    assert problem.pointer == "/properties/" + name.replace("~", "~0").replace("/", "~1")
    assert words in problem.reason


def test_names_equal_after_normalization() -> None:
    schema = {
        "type": "object",
        "properties": {"caf\u00e9": {"type": "string"}, "cafe\u0301": {"type": "string"}},
    }
    problem = only(schema)
    assert problem.pointer == "/properties/cafe\u0301"
    assert "looks the same as" in problem.reason


def test_pointer_escaping() -> None:
    schema = {"type": "object", "properties": {"a/b~c": {"type": "object"}}}
    assert pointers(schema) == ["/properties/a~1b~0c/type"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (5, "must be text"),
        ("x" * (MAX_TEXT + 1), f"longer than {MAX_TEXT}"),
        ("evil\x1b]0;title\x07", "U+001B"),
        ("https://good.com\rhttps://evil.com", "U+000D"),
        ("abc\u202egnp.exe", "U+202E"),
        ("\x9b", "U+009B"),
    ],
)
def test_bad_titles_and_descriptions(text: object, words: str) -> None:
    for key in ("title", "description"):
        problem = only(form({"type": "string", key: text}))
        assert problem.pointer == f"/properties/a/{key}"
        assert words in problem.reason


def test_multiline_description_is_fine() -> None:
    assert check_schema(form({"type": "string", "description": "one\n\ttwo 👩‍💻"})) == []


# --- caps -------------------------------------------------------------------------------


def test_too_many_properties() -> None:
    props = {f"f{i}": {"type": "string"} for i in range(MAX_PROPERTIES + 1)}
    problem = only({"type": "object", "properties": props})
    assert problem.pointer == "/properties"
    assert f"at most {MAX_PROPERTIES}" in problem.reason
    props.popitem()
    assert check_schema({"type": "object", "properties": props}) == []


def test_too_many_options() -> None:
    values = [str(i) for i in range(MAX_OPTIONS + 1)]
    assert pointers(form({"type": "string", "enum": values})) == ["/properties/a/enum"]
    assert check_schema(form({"type": "string", "enum": values[:-1]})) == []


def test_problem_list_is_capped() -> None:
    props = {f"f{i}": {"type": "object"} for i in range(MAX_PROPERTIES)}
    problems = check_schema({"type": "object", "properties": props})
    assert len(problems) == MAX_PROBLEMS
    assert problems[-1].pointer == ""
    assert problems[-1].reason.startswith("too many problems")


def test_deep_values_do_not_recurse() -> None:
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    problems = check_schema(form({"type": "array", "items": deep, "default": deep}))
    assert problems
    assert problems[0].pointer == "/properties/a/items"
    assert check_schema(deep)[0].pointer == ""


def test_many_problems_are_all_reported() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "pattern": "x", "minLength": -1},
            "b": {"type": "integer", "enum": [1]},
        },
        "required": ["c"],
    }
    assert pointers(schema) == [
        "/required/0",
        "/properties/a/pattern",
        "/properties/a/minLength",
        "/properties/b/enum",
    ]


def test_problem_str() -> None:
    assert str(SchemaProblem("", "x")) == "(schema): x"
    assert str(SchemaProblem("/type", "bad")) == "/type: bad"


def test_hostile_schema_is_checked_quickly() -> None:
    import time

    props = {
        f"f{i}": {
            "type": "string",
            "title": "T" * MAX_TEXT,
            "description": ("word " * 10 + "\n") * 100,
            "oneOf": [{"const": f"v{j}", "title": f"Title {j}"} for j in range(MAX_OPTIONS)],
        }
        for i in range(MAX_PROPERTIES)
    }
    start = time.perf_counter()
    assert check_schema({"type": "object", "properties": props}) == []
    assert time.perf_counter() - start < 3


def test_unsafe_integers_are_refused() -> None:
    limit = 2**53 - 1
    assert check_schema(form({"type": "integer", "minimum": -limit, "maximum": limit})) == []
    problem = only(form({"type": "integer", "maximum": 10**30}))
    assert problem.pointer == "/properties/a/maximum"
    assert f"between -{limit} and {limit}" in problem.reason
    assert only(form({"type": "string", "maxLength": 2**64})).pointer == "/properties/a/maxLength"
    assert only(form({"type": "number", "default": 10**5000})).pointer == "/properties/a/default"


def test_largest_safe_defaults_and_text_defaults_are_inside() -> None:
    limit = 2**53 - 1
    for kind in ("integer", "number"):
        for default in (limit, -limit, float(2**52), 1e300 if kind == "number" else 0):
            assert check_schema(form({"type": kind, "default": default})) == [], (kind, default)
    assert check_schema(form({"type": "string", "default": "Zürich 😀 العربية"})) == []


# --- every problem in one pass --------------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "other"),
    [
        ({"type": "string", "pattern": "^a$", "default": 5}, "/properties/a/pattern"),
        ({"type": "string", "minLength": -1, "default": True}, "/properties/a/minLength"),
        ({"type": "integer", "minimum": "1", "default": "one"}, "/properties/a/minimum"),
        ({"type": "number", "exclusiveMaximum": 3, "default": "x"}, "/properties/a/exclusiveMaximum"),
        ({"type": "boolean", "format": "email", "default": "yes"}, "/properties/a/format"),
        ({"type": "string", "enum": ["x", "y"], "pattern": "x", "default": "z"}, "/properties/a/pattern"),
        (
            {"type": "array", "items": {"type": "string", "enum": ["x"]}, "maxItems": 3, "default": "x"},
            "/properties/a/maxItems",
        ),
    ],
)
def test_a_default_is_checked_on_a_field_with_other_problems(prop: dict[str, Any], other: str) -> None:
    """Before, a field with one problem had its default skipped: a wrong-typed default appeared
    only once the rest was fixed."""
    problems = check_schema(form(prop))
    assert [p.pointer for p in problems] == [other, "/properties/a/default"]
    assert problems[1].reason.startswith("default ")
    assert " does not fit the field: " in problems[1].reason


def test_a_default_is_not_held_against_choices_that_could_not_be_read() -> None:
    assert pointers(form({"type": "string", "enum": [1, 2], "default": "x"})) == [
        "/properties/a/enum/0",
        "/properties/a/enum/1",
    ]


def test_titles_are_checked_on_a_field_refused_for_its_type() -> None:
    for prop in (
        {"title": 5, "type": "object"},
        {"title": 5, "type": "text"},
        {"title": 5, "enum": ["x"]},
    ):
        assert "/properties/a/title" in pointers(form(prop)), prop


def test_a_type_list_is_refused_and_the_rest_checked_as_the_type_meant() -> None:
    problems = check_schema(form({"type": ["string", "null"], "maxLength": "8", "default": 3}))
    assert [p.pointer for p in problems] == [
        "/properties/a/type",
        "/properties/a/maxLength",
        "/properties/a/default",
    ]
    assert problems[0].reason.startswith('type lists such as ["string", "null"] are outside')
    # A list that does not say which type is meant: nothing more to check against.
    assert pointers(form({"type": ["string", "integer"], "maxLength": "8"})) == ["/properties/a/type"]
