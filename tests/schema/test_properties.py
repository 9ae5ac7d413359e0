"""Property-based tests: the checker, validator and lint never crash, and agree with each other."""

import copy
import math
import unicodedata
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_elicit.schema import (
    AnswerInvalid,
    FormLint,
    SchemaProblem,
    SchemaSubsetError,
    check_schema,
    form_spec,
    lint_form,
    validate_answer,
)
from mcp_elicit.schema.formats import CHECKS
from mcp_elicit.wire import codec

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEYWORDS = [
    "type",
    "properties",
    "required",
    "$schema",
    "title",
    "description",
    "default",
    "minLength",
    "maxLength",
    "format",
    "minimum",
    "maximum",
    "enum",
    "enumNames",
    "oneOf",
    "anyOf",
    "items",
    "minItems",
    "maxItems",
    "const",
    "pattern",
    "$ref",
    "additionalProperties",
    "allOf",
    "not",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "examples",
    "x-vendor",
]
TYPES = ["object", "string", "number", "integer", "boolean", "array", "null"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from([*TYPES, "email", "uri", "date", "date-time", "2024-02-30", "a@b.co"]),
)
keys = st.one_of(st.sampled_from(KEYWORDS), st.text(max_size=6))
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(keys, inner, max_size=6)),
    max_leaves=40,
)

# --- valid schemas ----------------------------------------------------------------------

words = st.text(alphabet="abcdefgh", min_size=1, max_size=5)
safe_text = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Cf", "Zl", "Zp")), max_size=8)


@st.composite
def options(draw: st.DrawFn) -> list[str]:
    return draw(st.lists(words, min_size=1, max_size=5, unique=True))


@st.composite
def text_prop(draw: st.DrawFn) -> dict[str, Any]:
    prop: dict[str, Any] = {"type": "string"}
    low = draw(st.none() | st.integers(0, 4))
    high = draw(st.none() | st.integers(low or 0, 8))
    if low is not None:
        prop["minLength"] = low
    if high is not None:
        prop["maxLength"] = high
    fmt = draw(st.none() | st.sampled_from(["email", "uri", "date", "date-time"]))
    if fmt is not None and low is None and high is None:
        prop["format"] = fmt
        if draw(st.booleans()):
            prop["default"] = {
                "email": "a@b.example",
                "uri": "https://example.org",
                "date": "2024-02-29",
                "date-time": "2026-01-01T00:00:00Z",
            }[fmt]
    elif fmt is None and draw(st.booleans()):
        size = draw(st.integers(low or 0, high if high is not None else (low or 0) + 3))
        prop["default"] = "x" * size
    return prop


@st.composite
def number_prop(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["number", "integer"]))
    prop: dict[str, Any] = {"type": kind}
    low = draw(st.none() | st.integers(-50, 50))
    high = draw(st.none() | st.integers(low if low is not None else -50, 100))
    if low is not None:
        prop["minimum"] = low
    if high is not None:
        prop["maximum"] = high
    if draw(st.booleans()):
        prop["default"] = low if low is not None else (high if high is not None else 0)
    return prop


@st.composite
def select_prop(draw: st.DrawFn) -> dict[str, Any]:
    values = draw(options())
    shape = draw(st.sampled_from(["enum", "oneOf", "legacy"]))
    prop: dict[str, Any]
    if shape == "enum":
        prop = {"type": "string", "enum": values}
    elif shape == "oneOf":
        prop = {"type": "string", "oneOf": [{"const": v, "title": v.upper() + "!"} for v in values]}
    else:
        prop = {"type": "string", "enum": values, "enumNames": [v.upper() for v in values]}
    if draw(st.booleans()):
        prop["default"] = draw(st.sampled_from(values))
    return prop


@st.composite
def multi_prop(draw: st.DrawFn) -> dict[str, Any]:
    values = draw(options())
    if draw(st.booleans()):
        items: dict[str, Any] = {"type": "string", "enum": values}
    else:
        items = {"anyOf": [{"const": v, "title": v.upper()} for v in values]}
    prop: dict[str, Any] = {"type": "array", "items": items}
    low = draw(st.none() | st.integers(0, len(values)))
    high = draw(st.none() | st.integers(low or 0, len(values)))
    if low is not None:
        prop["minItems"] = low
    if high is not None:
        prop["maxItems"] = high
    if draw(st.booleans()):
        prop["default"] = values[: low or 0]
    return prop


@st.composite
def valid_schemas(draw: st.DrawFn) -> dict[str, Any]:
    kinds = st.one_of(
        text_prop(), number_prop(), select_prop(), multi_prop(), st.just({"type": "boolean", "default": True})
    )
    props = draw(st.dictionaries(words, kinds, max_size=6))
    for prop in props.values():
        if draw(st.booleans()):
            prop["title"] = draw(safe_text)
        if draw(st.booleans()):
            prop["description"] = draw(safe_text)
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if props:
        schema["required"] = draw(st.lists(st.sampled_from(sorted(props)), unique=True))
    return schema


def plausible_value(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = prop["type"]
    if kind == "string" and "oneOf" in prop:
        return st.sampled_from([o["const"] for o in prop["oneOf"]])
    if kind == "string" and "enum" in prop:
        return st.sampled_from(prop["enum"])
    if kind == "string":
        return st.sampled_from(
            ["a@b.example", "https://x.example", "2024-01-31", "2026-01-01T00:00:00Z"]
        ) | st.text(max_size=9)
    if kind in ("number", "integer"):
        return st.integers(-60, 110) | st.floats(-100, 100)
    if kind == "boolean":
        return st.booleans()
    values = prop["items"].get("enum") or [o["const"] for o in prop["items"]["anyOf"]]
    return st.lists(st.sampled_from(values), max_size=len(values) + 1)


@st.composite
def schema_and_content(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    schema = draw(valid_schemas())
    if draw(st.integers(0, 4)) == 0:
        return schema, draw(json_values)
    content: dict[str, Any] = {}
    for name, prop in schema["properties"].items():
        if draw(st.integers(0, 3)) == 0:
            continue
        content[name] = (
            draw(plausible_value(prop) | json_values)
            if draw(st.integers(0, 5)) == 0
            else draw(plausible_value(prop))
        )
    if draw(st.integers(0, 5)) == 0:
        content[draw(words) + "_extra"] = draw(json_values)
    return schema, content


@st.composite
def mutated_schemas(draw: st.DrawFn) -> Any:
    schema = copy.deepcopy(draw(valid_schemas()))
    for _ in range(draw(st.integers(1, 3))):
        # Walk to a random dict inside the schema and set, replace or delete a key.
        node: Any = schema
        for _depth in range(draw(st.integers(0, 4))):
            children = [
                v for v in (node.values() if isinstance(node, dict) else node) if isinstance(v, dict | list)
            ]
            if not children:
                break
            node = draw(st.sampled_from(children))
        if isinstance(node, dict):
            action = draw(st.sampled_from(["set", "delete"]))
            if action == "set" or not node:
                node[draw(keys)] = draw(json_values)
            else:
                del node[draw(st.sampled_from(sorted(node, key=repr)))]
        elif isinstance(node, list) and node:
            node[draw(st.integers(0, len(node) - 1))] = draw(json_values)
    return schema


# --- properties -------------------------------------------------------------------------


@SETTINGS
@given(json_values)
def test_check_schema_never_raises(value: Any) -> None:
    problems = check_schema(value)
    assert isinstance(problems, list)
    assert all(isinstance(p, SchemaProblem) and p.pointer.startswith(("", "/")) for p in problems)
    if not isinstance(value, dict) or value.get("type") != "object":
        assert problems


@SETTINGS
@given(valid_schemas())
def test_generated_schemas_are_inside(schema: dict[str, Any]) -> None:
    assert check_schema(schema) == []
    spec = form_spec(schema, allow_secrets=list(schema["properties"]))
    assert spec.schema == schema


@SETTINGS
@given(mutated_schemas(), json_values)
def test_mutated_schemas(schema: Any, content: Any) -> None:
    problems = check_schema(schema)
    outcome: Any
    try:
        outcome = validate_answer(schema, content)
    except (AnswerInvalid, SchemaSubsetError) as exc:  # nothing else may escape
        outcome = exc
    if isinstance(outcome, SchemaSubsetError):
        assert problems
        assert outcome.problems == problems
    elif isinstance(outcome, dict):
        assert problems == []
        assert validate_answer(schema, outcome) == outcome


@SETTINGS
@given(schema_and_content())
def test_validate_answer_raises_only_answer_invalid(case: tuple[dict[str, Any], Any]) -> None:
    schema, content = case
    outcome: Any
    try:
        outcome = validate_answer(schema, content)
    except AnswerInvalid as exc:  # nothing else may escape
        outcome = exc
    if isinstance(outcome, AnswerInvalid):
        assert outcome.errors
        assert all(isinstance(k, str) and isinstance(v, str) and v for k, v in outcome.errors.items())
        return
    result = outcome
    # Accepted: a second validation accepts it unchanged, and it respects the schema.
    assert validate_answer(schema, result) == result
    props = schema["properties"]
    assert set(result) <= set(props)
    assert set(schema.get("required", [])) <= set(result)
    for name, value in result.items():
        prop = props[name]
        kind = prop["type"]
        if kind == "integer":
            assert type(value) is int
        if kind == "number":
            assert type(value) in (int, float)
            assert math.isfinite(value)
        if kind == "boolean":
            assert type(value) is bool
        if kind in ("number", "integer"):
            assert prop.get("minimum", -math.inf) <= value <= prop.get("maximum", math.inf)
        if kind == "string":
            assert isinstance(value, str)
            assert prop.get("minLength", 0) <= len(value) <= prop.get("maxLength", math.inf)
            if "format" in prop:
                assert CHECKS[prop["format"]](value) is None
            if "enum" in prop:
                assert value in prop["enum"]
            if "oneOf" in prop:
                assert value in [o["const"] for o in prop["oneOf"]]
        if kind == "array":
            values = prop["items"].get("enum") or [o["const"] for o in prop["items"]["anyOf"]]
            assert len(set(value)) == len(value)
            assert set(value) <= set(values)
            assert prop.get("minItems", 0) <= len(value) <= prop.get("maxItems", math.inf)
    for name, prop in props.items():
        if name not in content and "default" in prop:
            assert result[name] == prop["default"]


@SETTINGS
@given(schema_and_content())
def test_form_spec_parse_agrees_with_validate_answer(case: tuple[dict[str, Any], Any]) -> None:
    schema, content = case
    spec = form_spec(schema, allow_secrets=list(schema["properties"]))

    def run(parse: Any) -> Any:
        try:
            return parse(content)
        except AnswerInvalid as exc:
            return exc.errors

    assert run(spec.parse) == run(lambda c: validate_answer(schema, c))


@SETTINGS
@given(
    st.one_of(st.text(max_size=300), json_values), st.one_of(json_values, mutated_schemas(), valid_schemas())
)
def test_lint_never_raises(message: Any, schema: Any) -> None:
    result = lint_form(message, schema)
    assert isinstance(result, FormLint)
    assert all(isinstance(w, str) for w in result.url_warnings)


@SETTINGS
@given(st.text(max_size=80))
def test_format_checks_never_raise(text: str) -> None:
    for check in CHECKS.values():
        result = check(text)
        assert result is None or result.startswith("must")


# --- the JSON-safe range of whole numbers ----------------------------------------------------

SAFE_INT = 2**53 - 1
# Around the edges that matter: the safe range, 64 bits, and far beyond.
edge_integers = st.one_of(
    st.integers(),
    st.integers(SAFE_INT - 3, SAFE_INT + 3),
    st.integers(-SAFE_INT - 3, -SAFE_INT + 3),
    st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**400]),
)


@SETTINGS
@given(st.sampled_from(["number", "integer"]), edge_integers | st.floats())
def test_accepted_numbers_are_safe_and_encodable(kind: str, value: Any) -> None:
    """A number the validator accepts is exactly one JSON can carry; nothing else gets through."""
    schema = {"type": "object", "properties": {"n": {"type": kind}}}
    try:
        result = validate_answer(schema, {"n": value})
    except AnswerInvalid as exc:
        message = exc.errors["n"]
        whole = isinstance(value, int) or (math.isfinite(value) and value.is_integer() and kind == "integer")
        if whole and abs(int(value)) > SAFE_INT:
            assert message.startswith(f"must be between -{SAFE_INT} and {SAFE_INT}: ")
        return
    n = result["n"]
    if isinstance(n, int):
        assert -SAFE_INT <= n <= SAFE_INT
    assert math.isfinite(n)
    assert codec.loads(codec.dumps(result)) == result  # the encoder never refuses it


@SETTINGS
@given(st.sampled_from(["number", "integer"]), edge_integers)
def test_integer_defaults_are_inside_exactly_in_the_safe_range(kind: str, default: int) -> None:
    problems = check_schema({"type": "object", "properties": {"n": {"type": kind, "default": default}}})
    assert (problems == []) == (-SAFE_INT <= default <= SAFE_INT)
    if problems:
        assert [p.pointer for p in problems] == ["/properties/n/default"]


@SETTINGS
@given(st.text(max_size=12))
def test_text_defaults_follow_the_rules_of_enum_values(default: str) -> None:
    """Controls, bidi and zero-width characters are refused in a default, as in enum values."""
    problems = check_schema({"type": "object", "properties": {"s": {"type": "string", "default": default}}})
    bad = next((ch for ch in default if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")), None)
    if bad is None:
        assert problems == []
    else:
        assert [p.pointer for p in problems] == ["/properties/s/default"]
        assert f"U+{ord(bad):04X}" in problems[0].reason
