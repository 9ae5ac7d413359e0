"""The security headers on every response of the pages.

* ``Content-Security-Policy``: nothing may load (``default-src 'none'``: no script at all, no
  images, no frames); the one stylesheet is inline and allowed by its SHA-256 hash, not by
  ``'unsafe-inline'``; ``form-action`` is ``'self'`` plus the origins the pages' forms end up
  redirected to (browsers apply ``form-action`` to the redirects that follow a form POST, so the
  "Continue" button's 303 to the provider needs the provider's origin listed);
  ``frame-ancestors 'none'`` and ``base-uri 'none'``.
* ``X-Frame-Options: DENY`` (clickjacking, for browsers that ignore ``frame-ancestors``),
  ``Cache-Control: no-store`` (pages show who is signed in and carry CSRF tokens),
  ``Referrer-Policy: no-referrer`` (the URL carries a flow id, the callback a code),
  ``X-Content-Type-Options: nosniff``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from urllib.parse import urlsplit

__all__ = ["origin_of", "security_headers"]


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


def security_headers(stylesheet: str, form_targets: Iterable[str]) -> list[tuple[bytes, bytes]]:
    """The headers above; ``stylesheet`` is the exact text of the page's one ``<style>``."""
    digest = base64.b64encode(hashlib.sha256(stylesheet.encode("utf-8")).digest()).decode("ascii")
    targets = " ".join(sorted({origin_of(url) for url in form_targets}))
    csp = (
        "default-src 'none'; "
        f"style-src 'sha256-{digest}'; "
        f"form-action 'self'{' ' + targets if targets else ''}; "
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
