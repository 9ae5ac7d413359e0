"""Records past their retention are deleted for every owner, not only for the owner creating a
flow (SQLite and PostgreSQL); and a failed flow's detail reads as a sentence."""

from __future__ import annotations

from flows_support import ALICE, BOB, FakeClock, StoreSpec

from mcp_elicit.connect.flows import Failed, FlowNotFound, check_for_retry
from mcp_elicit.connect.flows import store as store_module

SWEEP_INTERVAL = float(getattr(store_module, "SWEEP_INTERVAL", 300.0))


async def not_found_reason(store: object, flow_id: str) -> str | None:
    try:
        await store.get(flow_id)  # type: ignore[attr-defined]
    except FlowNotFound as exc:
        return exc.reason
    return None


async def test_a_user_who_never_comes_back_has_their_records_purged(
    stores: StoreSpec, clock: FakeClock
) -> None:
    store = stores.make(clock=clock, ttl=60, retention=600)
    bobs = await store.create(BOB, "connect", "github", client="Bob's client", description="why")
    await store.create(ALICE, "connect", "github")
    clock.advance(60 + 600 + 1)  # bob's record is past its expiry and the retention
    await store.create(ALICE, "secret", "api-key")  # any creation sweeps the whole store
    assert await not_found_reason(store, bobs.id) == "unknown"


async def test_the_sweep_runs_at_most_every_interval(stores: StoreSpec, clock: FakeClock) -> None:
    store = stores.make(clock=clock, ttl=60, retention=0)
    await store.create(ALICE, "connect", "github")  # sweeps
    bobs = await store.create(BOB, "connect", "github")
    clock.advance(61)
    await store.create(ALICE, "connect", "github")  # within the interval: no sweep
    assert (await store.get(bobs.id)).status == "expired"
    clock.advance(SWEEP_INTERVAL)
    await store.create(ALICE, "connect", "gitlab")
    assert await not_found_reason(store, bobs.id) == "unknown"


async def test_a_failure_detail_without_a_full_stop_still_ends_the_sentence(
    stores: StoreSpec, clock: FakeClock
) -> None:
    store = stores.make(clock=clock)
    flow = await store.create(ALICE, "connect", "github")
    failed = await store.fail(flow.id, "the provider was unreachable", owner=ALICE)
    outcome = check_for_retry(failed, ALICE, clock())
    assert isinstance(outcome, Failed)
    assert outcome.message == (
        "Connecting your github account did not complete: the provider was unreachable. "
        "Run the tool again to retry."
    )
    done = await store.create(ALICE, "connect", "gitlab")
    ended = await store.fail(done.id, "Refused by the provider.", owner=ALICE)
    assert check_for_retry(ended, ALICE, clock()).message.endswith(  # type: ignore[union-attr]
        ": Refused by the provider. Run the tool again to retry."
    )
