"""Per-flow cost of each server's ASGI app with cold CPU caches, in one process, side by side.

Why: under load, a server's caches are cold at every request (the kernel's network stack,
uvicorn and 15 other requests ran in between), and the server bench sees that: ours costs more
time per instruction than bare. Counting instructions (`instructions.py`) misses this and timing
a warm loop misses it too. This calls each app directly (no sockets, no uvicorn), writes a buffer
larger than the CPU's L2 cache before every request, and times only the app. Every flow runs
through each server in turn, so a slow spell of the machine hits all of them alike: repeated
runs agree within about 2%, against 10-30% for the HTTP bench.

    python bench/cold.py                        # ours and bare, 3000 flows each
    python bench/cold.py --servers ours,sdk,bare --flows 1000
    python bench/cold.py --flush-mb 0           # warm caches, for contrast

It measures the apps only: uvicorn's own cost per flow (the same for every server) comes on top
in the server bench, so the HTTP ratio bare/ours is higher than the app ratio printed here.
A measurement, not a timed test (tests/bench only checks that the tool works).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson
import uvloop

import loadclient as lc
from run import LABELS, SERVERS, server_names

Message = MutableMapping[str, Any]
App = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]

BLOCKS = 10  # the flows are timed in blocks; medians over blocks tame one-off stalls
WARMUP_FLOWS = 50
HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
    (b"mcp-protocol-version", lc.PROTOCOL_VERSION.encode()),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", lc.TOOL.encode()),
]


def load_app(name: str) -> App:
    """The ASGI app a bench server serves (its ``asgi_app()``)."""
    spec = importlib.util.spec_from_file_location(f"bench_server_{name}", SERVERS[name])
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.asgi_app()  # type: ignore[no-any-return]


async def start_lifespan(app: App) -> Callable[[], Awaitable[None]]:
    """Run the app's lifespan startup (the SDK's session manager needs it); return the shutdown."""
    inbox: asyncio.Queue[Message] = asyncio.Queue()
    started = asyncio.get_running_loop().create_future()

    async def receive() -> Message:
        return await inbox.get()

    async def send(message: Message) -> None:
        if message["type"].startswith("lifespan.startup") and not started.done():
            started.set_result(message["type"])

    task = asyncio.ensure_future(app({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send))
    await inbox.put({"type": "lifespan.startup"})
    outcome = await asyncio.wait_for(started, 30)
    if outcome != "lifespan.startup.complete":
        raise RuntimeError(f"lifespan startup failed: {outcome}")

    async def shutdown() -> None:
        await inbox.put({"type": "lifespan.shutdown"})
        await asyncio.wait_for(task, 30)

    return shutdown


class Bench:
    def __init__(self, apps: dict[str, App], flush_bytes: int) -> None:
        self.apps = apps
        self.scratch = bytearray(flush_bytes)
        self.lines = flush_bytes // 64

    def evict(self) -> None:
        # One write per 64-byte line pushes the app's code and data out of L1 and L2.
        if self.lines:
            self.scratch[::64] = b"\x01" * self.lines

    async def request(self, app: App, body: bytes, rid: int) -> tuple[dict[str, Any], float]:
        """One POST through ``app``: its result and the seconds spent inside the app."""
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/mcp",
            "raw_path": b"/mcp",
            "query_string": b"",
            "root_path": "",
            "headers": [*HEADERS, (b"content-length", str(len(body)).encode())],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
        }
        pending = [{"type": "http.request", "body": body, "more_body": False}]
        sent: list[Message] = []

        async def receive() -> Message:
            if pending:
                return pending.pop()
            await asyncio.get_running_loop().create_future()  # no disconnect during a request
            raise AssertionError("unreachable")

        async def send(message: Message) -> None:
            sent.append(message)

        self.evict()
        started = time.perf_counter()
        await app(scope, receive, send)
        elapsed = time.perf_counter() - started
        status = sent[0].get("status")
        payload = b"".join(m.get("body", b"") for m in sent[1:])
        if status != 200:
            raise ValueError(f"HTTP {status}: {payload[:200]!r}")
        return lc.result_from_message(orjson.loads(payload), rid), elapsed

    async def flow(self, app: App, n: int) -> float:
        """One whole elicitation flow, checked as the load client checks it; seconds in the app."""
        title = f"T-{n}"
        title_json = orjson.dumps(title)
        first, t1 = await self.request(app, lc.first_body(2 * n, title_json), 2 * n)
        key, state = lc.check_input_required(first, title)
        final, t2 = await self.request(app, lc.retry_body(2 * n + 1, title_json, key, state), 2 * n + 1)
        lc.check_complete(final, title)
        return t1 + t2

    async def run(self, flows: int) -> dict[str, list[float]]:
        """Microseconds per flow for each app, one value per block."""
        for n in range(WARMUP_FLOWS):
            for app in self.apps.values():
                await self.flow(app, n)
        per_block: dict[str, list[float]] = {name: [] for name in self.apps}
        size = max(flows // BLOCKS, 1)
        n = WARMUP_FLOWS
        for _ in range(BLOCKS):
            spent = dict.fromkeys(self.apps, 0.0)
            for _ in range(size):
                n += 1
                for name, app in self.apps.items():  # paired: each flow through every app in turn
                    spent[name] += await self.flow(app, n)
            for name in self.apps:
                per_block[name].append(spent[name] / size * 1e6)
        return per_block


async def measure(names: list[str], flows: int, flush_bytes: int) -> dict[str, list[float]]:
    apps = {name: load_app(name) for name in names}
    shutdowns = [await start_lifespan(app) for app in apps.values()]
    try:
        return await Bench(apps, flush_bytes).run(flows)
    finally:
        for shutdown in shutdowns:
            await shutdown()


def paired(numerator: list[float], denominator: list[float]) -> float:
    return statistics.median(a / b for a, b in zip(numerator, denominator, strict=True))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default="ours,bare", help="comma-separated subset of ours,sdk,bare")
    ap.add_argument("--flows", type=int, default=3000, help="timed flows per server (default 3000)")
    ap.add_argument(
        "--flush-mb", type=float, default=4.0, help="bytes written before each request, MiB (0: warm)"
    )
    args = ap.parse_args(argv)
    names = server_names(ap, args.servers)
    if args.flows < BLOCKS or args.flush_mb < 0:
        ap.error(f"--flows must be at least {BLOCKS} and --flush-mb at least 0")
    per_block = uvloop.run(measure(names, args.flows, int(args.flush_mb * (1 << 20))))
    caches = (
        "warm caches" if args.flush_mb == 0 else f"caches flushed ({args.flush_mb:g} MiB) before each request"
    )
    print(f"  app time per flow, {caches}, median of {BLOCKS} blocks")
    for name in names:
        print(f"  {LABELS[name]:22s} {statistics.median(per_block[name]):8.1f} us")
    if "ours" in per_block and "bare" in per_block:
        ratio = paired(per_block["bare"], per_block["ours"])
        print(f"  bare/ours {ratio:.3f} (the apps only: uvicorn's share comes on top in the server)")
    if "ours" in per_block and "sdk" in per_block:
        print(f"  sdk/ours  {paired(per_block['sdk'], per_block['ours']):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
