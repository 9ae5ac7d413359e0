"""The low-level style: a handler that builds its own ``InputRequiredResult``.

Return :class:`InputRequired` from a tool, prompt or resource handler; on the retry read
``ctx.input_responses`` (this round's raw answers) and ``ctx.request_state`` (the ``state`` you
returned, unsealed). The engine still seals the state, still refuses to send an input request
the client did not declare a capability for, and checks your elicitations as ``ctx.elicit`` and
``ctx.elicit_url`` check theirs: a form must stay inside the schema subset and must not ask for
secrets (``allow_secrets`` names fields that only look like secrets), a URL must be safe to send.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class InputRequired:
    """A handler's own ``InputRequiredResult``, for the low-level style.

    ``input_requests`` maps keys you choose to ``{"method": ..., "params": ...}`` entries
    (``elicitation/create``, ``sampling/createMessage`` or ``roots/list``); the answers come back
    under the same keys in ``ctx.input_responses``. ``state`` is any string you want back on the
    retry as ``ctx.request_state`` (sealed by the engine, never seen by the client in clear).
    ``allow_secrets`` names form fields that look like secrets but are not. Raises ``TypeError``
    when ``state`` is not a str or None, or ``input_requests`` not a dict with str keys.
    """

    input_requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    state: str | None = None
    allow_secrets: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Refused here, in the handler's own traceback: a state that is not a string would be
        # sealed, and only fail (as a client's "invalid requestState") on every retry.
        if self.state is not None and not isinstance(self.state, str):
            raise TypeError(f"InputRequired.state must be a str or None, not {type(self.state).__name__}")
        if not isinstance(self.input_requests, dict):
            raise TypeError(
                f"InputRequired.input_requests must be a dict, not {type(self.input_requests).__name__}"
            )
        for key in self.input_requests:
            # The keys of inputRequests on the wire: a 2025-11-25 session never writes them, so
            # a key of another type would work there and fail at 2026-07-28.
            if not isinstance(key, str):
                raise TypeError(f"InputRequired.input_requests keys must be str, not {type(key).__name__}")
