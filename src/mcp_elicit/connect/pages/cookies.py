"""Cookie names, attributes and parsing for the pages.

Every cookie is ``HttpOnly; SameSite=Lax; Path=/`` and, outside the loopback development
exception, ``Secure`` with the ``__Host-`` prefix (the browser then refuses it unless it was set
over https by this exact host, with ``Path=/`` and no ``Domain``, so a sibling subdomain cannot
plant or overwrite it). ``Lax`` and not ``Strict``: the OAuth and sign-in callbacks are
cross-site top-level GETs, which carry ``Lax`` cookies and not ``Strict`` ones.

Transaction cookies (one sign-in or one connection in progress) are named after a hash of their
OAuth ``state``: two flows running in two tabs of one browser do not overwrite each other, the
callback finds its cookie from the ``state`` it carries, and the name says nothing personal.
Nothing removes the cookie of a flow abandoned at the provider until it expires, so starting one
more clears the oldest beyond a few of its kind (:meth:`PagesContext.transaction_cookies
<mcp_elicit.connect.pages.context.PagesContext.transaction_cookies>`): a page that keeps sending
the browser to ``/login`` cannot fill the ``Cookie`` header until the session no longer fits.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["CookiePolicy", "parse_cookie_header"]

_BASE_NAME: Final = "mcp-elicit-"
_HOST_PREFIX: Final = "__Host-"
_COOKIE_VALUE_RE: Final = re.compile(r"[A-Za-z0-9_-]*")
_TRANSACTION_DIGEST_RE: Final = re.compile(r"[0-9a-f]{24}")
MAX_COOKIE_HEADER: Final = 65536
"""Characters of a ``Cookie`` header read (the rest is ignored, not the whole header)."""
MAX_COOKIES: Final = 64
"""Cookies of ours kept from one header (a browser holds a handful: see the module docstring)."""


@dataclass(frozen=True, slots=True)
class CookiePolicy:
    """How this deployment names and flags its cookies (``secure=False`` only in development)."""

    secure: bool

    @property
    def prefix(self) -> str:
        return (_HOST_PREFIX if self.secure else "") + _BASE_NAME

    @property
    def session(self) -> str:
        return self.prefix + "session"

    def transaction(self, kind: str, state: str) -> str:
        """The cookie of one ``kind`` (``login`` / ``tx``) transaction, named by its ``state``."""
        digest = hashlib.sha256(state.encode("utf-8", "surrogatepass")).hexdigest()[:24]
        return f"{self.prefix}{kind}-{digest}"

    def transactions(self, kind: str, names: Iterable[str]) -> list[str]:
        """The names among ``names`` that :meth:`transaction` gives for ``kind``, in order."""
        start = f"{self.prefix}{kind}-"
        return [
            name
            for name in names
            if name.startswith(start) and _TRANSACTION_DIGEST_RE.fullmatch(name, len(start))
        ]

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


def _is_ours(name: str) -> bool:
    return name.startswith(_BASE_NAME) or name.startswith(_HOST_PREFIX + _BASE_NAME)


def parse_cookie_header(header: str | None) -> Mapping[str, list[str]]:
    """``name -> [values]`` of our cookies in a ``Cookie`` header, in header order; malformed
    pairs are skipped.

    Duplicates are kept (a planted cookie of the same name must not hide ours: callers try each
    value). Bounded without being all-or-nothing: other cookies of this host are skipped unread,
    at most :data:`MAX_COOKIES` of ours are kept, and only the first :data:`MAX_COOKIE_HEADER`
    characters are read. A header grown too long (other applications' cookies, a pile of
    abandoned sign-ins from before the cap) must not sign the owner out."""
    cookies: dict[str, list[str]] = {}
    if not header:
        return cookies
    pairs = header[: MAX_COOKIE_HEADER + 1].split(";")
    if len(header) > MAX_COOKIE_HEADER:
        pairs.pop()  # cut at the limit: a partial pair, never a cookie to trust
    kept = 0
    for pair in pairs:
        name, sep, value = pair.strip().partition("=")
        if not sep or not _is_ours(name):
            continue
        value = value.strip().strip('"')
        if _COOKIE_VALUE_RE.fullmatch(value):
            cookies.setdefault(name, []).append(value)
            kept += 1
            if kept >= MAX_COOKIES:
                break
    return cookies
