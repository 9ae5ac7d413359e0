"""Who is calling: the types an authentication hook works with.

A server behind authentication is given an ``authenticate`` hook (``Server.asgi(authenticate=...)``,
or the connect kit's identity). The HTTP transport calls it with the request headers; it returns
the :class:`Caller` a validated token names, a bare principal string, ``None`` for an anonymous
request, or raises :class:`Unauthorized`. The one :class:`Caller` then travels down with the
request to the engine, which binds every sealed ``requestState`` to it, and to the handler
(``ctx.caller``). Identity only ever comes from a validated token, never from the request body.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

__all__ = ["Authenticate", "Caller", "Unauthorized", "as_caller"]


@dataclass(frozen=True, slots=True)
class Caller:
    """The user (``principal``) and the OAuth client the token was issued to (its ``client_id``
    or ``azp``; None when the token names none), both from a validated token."""

    principal: str
    client: str | None = None


class Unauthorized(Exception):
    """Raised by an ``authenticate`` hook: answer 401 with this ``WWW-Authenticate`` value."""

    def __init__(self, www_authenticate: str, message: str = "Unauthorized") -> None:
        super().__init__(message)
        self.www_authenticate = www_authenticate
        self.message = message


Authenticate = Callable[[Mapping[str, str]], Awaitable["str | Caller | None"]]
"""Given the request headers (lower-case names): the caller, a bare principal, None for an
anonymous request; or raise :class:`Unauthorized`."""


def as_caller(found: str | Caller | None) -> Caller | None:
    """What a hook returned, as a :class:`Caller` (a bare principal names no client)."""
    if found is None or isinstance(found, Caller):
        return found
    return Caller(found)
