"""Client capabilities as declared on one request, and the questions a server asks of them.

``{"elicitation": {}}`` means form mode only (backward compatibility); a client that wants URL
mode must say ``{"elicitation": {"url": {}}}``. A URL-only client does not support forms.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ElicitMode = Literal["form", "url"]


_NONE: frozenset[str] = frozenset()
_FORM: frozenset[str] = frozenset({"form"})
_URL: frozenset[str] = frozenset({"url"})
_BOTH: frozenset[str] = frozenset({"form", "url"})


def _modes(raw: dict[str, Any]) -> frozenset[str]:
    elicitation = raw.get("elicitation")
    if not isinstance(elicitation, dict):
        return _NONE
    form = isinstance(elicitation.get("form"), dict)
    url = isinstance(elicitation.get("url"), dict)
    if url:
        return _BOTH if form else _URL
    return _FORM  # {"form": {}} or the backward-compatible {}


@dataclass(frozen=True, slots=True)
class ClientCapabilities:
    raw: dict[str, Any]
    modes: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "modes", _modes(self.raw))

    def elicitation_modes(self) -> frozenset[str]:
        return self.modes

    def can_elicit(self, mode: ElicitMode = "form") -> bool:
        return mode in self.modes

    def can_sample(self, *, tools: bool = False, context: bool = False) -> bool:
        sampling = self.raw.get("sampling")
        if not isinstance(sampling, dict):
            return False
        if tools and not isinstance(sampling.get("tools"), dict):
            return False
        return not (context and not isinstance(sampling.get("context"), dict))

    def can_list_roots(self) -> bool:
        return isinstance(self.raw.get("roots"), dict)

    def input_kinds(self) -> int:
        """The kinds of input request this client takes, as bits (form, URL, sampling, sampling
        with tools, sampling with context, roots): two requests with the same value allow a
        handler the same questions."""
        modes = self.modes
        bits = ("form" in modes) | ("url" in modes) << 1
        raw = self.raw
        sampling = raw.get("sampling")
        if isinstance(sampling, dict):
            bits |= 4 | isinstance(sampling.get("tools"), dict) << 3
            bits |= isinstance(sampling.get("context"), dict) << 4
        if isinstance(raw.get("roots"), dict):
            bits |= 32
        return bits


_new = object.__new__
_set_raw = getattr(ClientCapabilities, "raw").__set__  # noqa: B009 - the slot's descriptor
_set_modes = getattr(ClientCapabilities, "modes").__set__  # noqa: B009


def client_capabilities(raw: dict[str, Any]) -> ClientCapabilities:
    """``ClientCapabilities(raw)``, built through the slots (the per-request path): the frozen
    dataclass's generated ``__init__`` and ``__post_init__`` cost twice as much."""
    caps: ClientCapabilities = _new(ClientCapabilities)
    _set_raw(caps, raw)
    _set_modes(caps, _modes(raw))
    return caps


def required_for_elicitation(mode: ElicitMode) -> dict[str, Any]:
    """The ``requiredCapabilities`` object of a -32021 error for this elicitation mode."""
    return {"elicitation": {mode: {}}}


def sampling_needs(params: Mapping[str, Any]) -> tuple[bool, bool]:
    """What a ``sampling/createMessage`` with these ``params`` needs beyond ``sampling``: whether
    it offers the model tools (``sampling.tools``) and whether it asks the client to include
    context (``sampling.context``, for an ``includeContext`` other than ``"none"``)."""
    tools = "tools" in params or "toolChoice" in params
    context = params.get("includeContext", "none")
    return tools, context is not None and context != "none"


def required_for_sampling(tools: bool = False, context: bool = False) -> dict[str, Any]:
    """The ``requiredCapabilities`` object of a -32021 error for a sampling request."""
    sampling: dict[str, Any] = {}
    if tools:
        sampling["tools"] = {}
    if context:
        sampling["context"] = {}
    return {"sampling": sampling}


def merge_required(into: dict[str, Any], more: Mapping[str, Any]) -> dict[str, Any]:
    """Add the capabilities of ``more`` to ``into`` (both ``requiredCapabilities`` objects), so
    that one -32021 error can name everything a request was missing; returns ``into``."""
    for name, value in more.items():
        present = into.get(name)
        if isinstance(present, dict) and isinstance(value, Mapping):
            merge_required(present, value)
        elif name not in into:
            into[name] = dict(value) if isinstance(value, Mapping) else value
    return into
