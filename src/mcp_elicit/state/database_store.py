"""The single-use store (strict and redelivery modes) over a storage :class:`Database`.

* Consuming is one ``INSERT ... ON CONFLICT (token_id) DO NOTHING`` in autocommit mode: the
  database serialises writers to a row (SQLite the whole file, across processes; PostgreSQL the
  primary key, across hosts), so exactly one insert of a given id changes a row. That caller gets
  ``True``, everyone else ``False``.
* Redelivery mode (:class:`~mcp_elicit.state.single_use.RedeliveryStore`): a claim is the same
  insert with the request digest (plus one ``SELECT`` when the id is taken); a commit is one
  ``UPDATE ... WHERE response IS NULL`` (plus one ``SELECT`` when it lost). The digest never
  changes once written, so the two statements need no transaction around them.
* One statement per operation on the way that matters: on SQLite it runs inline on the event
  loop when the file is free (:mod:`mcp_elicit.storage.sqlite`). A purge runs as a transaction,
  never inline, every ``purge_every`` consumes and claims.
* A failure of the database raises :class:`StateStoreUnavailable`; an outcome that is unknown is
  never guessed or retried here: the engine fails closed.

:class:`~mcp_elicit.state.SQLiteSingleUseStore` and :class:`~mcp_elicit.state.PostgresSingleUseStore`
make one over their database.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from hmac import compare_digest

from mcp_elicit._closing import ClosesOnExit
from mcp_elicit.storage.database import Database

from ._sql import Statements
from .errors import StateStoreUnavailable
from .single_use import Claim

__all__ = ["DatabaseSingleUseStore"]

_log = logging.getLogger("mcp_elicit.state")


def _check_record(token_id: str, expires_at: float) -> None:
    if not isinstance(token_id, str) or not token_id:
        raise TypeError("token_id must be a non-empty str")
    if isinstance(expires_at, bool) or not isinstance(expires_at, int | float):
        raise TypeError("expires_at must be a number (seconds since the epoch)")
    if not math.isfinite(expires_at):
        raise ValueError("expires_at must be finite")


class DatabaseSingleUseStore(ClosesOnExit):
    """Single-use token ids in one table of ``database``; a
    :class:`~mcp_elicit.state.single_use.RedeliveryStore` too.

    ``purge_every``: after that many consumes and claims, expired records are deleted (``0``
    disables it; call :meth:`purge_expired` yourself then). ``clock`` is the time source for that
    purge and for when a token was claimed; it must agree with the sealer's clock.
    """

    def __init__(
        self, database: Database, statements: Statements, *, purge_every: int, clock: Callable[[], float]
    ) -> None:
        if purge_every < 0:
            raise ValueError("purge_every must be >= 0")
        self._db = database
        self._sql = statements
        self._purge_every = purge_every
        self._clock = clock
        self._consumed = 0

    async def consume(self, token_id: str, expires_at: float) -> bool:
        """``True`` the first time ``token_id`` is seen, ``False`` afterwards (atomic)."""
        _check_record(token_id, expires_at)
        first = await self._db.execute(self._sql.consume, (token_id, float(expires_at)), what="consume") == 1
        await self._count_and_purge()
        return first

    async def claim(self, token_id: str, request_digest: str, expires_at: float) -> Claim:
        """Record ``(token_id, request_digest)`` unless the id is known; report what is stored."""
        _check_record(token_id, expires_at)
        if not isinstance(request_digest, str) or not request_digest:
            raise TypeError("request_digest must be a non-empty str")
        now = float(self._clock())
        changed, row = await self._db.write_or_read(
            (self._sql.claim, (token_id, float(expires_at), request_digest, now)),
            (self._sql.claimed, (token_id,)),
            what="claim",
        )
        if changed:
            claim = Claim(first=True, same_request=True, claimed_at=now)
        elif row is None:  # purged between the two statements: only after expiry, refuse
            claim = Claim(first=False, same_request=False)
        else:
            stored, response, claimed_at = row
            same = isinstance(stored, str) and compare_digest(stored, request_digest)
            stored_response = bytes(response) if same and response is not None else None
            claim = Claim(first=False, same_request=same, response=stored_response, claimed_at=claimed_at)
        await self._count_and_purge()
        return claim

    async def commit(self, token_id: str, request_digest: str, response: bytes) -> bytes | None:
        """Store ``response`` unless an answer is stored; returns the answer now stored."""
        if not isinstance(token_id, str) or not token_id:
            raise TypeError("token_id must be a non-empty str")
        if not isinstance(response, bytes):
            raise TypeError("response must be bytes")
        changed, row = await self._db.write_or_read(
            (self._sql.commit, (response, token_id, request_digest)),
            (self._sql.committed, (token_id, request_digest)),
            what="commit",
        )
        if changed:
            return response
        return None if row is None or row[0] is None else bytes(row[0])

    async def _count_and_purge(self) -> None:
        if self._purge_every:
            self._consumed += 1
            if self._consumed % self._purge_every == 0:
                try:
                    await self.purge_expired(self._clock())
                except StateStoreUnavailable as exc:
                    _log.warning("purging expired requestState records failed: %s", exc)

    async def purge_expired(self, now: float) -> int:
        """Delete records with ``expires_at < now``; returns how many were deleted."""
        (deleted,) = await self._db.transaction([(self._sql.purge, (float(now),))], what="purge")
        return deleted

    async def close(self) -> None:
        """Release the database's connections. Later calls raise :class:`StateStoreUnavailable`."""
        await self._db.close()
