"""Property-based tests of ``mcp-elicit schema lint``'s report: it never raises, it fails exactly
when the server would refuse the form, and one field's problems never hide another's."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_elicit.cli.schema_lint import LintReport, lint_schema
from mcp_elicit.schema import SchemaError, check_schema, form_spec
from tests.schema.test_properties import json_values, mutated_schemas, valid_schemas

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Fields that ask for secrets or leave the subset, to mix into generated schemas.
SECRET_FIELDS = st.sampled_from(["password", "api_key", "apiKey", "token", "pin_code", "ssn"])
BAD_FIELDS = st.sampled_from(
    [
        {"type": "string", "pattern": "x"},
        {"type": "string", "default": 5},
        {"type": "object"},
        {"type": ["string", "null"]},
        {"type": "integer", "minimum": "1"},
        {"enum": ["a"]},
        {"type": "string", "enum": []},
    ]
)


@st.composite
def schemas_with_secrets(draw: st.DrawFn) -> Any:
    schema = draw(st.one_of(valid_schemas(), mutated_schemas()))
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(properties, dict):
        for _ in range(draw(st.integers(0, 2))):
            properties[draw(SECRET_FIELDS)] = {"type": "string"}
        for _ in range(draw(st.integers(0, 2))):
            properties[f"bad_{len(properties)}"] = copy.deepcopy(draw(BAD_FIELDS))
    return schema


def refused(schema: Any) -> bool:
    """Whether the server's ctx.elicit would refuse this form."""
    try:
        form_spec(schema)
    except SchemaError:
        return True
    except (TypeError, AttributeError, ValueError):  # not a mapping at all (a list, a number...)
        return True
    return False


@SETTINGS
@given(st.one_of(json_values, mutated_schemas(), schemas_with_secrets()))
def test_the_lint_never_raises_and_fails_exactly_when_the_form_is_refused(schema: Any) -> None:
    report = lint_schema(schema, "a message")
    assert isinstance(report, LintReport)
    assert all(isinstance(line, str) and "\n" not in line for line in report.problems)
    if check_schema(schema) or refused(schema):
        assert report.problems
    else:
        assert report.problems == []


@SETTINGS
@given(
    schemas_with_secrets(),
    st.one_of(SECRET_FIELDS, st.just("added")),
    BAD_FIELDS | st.just({"type": "string"}),
)
def test_adding_a_field_never_hides_the_problems_of_the_others(schema: Any, name: str, prop: Any) -> None:
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return
    if name in schema["properties"]:
        return
    if isinstance(schema.get("required"), list) and name in schema["required"]:
        return  # adding it rightly ends "'<name>' is not one of the properties"
    before = lint_schema(schema)
    if len(before.problems) > 50:  # far from the caps on problems and warnings
        return
    grown = copy.deepcopy(schema)
    grown["properties"][name] = copy.deepcopy(prop)
    after = lint_schema(grown)
    assert set(before.problems) <= set(after.problems)
