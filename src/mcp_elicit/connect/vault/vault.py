"""The :class:`Vault`: third-party tokens and secrets, encrypted per record, bound to their owner.

Concurrency model
-----------------
* **Single-flight refresh.** :meth:`Vault.fresh_connection` returns at once when the access token
  is not about to expire. Otherwise the first caller for ``(owner, provider)`` starts one refresh
  *task* and every concurrent caller in the process awaits that same task (so ten callers cause one
  refresher call and all get its outcome, success or error). The task runs under a per-connection
  ``asyncio.Lock`` and the database's cross-process lock (PostgreSQL: ``pg_advisory_xact_lock``;
  SQLite: a lease row), **re-reads the row after taking it** (another instance may have refreshed
  meanwhile) and only then calls the refresher. The task is shielded from its callers'
  cancellation: once the authorization server has rotated the refresh token, the new one is
  written even if every caller has gone away.
* **Atomic persistence.** The new access token, the (possibly rotated) refresh token, the expiry
  and the scopes are one sealed payload written by one ``UPDATE``; on PostgreSQL inside the
  transaction that holds the advisory lock. If that write or its commit fails, it is retried on the
  shared connection (a rotated refresh token must not be lost: RFC 9700 §4.14).
* **Disconnect** takes the same two locks, so it never races a refresh.

Nothing here logs, formats or raises a token or secret value (see :mod:`.errors`); ``INFO`` records
are audit events (connected, refreshed, needs re-authorization, disconnected, revocation failed)
and name the owner principal and the provider.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import secrets as _secrets
import time
import weakref
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import Any, Final, Literal

import orjson

from mcp_elicit._closing import ClosesOnExit
from mcp_elicit.state import KeyRing
from mcp_elicit.state.key_file import ENV_FILE_VAR as STATE_KEYS_FILE_ENV
from mcp_elicit.state.key_file import KeyFile
from mcp_elicit.state.keys import ENV_VAR as STATE_KEYS_ENV
from mcp_elicit.storage.database import Database, Executor, Row

from ._sql import Statements, check_prefix, lease_table
from .crypto import RecordContext, RecordKind, VaultKeys, ring_from, ring_from_env
from .errors import (
    NeedsReauthorization,
    NotConnected,
    RefreshFailed,
    RevocationFailed,
    VaultCorrupt,
    VaultError,
    VaultUnavailable,
)
from .records import (
    Connection,
    ConnectionStatus,
    Refresher,
    RefreshResult,
    Revoker,
    RotationReport,
    Secret,
)

__all__ = ["DEFAULT_TABLE_PREFIX", "VAULT_KEYS_ENV", "Vault", "advisory_key"]

_log = logging.getLogger("mcp_elicit.connect.vault")

VAULT_KEYS_ENV: Final = "MCP_ELICIT_VAULT_KEYS"
"""Environment variable read when no ``keys=`` are given (comma-separated, the first one wraps)."""

DEFAULT_TABLE_PREFIX: Final = "mcp_elicit_vault_"
_MAX_TEXT: Final = 1024
_PAGE: Final = 200
_STATUSES: Final[frozenset[str]] = frozenset({"active", "needs_reauthorization", "revocation_failed"})
_EPHEMERAL_WARNING: Final = (
    "the vault encrypts with an ephemeral, process-local key: records written by this process "
    f"cannot be read after a restart or by another instance. Set {VAULT_KEYS_ENV} (or pass keys=) "
    "to the same secrets on every instance."
)

KeysArg = KeyRing | Sequence[str | bytes] | None


def _resolve_ring(keys: KeysArg) -> KeyRing:
    if keys is not None:
        return ring_from(keys)
    ring = ring_from_env(VAULT_KEYS_ENV)
    if ring is not None:
        return ring
    # The state keys, in the server's order: the key file first, then the variable.
    if os.environ.get(STATE_KEYS_FILE_ENV, "").strip():
        if os.environ.get(STATE_KEYS_ENV, "").strip():
            raise ValueError(f"both {STATE_KEYS_ENV} and {STATE_KEYS_FILE_ENV} are set: keep one of the two")
        key_file = KeyFile.from_env()
        if key_file is not None:
            _log.info(
                "vault keys derived from %s, read once at start-up (a separate HKDF subkey per key)",
                STATE_KEYS_FILE_ENV,
            )
            return key_file.ring
    ring = KeyRing.from_env(STATE_KEYS_ENV)
    if ring is not None:
        _log.info("vault keys derived from %s (a separate HKDF subkey per key)", STATE_KEYS_ENV)
        return ring
    _log.warning(_EPHEMERAL_WARNING)
    while True:
        material = os.urandom(32)
        if len(set(material)) >= 8:  # KeyRing's sanity rule; always true in practice
            return KeyRing([material])


def _check_sqlite_file(path: str) -> None:
    """Refuse, when the vault is made, a path SQLite cannot open: otherwise the first tool call
    fails with "the connection store is unavailable; retry", and no retry ever helps. The folder
    must be writable too: SQLite keeps its -wal and -shm files (and the kit its flow store)
    next to the file. ``:memory:`` and ``file:`` URIs are SQLite's to judge."""
    if path in ("", ":memory:") or path.startswith("file:"):
        return
    if os.path.isdir(path):
        raise ValueError(
            f"Vault.sqlite: {path!r} is a directory: give the path of a file in it, such as "
            f"{os.path.join(path, 'vault.db')!r}"
        )
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        what = "not a directory" if os.path.exists(folder) else "no such directory"
        raise ValueError(f"Vault.sqlite: cannot create {path!r}: {what} {folder!r}")
    cannot = f"Vault.sqlite: cannot {'open' if os.path.exists(path) else 'create'} {path!r}"
    if os.path.exists(path) and not os.access(path, os.R_OK | os.W_OK):
        raise ValueError(f"{cannot}: this process may not read and write it")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(
            f"{cannot}: the directory {folder!r} is not writable by this process (SQLite keeps "
            "-wal and -shm files next to the database)"
        )


def _check_text(what: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty str")
    if len(value) > _MAX_TEXT:
        raise ValueError(f"{what} is longer than {_MAX_TEXT} characters")
    if "\x00" in value:
        raise ValueError(f"{what} must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} is not valid Unicode text (lone surrogates)") from None
    return value


def _check_secret_text(what: str, value: object, *, optional: bool = False) -> None:
    """Validation of a token or secret value; the messages never include the value."""
    if value is None and optional:
        return
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty str")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} is not valid Unicode text (lone surrogates)") from None


def _check_time(what: str, value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number of seconds or None")
    return float(value)


def _pair(owner: str, label: str, what: str = "provider") -> tuple[str, str]:
    return _check_text("owner", owner), _check_text(what, label)


def _new_id() -> str:
    return _secrets.token_urlsafe(16)


def _lock_scope(prefix: str) -> str:
    return f"mcp-elicit/vault refresh lock\x00{prefix}"


def _lock_name(owner: str, provider: str) -> str:
    """The refresh lock of one connection (a lease key on SQLite; hashed on PostgreSQL)."""
    return f"refresh\x00{owner}\x00{provider}"


def advisory_key(prefix: str, owner: str, provider: str) -> int:
    """The PostgreSQL advisory-lock key of one connection's refresh lock (what ``pg_locks`` shows
    while a refresh or a disconnect holds it), distinct per table prefix."""
    from mcp_elicit.storage.postgres import lock_key

    return lock_key(_lock_scope(prefix), _lock_name(owner, provider))


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()


class Vault(ClosesOnExit):
    """Third-party tokens and secrets, AES-256-GCM encrypted per record, bound to their owner.

    Create one with :meth:`sqlite` or :meth:`postgres`; it connects on first use and creates its
    tables then. ``keys``: a :class:`~mcp_elicit.state.KeyRing` or a sequence of secrets (the first
    wraps new records, every key opens), default ``MCP_ELICIT_VAULT_KEYS``, then the state keys
    (safe: the vault derives its own subkeys) from the file named by ``MCP_ELICIT_STATE_KEYS_FILE``
    (read once, when the vault is made) or from ``MCP_ELICIT_STATE_KEYS``, else an ephemeral key
    with a warning. ``timeout`` bounds every database operation; ``refresh_timeout`` bounds each refresher
    and revoker call. A vault belongs to one event loop. Use ``async with`` or :meth:`close`.
    """

    def __init__(
        self,
        database: Database,
        statements: Statements,
        keys: KeysArg,
        *,
        timeout: float,
        refresh_timeout: float,
        clock: Callable[[], float],
    ) -> None:
        """Internal: use :meth:`sqlite` or :meth:`postgres`."""
        self._db = database
        self._sql = statements
        self._keys = VaultKeys(_resolve_ring(keys))
        self._timeout = timeout
        self._refresh_timeout = refresh_timeout
        self._clock = clock
        self._locks: weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._inflight: dict[tuple[str, str], asyncio.Task[Connection]] = {}
        self._closed = False

    # ------------------------------------------------------------------------------ constructors

    @classmethod
    def sqlite(
        cls,
        path: str | os.PathLike[str] = "mcp-elicit-vault.db",
        *,
        keys: KeysArg = None,
        table_prefix: str = DEFAULT_TABLE_PREFIX,
        timeout: float = 5.0,
        refresh_timeout: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> Vault:
        """A vault in an SQLite file (WAL, ``synchronous=FULL``: a refresh that rotated the refresh
        token must survive a power cut; created with mode 0600 if missing). Single-flight across
        processes sharing the file: a lease row per connection. A path that can never be opened
        (a directory, a missing or unwritable folder) is a ``ValueError`` here, at start-up."""
        from mcp_elicit.storage.sqlite import SQLiteDatabase

        timeout, refresh_timeout = cls._check_timeouts(timeout, refresh_timeout)
        _check_sqlite_file(os.fspath(path))
        prefix = check_prefix(table_prefix)
        statements = Statements.build("sqlite", prefix)
        database = SQLiteDatabase(
            os.fspath(path),
            statements.schema,
            label="SQLite vault",
            unavailable=VaultUnavailable,
            busy_timeout=timeout,
            durable=True,
            leases=lease_table(prefix),
        )
        return cls(database, statements, keys, timeout=timeout, refresh_timeout=refresh_timeout, clock=clock)

    @classmethod
    def postgres(
        cls,
        dsn: str,
        *,
        keys: KeysArg = None,
        table_prefix: str = DEFAULT_TABLE_PREFIX,
        timeout: float = 5.0,
        refresh_timeout: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> Vault:
        """A vault in PostgreSQL, shared by any number of instances (psycopg 3 is imported here).
        Single-flight across instances: an advisory lock per connection (:func:`advisory_key`)."""
        from mcp_elicit.storage.postgres import PostgresDatabase

        timeout, refresh_timeout = cls._check_timeouts(timeout, refresh_timeout)
        prefix = check_prefix(table_prefix)
        statements = Statements.build("postgres", prefix)
        database = PostgresDatabase(
            dsn,
            statements.schema,
            label="PostgreSQL vault",
            unavailable=VaultUnavailable,
            timeout=timeout,
            where="tables " + ", ".join(repr(table) for table in statements.tables),
            lock_scope=_lock_scope(prefix),
        )
        return cls(database, statements, keys, timeout=timeout, refresh_timeout=refresh_timeout, clock=clock)

    @staticmethod
    def _check_timeouts(timeout: float, refresh_timeout: float) -> tuple[float, float]:
        for name, value in (("timeout", timeout), ("refresh_timeout", refresh_timeout)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"{name} must be a positive number of seconds")
            if value <= 0:
                raise ValueError(f"{name} must be a positive number of seconds")
        return float(timeout), float(refresh_timeout)

    # ------------------------------------------------------------------------------ inspection

    @property
    def key_ids(self) -> tuple[str, ...]:
        """The key ids this vault can open; ``key_ids[0]`` wraps new records."""
        return self._keys.kids

    @property
    def sqlite_path(self) -> str | None:
        """The SQLite file of an SQLite vault (``":memory:"`` in memory); None for PostgreSQL."""
        if self._db.dialect != "sqlite":
            return None
        from mcp_elicit.storage.sqlite import SQLiteDatabase

        return self._db.path if isinstance(self._db, SQLiteDatabase) else None

    def __repr__(self) -> str:  # never a DSN, a key or a token
        return f"Vault({self._db.describe()}, key_ids={list(self._keys.kids)!r})"

    __str__ = __repr__

    async def key_usage(self) -> dict[str, int]:
        """How many records each key id wraps (connections and secrets together).

        Before removing a key from the ring, check that it no longer appears here.
        """
        rows = await self._db.fetchall(self._sql.key_usage, ())
        return {str(kid): int(count) for kid, count in rows}

    # ------------------------------------------------------------------------------ sealing

    def _seal(
        self, kind: RecordKind, owner: str, label: str, record_id: str, payload: dict[str, Any]
    ) -> bytes:
        context = RecordContext(kind, owner, label, record_id)
        return self._keys.seal(context, orjson.dumps(payload))

    def _open(self, context: RecordContext, sealed: object) -> dict[str, Any]:
        plaintext = self._keys.open(context, sealed)
        try:
            data = orjson.loads(plaintext)
        except orjson.JSONDecodeError:
            raise context.corrupt("bad-payload", VaultKeys.kid_of(sealed)) from None
        if not isinstance(data, dict):
            raise context.corrupt("bad-payload", VaultKeys.kid_of(sealed))
        return data

    def _connection_from_row(self, row: Row) -> Connection:
        (record_id, owner, provider, status, _exp, _kid, sealed, _rev, created, updated, refreshed) = row
        context = RecordContext("connection", str(owner), str(provider), str(record_id))
        data = self._open(context, sealed)
        kid = VaultKeys.kid_of(sealed) or ""
        access = data.get("at")
        refresh = data.get("rt")
        expires = data.get("exp")
        scopes = data.get("sc")
        token_type = data.get("tt")
        account = data.get("acct")
        if (
            not isinstance(access, str)
            or not (refresh is None or isinstance(refresh, str))
            or not (expires is None or isinstance(expires, int | float))
            or not (isinstance(scopes, list) and all(isinstance(s, str) for s in scopes))
            or not isinstance(token_type, str)
            or not (account is None or isinstance(account, str))
        ):
            raise context.corrupt("bad-payload", kid)
        if status not in _STATUSES:
            raise context.corrupt("malformed", kid)
        checked_status: ConnectionStatus = status
        return Connection(
            owner=str(owner),
            provider=str(provider),
            access_token=access,
            refresh_token=refresh,
            expires_at=None if expires is None else float(expires),
            scopes=tuple(scopes),
            token_type=token_type,
            provider_account_id=account,
            status=checked_status,
            id=str(record_id),
            created_at=float(created),
            updated_at=float(updated),
            last_refresh_at=None if refreshed is None else float(refreshed),
            key_id=kid,
        )

    def _seal_connection(self, connection: Connection) -> bytes:
        payload = {
            "at": connection.access_token,
            "rt": connection.refresh_token,
            "exp": connection.expires_at,
            "sc": list(connection.scopes),
            "tt": connection.token_type,
            "acct": connection.provider_account_id,
        }
        return self._seal("connection", connection.owner, connection.provider, connection.id, payload)

    # ------------------------------------------------------------------------------ connections

    async def put_connection(
        self,
        owner: str,
        provider: str,
        *,
        access_token: str,
        refresh_token: str | None = None,
        expires_at: float | None = None,
        expires_in: float | None = None,
        scopes: Sequence[str] = (),
        token_type: str = "Bearer",  # noqa: S107 - an OAuth token type, not a password
        provider_account_id: str | None = None,
        replace_unrevoked: bool = False,
    ) -> Connection:
        """Store (or replace) ``owner``'s connection to ``provider``; it becomes ``active``.

        Each put gets a new record id and data key. A connection whose earlier grant could not be
        revoked (status ``revocation_failed``) is not overwritten, because its tokens would be lost
        unrevoked: :class:`RevocationFailed` is raised unless ``replace_unrevoked=True``.
        """
        self._check_open()
        _check_text("owner", owner)
        _check_text("provider", provider)
        _check_secret_text("access_token", access_token)
        _check_secret_text("refresh_token", refresh_token, optional=True)
        _check_text("token_type", token_type)
        if provider_account_id is not None:
            _check_text("provider_account_id", provider_account_id)
        if isinstance(scopes, str):
            raise TypeError("scopes must be a sequence of str, not a single str")
        scope_list = tuple(_check_text("scope", scope) for scope in scopes)
        now = self._clock()
        expiry = _check_time("expires_at", expires_at)
        lifetime = _check_time("expires_in", expires_in)
        if expiry is not None and lifetime is not None:
            raise ValueError("give expires_at or expires_in, not both")
        if lifetime is not None:
            expiry = now + lifetime
        connection = Connection(
            owner=owner,
            provider=provider,
            access_token=access_token,
            refresh_token=refresh_token,
            expires_at=expiry,
            scopes=scope_list,
            token_type=token_type,
            provider_account_id=provider_account_id,
            status="active",
            id=_new_id(),
            created_at=now,
            updated_at=now,
            key_id=self._keys.sealing_kid,
        )
        sealed = self._seal_connection(connection)
        row = await self._db.fetchone(
            self._sql.upsert_connection,
            (
                connection.id,
                owner,
                provider,
                expiry,
                connection.key_id,
                sealed,
                now,
                now,
                bool(replace_unrevoked),
            ),
        )
        if row is None:
            _log.warning(
                "vault: refused to replace the unrevoked connection owner=%s provider=%s", owner, provider
            )
            raise RevocationFailed(
                f"the previous grant for {provider!r} has not been revoked yet (a disconnect failed); "
                "retry disconnect() first, or pass replace_unrevoked=True",
                owner=owner,
                provider=provider,
                reason="unrevoked-grant",
            )
        _log.info(
            "vault: connection stored owner=%s provider=%s id=%s key=%s",
            owner,
            provider,
            connection.id,
            connection.key_id,
        )
        return replace(connection, created_at=float(row[0]))

    async def get_connection(self, owner: str, provider: str) -> Connection | None:
        """``owner``'s connection to ``provider``, decrypted, whatever its status; ``None`` if absent.

        Raises :class:`VaultCorrupt` if the stored record does not authenticate.
        """
        self._check_open()
        row = await self._db.fetchone(self._sql.get_connection, _pair(owner, provider))
        if row is None:
            _log.debug("vault: no connection owner=%s provider=%s", owner, provider)
            return None
        connection = self._connection_from_row(row)
        _log.debug(
            "vault: read connection owner=%s provider=%s id=%s status=%s",
            owner,
            provider,
            connection.id,
            connection.status,
        )
        return connection

    async def list_connections(self, owner: str | None = None) -> list[Connection]:
        """Every connection (of ``owner``, if given), decrypted, ordered by owner and provider."""
        self._check_open()
        if owner is None:
            rows = await self._db.fetchall(self._sql.list_connections, ())
        else:
            rows = await self._db.fetchall(self._sql.list_owner_connections, (_check_text("owner", owner),))
        return [self._connection_from_row(row) for row in rows]

    async def mark_needs_reauthorization(self, owner: str, provider: str) -> bool:
        """Flag the connection ``needs_reauthorization`` (e.g. the provider answered 401 to an API
        call with a fresh token). ``False`` if there is no such connection (or it awaits revocation)."""
        self._check_open()
        changed = await self._db.execute(self._sql.mark_reauth, (self._clock(), *_pair(owner, provider)))
        if changed:
            _log.info("vault: connection needs re-authorization owner=%s provider=%s", owner, provider)
        return changed > 0

    async def delete_connection(self, owner: str, provider: str) -> bool:
        """Delete the row **without** revoking anything upstream; prefer :meth:`disconnect`."""
        self._check_open()
        deleted = await self._db.execute(self._sql.delete_connection, _pair(owner, provider))
        if deleted:
            _log.info("vault: connection deleted without revocation owner=%s provider=%s", owner, provider)
        return deleted > 0

    # ------------------------------------------------------------------------------ refresh

    def _key_lock(self, owner: str, provider: str) -> asyncio.Lock:
        key = (owner, provider)
        lock = self._locks.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[key] = lock
        return lock

    @staticmethod
    def _require_usable(connection: Connection | None, owner: str, provider: str) -> Connection:
        if connection is None:
            raise NotConnected(f"there is no connection to {provider!r}", owner=owner, provider=provider)
        if connection.status == "needs_reauthorization":
            raise NeedsReauthorization(owner=owner, provider=provider)
        if connection.status == "revocation_failed":
            raise NotConnected(
                f"the connection to {provider!r} is being disconnected (upstream revocation failed; "
                "retry disconnect)",
                owner=owner,
                provider=provider,
                status=connection.status,
            )
        return connection

    async def fresh_connection(
        self, owner: str, provider: str, refresher: Refresher, *, skew: float = 60.0
    ) -> Connection:
        """``owner``'s active connection to ``provider`` with an access token valid for at least
        ``skew`` more seconds, refreshing it (once, whatever the number of callers) if needed.

        Raises :class:`NotConnected` (no row, or a disconnect awaiting revocation),
        :class:`NeedsReauthorization` (now or earlier ``invalid_grant``: start a new URL flow),
        :class:`RefreshFailed` (``retryable`` for transient failures; the status is unchanged),
        :class:`VaultUnavailable`, :class:`VaultCorrupt`. A token whose expiry is unknown is
        returned as it is. Concurrent callers share the first caller's refresher and ``skew``.
        """
        self._check_open()
        _check_text("owner", owner)
        _check_text("provider", provider)
        if _check_time("skew", skew) is None or skew < 0:
            raise ValueError("skew must be a number of seconds >= 0")
        connection = self._require_usable(await self.get_connection(owner, provider), owner, provider)
        if not connection.expires_within(skew, now=self._clock()):
            return connection
        key = (owner, provider)
        task = self._inflight.get(key)
        if task is None or task.done():
            task = asyncio.create_task(self._refresh(owner, provider, refresher, float(skew)))
            self._inflight[key] = task
            task.add_done_callback(_retrieve)
            task.add_done_callback(lambda done: self._forget(key, done))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and (current is None or current.cancelling() == 0):
                # close() gave up on the refresh; this caller was not cancelled.
                raise VaultUnavailable(f"the vault closed before the refresh of {provider!r} ended") from None
            raise

    def _forget(self, key: tuple[str, str], task: asyncio.Task[Connection]) -> None:
        if self._inflight.get(key) is task:
            del self._inflight[key]

    def _refresh_lock(self, owner: str, provider: str) -> AbstractAsyncContextManager[Executor]:
        """The cross-process lock of one connection: a holder may spend the refresher's timeout
        plus a few database round trips; a waiter waits for one such holder."""
        hold = self._refresh_timeout + 3 * self._timeout
        return self._db.exclusive(
            _lock_name(owner, provider),
            wait=hold + self._timeout,
            hold=hold,
            what=f"the refresh lock of {provider!r}",
        )

    async def _call_refresher(
        self, refresher: Refresher, connection: Connection
    ) -> RefreshResult | RefreshFailed:
        owner, provider = connection.owner, connection.provider
        try:
            async with asyncio.timeout(self._refresh_timeout):
                result = await refresher(connection)
        except TimeoutError:
            return RefreshFailed(owner=owner, provider=provider, retryable=True, reason="timeout")
        except Exception as exc:  # its text is not ours: it may hold a token. Type name only.
            return RefreshFailed(
                owner=owner,
                provider=provider,
                retryable=True,
                reason=f"refresher raised {type(exc).__name__}",
            )
        if not isinstance(result, RefreshResult):
            return RefreshFailed(
                owner=owner,
                provider=provider,
                retryable=False,
                reason=f"refresher returned {type(result).__name__}, not RefreshResult",
            )
        return result

    async def _refresh(self, owner: str, provider: str, refresher: Refresher, skew: float) -> Connection:
        async with self._key_lock(owner, provider):
            outcome: Connection | VaultError | None = None
            pending: tuple[object, ...] | None = None
            try:
                async with self._refresh_lock(owner, provider) as tx:
                    row = await tx.fetchone(self._sql.get_connection, (owner, provider))
                    current = self._require_usable(
                        None if row is None else self._connection_from_row(row), owner, provider
                    )
                    if not current.expires_within(skew, now=self._clock()):
                        _log.debug("vault: already refreshed elsewhere owner=%s provider=%s", owner, provider)
                        return current
                    _log.debug("vault: refreshing owner=%s provider=%s id=%s", owner, provider, current.id)
                    result = await self._call_refresher(refresher, current)
                    now = self._clock()
                    if isinstance(result, RefreshFailed):
                        outcome = result
                    elif result.outcome == "ok":
                        refreshed = outcome = self._refreshed(current, result, now)
                        pending = (
                            self._seal_connection(refreshed),
                            refreshed.key_id,
                            refreshed.expires_at,
                            now,
                            now,
                            refreshed.id,
                        )
                        if await tx.fetchone(self._sql.update_tokens, pending) is None:
                            pending = None  # the row was replaced or deleted meanwhile
                            outcome = RefreshFailed(
                                owner=owner,
                                provider=provider,
                                retryable=True,
                                reason="the connection was replaced during the refresh",
                            )
                    elif result.outcome == "invalid_grant":
                        await tx.execute(self._sql.mark_reauth_by_id, (now, current.id))
                        outcome = NeedsReauthorization(
                            owner=owner, provider=provider, description=result.reason or None
                        )
                    else:
                        outcome = RefreshFailed(
                            owner=owner,
                            provider=provider,
                            retryable=result.outcome == "transient",
                            reason=result.reason or result.outcome,
                            retry_after=result.retry_after,
                        )
            except VaultUnavailable:
                if pending is None:
                    raise
                await self._persist_refresh(owner, provider, pending)
        if isinstance(outcome, Connection):
            _log.info(
                "vault: connection refreshed owner=%s provider=%s id=%s rotated_refresh_token=%s",
                owner,
                provider,
                outcome.id,
                outcome.refresh_token != current.refresh_token,
            )
            return outcome
        if isinstance(outcome, NeedsReauthorization):
            _log.info(
                "vault: invalid_grant, connection needs re-authorization owner=%s provider=%s",
                owner,
                provider,
            )
        elif isinstance(outcome, RefreshFailed):
            _log.warning(
                "vault: refresh failed owner=%s provider=%s retryable=%s reason=%s",
                owner,
                provider,
                outcome.retryable,
                outcome.reason,
            )
        assert outcome is not None
        raise outcome

    def _refreshed(self, current: Connection, result: RefreshResult, now: float) -> Connection:
        assert result.access_token is not None
        if result.expires_at is not None:
            expiry: float | None = result.expires_at
        elif result.expires_in is not None:
            expiry = now + result.expires_in
        else:
            expiry = None
        return replace(
            current,
            access_token=result.access_token,
            refresh_token=result.refresh_token if result.refresh_token is not None else current.refresh_token,
            expires_at=expiry,
            scopes=current.scopes if result.scopes is None else result.scopes,
            token_type=current.token_type if result.token_type is None else result.token_type,
            updated_at=now,
            last_refresh_at=now,
            key_id=self._keys.sealing_kid,
        )

    async def _persist_refresh(self, owner: str, provider: str, pending: tuple[object, ...]) -> None:
        """The locked write (or its commit) failed after the provider issued new tokens: try again
        on the shared connection, so that a rotated refresh token is not lost."""
        last: VaultUnavailable | None = None
        for attempt in range(3):
            await asyncio.sleep(0.05 * 2**attempt)
            try:
                await self._db.fetchone(self._sql.update_tokens, pending)
                _log.warning("vault: refreshed tokens stored on retry owner=%s provider=%s", owner, provider)
                return
            except VaultUnavailable as exc:
                last = exc
        _log.error(
            "vault: refreshed tokens could not be stored owner=%s provider=%s; the connection may need "
            "re-authorization",
            owner,
            provider,
        )
        raise VaultUnavailable(f"the tokens refreshed for {provider!r} could not be stored: {last}")

    # ------------------------------------------------------------------------------ disconnect

    async def disconnect(self, owner: str, provider: str, revoker: Revoker) -> bool:
        """Revoke upstream with ``revoker(connection)``, then delete the row.

        ``False`` if there was no connection. If revocation fails the row is kept with status
        ``revocation_failed`` and :class:`RevocationFailed` is raised: call again later. A record
        that does not authenticate raises :class:`VaultCorrupt` (nothing to revoke with; remove it
        with :meth:`delete_connection`).
        """
        self._check_open()
        _check_text("owner", owner)
        _check_text("provider", provider)
        async with self._key_lock(owner, provider):
            failure: RevocationFailed | None = None
            found = False
            try:
                async with self._refresh_lock(owner, provider) as tx:
                    row = await tx.fetchone(self._sql.get_connection, (owner, provider))
                    if row is not None:
                        found = True
                        connection = self._connection_from_row(row)
                        reason = await self._call_revoker(revoker, connection)
                        if reason is None:
                            await tx.execute(self._sql.delete_connection_by_id, (connection.id,))
                        else:
                            failure = RevocationFailed(
                                f"revoking the connection to {provider!r} failed ({reason}); it is "
                                "kept as 'revocation_failed': retry disconnect later",
                                owner=owner,
                                provider=provider,
                                reason=reason,
                            )
                            await tx.execute(self._sql.flag_revocation, (self._clock(), connection.id))
            except VaultUnavailable:
                if failure is None:
                    raise
                _log.error("vault: could not flag revocation_failed owner=%s provider=%s", owner, provider)
            if failure is not None:
                _log.warning(
                    "vault: upstream revocation failed owner=%s provider=%s reason=%s; row kept",
                    owner,
                    provider,
                    failure.reason,
                )
                raise failure
        if found:
            _log.info("vault: disconnected (revoked and deleted) owner=%s provider=%s", owner, provider)
        else:
            _log.debug("vault: nothing to disconnect owner=%s provider=%s", owner, provider)
        return found

    async def _call_revoker(self, revoker: Revoker, connection: Connection) -> str | None:
        """``None`` if revoked, else a short reason (never the exception's text)."""
        try:
            async with asyncio.timeout(self._refresh_timeout):
                await revoker(connection)
        except TimeoutError:
            return "timeout"
        except Exception as exc:
            return f"revoker raised {type(exc).__name__}"
        return None

    # ------------------------------------------------------------------------------ secrets

    async def put_secret(self, owner: str, name: str, value: str) -> Secret:
        """Store (or replace) ``owner``'s secret ``name``."""
        self._check_open()
        _check_text("owner", owner)
        _check_text("name", name)
        _check_secret_text("value", value)
        now = self._clock()
        record_id = _new_id()
        kid = self._keys.sealing_kid
        sealed = self._seal("secret", owner, name, record_id, {"v": value})
        row = await self._db.fetchone(
            self._sql.upsert_secret, (record_id, owner, name, kid, sealed, now, now)
        )
        created = now if row is None else float(row[0])
        _log.info("vault: secret stored owner=%s name=%s id=%s key=%s", owner, name, record_id, kid)
        return Secret(owner, name, value, record_id, created, now, kid)

    async def get_secret(self, owner: str, name: str) -> Secret | None:
        """``owner``'s secret ``name``, decrypted, or ``None``."""
        self._check_open()
        row = await self._db.fetchone(self._sql.get_secret, _pair(owner, name, "name"))
        if row is None:
            _log.debug("vault: no secret owner=%s name=%s", owner, name)
            return None
        record_id, row_owner, row_name, _kid, sealed, _rev, created, updated = row
        context = RecordContext("secret", str(row_owner), str(row_name), str(record_id))
        value = self._open(context, sealed).get("v")
        if not isinstance(value, str):
            raise context.corrupt("bad-payload", VaultKeys.kid_of(sealed))
        _log.debug("vault: read secret owner=%s name=%s id=%s", owner, name, record_id)
        return Secret(
            str(row_owner),
            str(row_name),
            value,
            str(record_id),
            float(created),
            float(updated),
            VaultKeys.kid_of(sealed) or "",
        )

    async def list_secret_names(self, owner: str) -> list[str]:
        """The names of ``owner``'s secrets (nothing is decrypted)."""
        self._check_open()
        rows = await self._db.fetchall(self._sql.list_secret_names, (_check_text("owner", owner),))
        return [str(row[0]) for row in rows]

    async def delete_secret(self, owner: str, name: str) -> bool:
        """Delete ``owner``'s secret ``name``; whether there was one."""
        self._check_open()
        deleted = await self._db.execute(self._sql.delete_secret, _pair(owner, name, "name"))
        if deleted:
            _log.info("vault: secret deleted owner=%s name=%s", owner, name)
        return deleted > 0

    # ------------------------------------------------------------------------------ rotation

    async def rotate(self, new_keys: KeyRing | Sequence[str | bytes]) -> RotationReport:
        """Re-wrap every record's data key under ``new_keys``' first key; the vault then uses
        ``new_keys``.

        Records are opened with ``new_keys`` *and* the current keys, so ``new_keys`` may drop old
        keys. Payload ciphertexts are kept (only the 48-byte wrapped data key changes) after being
        authenticated. A record changed concurrently is re-read and re-wrapped; records that
        cannot be opened are left alone and listed in :attr:`RotationReport.failed`. On several
        instances, first give every instance a ring containing the new key, then rotate once.
        """
        self._check_open()
        target = VaultKeys(ring_from(new_keys))
        working = VaultKeys(ring_from(new_keys), also=(self._keys,))
        self._keys = working  # new writes use the new key from now on
        rewrapped = unchanged = 0
        failed: list[str] = []
        sql = self._sql
        tables: tuple[tuple[RecordKind, str, str, str], ...] = (
            ("connection", sql.page_connections, sql.get_connection_by_id, sql.rewrap_connection),
            ("secret", sql.page_secrets, sql.get_secret_by_id, sql.rewrap_secret),
        )
        for kind, page, by_id, rewrap in tables:
            after = ""
            while True:
                rows = await self._db.fetchall(page, (after, _PAGE))
                if not rows:
                    break
                for row in rows:
                    after = str(row[0])
                    outcome = await self._rewrap_row(kind, row, by_id, rewrap, working)
                    if outcome == "rewrapped":
                        rewrapped += 1
                    elif outcome == "unchanged":
                        unchanged += 1
                    elif outcome == "failed":
                        failed.append(after)
        self._keys = target
        report = RotationReport(rewrapped=rewrapped, unchanged=unchanged, failed=tuple(failed))
        log = _log.warning if failed else _log.info
        log(
            "vault: key rotation to %s: %d re-wrapped, %d already current, %d could not be opened",
            target.sealing_kid,
            rewrapped,
            unchanged,
            len(failed),
        )
        return report

    async def _rewrap_row(
        self, kind: RecordKind, row: Row, by_id: str, rewrap: str, keys: VaultKeys
    ) -> Literal["rewrapped", "unchanged", "failed", "gone"]:
        for _ in range(5):
            record_id, owner, label, sealed, revision = row
            context = RecordContext(kind, str(owner), str(label), str(record_id))
            try:
                blob = keys.rewrap(context, sealed)
            except VaultCorrupt as exc:
                _log.warning("vault: rotation skipped a record that cannot be opened: %s", exc)
                return "failed"
            if blob is None:
                return "unchanged"
            if await self._db.execute(rewrap, (blob, keys.sealing_kid, record_id, revision)):
                return "rewrapped"
            fresh = await self._db.fetchone(by_id, (record_id,))  # changed meanwhile: read it again
            if fresh is None:
                return "gone"
            row = fresh
        raise VaultUnavailable(f"vault rotation: record {record_id} kept changing; run rotate() again")

    # ------------------------------------------------------------------------------ lifecycle

    def _check_open(self) -> None:
        if self._closed:
            raise VaultUnavailable("the vault is closed")

    async def close(self) -> None:
        """Let in-flight refreshes finish (so rotated tokens are stored), then close the database.
        A refresh still running after ``refresh_timeout`` plus three ``timeout`` is given up: its
        callers get :class:`VaultUnavailable`."""
        self._closed = True
        pending = [task for task in self._inflight.values() if not task.done()]
        if pending:
            _, stuck = await asyncio.wait(pending, timeout=self._refresh_timeout + 3 * self._timeout)
            for task in stuck:
                task.cancel()
        await self._db.close()
