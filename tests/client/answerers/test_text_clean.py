"""clean(): nothing a terminal would interpret or hide survives."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_elicit.client.text import ELLIPSIS, MAX_MARKS, clean

ESC = "\x1b"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain text", "plain text"),
        ("clear\x1b[2Jscreen", "clearscreen"),
        ("up\x1b[1Aline", "upline"),
        ("colour \x1b[1;31mred\x1b[0m", "colour red"),
        ("title\x1b]0;pwned\x07 done", "title done"),
        ("title\x1b]2;pwned\x1b\\ done", "title done"),
        ("\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"),
        ("\x1b]8;;https://evil.example\x07click\x1b]8;;\x07", "click"),
        ("copy\x1b]52;c;ZXZpbA==\x07!", "copy!"),
        ("dcs\x1bPq#0;2;0;0;0\x1b\\ end", "dcs end"),
        ("apc\x1b_payload\x1b\\ pm\x1b^x\x1b\\ sos\x1bXy\x1b\\.", "apc pm sos."),
        ("c1 \x9b31mred \x9d0;t\x9c \x90dcs\x9c end", "c1 red   end"),
        ("unterminated \x1b]8;;https://evil.example hidden", "unterminated "),
        ("reset\x1bc charset\x1b(B save\x1b7", "reset charset save"),
        ("lone escape at the end\x1b", "lone escape at the end"),
        ("esc sp f is a sequence too: \x1b eaten", "esc sp f is a sequence too: aten"),
        ("https://good.example\rhttps://evil.example", "https://good.examplehttps://evil.example"),
        ("bell\x07 bs\x08 del\x7f nul\x00", "bell bs del nul"),
        ("abc\u202edcba\u202c", "abcdcba"),
        ("\u2066iso\u2069 \u2067rtl\u2069 \u2068fsi\u2069", "iso rtl fsi"),
        ("lrm\u200e rlm\u200f alm\u061c", "lrm rlm alm"),
        ("zero\u200bwidth\u200c\u200djoin\u2060word\ufeff", "zerowidthjoinword"),
        ("tags\U000e0041\U000e0042", "tags"),
        ("a\u2028b\u2029c\x85d", "a\nb\nc\nd"),
        ("keep\ttab\nand newline", "keep\ttab\nand newline"),
        ("lone \ud800 surrogate", "lone \ufffd surrogate"),
        ("[bold]not markup[/bold] :smile:", "[bold]not markup[/bold] :smile:"),
    ],
)
def test_vectors(raw: str, shown: str) -> None:
    assert clean(raw) == shown


def test_single_line() -> None:
    assert clean("a\nb\tc\u2028d\r\ne", single_line=True) == "a b c d e"


def test_max_length() -> None:
    assert clean("abcdef", max_length=6) == "abcdef"
    assert clean("abcdefg", max_length=6) == "abcde" + ELLIPSIS
    assert clean("\x1b[31m" * 10 + "abc", max_length=3) == "abc"
    assert clean("x" * 10_000_000, max_length=10) == "x" * 9 + ELLIPSIS
    with pytest.raises(ValueError, match="at least 1"):
        clean("x", max_length=0)


def test_combining_marks_are_capped() -> None:
    zalgo = "Z" + "\u0301\u0302\u0303" * 10 + "a"
    assert clean(zalgo) == "Z" + ("\u0301\u0302\u0303" * 10)[:MAX_MARKS] + "a"
    assert clean("e\u0301") == "e\u0301"  # ordinary accents stay


def _bad(ch: str, *, single_line: bool) -> bool:
    if ch in "\t\n":
        return single_line
    category = unicodedata.category(ch)
    return category in ("Cc", "Cf", "Cs", "Zl", "Zp") or ch == ESC


# Text biased towards everything dangerous: escape introducers, C1, bidi, zero-width, separators.
_DANGER = st.sampled_from(
    [
        *"\x1b\x07\x9b\x9c\x9d\x90\x98\x9e\x9f\r\n\t\x00\x7f\x85[]\\;P_^X8",
        *"\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
        *"\u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u061c\u2028\u2029",
        *"\u0301\U000e0041\ud800",
    ]
)
TEXT = st.lists(st.one_of(_DANGER, st.characters(), st.text(max_size=5)), max_size=60).map("".join)


@settings(max_examples=500, deadline=None)
@given(TEXT, st.booleans(), st.one_of(st.none(), st.integers(1, 50)))
def test_output_never_contains_a_dangerous_character(
    raw: str, single_line: bool, max_length: int | None
) -> None:
    shown = clean(raw, single_line=single_line, max_length=max_length)
    assert not any(_bad(ch, single_line=single_line) for ch in shown), repr(shown)
    if max_length is not None:
        assert len(shown) <= max_length


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_clean_is_idempotent(raw: str) -> None:
    once = clean(raw)
    assert clean(once) == once
