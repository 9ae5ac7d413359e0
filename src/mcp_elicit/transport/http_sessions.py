"""The 2025-11-25 sessions of one HTTP endpoint: minted at ``initialize``, bounded, expired.

A session id is ``<instance>.<random>``: the instance that holds the session (the one that
answered ``initialize``; its id is 32 random bits per process unless given, at most 20 letters and
digits) and 192 random bits in URL-safe base64 -- visible ASCII, unguessable. The instance part
lets another instance of a deployment tell whose session a request names without a table (and
hand the request to it: :mod:`mcp_elicit.transport.session_relay`). A session is never
authentication: it records the caller whose token opened it (the principal and the OAuth client
the token was issued to), every request must come with a token for the same principal and
client (checked on every request: the spec binds elicitations to the client and the user), and
a request for an ended, expired, unknown or someone else's session gets 404, which makes a
client initialize again.

Bounds, each refused with its own status and a message that says which: sessions in all
(``max_sessions``, 503) and per principal (``max_per_principal``, 429), calls running at once in
one session (``max_calls``, 429), one ``GET`` stream per session (409); a session idle for
``idle_timeout`` seconds (no request, no call running, no stream open) is ended.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from mcp_elicit.server.auth import Caller
from mcp_elicit.server.legacy.session import LegacySession
from mcp_elicit.transport.event_stream import EventStream

if TYPE_CHECKING:
    from mcp_elicit.server.app import Server

logger = logging.getLogger("mcp_elicit.transport.http")

DEFAULT_MAX_SESSIONS: Final = 10_000
DEFAULT_MAX_PER_PRINCIPAL: Final = 100
DEFAULT_MAX_CALLS: Final = 64
DEFAULT_IDLE_TIMEOUT: Final = 1800.0
DEFAULT_RESUME_GRACE: Final = 30.0
MAX_INSTANCE_LENGTH: Final = 20
KEPT_DELIVERED_STREAMS: Final = 8  # per session: see HttpSession.stream_over
KEPT_GET_STREAM_IDS: Final = 4  # per session: see HttpSession.get_streams
_SWEEP_EVERY: Final = 30.0


class SessionLimit(Exception):
    """A bound on sessions or calls was reached: answer ``status`` with this message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(eq=False)
class HttpSession:
    """One session: the protocol state (:class:`LegacySession`) and what HTTP adds to it."""

    id: str
    legacy: LegacySession
    caller: Caller | None  # who opened it (None: anonymous), and who alone may use it
    last_used: float
    calls: dict[object, asyncio.Task[Any]] = field(default_factory=dict)  # request id -> call
    streams: dict[str, EventStream] = field(default_factory=dict)  # stream id -> stream
    get_stream: EventStream | None = None  # the GET stream open now (one at a time)
    # The ids of the last few streams whose end went out, oldest first.
    delivered: deque[str] = field(default_factory=lambda: deque(maxlen=KEPT_DELIVERED_STREAMS))
    # The ids of the last few GET streams: a client that lost one resumes it with the id of its
    # last event, and gets a GET stream again (nothing was kept: nothing went out meanwhile).
    get_streams: deque[str] = field(default_factory=lambda: deque(maxlen=KEPT_GET_STREAM_IDS))
    _stream_ids: int = 0

    def new_stream_id(self, kind: str = "s") -> str:
        """A stream id unique in the session: ``s<n>`` for a call's, ``g<n>`` for a GET stream."""
        self._stream_ids += 1
        return f"{kind}{self._stream_ids}"

    def stream_over(self, stream_id: str, *, delivered: bool) -> None:
        """A call's stream is done (:class:`EventStream`'s ``on_over``). One whose end went out
        is kept among the session's last :data:`KEPT_DELIVERED_STREAMS`, for a client whose
        connection broke just as the end was written (it resumes with ``Last-Event-ID`` and
        reads the response again); an older one, and one nobody came back for within the
        grace, is forgotten.

        A count, not a time: every finished stream kept for the grace (30 s) held each call's
        events, at 3,000 calls a second a million objects for the garbage collector to walk,
        which cost a fifth of the 2025-11-25 HTTP throughput (bench/README.md)."""
        if not delivered:
            self.streams.pop(stream_id, None)
            return
        if stream_id in self.delivered:  # read again after a resume: already kept
            return
        if len(self.delivered) == self.delivered.maxlen:
            self.streams.pop(self.delivered[0], None)
        self.delivered.append(stream_id)

    @property
    def busy(self) -> bool:
        return bool(self.calls) or self.get_stream is not None


class SessionTable:
    """The sessions of one endpoint (see the module docstring)."""

    def __init__(
        self,
        server: Server,
        *,
        instance: str | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        max_per_principal: int = DEFAULT_MAX_PER_PRINCIPAL,
        max_calls: int = DEFAULT_MAX_CALLS,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        resume_grace: float = DEFAULT_RESUME_GRACE,
    ) -> None:
        self.server = server
        self.instance = instance or secrets.token_hex(4)
        if (
            not self.instance.isalnum()
            or not self.instance.isascii()
            or len(self.instance) > MAX_INSTANCE_LENGTH
        ):
            raise ValueError(
                f"instance must be 1 to {MAX_INSTANCE_LENGTH} letters and digits (it starts every "
                f"session id), not {instance!r}"
            )
        self.max_sessions = max_sessions
        self.max_per_principal = max_per_principal
        self.max_calls = max_calls
        self.idle_timeout = idle_timeout
        self.resume_grace = resume_grace
        self._sessions: dict[str, HttpSession] = {}
        self._per_principal: dict[str, int] = {}
        self._last_sweep = 0.0

    def __len__(self) -> int:
        return len(self._sessions)

    def instance_of(self, session_id: str) -> str | None:
        """The instance a session id names (this one or another of the deployment), or None
        when the id is not one an instance mints."""
        instance, dot, rest = session_id.partition(".")
        if not (
            dot
            and rest
            and instance.isascii()
            and instance.isalnum()
            and len(instance) <= MAX_INSTANCE_LENGTH
        ):
            return None
        return instance

    def create(self, caller: Caller | None) -> HttpSession:
        """A new session for ``caller``; :class:`SessionLimit` at a bound."""
        now = asyncio.get_running_loop().time()
        self.sweep(now)
        if len(self._sessions) >= self.max_sessions:
            raise SessionLimit(503, "the server has as many sessions open as it takes; retry later")
        principal = None if caller is None else caller.principal
        if principal is not None and self._per_principal.get(principal, 0) >= self.max_per_principal:
            raise SessionLimit(
                429,
                f"this user has {self.max_per_principal} sessions open already: end one (DELETE) or "
                "let it expire",
            )
        session_id = f"{self.instance}.{secrets.token_urlsafe(24)}"
        session = HttpSession(session_id, LegacySession.of(self.server, caller), caller, now)
        self._sessions[session_id] = session
        if principal is not None:
            self._per_principal[principal] = self._per_principal.get(principal, 0) + 1
        return session

    def get(self, session_id: str, caller: Caller | None) -> HttpSession | None:
        """The live session ``session_id`` names, if ``caller`` (principal and client) opened it."""
        session = self._sessions.get(session_id)
        if session is None:
            return None
        if caller != session.caller:
            logger.info(
                "a request for session %s came with a token for another user or client", _short(session_id)
            )
            return None
        now = asyncio.get_running_loop().time()
        if not session.busy and now - session.last_used > self.idle_timeout:
            self.end(session)
            return None
        session.last_used = now
        self.sweep(now)
        return session

    def end(self, session: HttpSession) -> None:
        """End a session: its calls are cancelled, its questions fail, its id answers 404."""
        if self._sessions.pop(session.id, None) is None:
            return
        if session.caller is not None:
            principal = session.caller.principal
            left = self._per_principal.get(principal, 1) - 1
            if left:
                self._per_principal[principal] = left
            else:
                self._per_principal.pop(principal, None)
        session.legacy.close()
        for call in list(session.calls.values()):
            call.cancel()
        for stream in session.streams.values():
            stream.finish(None)
        if session.get_stream is not None:  # its connection ends (it may be on another instance)
            session.get_stream.finish(None)

    def sweep(self, now: float) -> None:
        """End the sessions idle for longer than ``idle_timeout`` (at most every 30 s)."""
        if now - self._last_sweep < min(_SWEEP_EVERY, self.idle_timeout):
            return
        self._last_sweep = now
        for session in [
            s for s in self._sessions.values() if not s.busy and now - s.last_used > self.idle_timeout
        ]:
            logger.info("session %s expired after %g s idle", _short(session.id), self.idle_timeout)
            self.end(session)

    def close(self) -> None:
        for session in list(self._sessions.values()):
            self.end(session)


def _short(session_id: str) -> str:
    """A session id as logs show it (never whole: it is a bearer of the session's calls)."""
    return session_id[:12] + "…"
