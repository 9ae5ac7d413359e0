"""Whole elicitation flows spread over two instances, re-issued when a request breaks.

A flow: ``tools/call order {item}`` on one instance returns ``input_required``; after a short
"user thinks" pause the retry (``inputResponses`` with a value unique to the flow, the echoed
``requestState``) goes to the *other* instance and must return ``ordered <item> value <value>``.

A request whose connection breaks, times out, is refused at connect, gets HTTP 503, or gets a
JSON-RPC error marked ``retryable`` is re-issued, the same body with a new JSON-RPC id, on the
other instance (backing off a little each time), up to a bound in attempts and time. Anything
else ends the flow as lost. Every attempt's failure is counted by kind.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import secrets
import time
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from httpclient import META, ConnectionBroken, Instance, ProtocolError

_ids = itertools.count(1)


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(p / 100.0 * (len(ordered) - 1))))
    return ordered[k]


class FlowFailed(Exception):
    """The flow cannot complete (it is lost)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class WrongResult(FlowFailed):
    """An answer that belongs to another flow (the worst outcome: counted apart from lost)."""


@dataclass
class Window:
    """A fault window: flows that overlap it are reported separately."""

    name: str
    start: float
    end: float | None = None


@dataclass
class LoadStats:
    started: int = 0
    completed: int = 0
    lost: int = 0
    wrong: int = 0
    reissued_requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    errors: Counter[str] = field(default_factory=Counter)  # failed attempts, by kind
    lost_kinds: Counter[str] = field(default_factory=Counter)
    latencies: array[float] = field(default_factory=lambda: array("d"))
    spans: list[tuple[float, float]] = field(default_factory=list)  # (start, end) per completed flow
    completed_values: set[str] = field(default_factory=set)
    redelivered: int = 0  # retries delivered twice that got the same result again
    started_by_tool: Counter[str] = field(default_factory=Counter)
    completed_by_tool: Counter[str] = field(default_factory=Counter)

    def latency_in(self, window: Window) -> list[float]:
        end = window.end if window.end is not None else float("inf")
        return [
            lat
            for (s, e), lat in zip(self.spans, self.latencies, strict=True)
            if s <= end and e >= window.start
        ]


def tool_call(name: str, arguments: dict[str, Any], **extra: Any) -> Callable[[int], bytes]:
    params: dict[str, Any] = {"_meta": META, "name": name, "arguments": arguments, **extra}
    prefix = b'{"jsonrpc":"2.0","id":'
    rest = b',"method":"tools/call","params":' + orjson.dumps(params) + b"}"
    return lambda rid: prefix + str(rid).encode() + rest


@dataclass
class Policy:
    io_timeout: float = 10.0
    max_attempts: int = 60
    flow_deadline: float = 90.0
    think: float = 0.3  # the "user answering the form" pause between the two rounds
    # Every n-th flow delivers its retry a second time, to the first instance, as a client does
    # whose answer got lost: it must get the very same result (redelivery; the side effect is
    # not repeated). Such a claim finds its id taken and reads the stored answer: a second
    # statement, so operations of two statements are always under way (0: never).
    redeliver_every: int = 4


class Driver:
    """Runs flows against two instances and keeps the score."""

    def __init__(self, instances: Sequence[Instance], policy: Policy, run_id: str) -> None:
        self.instances = list(instances)
        self.policy = policy
        self.run_id = run_id
        self.stats = LoadStats()
        self._seq = itertools.count(1)

    async def call(
        self, prefer: int, name: str, body: Callable[[int], bytes], deadline: float
    ) -> dict[str, Any]:
        """One request, re-issued on the other instance until it gets a usable answer."""
        index = prefer
        stats = self.stats
        for attempt in range(1, self.policy.max_attempts + 1):
            instance = self.instances[index]
            rid = next(_ids)
            kind: str
            try:
                response = await instance.post(body(rid), name=name, timeout=self.policy.io_timeout)
            except ConnectionRefusedError:
                kind = "connect refused"
            except (ConnectionBroken, ConnectionResetError, BrokenPipeError) as exc:
                kind = f"connection broke mid-request ({type(exc).__name__})"
            except TimeoutError:
                kind = "no response in time"
            except (OSError, ProtocolError) as exc:
                kind = f"transport: {type(exc).__name__}"
            else:
                kind, result = self._judge(response.status, response.body, rid)
                if result is not None:
                    return result
                if kind.startswith("wrong:"):
                    stats.errors[kind] += 1
                    raise WrongResult(kind)
                if not kind.startswith("retryable"):
                    stats.errors[kind] += 1
                    raise FlowFailed(kind)
            stats.errors[kind] += 1
            if attempt == self.policy.max_attempts or time.perf_counter() > deadline:
                raise FlowFailed(f"gave up after {attempt} attempts (last: {kind})")
            stats.reissued_requests += 1
            await asyncio.sleep(min(0.5, 0.02 * 2 ** min(attempt, 5)) * random.uniform(0.5, 1.0))
            index = 1 - index
        raise AssertionError("unreachable")

    @staticmethod
    def _judge(status: int, body: bytes, rid: int) -> tuple[str, dict[str, Any] | None]:
        if status == 503:
            return "retryable: HTTP 503", None
        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError:
            return f"HTTP {status} with a non-JSON body", None
        if not isinstance(message, dict):
            return f"HTTP {status}: the body is not a JSON object", None
        if message.get("id") != rid:
            return f"wrong: HTTP {status}: the response is for another request id", None
        error = message.get("error")
        if isinstance(error, dict):
            data = error.get("data")
            code = error.get("code")
            if isinstance(data, dict) and data.get("retryable") is True:
                return f"retryable: {code} {data.get('reason')}", None
            return f"HTTP {status} JSON-RPC {code}: {str(error.get('message'))[:60]}", None
        result = message.get("result")
        if status != 200 or not isinstance(result, dict):
            return f"HTTP {status} without a result", None
        return "", result

    async def flow(self, tool: str = "order", first_on: int | None = None) -> None:
        stats = self.stats
        n = next(self._seq)
        item = f"item-{self.run_id}-{n}"
        value = f"value-{self.run_id}-{n}-{secrets.token_hex(6)}"
        prefer = (n % 2) if first_on is None else first_on
        stats.started += 1
        stats.started_by_tool[tool] += 1
        stats.in_flight += 1
        stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        t0 = time.perf_counter()
        deadline = t0 + self.policy.flow_deadline
        thought = 0.0
        try:
            first = await self.call(prefer, tool, tool_call(tool, {"item": item}), deadline)
            if first.get("resultType") != "input_required" or "pick" not in (
                first.get("inputRequests") or {}
            ):
                raise FlowFailed("first round: not the expected input_required")
            message = first["inputRequests"]["pick"].get("params", {}).get("message", "")
            if item not in message:
                raise WrongResult("first round: the question is about another flow")
            state = first.get("requestState")
            if not isinstance(state, str):
                raise FlowFailed("first round: no requestState")
            t_think = time.perf_counter()
            await asyncio.sleep(self.policy.think)
            thought = time.perf_counter() - t_think
            answer = {"pick": {"action": "accept", "content": {"value": value}}}
            body = tool_call(tool, {"item": item}, inputResponses=answer, requestState=state)
            final = await self.call(1 - prefer, tool, body, deadline)
            text = ""
            content = final.get("content")
            if isinstance(content, list) and content and isinstance(content[0], dict):
                text = str(content[0].get("text"))
            if final.get("resultType") != "complete" or final.get("isError"):
                raise FlowFailed(f"retry: not a complete result ({text[:60]})")
            if text != f"ordered {item} value {value}":
                raise WrongResult(f"retry: the result carries another flow's data: {text[:80]!r}")
            if self.policy.redeliver_every and n % self.policy.redeliver_every == 0:
                again = await self.call(prefer, tool, body, deadline)
                if again.get("content") != content or again.get("resultType") != "complete":
                    raise WrongResult("redelivered retry: not the result the first delivery got")
                stats.redelivered += 1
        except WrongResult as exc:
            stats.wrong += 1
            stats.lost_kinds[exc.kind] += 1
            return
        except FlowFailed as exc:
            stats.lost += 1
            stats.lost_kinds[exc.kind] += 1
            return
        finally:
            stats.in_flight -= 1
        t1 = time.perf_counter()
        stats.completed += 1
        stats.completed_values.add(value)
        stats.latencies.append(t1 - t0 - thought)
        stats.spans.append((t0, t1))
        stats.completed_by_tool[tool] += 1

    async def run(self, workers: int, keep_going: Callable[[], bool]) -> None:
        """``workers`` closed-loop users, each starting flows while ``keep_going()``."""

        async def user() -> None:
            while keep_going():
                await self.flow()

        await asyncio.gather(*(user() for _ in range(workers)))
