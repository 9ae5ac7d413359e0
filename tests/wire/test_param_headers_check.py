"""The server's check of ``Mcp-Param-*`` headers against a ``tools/call``'s arguments."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.wire.errors import HEADER_MISMATCH, McpError
from mcp_elicit.wire.http import encode_header_value, read_header_value
from mcp_elicit.wire.param_headers import (
    InvalidHeaderAnnotation,
    check_param_headers,
    header_map,
    param_headers,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
        "limit": {"type": "integer", "x-mcp-header": "Limit"},
        "options": {"type": "object", "properties": {"tier": {"type": "string", "x-mcp-header": "Tier"}}},
    },
}
MAPPING = header_map(SCHEMA)


def lower(headers: dict[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


@given(
    st.fixed_dictionaries(
        {},
        optional={
            "region": st.text(max_size=30),
            "dry": st.booleans(),
            "limit": st.integers(min_value=-(2**63), max_value=2**63 - 1),
            "options": st.fixed_dictionaries({}, optional={"tier": st.text(max_size=10)}),
        },
    )
)
def test_what_our_client_sends_is_what_the_server_accepts(arguments: dict[str, Any]) -> None:
    check_param_headers(lower(param_headers(MAPPING, arguments)), MAPPING, arguments)


@pytest.mark.parametrize(
    ("arguments", "headers", "needle"),
    [
        ({"region": "eu"}, {}, "Mcp-Param-Region header is required"),
        ({"dry": True}, {"mcp-param-dry-run": "True"}, "does not match"),
        ({"limit": 7}, {"mcp-param-limit": "07x"}, "does not match"),
        ({"limit": 7}, {"mcp-param-limit": "8"}, "does not match"),
        ({"options": {"tier": "gold"}}, {"mcp-param-tier": "silver"}, "'options.tier'"),
        ({"region": "é"}, {"mcp-param-region": "é"}, "visible ASCII"),
        ({"region": "x"}, {"mcp-param-region": "=?base64?!!?="}, "base64"),
        (
            {},
            {"mcp-param-limit": "500"},
            "Mcp-Param-Limit header is sent, but the argument 'limit' has no value",
        ),
        ({"limit": None}, {"mcp-param-limit": "500"}, "has no value in the body"),
        ({"options": {"tier": ["gold"]}}, {"mcp-param-tier": "gold"}, "the argument 'options.tier' has no"),
    ],
)
def test_disagreements_are_header_mismatch(
    arguments: dict[str, Any], headers: dict[str, str], needle: str
) -> None:
    with pytest.raises(McpError) as info:
        check_param_headers(headers, MAPPING, arguments)
    assert info.value.code == HEADER_MISMATCH
    assert needle in info.value.message


def test_numbers_compare_by_value_and_nulls_need_no_header() -> None:
    check_param_headers({"mcp-param-limit": "42"}, MAPPING, {"limit": 42.0})
    check_param_headers({"mcp-param-limit": "42.0"}, MAPPING, {"limit": 42})
    check_param_headers({}, MAPPING, {"region": None, "options": None})


@given(
    headers=st.dictionaries(
        st.sampled_from(["mcp-param-region", "mcp-param-dry-run", "mcp-param-limit", "mcp-param-tier"]),
        st.text(max_size=60) | st.text(max_size=20).map(encode_header_value),
    ),
    arguments=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=10,
    ),
)
def test_any_input_gives_pass_or_header_mismatch(headers: dict[str, str], arguments: Any) -> None:
    code = None
    try:
        check_param_headers(headers, MAPPING, arguments)
    except McpError as exc:
        code = exc.code
    assert code in (None, HEADER_MISMATCH)


@given(st.text(max_size=60))
def test_read_header_value_gives_text_or_header_mismatch(raw: str) -> None:
    try:
        value: str | int = read_header_value(raw, "Mcp-Name")
    except McpError as exc:
        value = exc.code
    assert value in (HEADER_MISMATCH, raw) or raw.startswith("=?base64?")


def test_the_map_follows_properties_in_document_order() -> None:
    assert list(MAPPING.items()) == [
        (("region",), "Region"),
        (("dry",), "Dry-Run"),
        (("limit",), "Limit"),
        (("options", "tier"), "Tier"),
    ]


STRING_WITH_HEADER = {"type": "string", "x-mcp-header": "Hidden"}


@pytest.mark.parametrize(
    ("schema", "pointer"),
    [
        ({"$defs": {"R": STRING_WITH_HEADER}}, "/$defs/R"),
        ({"properties": {"r": {"anyOf": [{"type": "null"}, STRING_WITH_HEADER]}}}, "/properties/r/anyOf/1"),
        ({"properties": {"r": {"type": "array", "items": STRING_WITH_HEADER}}}, "/properties/r/items"),
        ({"additionalProperties": STRING_WITH_HEADER}, "/additionalProperties"),
        ({"patternProperties": {"^a/b~": STRING_WITH_HEADER}}, "/patternProperties/^a~1b~0"),
        ({"if": {"properties": {"x": STRING_WITH_HEADER}}}, "/if/properties/x"),
        ({"allOf": [{"properties": {"x": STRING_WITH_HEADER}}]}, "/allOf/0/properties/x"),
    ],
)
def test_an_annotation_no_argument_path_leads_to_is_invalid(schema: dict[str, Any], pointer: str) -> None:
    # Silently ignoring it would let a call go out without the header the server relies on.
    with pytest.raises(InvalidHeaderAnnotation) as info:
        header_map({"type": "object", **schema})
    assert str(info.value) == (
        f"x-mcp-header at {pointer}: only a property reached through 'properties' alone may carry one"
    )


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"x-mcp-header": "Root"}, "x-mcp-header on the schema root"),
        ({"properties": {"a": {"type": "string", "x-mcp-header": None}}}, "property a: x-mcp-header is not"),
        (
            {"properties": {"a": {"type": "number", "x-mcp-header": "A"}}},
            "needs an integer, string or boolean",
        ),
        # A type list (a nullable string, as many servers write it) or object: once a TypeError
        # (unhashable) out of Client.list_tools instead of leaving the tool out.
        (
            {"properties": {"a": {"type": ["string", "null"], "x-mcp-header": "A"}}},
            "needs an integer, string or boolean",
        ),
        ({"properties": {"a": {"type": {}, "x-mcp-header": "A"}}}, "needs an integer, string or boolean"),
    ],
)
def test_bad_annotations_on_the_properties_chain_say_what_is_wrong(
    schema: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidHeaderAnnotation, match=message):
        header_map(schema)


def test_a_deep_properties_chain_is_followed() -> None:
    schema: dict[str, Any] = {"type": "string", "x-mcp-header": "Deep"}
    for level in range(200):
        schema = {"type": "object", "properties": {f"p{level}": schema}}
    ((path, token),) = header_map(schema).items()
    assert (len(path), path[0], token) == (200, "p199", "Deep")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["properties", "items", "anyOf", "$defs", "type", "x-mcp-header", "a", "not"]),
            inner,
            max_size=5,
        )
    ),
    max_leaves=30,
)


@given(JSON)
def test_any_schema_gives_a_map_or_invalid_header_annotation(schema: Any) -> None:
    try:
        mapping = header_map(schema)
    except InvalidHeaderAnnotation:
        return
    assert all(isinstance(token, str) and path for path, token in mapping.items())
