"""Client capabilities as declared on one request, and the questions a server asks of them.

``{"elicitation": {}}`` means form mode only (backward compatibility); a client that wants URL
mode must say ``{"elicitation": {"url": {}}}``. A URL-only client does not support forms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

ElicitMode = Literal["form", "url"]


@dataclass(frozen=True, slots=True)
class ClientCapabilities:
    raw: dict[str, Any]

    def elicitation_modes(self) -> frozenset[str]:
        elicitation = self.raw.get("elicitation")
        if not isinstance(elicitation, dict):
            return frozenset()
        modes = {mode for mode in ("form", "url") if isinstance(elicitation.get(mode), dict)}
        return frozenset(modes) if modes else frozenset({"form"})

    def can_elicit(self, mode: ElicitMode = "form") -> bool:
        return mode in self.elicitation_modes()

    def can_sample(self, *, tools: bool = False, context: bool = False) -> bool:
        sampling = self.raw.get("sampling")
        if not isinstance(sampling, dict):
            return False
        if tools and not isinstance(sampling.get("tools"), dict):
            return False
        return not (context and not isinstance(sampling.get("context"), dict))

    def can_list_roots(self) -> bool:
        return isinstance(self.raw.get("roots"), dict)


def required_for_elicitation(mode: ElicitMode) -> dict[str, Any]:
    """The ``requiredCapabilities`` object of a -32021 error for this elicitation mode."""
    return {"elicitation": {mode: {}}}
