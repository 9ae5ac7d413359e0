"""A store operation abandoned while the event loop was stalled, in a process of its own
(issue 17: under uvloop, closing a socket the loop still watched aborted the whole process).

Usage: ``python pg_stall_worker.py LOOP STORE DSN PREFIX`` with LOOP ``asyncio`` or ``uvloop`` and
STORE ``single-use``, ``flows`` or ``vault``. Each try runs one operation of several statements;
at one of its psycopg waits the event loop is blocked (``time.sleep``, as a long GC pause, CPU
throttling or a SIGSTOP would) for longer than the store's timeout, right after that statement
went out. When the loop runs again the reply is there *and* the deadline has passed: psycopg goes
on to the next statement while the store abandons the operation. Prints one JSON line per try
(``{"outcome": "ok" | <error type>}``), then ``{"after": "ok"}`` once an ordinary operation on the
same store object succeeds, and exits 0. A process the loop killed exits 134 (SIGABRT) instead.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import psycopg.waiting

TIMEOUT = 0.5
STALL = 0.8
TRIES = 4
OWNER = "https://issuer.example|alice"


@dataclass
class Stall:
    waits_to_skip: int = 0  # the psycopg waits of the operation that go by before the stall
    seconds: float = STALL
    armed: bool = False


stall = Stall()
_original_wait = psycopg.waiting.wait_async


async def _stalling_wait(gen: Any, fileno: int, *args: Any, **kwargs: Any) -> Any:
    if stall.armed:
        if stall.waits_to_skip:
            stall.waits_to_skip -= 1
        else:
            stall.armed = False
            # Runs once this task waits for the reply: the statement has been sent.
            asyncio.get_running_loop().call_soon(time.sleep, stall.seconds)
    return await _original_wait(gen, fileno, *args, **kwargs)


psycopg.waiting.wait_async = _stalling_wait

Operation = Callable[[], Awaitable[object]]


async def single_use(dsn: str, prefix: str) -> tuple[Operation, int, Any]:
    from mcp_elicit.state import PostgresSingleUseStore

    store = PostgresSingleUseStore(dsn, timeout=TIMEOUT, table=f"{prefix}_state")
    token = uuid.uuid4().hex
    await store.claim(token, "digest", time.time() + 60)
    # Claiming a claimed id sends a second statement (to read the stored digest).
    return (lambda: store.claim(token, "digest", time.time() + 60)), 0, store


async def flows(dsn: str, prefix: str) -> tuple[Operation, int, Any]:
    from mcp_elicit.connect.flows import PostgresFlowStore

    store = PostgresFlowStore(dsn, table=f"{prefix}_flows", timeout=TIMEOUT)
    await store.expire_old()
    # Creating a flow is one transaction of several statements.
    return (lambda: store.create(OWNER, "secret", "demo")), 0, store


async def vault(dsn: str, prefix: str) -> tuple[Operation, int, Any]:
    from mcp_elicit.connect.vault import RefreshResult, Vault
    from mcp_elicit.state import KeyRing

    # The lock's own deadline adds the longest a holder may keep it (the refresher's timeout and
    # a few round trips): short ones keep the stall that passes it short too.
    store = Vault.postgres(
        dsn, keys=[KeyRing.generate_secret()], timeout=0.3, refresh_timeout=0.1, table_prefix=prefix
    )
    stall.seconds = 2.0
    await store.put_connection(OWNER, "demo", access_token="a0", refresh_token="r0", expires_in=5)

    async def refresher(connection: Any) -> RefreshResult:
        return RefreshResult.ok(f"a-{uuid.uuid4().hex[:6]}", expires_in=5)

    # A refresh takes the cross-process lock on a connection of its own: after the read of the
    # connection (one wait), a transaction sets its limits, then waits for the advisory lock.
    return (lambda: store.fresh_connection(OWNER, "demo", refresher, skew=3600)), 1, store


STORES = {"single-use": single_use, "flows": flows, "vault": vault}


async def main(store_name: str, dsn: str, prefix: str) -> None:
    operation, skip, store = await STORES[store_name](dsn, prefix)
    try:
        for _ in range(TRIES):
            stall.waits_to_skip, stall.armed = skip, True
            try:
                await operation()
                outcome = "ok"
            except Exception as exc:
                outcome = type(exc).__name__
            print(json.dumps({"outcome": outcome}), flush=True)
            await asyncio.sleep(0.05)
        stall.armed = False
        await operation()
        print(json.dumps({"after": "ok"}), flush=True)
    finally:
        await store.close()


if __name__ == "__main__":
    loop_name, store_name, dsn, prefix = sys.argv[1:5]
    if loop_name == "uvloop":
        import uvloop

        uvloop.run(main(store_name, dsn, prefix))
    else:
        asyncio.run(main(store_name, dsn, prefix))
