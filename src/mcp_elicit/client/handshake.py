"""The 2025-11-25 ``initialize`` handshake, client side, with no I/O: what is sent, what is accepted.

::

    → {"method": "initialize", "params": {"protocolVersion": "2025-11-25",
                                          "capabilities": {...}, "clientInfo": {...}}}
    ← {"result": {"protocolVersion": "2025-11-25", "capabilities": {...},
                  "serverInfo": {"name": ..., "version": ...}, "instructions"?: ...}}
    → {"method": "notifications/initialized"}

The client asks for its latest handshake version; a server that does not speak it answers with
another one. Only the versions in :data:`~mcp_elicit.wire.legacy.LEGACY_VERSIONS` are accepted back -- never
2026-07-28, which no ``initialize`` may negotiate -- and anything else ends the connection
(:class:`~mcp_elicit.client.errors.UnspokenVersionError`). ``serverInfo`` is required: without it
the person could not be told who asks.

The capabilities are the same ones the 2026-07-28 side declares per request (exactly what the
answerer, sampler and roots can do), declared once for the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_elicit.client.capabilities import Declared
from mcp_elicit.client.errors import MalformedMessageError, UnspokenVersionError
from mcp_elicit.client.questions import ServerIdentity
from mcp_elicit.wire.legacy import LATEST_LEGACY, LEGACY_VERSIONS


def initialize_params(declared: Declared, client_info: dict[str, Any]) -> dict[str, Any]:
    """The params of ``initialize``."""
    return {
        "protocolVersion": LATEST_LEGACY,
        "capabilities": declared.to_wire(),
        "clientInfo": client_info,
    }


@dataclass(frozen=True, slots=True)
class InitializeResult:
    """The server's answer to ``initialize``: the negotiated ``protocol_version``, its
    ``capabilities`` (fixed for the session), ``server_info`` and ``instructions``."""

    protocol_version: str
    capabilities: dict[str, Any]
    server_info: dict[str, Any]
    instructions: str | None
    raw: dict[str, Any]

    @classmethod
    def parse(cls, result: object) -> InitializeResult:
        """Read and check an ``InitializeResult``; raises
        :class:`~mcp_elicit.client.errors.UnspokenVersionError` for a version this client does
        not speak there, :class:`~mcp_elicit.client.errors.MalformedMessageError` for the rest."""
        if not isinstance(result, dict):
            raise MalformedMessageError("the result of initialize must be an object")
        version = result.get("protocolVersion")
        if version not in LEGACY_VERSIONS:
            raise UnspokenVersionError(version, LEGACY_VERSIONS)
        info = result.get("serverInfo")
        if not isinstance(info, dict) or not isinstance(info.get("name"), str):
            raise MalformedMessageError("the result of initialize has no serverInfo with a name")
        capabilities = result.get("capabilities")
        if not isinstance(capabilities, dict):
            raise MalformedMessageError("the result of initialize must have 'capabilities' as an object")
        instructions = result.get("instructions")
        return cls(
            protocol_version=str(version),
            capabilities=capabilities,
            server_info=info,
            instructions=instructions if isinstance(instructions, str) else None,
            raw=result,
        )

    def identity(self, reached_via: str) -> ServerIdentity:
        """Who is asking, as shown with each question (``serverInfo``, and how it was reached)."""
        return ServerIdentity.of(self.server_info, reached_via, self.protocol_version)
