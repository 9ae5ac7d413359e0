"""The server when its PostgreSQL goes away and comes back: a cluster of the test's own
(:mod:`tests.reliability.throwaway_pg`), stopped, frozen and started again mid-test.

What must hold: a request whose state cannot be checked fails closed with a retryable JSON-RPC
internal error (never "invalid requestState", which blames the client), within the store's
timeout; the tool's side effect does not run; and once the database is back, the very same store
object serves requests again (no restart, no poisoned connection), without ever accepting a
token twice.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from mcp_elicit import Server
from mcp_elicit.connect.flows import FlowStoreUnavailable, PostgresFlowStore
from mcp_elicit.state import PostgresSingleUseStore
from mcp_elicit.wire.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from mcp_elicit.wire.jsonrpc import Request
from tests.reliability.test_redelivery import Effects, first, make_server, retry, text_of
from tests.reliability.throwaway_pg import ThrowawayPostgres, unavailable_reason

TIMEOUT = 1.5
BOUND = TIMEOUT + 1.0  # the store's timeout plus scheduling slack
OWNER = "https://issuer.example|alice"


@pytest.fixture(scope="module")
def cluster() -> Iterator[ThrowawayPostgres]:
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"no throwaway PostgreSQL cluster: {reason}")
    pg = ThrowawayPostgres()
    try:
        yield pg
    finally:
        pg.destroy()


@pytest.fixture
def pg(cluster: ThrowawayPostgres) -> Iterator[ThrowawayPostgres]:
    """The cluster, running and answering at the start and the end of each test."""
    cluster.thaw()
    if not (cluster.data / "postmaster.pid").exists():
        cluster.start()
    cluster.wait_ready()
    yield cluster
    cluster.thaw()
    if not (cluster.data / "postmaster.pid").exists():
        cluster.start()


def unique(prefix: str) -> str:
    """A table no other test (or parameter) of this module's cluster uses."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


async def unavailable(server: Server, request: Request) -> tuple[McpError, float]:
    started = time.monotonic()
    with pytest.raises(McpError) as info:
        await server.dispatch(request)
    elapsed = time.monotonic() - started
    error = info.value
    assert error.code == INTERNAL_ERROR, error
    assert "state store is unavailable" in error.message
    assert "retry" in error.message
    assert error.data == {"reason": "state_store_unavailable", "retryable": True}
    return error, elapsed


@pytest.mark.parametrize("redelivery", [False, True], ids=["strict", "redelivery"])
async def test_database_down_fails_closed_then_recovers_without_restart(
    pg: ThrowawayPostgres, redelivery: bool
) -> None:
    store = PostgresSingleUseStore(pg.dsn, table=unique("used_down"), timeout=TIMEOUT)
    effects = Effects()
    app = make_server(store, effects, redelivery=redelivery)
    try:
        state: Any = (await app.dispatch(first("a")))["requestState"]
        assert await store.consume("warm-up", time.time() + 600)  # the connection exists
        pg.stop()
        for _ in range(2):  # a second try while down: still the same clear error, as fast
            _, elapsed = await unavailable(app, retry("a", state, "v"))
            assert elapsed < BOUND
        assert effects.calls == 0
        assert effects.rows == {}
        pg.start()
        # Same server, same store object: the retry now goes through, exactly once.
        assert text_of(await app.dispatch(retry("a", state, "v"))) == "a=v"
        assert effects.calls == 1
        if redelivery:  # the same request again gets the same answer, the handler does not run
            assert text_of(await app.dispatch(retry("a", state, "v"))) == "a=v"
            assert effects.calls == 1
        else:
            with pytest.raises(McpError) as info:
                await app.dispatch(retry("a", state, "v"))
            assert info.value.code == INVALID_PARAMS
    finally:
        await store.close()


@pytest.mark.parametrize("redelivery", [False, True], ids=["strict", "redelivery"])
async def test_database_that_stops_answering_times_out_then_recovers(
    pg: ThrowawayPostgres, redelivery: bool
) -> None:
    store = PostgresSingleUseStore(pg.dsn, table=unique("used_frozen"), timeout=TIMEOUT)
    effects = Effects()
    app = make_server(store, effects, redelivery=redelivery)
    try:
        frozen_state: Any = (await app.dispatch(first("f")))["requestState"]
        later_state: Any = (await app.dispatch(first("g")))["requestState"]
        assert await store.consume("warm-up", time.time() + 600)
        pg.freeze()  # connections stay open, nothing answers
        _, elapsed = await unavailable(app, retry("f", frozen_state, "v"))
        assert elapsed < BOUND
        # A new connection attempt while frozen is bounded too.
        _, elapsed = await unavailable(app, retry("g", later_state, "v"))
        assert elapsed < BOUND
        assert effects.calls == 0
        pg.thaw()
        pg.wait_ready()
        # A token whose consume may have landed while nobody listened: refused or (redelivery)
        # run again, but never accepted by two different requests; a fresh flow works.
        fresh: Any = (await app.dispatch(first("h")))["requestState"]
        assert text_of(await app.dispatch(retry("h", fresh, "v"))) == "h=v"
        with pytest.raises(McpError) as info:
            await app.dispatch(retry("h", fresh, "other"))
        assert info.value.code == INVALID_PARAMS
    finally:
        await store.close()


async def test_flow_store_down_fails_closed_then_recovers(pg: ThrowawayPostgres) -> None:
    store = PostgresFlowStore(pg.dsn, table=unique("flows_down"), timeout=TIMEOUT)
    try:
        flow = await store.create(OWNER, "connect", "github", ["repo"])
        pg.stop()
        started = time.monotonic()
        with pytest.raises(FlowStoreUnavailable, match="PostgreSQL flow store"):
            await store.begin(flow.id, OWNER)
        assert time.monotonic() - started < BOUND
        pg.start()
        assert (await store.begin(flow.id, OWNER)).status == "in_progress"
        pg.freeze()
        started = time.monotonic()
        with pytest.raises(FlowStoreUnavailable, match="no answer"):
            await store.complete(flow.id, owner=OWNER)
        assert time.monotonic() - started < BOUND
        pg.thaw()
        pg.wait_ready()
        # The frozen backend may have run the update after all; either way it is done once.
        done = await store.get(flow.id)
        if done.status != "completed":
            done = await store.complete(flow.id, owner=OWNER)
        assert done.status == "completed"
    finally:
        await store.close()


async def test_a_crash_of_a_server_without_synchronous_commit_forgets_no_consumed_state(
    pg: ThrowawayPostgres,
) -> None:
    # A throughput setting some operators use: commits are reported before they reach the disk,
    # and a crash forgets the last ones. Consumed tokens must not come back to life.
    with psycopg.connect(pg.dsn, autocommit=True) as admin:
        admin.execute("ALTER SYSTEM SET synchronous_commit = off")
        admin.execute("SELECT pg_reload_conf()")
    store = PostgresSingleUseStore(pg.dsn, table=unique("used_crash"), timeout=TIMEOUT)
    tokens = [f"token-{n}" for n in range(200)]
    try:
        for token in tokens:
            assert await store.consume(token, time.time() + 600) is True
        pg.stop()  # immediate: a crash
        pg.start()
        accepted_again = [token for token in tokens if await store.consume(token, time.time() + 600)]
        assert accepted_again == []
    finally:
        await store.close()
        with psycopg.connect(pg.dsn, autocommit=True) as admin:
            admin.execute("ALTER SYSTEM RESET synchronous_commit")
            admin.execute("SELECT pg_reload_conf()")
