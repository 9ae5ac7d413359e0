"""Single-use stores: SQLite and PostgreSQL run the same tests."""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from pathlib import Path

import pytest
from state_support import AUDIENCE, FakeClock, StoreSpec

from mcp_elicit.state import (
    KeyRing,
    RequestBinding,
    SingleUseStore,
    StateRejected,
    StateSealer,
    StateStoreUnavailable,
)

WORKER = Path(__file__).with_name("state_race_worker.py")
FAR = time.time() + 3600


async def test_first_consume_wins(store: SingleUseStore) -> None:
    assert isinstance(store, SingleUseStore)
    assert await store.consume("token-a", FAR) is True
    assert await store.consume("token-a", FAR) is False
    assert await store.consume("token-a", FAR + 10) is False
    assert await store.consume("token-b", FAR) is True


async def test_fifty_concurrent_consumes_of_one_id(store: SingleUseStore) -> None:
    results = await asyncio.gather(*(store.consume("contended", FAR) for _ in range(50)))
    assert results.count(True) == 1
    assert results.count(False) == 49


async def test_many_ids_each_consumed_concurrently(store: SingleUseStore) -> None:
    ids = [f"id-{n}" for n in range(100)] * 5
    random.Random(7).shuffle(ids)
    results = await asyncio.gather(*(store.consume(i, FAR) for i in ids))
    winners = [i for i, won in zip(ids, results, strict=True) if won]
    assert sorted(winners) == sorted(set(ids))


async def test_two_store_objects_share_the_records(stores: StoreSpec) -> None:
    first, second = stores.make(), stores.make()
    results = await asyncio.gather(*(s.consume("shared", FAR) for s in [first, second] * 10))
    assert results.count(True) == 1
    assert await first.consume("x", FAR) is True
    assert await second.consume("x", FAR) is False


async def test_two_processes_race_on_the_same_store(stores: StoreSpec, tmp_path: Path) -> None:
    ids = [f"race-{n}" for n in range(400)]
    sync = tmp_path / "sync"
    sync.mkdir()
    procs = []
    # Opposite orders: each process wins from its own end until they meet, and every id in
    # the middle is contended by both at about the same moment.
    for name, order in (("a", ids), ("b", ids[::-1])):
        procs.append(
            await asyncio.create_subprocess_exec(
                sys.executable,
                str(WORKER),
                stores.kind,
                stores.location,
                stores.table or "-",
                str(sync),
                name,
                *order,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        )
    communicate = asyncio.gather(*(p.communicate() for p in procs))
    try:
        deadline = time.monotonic() + 60
        while not all((sync / f"ready-{name}").exists() for name in ("a", "b")):
            assert time.monotonic() < deadline, "worker processes did not get ready"
            if communicate.done():  # a worker exited before the start signal
                outputs = communicate.result()
                pytest.fail(f"a worker process died early: {[e.decode() for _, e in outputs]}")
            await asyncio.sleep(0.01)
        (sync / "go").touch()
        outputs = await asyncio.wait_for(communicate, 60)
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
        await asyncio.gather(communicate, return_exceptions=True)
    reports = []
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err.decode()
        reports.append(json.loads(out))
    a, b = reports
    # The two processes were consuming at the same time ...
    assert a["start"] < b["end"]
    assert b["start"] < a["end"]
    # ... and every id has exactly one winner.
    assert set(a["won"]).isdisjoint(b["won"])
    assert set(a["won"]) | set(b["won"]) == set(ids)
    assert len(a["won"]) + len(b["won"]) == len(ids)
    assert await stores.make().consume(ids[0], FAR) is False


async def test_purge_removes_only_expired_records(store: SingleUseStore) -> None:
    assert await store.consume("old-1", 100.0)
    assert await store.consume("old-2", 200.0)
    assert await store.consume("fresh", 300.0)
    assert await store.purge_expired(250.0) == 2
    assert await store.purge_expired(250.0) == 0
    assert await store.consume("fresh", 300.0) is False  # still remembered
    assert await store.consume("old-1", 100.0) is True  # forgotten after its expiry
    assert await store.purge_expired(300.0) == 1  # strictly before now: 100 < 300, 300 is kept
    assert await store.consume("fresh", 300.0) is False


async def test_automatic_purge_every_n_consumes(stores: StoreSpec) -> None:
    clock = FakeClock(1_000.0)
    store = stores.make(purge_every=3, clock=clock)
    assert await store.consume("expired-a", 10.0)
    assert await store.consume("expired-b", 10.0)
    assert await store.consume("alive", 5_000.0)  # third consume: purge runs
    assert await store.consume("expired-a", 10.0) is True
    assert await store.consume("alive", 5_000.0) is False


async def test_arguments_are_checked(store: SingleUseStore) -> None:
    with pytest.raises(TypeError):
        await store.consume("", FAR)
    with pytest.raises(TypeError):
        await store.consume(123, FAR)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        await store.consume("x", float("nan"))


async def test_closed_store_raises_unavailable(stores: StoreSpec) -> None:
    store = stores.make()
    assert await store.consume("before-close", FAR)
    await store.close()
    with pytest.raises(StateStoreUnavailable, match="closed"):
        await store.consume("after-close", FAR)
    with pytest.raises(StateStoreUnavailable, match="closed"):
        await store.purge_expired(0.0)
    await store.close()  # idempotent


async def test_async_context_manager(stores: StoreSpec) -> None:
    async with stores.make() as store:  # type: ignore[attr-defined]
        assert await store.consume("cm", FAR)
    with pytest.raises(StateStoreUnavailable):
        await store.consume("cm-2", FAR)


# ------------------------------------------------------------------------------ with the sealer


async def test_open_refuses_a_replay(store: SingleUseStore) -> None:
    clock = FakeClock(time.time())
    sealer = StateSealer(
        KeyRing.from_secrets([KeyRing.generate_secret()]),
        audience=AUDIENCE,
        clock=clock,
        single_use=store,
    )
    binding = RequestBinding("tools/call", "pay", "d" * 64, "iss|alice")
    token = sealer.seal({"amount": 10}, binding)
    opened = await sealer.open(token, binding)
    assert opened.payload == {"amount": 10}
    with pytest.raises(StateRejected) as info:
        await sealer.open(token, binding)
    assert info.value.reason == "replayed"
    assert str(info.value) == "Invalid or expired requestState"
    # unseal stays a pure check; a new token for the same payload is a new token.
    assert sealer.unseal(token, binding).token_id == opened.token_id
    assert (await sealer.open(sealer.seal({"amount": 10}, binding), binding)).payload == {"amount": 10}


async def test_open_checks_before_consuming(store: SingleUseStore) -> None:
    sealer = StateSealer(
        KeyRing.from_secrets([KeyRing.generate_secret()]), audience=AUDIENCE, single_use=store
    )
    binding = RequestBinding("tools/call", "pay", "d" * 64, "iss|alice")
    token = sealer.seal({}, binding)
    mallory = RequestBinding("tools/call", "pay", "d" * 64, "iss|mallory")
    with pytest.raises(StateRejected) as info:
        await sealer.open(token, mallory)
    assert info.value.reason == "principal"
    # The refused attempt did not burn the token for its owner.
    assert (await sealer.open(token, binding)).payload == {}


async def test_concurrent_opens_of_one_token(store: SingleUseStore) -> None:
    sealer = StateSealer(
        KeyRing.from_secrets([KeyRing.generate_secret()]), audience=AUDIENCE, single_use=store
    )
    binding = RequestBinding("tools/call", "pay", "d" * 64, None)
    token = sealer.seal({}, binding)
    results = await asyncio.gather(*(sealer.open(token, binding) for _ in range(20)), return_exceptions=True)
    assert sum(1 for r in results if not isinstance(r, BaseException)) == 1
    refused = [r for r in results if isinstance(r, BaseException)]
    assert len(refused) == 19
    assert all(isinstance(r, StateRejected) and r.reason == "replayed" for r in refused)


async def test_open_keeps_the_record_past_expiry_by_the_clock_skew(store: SingleUseStore) -> None:
    now = time.time()
    sealer = StateSealer(
        KeyRing.from_secrets([KeyRing.generate_secret()]),
        audience=AUDIENCE,
        ttl=100,
        clock=lambda: now,
        single_use=store,
    )
    binding = RequestBinding("tools/call", "pay", "d" * 64, None)
    await sealer.open(sealer.seal({}, binding), binding)
    assert await store.purge_expired(now + 100 + 59) == 0
    assert await store.purge_expired(now + 100 + 61) == 1


@pytest.mark.parametrize("method", ["open", "claim"])
async def test_the_record_outlives_every_instances_ttl(store: SingleUseStore, method: str) -> None:
    """A rollout that raises state_ttl (600 -> 1200): a token sealed by an upgraded instance and
    used on one not upgraded yet is remembered as long as the upgraded one accepts it."""
    clock = FakeClock(1_800_000_000.0)
    ring = KeyRing.from_secrets([KeyRing.generate_secret()])
    upgraded = StateSealer(ring, audience=AUDIENCE, ttl=1200, clock=clock, single_use=store)
    not_yet = StateSealer(ring, audience=AUDIENCE, ttl=600, clock=clock, single_use=store)
    binding = RequestBinding("tools/call", "pay", "d" * 64, None)
    token = upgraded.seal({}, binding)
    clock.now += 10
    if method == "open":
        await not_yet.open(token, binding)
    else:
        await not_yet.claim(token, binding, "request-1")
    clock.now += 700  # past the first use's own ttl, within the token's
    assert await store.purge_expired(clock()) == 0
    again = upgraded.open(token, binding) if method == "open" else upgraded.claim(token, binding, "request-2")
    with pytest.raises(StateRejected) as info:
        await again
    assert info.value.reason == "replayed"


async def test_without_a_store_open_does_not_track(sealer: StateSealer) -> None:
    binding = RequestBinding("tools/call", "pay", "d" * 64, None)
    token = sealer.seal({}, binding)
    first = await sealer.open(token, binding)
    second = await sealer.open(token, binding)
    assert first == second
