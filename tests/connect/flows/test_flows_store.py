"""FlowStore: the same tests on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flows_support import ALICE, BOB, NOW, FakeClock, StoreSpec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers import file_modes
from tests.store_support import until_server_hung_up

from mcp_elicit.connect.flows import (
    FLOW_NOT_FOUND_MESSAGE,
    MAX_FLOW_TTL,
    MAX_SESSION_LIFETIME,
    FlowNotFound,
    FlowStateConflict,
    FlowStore,
    FlowStoreUnavailable,
    PendingFlow,
    PostgresFlowStore,
    SQLiteFlowStore,
    TooManyPendingFlows,
    is_flow_id,
    new_flow_id,
)
from mcp_elicit.connect.identity import Principal

WORKER = Path(__file__).resolve().parent / "flows_race_worker.py"


async def not_found(awaitable: object) -> str:
    with pytest.raises(FlowNotFound) as info:
        await awaitable  # type: ignore[misc]
    assert str(info.value) == FLOW_NOT_FOUND_MESSAGE
    return info.value.reason


# ------------------------------------------------------------------------------ ids and records


def test_ids_are_256_bit_url_safe_and_distinct() -> None:
    ids = {new_flow_id() for _ in range(5000)}
    assert len(ids) == 5000
    for flow_id in list(ids)[:200]:
        assert is_flow_id(flow_id)
        assert len(base64.urlsafe_b64decode(flow_id + "=")) == 32  # 256 bits
        assert set(flow_id) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


async def test_create_and_get(stores: StoreSpec, clock: FakeClock) -> None:
    store = stores.make(clock=clock)
    assert isinstance(store, FlowStore)
    flow = await store.create(ALICE, "connect", "github", ["repo", "read:user"])
    assert flow.owner == ALICE
    assert (flow.kind, flow.provider, flow.scopes, flow.status) == (
        "connect",
        "github",
        ("repo", "read:user"),
        "pending",
    )
    assert flow.created == NOW
    assert flow.expires == NOW + MAX_FLOW_TTL
    assert flow.id not in repr(flow)  # repr shows a fingerprint, not the handle
    assert await store.get(flow.id) == flow
    secret = await store.create(Principal("https://auth.example.test", "alice"), "secret", "openai", ttl=120)
    assert secret.owner == ALICE
    assert secret.expires == NOW + 120
    assert secret.scopes == ()
    assert await store.get(secret.id) == secret
    ids = set()
    for n in range(30):  # many owners, no cap involved
        ids.add((await store.create(f"https://auth.example.test|user{n}", "connect", "github")).id)
    assert len(ids) == 30


async def test_the_raw_id_is_not_stored(stores: StoreSpec, clock: FakeClock) -> None:
    store = stores.make(clock=clock)
    flow = await store.create(ALICE, "connect", "github")
    if stores.kind == "sqlite":
        await store.close()
        raw = b"".join(p.read_bytes() for p in Path(stores.location).parent.glob("flows.db*"))
    else:
        import psycopg
        from psycopg import sql

        with psycopg.connect(stores.location) as conn:
            rows = conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(stores.table))).fetchall()
        raw = repr(rows).encode()
    assert flow.id.encode() not in raw
    assert ALICE.encode() in raw  # (the check above is not vacuous)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"kind": "oauth"}, "kind"),
        ({"provider": "https://evil.example/authorize"}, "provider"),
        ({"provider": ""}, "provider"),
        ({"scopes": ["a b"]}, "scope"),
        ({"scopes": "repo"}, "scopes"),
        ({"ttl": MAX_FLOW_TTL + 1}, "ttl"),
        ({"ttl": 0}, "ttl"),
        ({"owner": ""}, "owner"),
        ({"owner": "a\nb"}, "owner"),
    ],
)
async def test_create_validates(stores: StoreSpec, kwargs: dict[str, object], match: str) -> None:
    store = stores.make()
    args: dict[str, object] = {"owner": ALICE, "kind": "connect", "provider": "github", "scopes": ["repo"]}
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        await store.create(**args)  # type: ignore[arg-type]


def test_store_options_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="ttl"):
        SQLiteFlowStore(tmp_path / "x.db", ttl=601)
    with pytest.raises(ValueError, match="max_pending_per_user"):
        SQLiteFlowStore(tmp_path / "x.db", max_pending_per_user=0)
    with pytest.raises(ValueError, match="table"):
        PostgresFlowStore("host=127.0.0.1", table="x; DROP TABLE y")


# ------------------------------------------------------------------------------ the cap


async def test_cap_per_user(stores: StoreSpec, clock: FakeClock) -> None:
    store = stores.make(clock=clock)
    first = [await store.create(ALICE, "connect", "github") for _ in range(3)]
    with pytest.raises(TooManyPendingFlows) as info:
        await store.create(ALICE, "secret", "openai")
    assert info.value.limit == 3
    await store.create(BOB, "connect", "github")  # others are not affected
    # A finished flow no longer counts.
    await store.begin(first[0].id, ALICE)
    await store.complete(first[0].id)
    fourth = await store.create(ALICE, "connect", "github")
    with pytest.raises(TooManyPendingFlows):
        await store.create(ALICE, "connect", "github")
    # Expired ones do not count either, and are marked expired.
    clock.advance(MAX_FLOW_TTL)
    again = [await store.create(ALICE, "connect", "gitlab") for _ in range(3)]
    assert (await store.get(first[1].id)).status == "expired"
    assert (await store.get(fourth.id)).status == "expired"
    assert len({f.id for f in again}) == 3


async def test_cap_is_configurable_and_holds_under_concurrency(stores: StoreSpec, clock: FakeClock) -> None:
    one, two = (
        stores.make(clock=clock, max_pending_per_user=2),
        stores.make(clock=clock, max_pending_per_user=2),
    )
    results = await asyncio.gather(
        *(s.create(ALICE, "connect", "github") for s in [one, two] * 6), return_exceptions=True
    )
    created = [r for r in results if isinstance(r, PendingFlow)]
    refused = [r for r in results if isinstance(r, TooManyPendingFlows)]
    assert len(created) == 2
    assert len(refused) == 10


async def test_two_stores_opening_one_new_file_at_once_never_fail(tmp_path: Path) -> None:
    """Switching a new file to WAL can fail at once with "database is locked" while the other
    store writes (SQLite's busy handler does not cover it); the store retries within its busy
    timeout instead of reporting the store unavailable."""
    from mcp_elicit.connect.flows.sqlite_store import SQLiteFlowStore

    for attempt in range(100):
        path = tmp_path / f"flows-{attempt}.db"
        stores = [SQLiteFlowStore(path, max_pending_per_user=2) for _ in range(2)]
        results = await asyncio.gather(
            *(store.create(ALICE, "connect", "github") for store in stores * 6), return_exceptions=True
        )
        for store in stores:
            await store.close()
        unexpected = [r for r in results if not isinstance(r, PendingFlow | TooManyPendingFlows)]
        assert unexpected == []


async def test_the_sqlite_file_is_readable_by_this_user_only(tmp_path: Path) -> None:
    from mcp_elicit.connect.flows.sqlite_store import SQLiteFlowStore

    store = SQLiteFlowStore(tmp_path / "flows.db")
    try:
        await store.create(ALICE, "connect", "github")
        modes = file_modes(tmp_path)
    finally:
        await store.close()
    assert modes["flows.db"] == 0o600
    assert all(mode == 0o600 for mode in modes.values()), modes


async def test_a_database_that_refuses_wal_mode_is_reported() -> None:
    """Like the other SQLite stores, the flow store keeps its file in WAL mode (a writer never
    waits for readers); SQLite's temporary database (path "") cannot be, and that is said."""
    store = SQLiteFlowStore("")
    with pytest.raises(FlowStoreUnavailable, match="refused WAL mode"):
        await store.create(ALICE, "connect", "github")
    await store.close()


# ------------------------------------------------------------------------------ expiry


async def test_expiry(stores: StoreSpec, clock: FakeClock) -> None:
    store = stores.make(clock=clock, ttl=300, retention=3600)
    flow = await store.create(ALICE, "connect", "github")
    started = await store.create(ALICE, "connect", "gitlab")
    await store.begin(started.id, ALICE)
    clock.advance(299.9)
    assert (await store.lookup(flow.id, ALICE)).status == "pending"
    clock.advance(0.1)  # exactly at expiry: expired
    assert (await store.get(flow.id)).status == "expired"  # read as expired before expire_old runs
    assert await not_found(store.lookup(flow.id, ALICE)) == "expired"
    assert await not_found(store.begin(flow.id, ALICE)) == "expired"
    assert await not_found(store.complete(started.id)) == "expired"
    assert await not_found(store.fail(started.id, "late")) == "expired"
    assert await store.expire_old() == 2
    assert await store.expire_old() == 0
    assert (await store.get(started.id)).status == "expired"
    clock.advance(3601)  # past the retention: purged
    await store.expire_old()
    assert await not_found(store.get(flow.id)) == "unknown"


# ------------------------------------------------------------------------------ begin / complete / fail


async def test_begin_complete(stores: StoreSpec, clock: FakeClock) -> None:
    store = stores.make(clock=clock)
    flow = await store.create(ALICE, "connect", "github")
    with pytest.raises(FlowStateConflict) as conflict:
        await store.complete(flow.id)  # not begun
    assert conflict.value.status == "pending"
    begun = await store.begin(flow.id, ALICE)
    assert begun.status == "in_progress"
    with pytest.raises(FlowStateConflict) as conflict:
        await store.begin(flow.id, ALICE)
    assert conflict.value.status == "in_progress"
    assert await not_found(store.complete(flow.id, owner=BOB)) == "other-owner"
    done = await store.complete(flow.id, owner=ALICE)
    assert done.status == "completed"
    with pytest.raises(FlowStateConflict):
        await store.complete(flow.id)
    with pytest.raises(FlowStateConflict):
        await store.fail(flow.id, "too late")
    assert (await store.get(flow.id)).status == "completed"


async def test_begin_by_another_owner_is_not_found_and_changes_nothing(
    stores: StoreSpec, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    store = stores.make(clock=clock)
    flow = await store.create(ALICE, "connect", "github")
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.connect.flows"):
        assert await not_found(store.begin(flow.id, BOB)) == "other-owner"
        assert await not_found(store.lookup(flow.id, BOB)) == "other-owner"
    assert (await store.get(flow.id)).status == "pending"
    alarms = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(alarms) == 2
    assert all(ALICE in m and BOB in m and flow.id not in m for m in alarms)
    assert (await store.begin(flow.id, ALICE)).status == "in_progress"  # the owner still can


async def test_unknown_expired_and_foreign_ids_look_the_same(stores: StoreSpec, clock: FakeClock) -> None:
    store = stores.make(clock=clock, ttl=60)
    foreign = await store.create(BOB, "connect", "github")
    expired = await store.create(ALICE, "connect", "github")
    clock.advance(61)
    errors = []
    for flow_id in (new_flow_id(), expired.id, foreign.id, "../../etc/passwd"):
        for attempt in (store.lookup(flow_id, ALICE), store.begin(flow_id, ALICE)):
            with pytest.raises(FlowNotFound) as info:
                await attempt
            errors.append(info.value)
    assert {type(e) for e in errors} == {FlowNotFound}
    assert {str(e) for e in errors} == {FLOW_NOT_FOUND_MESSAGE}
    assert {e.reason for e in errors} == {"unknown", "expired", "other-owner", "malformed-id"}


async def test_fail_and_decline(stores: StoreSpec, clock: FakeClock) -> None:
    store = stores.make(clock=clock)
    a = await store.create(ALICE, "connect", "github")
    b = await store.create(ALICE, "connect", "gitlab")
    failed = await store.fail(a.id, "the provider refused the request")
    assert (failed.status, failed.detail) == ("failed", "the provider refused the request")
    await store.begin(b.id, ALICE)
    declined = await store.fail(b.id, declined=True, owner=ALICE)
    assert (declined.status, declined.detail) == ("declined", None)
    assert (await store.get(b.id)).status == "declined"
    c = await store.create(ALICE, "secret", "openai")
    with pytest.raises(ValueError, match="detail"):
        await store.fail(c.id, "line one\nline two")
    with pytest.raises(ValueError, match="detail"):
        await store.fail(c.id, "x" * 201)
    assert await not_found(store.fail(c.id, "x", owner=BOB)) == "other-owner"
    assert (await store.get(c.id)).status == "pending"


async def test_claim_takes_an_in_progress_flow_once(stores: StoreSpec, clock: FakeClock) -> None:
    """The OAuth callback's claim: in_progress -> redeeming, then completed or failed; it still
    counts as open, and it expires like an open flow."""
    store = stores.make(clock=clock, ttl=300, max_pending_per_user=2)
    flow = await store.create(ALICE, "connect", "github")
    with pytest.raises(FlowStateConflict) as conflict:
        await store.claim(flow.id, ALICE, 0)  # not begun yet
    assert conflict.value.status == "pending"
    assert (await store.begin(flow.id, ALICE)).attempt == 1
    assert await not_found(store.claim(flow.id, BOB, 1)) == "other-owner"
    assert (await store.claim(flow.id, ALICE, 1)).status == "redeeming"
    with pytest.raises(FlowStateConflict) as conflict:
        await store.claim(flow.id, ALICE, 1)
    assert conflict.value.status == "redeeming"
    await store.create(ALICE, "connect", "gitlab")
    with pytest.raises(TooManyPendingFlows):  # the redeeming flow is one of the two open ones
        await store.create(ALICE, "connect", "other")
    assert (await store.complete(flow.id, owner=ALICE)).status == "completed"

    failing = await store.create(BOB, "connect", "github")
    await store.begin(failing.id, BOB)
    await store.claim(failing.id, BOB, 1)
    assert (await store.fail(failing.id, "the code was refused", owner=BOB)).status == "failed"

    stuck = await store.create(BOB, "connect", "gitlab")
    await store.begin(stuck.id, BOB)
    await store.claim(stuck.id, BOB, 1)
    clock.advance(300)
    assert (await store.get(stuck.id)).status == "expired"
    assert await not_found(store.complete(stuck.id)) == "expired"


async def test_concurrent_claims_have_one_winner(stores: StoreSpec, clock: FakeClock) -> None:
    creator = stores.make(clock=clock)
    racers = [stores.make(clock=clock) for _ in range(4)]
    flow = await creator.create(ALICE, "connect", "github")
    await creator.begin(flow.id, ALICE)
    results = await asyncio.gather(*(r.claim(flow.id, ALICE, 1) for r in racers), return_exceptions=True)
    assert [type(r) for r in results].count(PendingFlow) == 1, results
    assert [type(r) for r in results].count(FlowStateConflict) == 3, results


# ------------------------------------------------------------------------------ attempts (restart)


async def test_restart_makes_a_new_attempt_and_only_the_latest_can_be_claimed(
    stores: StoreSpec, clock: FakeClock
) -> None:
    """Continue pressed again on a connection left at the provider: a new attempt; the callback
    of the earlier one (a late tab) is refused and leaves the flow as it is, for the newer one."""
    store = stores.make(clock=clock)
    flow = await store.create(ALICE, "connect", "github")
    assert flow.attempt == 0
    with pytest.raises(FlowStateConflict) as conflict:
        await store.restart(flow.id, ALICE)  # never begun: Continue begins it, restart is not for it
    assert conflict.value.status == "pending"
    assert (await store.begin(flow.id, ALICE)).attempt == 1
    restarted = await store.restart(flow.id, ALICE)
    assert (restarted.status, restarted.attempt) == ("in_progress", 2)
    with pytest.raises(FlowStateConflict) as conflict:
        await store.claim(flow.id, ALICE, 1)  # the abandoned attempt's late callback
    assert conflict.value.status == "in_progress"
    assert (await store.get(flow.id)).attempt == 2  # nothing changed
    assert (await store.claim(flow.id, ALICE, 2)).status == "redeeming"
    with pytest.raises(FlowStateConflict) as conflict:
        await store.restart(flow.id, ALICE)  # a callback is running: never a second attempt now
    assert conflict.value.status == "redeeming"
    await store.complete(flow.id, owner=ALICE)
    with pytest.raises(FlowStateConflict):
        await store.restart(flow.id, ALICE)
    with pytest.raises(TypeError):
        await store.claim(flow.id, ALICE, True)  # type: ignore[arg-type]


async def test_restart_is_for_the_owner_of_an_unexpired_connection_only(
    stores: StoreSpec, clock: FakeClock
) -> None:
    store = stores.make(clock=clock, ttl=300)
    flow = await store.create(ALICE, "connect", "github")
    await store.begin(flow.id, ALICE)
    assert await not_found(store.restart(flow.id, BOB)) == "other-owner"
    # A secret is in progress only while it is being saved: a second attempt would save it twice.
    secret = await store.create(ALICE, "secret", "openai_api_key")
    await store.begin(secret.id, ALICE)
    with pytest.raises(FlowStateConflict) as conflict:
        await store.restart(secret.id, ALICE)
    assert conflict.value.status == "in_progress"
    clock.advance(300)
    assert await not_found(store.restart(flow.id, ALICE)) == "expired"
    for f in (flow, secret):
        assert (await store.get(f.id)).attempt == 1


async def test_a_restart_racing_the_callback_lets_exactly_one_attempt_through(
    stores: StoreSpec, clock: FakeClock
) -> None:
    """Continue again in one tab while the first attempt's callback arrives in another: either the
    callback claims attempt 1 and the restart is refused, or the restart wins and the callback is
    refused; never both, so the flow is never completed twice."""
    creator = stores.make(clock=clock)
    tab, callback = stores.make(clock=clock), stores.make(clock=clock)
    for _ in range(5):
        flow = await creator.create(ALICE, "connect", "github")
        await creator.begin(flow.id, ALICE)
        restarted, claimed = await asyncio.gather(
            tab.restart(flow.id, ALICE), callback.claim(flow.id, ALICE, 1), return_exceptions=True
        )
        outcomes = (type(restarted), type(claimed))
        assert outcomes in ((PendingFlow, FlowStateConflict), (FlowStateConflict, PendingFlow)), outcomes
        final = await creator.get(flow.id)
        expected = ("in_progress", 2) if isinstance(restarted, PendingFlow) else ("redeeming", 1)
        assert (final.status, final.attempt) == expected
        await creator.fail(flow.id)  # keeps the owner under the cap of open flows


# ------------------------------------------------------------------------------ races


async def test_two_concurrent_begins_have_one_winner(stores: StoreSpec, clock: FakeClock) -> None:
    creator = stores.make(clock=clock)
    racers = [stores.make(clock=clock) for _ in range(4)]
    for _ in range(3):
        flow = await creator.create(ALICE, "connect", "github")
        results = await asyncio.gather(*(r.begin(flow.id, ALICE) for r in racers), return_exceptions=True)
        winners = [r for r in results if isinstance(r, PendingFlow)]
        losers = [r for r in results if isinstance(r, FlowStateConflict)]
        assert len(winners) == 1, results
        assert len(losers) == 3, results
        assert winners[0].status == "in_progress"
        await creator.complete(flow.id)


async def test_two_processes_begin_one_wins(stores: StoreSpec, clock: FakeClock, tmp_path: Path) -> None:
    store = stores.make()  # real clock: the workers use the real clock
    flow = await store.create(ALICE, "connect", "github")
    sync = tmp_path / "sync"
    sync.mkdir()
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(WORKER),
            stores.kind,
            stores.location,
            stores.table or "-",
            str(sync),
            name,
            ALICE,
            flow.id,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for name in ("one", "two")
    ]
    try:
        deadline = time.monotonic() + 30
        while not all((sync / f"ready-{n}").exists() for n in ("one", "two")):
            assert time.monotonic() < deadline, "workers did not get ready"
            assert all(p.returncode is None for p in procs)
            await asyncio.sleep(0.02)
        (sync / "go").touch()
        reports = []
        for proc in procs:
            out, err = await asyncio.wait_for(proc.communicate(), timeout=30)
            assert proc.returncode == 0, err.decode()
            reports.append(json.loads(out))
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert sorted(r["won"] for r in reports) == [False, True]
    assert [r["error"] for r in reports if not r["won"]] == ["FlowStateConflict"]
    assert (await store.get(flow.id)).status == "in_progress"


# ------------------------------------------------------------------------------ robustness


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(
    value=st.one_of(
        st.text(),
        st.from_regex(r"\A[A-Za-z0-9_-]{43}\Z"),
        st.text(alphabet=st.characters(codec="utf-8"), min_size=40, max_size=46),
        st.binary().map(lambda b: b.decode("latin-1")),
        st.none(),
        st.integers(),
    )
)
def test_get_with_arbitrary_input_only_raises_flow_not_found(
    store_spec: StoreSpec, hypothesis_stores: None, value: object
) -> None:
    loop = _loops.setdefault(id(store_spec), asyncio.new_event_loop())
    store = _stores.get(id(store_spec))
    if store is None:
        store = _stores[id(store_spec)] = store_spec.make()
        loop.run_until_complete(store.create(ALICE, "connect", "github"))
    with pytest.raises(FlowNotFound):
        loop.run_until_complete(store.get(value))  # type: ignore[arg-type]


_loops: dict[int, asyncio.AbstractEventLoop] = {}
_stores: dict[int, FlowStore] = {}


@pytest.fixture
def hypothesis_stores() -> Iterator[None]:
    """Closes the store (and loop) the hypothesis test made, before its table is dropped."""
    yield
    for key, store in list(_stores.items()):
        loop = _loops.pop(key)
        loop.run_until_complete(store.close())
        loop.close()
        del _stores[key]


async def test_unreachable_database_is_a_typed_error(clock: FakeClock) -> None:
    store = PostgresFlowStore(
        "host=127.0.0.1 port=1 dbname=test user=postgres", table=StoreSpec.new_table(), timeout=2, clock=clock
    )
    started = time.monotonic()
    with pytest.raises(FlowStoreUnavailable) as info:
        await store.create(ALICE, "connect", "github")
    assert time.monotonic() - started < 4
    assert "port=1" not in str(info.value)
    await store.close()


async def test_closed_store(stores: StoreSpec) -> None:
    store = stores.make()
    flow = await store.create(ALICE, "connect", "github")
    await store.close()
    with pytest.raises(FlowStoreUnavailable):
        await store.get(flow.id)


async def test_postgres_reconnects_after_the_backend_is_terminated(
    stores: StoreSpec, clock: FakeClock
) -> None:
    if stores.kind != "postgres":
        pytest.skip("PostgreSQL only")
    import psycopg

    store = stores.make(clock=clock)
    flow = await store.create(ALICE, "connect", "github")
    await store.get(flow.id)  # the connection's last query now names this test's table
    with psycopg.connect(stores.location, autocommit=True) as admin:
        killed = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE %s",
            (f"%{stores.table}%",),
        ).fetchall()
    assert killed == [(True,)]
    await until_server_hung_up(store._db._pg)  # type: ignore[attr-defined]
    assert (await store.get(flow.id)).status == "pending"  # the dead connection was replaced


# ------------------------------------------------------------------------------ sign-outs


async def test_a_signed_out_session_stays_void_until_its_end(stores: StoreSpec, clock: FakeClock) -> None:
    store = stores.make(clock=clock)
    assert not await store.session_revoked("sid-1", ALICE, NOW - 5)
    await store.revoke_session("sid-1", NOW + 3600)
    assert await store.session_revoked("sid-1", ALICE, NOW - 5)
    assert await store.session_revoked("sid-1", BOB, NOW + 5)  # the id alone decides
    assert not await store.session_revoked("sid-2", ALICE, NOW - 5)
    other_instance = stores.make(clock=clock)  # the same file or table: another process's view
    assert await other_instance.session_revoked("sid-1", ALICE, NOW - 5)
    await store.revoke_session("sid-1", NOW + 60)  # signing out again never shortens it
    clock.advance(3600)
    assert await store.session_revoked("sid-1", ALICE, NOW - 5)
    clock.advance(1)
    assert not await store.session_revoked("sid-1", ALICE, NOW - 5)  # its cookie has expired anyway


async def test_signing_out_everywhere_voids_the_sessions_created_until_then(
    stores: StoreSpec, clock: FakeClock
) -> None:
    store = stores.make(clock=clock)
    await store.revoke_sessions_of(Principal("https://auth.example.test", "alice"))
    assert await store.session_revoked("a1", ALICE, NOW)  # created at the cut-off: void
    assert await store.session_revoked("a2", ALICE, NOW - 100)
    assert not await store.session_revoked("a3", ALICE, NOW + 0.5)  # signed in afterwards
    assert not await store.session_revoked("b1", BOB, NOW - 100)
    clock.advance(60)
    await store.revoke_sessions_of(ALICE)  # a later sign-out moves the cut-off forward
    assert await store.session_revoked("a3", ALICE, NOW + 0.5)
    clock.advance(MAX_SESSION_LIFETIME + 1)  # every session it could void has expired: it is over
    assert not await store.session_revoked("a2", ALICE, NOW - 100)


async def test_ended_sign_outs_are_purged(stores: StoreSpec, clock: FakeClock) -> None:
    store = stores.make(clock=clock)
    await store.revoke_session("short", NOW + 10)
    await store.revoke_session("long", NOW + 1000)
    await store.revoke_sessions_of(BOB)
    assert revoked_rows(stores) == 3
    clock.advance(11)
    await store.expire_old()
    assert revoked_rows(stores) == 2
    clock.advance(1000)
    await store.revoke_session("new", NOW + 5000)  # signing out purges what has ended, too
    assert revoked_rows(stores) == 2  # "new" and Bob's sign-out everywhere


def revoked_rows(stores: StoreSpec) -> int:
    if stores.kind == "sqlite":
        import sqlite3

        with contextlib.closing(sqlite3.connect(stores.location)) as conn:
            (count,) = conn.execute("SELECT COUNT(*) FROM mcp_elicit_flows_revoked").fetchone()
        return int(count)
    import psycopg
    from psycopg import sql

    with psycopg.connect(stores.location, autocommit=True) as conn:
        row = conn.execute(
            sql.SQL("SELECT COUNT(*) FROM {}").format(sql.Identifier(stores.table + "_revoked"))
        ).fetchone()
    assert row is not None
    return int(row[0])


async def test_sign_out_input_is_checked(stores: StoreSpec, clock: FakeClock) -> None:
    store = stores.make(clock=clock)
    for bad_id in ("", "x" * 129, 5, None):
        with pytest.raises(ValueError, match="session id must be a non-empty str"):
            await store.revoke_session(bad_id, NOW + 1)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="session id must be a non-empty str"):
            await store.session_revoked(bad_id, ALICE, NOW)  # type: ignore[arg-type]
    for bad_time in (float("nan"), float("inf"), "soon", True):
        with pytest.raises(ValueError, match="until must be a finite time"):
            await store.revoke_session("sid", bad_time)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="created must be a finite time"):
            await store.session_revoked("sid", ALICE, bad_time)  # type: ignore[arg-type]
    with pytest.raises((ValueError, TypeError)):
        await store.revoke_sessions_of("")
    assert not await store.session_revoked("sid", ALICE, NOW)
    assert revoked_rows(stores) == 0  # nothing was written by the refused calls


async def test_sign_outs_fail_closed_when_the_store_is_gone(stores: StoreSpec, clock: FakeClock) -> None:
    store = stores.make(clock=clock)
    await store.close()
    with pytest.raises(FlowStoreUnavailable):
        await store.session_revoked("sid", ALICE, NOW)
    with pytest.raises(FlowStoreUnavailable):
        await store.revoke_session("sid", NOW + 1)
