"""The client's tolerant reading of a server's form (``compile_schema(..., tolerant=True)``):
what it keeps, what it leaves to the server, what it still refuses, and that it never fails in
any other way than the strict reading does."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.schema import AnswerInvalid, validate_answer
from mcp_elicit.schema.check import compile_schema
from mcp_elicit.schema.rules import FieldRule, check_value
from mcp_elicit.schema.text import short
from mcp_elicit.schema.validate import validate_compiled

from .test_properties import SETTINGS, json_values, mutated_schemas, valid_schemas

# What the official SDK sends for a pydantic model with gt, multiple_of, pattern and
# Literal[1, 2, 3] (read off mcp==2.3.0), with the extras other servers add.
SDK_FORM: dict[str, Any] = {
    "type": "object",
    "title": "Order",
    "description": "An order",
    "additionalProperties": False,
    "x-generator": "pydantic",
    "properties": {
        "quantity": {"exclusiveMinimum": 0, "exclusiveMaximum": 100, "title": "Quantity", "type": "integer"},
        "pack": {"default": 6, "multipleOf": 6, "title": "Pack", "type": "integer"},
        "code": {"pattern": "^[A-Z]{3}$", "title": "Code", "type": "string", "examples": ["ABC"]},
        "id": {"type": "string", "format": "uuid"},
        "size": {"default": 2, "enum": [1, 2, 3], "title": "Size", "type": "integer"},
        "ratio": {"enum": [0.5, 1.5], "type": "number"},
    },
    "required": ["quantity", "code"],
}


def test_the_strict_reading_refuses_what_the_tolerant_one_accepts() -> None:
    strict, problems = compile_schema(SDK_FORM)
    assert strict is None
    assert {p.pointer for p in problems} >= {
        "/title",
        "/additionalProperties",
        "/properties/quantity/exclusiveMinimum",
        "/properties/pack/multipleOf",
        "/properties/code/pattern",
        "/properties/id/format",
        "/properties/size/enum",
    }
    form, problems = compile_schema(SDK_FORM, tolerant=True)
    assert problems == []
    assert form is not None
    rules = {rule.name: rule for rule in form.fields}
    assert (rules["quantity"].exclusive_minimum, rules["quantity"].exclusive_maximum) == (0, 100)
    assert (rules["pack"].multiple_of, rules["pack"].default) == (6, 6)
    assert rules["code"] == FieldRule("code", "string", required=True)  # the pattern is the server's
    assert rules["id"].format is None  # an unknown format is plain text here
    assert (rules["size"].kind, rules["size"].options, rules["size"].option_values) == (
        "select",
        ("1", "2", "3"),
        (1, 2, 3),
    )
    assert rules["size"].default == "2"
    assert rules["ratio"].options == ("0.5", "1.5")


def test_answers_are_checked_against_what_was_kept_and_sent_as_numbers() -> None:
    form, _ = compile_schema(SDK_FORM, tolerant=True)
    assert form is not None
    with pytest.raises(AnswerInvalid) as info:
        validate_compiled(form, {"quantity": 0, "pack": 7, "code": "x", "size": "4", "ratio": 1})
    assert info.value.errors == {
        "quantity": "must be more than 0 (got 0)",
        "pack": "must be a multiple of 6 (got 7)",
        "size": "'4' is not one of the choices: '1', '2', '3'",
        "ratio": "1 is not one of the choices: '0.5', '1.5'",
    }
    checked = validate_compiled(form, {"quantity": 99, "code": "not upper", "size": 3, "ratio": "1.5"})
    assert checked == {"quantity": 99, "pack": 6, "code": "not upper", "size": "3", "ratio": "1.5"}
    assert form.to_wire(checked) == {"quantity": 99, "pack": 6, "code": "not upper", "size": 3, "ratio": 1.5}
    assert checked["size"] == "3"  # to_wire copies


@pytest.mark.parametrize(
    ("prop", "pointer"),
    [
        ({"type": "object", "properties": {}}, "/properties/f/type"),
        ({"type": "string", "anyOf": [{"type": "string"}, {"type": "null"}]}, "/properties/f/anyOf"),
        ({"$ref": "#/$defs/X"}, "/properties/f"),
        ({"type": ["string", "null"]}, "/properties/f/type"),
        ({"type": "array", "items": {"type": "string"}}, "/properties/f/items"),
        ({"type": "integer", "enum": [1, 1.5]}, "/properties/f/enum/1"),
        ({"type": "number", "enum": [1, 1.0]}, "/properties/f/enum/1"),
        ({"type": "integer", "enum": [True]}, "/properties/f/enum/0"),
        ({"type": "integer", "enum": [1, 2], "default": 3}, "/properties/f/default"),
        ({"type": "integer", "exclusiveMinimum": 5, "default": 5}, "/properties/f/default"),
    ],
)
def test_what_changes_the_shape_of_the_form_is_refused_in_both_readings(
    prop: dict[str, Any], pointer: str
) -> None:
    schema = {"type": "object", "properties": {"f": prop}}
    form, problems = compile_schema(schema, tolerant=True)
    assert form is None
    assert pointer in [p.pointer for p in problems]


@pytest.mark.parametrize("default", ["2", True])
def test_the_default_of_a_numeric_enum_is_one_of_the_numbers(default: object) -> None:
    # The rule holds the choices as text ("2"): a text default must not pass for the number.
    prop = {"type": "integer", "enum": [1, 2, 3], "default": default}
    form, problems = compile_schema({"type": "object", "properties": {"size": prop}}, tolerant=True)
    assert form is None
    assert [(p.pointer, p.reason) for p in problems] == [
        (
            "/properties/size/default",
            f"default {short(default)} does not fit the field: the choices are numbers, so the "
            "default must be one of them",
        )
    ]


def test_additional_properties_true_is_refused_for_what_it_is() -> None:
    schema = {"type": "object", "additionalProperties": True, "properties": {"n": {"type": "string"}}}
    form, problems = compile_schema(schema, tolerant=True)
    assert form is None
    (problem,) = problems
    assert problem.pointer == "/additionalProperties"
    assert "nested" not in problem.reason
    assert problem.reason.startswith("additionalProperties is not part of requestedSchema; remove it")


def test_const_and_unique_items_are_read_as_the_form_can_show_them() -> None:
    """What pydantic writes for Literal[True], Literal[5], Literal["x"] and set[Literal[...]]."""
    schema = {
        "type": "object",
        "properties": {
            "agree": {"type": "boolean", "const": True},
            "level": {"type": "integer", "const": 5},
            "name": {"type": "string", "const": "x"},
            "toppings": {"type": "array", "items": {"enum": ["cheese", "ham"]}, "uniqueItems": True},
        },
        "required": ["agree", "level", "name"],
    }
    form, problems = compile_schema(schema, tolerant=True)
    assert problems == []
    assert form is not None
    strict_form, strict_problems = compile_schema(schema)
    assert strict_form is None
    assert {p.pointer for p in strict_problems} >= {
        "/properties/agree/const",
        "/properties/toppings/uniqueItems",
    }
    good = {"agree": True, "level": 5, "name": "x", "toppings": ["ham"]}
    assert validate_compiled(form, good)["toppings"] == ["ham"]
    for field, wrong in (("level", 4), ("name", "y"), ("toppings", ["olives"]), ("toppings", [3])):
        with pytest.raises(AnswerInvalid) as info:
            validate_compiled(form, {**good, field: wrong})
        assert field in info.value.errors
    # A const of the wrong type for its field is not turned into anything: refused as it is.
    _, problems = compile_schema(
        {"type": "object", "properties": {"n": {"type": "array", "const": [1]}}}, tolerant=True
    )
    assert problems


def test_malformed_advisory_bounds_are_left_to_the_server() -> None:
    prop = {"type": "number", "exclusiveMinimum": "0", "multipleOf": 0, "exclusiveMaximum": True}
    form, problems = compile_schema({"type": "object", "properties": {"n": prop}}, tolerant=True)
    assert problems == []
    assert form is not None
    assert form.fields[0] == FieldRule("n", "number")


@pytest.mark.parametrize(
    ("step", "value", "fits"),
    [
        (6, 12, True),
        (6, 13, False),
        (0.1, 0.3, True),
        (0.1, 0.35, False),
        (2, 4.0, True),
        (1e-300, 1e300, True),
    ],
)
def test_multiple_of(step: float, value: float, fits: bool) -> None:
    rule = FieldRule("n", "number", multiple_of=step)
    assert (check_value(rule, value)[1] is None) is fits


@SETTINGS
@given(st.one_of(json_values, mutated_schemas()))
def test_the_tolerant_reading_never_raises_and_keeps_every_strict_form(schema: Any) -> None:
    strict, _ = compile_schema(schema)
    tolerant, problems = compile_schema(schema, tolerant=True)
    assert (tolerant is None) == bool(problems)
    if strict is not None:
        assert tolerant is not None
        assert tolerant.fields == strict.fields  # the subset reads the same either way


def with_extras(schema: dict[str, Any], draw: st.DrawFn) -> dict[str, Any]:
    for prop in schema["properties"].values():
        if prop["type"] in ("number", "integer") and "default" not in prop:
            if draw(st.booleans()):
                prop["exclusiveMinimum"] = draw(st.integers(-60, 60))
            if draw(st.booleans()):
                prop["multipleOf"] = draw(st.sampled_from([1, 2, 5, 0.5, 0.1]))
            if draw(st.booleans()):
                prop["enum"] = draw(st.lists(st.integers(-5, 5), min_size=1, max_size=4, unique=True))
        elif prop["type"] == "string" and draw(st.booleans()):
            prop["pattern"] = "^(a+)+$"  # never run: a server's pattern could take forever
    return schema


@st.composite
def extended_case(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    schema = with_extras(draw(valid_schemas()), draw)
    content = draw(
        st.dictionaries(st.sampled_from([*schema["properties"], "zz"]), json_values | st.integers(-70, 70))
    )
    return schema, content


@SETTINGS
@given(extended_case())
def test_tolerant_validation_raises_only_answer_invalid(case: tuple[dict[str, Any], Any]) -> None:
    schema, content = case
    try:
        result = validate_answer(schema, content, tolerant=True)
    except AnswerInvalid as exc:  # the only error: every generated form is readable
        errors = exc.errors
        assert errors
        return
    form, _ = compile_schema(schema, tolerant=True)
    assert form is not None
    sent = form.to_wire(result)
    for name, value in sent.items():
        prop = schema["properties"][name]
        if "enum" in prop and prop["type"] != "string":
            assert value in prop["enum"]
            assert not isinstance(value, str)
        elif prop["type"] in ("number", "integer"):
            assert value > prop.get("exclusiveMinimum", -math.inf)
            step = prop.get("multipleOf")
            if isinstance(step, int) and isinstance(value, int):
                assert value % step == 0
