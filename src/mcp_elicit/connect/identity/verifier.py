"""The pluggable token verifier protocol."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .principal import Principal

__all__ = ["Verifier"]


@runtime_checkable
class Verifier(Protocol):
    """Turns an MCP access token into the :class:`Principal` it was issued for.

    Contract for implementations (token introspection, another JWT library, a test double):

    * raise :class:`~mcp_elicit.connect.identity.InvalidToken` for any token that must be refused,
      including a token issued for another resource (audience), an expired one, or one whose
      issuer is not the configured authorization server;
    * raise :class:`~mcp_elicit.connect.identity.IdentityUnavailable` when the answer is unknown
      (the issuer is unreachable), never guess;
    * never send the token anywhere except, for introspection (RFC 7662), to the issuer's own
      introspection endpoint. Never forward it to a third party (no token passthrough).
    """

    async def verify(self, token: str) -> Principal:
        """The principal of a valid ``token``; raises ``InvalidToken`` otherwise."""
        ...
