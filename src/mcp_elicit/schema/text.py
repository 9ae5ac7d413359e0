"""Small text helpers shared by the checker, the validator and the lint."""

from __future__ import annotations

import math
import re
import unicodedata

__all__ = [
    "bad_name_char",
    "bad_text_char",
    "describe",
    "pointer",
    "quote",
    "short",
    "show_number",
    "show_pointer",
    "unescape_pointer_token",
]


def pointer(*parts: str) -> str:
    """A JSON pointer (RFC 6901) from unescaped tokens.

    >>> pointer("properties", "a/b", "minimum")
    '/properties/a~1b/minimum'
    """
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def unescape_pointer_token(token: str) -> str:
    """Undo :func:`pointer` escaping for one token."""
    return token.replace("~1", "/").replace("~0", "~")


# Controls except tab and newline, bidi controls, unpaired surrogates: what a title or
# description may not contain. A regex scans at C speed; descriptions can be 8 KiB.
_BAD_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def bad_name_char(name: str) -> str | None:
    """The first character not allowed in a property or option value, or ``None``.

    Refused: controls (Cc), format characters (Cf: bidi controls, zero-width characters,
    BOM), unpaired surrogates (Cs) and line/paragraph separators. All of them make two
    different keys look the same, or break how a client lays the text out.
    """
    if name.isprintable():  # fast path: every refused character is non-printable
        return None
    for ch in name:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            return ch
    return None


def bad_text_char(text: str) -> str | None:
    """The first character not allowed in a title or description, or ``None``.

    Tab and newline are fine. Other controls (ESC starts terminal escape sequences, CR
    overwrites a line), bidi overrides and unpaired surrogates are refused. Zero-width
    joiners stay allowed: scripts and emoji need them.
    """
    m = _BAD_TEXT.search(text)
    return None if m is None else m[0]


def quote(text: str, limit: int = 40) -> str:
    r"""A short, escaped, single-quoted copy of ``text`` that is safe in a log line.

    Controls, bidi and zero-width characters are written as escapes, so a value cannot
    move the cursor, reorder the line or hide a character.

    >>> print(quote("a\x1bb"), quote("x" * 50, limit=3))
    'a\x1bb' 'xxx'…
    """
    out = []
    for ch in text[:limit]:
        if ch in "\\'":
            out.append("\\" + ch)
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            out.append(_escaped(ch))
        else:
            out.append(ch)
    return "'" + "".join(out) + "'" + ("…" if len(text) > limit else "")


def _escaped(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def show_pointer(ptr: str, limit: int = 256) -> str:
    r"""A JSON pointer as a log line or an error message may show it.

    Its tokens are names a server or a client chose: controls, bidi and zero-width characters
    (and the backslash, so an escape cannot be faked) are written as escapes, and a token
    longer than ``limit`` is cut, so a name cannot write to the terminal or fill the log.

    >>> print(show_pointer("/properties/a\x1b[2J/type"), show_pointer("/" + "x" * 9, limit=3))
    /properties/a\x1b[2J/type /xxx…
    """
    if ptr.isascii() and ptr.isprintable() and "\\" not in ptr and len(ptr) <= limit:
        return ptr  # the usual pointer: nothing to escape, no token too long
    tokens = []
    for token in ptr.split("/"):
        cut = token[:limit]
        shown = "".join(
            _escaped(ch) if ch == "\\" or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp") else ch
            for ch in cut
        )
        tokens.append(shown + ("…" if len(token) > limit else ""))
    return "/".join(tokens)


def show_number(value: float) -> str:
    """A number as a person writes it: ``18`` rather than ``18.0``; huge ones abbreviated."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return repr(value)
    if abs(value) >= 10**30:
        return "a number with more than 30 digits"
    return str(value)


def short(value: object) -> str:
    """A JSON value the way JSON writes it, shortened: ``5``, ``'x'``, ``true``, ``null``.

    >>> short(5.0), short("x"), short(False), short([1, 2])
    ('5', "'x'", 'false', 'a list')
    """
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, int | float):
        return show_number(value)
    if isinstance(value, str):
        return quote(value)
    return describe(value)


def describe(value: object) -> str:
    """What a JSON value is, for "got …" in error messages.

    >>> describe("5"), describe(True), describe(None), describe([1])
    ("the text '5'", 'true', 'null', 'a list')
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return f"the number {show_number(value)}"
    if isinstance(value, str):
        return f"the text {quote(value)}"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"
