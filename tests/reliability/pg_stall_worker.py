"""A store operation abandoned while it was inside psycopg, in a process of its own (issue 17:
under uvloop, closing a socket the loop still watched aborted the whole process).

Usage: ``python pg_stall_worker.py LOOP STORE DSN PREFIX [FAULT]`` with LOOP ``asyncio`` or
``uvloop``, STORE ``single-use``, ``flows`` or ``vault`` and FAULT one of:

* ``stall`` (the default): at one of the operation's psycopg waits the event loop is blocked
  (``time.sleep``, as a long GC pause, CPU throttling or a SIGSTOP would) for longer than the
  store's timeout, right after that statement went out. When the loop runs again the reply is
  there *and* the deadline has passed: psycopg goes on to the next statement while the store
  abandons the operation (its timeout).
* ``cancel``: the caller's own deadline (``asyncio.timeout`` around the call) passes at that
  wait, while the loop is blocked a little (less than the store's timeout; the reply comes in
  meanwhile). When the loop runs again, psycopg sends the next statement and watches the socket,
  and in the same turn the caller's task is cancelled, which abandons the operation. A client
  that went away, a ``notifications/cancelled`` and uvicorn's graceful-shutdown timer cancel a
  handler the same way. Before each try the operation runs once unharmed, so that the fault
  lands in the operation, not in the set-up of a new connection.
* ``shutdown``: at that wait the event loop's runner ends, as a server's does on its way out:
  every task still running is cancelled, the operation's and the caller's together. Each try is
  a new loop and a new store.

Prints one JSON line per try (``{"outcome": "ok" | "cancelled" | "shutdown" | <error type>}``),
then ``{"after": "ok"}`` once an ordinary operation succeeds (on the same store object, except
after ``shutdown``, whose stores died with their loops), and exits 0. A process the loop killed
exits 134 (SIGABRT) instead.
"""

from __future__ import annotations

import asyncio
import functools
import json
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import psycopg.waiting

TIMEOUT = 0.5
STALL = 0.8
PAUSE = 0.2  # the cancel fault's stall: shorter than every store's timeout
TRIES = 4
OWNER = "https://issuer.example|alice"


@dataclass
class Trigger:
    """What happens at the psycopg wait that comes after ``waits_to_skip`` others."""

    waits_to_skip: int = 0
    fault: Callable[[], object] = field(default=lambda: None)
    armed: bool = False

    def arm(self, waits_to_skip: int, fault: Callable[[], object]) -> None:
        self.waits_to_skip, self.fault, self.armed = waits_to_skip, fault, True


trigger = Trigger()
_original_wait = psycopg.waiting.wait_async


async def _faulting_wait(gen: Any, fileno: int, *args: Any, **kwargs: Any) -> Any:
    if trigger.armed:
        if trigger.waits_to_skip:
            trigger.waits_to_skip -= 1
        else:
            trigger.armed = False
            # Runs once this task waits for the reply: the statement has been sent, and the loop
            # watches the socket.
            asyncio.get_running_loop().call_soon(trigger.fault)
    return await _original_wait(gen, fileno, *args, **kwargs)


psycopg.waiting.wait_async = _faulting_wait

Operation = Callable[[], Awaitable[object]]


@dataclass
class Setup:
    store: Any
    operation: Operation  # stalled, or ended by the shutdown
    skip: int  # the operation's waits before the one the fault lands on
    stall: float = STALL
    cancelled: Operation | None = None  # the operation cancelled, when not ``operation``
    cancelled_skip: int = 0


async def single_use(dsn: str, prefix: str) -> Setup:
    from mcp_elicit.state import PostgresSingleUseStore

    store = PostgresSingleUseStore(dsn, timeout=TIMEOUT, table=f"{prefix}_state")
    token = uuid.uuid4().hex
    await store.claim(token, "digest", time.time() + 60)
    # Claiming a claimed id sends a second statement (to read the stored digest).
    return Setup(store, lambda: store.claim(token, "digest", time.time() + 60), 0)


async def flows(dsn: str, prefix: str) -> Setup:
    from mcp_elicit.connect.flows import PostgresFlowStore

    store = PostgresFlowStore(dsn, table=f"{prefix}_flows", timeout=TIMEOUT, max_pending_per_user=100)
    await store.expire_old()
    # Creating a flow is one transaction of several statements.
    return Setup(store, lambda: store.create(OWNER, "secret", "demo"), 0)


async def vault(dsn: str, prefix: str) -> Setup:
    from mcp_elicit.connect.vault import RefreshResult, Vault
    from mcp_elicit.state import KeyRing

    # The lock's own deadline adds the longest a holder may keep it (the refresher's timeout and
    # a few round trips): short ones keep the stall that passes it short too.
    store = Vault.postgres(
        dsn, keys=[KeyRing.generate_secret()], timeout=0.3, refresh_timeout=0.1, table_prefix=prefix
    )
    await store.put_connection(OWNER, "demo", access_token="a0", refresh_token="r0", expires_in=5)

    async def refresher(connection: Any) -> RefreshResult:
        return RefreshResult.ok(f"a-{uuid.uuid4().hex[:6]}", expires_in=5)

    async def revoker(connection: Any) -> None:
        return None

    async def disconnect() -> bool:
        found = await store.disconnect(OWNER, "demo", revoker)
        await store.put_connection(OWNER, "demo", access_token="a0", refresh_token="r0", expires_in=5)
        return found

    # A refresh takes the cross-process lock on a connection of its own: after the read of the
    # connection (one wait), a transaction sets its limits, then waits for the advisory lock.
    # A refresh runs shielded (callers of one connection share it), so the cancelled operation
    # is a disconnect, which takes the same lock unshielded: its limits (no wait before), then
    # the lock.
    return Setup(
        store,
        lambda: store.fresh_connection(OWNER, "demo", refresher, skew=3600),
        1,
        stall=2.0,
        cancelled=disconnect,
        cancelled_skip=0,
    )


STORES = {"single-use": single_use, "flows": flows, "vault": vault}


def report(**line: str) -> None:
    print(json.dumps(line), flush=True)


async def stalled(store_name: str, dsn: str, prefix: str) -> None:
    setup = await STORES[store_name](dsn, prefix)
    try:
        for _ in range(TRIES):
            trigger.arm(setup.skip, functools.partial(time.sleep, setup.stall))
            try:
                await setup.operation()
                outcome = "ok"
            except Exception as exc:
                outcome = type(exc).__name__
            report(outcome=outcome)
            await asyncio.sleep(0.05)
        trigger.armed = False
        await setup.operation()
        report(after="ok")
    finally:
        await setup.store.close()


async def cancelled(store_name: str, dsn: str, prefix: str) -> None:
    setup = await STORES[store_name](dsn, prefix)
    operation = setup.cancelled or setup.operation
    skip = setup.cancelled_skip if setup.cancelled else setup.skip
    try:
        loop = asyncio.get_running_loop()
        for _ in range(TRIES):
            await operation()  # a connection that is up: the fault lands in the operation
            try:
                async with asyncio.timeout(None) as deadline:

                    def fault(deadline: asyncio.Timeout = deadline) -> None:
                        # Due during the pause (not at once: that would cancel before the reply).
                        deadline.reschedule(loop.time() + PAUSE / 2)
                        time.sleep(PAUSE)

                    trigger.arm(skip, fault)
                    await operation()
                outcome = "ok"
            except TimeoutError:  # the caller's own deadline cancelled it
                outcome = "cancelled"
            except Exception as exc:
                outcome = type(exc).__name__
            report(outcome=outcome)
        trigger.armed = False
        await operation()
        report(after="ok")
    finally:
        await setup.store.close()


async def ended(store_name: str, dsn: str, prefix: str) -> None:
    setup = await STORES[store_name](dsn, prefix)
    stop = asyncio.Event()
    trigger.arm(setup.skip, stop.set)
    running = asyncio.ensure_future(setup.operation())
    await stop.wait()
    report(outcome="shutdown" if not running.done() else "ok")
    # Returns with the operation under way: the runner cancels it and everything it started.


async def after_shutdown(store_name: str, dsn: str, prefix: str) -> None:
    setup = await STORES[store_name](dsn, prefix)
    try:
        await setup.operation()
        report(after="ok")
    finally:
        await setup.store.close()


def run(loop_name: str, main: Coroutine[Any, Any, None]) -> None:
    if loop_name == "uvloop":
        import uvloop

        uvloop.run(main)
    else:
        asyncio.run(main)


if __name__ == "__main__":
    loop_name, store_name, dsn, prefix = sys.argv[1:5]
    fault = sys.argv[5] if len(sys.argv) > 5 else "stall"
    if fault == "shutdown":
        for _ in range(TRIES):
            run(loop_name, ended(store_name, dsn, prefix))
        run(loop_name, after_shutdown(store_name, dsn, prefix))
    else:
        run(loop_name, {"stall": stalled, "cancel": cancelled}[fault](store_name, dsn, prefix))
