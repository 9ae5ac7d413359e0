"""A bound on how long a connection may take to send a request head, for uvicorn.

uvicorn has no such timeout: its keep-alive timer runs only between requests and any byte cancels
it, so a client that connects and sends nothing, or sends its head a byte at a time, holds a
socket forever (the slowloris attack). The ASGI app cannot help: it is only called once the head
is complete. :func:`head_timeout_protocol` subclasses uvicorn's own HTTP protocol (httptools when
installed, else h11) and closes a connection whose head is not complete ``seconds`` after the
connection opened, or after the first byte of each later request on it.

Head completion is observed through the protocol's ``cycle`` attribute, which both uvicorn
implementations replace with a new request/response cycle exactly when a head has been parsed.
:func:`server_protocol` (what ``serve`` runs) also tells a running request that its client went
away when another request was pipelined behind it, which uvicorn's httptools protocol does not.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["DEFAULT_HEAD_TIMEOUT", "head_timeout_protocol", "server_protocol"]

DEFAULT_HEAD_TIMEOUT = 10.0
"""Seconds a client has to send a complete request head (``serve(head_timeout=...)``)."""


def _base_protocol() -> type[Any]:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # httptools is optional for uvicorn
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol
    return HttpToolsProtocol


def head_timeout_protocol(seconds: float, base: type[Any] | None = None) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class (``base``, default httptools or h11) with a head timeout.

    Pass the result as ``uvicorn.run(..., http=...)``.
    """
    if not seconds > 0:
        raise ValueError("head_timeout must be a positive number of seconds")
    return server_protocol(seconds, base)


def server_protocol(seconds: float, base: type[Any] | None = None) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class (``base``, default httptools or h11) as :func:`serve
    <mcp_elicit.transport.uvicorn_runner.serve>` runs it: with a head timeout of ``seconds`` (``0``:
    none), and telling the request that is running when its client goes away.

    The second part mends uvicorn's httptools protocol: with a request pipelined behind the running
    one, a lost connection is told only to the last request parsed, so the running handler was
    never cancelled (its task, and everything it held, stayed until the process ended).
    """
    parent = base if base is not None else _base_protocol()

    class HeadTimeoutProtocol(parent):  # type: ignore[misc, valid-type]
        _head_timer: asyncio.TimerHandle | None = None
        _cycle_when_armed: object = None
        _running: Any = None  # the cycle whose app task runs (httptools starts it here)

        def _arm(self) -> None:
            self._disarm()
            if seconds > 0:
                self._cycle_when_armed = self.cycle
                self._head_timer = self.loop.call_later(seconds, self._head_too_slow)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_too_slow(self) -> None:
            self._head_timer = None
            if not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            cycle = self.cycle
            if self._head_timer is None and (cycle is None or cycle.response_complete):
                self._arm()  # the first bytes of the next request on a kept-alive connection
            super().data_received(data)
            if self._head_timer is not None and self.cycle is not self._cycle_when_armed:
                self._disarm()  # a new cycle: the head is complete

        def _start_asgi_task(self, cycle: Any, app: Any) -> None:  # httptools only (h11 has none)
            self._running = cycle
            super()._start_asgi_task(cycle, app)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            running = self._running
            if running is not None and running is not self.cycle and not running.response_complete:
                running.disconnected = True  # what uvicorn tells only self.cycle
                running.message_event.set()
            super().connection_lost(exc)

    HeadTimeoutProtocol.__name__ = f"HeadTimeout{parent.__name__}"
    return HeadTimeoutProtocol
