"""Per-client rate limits for the pages: SEP-1036 asks servers to rate-limit (and see
``docs/threat-model.md``, attack 6).

Flow ids carry 256 random bits, so guessing one is hopeless; the limits are there so that nobody
can even try at scale, and so that a script hammering the pages (or the sign-in, which calls the
authorization server) costs the server little. Two token buckets per client address:

* every request takes a token from the *requests* bucket (a page load is a handful of requests);
* every request answered with a 4xx (an unknown or someone else's link, a bad CSRF token, a
  failed callback) also takes one from the *failures* bucket, which refills slowly.

While either bucket is empty, the client gets ``429 Too Many Requests`` with ``Retry-After``.

The address is the ASGI ``client`` of the request. Behind a reverse proxy, configure the ASGI
server to take it from the proxy's ``X-Forwarded-For`` (uvicorn: ``--forwarded-allow-ips`` with
the proxy's address), or every user shares the proxy's buckets. Limits are kept in memory, per
process, for at most ``max_clients`` addresses (the least recently seen are forgotten first).
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = ["DEFAULT_PAGE_RATE_LIMIT", "PageRateLimit", "PageRateLimiter"]

_UNKNOWN_CLIENT: Final = "unknown"
_log = logging.getLogger("mcp_elicit.connect.pages")


@dataclass(frozen=True, slots=True)
class PageRateLimit:
    """How much one client address may ask of the pages.

    ``requests_per_minute`` / ``request_burst``: all requests (a page load is a few of them).
    ``failures_per_minute`` / ``failure_burst``: requests answered with a 4xx status.
    ``max_clients``: addresses remembered at once (memory bound).
    """

    requests_per_minute: float = 120.0
    request_burst: int = 60
    failures_per_minute: float = 20.0
    failure_burst: int = 30
    max_clients: int = 10_000

    def __post_init__(self) -> None:
        for name in ("requests_per_minute", "failures_per_minute"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"PageRateLimit.{name} must be a number, got {value!r}")
            if value <= 0:
                raise ValueError(f"PageRateLimit.{name} must be above 0, got {value!r}")
        for name in ("request_burst", "failure_burst", "max_clients"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"PageRateLimit.{name} must be a whole number of at least 1, got {value!r}")


DEFAULT_PAGE_RATE_LIMIT: Final = PageRateLimit()


class _Bucket:
    __slots__ = ("failures", "limited", "requests", "updated")

    def __init__(self, requests: float, failures: float, now: float) -> None:
        self.requests = requests
        self.failures = failures
        self.updated = now
        self.limited = False  # refused since its last admitted request (one log line per spell)


class PageRateLimiter:
    """The buckets of every client address seen recently (see the module docstring)."""

    def __init__(self, limits: PageRateLimit, clock: Callable[[], float]) -> None:
        if not isinstance(limits, PageRateLimit):
            raise TypeError("rate_limit must be a PageRateLimit (or None for no limits)")
        self.limits = limits
        self._clock = clock
        self._request_rate = limits.requests_per_minute / 60.0
        self._failure_rate = limits.failures_per_minute / 60.0
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def _bucket(self, client: str) -> _Bucket:
        """``client``'s bucket, refilled up to now; new clients start full."""
        now = self._clock()
        limits = self.limits
        bucket = self._buckets.get(client)
        if bucket is None:
            bucket = _Bucket(float(limits.request_burst), float(limits.failure_burst), now)
            self._buckets[client] = bucket
            if len(self._buckets) > limits.max_clients:
                self._buckets.popitem(last=False)
            return bucket
        self._buckets.move_to_end(client)
        # A clock that steps back refills nothing, now or when it catches up again.
        elapsed = max(0.0, now - bucket.updated)
        bucket.updated = max(bucket.updated, now)
        bucket.requests = min(float(limits.request_burst), bucket.requests + elapsed * self._request_rate)
        bucket.failures = min(float(limits.failure_burst), bucket.failures + elapsed * self._failure_rate)
        return bucket

    def admit(self, client: str | None) -> int | None:
        """Take a request token: ``None`` when ``client`` may go on, else the whole seconds to wait
        (for ``Retry-After``). A refused request takes nothing."""
        address = client or _UNKNOWN_CLIENT
        bucket = self._bucket(address)
        waits = []
        if bucket.requests < 1.0:
            waits.append((1.0 - bucket.requests) / self._request_rate)
        if bucket.failures < 1.0:
            waits.append((1.0 - bucket.failures) / self._failure_rate)
        if waits:
            if not bucket.limited:
                bucket.limited = True
                _log.warning("pages: client %s is over the rate limit; refusing it for now", address)
            return max(1, math.ceil(max(waits)))
        bucket.limited = False
        bucket.requests -= 1.0
        return None

    def failed(self, client: str | None) -> None:
        """Charge a request that was answered with a 4xx to ``client``'s failures."""
        bucket = self._bucket(client or _UNKNOWN_CLIENT)
        bucket.failures = max(0.0, bucket.failures - 1.0)

    def __len__(self) -> int:
        return len(self._buckets)
