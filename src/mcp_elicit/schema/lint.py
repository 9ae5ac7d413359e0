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
``allow_secrets`` is the override, on purpose explicit. The full list of word-level
decisions is in :mod:`mcp_elicit.schema.lint_words`.

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
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from .limits import MAX_MESSAGE, MAX_NAME, MAX_PROPERTIES, MAX_TEXT
from .lint_words import (
    CATEGORY_TEXT,
    CODE_QUALIFIERS,
    COUNT_WORDS,
    KEY_QUALIFIERS,
    META_AFTER,
    META_BEFORE,
    OTHER_WORD_AFTER,
    OTHER_WORD_BEFORE,
    PHRASES,
    STOP_WORDS,
    SUBSTRINGS,
    SUFFIXES,
    TOKEN_QUALIFIERS,
)
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


# --- tokenizing ---------------------------------------------------------------------

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]+")
# A word numbered by trailing digits ("password2", "pin4"): the number only tells fields
# apart (Django's password1 / password2), so the word is read without it.
_NUMBERED = re.compile(r"([^\W\d_]+)\d+")


def _normalize(text: str) -> str:
    """NFKC (full-width letters), without format characters (zero-width tricks such as
    ``pass\\u200bword``), camelCase split, case-folded."""
    text = unicodedata.normalize("NFKC", text)
    if not text.isprintable():  # only then can it hold format characters
        text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return _CAMEL.sub(" ", text).casefold()


def _fold(token: str) -> str:
    """Latin words without accents ("clé" -> "cle"); other scripts unchanged."""
    if token.isascii():
        return token
    bare = "".join(c for c in unicodedata.normalize("NFD", token) if not unicodedata.combining(c))
    if bare.isascii():
        return bare
    return token.replace("ё", "е")


def _singular(token: str) -> str:
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def _tokens(normalized: str) -> list[str]:
    out = []
    for raw in _WORD.findall(normalized):
        token = _fold(raw)
        if token not in _VOCABULARY:  # "cvv2" and "last4" are words of their own
            numbered = _NUMBERED.fullmatch(token)
            if numbered is not None:
                token = numbered[1]
        token = _singular(token)
        if token not in STOP_WORDS:
            out.append(token)
    return out


# --- phrase matching ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Rule:
    words: tuple[str, ...]
    category: str
    is_key: bool = False


def _build_rules() -> tuple[dict[str, list[_Rule]], list[_Rule]]:
    exact: dict[str, list[_Rule]] = {}
    prefixed: list[_Rule] = []
    rules = [_Rule(words, category) for words, category in PHRASES.items()]
    for qualifier, category in KEY_QUALIFIERS.items():
        rules.append(_Rule((qualifier, "key"), category, is_key=True))
        rules.append(_Rule((qualifier + "key",), category, is_key=True))
    for qualifier in TOKEN_QUALIFIERS:
        rules.append(_Rule((qualifier, "token"), "access token"))
        # In one word too ("idtoken"): the suffix rule alone reads the head "id" as "its id".
        rules.append(_Rule((qualifier + "token",), "access token"))
    for qualifier, category in CODE_QUALIFIERS.items():
        rules.append(_Rule((qualifier, "code"), category))
        rules.append(_Rule((qualifier + "code",), category))
    for rule in rules:
        first = rule.words[0]
        if first.endswith("*"):
            prefixed.append(rule)
        else:
            exact.setdefault(first, []).append(rule)
    return exact, prefixed


_EXACT, _PREFIXED = _build_rules()
# Every word the lint knows, as the tokenizer produces it.
_VOCABULARY = frozenset(
    word.rstrip("*")
    for words in (
        *PHRASES,
        SUFFIXES,
        KEY_QUALIFIERS,
        TOKEN_QUALIFIERS,
        CODE_QUALIFIERS,
        META_AFTER,
        META_BEFORE,
        COUNT_WORDS,
        STOP_WORDS,
    )
    for word in words
)
_SUFFIX_RE = re.compile("(?:" + "|".join(sorted(SUFFIXES, key=len, reverse=True)) + ")$")
_PASS = "pass"  # noqa: S105 - a word to look for, not a password


def _word_matches(pattern: str, token: str) -> bool:
    if pattern.endswith("*"):
        return token.startswith(pattern[:-1])
    return token == pattern


def _excluded(rule: _Rule, tokens: list[str], i: int, end: int, counting: bool, public: bool) -> bool:
    if end < len(tokens) and tokens[end] in META_AFTER:
        return True
    if i > 0 and tokens[i - 1] in META_BEFORE:
        return True
    if rule.words == ("token",) and counting:
        return True
    if rule.is_key and public:
        return True
    return _another_word(tokens, i, end)


def _another_word(tokens: list[str], i: int, end: int) -> bool:
    """Whether the words around ``tokens[i:end]`` make it another word ("palabra clave")."""
    if i > 0 and tokens[i - 1] in OTHER_WORD_BEFORE.get(tokens[i], ()):
        return True
    return end < len(tokens) and tokens[end] in OTHER_WORD_AFTER.get(tokens[end - 1], ())


def _match_tokens(tokens: list[str], *, is_name: bool) -> tuple[str, str] | None:
    """The first secret phrase in ``tokens``: (matched words, category)."""
    counting = any(t in COUNT_WORDS for t in tokens)
    public = "public" in tokens
    for i, token in enumerate(tokens):
        candidates = _EXACT.get(token, [])
        if _PREFIXED:
            candidates = candidates + [r for r in _PREFIXED if _word_matches(r.words[0], token)]
        for rule in candidates:
            end = i + len(rule.words)
            if end > len(tokens):
                continue
            if not all(_word_matches(w, t) for w, t in zip(rule.words[1:], tokens[i + 1 : end], strict=True)):
                continue
            if _excluded(rule, tokens, i, end, counting, public):
                continue
            return " ".join(tokens[i:end]), rule.category
        m = _SUFFIX_RE.search(token)
        # Whole words with a phrase rule ("token", "secret") were handled above, with
        # their exclusions; the rest ("passwort", "kennwort") match here as well.
        if m is not None and (len(token) > len(m[0]) or token not in _EXACT):
            head = token[: -len(m[0])]
            # "maxtokens" is a count; a head such as "id" or "name" is about the secret.
            about = head in COUNT_WORDS or head in META_BEFORE
            if not about and not (i + 1 < len(tokens) and tokens[i + 1] in META_AFTER):
                return token, SUFFIXES[m[0]]
        # "db_pass", "user_pass": "pass" as the last word of a name only.
        if is_name and i == len(tokens) - 1 and token == _PASS and not _another_word(tokens, i, i + 1):
            return token, "password"
    return None


def _match_text(text: str, *, is_name: bool) -> tuple[str, str] | None:
    # The same names and titles come back on every call: remember short ones (long texts
    # are not kept, so the cache stays small whatever clients send).
    if len(text) <= _CACHED_TEXT:
        return _match_text_cached(text, is_name)
    return _match_text_uncached(text, is_name)


def _match_text_uncached(text: str, is_name: bool) -> tuple[str, str] | None:
    normalized = _normalize(text)
    found = _match_tokens(_tokens(normalized), is_name=is_name)
    if found is not None:
        return found
    compact = "".join(normalized.split())
    for needle, category in SUBSTRINGS.items():
        if needle in compact:
            return needle, category
    return None


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
_match_text_cached = functools.lru_cache(maxsize=4096)(_match_text_uncached)
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
        found = _match_text(text, is_name=where == "name")
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
