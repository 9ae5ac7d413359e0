"""``describe_for_terminal``: (style, text) fragments for showing an assessment.

The fragments are prompt_toolkit "formatted text" (a list of ``(style, text)`` pairs); the style
strings are ``class:url.<name>`` plus an inline default, so a UI can restyle them by class or use
them as they are. Rich users can map the class names to their own styles.

Only ``href`` (ASCII by construction) is shown as the address; the Unicode form of an IDN host
is shown on its own line, marked as information only. Every server-derived string is passed
through :func:`printable` (control, format, bidi and separator characters escaped).
"""

from __future__ import annotations

import unicodedata

from ._model import UrlAssessment

STYLES: dict[str, str] = {
    "scheme": "class:url.scheme",
    "userinfo": "class:url.userinfo reverse",
    "subdomain": "class:url.subdomain",
    "domain": "class:url.domain bold underline",
    "host": "class:url.host bold",
    "port": "class:url.port bold",
    "rest": "class:url.rest",
    "label": "class:url.label",
    "unicode": "class:url.unicode",
    "note": "class:url.note italic",
    "invalid": "class:url.invalid",
    "refusal": "class:url.refusal bold",
    "warning": "class:url.warning",
}
_RAW_LIMIT = 300
_REASON_LIMIT = 600  # a reason quotes the host, which a caller's high max_length lets grow


def printable(text: str, limit: int | None = None) -> str:
    """Escape characters that could change what a terminal shows; cap the length."""
    out: list[str] = []
    for ch in text:
        category = unicodedata.category(ch)
        if ch == " ":
            out.append(ch)
        elif category[0] in "CZ" or ch == "\x7f":
            out.append(f"<U+{ord(ch):04X}>")
        else:
            out.append(ch)
    result = "".join(out)
    if limit is not None and len(result) > limit:
        result = result[:limit] + f"... ({len(text)} characters in all)"
    return result


def describe_for_terminal(assessment: UrlAssessment) -> list[tuple[str, str]]:
    """Fragments: the full canonical URL with the registrable domain highlighted, the site, the
    Unicode form of an IDN host (information only), then one line per refusal or warning."""
    fragments: list[tuple[str, str]] = []
    if assessment.href is None:
        fragments.append((STYLES["label"], "Unusable URL as received: "))
        fragments.append((STYLES["invalid"], printable(assessment.original, _RAW_LIMIT)))
        fragments.append(("", "\n"))
    else:
        if assessment.verdict == "refuse" and len(assessment.href) > _RAW_LIMIT:
            # Up to 64 KiB of a refused data: or javascript: URL would flood the terminal.
            fragments.append((STYLES["invalid"], printable(assessment.href, _RAW_LIMIT)))
        else:
            for kind, text in assessment.parts or (("rest", assessment.href),):
                fragments.append((STYLES.get(kind, STYLES["rest"]), printable(text)))
        fragments.append(("", "\n"))
        site = assessment.registrable_domain or assessment.host
        if site:
            fragments.append((STYLES["label"], "Site: "))
            style = STYLES["domain"] if assessment.registrable_domain else STYLES["host"]
            fragments.append((style, printable(site, _RAW_LIMIT)))
            fragments.append(("", "\n"))
        if assessment.is_idn and assessment.unicode_host and assessment.unicode_host != assessment.host:
            fragments.append((STYLES["label"], "Displays as: "))
            fragments.append((STYLES["unicode"], printable(assessment.unicode_host, _RAW_LIMIT)))
            fragments.append((STYLES["note"], " (information only: the xn-- form above is the real address)"))
            fragments.append(("", "\n"))
    if assessment.reasons:
        if assessment.verdict == "refuse":
            style, header = STYLES["refusal"], "This link will not be opened:"
        else:
            style, header = STYLES["warning"], "Check carefully before opening:"
        fragments.append((style, header))
        fragments.append(("", "\n"))
        for reason in assessment.reasons:
            fragments.append((style, "  - " + printable(reason, _REASON_LIMIT)))
            fragments.append(("", "\n"))
    return fragments
