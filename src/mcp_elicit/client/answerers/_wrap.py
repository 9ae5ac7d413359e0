"""Where the terminal answerer breaks its lines: at spaces, never inside a word.

A terminal folds a line that is too wide at the last column, whatever is there (``http:/`` on
one line, ``/127.0.0.1`` on the next; ``ana@example`` and ``.com``), and the continuation starts
at column 0, under nothing. So every line is wrapped here before it is printed, to the width
of the terminal, each continuation indented (a hanging indent) under the start of the text.

Lines break at spaces, which are dropped at the break. A word longer than a whole line (a URL, a
long address) is the only thing ever broken, and then after one of :data:`BREAK_AFTER` (after
the last of a run of them, so ``https://`` stays whole); only a word with no such place that
fits is cut at the line's end. Nothing is left out or elided: put back together, the lines are
the text.

Widths are terminal cells (rich's ``cell_len``: a CJK character takes two, a combining mark
none), the measure the terminal itself folds by.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from rich.cells import cell_len, get_character_cell_size

__all__ = ["BREAK_AFTER", "MIN_WIDTH", "spans"]

#: A long word may break after these: a URL's own boundaries (``-`` and ``_`` are not: they
#: are inside names and tokens), and the separators of a long list.
BREAK_AFTER: Final = frozenset("/?&=.#,;")
#: Indents are reduced so that at least this many cells are left for the text itself.
MIN_WIDTH: Final = 20

# Only spaces (and tabs) part words: a no-break space does not. A separator or mark standing
# alone (" · ", " — ", the " *" of a required field) stays with the word before it.
_WORD = re.compile("[^ \t]+(?: +[·—–*](?= |$))*")
_PLAIN_WORD = re.compile("[^ \t]+")


def _is_break(text: str, i: int, end: int) -> bool:
    """Whether a word ending at ``end`` may break before ``text[i]``: right after a break
    character that is not followed by another one."""
    return 0 < i < end and text[i - 1] in BREAK_AFTER and text[i] not in BREAK_AFTER


def _fit(text: str, start: int, end: int, room: int) -> int:
    """The end of the longest start of ``text[start:end]`` that takes at most ``room`` cells,
    never parting a combining mark from its base (at least one character: progress)."""
    used = 0
    fit = start + 1
    for i in range(start, end):
        used += get_character_cell_size(text[i])
        if used > room:
            break
        if i + 1 == end or get_character_cell_size(text[i + 1]) > 0:
            fit = i + 1
    return fit


def _cut(text: str, start: int, end: int, room: int, rest: int, *, clean_only: bool) -> int | None:
    """Where to break the word ``text[start:end]`` so that its first part takes at most ``room``
    cells: after a break character if one fits (the furthest), else at the last character that
    fits (``None`` with ``clean_only``). A break that would leave a piece wider than ``rest``
    before the next break place is not worth it: that piece is cut anyway, so fill the line."""
    if room < 1:
        return None if clean_only else start + 1
    fit = _fit(text, start, end, room)
    at = next((i for i in range(fit, start, -1) if _is_break(text, i, end)), None)
    if (
        at is not None
        and cell_len(text[start:at]) <= room
        and (clean_only or _short_piece(text, at, end, rest))
    ):
        return at
    return None if clean_only else fit


def _short_piece(text: str, start: int, end: int, room: int) -> bool:
    """Whether the piece of the word from ``start`` to its next break place takes at most
    ``room`` cells."""
    used = 0
    for i in range(start, end):
        if i > start and _is_break(text, i, end):
            return True
        used += get_character_cell_size(text[i])
        if used > room:
            return False
    return True


def _words(text: str, rest: int) -> Iterator[tuple[int, int]]:
    """The words of ``text``, a separator with the word before it unless the two do not fit
    on a line together."""
    for match in _WORD.finditer(text):
        ws, we = match.span()
        if " " in text[ws:we] and cell_len(text[ws:we]) > rest:
            yield from (m.span() for m in _PLAIN_WORD.finditer(text, ws, we))
        else:
            yield ws, we


def spans(text: str, first: int, rest: int) -> list[tuple[int, int]]:
    """The lines of ``text`` (one logical line, no newline, no leading indent) as ``(start, end)``
    offsets, when the first line has room for ``first`` cells and every later line for ``rest``.

    Spaces at a break are dropped; a text with no words is one empty line.
    """
    first, rest = max(1, first), max(1, rest)
    lines: list[tuple[int, int]] = []
    start = end = -1
    used = 0
    room = first
    for ws, we in _words(text, rest):
        width = cell_len(text[ws:we])
        if start >= 0:
            gap = cell_len(text[end:ws])
            if used + gap + width <= room:
                end, used = we, used + gap + width
                continue
            # A word wider than a whole line is broken anyway: begin it here if its first
            # piece (up to a break place) fits, rather than leave this line short.
            cut = _cut(text, ws, we, room - used - gap, rest, clean_only=True) if width > rest else None
            lines.append((start, cut if cut is not None else end))
            if cut is not None:
                ws = cut
                width = cell_len(text[ws:we])
            room = rest
        while width > room:  # only a word wider than a whole line is broken
            cut = _cut(text, ws, we, room, rest, clean_only=False)
            assert cut is not None
            lines.append((ws, cut))
            ws, room = cut, rest
            width = cell_len(text[ws:we])
        if ws == we:
            # Its last piece was one wide character on a line narrower than it: that line is
            # full, so the next word starts a line of its own (never a line that opens with a space).
            start = -1
            continue
        start, end, used = ws, we, width
    if start >= 0:
        lines.append((start, end))
    return lines or [(0, 0)]
