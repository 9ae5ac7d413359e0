"""Recognise words that ask for, or name, a secret: the matcher of the secret-field lint.

One recogniser for every place that reads names for secrets: :func:`match_secret` is what
:func:`~mcp_elicit.schema.lint_form` asks of a field's name, title and description, and
:func:`is_credential_name` is what the server's URL check asks of every query, fragment and
path parameter name, so a spelling the lint refuses in a form (``accessToken``,
``client-secret``, ``X-API-KEY``, ``refresh_token[]``) is refused in a URL too.

Text is read as words: NFKC, format characters removed, camelCase split, case-folded, split
on everything that is not a letter or digit (``-``, ``_``, ``.``, ``[]``, spaces), accents
removed from Latin words, a plural "s" and a numbering digit dropped, stop words removed.
The words are then matched against the vocabulary of :mod:`mcp_elicit.schema.lint_words`
(its docstring lists each decision: ``max_tokens`` is a count, ``api_key_name`` is about a
key, ``key`` alone is not a secret...).

>>> is_credential_name("refresh_token[]")
'an access token'
>>> is_credential_name("X-Api-Key"), is_credential_name("clientSecret")
('an API key', 'a secret')
>>> is_credential_name("max_tokens") is None and is_credential_name("client_id") is None
True
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

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

__all__ = ["is_credential_name", "match_secret", "name_words"]


def match_secret(text: str, *, is_name: bool) -> tuple[str, str] | None:
    """The first secret phrase in ``text``: (the matched words as read, category), or None.

    ``is_name``: ``text`` is an identifier, not prose (then a last word ``pass`` is a password,
    as in ``db_pass``). Categories are the keys of ``lint_words.CATEGORY_TEXT``.
    """
    # The same names and titles come back on every call: remember short ones (long texts
    # are not kept, so the cache stays small whatever clients send).
    if len(text) <= _CACHED_TEXT:
        return _match_text_cached(text, is_name)
    return _match_text_uncached(text, is_name)


def is_credential_name(name: str) -> str | None:
    """What secret ``name`` (a form field's, a URL parameter's) names, as a message says it
    (``"an access token"``), or None. The lint reads field names with the same rule."""
    found = match_secret(name, is_name=True)
    return None if found is None else CATEGORY_TEXT.get(found[1], found[1])


def name_words(name: str) -> tuple[str, ...]:
    """``name`` as the recogniser reads it: ``"X-Amz-Signature"`` -> ``("x", "amz", "signature")``,
    ``"sessionId[]"`` -> ``("session", "id")``. For callers that add words of their own."""
    return tuple(_tokens(_normalize(name)))


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


_CACHED_TEXT = 512
_match_text_cached = functools.lru_cache(maxsize=4096)(_match_text_uncached)
