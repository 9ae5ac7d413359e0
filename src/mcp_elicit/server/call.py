"""One round of a call, as the engine is given it: what the client asked, and who asked.

The transports make it from a 2026-07-28 request (``params`` with ``_meta``, ``inputResponses``
and ``requestState``); the 2025-11-25 bridge makes one for each re-entry of a call whose
questions it sent as real requests. The engine (:mod:`mcp_elicit.server.engine`) never looks
past it at the wire.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp_elicit.server.auth import Caller
from mcp_elicit.wire.meta import RequestMeta

Notify = Callable[[str, dict[str, Any]], Awaitable[None]]
"""``await notify(method, params)``: send a notification about this request (progress, logs)."""

CloseStream = Callable[[], Awaitable[None]]
"""``await close_stream()``: end the connection that carries this call's resumable stream now;
the call goes on, and the client picks the stream up again (``GET`` with ``Last-Event-ID``)."""


# Not frozen: two per 2026-07-28 flow, and a frozen dataclass's __init__ sets each field through
# object.__setattr__ (~1.3k instructions a field; bench/README.md). Never modified.
@dataclass(slots=True)
class Call:
    """One round of a ``tools/call``, ``prompts/get`` or ``resources/read``."""

    method: str
    target: str  # the tool or prompt name, or the resource URI
    arguments: dict[str, Any]  # as the client sent them (never changed by the engine)
    meta: RequestMeta  # protocol version, client capabilities and info, progress token, log level
    caller: Caller | None = None  # from a validated token, never from the request
    notify: Notify | None = None
    input_responses: dict[str, Any] = field(default_factory=dict)  # this round's answers
    request_state: object = None  # as the client sent it (None on the first round)
    close_stream: CloseStream | None = None  # only where the call has a resumable stream
    # The state came from this process, not from a client (a 2025-11-25 call's later rounds):
    # nobody else holds it to replay, so no single-use store is asked about it.
    in_process: bool = False

    @property
    def first_round(self) -> bool:
        return self.request_state is None and not self.input_responses

    def next_round(self, input_responses: dict[str, Any], request_state: object) -> Call:
        """The next round of this call, run in process (the 2025-11-25 bridge's): the same
        request with these answers and the state the last round sealed, as a 2026-07-28
        client's retry carries them. (Built field by field: ``dataclasses.replace`` costs 18k
        instructions more, 1.7% of a 2025-11-25 flow.)"""
        return Call(
            self.method,
            self.target,
            self.arguments,
            self.meta,
            self.caller,
            self.notify,
            input_responses,
            request_state,
            self.close_stream,
            in_process=True,
        )
