"""Cookie names, attributes and parsing for the pages.

Every cookie is ``HttpOnly; SameSite=Lax; Path=/`` and, outside the loopback development
exception, ``Secure`` with the ``__Host-`` prefix (the browser then refuses it unless it was set
over https by this exact host, with ``Path=/`` and no ``Domain``, so a sibling subdomain cannot
plant or overwrite it). ``Lax`` and not ``Strict``: the OAuth and sign-in callbacks are
cross-site top-level GETs, which carry ``Lax`` cookies and not ``Strict`` ones.

Transaction cookies (one sign-in or one connection in progress) are named after a hash of their
OAuth ``state``: two flows running in two tabs of one browser do not overwrite each other, the
callback finds its cookie from the ``state`` it carries, and the name says nothing personal.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["CookiePolicy", "parse_cookie_header"]

_BASE_NAME: Final = "mcp-elicit-"
_COOKIE_VALUE_RE: Final = re.compile(r"[A-Za-z0-9_-]*")
MAX_COOKIE_HEADER: Final = 16384
MAX_COOKIES: Final = 64


@dataclass(frozen=True, slots=True)
class CookiePolicy:
    """How this deployment names and flags its cookies (``secure=False`` only in development)."""

    secure: bool

    @property
    def prefix(self) -> str:
        return ("__Host-" if self.secure else "") + _BASE_NAME

    @property
    def session(self) -> str:
        return self.prefix + "session"

    def transaction(self, kind: str, state: str) -> str:
        """The cookie of one ``kind`` (``login`` / ``tx``) transaction, named by its ``state``."""
        digest = hashlib.sha256(state.encode("utf-8", "surrogatepass")).hexdigest()[:24]
        return f"{self.prefix}{kind}-{digest}"

    def set(self, name: str, value: str, max_age: int) -> tuple[bytes, bytes]:
        """A ``Set-Cookie`` header (``value`` is a sealed, base64url value)."""
        if not _COOKIE_VALUE_RE.fullmatch(value):  # sealed values only; never free text
            raise ValueError("cookie values must be base64url")
        parts = [f"{name}={value}", "Path=/", f"Max-Age={max_age}", "HttpOnly", "SameSite=Lax"]
        if self.secure:
            parts.append("Secure")
        return (b"set-cookie", "; ".join(parts).encode("ascii"))

    def clear(self, name: str) -> tuple[bytes, bytes]:
        """A ``Set-Cookie`` header that deletes ``name`` (same attributes, ``Max-Age=0``)."""
        return self.set(name, "", 0)


def parse_cookie_header(header: str | None) -> Mapping[str, list[str]]:
    """``name -> [values]`` from a ``Cookie`` header; malformed pairs are skipped.

    Duplicates are kept (a planted cookie of the same name must not hide ours: callers try each
    value). Oversized headers yield nothing rather than an error: an unreadable cookie is the
    same as no cookie."""
    cookies: dict[str, list[str]] = {}
    if not header or len(header) > MAX_COOKIE_HEADER:
        return cookies
    for count, pair in enumerate(header.split(";")):
        if count >= MAX_COOKIES:
            break
        name, sep, value = pair.strip().partition("=")
        if not sep or not name:
            continue
        value = value.strip().strip('"')
        if _COOKIE_VALUE_RE.fullmatch(value):
            cookies.setdefault(name, []).append(value)
    return cookies
