"""Checks on the Unicode form of host labels (pure Python, stdlib ``unicodedata`` only).

This is a small, deliberately conservative approximation of Chromium's IDN spoof checker
(``components/url_formatter/spoof_checks``) and of UTS 39, not a full implementation:

* each label may only use letters, combining marks, digits and ``-`` (no symbols, punctuation,
  emoji or invisible characters);
* scripts may mix only as UTS 39 "Highly Restrictive" allows (Latin with Han and Japanese kana,
  with Han and Bopomofo, or with Han and Hangul); Latin, Cyrillic and Greek never mix;
* digits from different systems never mix; combining marks are not stacked or repeated;
* the *skeleton* of the label (each character replaced by the ASCII character it imitates, from
  the small table below) must not be plain ASCII: a label such as ``аррӏе`` (all Cyrillic),
  ``ɡoogle`` (Latin script G) or ``з7`` (Cyrillic ze for a 3) is visually an ASCII label, which
  is the homograph attack itself. The only exception is a label whose script matches the TLD's
  (Cyrillic under ``.ru``/``.рф``, Greek under ``.gr``...), which is only warned about.

Everything here works on one label already decoded by the UTS 46 ``ToUnicode`` step.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

# Characters that imitate ASCII letters or digits. Sources: the Cyrillic set Chromium uses for its
# whole-script confusable check, the Latin/Greek/Armenian look-alikes from UTS 39 confusables.txt
# that survive UTS 46 mapping (lower case), small capitals, and digit look-alikes from Chromium's
# test vectors. Deliberately not included: Latin letters with a visible accent or stroke
# (é, ø, ł, đ): they are normal in many languages and visibly differ from ASCII.
_LOOKALIKES: dict[str, str] = {
    # Cyrillic
    "а": "a", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j", "ӏ": "l", "о": "o",
    "р": "p", "ԛ": "q", "ѕ": "s", "ԝ": "w", "х": "x", "у": "y", "ъ": "b", "ь": "b", "ҽ": "e",
    "п": "n", "г": "r", "ѵ": "v", "ѡ": "w", "ү": "y", "ԍ": "g", "к": "k", "ш": "w", "м": "m",
    "н": "h", "т": "t", "в": "b", "ю": "io", "ы": "bl", "ԃ": "d", "ҏ": "p",
    "з": "3", "ҙ": "3", "ӡ": "3", "б": "6",
    # Greek
    "α": "a", "ο": "o", "ρ": "p", "ν": "v", "ι": "i", "κ": "k", "υ": "u", "χ": "x", "γ": "y",
    "ε": "e", "ϵ": "e", "η": "n", "ϲ": "c", "ϳ": "j", "ω": "w", "ϱ": "p", "ς": "c", "ϼ": "p",
    # Armenian
    "օ": "o", "ս": "u", "ց": "g", "հ": "h", "ո": "n", "զ": "q", "ա": "w", "շ": "2",
    # Georgian, Lisu, Canadian syllabics, Oriya
    "ძ": "d", "ვ": "3", "პ": "3", "ꓲ": "i", "ꓳ": "o", "ᒿ": "2", "ଠ": "o",
    # Latin letters outside ASCII that read as ASCII ones, small capitals, click letters
    "ɡ": "g", "ɑ": "a", "ı": "i", "ȷ": "j", "ɩ": "i", "ƅ": "b", "ǀ": "l", "ǁ": "ll", "ǃ": "!",
    "ɒ": "a", "ĸ": "k", "ħ": "h", "ŧ": "t", "þ": "p", "ȣ": "8",
    "ꞏ": ".", "ꟷ": "-", "ꟾ": "l", "ꟽ": "w", "ꟿ": "m",  # sinological dot, epigraphic letters
    "ᴀ": "a", "ʙ": "b", "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ɢ": "g", "ʜ": "h", "ɪ": "i", "ᴊ": "j",
    "ᴋ": "k", "ʟ": "l", "ᴍ": "m", "ɴ": "n", "ᴏ": "o", "ᴘ": "p", "ʀ": "r", "ꜱ": "s", "ᴛ": "t",
    "ᴜ": "u", "ᴠ": "v", "ᴡ": "w", "ʏ": "y", "ᴢ": "z",
    # digit look-alikes from other scripts
    "০": "0", "৪": "8", "੦": "0", "૦": "0", "୦": "0", "௦": "0", "౦": "0", "೦": "0", "൦": "0",
    "๐": "0", "໐": "0", "၀": "0", "٠": ".", "۰": ".", "٥": "o", "۵": "o",
}  # fmt: skip

# UTS 31 "Recommended" scripts (Table 5), as the first word of character names. Letters of any
# other script (Cherokee, Canadian syllabics, Coptic, Tifinagh, Vai, Yi, Mongolian, historic
# scripts...) are refused, as Chromium refuses to show them.
_RECOMMENDED_SCRIPTS = frozenset(
    {
        "ARABIC", "ARMENIAN", "BENGALI", "BOPOMOFO", "CYRILLIC", "DEVANAGARI", "ETHIOPIC",
        "GEORGIAN", "GREEK", "GUJARATI", "GURMUKHI", "HAN", "HANGUL", "HEBREW", "HIRAGANA",
        "KANNADA", "KATAKANA", "KHMER", "LAO", "LATIN", "MALAYALAM", "MYANMAR", "ORIYA",
        "SINHALA", "TAMIL", "TELUGU", "THAANA", "THAI", "TIBETAN",
    }
)  # fmt: skip
# Names of obsolete or invisible-prone characters inside otherwise recommended scripts.
_NOT_RECOMMENDED_NAMES = ("HANGUL CHOSEONG", "HANGUL JUNGSEONG", "HANGUL JONGSEONG", "HANGUL FILLER")

# Scripts of which some TLDs are "their own": a label entirely in that script under such a TLD
# is normal there (Chromium allows it), so a look-alike skeleton is only warned about.
_SCRIPT_TLDS: dict[str, frozenset[str]] = {
    "CYRILLIC": frozenset({"ru", "su", "by", "ua", "kz", "bg", "mk", "rs", "kg", "tj", "uz", "mn", "pyc"}),
    "GREEK": frozenset({"gr", "cy"}),
    "ARMENIAN": frozenset({"am"}),
}

# UTS 39 "Highly Restrictive": the script sets allowed to mix inside one label (Latin only as
# ASCII letters when mixed).
_ALLOWED_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
_FIRST_WORD_ALIASES = {
    "CJK": "HAN",
    "IDEOGRAPHIC": "HAN",
    "KATAKANA-HIRAGANA": "",  # the prolonged sound mark, common to both kana
    "ARABIC-INDIC": "ARABIC",
    "EXTENDED": "ARABIC",  # EXTENDED ARABIC-INDIC DIGIT ...
}
_MAX_MARK_RUN = 3
# Scripts named right after "COMBINING" in the names of marks that belong to one script
# ("COMBINING CYRILLIC TITLO", "COMBINING DEVANAGARI DIGIT ZERO"); the other "COMBINING ..."
# marks (acute, dot above, enclosing circle...) are shared by all scripts.
_COMBINING_SCRIPTS = frozenset({"CYRILLIC", "DEVANAGARI", "GLAGOLITIC", "GRANTHA", "GREEK", "OLD"})
# General diacritics with no precomposed use in any modern orthography (UTS 39 "Restricted":
# technical, obsolete): basic combining accents (after NFC), extended and supplement blocks,
# marks for symbols, half marks, ideographic and Hangul tone marks.
_LOOSE_MARK_RANGES = (
    (0x0300, 0x036F),
    (0x1AB0, 0x1AFF),
    (0x1DC0, 0x1DFF),
    (0x20D0, 0x20FF),
    (0x302A, 0x302F),
    (0xFE20, 0xFE2F),
    (0x1133B, 0x1133B),  # COMBINING BINDU BELOW (a dot below, shared by Grantha and Tamil)
)


def script_of(ch: str) -> str:
    """A coarse script name for a letter, digit or mark ('' for common characters and for
    marks shared by all scripts).

    Derived from the first word of the Unicode character name, which names the script for
    letters, digits and script-specific marks ("HEBREW POINT HIRIQ", "DEVANAGARI VOWEL SIGN AA")
    of every script this check cares about. A mark counts: a Hebrew point under a Latin "a"
    mixes two scripts as much as a Hebrew letter would.
    """
    if ch.isascii():
        return "LATIN" if ch.isalpha() else ""
    category = unicodedata.category(ch)
    if category[0] not in "LNM":
        return ""
    words = unicodedata.name(ch, "UNKNOWN").split(" ")
    first = words[0]
    if first == "HALFWIDTH" and len(words) > 1:
        first = words[1]
    if first == "COMBINING":
        first = words[1] if len(words) > 1 and words[1] in _COMBINING_SCRIPTS else ""
    return _FIRST_WORD_ALIASES.get(first, first)


def skeleton(label: str) -> str:
    """Replace each look-alike character by the ASCII character it imitates."""
    return "".join(_LOOKALIKES.get(ch, ch) for ch in label)


def _u(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed character')}"


@dataclass
class LabelFindings:
    refusals: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_label(label: str, ascii_label: str, tld: str, tld_ascii: str) -> LabelFindings:
    """Check one decoded non-ASCII label; ``tld``/``tld_ascii`` are the host's last label."""
    found = LabelFindings()

    bad = [ch for ch in label if not (ch == "-" or unicodedata.category(ch)[0] in "LM" or _is_digit(ch))]
    if bad:
        found.refusals.append(
            f"the host label {ascii_label} contains a character that has no place in a domain name "
            f"({_u(bad[0])}): symbols, punctuation and invisible characters are used to fake addresses"
        )

    scripts = {s for s in map(script_of, label) if s}
    unusual = (
        sorted(s.title() for s in scripts - _RECOMMENDED_SCRIPTS)
        or ["Hangul jamo" for ch in label if unicodedata.name(ch, "").startswith(_NOT_RECOMMENDED_NAMES)][:1]
    )
    if unusual:
        found.refusals.append(
            f"the host label {ascii_label} uses a writing system ({', '.join(unusual)}) that is not "
            "recommended for domain names and is easily confused"
        )
    mixed = len(scripts) > 1
    if mixed and not any(scripts <= mix for mix in _ALLOWED_MIXES):
        names = ", ".join(sorted(s.title() for s in scripts))
        found.refusals.append(
            f"the host label {ascii_label} mixes writing systems ({names}): letters that look alike "
            "in different scripts are a classic way to imitate a domain"
        )
    elif mixed and "LATIN" in scripts and any(script_of(ch) == "LATIN" and not ch.isascii() for ch in label):
        found.refusals.append(
            f"the host label {ascii_label} mixes accented or special Latin letters with another "
            "writing system"
        )

    digits_only = all(_is_digit(ch) or ch == "-" for ch in label)
    if digits_only and not label.isascii():
        found.refusals.append(
            f"the host label {ascii_label} is made of digits from another number system, which can imitate "
            "a number"
        )

    zeros = {ord(ch) - unicodedata.digit(ch) for ch in label if _is_digit(ch)}
    if len(zeros) > 1:
        found.refusals.append(f"the host label {ascii_label} mixes digits from different number systems")

    # Marks are checked on the decomposed form, so that "é" + U+0301 counts as a repeated mark.
    run = 0
    previous = ""
    for ch in unicodedata.normalize("NFD", label):
        if unicodedata.category(ch)[0] == "M":
            run += 1
            if ch == previous or run > _MAX_MARK_RUN:
                found.refusals.append(
                    f"the host label {ascii_label} stacks or repeats combining marks, which can hide letters"
                )
                break
        else:
            run = 0
        previous = ch
    # Latin, Greek and Cyrillic letters with accents exist precomposed; a general diacritic left
    # over after composition sits on a letter that has no such form (a dot or ring used as a
    # disguise), or on a letter of a script that does not use these marks at all. The other
    # general-diacritic blocks have no use in names at all.
    loose = [ch for ch in label if any(low <= ord(ch) <= high for low, high in _LOOSE_MARK_RANGES)]
    if loose:
        found.refusals.append(
            f"the host label {ascii_label} puts a loose accent ({_u(loose[0])}) on a letter, which can "
            "disguise it"
        )

    shadow = skeleton(label)
    if shadow.isascii() and shadow != label:
        # Whole-script labels (Cyrillic, Greek...) under a TLD of their own script are normal
        # there; Latin look-alikes of ASCII (U+0261 for "g") never are.
        script = next(iter(scripts)) if len(scripts) == 1 else ""
        own = _SCRIPT_TLDS.get(script, frozenset())
        tld_scripts = {s for s in map(script_of, tld) if s} if not tld.isascii() else set()
        script_matches_tld = script not in ("", "LATIN") and (tld_ascii in own or tld_scripts == scripts)
        message = (
            f"the host label {ascii_label} is written with letters that imitate the plain ASCII "
            f"name {shadow!r}"
        )
        if script_matches_tld:
            found.warnings.append(message + ": make sure this is the site you expect")
        else:
            found.refusals.append(message + " (a homograph): it is not that name")
    return found


def _is_digit(ch: str) -> bool:
    return unicodedata.category(ch) == "Nd"
