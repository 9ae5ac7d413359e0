""":class:`FlowStore`, the pending flows and the pages' sign-outs over a storage
:class:`~mcp_elicit.storage.database.Database` (SQLite or PostgreSQL; the same statements on both,
see :mod:`._sql`). :class:`~.sqlite_store.SQLiteFlowStore` and
:class:`~.postgres_store.PostgresFlowStore` only open the database.

Every state change is one compare-and-set statement (``UPDATE ... WHERE status = <expected> AND
expires > now [AND owner = ?] RETURNING ...``) in autocommit mode, so when two requests race (two
browser tabs, two server processes) exactly one of them changes the row: SQLite serialises writers
(across processes too); under PostgreSQL's READ COMMITTED a second updater waits for the first
one's row lock, re-evaluates the ``WHERE`` against the new row version and matches nothing. The
others are told why with a typed error. Creating a flow inserts only while the owner's open flows
are under the cap, in a transaction that takes the owner's lock (SQLite ``BEGIN IMMEDIATE``;
PostgreSQL a per-owner advisory transaction lock), so the cap holds under concurrency too.

Records are keyed by the SHA-256 of their id; the id itself is not stored (see
:func:`~mcp_elicit.connect.flows.model.flow_key`).
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Callable, Iterable

from mcp_elicit._closing import ClosesOnExit
from mcp_elicit.connect.identity.principal import Principal
from mcp_elicit.storage.database import Database

from ._sql import Statements
from .errors import FlowNotFound, FlowStoreUnavailable, TooManyPendingFlows
from .model import (
    MAX_CLIENT_LENGTH,
    MAX_DESCRIPTION_LENGTH,
    MAX_FLOW_TTL,
    FlowKind,
    PendingFlow,
    checked_detail,
    checked_id,
    checked_kind,
    checked_provider,
    checked_scopes,
    checked_ttl,
    clean_label,
    flow_fingerprint,
    flow_from_row,
    flow_key,
    new_flow_id,
    owner_key,
    refusal,
)

__all__ = [
    "MAX_SESSION_LIFETIME",
    "SWEEP_INTERVAL",
    "FlowStore",
]

MAX_SESSION_LIFETIME = 86400.0
"""The longest a pages session can last (``ConnectPages(session_ttl=...)`` allows at most this):
a sign-out everywhere is kept this long, after which every session it voids has expired."""
_MAX_SESSION_ID = 128
SWEEP_INTERVAL = 300.0
"""Seconds between two sweeps of the whole store (records past retention, every owner's), run
by ``create``: ``create`` purges its own owner's old records, but a user who never comes back
would otherwise keep theirs (owner, client, description) for ever."""

_log = logging.getLogger("mcp_elicit.connect.flows")


class FlowStore(ClosesOnExit):
    """Pending URL flows and the pages' sign-outs, shared by every instance of the server that
    uses ``database`` (see the module docstring): validation, id generation and error shaping
    over the statements of :mod:`._sql`.

    ``max_pending_per_user``: open flows allowed per owner. ``ttl``: default flow lifetime (at
    most :data:`MAX_FLOW_TTL`). ``retention``: seconds a record is kept after its expiry.
    ``clock``: wall-clock seconds.
    """

    def __init__(
        self,
        database: Database,
        statements: Statements,
        *,
        max_pending_per_user: int,
        ttl: float,
        retention: float,
        clock: Callable[[], float],
    ) -> None:
        if isinstance(max_pending_per_user, bool) or not isinstance(max_pending_per_user, int):
            raise TypeError("max_pending_per_user must be an int")
        if max_pending_per_user < 1:
            raise ValueError("max_pending_per_user must be at least 1")
        self.ttl = checked_ttl(ttl, MAX_FLOW_TTL)
        if not (isinstance(retention, int | float) and 0 <= retention < float("inf")):
            raise ValueError("retention must be a finite number of seconds >= 0")
        self.max_pending_per_user = max_pending_per_user
        self.retention = float(retention)
        self._db = database
        self._sql = statements
        self._clock = clock
        self._swept = -math.inf  # when this store last swept every owner's records

    # -------------------------------------------------------------- the API

    async def create(
        self,
        owner: str | Principal,
        kind: FlowKind,
        provider: str,
        scopes: Iterable[str] = (),
        ttl: float | None = None,
        *,
        client: str | None = None,
        description: str | None = None,
    ) -> PendingFlow:
        """A new ``pending`` flow for ``owner``; :class:`TooManyPendingFlows` at the cap.

        ``client`` (the MCP client's display name) and ``description`` (what the flow is for)
        are shown on the page; they are cleaned (one printable line) and cut to
        :data:`MAX_CLIENT_LENGTH` / :data:`MAX_DESCRIPTION_LENGTH` characters."""
        owner_str = owner_key(owner)
        checked = checked_kind(kind)
        provider = checked_provider(provider)
        scope_tuple = checked_scopes(scopes)
        lifetime = checked_ttl(ttl, self.ttl)
        client_label = clean_label(client, MAX_CLIENT_LENGTH)
        description_label = clean_label(description, MAX_DESCRIPTION_LENGTH)
        flow_id = new_flow_id()
        now = self._clock()
        expires = now + lifetime
        record = (flow_key(flow_id), owner_str, checked, provider, " ".join(scope_tuple), now, expires, now)
        limit = self.max_pending_per_user
        *_, inserted = await self._db.transaction(
            [
                (self._sql.expire_owner, (now, owner_str, now)),
                (self._sql.purge_owner, (owner_str, now - self.retention)),
                (self._sql.insert, (*record, client_label, description_label, owner_str, now, limit)),
            ],
            lock=owner_str,
            what="create",
        )
        if not inserted:
            raise TooManyPendingFlows(limit)
        await self._sweep(now)
        _log.info(
            "flow %s created: %s %s for %r, expires in %gs",
            flow_fingerprint(flow_id),
            checked,
            provider,
            owner_str,
            lifetime,
        )
        return PendingFlow(
            flow_id,
            owner_str,
            checked,
            provider,
            scope_tuple,
            now,
            expires,
            "pending",
            client=client_label,
            description=description_label,
        )

    async def get(self, flow_id: str) -> PendingFlow:
        """The record as it stands (server side, e.g. the engine on a retry): any status,
        ``expired`` included. :class:`FlowNotFound` only for malformed or unknown ids."""
        valid = checked_id(flow_id)
        row = await self._db.fetchone(self._sql.select, (flow_key(valid),))
        if row is None:
            raise FlowNotFound("unknown")
        return flow_from_row(valid, row, self._clock())

    async def lookup(self, flow_id: str, owner: str | Principal) -> PendingFlow:
        """The record for the public boundary (a connect page): :class:`FlowNotFound` for
        unknown, expired and other-owner alike."""
        caller = owner_key(owner)
        flow = await self.get(flow_id)
        if flow.owner != caller:
            _security_event(flow_id, "lookup", flow.owner, caller)
            raise FlowNotFound("other-owner")
        if flow.status == "expired":
            raise FlowNotFound("expired")
        return flow

    async def begin(self, flow_id: str, owner: str | Principal) -> PendingFlow:
        """Atomically ``pending → in_progress``, for the owner, while unexpired: attempt 1."""
        return await self._transition("begin", flow_id, owner_key(owner), self._sql.begin)

    async def restart(self, flow_id: str, owner: str | Principal) -> PendingFlow:
        """Atomically a new attempt of a connection ``in_progress``, for the owner, while
        unexpired: its :attr:`~PendingFlow.attempt` goes up by one, so the callback of every
        earlier attempt is refused (:meth:`claim`). For Continue pressed again after the provider's
        page was left without an answer. A secret flow, or a flow a callback has claimed, is a
        :class:`FlowStateConflict`."""
        return await self._transition("restart", flow_id, owner_key(owner), self._sql.restart)

    async def claim(self, flow_id: str, owner: str | Principal, attempt: int) -> PendingFlow:
        """Atomically ``in_progress → redeeming``, for the owner, while unexpired, if ``attempt``
        is still the flow's latest: the OAuth callback takes the flow before it redeems the code,
        so exactly one load of it does, and never one of an attempt restarted since
        (:class:`FlowStateConflict` with status ``in_progress``)."""
        if isinstance(attempt, bool) or not isinstance(attempt, int):
            raise TypeError("attempt must be an int")
        return await self._transition(
            "claim", flow_id, owner_key(owner), self._sql.claim, conditions=(attempt,)
        )

    async def complete(self, flow_id: str, *, owner: str | Principal | None = None) -> PendingFlow:
        """Atomically ``in_progress | redeeming → completed`` while unexpired (and owned by
        ``owner``)."""
        caller = None if owner is None else owner_key(owner)
        return await self._transition("complete", flow_id, caller, self._sql.complete)

    async def fail(
        self,
        flow_id: str,
        detail: str | None = None,
        *,
        owner: str | Principal | None = None,
        declined: bool = False,
    ) -> PendingFlow:
        """Atomically ``pending | in_progress | redeeming → failed`` (or ``declined``) while
        unexpired."""
        caller = None if owner is None else owner_key(owner)
        text = checked_detail(detail)
        status = "declined" if declined else "failed"
        return await self._transition(
            "decline" if declined else "fail", flow_id, caller, self._sql.fail, status, text
        )

    async def expire_old(self, now: float | None = None) -> int:
        """Mark open records past their expiry ``expired``; delete records expired for longer
        than the retention. Returns how many were marked."""
        return await self._expire(self._clock() if now is None else float(now))

    async def _expire(self, now: float) -> int:
        marked, _, _ = await self._db.transaction(
            [
                (self._sql.expire_all, (now, now)),
                (self._sql.purge_all, (now - self.retention,)),
                (self._sql.purge_revoked, (now,)),
            ],
            what="expire",
        )
        return marked

    async def _sweep(self, now: float) -> None:
        """``expire_old`` at most every :data:`SWEEP_INTERVAL` seconds; a failure is logged (the
        flow was created; the next sweep tries again)."""
        if now - self._swept < SWEEP_INTERVAL:
            return
        self._swept = now
        try:
            await self._expire(now)
        except FlowStoreUnavailable as exc:
            _log.warning("sweeping old flows failed: %s", exc)

    # -------------------------------------------------------------- session revocations

    async def _revoke(self, key: str, since: float, until: float, now: float) -> None:
        """Keep a sign-out (the later cut-off and end win), purging those past their end."""
        await self._db.transaction(
            [(self._sql.purge_revoked, (now,)), (self._sql.revoke, (key, since, until))], what="revoke"
        )

    async def revoke_session(self, session_id: str, until: float) -> None:
        """Void the pages session ``session_id`` (a copy of its cookie included) until ``until``,
        its expiry."""
        key = _session_key(session_id)
        if isinstance(until, bool) or not isinstance(until, int | float) or not math.isfinite(until):
            raise ValueError("until must be a finite time in seconds")
        now = self._clock()
        await self._revoke(key, now, float(until), now)
        _log.info("a pages session was signed out (its cookie is void everywhere)")

    async def revoke_sessions_of(self, owner: str | Principal) -> None:
        """Void every pages session of ``owner`` created up to now (sign out everywhere)."""
        owner_str = owner_key(owner)
        now = self._clock()
        await self._revoke(_owner_row(owner_str), now, now + MAX_SESSION_LIFETIME, now)
        _log.warning("every pages session of %r was signed out", owner_str)

    async def session_revoked(self, session_id: str, owner: str | Principal, created: float) -> bool:
        """Whether the pages session ``session_id`` of ``owner``, created at ``created``, was
        voided."""
        if isinstance(created, bool) or not isinstance(created, int | float) or not math.isfinite(created):
            raise ValueError("created must be a finite time in seconds")
        params = (self._clock(), _session_key(session_id), _owner_row(owner_key(owner)), float(created))
        return await self._db.fetchone(self._sql.is_revoked, params) is not None

    async def close(self) -> None:
        """Release the database's connections. Later calls raise :class:`FlowStoreUnavailable`."""
        await self._db.close()

    async def _transition(
        self,
        action: str,
        flow_id: str,
        owner: str | None,
        statement: str,
        *assignments: object,
        conditions: tuple[object, ...] = (),
    ) -> PendingFlow:
        """One compare-and-set (``statement``: see ``_sql.Statements``, whose ``assignments`` and
        ``conditions`` take these parameters); if it matched nothing, the record read again says
        why."""
        valid = checked_id(flow_id)
        key = flow_key(valid)
        now = self._clock()
        params = (*assignments, now, key, *conditions, now, owner, owner)
        row = await self._db.fetchone(statement, params, what=action)
        if row is not None:
            flow = flow_from_row(valid, row, now)
            _log.info("flow %s: %s -> %s", flow.fingerprint, action, flow.status)
            return flow
        current = await self._db.fetchone(self._sql.select, (key,))
        error = refusal(current, owner, now, action)
        if isinstance(error, FlowNotFound) and error.reason == "other-owner" and current is not None:
            _security_event(valid, action, str(current[0]), str(owner))
        else:
            _log.info("flow %s: %s refused (%r)", flow_fingerprint(valid), action, error)
        raise error


def _session_key(session_id: str) -> str:
    # Hashed: the table holds no value that appears in a cookie.
    if not isinstance(session_id, str) or not 0 < len(session_id) <= _MAX_SESSION_ID:
        raise ValueError(f"a session id must be a non-empty str of at most {_MAX_SESSION_ID} characters")
    return "session:" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()


def _owner_row(owner: str) -> str:
    return "owner:" + owner


def _security_event(flow_id: str, action: str, owner: str, caller: str) -> None:
    _log.warning(
        "SECURITY: flow %s: %s by another principal refused (owner %r, caller %r): "
        "a link was opened or used by someone other than the user it was made for",
        flow_fingerprint(flow_id),
        action,
        owner,
        caller,
    )
