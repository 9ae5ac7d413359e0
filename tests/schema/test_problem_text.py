"""What a schema problem says about a hostile schema: names are escaped and cut short.

A client reads ``requestedSchema`` from servers it does not control; the problems it finds end up
in exception messages (``InvalidSchemaError``) that applications log and print. The pointer holds
the server's property names and keywords, so it must not carry terminal escapes or megabytes.
"""

from __future__ import annotations

import re

import pytest

from mcp_elicit.client.capabilities import Declared
from mcp_elicit.client.errors import InvalidSchemaError
from mcp_elicit.client.inputs import parse_input_requests
from mcp_elicit.schema import SchemaProblem, SchemaSubsetError, check_schema, validate_answer
from mcp_elicit.schema.text import pointer

# Nothing a terminal would interpret or hide: C0/C1 controls, bidi and zero-width characters.
RAW = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]")

OSC8 = "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07"
HOSTILE_NAMES = [
    OSC8,
    "\x1b[2J\x1b[1Aname",
    "pay\u202eusd",
    "a\u2028b",
    "x" * 1_000_000,
    "\x1b]52;c;ZXZpbA==\x07" + "y" * 300,
]


def _form(name: str) -> dict[str, object]:
    return {"type": "object", "properties": {name: {"type": "string"}}}


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=range(len(HOSTILE_NAMES)))
def test_a_hostile_property_name_is_escaped_in_the_problem_text(name: str) -> None:
    (problem,) = check_schema(_form(name))
    assert problem.pointer == pointer("properties", name)  # the structured pointer stays exact
    shown = str(problem)
    assert RAW.search(shown) is None, repr(shown[:80])
    assert len(shown) < 400
    assert shown.startswith("/properties/")
    with pytest.raises(SchemaSubsetError) as info:
        validate_answer(_form(name), {})
    assert RAW.search(str(info.value)) is None
    assert len(str(info.value)) < 500


def test_a_hostile_keyword_is_escaped_too() -> None:
    schema = {"type": "object", "properties": {}, OSC8: 1}
    (problem,) = check_schema(schema)
    assert problem.pointer == pointer(OSC8)
    assert str(problem).startswith("/\\x1b]8;;https:~1~1evil.example\\x07click\\x1b]8;;\\x07: ")
    assert RAW.search(str(problem)) is None


def test_the_client_error_for_a_hostile_schema_is_safe_to_print() -> None:
    """The engine's refusal of a server's form (-32602 territory) names the problem, escaped."""
    raw = {
        "q": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "hi",
                "requestedSchema": {
                    "type": "object",
                    "properties": {OSC8: {"type": "object"}, "z" * 2_000_000: {"type": "string"}},
                },
            },
        }
    }
    with pytest.raises(InvalidSchemaError) as info:
        parse_input_requests(raw, Declared(frozenset({"form"}), False, False))
    message = str(info.value)
    assert RAW.search(message) is None, repr(message[:200])
    assert "\\x1b]8;;https:~1~1evil.example\\x07click" in message
    assert "property name contains the invisible or control character U+001B" in message
    assert "property name is longer than 256 characters" in message
    assert len(message) < 2000


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("", ""),
        ("/properties/age/minimum", "/properties/age/minimum"),
        ("/properties/caf\u00e9/type", "/properties/caf\u00e9/type"),  # printable text is kept
        ("/properties/a\\x1b", "/properties/a\\x5cx1b"),  # a backslash cannot fake an escape
        ("/properties/" + "n" * 300 + "/type", "/properties/" + "n" * 256 + "…/type"),
    ],
)
def test_show_pointer(raw: str, shown: str) -> None:
    from mcp_elicit.schema.text import show_pointer

    assert show_pointer(raw) == shown


def test_problem_str_of_ordinary_schemas_is_unchanged() -> None:
    assert str(SchemaProblem("/properties/a~1b/minimum", "must be a number")) == (
        "/properties/a~1b/minimum: must be a number"
    )
