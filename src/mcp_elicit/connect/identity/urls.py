"""Small URL rules shared by the identity and flow code (no I/O)."""

from __future__ import annotations

from typing import Final
from urllib.parse import SplitResult, urlsplit

from mcp_elicit.wire.hosts import is_loopback_host

__all__ = ["check_service_url", "is_loopback_host", "parse_configured_url"]

_FORBIDDEN_CHARS: Final = frozenset(' "<>\\^`{|}')


def check_service_url(url: str, what: str, *, allow_loopback_http: bool) -> SplitResult:
    """Parse an absolute https URL of a service we talk to or publish; ``ValueError`` otherwise.

    Refused: other schemes; ``http`` unless ``allow_loopback_http`` and the host is loopback
    (:func:`mcp_elicit.wire.hosts.is_loopback_host`, re-exported here);
    userinfo; fragments; whitespace, control and other characters that have no business in a
    configured URL (``"``, ``\\``, ``<``…, which also keeps the URL safe inside a quoted-string).
    """
    parts = parse_configured_url(url, what)
    if parts.scheme == "http":
        if not (allow_loopback_http and is_loopback_host(parts.hostname)):
            raise ValueError(_http_refused(url, what, loopback=is_loopback_host(parts.hostname)))
    elif parts.scheme != "https":
        raise ValueError(f"{what} must be an https URL: {url!r}")
    if not parts.hostname:
        raise ValueError(f"{what} has no host: {url!r}")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ValueError(f"{what} must not contain userinfo: {url!r}")
    if parts.fragment or url.endswith("#"):
        raise ValueError(f"{what} must not contain a fragment: {url!r}")
    return parts


def _http_refused(url: str, what: str, *, loopback: bool) -> str:
    """Why an ``http`` URL is refused. On a loopback host the only thing missing is development
    mode (every caller that refuses loopback http has a ``development=`` setting): say that,
    rather than "use https", which a local demo cannot."""
    if loopback:
        return (
            f"{what} must use https, or pass development=True to allow http on this loopback "
            f"host (for local development only): {url!r}"
        )
    return f"{what} must use https (http is allowed only on a loopback host, for development): {url!r}"


def parse_configured_url(url: str, what: str) -> SplitResult:
    """The parts of a URL from a configuration or a provider's metadata, once it is one a request
    can be sent to; ``ValueError`` for an empty one, whitespace, control and other characters that
    have no business in it (``"``, ``\\``, ``<``…), or a port that is not a number in 0-65535
    (which the HTTP client would refuse with an error of its own at the first request)."""
    if not isinstance(url, str) or not url:
        raise ValueError(f"{what} must be a non-empty str")
    if any(ord(ch) <= 0x20 or ord(ch) >= 0x7F or ch in _FORBIDDEN_CHARS for ch in url):
        raise ValueError(f"{what} contains a character not allowed here: {url!r:.200}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise ValueError(f"{what} is not a valid URL: {url!r:.200} ({exc})") from None
    return parts
