"""Integers past 64 bits: orjson reads a literal outside -2**63 .. 2**64 - 1 as a rounded float,
so ``codec.loads`` refuses the text (``IntegerOutOfRange``) instead, and ``parse_message`` answers
with the code of the place the integer is in. Every other text reads as orjson reads it."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.wire import codec
from mcp_elicit.wire.errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR
from mcp_elicit.wire.jsonrpc import InvalidMessage, Request, parse_message
from tests.strategies import past_64_bits

LOW, HIGH = -(2**63), 2**64 - 1

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(LOW - 5, LOW + 5)
    | st.integers(HIGH - 5, HIGH + 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.from_regex(r"[0-9]{15,25}", fullmatch=True),  # digit runs inside strings
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same JSON kind all the way down (1 is not 1.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


def at(value: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


@given(json_values, st.booleans())
def test_a_text_is_read_exactly_or_refused_naming_where(value: Any, as_str: bool) -> None:
    text = json.dumps(value)
    data: str | bytes = text if as_str else text.encode()
    if not past_64_bits(value):
        assert same(codec.loads(data), json.loads(text))
        return
    with pytest.raises(codec.IntegerOutOfRange) as caught:
        codec.loads(data)
    error = caught.value
    assert same(error.value, json.loads(text))
    assert past_64_bits(at(error.value, error.path))
    number = str(at(error.value, error.path))
    assert error.literal == number or error.literal.startswith(number[:20] + "...(")


@pytest.mark.parametrize("number", [HIGH + 1, 2**64, LOW - 1, 10**19 * 5, -(10**30)])
def test_each_side_of_the_range(number: int) -> None:
    with pytest.raises(codec.IntegerOutOfRange, match=rf"the integer {number} is outside"):
        codec.loads(f'{{"n": {number}}}')
    assert codec.loads(f'{{"m": {HIGH}, "l": {LOW}}}') == {"m": HIGH, "l": LOW}


def test_long_digits_in_strings_and_fractions_read_as_before() -> None:
    text = '{"id": "12345678901234567890123", "x": 1.2345678901234567890123, "y": 9223372036854775807e0}'
    value = codec.loads(text)
    assert value == {"id": "12345678901234567890123", "x": 1.2345678901234567, "y": 9.223372036854776e18}
    assert type(value["y"]) is float


def test_a_long_literal_is_shown_cut() -> None:
    with pytest.raises(codec.IntegerOutOfRange) as caught:
        codec.loads("[" + "7" * 300 + "]")
    assert caught.value.literal == "7" * 20 + "...(300 digits)"
    assert caught.value.path == (0,)


def test_deep_text_with_a_long_digit_run_is_a_parse_error_not_a_recursion_error() -> None:
    deep = "[" * 1010 + "1234567890123456789" + "]" * 1010
    with pytest.raises(codec.JSONDecodeError, match="nested too deeply"):
        codec.loads(deep)
    with pytest.raises(InvalidMessage) as caught:
        parse_message(deep)
    assert caught.value.code == PARSE_ERROR


def message(body: str) -> InvalidMessage:
    with pytest.raises(InvalidMessage) as caught:
        parse_message(body)
    return caught.value


def test_in_a_requests_params_it_is_invalid_params_with_the_requests_id() -> None:
    error = message(
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", '
        '"params": {"name": "t", "arguments": {"n": [1, 18446744073709551616]}}}'
    )
    assert error.code == INVALID_PARAMS
    assert error.reply_id == 7
    assert error.message == (
        "Invalid params: the integer 18446744073709551616 at params.arguments.n[1] "
        "is outside -2**63 .. 2**64 - 1"
    )


def test_as_an_id_it_is_the_invalid_id_it_always_was() -> None:
    error = message('{"jsonrpc": "2.0", "id": 18446744073709551616, "method": "tools/list"}')
    assert error.code == INVALID_REQUEST
    assert error.reply_id is None
    assert "integer ids must fit in 64 bits" in error.message


def test_in_a_response_or_a_notification_it_is_an_invalid_request_without_an_id_to_answer() -> None:
    response = message('{"jsonrpc": "2.0", "id": 3, "result": {"n": -9223372036854775809}}')
    assert (response.code, response.reply_id) == (INVALID_REQUEST, None)
    assert "at result.n is outside" in response.message
    note = message(
        '{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"q": 99999999999999999999}}'
    )
    assert (note.code, note.reply_id) == (INVALID_REQUEST, None)
    assert "at params.q is outside" in note.message


def test_another_fault_of_the_envelope_is_named_first() -> None:
    error = message('{"jsonrpc": "1.0", "id": 1, "method": "x", "params": {"n": 99999999999999999999}}')
    assert error.code == INVALID_REQUEST
    assert '"jsonrpc" must be "2.0"' in error.message


def test_a_hostile_key_on_the_path_is_escaped_and_cut() -> None:
    key = "\x1b]8;;https://evil\x07" + "k" * 100
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {key: 2**70}})
    error = message(body)
    assert "\x1b" not in error.message
    assert "\x07" not in error.message
    assert '["\\u001b]8;;https://evil\\u0007' in error.message
    assert "k" * 41 not in error.message


def test_in_range_integers_are_untouched() -> None:
    parsed = parse_message(json.dumps({"jsonrpc": "2.0", "id": HIGH, "method": "x", "params": {"n": LOW}}))
    assert parsed == Request(HIGH, "x", {"n": LOW})
