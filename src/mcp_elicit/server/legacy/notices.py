"""The notifications of one call on a 2025-11-25 session, each sent once across its rounds.

On a 2025-11-25 session the rounds of a call are one request: the bridge runs the handler again
from the top for each round, and the handler reports again what it reported before its
question. The client sees one request, so it must see each notification once:

* **progress**: the spec wants each value on a progress token higher than the last, so only a
  report past the highest sent goes out;
* **logs**: the ``n``-th log of a round that equals the ``n``-th one already sent is the
  replay of that one, and is dropped. A log that differs (the handler took another path, or
  logs the time) goes out, and from there on the rounds' logs are compared with it.

Other notifications (``notifications/elicitation/complete`` and the like) are not the
handler's replayed reports: they always go out.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["CallNotices"]


class CallNotices:
    """``await notices(method, params)`` sends through ``send`` unless it repeats (above);
    :meth:`next_round` before each run of the handler after the first."""

    def __init__(self, send: Callable[[str, dict[str, Any]], Awaitable[None]]) -> None:
        self._send = send
        self._highest: float | None = None  # the highest progress sent
        self._logs: list[dict[str, Any]] = []  # the logs sent, in the order the handler wrote them
        self._at = 0  # how many logs this round has written

    def next_round(self) -> None:
        self._at = 0

    async def __call__(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/progress":
            progress = params["progress"]
            if self._highest is not None and progress <= self._highest:
                return
            self._highest = progress
        elif method == "notifications/message":
            at = self._at
            self._at += 1
            if at < len(self._logs) and self._logs[at] == params:
                return  # a replay of one sent in an earlier round
            del self._logs[at:]
            self._logs.append(params)
        await self._send(method, params)
