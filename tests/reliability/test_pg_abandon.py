"""An abandoned PostgreSQL operation never closes a socket the event loop still watches
(issue 17). Each store, on asyncio and on uvloop (what ``run_http()`` and the stdio server use
when it is installed), in a worker process (``pg_stall_worker.py``), each way an operation is
abandoned while psycopg waits on its socket: the store's timeout (the loop stalled past it right
after a statement went out), the caller's cancellation (its own deadline passing during a short
stall: a disconnect or a shutdown timer cancels a handler the same way) and the end of the event
loop with the operation under way. Against the code before the fix (14c2fe3^), uvloop aborted
the process (SIGABRT, exit 134) in 11 of 12 runs of ``stall`` and 9 of 9 of ``cancel``, every
store; ``shutdown`` did not abort even then (the runner cancels the operation too, so it never
watches the socket again after the close) and is kept as a guard.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.helpers import find_pg_dsn

WORKER = Path(__file__).with_name("pg_stall_worker.py")
UNAVAILABLE = {
    "single-use": "StateStoreUnavailable",
    "flows": "FlowStoreUnavailable",
    "vault": "VaultUnavailable",
}


@pytest.fixture(scope="module")
def dsn() -> str:
    return find_pg_dsn("abandoning PostgreSQL operations")


def drop_tables(dsn: str, prefix: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE %s", (prefix + "%",))
        for (table,) in rows.fetchall():
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))


# What each fault's tries must all end with, besides the store's own (retryable) error, and the
# outcome at least one of them must have (the fault did land).
EXPECTED = {"stall": "", "cancel": "cancelled", "shutdown": "shutdown"}


@pytest.mark.parametrize("store", sorted(UNAVAILABLE))
@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
@pytest.mark.parametrize("fault", sorted(EXPECTED))
def test_an_abandoned_operation_never_kills_the_process(dsn: str, fault: str, loop: str, store: str) -> None:
    prefix = f"stall_{uuid.uuid4().hex[:10]}"
    try:
        done = subprocess.run(
            [sys.executable, str(WORKER), loop, store, dsn, prefix, fault],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        drop_tables(dsn, prefix)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}"
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    outcomes = [line["outcome"] for line in lines if "outcome" in line]
    assert len(outcomes) == 4, done.stdout
    # Every try finished, was ended by the fault, or failed closed with the store's own error
    # (which the servers turn into the retryable -32603) ...
    allowed = {"ok", UNAVAILABLE[store], EXPECTED[fault]} - {""}
    assert set(outcomes) <= allowed, done.stdout + done.stderr[-3000:]
    # ... the fault did land where it aborted the process before (a stall past the deadline
    # fails the operation with the store's error) ...
    assert (EXPECTED[fault] or UNAVAILABLE[store]) in outcomes, outcomes
    # ... and the store works again: the connection was replaced (the same store object, except
    # after a shutdown, whose stores ended with their loops).
    assert lines[-1] == {"after": "ok"}
    assert "Traceback" not in done.stderr, done.stderr
    assert "never retrieved" not in done.stderr, done.stderr
