"""The client capabilities a request declares: exactly what the configured parts can do.

An answerer declares the elicitation modes in its ``modes`` (``{"form": {}}``, ``{"url": {}}`` or
both; no modes, no ``elicitation`` at all), a sampler declares ``sampling``, a roots provider
``roots``. Clients that declare more than they can render are a well-known source of hung calls
and silent declines; this one never does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_elicit.client.providers import RootsProvider, Sampler
from mcp_elicit.client.questions import Answerer

_MODES = ("form", "url")


@dataclass(frozen=True, slots=True)
class Declared:
    """What this client declares on every request, and the checks that follow from it."""

    modes: frozenset[str]
    sampling: bool
    roots: bool

    @classmethod
    def of(cls, answerer: Answerer | None, sampler: Sampler | None, roots: RootsProvider | None) -> Declared:
        modes = frozenset(m for m in (answerer.modes if answerer is not None else ()) if m in _MODES)
        return cls(modes, sampler is not None, roots is not None)

    def to_wire(self) -> dict[str, Any]:
        """The ``clientCapabilities`` object. ``{"elicitation": {}}`` would mean form mode, so
        the modes are always spelled out."""
        caps: dict[str, Any] = {}
        if self.modes:
            caps["elicitation"] = {mode: {} for mode in _MODES if mode in self.modes}
        if self.sampling:
            caps["sampling"] = {}
        if self.roots:
            caps["roots"] = {}
        return caps
