"""DEMO ONLY: :class:`DevelopmentLogin`, the pages' sign-in twin of ``DevelopmentIdentity``.

The pages must know who the browser user is, and a real deployment learns it from OpenID Connect
(:class:`~mcp_elicit.connect.pages.OidcLogin`). The demo has no identity provider, so this signs
the browser in as the principal of a
:class:`~mcp_elicit.connect.identity.DevelopmentIdentity` after one click on a page that says
"DEMO ONLY". Because that principal is exactly the one the MCP side gets from the same identity,
the pages' same-user checks run unchanged.

It authenticates nobody. :class:`~mcp_elicit.connect.pages.ConnectPages` accepts it only with
``development=True`` on a loopback ``base_url`` (and the identity itself exists only after an
explicit acknowledgement). The handlers are in :mod:`.development_signin`.
"""

from __future__ import annotations

import logging
from typing import Final

from mcp_elicit.connect.identity.development import DevelopmentIdentity
from mcp_elicit.connect.identity.principal import Principal

__all__ = ["DevelopmentLogin"]

_log = logging.getLogger("mcp_elicit.connect.pages")
_LABEL: Final = "DEMO ONLY, NOT SECURE"


class DevelopmentLogin:
    """Sign-in for the pages that trusts everyone: the browser becomes ``identity.principal``.

    ``display_name`` is what the pages show next to the subject ("Signed in as ...")."""

    __slots__ = ("display_name", "identity")

    def __init__(self, identity: DevelopmentIdentity, *, display_name: str = "Demo user") -> None:
        if not isinstance(identity, DevelopmentIdentity):
            raise TypeError("DevelopmentLogin needs the DevelopmentIdentity of the MCP side")
        if not isinstance(display_name, str) or not display_name.strip():
            raise ValueError("display_name must be a non-empty str")
        self.identity = identity
        self.display_name = display_name.strip()
        _log.warning(
            "DevelopmentLogin in use (%s): anyone who opens the sign-in page becomes %r",
            _LABEL,
            identity.principal.key,
        )

    @property
    def principal(self) -> Principal:
        """Who the browser signs in as: the identity's :attr:`~DevelopmentIdentity.principal`."""
        return self.identity.principal

    def __repr__(self) -> str:
        return f"DevelopmentLogin(subject={self.principal.subject!r}) [{_LABEL}]"

    __str__ = __repr__
