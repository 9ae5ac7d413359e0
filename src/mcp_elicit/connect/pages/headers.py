"""The security headers on every response of the pages.

* ``Content-Security-Policy``: nothing may load (``default-src 'none'``: no script at all, no
  images, no frames); the one stylesheet is inline and allowed by its SHA-256 hash, not by
  ``'unsafe-inline'``; ``frame-ancestors 'none'`` and ``base-uri 'none'``. ``form-action`` is
  ``'self'`` on every page but one: see :class:`SecurityHeaders`.
* ``X-Frame-Options: DENY`` (clickjacking, for browsers that ignore ``frame-ancestors``),
  ``Cache-Control: no-store`` (pages show who is signed in and carry CSRF tokens),
  ``Referrer-Policy: no-referrer`` (the URL carries a flow id, the callback a code),
  ``X-Content-Type-Options: nosniff``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["SecurityHeaders", "origin_of", "security_headers"]

Header = tuple[bytes, bytes]


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of an absolute URL (lower-cased scheme and host)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host.isascii():  # an internationalised provider host: CSP wants its A-label form
        host = host.encode("idna").decode("ascii")
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    suffix = f":{port}" if port is not None and port != default else ""
    return f"{parts.scheme.lower()}://{host}{suffix}"


def security_headers(stylesheet: str, form_action: Iterable[str] = ()) -> list[Header]:
    """The headers above; ``stylesheet`` is the exact text of the page's one ``<style>``,
    ``form_action`` the CSP sources allowed besides ``'self'``."""
    digest = base64.b64encode(hashlib.sha256(stylesheet.encode("utf-8")).digest()).decode("ascii")
    sources = " ".join(["'self'", *form_action])
    csp = (
        "default-src 'none'; "
        f"style-src 'sha256-{digest}'; "
        f"form-action {sources}; "
        "frame-ancestors 'none'; base-uri 'none'"
    )
    return [
        (b"content-security-policy", csp.encode("ascii")),
        (b"x-frame-options", b"DENY"),
        (b"cache-control", b"no-store"),
        (b"pragma", b"no-cache"),
        (b"referrer-policy", b"no-referrer"),
        (b"x-content-type-options", b"nosniff"),
    ]


@dataclass(frozen=True, slots=True)
class SecurityHeaders:
    """The two header sets of the pages.

    ``strict`` (every page): ``form-action 'self'``; every form posts to us and lands on us.

    ``to_provider`` (the connection's confirmation page only): its "Continue" form posts to us
    and the 303 sends the browser to the provider's authorize URL. Chromium and Safari apply
    ``form-action`` to every redirect that follows a form POST, including the provider's *own*
    redirects (an authorize endpoint on one host that sends the browser on to its sign-in host on
    another): a list of the providers' origins would block those, and "Continue" would silently
    do nothing while the flow stays "in progress". So that page allows the providers' origins and
    any https origin (and, in loopback development, any http one): nothing on it can submit
    anything but our own CSRF token to our own path.
    """

    strict: list[Header]
    to_provider: list[Header]

    @classmethod
    def build(cls, stylesheet: str, provider_urls: Iterable[str], *, development: bool) -> SecurityHeaders:
        origins = sorted({origin_of(url) for url in provider_urls})
        schemes = ["https:", "http:"] if development else ["https:"]
        return cls(security_headers(stylesheet), security_headers(stylesheet, [*origins, *schemes]))
