"""What the envelope parser says about text that is not Unicode, and about duplicate keys."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.wire.errors import INVALID_REQUEST, PARSE_ERROR
from mcp_elicit.wire.jsonrpc import InvalidMessage, Request, parse_message

GOOD = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"NAME"}}'


def refusal(raw: bytes | bytearray | memoryview | str) -> str:
    with pytest.raises(InvalidMessage) as info:
        parse_message(raw)
    assert info.value.code == PARSE_ERROR
    assert info.value.request_id is None
    return info.value.message


@pytest.mark.parametrize(
    ("bad", "byte"),
    [
        (b"\xff", "0xff"),
        (b"\xc3", "0xc3"),  # a truncated two-byte sequence
        (b"\xc0\xaf", "0xc0"),  # an overlong '/'
        (b"\xed\xa0\x80", "0xed"),  # a surrogate encoded in UTF-8
        (b"\xf4\x90\x80\x80", "0xf4"),  # beyond U+10FFFF
    ],
)
def test_invalid_utf8_is_named_with_the_byte_and_its_offset(bad: bytes, byte: str) -> None:
    raw = GOOD.replace(b"NAME", b"NA" + bad)
    offset = raw.index(bad)
    assert refusal(raw) == f"Parse error: the message is not valid UTF-8 (byte {byte} at offset {offset})"
    assert refusal(bytearray(raw)).startswith("Parse error: the message is not valid UTF-8")
    assert refusal(memoryview(raw)).startswith("Parse error: the message is not valid UTF-8")


@pytest.mark.parametrize("escape", [b"\\ud800", b"\\udbff", b"\\udc00", b"\\udfff", b"\\udc00\\ud800"])
def test_a_lone_surrogate_escape_is_named_as_such(escape: bytes) -> None:
    message = refusal(GOOD.replace(b"NAME", b"NA" + escape))
    assert message.startswith("Parse error: the message holds a lone surrogate (\\ud800-\\udfff without")


def test_a_str_holding_a_lone_surrogate_is_refused_not_an_encoding_crash() -> None:
    """``parse_message`` is public and takes str: measuring such a str used to raise
    UnicodeEncodeError out of it."""
    message = refusal(GOOD.decode().replace("NAME", "NA\ud800"))
    assert "lone surrogate" in message
    assert parse_message(GOOD.decode().replace("NAME", "\U0001f600")) == Request(
        1, "tools/call", {"name": "\U0001f600"}
    )


def test_a_paired_surrogate_escape_is_the_character() -> None:
    assert parse_message(GOOD.replace(b"NAME", b"\\ud83d\\ude00")) == Request(
        1, "tools/call", {"name": "\U0001f600"}
    )


def test_a_byte_order_mark_is_a_parse_error_that_names_it() -> None:
    assert "byte order mark (BOM)" in refusal(b"\xef\xbb\xbf" + GOOD)


def test_duplicate_keys_the_last_one_wins() -> None:
    raw = (
        b'{"jsonrpc":"2.0","id":1,"id":2,"method":"a","method":"tools/call","params":{"name":"x",'
        b'"inputResponses":{"k":{"action":"decline"},"k":{"action":"accept"}},"name":"y"}}'
    )
    assert parse_message(raw) == Request(
        2, "tools/call", {"name": "y", "inputResponses": {"k": {"action": "accept"}}}
    )


@given(
    st.text(st.characters(categories=["Cs", "Ll", "Nd", "P"]), max_size=40), st.sampled_from([GOOD.decode()])
)
def test_any_str_gives_a_message_or_invalid_message(noise: str, good: str) -> None:
    for text in (noise, good.replace("NAME", noise), good[: len(noise)] + noise):
        codes = set()
        try:
            parse_message(text)
        except InvalidMessage as exc:
            codes.add(exc.code)
        assert codes <= {PARSE_ERROR, INVALID_REQUEST}
