"""Make server-supplied text safe to show in a terminal.

Everything a server sends that a person will read (the ``message``, titles,
descriptions, option labels and values, the server's name and title, the URL) goes
through :func:`clean` before it is displayed. A server controls those strings; without
cleaning it could move the cursor and overwrite the line that shows the real URL, set
the window title, write to the clipboard (OSC 52), turn arbitrary text into a clickable
link (OSC 8), or reorder what is shown with bidi overrides.

>>> clean("Open \\x1b]8;;https://evil.example\\x1b\\\\this\\x1b]8;;\\x1b\\\\ now")
'Open this now'
>>> clean("abc\\u202edef")
'abcdef'
>>> clean("line one\\nline two", single_line=True)
'line one line two'
>>> clean("x" * 10, max_length=5)
'xxxx…'

Standard library only, and cheap to import.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["ELLIPSIS", "MAX_MARKS", "clean"]

#: What replaces the cut-off end of a string longer than ``max_length``.
ELLIPSIS = "…"

#: Combining marks kept in a row on one base character; longer runs ("Zalgo" text, or
#: hidden data in variation selectors) are cut to this many.
MAX_MARKS = 4

# Escape sequences, so that their payload (the URL of an OSC 8 link, a window title, a
# clipboard write) disappears with them instead of being shown as text. Anything left
# over (a lone ESC, a C1 byte) is removed by _DROP below, so no sequence can survive.
_SEQUENCE = re.compile(
    # Control strings: OSC (ESC ] / 0x9D), DCS (ESC P / 0x90), SOS (ESC X / 0x98),
    # PM (ESC ^ / 0x9E), APC (ESC _ / 0x9F). They end at ST (ESC \ or 0x9C) or BEL;
    # an unterminated one is removed to the end, as a terminal would swallow it.
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x9c\x1b]*(?:\x1b(?!\\)[^\x07\x9c\x1b]*)*(?:\x07|\x9c|\x1b\\|\Z)"
    # CSI (ESC [ / 0x9B): parameters, intermediates, final byte.
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    # Any other escape sequence: ESC, intermediates, final byte (ESC c, ESC ( B, ESC 7 …).
    r"|\x1b[ -/]*[0-~]?",
)

# Line and paragraph separators, and NEL: turned into a newline (or a space).
_BREAKS = re.compile("[\x85\u2028\u2029]")

# Removed: C0 controls except tab and newline (CR too: it overwrites the line), DEL,
# C1 controls, and every format character (Unicode category Cf): bidi embeddings,
# overrides, isolates and marks (U+202A–202E, U+2066–2069, U+200E/F, U+061C),
# zero-width space/joiners (U+200B–200D), word joiner and invisible operators
# (U+2060–2064), BOM (U+FEFF), soft hyphen, interlinear annotations, tag characters
# (U+E0000 block, used to smuggle invisible text) and the rest of Cf.
_CF = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_DROP = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_CF}]")
_DROP_SINGLE = re.compile(f"[\x00-\x08\x0a-\x1f\x7f-\x9f{_CF}]")  # also newline
_SURROGATE = re.compile("[\ud800-\udfff]")


def _cap_marks(text: str) -> str:
    """Cut runs of combining marks (categories Mn, Me) to :data:`MAX_MARKS`."""
    out: list[str] = []
    run = 0
    changed = False
    for ch in text:
        if unicodedata.category(ch) in ("Mn", "Me"):
            run += 1
            if run > MAX_MARKS:
                changed = True
                continue
        else:
            run = 0
        out.append(ch)
    return "".join(out) if changed else text


def clean(s: str, *, max_length: int | None = None, single_line: bool = False) -> str:
    """``s`` without anything a terminal would interpret or hide, ready to display.

    * Escape sequences are removed with their payload: CSI (colours, cursor moves,
      screen clears), OSC (window titles, OSC 8 hyperlinks, OSC 52 clipboard writes; both
      terminators, ``ESC \\`` and BEL), DCS, APC, PM and SOS strings, in their 7-bit
      (``ESC …``) and 8-bit (C1) forms.
    * Every other control character goes: C0 (CR included, so ``good\\revil`` cannot
      overwrite ``good``), DEL and C1 (U+0080–U+009F). Tab and newline stay, unless
      ``single_line`` is set, in which case they become spaces.
    * Format characters (Unicode category Cf) go: bidi overrides, embeddings, isolates
      and marks, zero-width space/joiners, word joiner, BOM, tag characters.
    * Line and paragraph separators (U+2028, U+2029) and NEL (U+0085) become a newline,
      or a space with ``single_line``.
    * Unpaired surrogates become U+FFFD; runs of more than :data:`MAX_MARKS` combining
      marks are cut.
    * With ``max_length``, a result longer than that is cut to ``max_length`` characters,
      the last of which is :data:`ELLIPSIS`.

    The result never contains a C0/C1 control other than tab and newline (none at all
    with ``single_line``), nor a Cf, Zl, Zp or Cs character.
    """
    if max_length is not None and max_length < 1:
        raise ValueError(f"max_length must be at least 1, got {max_length}")
    cut = False
    if max_length is not None:
        # Bound the work on huge strings before the scans; escape sequences may shrink
        # the text, so keep a margin over max_length.
        bound = max_length * 4 + 256
        if len(s) > bound:
            s = s[:bound]
            cut = True
    if not (s.isascii() and s.isprintable()):
        s = _SEQUENCE.sub("", s)
        s = _BREAKS.sub(" " if single_line else "\n", s)
        if single_line:
            s = _DROP_SINGLE.sub(lambda m: " " if m[0] == "\n" else "", s)
            s = s.replace("\t", " ")
        else:
            s = _DROP.sub("", s)
        s = _SURROGATE.sub("\ufffd", s)
        if not s.isascii():
            s = _cap_marks(s)
    if max_length is not None and (cut or len(s) > max_length):
        s = s[: max_length - 1] + ELLIPSIS
    return s
