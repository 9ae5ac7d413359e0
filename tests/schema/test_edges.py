"""Edges beyond security.md §5.5/§5.6: each refused or accepted on purpose, with a message a person
can act on (numbers at the limits, ranges that leave no answer, ports, instants, names)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.schema import AnswerInvalid, check_schema, validate_answer
from mcp_elicit.schema.check import compile_schema
from mcp_elicit.schema.formats import check_datetime, check_uri, parse_datetime

from .test_properties import SETTINGS

SAFE = 2**53 - 1
URI_HINT = "must be an absolute URI with a scheme, such as https://example.com/page"


def form(prop: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"f": prop}, "required": ["f"]}


def problems(prop: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p.pointer, p.reason) for p in check_schema(form(prop))]


def answer_error(prop: dict[str, Any], value: object) -> str:
    with pytest.raises(AnswerInvalid) as info:
        validate_answer(form(prop), {"f": value})
    return info.value.errors["f"]


# -- integer fields whose bounds leave no answer -------------------------------------------------
@pytest.mark.parametrize(
    ("bounds", "problem"),
    [
        (
            {"minimum": 0.5, "maximum": 0.6},
            ("/properties/f/minimum", "no whole number is between minimum (0.5) and maximum (0.6)"),
        ),
        (
            {"minimum": -1.5, "maximum": -1.2},
            ("/properties/f/minimum", "no whole number is between minimum (-1.5) and maximum (-1.2)"),
        ),
        (
            {"minimum": 1e300},
            ("/properties/f/minimum", f"leaves no whole number an answer may hold (at most {SAFE})"),
        ),
        (
            {"maximum": -1e20},
            ("/properties/f/maximum", f"leaves no whole number an answer may hold (at least -{SAFE})"),
        ),
    ],
)
@pytest.mark.parametrize("tolerant", [False, True])
def test_an_integer_range_without_a_whole_number_is_refused(
    bounds: dict[str, float], problem: tuple[str, str], tolerant: bool
) -> None:
    """The client (tolerant) refuses it too: the person could never fill the field in."""
    found, reasons = compile_schema(form({"type": "integer", **bounds}), tolerant=tolerant)
    assert found is None
    assert [(p.pointer, p.reason) for p in reasons] == [problem]


@pytest.mark.parametrize(
    "bounds",
    [
        {"minimum": 0.5, "maximum": 1},
        {"minimum": 1.5},
        {"minimum": -0.0, "maximum": 0.0},
        {"minimum": float(SAFE), "maximum": float(SAFE) + 0.5},
        {"minimum": -1e300},
    ],
)
def test_an_integer_range_with_a_whole_number_is_kept(bounds: dict[str, float]) -> None:
    assert problems({"type": "integer", **bounds}) == []
    assert problems({"type": "number", **bounds}) == []


def test_a_number_field_may_have_huge_bounds() -> None:
    assert problems({"type": "number", "minimum": 1e300, "maximum": 1e308}) == []
    assert validate_answer(form({"type": "number", "minimum": 1e300}), {"f": 1e308}) == {"f": 1e308}


# -- numbers at the edges: each decided -----------------------------------------------------------
@pytest.mark.parametrize(
    ("kind", "value", "kept"),
    [
        ("integer", 5.0, 5),  # JSON has one number type: 5.0 is the integer 5
        ("integer", -0.0, 0),
        ("number", -0.0, -0.0),
        ("number", 1e308, 1e308),
        ("number", 5e-324, 5e-324),
        ("integer", SAFE, SAFE),
        ("integer", float(2**52), 2**52),
    ],
)
def test_numbers_accepted_at_the_edges(kind: str, value: float, kept: float) -> None:
    result = validate_answer(form({"type": kind}), {"f": value})
    assert result == {"f": kept}
    assert type(result["f"]) is type(kept)
    assert math.copysign(1, result["f"]) == math.copysign(1, kept)


@pytest.mark.parametrize(
    ("kind", "value", "message"),
    [
        ("integer", 2**53 + 1, f"must be between -{SAFE} and {SAFE}: larger whole numbers cannot be sent"),
        ("number", -(2**53) - 1, f"must be between -{SAFE} and {SAFE}: larger whole numbers cannot be sent"),
        ("integer", 1e308, f"must be between -{SAFE} and {SAFE}: larger whole numbers cannot be sent"),
        ("integer", 5e-324, "must be a whole number, got 5e-324"),
        ("integer", 0.1 + 0.2, "must be a whole number, got 0.30000000000000004"),
        ("number", math.nan, "must be a finite number, got nan"),
        ("number", -math.inf, "must be a finite number, got -inf"),
        ("number", False, "must be a number, got false"),
    ],
)
def test_numbers_refused_at_the_edges(kind: str, value: float, message: str) -> None:
    assert answer_error({"type": kind}, value).startswith(message)


# -- ports a client could never connect to -------------------------------------------------------
@pytest.mark.parametrize(
    "uri",
    [
        "https://a.example:65536/",
        "http://a.example:99999",
        "wss://[::1]:70000/socket",
        "https://a.example:" + "9" * 5000,  # past int()'s 4300 digits: refused, not a ValueError
    ],
)
def test_a_port_past_65535_is_refused(uri: str) -> None:
    assert check_uri(uri) == f"{URI_HINT} (the port after the host must be a number from 0 to 65535)"
    assert answer_error({"type": "string", "format": "uri"}, uri).endswith("from 0 to 65535)")


@pytest.mark.parametrize(
    "uri",
    [
        "https://a.example:65535/",
        "https://a.example:0/",
        "https://a.example:00443/",
        "foo://a.example:99999/",
    ],
)
def test_ports_in_range_and_other_schemes_are_kept(uri: str) -> None:
    assert check_uri(uri) is None


@SETTINGS
@given(st.integers(min_value=0, max_value=10**7), st.sampled_from(["http", "https", "ws", "wss", "ftp"]))
def test_an_accepted_web_uri_has_a_port_urllib_reads(port: int, scheme: str) -> None:
    uri = f"{scheme}://a.example:{port}/p"
    if check_uri(uri) is None:
        assert urlsplit(uri).port == port  # never "Port out of range" in the server's own code


# -- date-times a server could not convert to UTC -------------------------------------------------
@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-00:01"])
def test_an_instant_outside_the_years_1_to_9999_in_utc_is_refused(text: str) -> None:
    message = "must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z once converted to UTC"
    assert check_datetime(text) == message
    assert parse_datetime(text) is None
    assert answer_error({"type": "string", "format": "date-time"}, text) == message


@pytest.mark.parametrize(
    "text", ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00-14:00", "9999-12-31T23:59:59+01:00"]
)
def test_the_extreme_instants_python_can_convert_are_kept(text: str) -> None:
    parsed = parse_datetime(text)
    assert parsed is not None
    assert parsed.astimezone(dt.UTC).tzinfo is dt.UTC


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2026-02-30T10:00:00Z", "must be a real date and time (2026-02-30T10:00:00Z does not exist)"),
        ("2026-01-02T24:00:00Z", "must be a real date and time (2026-01-02T24:00:00Z does not exist)"),
        ("2026-01-02T10:00:00+24:00", "(the offset +24:00 does not exist)"),
        ("2016-12-31T23:59:60Z", "must not be a leap second (:60)"),
        ("2026-01-02T10:00:00", "must be a date and time with a time zone (RFC 3339)"),
    ],
)
def test_date_time_messages_say_what_is_wrong(text: str, message: str) -> None:
    found = check_datetime(text)
    assert found is not None
    assert message in found


@SETTINGS
@given(st.datetimes(), st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1))
def test_every_accepted_date_time_converts_to_utc(local: dt.datetime, minutes: int) -> None:
    sign = "-" if minutes < 0 else "+"
    text = local.isoformat(timespec="microseconds") + f"{sign}{abs(minutes) // 60:02}:{abs(minutes) % 60:02}"
    parsed = parse_datetime(text)
    if parsed is None:
        assert check_datetime(text) == (
            "must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z once converted to UTC"
        )
        return
    assert parsed.replace(tzinfo=None) == local
    assert parsed.astimezone(dt.UTC) == parsed


# -- names and texts a hostile client or server may choose ----------------------------------------
@pytest.mark.parametrize("name", ["__proto__", "constructor", "toString", "hasOwnProperty", " a", "$ref"])
def test_names_that_mean_something_elsewhere_are_plain_names(name: str) -> None:
    schema = {"type": "object", "properties": {name: {"type": "string"}}, "required": [name]}
    assert check_schema(schema) == []
    assert validate_answer(schema, {name: "x"}) == {name: "x"}
    with pytest.raises(AnswerInvalid) as info:
        validate_answer(schema, {name: "x", "__proto__" if name != "__proto__" else "x": {}})
    assert list(info.value.errors.values()) == [
        f"unknown field '{'__proto__' if name != '__proto__' else 'x'}'"
    ]
