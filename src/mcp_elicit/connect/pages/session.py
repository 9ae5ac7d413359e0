"""The browser session: who signed in on the pages, in one sealed cookie.

The cookie holds the principal key (``"issuer|subject"`` from the ID token of the same
authorization server that issues the MCP access tokens), a display name and email, a random
session id, a per-session CSRF secret, and its creation and expiry times. It is sealed (AES-GCM,
see :mod:`.sealing`), so the browser can neither read nor forge it; it lasts ``session_ttl``
seconds. Signing out voids the session id in the flow store (a copied cookie dies with it), and
``sign_out_everywhere`` voids every session of a principal; the pages check both on every request
(:meth:`PagesContext.session <mcp_elicit.connect.pages.context.PagesContext.session>`).
"""

from __future__ import annotations

import base64
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mcp_elicit.connect.flows.model import clean_label
from mcp_elicit.connect.identity.principal import Principal

from .cookies import CookiePolicy
from .request import Request
from .sealing import CookieSealer
from .templates import Identity

__all__ = ["Session", "SessionCookies"]

_CSRF_SECRET_BYTES = 32
_SESSION_ID_BYTES = 16
_SESSION_ID_LENGTH = 22  # base64url of 16 bytes, unpadded
_COOKIE_VERSION = 2  # 2: the session id (a version 1 cookie reads as signed out)
_MAX_LABEL = 200


@dataclass(frozen=True, slots=True)
class Session:
    """A signed-in browser."""

    principal: Principal
    name: str | None
    email: str | None
    csrf_secret: bytes = field(repr=False)
    created: float
    expires: float
    session_id: str = field(repr=False)

    @property
    def identity(self) -> Identity:
        parts = [part for part in (self.name, self.email) if part]
        label = " · ".join(parts) if parts else self.principal.subject
        return Identity(label=label, subject=self.principal.subject, issuer=self.principal.issuer)


def _label(value: object) -> str | None:
    """A display claim, if it is a short string, cleaned as the flows' labels are: it is shown
    on the pages, where a bidi override or a zero-width character could disguise it."""
    if not isinstance(value, str) or len(value) > _MAX_LABEL:
        return None
    return clean_label(value, _MAX_LABEL)


class SessionCookies:
    """Issue and read the session cookie."""

    def __init__(
        self, sealer: CookieSealer, policy: CookiePolicy, ttl: float, clock: Callable[[], float] = time.time
    ) -> None:
        self._sealer = sealer
        self._policy = policy
        self._ttl = ttl
        self._clock = clock

    @property
    def name(self) -> str:
        return self._policy.session

    def new(self, principal: Principal, name: object, email: object) -> Session:
        now = self._clock()
        return Session(
            principal=principal,
            name=_label(name),
            email=_label(email),
            csrf_secret=os.urandom(_CSRF_SECRET_BYTES),
            created=now,
            expires=now + self._ttl,
            session_id=secrets.token_urlsafe(_SESSION_ID_BYTES),
        )

    def set_cookie(self, session: Session) -> tuple[bytes, bytes]:
        payload = {
            "v": _COOKIE_VERSION,
            "s": session.session_id,
            "p": session.principal.key,
            "n": session.name,
            "e": session.email,
            "c": base64.urlsafe_b64encode(session.csrf_secret).decode("ascii"),
            "iat": session.created,
        }
        ttl = max(1.0, session.expires - self._clock())
        value = self._sealer.seal(self.name, payload, ttl)
        return self._policy.set(self.name, value, int(ttl))

    def clear_cookie(self) -> tuple[bytes, bytes]:
        return self._policy.clear(self.name)

    def read(self, request: Request) -> Session | None:
        """The session this browser presents, or ``None`` (absent, tampered, expired, malformed)."""
        for value in request.cookies(self.name):
            payload = self._sealer.open(self.name, value)
            if payload is None or payload.get("v") != _COOKIE_VERSION:
                continue
            try:
                principal = Principal.from_key(payload["p"])
                secret = base64.urlsafe_b64decode(payload["c"])
                created = float(payload["iat"])
                expires = float(payload["exp"])
                session_id = payload["s"]
            except (KeyError, TypeError, ValueError):
                continue
            if len(secret) != _CSRF_SECRET_BYTES:
                continue
            if not isinstance(session_id, str) or len(session_id) != _SESSION_ID_LENGTH:
                continue
            return Session(
                principal,
                _label(payload.get("n")),
                _label(payload.get("e")),
                secret,
                created,
                expires,
                session_id,
            )
        return None
