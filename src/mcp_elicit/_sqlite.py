"""Small SQLite helpers shared by the stores (single-use state, pending flows, vault)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable
from typing import Final

_SQLITE_BUSY: Final = 5
_SQLITE_LOCKED: Final = 6


def connect_private(path: str, *, timeout: float) -> sqlite3.Connection:
    """``sqlite3.connect`` to a file that only this user can read: a new database file is created
    with mode 0600 first (SQLite gives its -wal and -shm files the same mode). The stores keep
    flow owners, answers and secrets; another local user must not read them."""
    if path and path != ":memory:" and not path.startswith("file:") and not os.path.exists(path):
        try:
            with contextlib.suppress(FileExistsError):
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except OSError as exc:  # what sqlite3.connect itself raises for a path it cannot open
            raise sqlite3.OperationalError(f"unable to open database file: {exc.strerror or exc}") from exc
    return sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)


_SQLITE_READONLY: Final = 8
_SQLITE_CANTOPEN: Final = 14


def describe(path: str, exc: sqlite3.Error) -> str:
    """``exc`` with the database file it concerns, and what to check when the file cannot be
    written: an operator reading the log must know which file, and that WAL mode also needs
    the ``-wal`` and ``-shm`` files next to it."""
    text = f"{path!r}: {exc}"
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in (_SQLITE_READONLY, _SQLITE_CANTOPEN) and path != ":memory:":
        text += (
            " (the file and its directory must be writable by this process: SQLite keeps -wal "
            "and -shm files next to it)"
        )
    return text


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused because another connection holds a lock (worth retrying)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in (_SQLITE_BUSY, _SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def prepare_retrying(
    conn: sqlite3.Connection, prepare: Callable[[sqlite3.Connection], None], timeout: float
) -> None:
    """Run ``prepare`` (switch to WAL, create the schema) on a new connection, retrying while
    another connection holds a lock, for at most ``timeout`` seconds.

    SQLite does not call the busy handler in every case here: switching the journal mode of a
    file that another connection is opening or writing at the same moment fails at once with
    "database is locked". So the busy timeout is applied by hand around the whole preparation.
    Call it from a worker thread: it sleeps between attempts.
    """
    deadline = time.monotonic() + timeout
    pause = 0.002
    while True:
        try:
            prepare(conn)
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
