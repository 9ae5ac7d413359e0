"""Lint a form for secret fields and for text a client could render as a link.

MCP forbids asking for secrets in form mode (passwords, API keys, tokens, payment
credentials): they must go through URL mode, where the secret never passes through the
client. :func:`lint_form` flags fields whose *name*, *title* or *description* ask for one,
in the usual identifier spellings (``api_key``, ``apiKey``, ``X-API-KEY``, ``pwd``,
``ccnum``) and in French, German, Spanish, Portuguese, Italian, Russian, Chinese,
Japanese and Korean. It also flags a string ``default`` that looks like a real secret
(a PEM private key, a JWT, well-known API key prefixes).

Only fields that can carry a secret are linted: free text (but not ``date`` /
``date-time``) and numbers. Booleans and choices cannot, so ``rotate_api_key: bool`` or
a choice "password / passkey" is fine.

The form ``message`` is not linted for secrets: it often *mentions* one ("your API key
expired; pick a new name for it") without a field collecting it. What a field's own
name, title and description say is what counts. Negations ("never enter your password
here") are not understood and stay flagged; :class:`~mcp_elicit.schema.NotSecret` /
``allow_secrets`` is the override, on purpose explicit. The words are read by
:mod:`mcp_elicit.schema.secret_words` (which the server's URL check asks about parameter names
too); the full list of word-level decisions is in :mod:`mcp_elicit.schema.lint_words`.

URL warnings cover the message, titles, descriptions, option titles and untitled option
values: ``scheme://``, ``www.``, ``mailto:``, ``javascript:``, ``data:``, ``tel:``,
markdown links, HTML anchors and terminal (OSC 8) hyperlinks. Bare domains and email
addresses are not reported: too common in help text to be useful in a log.

>>> lint = lint_form("Sign in", {"type": "object", "properties": {
...     "apiKey": {"type": "string"}, "max_tokens": {"type": "integer"}}})
>>> [(f.field, f.where, f.category) for f in lint.secret_fields]
[('apiKey', 'name', 'API key')]
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from .limits import MAX_MESSAGE, MAX_NAME, MAX_PROPERTIES, MAX_TEXT
from .lint_words import CATEGORY_TEXT
from .secret_words import match_secret
from .text import quote

__all__ = ["FormLint", "SecretFinding", "lint_form"]

Where = Literal["name", "title", "description", "default"]

# Warnings reported per text and in total: a hostile form cannot flood the log.
_URLS_PER_TEXT = 5
_URLS_TOTAL = 50


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """A field that seems to ask for a secret.

    ``where`` is the part that matched (``name``, ``title``, ``description`` or
    ``default``), ``matched`` the words as the lint read them, ``category`` what kind of
    secret it looks like (for example ``"API key"``).
    """

    field: str
    where: Where
    matched: str
    category: str

    def __str__(self) -> str:
        what = CATEGORY_TEXT.get(self.category, self.category)
        return f"field {quote(self.field)}: its {self.where} asks for {what} ({quote(self.matched)})"


@dataclass(slots=True)
class FormLint:
    """What :func:`lint_form` found. Empty lists mean nothing to report."""

    secret_fields: list[SecretFinding] = field(default_factory=list)
    url_warnings: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """True when the lint found neither secret fields nor URL warnings."""
        return not self.secret_fields and not self.url_warnings


# Values that are secrets, whatever the field is called.
_SECRET_VALUES = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\."  # JWT
    r"|\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}"  # GitHub
    r"|\bgithub_pat_[A-Za-z0-9_]{30,}"
    r"|\bglpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|\bsk-[A-Za-z0-9_-]{20,}"  # OpenAI and others
    r"|\b[rs]k_live_[A-Za-z0-9]{16,}"  # Stripe
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"  # Slack
    r"|\bAKIA[0-9A-Z]{16}\b"  # AWS access key id
    r"|\bAIza[0-9A-Za-z_-]{35}"  # Google API key
)


# --- URL warnings -------------------------------------------------------------------

# Where a link may start: not inside an ASCII word ("hotel:+1" holds no "tel:" link). Not
# \b, which also counts CJK letters as word characters: "请访问https://..." is a link.
_START = r"(?<![A-Za-z0-9])"
_LINKS = (
    (re.compile(r"\x1b\]8;[^;\x07\x1b]*;[^\x07\x1b]+"), "a terminal hyperlink escape"),
    (re.compile(r"\[[^\]\n]{0,200}\]\([^)\s]{1,2000}\)"), "a markdown link"),
    (re.compile(r"<a\s[^>]{0,500}href[^>]{0,2000}>?", re.IGNORECASE), "an HTML link"),
    (re.compile(_START + r"[a-z][a-z0-9+.\-]{1,30}://[^\s<>\"')\]]*", re.IGNORECASE), "a URL"),
    (re.compile(_START + r"www\.[^\s<>\"')\]]+", re.IGNORECASE), "a www. address"),
    (
        re.compile(
            _START + r"(?:mailto:|javascript:|vbscript:|tel:\+?[0-9]|data:[a-z]+/)[^\s<>\"']*",
            re.IGNORECASE,
        ),
        "a link",
    ),
)


def _link_warnings(where: str, text: str, limit: int) -> Iterator[str]:
    scanned = text[:limit]
    links = _links_cached(scanned) if len(scanned) <= _CACHED_TEXT else _links(scanned)
    for _start, what, snippet in links:
        yield (
            f"{where} contains {what} {quote(snippet, 80)}: a client may render it as a "
            "clickable link whose target the user cannot check; send links in URL mode or "
            "write them as plain text"
        )
    if len(text) > limit:
        yield f"{where} is {len(text)} characters long; only the first {limit} were scanned for links"


def _links(scanned: str) -> tuple[tuple[int, str, str], ...]:
    """The first link-like spans of ``scanned``: (start, what, text)."""
    found: list[tuple[int, int, str, str]] = []
    for pattern, what in _LINKS:
        found.extend((m.start(), m.end(), what, m[0]) for m in pattern.finditer(scanned))
    found.sort()
    out: list[tuple[int, str, str]] = []
    end = -1
    for start, stop, what, snippet in found:
        if start < end:  # inside a link already reported (the URL of a markdown link)
            continue
        end = stop
        out.append((start, what, snippet))
        if len(out) >= _URLS_PER_TEXT:
            break
    return tuple(out)


_CACHED_TEXT = 512
_links_cached = functools.lru_cache(maxsize=4096)(_links)


# --- the lint -----------------------------------------------------------------------


def _can_hold_secret(prop: dict[Any, Any]) -> bool:
    t = prop.get("type")
    if t in ("boolean", "array", "object"):
        return False
    if "enum" in prop or "oneOf" in prop or "anyOf" in prop or "items" in prop:
        return False
    return prop.get("format") not in ("date", "date-time")


def _field_texts(name: str, prop: dict[Any, Any]) -> Iterator[tuple[Where, str]]:
    yield "name", name[:MAX_NAME]
    for key in ("title", "description"):
        value = prop.get(key)
        if isinstance(value, str):
            yield key, value[:MAX_TEXT]


def _secret_findings(name: str, prop: dict[Any, Any]) -> Iterator[SecretFinding]:
    for where, text in _field_texts(name, prop):
        found = match_secret(text, is_name=where == "name")
        if found is not None:
            yield SecretFinding(name, where, found[0], found[1])
    default = prop.get("default")
    if isinstance(default, str):
        m = _SECRET_VALUES.search(default[:MAX_TEXT])
        if m is not None:
            yield SecretFinding(name, "default", m[0][:12] + "…", "secret value")


def _option_texts(name: str, prop: dict[Any, Any]) -> Iterator[tuple[str, str]]:
    """Displayed option texts of a field: (where, text)."""
    entries: list[Any] = []
    one_of = prop.get("oneOf")
    if isinstance(one_of, list):
        entries = one_of
    items = prop.get("items")
    if isinstance(items, dict) and isinstance(items.get("anyOf"), list):
        entries = items["anyOf"]
    for entry in entries[:1000]:
        if isinstance(entry, dict) and isinstance(entry.get("title"), str):
            yield f"field {quote(name)} choice title", entry["title"]
        if isinstance(entry, dict) and isinstance(entry.get("const"), str):
            yield f"field {quote(name)} choice", entry["const"]
    names = prop.get("enumNames")
    if isinstance(names, list):
        for title in names[:1000]:
            if isinstance(title, str):
                yield f"field {quote(name)} choice title", title
    else:
        values = prop.get("enum")
        if isinstance(items, dict) and values is None:
            values = items.get("enum")
        if isinstance(values, list):
            for value in values[:1000]:
                if isinstance(value, str):
                    yield f"field {quote(name)} choice", value


def _lint(message: object, schema: object, allowed: frozenset[str]) -> FormLint:
    result = FormLint()
    urls = result.url_warnings
    if isinstance(message, str):
        urls.extend(_link_warnings("message", message, MAX_MESSAGE))
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return result
    for count, (name, prop) in enumerate(properties.items()):
        if count >= MAX_PROPERTIES:
            urls.append(f"the form has more than {MAX_PROPERTIES} fields; the rest were not linted")
            break
        if not isinstance(name, str) or not isinstance(prop, dict):
            continue
        if name not in allowed and _can_hold_secret(prop):
            result.secret_fields.extend(_secret_findings(name, prop))
        urls.extend(_link_warnings(f"field {quote(name)} name", name, MAX_TEXT))  # shown without a title
        for key in ("title", "description", "default"):  # a default is pre-filled where people type
            value = prop.get(key)
            if isinstance(value, str):
                urls.extend(_link_warnings(f"field {quote(name)} {key}", value, MAX_TEXT))
        for where, text in _option_texts(name, prop):
            urls.extend(_link_warnings(where, text, MAX_TEXT))
        if len(urls) > _URLS_TOTAL:
            break
    if len(urls) > _URLS_TOTAL:
        extra = len(urls) - _URLS_TOTAL
        del urls[_URLS_TOTAL:]
        urls.append(f"and {extra} more link warnings")
    return result


def lint_form(message: str, schema: dict[str, Any], *, allow_secrets: Iterable[str] = ()) -> FormLint:
    """Secret fields and clickable-link warnings of a form.

    ``allow_secrets`` names fields whose secret findings are dropped (the reviewed
    override for dict schemas). Never raises, whatever ``message`` and ``schema`` are.
    """
    try:
        allowed = frozenset(a for a in allow_secrets if isinstance(a, str))
    except TypeError:
        allowed = frozenset()
    try:
        return _lint(message, schema, allowed)
    except Exception as exc:  # a lint must never take the caller down
        return FormLint(url_warnings=[f"the form could not be linted ({type(exc).__name__})"])
