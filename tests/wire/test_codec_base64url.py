"""wire.codec's base64url: unpadded, and canonical: a string decodes only if encoding its bytes
gives the same string back."""

from __future__ import annotations

import base64
import binascii

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mcp_elicit.wire.codec import b64url_decode, b64url_encode

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _reference_decode(text: str) -> bytes | None:
    """The definition: decode leniently, re-encode, accept only a string that comes back as is."""
    if any(c not in ALPHABET for c in text):
        return None
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except binascii.Error:
        return None
    return raw if base64.urlsafe_b64encode(raw).rstrip(b"=").decode() == text else None


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=200))
def test_encode_is_unpadded_base64url_and_decodes_back(data: bytes) -> None:
    text = b64url_encode(data)
    assert text == base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")
    assert b64url_decode(text) == data


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=ALPHABET + "+/= \n.\x00é", max_size=14))
@example("")
@example("AA")
@example("AB")
@example("AAA")
@example("AAB")
@example("AA==")
def test_decode_accepts_exactly_the_strings_that_re_encode_to_themselves(text: str) -> None:
    expected = _reference_decode(text)
    if expected is None:
        with pytest.raises(ValueError, match="base64url"):
            b64url_decode(text)
    else:
        assert b64url_decode(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "AAE=",  # padded
        "AAE==",
        "A",  # impossible length
        "AAAAA",
        "AB",  # non-zero unused bits
        "AAB",
        "+/8A",  # the standard alphabet
        "AA A",  # whitespace
        "AAA\n",
        "Ａ",  # non-ASCII
        "=AAA",
        "AA=A",
    ],
)
def test_non_canonical_strings_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="base64url"):
        b64url_decode(text)
