"""Serving an ASGI app with uvicorn: one process, quiet logs, a head timeout, and a SIGTERM that
ends the server in bounded time with an answer for every request still running."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

from mcp_elicit._extras import require

DEFAULT_SHUTDOWN_TIMEOUT = 5.0
"""Seconds :func:`serve` lets requests in flight finish after SIGTERM or Ctrl-C; those still
running then get 503 (``timeout_graceful_shutdown=`` changes it)."""


def serve(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    head_timeout: float | None = None,
    started_message: Callable[[int], str] | None = None,
    **options: Any,
) -> None:
    """Run ``app`` with uvicorn, one worker, quiet logs.

    ``started_message(port)`` is printed on stderr once the socket listens (not before: a port
    already taken must not be announced as served), given the port listened on: with ``port=0``
    the system picks a free one, and the message is how the user learns which. A port that
    cannot be listened on (in use, say) ends the process with one line saying so, status 1.

    ``head_timeout`` (default :data:`~mcp_elicit.transport.head_timeout.DEFAULT_HEAD_TIMEOUT`
    seconds) closes connections that do not finish sending a request head in time; pass ``0`` to
    turn it off. ``http="httptools"`` or ``"h11"`` picks uvicorn's protocol and keeps the head
    timeout; a protocol class of your own (``http=MyProtocol``) runs without it.

    On SIGTERM or Ctrl-C, requests in flight get ``timeout_graceful_shutdown`` seconds (default
    :data:`DEFAULT_SHUTDOWN_TIMEOUT`) to finish; then each still running is answered with 503
    (``-32603``, "the server is shutting down"; the last event of an SSE reply that has started).
    """
    require("http", part="Server.run_http()")
    import uvicorn

    from mcp_elicit.transport.head_timeout import DEFAULT_HEAD_TIMEOUT, server_protocol

    if not isinstance(host, str) or not host.strip():
        # uvicorn would take "" for every interface: never by accident.
        raise ValueError(f"host must be an address or a name to listen on, such as 127.0.0.1, not {host!r}")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"port must be a whole number from 0 (any free port) to 65535, not {port!r}")
    seconds = DEFAULT_HEAD_TIMEOUT if head_timeout is None else head_timeout
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 <= seconds < float("inf"):
        raise ValueError(f"head_timeout must be a number of seconds (0 turns it off), not {head_timeout!r}")
    settings: dict[str, Any] = {
        "log_level": "warning",
        "access_log": False,
        # The app's lifespan runs: ours lets go of its sessions and relay at the shutdown, and
        # an app of the user's around ours gets its startup and shutdown (test_serve_lifespan).
        "lifespan": "auto",
        # uvicorn waits for requests in flight without end by default: one handler that never
        # finishes kept a SIGTERMed server up for good (a second SIGTERM did nothing either).
        "timeout_graceful_shutdown": DEFAULT_SHUTDOWN_TIMEOUT,
    }
    protocol = options.pop("http", None)
    if protocol in (None, "auto", "httptools", "h11"):
        settings["http"] = server_protocol(seconds, base=_protocol_class(protocol))
    else:
        if head_timeout:
            raise ValueError("head_timeout works with http='httptools' or 'h11', not with a protocol class")
        settings["http"] = protocol
    settings.update(options)
    # What uvicorn.run does for an app object, with a Server that lets the requests it cancels
    # at the end of the graceful shutdown send their 503 before the process ends.
    config = uvicorn.Config(app, host=host, port=port, **settings)
    if config.reload or config.workers > 1:
        raise ValueError(
            "serve() runs one process: reload= and workers= need uvicorn.run and an import string"
        )
    server = _answering_server(uvicorn.Server)(config)
    server.started_message = started_message
    try:
        server.run()
    except KeyboardInterrupt:
        pass  # Ctrl-C, re-raised by uvicorn once it has shut down
    finally:
        if config.uds and os.path.exists(config.uds):
            os.remove(config.uds)
    if not server.started:
        sys.exit(3)  # uvicorn's STARTUP_FAILURE


class _BindFailure(logging.Filter):
    """Takes uvicorn's log record of a socket it could not listen on (it logs the OSError itself)
    out of the log, and keeps the error."""

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[OSError] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, OSError):
            self.errors.append(record.msg)
            return False
        return True


@contextlib.contextmanager
def _bind_failure() -> Iterator[list[OSError]]:
    """The OSError uvicorn meets binding its socket meanwhile, if any (a list: empty when none)."""
    catcher = _BindFailure()
    log = logging.getLogger("uvicorn.error")
    log.addFilter(catcher)
    try:
        yield catcher.errors
    finally:
        log.removeFilter(catcher)


def _cannot_listen(error: OSError, host: str, port: int) -> str:
    """One line for a socket uvicorn could not listen on, with what to do about it."""
    where = f"port {port} on {host}"
    if error.errno == errno.EADDRINUSE:
        return f"{where}: address already in use: stop what uses it or pass run_http(port=...)"
    if error.errno == errno.EACCES:
        return f"{where}: permission denied (ports below 1024 need privileges): pass a port above 1023"
    return f"cannot listen on {where}: {error.strerror or error}"


def _answering_server(base: type[Any]) -> type[Any]:
    """uvicorn's Server, printing ``started_message`` once listening, and waiting (briefly) for
    the requests it cancelled to end.

    uvicorn cancels the requests still running when ``timeout_graceful_shutdown`` is over, then
    returns at once and re-raises the signal, which ends the process: the cancelled requests
    never ran again, and their clients saw the connection cut instead of the 503 they are owed.
    """

    class AnsweringServer(base):  # type: ignore[misc]
        started_message: Callable[[int], str] | None = None

        async def startup(self, sockets: Any = None) -> None:
            with _bind_failure() as failed:
                try:
                    await super().startup(sockets=sockets)
                except SystemExit:
                    if not failed:
                        raise
                    # uvicorn logged the OSError and exits with 3: one line of ours instead.
                    raise SystemExit(_cannot_listen(failed[0], self.config.host, self.config.port)) from None
            if self.started and self.started_message:
                print(self.started_message(self.port()), file=sys.stderr, flush=True)

        def port(self) -> int:
            """The port listened on: the one asked for, or the one the system chose for 0."""
            for server in self.servers:
                for sock in server.sockets:
                    address = sock.getsockname()
                    if isinstance(address, tuple):  # not a Unix socket's path
                        return int(address[1])
            return int(self.config.port)

        async def shutdown(self, sockets: Any = None) -> None:
            await super().shutdown(sockets=sockets)
            running = set(self.server_state.tasks)
            if running:
                await asyncio.wait(running, timeout=_ANSWER_TIME)

    return AnsweringServer


# Seconds the requests cancelled at the end of a graceful shutdown get to send their answer (a
# handler that swallows its cancellation does not hold the process longer than this).
_ANSWER_TIME = 1.0


def _protocol_class(name: str | None) -> type[Any] | None:
    """uvicorn's protocol class for ``http=name`` (None: uvicorn's own choice)."""
    if name == "httptools":
        require("fast", part="run_http(http='httptools')")
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    if name == "h11":
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol
    return None
