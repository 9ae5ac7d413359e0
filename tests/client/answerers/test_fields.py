"""The form model the terminal answerer uses: same rules as the engine, readable constraints."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_elicit.client.answerers.fields import OMIT, FormNotShown, form_fields, humanise, show_value
from mcp_elicit.wire import codec


def one(prop: dict[str, Any], required: bool = True) -> Any:
    schema = {"type": "object", "properties": {"f": prop}, "required": ["f"] if required else []}
    [field] = form_fields(schema)
    return field


@pytest.mark.parametrize(
    ("prop", "text", "value", "error"),
    [
        ({"type": "integer"}, "42", 42, None),
        ({"type": "integer"}, " -7 ", -7, None),
        ({"type": "integer"}, "3.0", 3, None),
        ({"type": "integer"}, "3.5", None, "must be a whole number, got 3.5"),
        ({"type": "integer"}, "1_000", None, "must be a whole number, such as 42"),
        ({"type": "integer"}, "0x10", None, "must be a whole number, such as 42"),
        ({"type": "number"}, "1e3", 1000.0, None),
        ({"type": "number"}, "nan", None, "must be a number, such as 4.2"),
        ({"type": "number"}, "1e999", None, "must be a finite number"),
        ({"type": "number", "maximum": 1}, "2", None, "must be at most 1 (got 2)"),
        ({"type": "integer"}, "", None, "this field is required"),
        ({"type": "string", "minLength": 2}, "a", None, "must be at least 2 characters long (got 1)"),
        ({"type": "string"}, "", "", None),
        (
            {"type": "string", "format": "date"},
            "2024-02-30",
            None,
            "must be a real calendar date (2024-02-30 does not exist)",
        ),
    ],
)
def test_parse_text_uses_the_schema_rules(
    prop: dict[str, Any], text: str, value: Any, error: str | None
) -> None:
    assert one(prop).parse_text(text) == (value, error)


def test_empty_optional_entries_are_left_out() -> None:
    assert one({"type": "string", "minLength": 3}, required=False).parse_text("") == (OMIT, None)
    assert one({"type": "number"}, required=False).parse_text("  ") == (OMIT, None)


def test_constraints_are_readable() -> None:
    assert one(
        {"type": "string", "minLength": 3, "maxLength": 50, "format": "email", "default": "a@b.example"}
    ).constraints() == [
        "required",
        "3–50 characters",
        "an email address, such as name@example.com",
        "default: a@b.example",
    ]
    assert one({"type": "number", "minimum": 0}, required=False).constraints() == [
        "optional",
        "a number",
        "at least 0",
    ]
    multi = {
        "type": "array",
        "items": {"type": "string", "enum": ["a", "b", "c"]},
        "minItems": 1,
        "maxItems": 1,
    }
    assert one(multi).constraints() == ["required", "choose exactly 1 of 3"]


def test_titles_are_shown_and_values_kept() -> None:
    legacy = one({"type": "string", "enum": ["#f00", "#0f0"], "enumNames": ["Red", "Green"]})
    assert [(c.value, c.label) for c in legacy.choices] == [("#f00", "Red"), ("#0f0", "Green")]
    assert show_value(legacy, "#0f0") == "Green"
    titled = one(
        {"type": "array", "items": {"anyOf": [{"const": "x", "title": "Ex"}, {"const": "y", "title": "Why"}]}}
    )
    assert show_value(titled, ["y", "x"]) == "Why, Ex"
    assert show_value(titled, []) == "(none selected)"


def test_look_alike_titles_are_told_apart() -> None:
    field = one(
        {
            "type": "string",
            "oneOf": [{"const": "keep", "title": "Delete\u200b"}, {"const": "delete", "title": "Delete"}],
        }
    )
    assert [c.label for c in field.choices] == ["Delete [keep]", "Delete [delete]"]


def test_prefill_prefers_previous_then_default() -> None:
    field = one({"type": "integer", "default": 5})
    assert field.prefill(None) == 5
    assert field.prefill({"f": 9}) == 9
    assert field.prefill({"f": "nine"}) == 5  # wrong kind: not pre-filled
    assert one({"type": "string"}, required=False).prefill(None) is OMIT


def test_schema_outside_the_subset() -> None:
    with pytest.raises(FormNotShown):
        form_fields({"type": "object", "properties": {"x": {"type": "object", "properties": {}}}})


def test_keywords_left_to_the_server_still_show_the_form() -> None:
    # The SDKs send pattern, exclusive bounds and numeric enums: shown, checked where cheap.
    fields = form_fields(
        {
            "type": "object",
            "properties": {
                "code": {"type": "string", "pattern": "^(a+)+$"},
                "n": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 5},
                "size": {"type": "integer", "enum": [1, 2]},
            },
        }
    )
    code, n, size = fields
    assert code.constraints() == ["optional"]
    assert n.constraints() == ["optional", "a whole number", "more than 0", "a multiple of 5"]
    assert n.parse_text("0") == (None, "must be more than 0 (got 0)")
    assert n.parse_text("10") == (10, None)
    assert [choice.label for choice in size.choices] == ["1", "2"]
    assert size.check(2) == ("2", None)


# -- numbers the JSON encoder could not send --------------------------------------------------
SAFE_INT = 2**53 - 1


@pytest.mark.parametrize("kind", ["integer", "number"])
@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("9" * 5000, "is too long for a number (5000 characters; at most 100)"),  # past int()'s limit
        ("-" + "1" * 4301, "is too long for a number (4302 characters; at most 100)"),
        ("1" * 101, "is too long for a number (101 characters; at most 100)"),
        (str(2**64), f"must be between -{SAFE_INT} and {SAFE_INT}: larger whole numbers cannot be sent"),
        (str(-(2**63) - 1), f"must be between -{SAFE_INT} and {SAFE_INT}: larger whole numbers"),
        (str(SAFE_INT + 1), f"must be between -{SAFE_INT} and {SAFE_INT}"),
    ],
)
def test_numbers_out_of_range_or_too_long_are_refused_while_typing(kind: str, text: str, error: str) -> None:
    value, problem = one({"type": kind}).parse_text(text)
    assert value is None
    assert problem is not None
    assert problem.startswith(error)


@pytest.mark.parametrize("text", [str(SAFE_INT), str(-SAFE_INT), "0" * 99 + "7"])
def test_the_edges_of_the_safe_range_are_accepted(text: str) -> None:
    assert one({"type": "integer"}).parse_text(text) == (int(text), None)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["integer", "number"]),
    st.one_of(
        st.text(alphabet="0123456789+-.eE ", max_size=120),
        st.integers().map(str),
        st.integers(min_value=0, max_value=6000).map(lambda n: "9" * n),
        st.text(max_size=30),
    ),
)
def test_parse_text_never_raises_and_what_it_accepts_can_be_sent(kind: str, text: str) -> None:
    value, problem = one({"type": kind}, required=False).parse_text(text)
    if problem is not None:
        assert value is None
        return
    if value is OMIT:
        return
    if isinstance(value, int):
        assert -SAFE_INT <= value <= SAFE_INT
    assert codec.loads(codec.dumps({"f": value})) == {"f": value}


# -- choices that show as nothing, or as another choice ----------------------------------------
def test_blank_and_invisible_choices_are_shown_as_what_they_are() -> None:
    """An empty or blank value (allowed by the subset) must not be a blank line in the list."""
    field = one({"type": "string", "enum": ["", " ", "\u3164", "x", "\u115f\u1160"]})
    assert [c.label for c in field.choices] == [
        '"" (empty text)',
        "(blank: U+0020)",
        "(blank: U+3164)",
        "x",
        "(blank: U+115F U+1160)",
    ]
    assert [c.value for c in field.choices] == ["", " ", "\u3164", "x", "\u115f\u1160"]
    assert show_value(field, "") == '"" (empty text)'
    multi = one({"type": "array", "items": {"type": "string", "enum": ["", "a"]}})
    assert show_value(multi, ["", "a"]) == '"" (empty text), a'


def test_an_invisible_title_falls_back_to_the_value() -> None:
    field = one(
        {
            "type": "string",
            "oneOf": [{"const": "delete", "title": "\u3164"}, {"const": "keep", "title": "Keep"}],
        }
    )
    assert [c.label for c in field.choices] == ["delete", "Keep"]


@pytest.mark.parametrize(
    "twin",
    [
        "Delete\ufe0f",  # a variation selector
        "Delete\u034f",  # the combining grapheme joiner
        "Delete\u3164",  # a Hangul filler: a letter that shows as blank
        "Delete\U000e0100",  # a supplementary variation selector
        " Delete",
        "De lete",
    ],
)
def test_titles_that_only_differ_by_what_does_not_show_are_told_apart(twin: str) -> None:
    field = one(
        {
            "type": "string",
            "oneOf": [{"const": "keep", "title": "Delete"}, {"const": "delete", "title": twin}],
        }
    )
    labels = [c.label for c in field.choices]
    assert labels[0] == "Delete [keep]"
    assert labels[1].endswith(" [delete]")


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("departure_date", "Departure date"),
        ("numGuests", "Num guests"),
        ("userID", "User ID"),
        ("HTTPServer", "HTTP server"),
        ("address_line_1", "Address line 1"),
        ("zip-code", "Zip code"),
        ("email", "Email"),
        ("URL", "URL"),
        ("prénomUsuel", "Prénom usuel"),
        ("名前", "名前"),
        ("__", "__"),  # nothing to read: the name as it is
    ],
)
def test_untitled_fields_get_a_readable_label(name: str, label: str) -> None:
    [field] = form_fields({"type": "object", "properties": {name: {"type": "string"}}})
    assert (field.label, field.name, field.show_name) == (label, name, False)
    assert humanise(name) == label


def test_a_title_is_the_label_and_the_name_is_shown_beside_it() -> None:
    [field] = form_fields(
        {"type": "object", "properties": {"dep": {"type": "string", "title": "Leaving on"}}}
    )
    assert (field.label, field.show_name) == ("Leaving on", True)
    [same] = form_fields({"type": "object", "properties": {"dep": {"type": "string", "title": "dep"}}})
    assert (same.label, same.show_name) == ("dep", False)


def test_fields_that_would_look_the_same_show_their_names() -> None:
    schema = {
        "type": "object",
        "properties": {
            "departure_date": {"type": "string"},
            "departureDate": {"type": "string"},
            "other": {"type": "string"},
        },
    }
    fields = form_fields(schema)
    assert [(f.label, f.show_name) for f in fields] == [
        ("Departure date", True),
        ("Departure date", True),
        ("Other", False),
    ]


def test_choices_that_differ_only_by_a_tab_or_a_zero_width_space_are_told_apart() -> None:
    """A server's form read tolerantly may hold them; the person must still see two choices."""
    field = one({"type": "string", "enum": ["a b", "a\tb", "a\u200bb"]})
    labels = [c.label for c in field.choices]
    assert len({" ".join(label.split()) for label in labels}) == 3, labels
    assert [c.value for c in field.choices] == ["a b", "a\tb", "a\u200bb"]
