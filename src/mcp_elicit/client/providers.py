"""What a client can plug in besides an answerer: a sampler (the client's model) and roots.

Both are deprecated in MCP 2026-07-28 (SEP-2577) but still part of it. Configuring one is what
declares the matching capability; without one the client declares nothing and refuses a server
that asks anyway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Sampler(Protocol):
    """Answers ``sampling/createMessage``: takes its ``params``, returns a ``CreateMessageResult``
    (``{"role", "content", "model", "stopReason"?}``)."""

    async def create_message(self, params: dict[str, Any]) -> dict[str, Any]:
        """Run the model on the request's ``params``; the returned ``CreateMessageResult`` goes to
        the server as is."""
        ...


@runtime_checkable
class RootsProvider(Protocol):
    """Answers ``roots/list``: the roots (``{"uri": "file://...", "name"?}``) the server may use."""

    async def list_roots(self) -> Sequence[Mapping[str, Any]]:
        """The roots to send now (asked again at each ``roots/list``)."""
        ...


class StaticRoots:
    """A fixed list of roots (what ``roots=[...]`` becomes)."""

    def __init__(self, roots: Sequence[Mapping[str, Any]]) -> None:
        self._roots = [dict(root) for root in roots]

    async def list_roots(self) -> Sequence[Mapping[str, Any]]:
        return self._roots
