"""CSRF protection for the pages' POST forms.

A form carries ``HMAC-SHA256(session csrf secret, "<route>|<flow id>")``: it is valid only in the
browser session that rendered it and only for that one action on that one flow (a token from the
``/secret/<a>`` form does not work on ``/connect/<b>``). The check is constant-time. On top, a
POST whose ``Origin`` (or ``Sec-Fetch-Site``) says it came from another site is refused, whatever
its token: a second, independent layer that costs nothing (see :func:`same_origin` for
``Origin: null``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping

from .session import Session

__all__ = ["csrf_token", "same_origin", "valid_csrf_token"]


def csrf_token(session: Session, route: str, flow_id: str = "") -> str:
    mac = hmac.new(session.csrf_secret, f"{route}|{flow_id}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def valid_csrf_token(session: Session, route: str, flow_id: str, token: str | None) -> bool:
    if not token:
        return False
    expected = csrf_token(session, route, flow_id)
    return hmac.compare_digest(expected.encode("ascii"), token.encode("utf-8", "replace"))


def same_origin(headers: Mapping[str, str], origin: str) -> bool:
    """False when the browser says the request came from elsewhere.

    Our pages send ``Referrer-Policy: no-referrer``, and under that policy browsers send
    ``Origin: null`` on every POST, our own forms included (Fetch, "append a request Origin
    header"). So ``null`` is accepted only together with ``Sec-Fetch-Site: same-origin``, which the
    referrer policy does not touch and which a page elsewhere (a sandboxed frame, a ``data:`` URL,
    also ``null``) cannot claim. A request with neither header passes this check (old browsers):
    the CSRF token is the real protection."""
    sent = headers.get("origin")
    site = headers.get("sec-fetch-site")
    site = None if site is None else site.strip().lower()
    if site is not None and site != "same-origin":
        return False
    if sent is None:
        return True
    sent = sent.strip().lower()
    if sent == "null":
        return site == "same-origin"
    return sent == origin
