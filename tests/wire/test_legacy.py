"""The 2025-11-25 wire, sans I/O: the handshake's parsers and the client's ``ElicitResult``.

Everything here reads what a client sent, so each reader is also driven with arbitrary JSON: it
either returns a well-formed value or raises -32602 with a message, never anything else."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.wire import legacy
from mcp_elicit.wire.errors import INVALID_PARAMS, McpError
from mcp_elicit.wire.meta import SERVER_INFO_KEY

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
ACTIONS = st.sampled_from(["accept", "decline", "cancel"])


def read_or_refusal(read: Any, *args: Any) -> tuple[Any, McpError | None]:
    """What ``read(*args)`` returns, or the McpError it raised."""
    try:
        return read(*args), None
    except McpError as exc:
        return None, exc


@pytest.mark.parametrize(
    ("requested", "answered"),
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-11-25"),  # older than we speak: our latest legacy one
        ("2026-07-28", "2025-11-25"),  # never a 2026 version inside initialize
        ("2099-01-01", "2025-11-25"),
        (None, "2025-11-25"),
    ],
)
def test_negotiate_answers_a_legacy_version_whatever_was_asked(requested: object, answered: str) -> None:
    assert legacy.negotiate(requested) == answered


@given(JSON)
def test_negotiate_never_answers_a_version_it_does_not_speak(requested: object) -> None:
    assert legacy.negotiate(requested) in legacy.LEGACY_VERSIONS


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({}, "protocolVersion"),
        ({"protocolVersion": "", "capabilities": {}, "clientInfo": {"name": "c"}}, "protocolVersion"),
        ({"protocolVersion": 20251125, "capabilities": {}, "clientInfo": {"name": "c"}}, "protocolVersion"),
        ({"protocolVersion": "2025-11-25", "clientInfo": {"name": "c"}}, "capabilities"),
        ({"protocolVersion": "2025-11-25", "capabilities": [], "clientInfo": {"name": "c"}}, "capabilities"),
        ({"protocolVersion": "2025-11-25", "capabilities": {}}, "clientInfo"),
        ({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"version": "1"}}, "clientInfo"),
    ],
)
def test_read_initialize_names_what_is_missing(params: dict[str, Any], needle: str) -> None:
    with pytest.raises(McpError) as info:
        legacy.read_initialize(params)
    assert info.value.code == INVALID_PARAMS
    assert needle in info.value.message


@given(st.dictionaries(st.sampled_from(["protocolVersion", "capabilities", "clientInfo", "x"]), JSON))
def test_read_initialize_parses_or_refuses_with_invalid_params(params: dict[str, Any]) -> None:
    read, refusal = read_or_refusal(legacy.read_initialize, params)
    if refusal is not None:
        assert refusal.code == INVALID_PARAMS
        return
    assert isinstance(read.requested, str)
    assert read.requested
    assert isinstance(read.capabilities, dict)
    assert isinstance(read.client_info["name"], str)


def test_a_2025_06_18_session_is_never_believed_to_take_urls() -> None:
    declared = {"elicitation": {"form": {}, "url": {}}, "sampling": {}}
    assert legacy.session_capabilities(declared, "2025-06-18") == {
        "elicitation": {"form": {}},
        "sampling": {},
    }
    assert legacy.session_capabilities({"elicitation": {"url": {}}}, "2025-06-18") == {"elicitation": {}}
    assert legacy.session_capabilities(declared, "2025-11-25") == declared


def test_a_result_loses_what_2026_added_and_keeps_the_rest() -> None:
    result = {
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
        "content": [],
        "_meta": {SERVER_INFO_KEY: {"name": "s"}, "trace": "t"},
    }
    assert legacy.legacy_result(result) == {"content": [], "_meta": {"trace": "t"}}
    assert legacy.legacy_result({"content": [], "_meta": {SERVER_INFO_KEY: {}}}) == {"content": []}


def test_a_url_question_carries_its_elicitation_id() -> None:
    url = {"mode": "url", "message": "Connect", "url": "https://example.com/c"}
    assert legacy.elicitation_request(url, "e-1") == {**url, "elicitationId": "e-1"}
    with pytest.raises(ValueError, match="elicitationId"):
        legacy.elicitation_request(url, None)
    form = {"mode": "form", "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}
    assert legacy.elicitation_request(form, None) == form


def test_a_2025_06_18_form_is_written_in_that_revisions_schema() -> None:
    titled = [{"const": "s", "title": "Small"}, {"const": "m"}]
    schema = {
        "type": "object",
        "properties": {
            "size": {"type": "string", "title": "Size", "oneOf": titled, "default": "s"},
            "old_style": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
            "plain": {"type": "string", "enum": ["x", "y"], "default": "x"},
            "note": {"type": "string", "maxLength": 40, "format": "email", "default": "a@b.c"},
            "count": {"type": "number", "maximum": 9, "default": 2.5},
            "gift": {"type": "boolean", "default": True},
        },
        "required": ["size"],
    }
    form = {"mode": "form", "message": "Order?", "requestedSchema": schema}
    assert legacy.elicitation_request(form, None, "2025-06-18") == {
        "message": "Order?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "size": {"type": "string", "title": "Size", "enum": ["s", "m"], "enumNames": ["Small", "m"]},
                "old_style": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
                "plain": {"type": "string", "enum": ["x", "y"]},
                "note": {"type": "string", "maxLength": 40, "format": "email"},
                "count": {"type": "number", "maximum": 9},
                "gift": {"type": "boolean", "default": True},
            },
            "required": ["size"],
        },
    }
    assert form["requestedSchema"] is schema  # the engine's copy is left as it was
    assert "default" in schema["properties"]["size"]
    many = {"type": "array", "items": {"type": "string", "enum": ["a"]}}
    with pytest.raises(ValueError, match="the form's field 'tags' is a multi-select"):
        legacy.form_for_2025_06_18({"type": "object", "properties": {"tags": many}})


@pytest.mark.parametrize(
    ("result", "read"),
    [
        ({"action": "accept", "content": {"a": 1}}, {"action": "accept", "content": {"a": 1}}),
        ({"action": "accept"}, {"action": "accept"}),  # a URL question's accept has no content
        ({"action": "decline"}, {"action": "decline"}),
        ({"action": "cancel", "_meta": {"x": 1}}, {"action": "cancel"}),
        # A decline or cancel is one whatever it carries: its content never reaches a handler.
        ({"action": "decline", "content": {"a": 1}}, {"action": "decline"}),
        ({"action": "cancel", "content": {}}, {"action": "cancel"}),
        ({"action": "decline", "content": [1]}, {"action": "decline"}),
    ],
)
def test_read_elicit_result_as_the_engine_reads_answers(result: dict[str, Any], read: dict[str, Any]) -> None:
    assert legacy.read_elicit_result(result) == read


@pytest.mark.parametrize(
    ("result", "needle"),
    [
        ([], "is not an object"),
        ({"action": "maybe"}, ".action must be one of accept, decline, cancel"),
        ({}, ".action must be one of accept, decline, cancel"),
        ({"action": "accept", "content": [1]}, ".content must be an object"),
    ],
)
def test_read_elicit_result_refuses_what_is_not_an_elicit_result(result: object, needle: str) -> None:
    with pytest.raises(McpError) as info:
        legacy.read_elicit_result(result)
    assert info.value.code == INVALID_PARAMS
    assert info.value.message.startswith("Invalid params: the client's ElicitResult")
    assert needle in info.value.message


@given(JSON | st.fixed_dictionaries({"action": ACTIONS}, optional={"content": JSON, "_meta": JSON}))
def test_read_elicit_result_reads_or_refuses_with_invalid_params(result: object) -> None:
    read, refusal = read_or_refusal(legacy.read_elicit_result, result)
    if refusal is not None:
        assert refusal.code == INVALID_PARAMS
        return
    assert read["action"] in ("accept", "decline", "cancel")
    assert set(read) <= {"action", "content"}
    if "content" in read:
        assert read["action"] == "accept"
        assert isinstance(read["content"], dict)


def test_url_elicitation_required_is_32042_with_the_elicitations() -> None:
    asked = [{"mode": "url", "message": "Connect", "url": "https://example.com", "elicitationId": "e"}]
    error = legacy.url_elicitation_required(asked, "Open these first")
    assert error.code == -32042
    assert error.data == {"elicitations": asked}


@pytest.mark.parametrize("value", [None, "2025-11-25", "2025-06-18"])
def test_check_version_header_takes_the_sessions_versions(value: str | None) -> None:
    legacy.check_version_header(value)


@pytest.mark.parametrize(
    ("value", "shown"),
    # Quoted when it is not shown as it is; "..." only when it is cut.
    [("2024-11-05", "2024-11-05"), ("x" * 50, "'" + "x" * 40 + "'..."), ("a\x1bb", "'a\\x1bb'"), ("", "''")],
)
def test_check_version_header_refuses_the_rest_with_invalid_request(value: str, shown: str) -> None:
    with pytest.raises(McpError) as refused:
        legacy.check_version_header(value)
    assert refused.value.code == -32600
    assert refused.value.message.startswith(f"Invalid request: MCP-Protocol-Version {shown} is not")
    assert "2025-11-25, 2025-06-18" in refused.value.message


@pytest.mark.parametrize(
    ("value", "modern"),
    [
        ("2026-07-28", True),
        ("2027-01-01", True),
        ("2025-11-25", False),
        ("banana", False),
        ("", False),
        ("2026-07-28x", False),
        ("9999-99-99", True),
        (None, False),
        ("２０２６-07-28", False),
    ],
)
def test_a_modern_version_is_a_date_from_2026_07_28_on(value: object, modern: bool) -> None:
    assert legacy.is_modern_version(value) is modern
