"""Rate limits of the pages: the token buckets on their own (a fake clock), then the running
pages over real HTTP (uvicorn on 127.0.0.1): 429 with Retry-After past the budget, a refill with
time, one warning per spell, and no limits when turned off."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pages_support import SECURITY_HEADERS, Harness, running_pages
from tests.helpers import FakeClock as SteppingClock
from tests.oidc_provider import OidcProvider

from mcp_elicit.connect.pages import PageRateLimit
from mcp_elicit.connect.rate_limit import DEFAULT_PAGE_RATE_LIMIT, PageRateLimiter

UNKNOWN = f"/connect/{'B' * 43}"  # a well-formed id that no flow has: the 404 of a guess


# ------------------------------------------------------------------------------ the buckets


def limiter(clock: SteppingClock, **limits: float) -> PageRateLimiter:
    return PageRateLimiter(PageRateLimit(**limits), clock)  # type: ignore[arg-type]


def test_a_burst_then_one_request_per_refill_interval() -> None:
    clock = SteppingClock()
    buckets = limiter(clock, requests_per_minute=60, request_burst=3)
    assert [buckets.admit("10.0.0.1") for _ in range(3)] == [None, None, None]
    assert buckets.admit("10.0.0.1") == 1  # one token a second: wait 1 s
    clock.advance(0.5)
    assert buckets.admit("10.0.0.1") == 1  # half a token: still refused, rounded up
    clock.advance(0.5)
    assert buckets.admit("10.0.0.1") is None
    assert buckets.admit("10.0.0.1") == 1


def test_addresses_have_their_own_budgets() -> None:
    clock = SteppingClock()
    buckets = limiter(clock, requests_per_minute=1, request_burst=1)
    assert buckets.admit("10.0.0.1") is None
    assert buckets.admit("10.0.0.1") == 60
    assert buckets.admit("10.0.0.2") is None
    assert buckets.admit(None) is None  # no client address: one shared "unknown" budget
    assert buckets.admit(None) == 60


def test_failures_block_every_request_until_they_refill() -> None:
    clock = SteppingClock()
    buckets = limiter(clock, failures_per_minute=6, failure_burst=2)
    for _ in range(2):
        assert buckets.admit("10.0.0.1") is None
        buckets.failed("10.0.0.1")
    assert buckets.admit("10.0.0.1") == 10  # one failure token per 10 s
    clock.advance(10)
    assert buckets.admit("10.0.0.1") is None  # successes cost no failure token
    assert buckets.admit("10.0.0.1") is None
    buckets.failed("10.0.0.1")
    assert buckets.admit("10.0.0.1") == 10


def test_a_refused_request_costs_nothing_and_budgets_never_exceed_the_burst() -> None:
    clock = SteppingClock()
    buckets = limiter(clock, requests_per_minute=60, request_burst=2)
    buckets.admit("a")
    buckets.admit("a")
    for _ in range(50):
        assert buckets.admit("a") == 1  # hammering while refused does not push the wait out
    clock.advance(3600)
    assert [buckets.admit("a") for _ in range(3)] == [None, None, 1]


def test_a_clock_that_steps_back_refills_nothing() -> None:
    clock = SteppingClock()
    buckets = limiter(clock, requests_per_minute=60, request_burst=1)
    buckets.admit("a")
    clock.advance(-3600)
    assert buckets.admit("a") == 1
    clock.advance(3600)  # back where it was: still no time has passed for the bucket
    assert buckets.admit("a") == 1
    clock.advance(1)
    assert buckets.admit("a") is None


def test_memory_is_bounded_by_max_clients() -> None:
    clock = SteppingClock()
    buckets = limiter(clock, requests_per_minute=1, request_burst=1, max_clients=3)
    for n in range(100):
        buckets.admit(f"10.0.0.{n}")
    assert len(buckets) == 3
    buckets.admit("10.0.0.97")  # seen recently: kept, and its budget is spent
    assert buckets.admit("10.0.0.97") == 60
    assert buckets.admit("10.0.0.0") is None  # forgotten: starts again with a full budget


def test_one_warning_per_spell_of_refusals(caplog: pytest.LogCaptureFixture) -> None:
    clock = SteppingClock()
    buckets = limiter(clock, requests_per_minute=60, request_burst=1)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.connect.pages"):
        buckets.admit("10.9.8.7")
        for _ in range(20):
            buckets.admit("10.9.8.7")
        clock.advance(1)
        buckets.admit("10.9.8.7")  # admitted: the spell is over
        buckets.admit("10.9.8.7")  # a new spell
    warnings = [r.getMessage() for r in caplog.records if r.name == "mcp_elicit.connect.pages"]
    assert len(warnings) == 2
    assert all("10.9.8.7" in w and "rate limit" in w for w in warnings)


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("requests_per_minute", 0, "must be above 0"),
        ("failures_per_minute", -1.5, "must be above 0"),
        ("requests_per_minute", float("nan"), "must be a number"),
        ("requests_per_minute", float("inf"), "must be a number"),
        ("failures_per_minute", "10", "must be a number"),
        ("requests_per_minute", True, "must be a number"),
        ("request_burst", 0, "must be a whole number of at least 1"),
        ("failure_burst", 2.5, "must be a whole number of at least 1"),
        ("max_clients", False, "must be a whole number of at least 1"),
    ],
)
def test_bad_limits_are_refused_by_name(field: str, value: object, says: str) -> None:
    with pytest.raises(ValueError, match=f"PageRateLimit.{field} {says}"):
        PageRateLimit(**{field: value})  # type: ignore[arg-type]


def test_the_limiter_and_the_kit_want_a_page_rate_limit() -> None:
    with pytest.raises(TypeError, match="PageRateLimit"):
        PageRateLimiter({"requests_per_minute": 10}, SteppingClock())  # type: ignore[arg-type]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", None]),
            st.sampled_from(["admit", "failed"]),
            st.floats(min_value=-5, max_value=120, allow_nan=False),
        ),
        max_size=60,
    )
)
def test_any_sequence_keeps_budgets_in_range_and_waits_positive(
    steps: list[tuple[str | None, str, float]],
) -> None:
    clock = SteppingClock()
    limits = PageRateLimit(requests_per_minute=30, request_burst=4, failures_per_minute=5, failure_burst=3)
    buckets = PageRateLimiter(limits, clock)
    for client, action, seconds in steps:
        clock.advance(seconds)
        if action == "failed":
            buckets.failed(client)
            continue
        wait = buckets.admit(client)
        assert wait is None or (isinstance(wait, int) and 1 <= wait <= 60)
    for bucket in buckets._buckets.values():
        assert 0 <= bucket.requests <= limits.request_burst
        assert 0 <= bucket.failures <= limits.failure_burst


# ------------------------------------------------------------------------------ the pages


@pytest.fixture
async def strict(tmp_path: Path, idp: OidcProvider, third_party: OidcProvider) -> AsyncIterator[Harness]:
    limits = PageRateLimit(requests_per_minute=60, request_burst=8, failures_per_minute=6, failure_burst=3)
    async with running_pages(tmp_path, idp, third_party, rate_limit=limits) as harness:
        yield harness


@pytest.fixture
async def unlimited(tmp_path: Path, idp: OidcProvider, third_party: OidcProvider) -> AsyncIterator[Harness]:
    async with running_pages(tmp_path, idp, third_party, rate_limit=None) as harness:
        yield harness


async def test_guessing_links_is_cut_off_with_429_and_retry_after(
    strict: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    flow = await strict.connect_flow("alice")
    cookie = {"cookie": strict.cookie("alice")}
    async with httpx.AsyncClient(base_url=strict.base, follow_redirects=False, timeout=15) as http:
        with caplog.at_level(logging.WARNING, logger="mcp_elicit.connect.pages"):
            guesses = [await http.get(UNKNOWN, headers=cookie) for _ in range(3)]
            assert [r.status_code for r in guesses] == [404, 404, 404]
            refused = await http.get(UNKNOWN, headers=cookie)
            own_link = await http.get(f"/connect/{flow.id}", headers=cookie)
        assert refused.status_code == own_link.status_code == 429
        assert refused.headers["retry-after"] == "10"  # one failure token per 10 s
        assert "Too many requests" in refused.text
        for name, value in SECURITY_HEADERS.items():
            assert refused.headers[name] == value
        assert "frame-ancestors 'none'" in refused.headers["content-security-policy"]
        warnings = [r.getMessage() for r in caplog.records if r.name == "mcp_elicit.connect.pages"]
        assert len(warnings) == 1
        assert "127.0.0.1" in warnings[0]
        assert flow.id not in warnings[0]

        strict.clock.now += 10  # time refills the budget
        page = await http.get(f"/connect/{flow.id}", headers=cookie)
        assert page.status_code == 200
        assert "Signed in as" in page.text
    assert (await strict.flows.get(flow.id)).status == "pending"


async def test_plain_use_stays_within_the_request_budget(strict: Harness) -> None:
    flow = await strict.connect_flow("alice")
    cookie = {"cookie": strict.cookie("alice")}
    async with httpx.AsyncClient(base_url=strict.base, follow_redirects=False, timeout=15) as http:
        statuses = [(await http.get(f"/connect/{flow.id}", headers=cookie)).status_code for _ in range(8)]
        assert statuses == [200] * 8
        over = await http.get(f"/connect/{flow.id}", headers=cookie)
        assert over.status_code == 429
        assert over.headers["retry-after"] == "1"
        strict.clock.now += 1
        assert (await http.get("/done")).status_code == 200


async def test_without_limits_nothing_is_refused(unlimited: Harness) -> None:
    async with httpx.AsyncClient(base_url=unlimited.base, follow_redirects=False, timeout=15) as http:
        statuses = {(await http.get(UNKNOWN)).status_code for _ in range(80)}
    assert statuses == {404}


def test_the_default_budget_allows_a_person_plenty() -> None:
    limits = DEFAULT_PAGE_RATE_LIMIT
    assert limits.request_burst >= 30
    assert limits.requests_per_minute >= 60
    assert limits.failure_burst >= 10
