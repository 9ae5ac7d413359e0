"""Resource subscriptions of 2025-11-25 sessions: who wants to hear that a resource changed.

At 2025-11-25 a client subscribes to a resource by its URI (``resources/subscribe``; the server
says it takes these with ``resources: {subscribe: true}`` in its capabilities) and from then on
the server sends that session ``notifications/resources/updated`` with the URI whenever the
resource changes, until ``resources/unsubscribe`` or the end of the session. The client reads
the resource again itself (the notification carries no content). The URI need not name a
registered resource yet: a client may watch one that a tool will create.

Such a notification belongs to no request, so it goes where a session's unrelated messages go
(:attr:`LegacySession.standalone <mcp_elicit.server.legacy.session.LegacySession.standalone>`):
stdout on stdio, the session's GET stream on Streamable HTTP -- and nowhere while the client has
no GET stream open (delivery is best effort, as the spec has it; the client reads the resource
when it comes back).

A server says that a resource changed with ``Server.resource_updated(uri)``, from anywhere: a tool that
wrote the resource (whichever era its caller speaks), or a task that watches a file. It reaches
the sessions of this process; 2026-07-28 has no such methods (``subscriptions/listen`` took
their place).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from mcp_elicit.wire.errors import invalid_params

if TYPE_CHECKING:
    from mcp_elicit.server.legacy.session import LegacySession

logger = logging.getLogger("mcp_elicit.server.legacy")

UPDATED: Final = "notifications/resources/updated"
MAX_PER_SESSION: Final = 100  # URIs one session may watch at once
MAX_URI_LENGTH: Final = 4096


class Subscriptions:
    """The sessions of one server that watch at least one resource, and what each watches."""

    def __init__(self) -> None:
        self._watching: dict[LegacySession, set[str]] = {}

    def subscribe(self, session: LegacySession, uri: object) -> None:
        """``session`` watches ``uri`` (again: nothing changes); -32602 for a URI that is not a
        string of at most ``MAX_URI_LENGTH`` characters, or past ``MAX_PER_SESSION`` URIs."""
        if not isinstance(uri, str) or not uri:
            raise invalid_params("resources/subscribe needs params.uri (a non-empty string)")
        if len(uri) > MAX_URI_LENGTH:
            raise invalid_params(f"resources/subscribe: the uri is longer than {MAX_URI_LENGTH} characters")
        watched = self._watching.setdefault(session, set())
        if uri not in watched and len(watched) >= MAX_PER_SESSION:
            raise invalid_params(
                f"resources/subscribe: this session watches {MAX_PER_SESSION} resources already; "
                "unsubscribe from one first"
            )
        watched.add(uri)

    def unsubscribe(self, session: LegacySession, uri: object) -> None:
        """``session`` no longer watches ``uri`` (one it never watched: nothing to do)."""
        if not isinstance(uri, str) or not uri:
            raise invalid_params("resources/unsubscribe needs params.uri (a non-empty string)")
        watched = self._watching.get(session)
        if watched is not None:
            watched.discard(uri)
            if not watched:
                del self._watching[session]

    def forget(self, session: LegacySession) -> None:
        """The session ended: it watches nothing any more."""
        self._watching.pop(session, None)

    def watching(self, session: LegacySession) -> frozenset[str]:
        return frozenset(self._watching.get(session, ()))

    async def updated(self, uri: str) -> int:
        """Send ``notifications/resources/updated`` for ``uri`` to every session watching it;
        the number of sessions it reached (those with somewhere to send it)."""
        told = 0
        for session in [s for s, watched in self._watching.items() if uri in watched]:
            if await session.notify_standalone(UPDATED, {"uri": uri}):
                told += 1
            else:
                logger.debug("%s for a session with no stream open: not delivered", UPDATED)
        return told
