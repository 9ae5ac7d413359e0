"""An abandoned PostgreSQL operation never closes a socket the event loop still watches
(issue 17). Each store, on asyncio and on uvloop (what ``run_http()`` and the stdio server use
when it is installed), in a worker process: the loop is stalled past the store's timeout right
after a statement went out. Before the fix, uvloop aborted the process (SIGABRT, exit 134) on the
second or third try."""

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


@pytest.mark.parametrize("store", sorted(UNAVAILABLE))
@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_stalled_loop_abandons_the_operation_without_killing_the_process(
    dsn: str, loop: str, store: str
) -> None:
    prefix = f"stall_{uuid.uuid4().hex[:10]}"
    try:
        done = subprocess.run(
            [sys.executable, str(WORKER), loop, store, dsn, prefix],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        drop_tables(dsn, prefix)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}"
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    outcomes = [line["outcome"] for line in lines if "outcome" in line]
    # Every try either finished or failed closed with the store's own (retryable) error ...
    assert set(outcomes) <= {"ok", UNAVAILABLE[store]}, done.stdout + done.stderr[-3000:]
    # ... the stall did hit the deadline (the case that aborted) ...
    assert UNAVAILABLE[store] in outcomes, outcomes
    # ... and the same store object works again: the connection was replaced.
    assert lines[-1] == {"after": "ok"}
    assert "Traceback" not in done.stderr, done.stderr
