"""The server-side check of a URL before it goes out in a URL-mode elicitation.

The spec: the URL must be valid, should be https outside development, must not carry
credentials. We refuse anything else before it reaches a client (fail closed).
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
MAX_URL_LENGTH = 2048


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_elicitation_url(url: str) -> str:
    """Return ``url`` if it may be sent; raise ValueError saying why not."""
    if not isinstance(url, str) or not url:
        raise ValueError("the elicitation URL must be a non-empty string")
    if len(url) > MAX_URL_LENGTH:
        raise ValueError(f"the elicitation URL is longer than {MAX_URL_LENGTH} characters")
    if any(ord(ch) <= 0x20 or ord(ch) == 0x7F for ch in url) or "\\" in url:
        raise ValueError("the elicitation URL contains spaces, control characters or backslashes")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in ("https", "http") or not parts.netloc or not host:
        raise ValueError(f"the elicitation URL must be an absolute https URL, not {url!r}")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ValueError("the elicitation URL must not carry credentials (user@host)")
    if scheme == "http" and not _is_loopback(host):
        raise ValueError(
            "the elicitation URL must use https; plain http is allowed only for localhost in development"
        )
    try:
        parts.port  # noqa: B018 - raises ValueError for an out-of-range port
    except ValueError:
        raise ValueError("the elicitation URL has an invalid port") from None
    return url
