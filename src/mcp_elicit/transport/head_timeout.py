"""A bound on how long a connection may take to send a request head, for uvicorn.

uvicorn has no such timeout: its keep-alive timer runs only between requests and any byte cancels
it, so a client that connects and sends nothing, or sends its head a byte at a time, holds a
socket forever (the slowloris attack). The ASGI app cannot help: it is only called once the head
is complete. :func:`head_timeout_protocol` subclasses uvicorn's own HTTP protocol (httptools when
installed, else h11) and closes a connection whose head is not complete ``seconds`` after the
connection opened, or after the first byte of each later request on it.

Head completion is observed through the protocol's ``cycle`` attribute, which both uvicorn
implementations replace with a new request/response cycle exactly when a head has been parsed.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["DEFAULT_HEAD_TIMEOUT", "head_timeout_protocol"]

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
    parent = base if base is not None else _base_protocol()

    class HeadTimeoutProtocol(parent):  # type: ignore[misc, valid-type]
        _head_timer: asyncio.TimerHandle | None = None
        _cycle_when_armed: object = None

        def _arm(self) -> None:
            self._disarm()
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

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    HeadTimeoutProtocol.__name__ = f"HeadTimeout{parent.__name__}"
    return HeadTimeoutProtocol
