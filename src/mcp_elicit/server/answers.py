"""What ``ctx.elicit``, ``ctx.sample`` and ``ctx.list_roots`` give back to a handler."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from mcp_elicit.wire.mrtr import ElicitAction as Action

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ElicitAnswer(Generic[T]):
    """The person's answer to one elicitation.

    ``accept`` in form mode carries validated ``data`` of the type you asked with; ``accept`` in
    URL mode only means the person agreed to open the URL. ``decline`` is an explicit no,
    ``cancel`` a dismissal. Reading ``data`` on anything but an accepted form raises.
    """

    action: Action
    content: dict[str, Any] | None = None
    _data: Any = field(default=None, repr=False)

    @property
    def accepted(self) -> bool:
        """The person submitted the form (or, in URL mode, agreed to open the URL)."""
        return self.action == "accept"

    @property
    def declined(self) -> bool:
        """The person explicitly said no."""
        return self.action == "decline"

    @property
    def cancelled(self) -> bool:
        """The person dismissed the question without choosing."""
        return self.action == "cancel"

    @property
    def data(self) -> T:
        """The validated form answer, of the type the question was asked with (a dict for a
        hand-written schema). Raises ``AttributeError`` unless the answer is an accepted form."""
        if self.action != "accept" or self.content is None:
            raise AttributeError(
                f"this answer was {self.action!r} and carries no form data; "
                "check answer.accepted before reading answer.data"
            )
        return self._data  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class SampledMessage:
    """A ``CreateMessageResult`` from the client's model."""

    role: str
    content: Any
    model: str
    stop_reason: str | None
    raw: dict[str, Any]

    @property
    def text(self) -> str:
        """The text of the first text block ('' when there is none)."""
        blocks = self.content if isinstance(self.content, list) else [self.content]
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str):
                    return text
        return ""


@dataclass(frozen=True, slots=True)
class Root:
    uri: str
    name: str | None = None
