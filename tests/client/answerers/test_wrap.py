"""Where the terminal answerer breaks its lines (``_wrap.spans``): words whole, nothing lost."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from mcp_elicit.client.answerers._wrap import spans


def lines(text: str, first: int, rest: int | None = None) -> list[str]:
    return [text[a:b] for a, b in spans(text, first, first if rest is None else rest)]


def test_lines_break_at_spaces_and_the_spaces_go() -> None:
    assert lines("reply to ana@example.com if the dates do not suit you", 20) == [
        "reply to",
        "ana@example.com if",
        "the dates do not",
        "suit you",
    ]


def test_the_first_line_and_the_others_have_their_own_room() -> None:
    assert lines("one two three four five", 9, 14) == ["one two", "three four", "five"]


def test_a_url_too_long_for_a_line_breaks_after_its_own_boundaries() -> None:
    url = "http://127.0.0.1:60197/connect/abc?flow=42&step=two"
    assert lines(url, 24) == ["http://127.0.0.1:60197/", "connect/abc?flow=42&", "step=two"]
    assert lines("see " + url, 30) == ["see http://127.0.0.1:60197/", "connect/abc?flow=42&step=two"]


def test_the_scheme_separator_is_never_split() -> None:
    for width in range(8, 40):
        for line in lines("https://example.com/a/b/c/d/e/f/g", width):
            assert not line.endswith(("https:", "https:/"))


def test_a_word_with_no_break_place_is_cut_only_when_it_must() -> None:
    token = "UJCpdLs3Hh8AzRNcpsyS2Ou3W5vXCfprCvXyji-0k0I"
    assert lines(token, 50) == [token]
    assert lines(token, 20) == ["UJCpdLs3Hh8AzRNcpsyS", "2Ou3W5vXCfprCvXyji-0", "k0I"]


def test_a_separator_never_starts_a_line() -> None:
    assert lines("Enter confirms · Esc cancels · you review", 16) == [
        "Enter confirms ·",
        "Esc cancels ·",
        "you review",
    ]
    assert lines("Send me the travel newsletter *", 14) == ["Send me the", "travel", "newsletter *"]
    # Together they do not fit on any line: then they part, at their space.
    assert lines("Send me the travel newsletter *", 10) == ["Send me", "the travel", "newsletter", "*"]


def test_a_no_break_space_holds_words_together() -> None:
    assert lines("a Example\u00a0Files b", 14) == ["a", "Example\u00a0Files", "b"]


def test_wide_characters_count_two_cells() -> None:
    assert lines("漢字漢字漢字", 5) == ["漢字", "漢字", "漢字"]


def test_no_text_is_one_empty_line() -> None:
    assert spans("", 10, 10) == [(0, 0)]
    assert spans("   ", 10, 10) == [(0, 0)]


@settings(max_examples=300, deadline=None)
@given(
    st.text(st.sampled_from(list("ab漢 /?&=.-é\u0301")), max_size=200),
    st.integers(1, 30),
    st.integers(1, 30),
)
def test_nothing_is_lost_and_no_line_is_too_wide(text: str, first: int, rest: int) -> None:
    got = spans(text, first, rest)
    # Put back together (the dropped spaces aside), the lines are the text.
    assert "".join(text[a:b] for a, b in got).replace(" ", "") == text.replace(" ", "")
    for n, (a, b) in enumerate(got):
        line = text[a:b]
        assert cell_len(line) <= max(first if n == 0 else rest, 2)  # 2: one wide character
        assert line == line.strip(" ")  # no space left at either end of a line
    # Only a word wider than a line is ever broken.
    shown = [text[a:b] for a, b in got]
    for word in text.split(" "):
        if word and cell_len(word) <= min(first, rest):
            assert any(word in line for line in shown), (word, shown)


def test_a_wide_character_wider_than_the_line_ends_it() -> None:
    # Found by hypothesis: the next word once began with the space after the wide character.
    assert lines("漢 =", 1, 2) == ["漢", "="]
