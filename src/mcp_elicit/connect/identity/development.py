"""DEVELOPMENT ONLY: a fixed identity for demos and local experiments. NOT SECURE.

:class:`DevelopmentIdentity` authenticates nobody: it hands out a principal whose issuer is
``urn:mcp-elicit:development`` for any request (or, with ``tokens=``, for a few fixed strings, so
that a demo can show two people, Alice and Bob). It exists so that the demo can run the URL-mode
flows without an authorization server.

It refuses to be constructed unless the caller acknowledges that, either with
``i_understand_this_is_not_secure=True`` or with the environment variable
``MCP_ELICIT_INSECURE_DEVELOPMENT_IDENTITY=1``; it logs a WARNING when constructed, and its
``repr``/``str`` say what it is. Its principals are recognisable (:attr:`Principal.is_development`)
so production code can refuse them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Final

from mcp_elicit.server.auth import Caller, Unauthorized

from .errors import DevelopmentIdentityRefused, InvalidToken
from .http import _BEARER_RE, INVALID_TOKEN_PUBLIC, MISSING_TOKEN_MESSAGE
from .principal import DEVELOPMENT_ISSUER, Principal

__all__ = ["DEVELOPMENT_IDENTITY_ENV_VAR", "DevelopmentIdentity"]

_log = logging.getLogger("mcp_elicit.connect.identity")

DEVELOPMENT_IDENTITY_ENV_VAR: Final = "MCP_ELICIT_INSECURE_DEVELOPMENT_IDENTITY"
_LABEL: Final = "DEVELOPMENT ONLY, NOT SECURE"


class DevelopmentIdentity:
    """A development-only :class:`~mcp_elicit.connect.identity.Verifier` (and ``authenticate``
    hook) that trusts everyone. Never use it where real users or real credentials are involved.

    Without ``tokens``: every token (and, through :meth:`authenticate`, every request, with or
    without a token) is ``subject``. With ``tokens`` (``{"alice-token": "alice", ...}``): a bearer
    token in that table is its subject; any other token, and a request without one, is refused
    with a 401 (the table is what guards ``/mcp``; :attr:`principal` is then only what
    ``DevelopmentLogin`` signs browsers in as).
    """

    def __init__(
        self,
        subject: str = "demo-user",
        *,
        tokens: Mapping[str, str] | None = None,
        i_understand_this_is_not_secure: bool = False,
    ) -> None:
        acknowledged = i_understand_this_is_not_secure is True or (
            os.environ.get(DEVELOPMENT_IDENTITY_ENV_VAR, "").strip() == "1"
        )
        if not acknowledged:
            raise DevelopmentIdentityRefused(
                "DevelopmentIdentity authenticates nobody and is for demos only. Pass "
                "i_understand_this_is_not_secure=True or set "
                f"{DEVELOPMENT_IDENTITY_ENV_VAR}=1 to use it anyway."
            )
        self._principal = Principal(DEVELOPMENT_ISSUER, subject)
        self._tokens = {token: Principal(DEVELOPMENT_ISSUER, sub) for token, sub in (tokens or {}).items()}
        _log.warning(
            "DevelopmentIdentity in use (%s): every caller is trusted as %r; never deploy this",
            _LABEL,
            self._principal.key if not self._tokens else sorted(p.key for p in self._tokens.values()),
        )

    @property
    def principal(self) -> Principal:
        """The principal given to requests without a (mapped) token."""
        return self._principal

    def __repr__(self) -> str:
        return f"DevelopmentIdentity(subject={self._principal.subject!r}) [{_LABEL}]"

    __str__ = __repr__

    async def verify(self, token: str) -> Principal:
        """The development principal for ``token`` (see the class docstring)."""
        if not self._tokens:
            return self._principal
        found = self._tokens.get(token) if isinstance(token, str) else None
        if found is None:
            raise InvalidToken("unknown-token")
        return found

    async def authenticate(self, headers: Mapping[str, str]) -> str | Caller:
        """``HttpApp(authenticate=identity.authenticate)``: the principal key. Without ``tokens``
        every request is :attr:`principal`; with ``tokens`` a request needs one of them: a missing
        or unknown bearer token gets a 401."""
        if not self._tokens:
            return self._principal.key
        value = headers.get("authorization")
        if value is None:
            # Fail closed: a configured token table is the only guard of /mcp (RFC 6750 §3.1).
            raise Unauthorized("Bearer", MISSING_TOKEN_MESSAGE)
        match = _BEARER_RE.fullmatch(value.strip())
        try:
            principal = await self.verify(match.group(1) if match else "")
        except InvalidToken:
            raise Unauthorized('Bearer error="invalid_token"', INVALID_TOKEN_PUBLIC) from None
        return principal.key if principal.client_id is None else Caller(principal.key, principal.client_id)
