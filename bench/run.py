"""Side-by-side benchmark: mcp-elicit (ours) vs the official mcp==2.3.0 SDK vs a bare ASGI app.

One run measures, for the same tool (`create_ticket(title)` eliciting one boolean form):

  (a) HTTP: a closed-loop load (16 users, keep-alive HTTP/1.1) repeating whole MRTR flows
      (tools/call -> input_required -> retry with inputResponses + requestState -> complete)
      against ours.py, sdk.py and bare.py, all on the same uvicorn settings;
  (b) stdio: the same flow, one at a time, over a spawned server's stdin/stdout;
  (c) cold start: spawn the server in stdio mode -> answer to `server/discover` read.

Every flow is verified (final result complete, text "Created <title>"); errors are counted and
shown. See bench/README.md.

    python bench/run.py            # full run (3 rounds of 10 s per HTTP server after 2 s warm-up)
    python bench/run.py --quick    # CI-size run (~2 s per HTTP server)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import loadclient as lc  # noqa: E402

HOST = "127.0.0.1"  # loopback only, always
SERVERS = {
    "ours": HERE / "servers" / "ours.py",
    "sdk": HERE / "servers" / "sdk.py",
    "bare": HERE / "servers" / "bare.py",
}
LABELS = {"ours": "ours (mcp-elicit)", "sdk": "sdk (mcp 2.3.0)", "bare": "bare (canned ASGI)"}
STDIO_SERVERS = ("ours", "sdk")  # bare is HTTP only

TARGET_HTTP_VS_SDK = 5.0
TARGET_HTTP_VS_BARE = 0.5
TARGET_STDIO_VS_SDK = 10.0
TARGET_COLD_MS = 150.0
# Ours must stay clearly below what the client reaches against bare, else the client may cap it.
CLIENT_HEADROOM = 0.8
CLIENT_CPU_SATURATED = 0.9


# --------------------------------------------------------------------------- processes


def server_names(ap: argparse.ArgumentParser, text: str) -> list[str]:
    """The servers named in a ``--servers`` value (comma-separated); ``ap.error`` on unknown ones."""
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [n for n in names if n not in SERVERS]
    if unknown or not names:
        ap.error(f"unknown server(s) {unknown}; choose from {', '.join(SERVERS)}")
    return names


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
    """End a process this script started, by its own handle (never by name)."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout)


def tail(path: Path, n: int = 6) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join("      " + line for line in lines[-n:])


@dataclass
class HttpServer:
    name: str
    port: int
    proc: subprocess.Popen[bytes]
    log: Path


def start_http(name: str, python: str, logdir: Path, timeout: float = 30.0) -> HttpServer:
    port = free_port()
    log = logdir / f"{name}-http.log"
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            [python, str(SERVERS[name]), str(port)], stdin=subprocess.DEVNULL, stdout=fh, stderr=fh
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name}.py exited with code {proc.returncode} on start:\n{tail(log)}")
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=0.5):
            return HttpServer(name, port, proc, log)
        time.sleep(0.05)
    stop_process(proc)
    raise RuntimeError(f"{name}.py did not listen on {HOST}:{port} within {timeout:.0f} s:\n{tail(log)}")


def probe(name: str, python: str) -> str | None:
    """Why `name` cannot run at all (its library does not import), or None if it can."""
    code = {
        "ours": "import mcp_elicit as m; m.Server; m.Context",
        "sdk": "from mcp.server.mcpserver import MCPServer, Resolve, Elicit",
        "bare": "import orjson, uvicorn",
    }[name]
    try:
        p = subprocess.run([python, "-c", code], capture_output=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        return "import probe timed out"
    if p.returncode == 0:
        return None
    lines = p.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"import probe exited {p.returncode}"


def byte_compile_ours(python: str) -> str:
    """Write the ``.pyc`` files of ``mcp_elicit``, as installing a package does.

    An editable install leaves the sources uncompiled, and with ``PYTHONDONTWRITEBYTECODE`` set
    (as on this machine) every start compiles them again: about 40 ms of a cold start that an
    installed mcp-elicit (or the SDK, installed from its wheel) never pays."""
    code = (
        "import compileall, os, mcp_elicit; "
        "d = os.path.dirname(mcp_elicit.__file__); "
        "print(d if compileall.compile_dir(d, quiet=1, force=False) else 'FAILED')"
    )
    p = subprocess.run([python, "-c", code], capture_output=True, timeout=300, check=False)
    return p.stdout.decode(errors="replace").strip() or p.stderr.decode(errors="replace").strip()[-200:]


# --------------------------------------------------------------------------- stdio


class StdioServer:
    """A spawned stdio server with a bounded line reader (select + os.read)."""

    def __init__(self, name: str, python: str, log: Path) -> None:
        self.name = name
        self.log = log
        with log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [python, str(SERVERS[name]), "stdio"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=fh,
                bufsize=0,
            )
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        self.buf = bytearray()

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.wfd, view)
            view = view[n:]

    def readline(self, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[: i + 1]
                return line
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no line from {self.name} stdio within {timeout:.0f} s")
            ready, _, _ = select.select([self.rfd], [], [], left)
            if ready:
                chunk = os.read(self.rfd, 65536)
                if not chunk:
                    raise EOFError(f"{self.name} stdio closed stdout (exit {self.proc.poll()})")
                self.buf += chunk

    def response(self, rid: int, timeout: float) -> dict[str, Any]:
        """The JSON-RPC response for `rid`, skipping notifications."""
        while True:
            line = self.readline(timeout)
            if not line.strip():
                continue
            msg = orjson.loads(line)
            if isinstance(msg, dict) and "id" in msg and "method" not in msg:
                return msg

    def close(self) -> None:
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(3.0)
        except subprocess.TimeoutExpired:
            stop_process(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def discover_line(rid: int = 1) -> bytes:
    return (
        orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "server/discover", "params": {"_meta": lc.META}})
        + b"\n"
    )


def check_discover(msg: dict[str, Any], rid: int) -> None:
    result = lc.result_from_message(msg, rid)
    if result.get("resultType") != "complete" or lc.PROTOCOL_VERSION not in (
        result.get("supportedVersions") or []
    ):
        raise ValueError(f"unexpected server/discover result: {result!r:.200}")


@dataclass
class StdioResult:
    flows: int = 0
    seconds: float = 0.0
    errors: int = 0
    error_samples: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    round_rates: list[float] = field(default_factory=list)  # flows/s of each round
    note: str = ""

    @property
    def flows_per_s(self) -> float:
        """The median of the rounds' flows/s (a slow spell of the machine hits one round)."""
        if self.round_rates:
            return statistics.median(self.round_rates)
        return self.flows / self.seconds if self.seconds > 0 else 0.0


def stdio_flow(srv: StdioServer, rid: int, title: str, timeout: float) -> str:
    title_json = orjson.dumps(title)
    srv.send(lc.first_body(rid, title_json) + b"\n")
    key, rs = lc.check_input_required(lc.result_from_message(srv.response(rid, timeout), rid), title)
    srv.send(lc.retry_body(rid + 1, title_json, key, rs) + b"\n")
    return lc.check_complete(lc.result_from_message(srv.response(rid + 1, timeout), rid + 1), title)


class _StdioRun:
    """One server's side of the interleaved stdio measurement."""

    def __init__(self, name: str, python: str, logdir: Path) -> None:
        self.name = name
        self.srv = StdioServer(name, python, logdir / f"{name}-stdio.log")
        self.res = StdioResult()
        self.rid = 0
        self.done = False

    def flows(self, count: int, *, measured: bool, max_seconds: float) -> None:
        """Run `count` sequential flows; measured ones add to the result and make one round."""
        res = self.res
        t_start = time.perf_counter()
        done_here = 0
        try:
            for _ in range(count):
                self.rid += 2
                t0 = time.perf_counter()
                try:
                    stdio_flow(self.srv, self.rid, f"T-0-{self.rid}", timeout=10.0)
                except (ValueError, orjson.JSONDecodeError) as e:
                    res.errors += 1
                    res.error_samples[lc.error_key(str(e))] += 1
                    if res.errors >= 20 and res.flows == 0 and done_here == 0:
                        res.note = "gave up after 20 failed flows and none passed"
                        self.done = True
                        break
                    continue
                if measured:
                    done_here += 1
                    res.latencies.append(time.perf_counter() - t0)
        except (TimeoutError, EOFError, OSError) as e:
            res.errors += 1
            res.error_samples[f"{type(e).__name__}: {e}"[:160]] += 1
            res.note = "aborted: " + str(e)[:80]
            self.done = True
        if not measured:
            return
        elapsed = time.perf_counter() - t_start
        res.flows += done_here
        res.seconds += elapsed
        # Every measured round gets a rate (0 when none of its flows passed), so that round i of
        # one server pairs with round i of the other in paired_ratio.
        res.round_rates.append(done_here / elapsed if elapsed > 0 else 0.0)
        if res.seconds > max_seconds and not self.done:
            res.note = f"stopped at the {max_seconds:.0f} s cap"
            self.done = True

    def close(self) -> None:
        self.srv.close()


def run_stdio(
    names: list[str],
    python: str,
    logdir: Path,
    flows: int,
    warmup: int,
    max_seconds: float,
    rounds: int,
    say: Callable[[str], None],
) -> dict[str, StdioResult]:
    """Sequential flows over one spawned stdio server per name, in `rounds` interleaved rounds
    (ours, sdk, ours, sdk...): a slow spell of the machine then hits both servers, not one.
    Each server stops at `flows` measured flows or `max_seconds` of measured time."""
    runs: dict[str, _StdioRun] = {}
    try:
        for name in names:
            runs[name] = _StdioRun(name, python, logdir)
            say(f"[stdio] {name}: {warmup} warm-up flows")
            runs[name].flows(warmup, measured=False, max_seconds=max_seconds)
        per_round = max(1, -(-flows // rounds))
        for rnd in range(rounds):
            for name, run in runs.items():
                if run.done:
                    continue
                say(f"[stdio] round {rnd + 1}/{rounds}: {name}, {per_round} sequential flows")
                run.flows(per_round, measured=True, max_seconds=max_seconds)
    finally:
        for run in runs.values():
            run.close()
    return {name: run.res for name, run in runs.items()}


def paired_ratio(ours: list[float], other: list[float]) -> float:
    """Median over rounds of ours/other flows/s, each pair measured side by side (in the same
    time window, so a slow spell of the machine hits both)."""
    pairs = [a / b for a, b in zip(ours, other, strict=False) if b > 0]
    return statistics.median(pairs) if pairs else float("nan")


@dataclass
class ColdResult:
    samples_ms: list[float] = field(default_factory=list)
    errors: int = 0
    error_samples: Counter[str] = field(default_factory=Counter)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples_ms) if self.samples_ms else float("nan")


def run_cold(name: str, python: str, logdir: Path, runs: int) -> ColdResult:
    """Spawn -> write server/discover at once -> time until its answer is read. One unmeasured
    spawn first, so every measured one finds the page cache and .pyc files warm."""
    res = ColdResult()
    line = discover_line(1)
    for i in range(runs + 1):
        t0 = time.perf_counter()
        srv = StdioServer(name, python, logdir / f"{name}-cold.log")
        try:
            srv.send(line)
            msg = srv.response(1, timeout=30.0)
            dt = (time.perf_counter() - t0) * 1e3
            check_discover(msg, 1)
            if i > 0:
                res.samples_ms.append(dt)
        except (ValueError, TimeoutError, EOFError, OSError, orjson.JSONDecodeError) as e:
            res.errors += 1
            res.error_samples[f"{type(e).__name__}: {e}"[:160]] += 1
        finally:
            srv.close()
    return res


# --------------------------------------------------------------------------- HTTP


@dataclass
class HttpSummary:
    rounds: list[lc.LoadResult] = field(default_factory=list)
    server_cpu: list[float] = field(default_factory=list)  # server CPU s / window s, per round
    verify_text: str = ""
    failure: str = ""

    @property
    def flows_per_s(self) -> float:
        return statistics.median(r.flows_per_s for r in self.rounds) if self.rounds else float("nan")

    @property
    def errors(self) -> int:
        return sum(r.errors for r in self.rounds)

    @property
    def error_samples(self) -> Counter[str]:
        c: Counter[str] = Counter()
        for r in self.rounds:
            c.update(r.error_samples)
        return c

    def latency_ms(self, p: float) -> float:
        lat = [x for r in self.rounds for x in r.latencies]
        return lc.percentile(lat, p) * 1e3

    @property
    def client_cpu(self) -> float:
        return statistics.mean(r.client_cpu for r in self.rounds) if self.rounds else float("nan")

    @property
    def srv_cpu(self) -> float:
        return statistics.mean(self.server_cpu) if self.server_cpu else float("nan")


def load_once(srv: HttpServer, args: argparse.Namespace) -> tuple[lc.LoadResult, float]:
    # Server CPU is sampled around the whole load (warm-up included) and divided by its wall.
    c0, w0 = cpu_seconds(srv.proc.pid), time.perf_counter()
    res = lc.run(lc.run_load(HOST, srv.port, users=args.users, duration=args.duration, warmup=args.warmup))
    c1, w1 = cpu_seconds(srv.proc.pid), time.perf_counter()
    return res, (c1 - c0) / (w1 - w0)


# --------------------------------------------------------------------------- report


def fmt(x: float, spec: str = ".0f") -> str:
    return "n/a" if x != x else format(x, spec)  # NaN -> n/a


def ratio(a: float, b: float) -> float:
    return a / b if b and a == a and b == b else float("nan")


def mark(ok: bool | None) -> str:
    return "" if ok is None else ("meets target" if ok else "BELOW target")


def print_errors(title: str, n: int, samples: Counter[str]) -> None:
    if n:
        print(f"    {title}: {n} errors")
        for msg, k in samples.most_common(5):
            print(f"      {k} x {msg}")


def report(
    args: argparse.Namespace,
    http: dict[str, HttpSummary],
    stdio: dict[str, StdioResult],
    cold: dict[str, ColdResult],
    failures: dict[str, str],
    unavailable: dict[str, str],
) -> bool:
    ok = not unavailable

    def missing(names: tuple[str, ...] | list[str]) -> None:
        for n in names:
            if n in unavailable:
                print(f"  {LABELS[n]:<20}  NOT RUN: {unavailable[n][:70]}")

    w = 78
    print()
    print("=" * w)
    print(
        f"mcp-elicit benchmark  python {platform.python_version()}  cores {os.cpu_count()}  "
        f"{time.strftime('%Y-%m-%d %H:%M:%S')}"
    )
    print("=" * w)

    if http:
        print(
            f"HTTP  closed loop, {args.users} users, keep-alive HTTP/1.1, {fmt(args.duration, '.1f')} s "
            f"after {fmt(args.warmup, '.1f')} s warm-up,\n      {args.rounds} interleaved round(s): "
            "flows/s is the median of rounds, each ratio the median of side-by-side ratios"
        )
        print(
            f"  {'server':<20}{'flows/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'srv CPU':>9}{'cli CPU':>9}"
            f"{'flows/CPU-s':>12}{'errors':>8}"
        )
        for name, h in http.items():
            if h.failure:
                print(f"  {LABELS[name]:<20}  unavailable: {h.failure.splitlines()[0][:50]}")
                continue
            per_cpu = ratio(h.flows_per_s, h.srv_cpu)
            print(
                f"  {LABELS[name]:<20}{fmt(h.flows_per_s):>9}{fmt(h.latency_ms(50), '.2f'):>9}"
                f"{fmt(h.latency_ms(99), '.2f'):>9}{fmt(h.srv_cpu * 100):>8}%{fmt(h.client_cpu * 100):>8}%"
                f"{fmt(per_cpu):>12}{h.errors:>8}"
            )
            if args.rounds > 1:
                print(f"  {'':<20}rounds: " + ", ".join(fmt(r.flows_per_s) for r in h.rounds))
        missing(args.server_list)
        fs = {n: h.flows_per_s for n, h in http.items() if not h.failure and h.rounds}
        rates = {n: [r.flows_per_s for r in h.rounds] for n, h in http.items() if n in fs}
        if "ours" in fs and "sdk" in fs:
            r = paired_ratio(rates["ours"], rates["sdk"])
            print(
                f"  ratio ours/sdk  {fmt(r, '8.2f')}x   target >= {TARGET_HTTP_VS_SDK:.0f}x   "
                f"{mark(r >= TARGET_HTTP_VS_SDK)}"
            )
        if "ours" in fs and "bare" in fs:
            r = paired_ratio(rates["ours"], rates["bare"])
            print(
                f"  ratio ours/bare {fmt(r, '8.2f')}x   target >= {TARGET_HTTP_VS_BARE:.2f}x "
                f"{mark(r >= TARGET_HTTP_VS_BARE)}"
            )
        if "sdk" in fs and "bare" in fs:
            print(f"  (ratio sdk/bare {fmt(ratio(fs['sdk'], fs['bare']), '8.3f')}x)")
        # The load client's ceiling.
        if "bare" in fs:
            b = http["bare"]
            per_flow_us = ratio(b.client_cpu, fs["bare"]) * 1e6
            print(
                f"  load client ceiling: {fmt(fs['bare'])} flows/s against bare "
                f"({fmt(2 * fs['bare'])} requests/s) at {fmt(b.client_cpu * 100)}% client CPU\n"
                f"    = {fmt(per_flow_us, '.1f')} us client CPU per flow, ~{fmt(ratio(1e6, per_flow_us))} "
                "flows/s if the client had a whole core"
            )
            best = max((v for n, v in fs.items() if n != "bare"), default=float("nan"))
            worst_cpu = max((h.client_cpu for n, h in http.items() if n != "bare" and h.rounds), default=0.0)
            if best == best and best >= CLIENT_HEADROOM * fs["bare"]:
                print(
                    f"  WARNING: a server reached >= {CLIENT_HEADROOM:.0%} of the client's ceiling: "
                    "the load client may be the bottleneck"
                )
            elif worst_cpu >= CLIENT_CPU_SATURATED:
                print(
                    "  WARNING: the load client used ~a full core against a server: it may be the bottleneck"
                )
            else:
                print(
                    f"  client headroom OK: best server reached {fmt(100 * ratio(best, fs['bare']))}% "
                    "of the ceiling"
                )
        else:
            print(
                "  load client ceiling: not measured (bare not run); cannot rule out the client "
                "as the bottleneck"
            )
        print()

    if stdio:
        print(
            f"stdio  sequential flows over one spawned server each, {args.stdio_rounds} interleaved "
            "round(s), median of rounds"
        )
        print(f"  {'server':<20}{'flows':>9}{'flows/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}")
        for name, s in stdio.items():
            print(
                f"  {LABELS[name]:<20}{s.flows:>9}{fmt(s.flows_per_s):>9}"
                f"{fmt(lc.percentile(s.latencies, 50) * 1e3, '.3f'):>9}"
                f"{fmt(lc.percentile(s.latencies, 99) * 1e3, '.3f'):>9}{s.errors:>8}"
                + (f"  ({s.note})" if s.note else "")
            )
        missing([n for n in args.server_list if n in STDIO_SERVERS])
        if all(n in stdio and stdio[n].flows for n in ("ours", "sdk")):
            r = paired_ratio(stdio["ours"].round_rates, stdio["sdk"].round_rates)
            print(
                f"  ratio ours/sdk  {fmt(r, '8.2f')}x   target >= {TARGET_STDIO_VS_SDK:.0f}x  "
                f"{mark(r >= TARGET_STDIO_VS_SDK)}   (median of the rounds' side-by-side ratios)"
            )
        print()

    if cold:
        print(f"cold start  spawn (stdio) -> server/discover answer read, median of {args.cold_runs}")
        print(f"  {'server':<20}{'median ms':>10}{'min ms':>9}{'max ms':>9}{'errors':>8}")
        for name, c in cold.items():
            mn = min(c.samples_ms) if c.samples_ms else float("nan")
            mx = max(c.samples_ms) if c.samples_ms else float("nan")
            print(
                f"  {LABELS[name]:<20}{fmt(c.median_ms, '.1f'):>10}{fmt(mn, '.1f'):>9}"
                f"{fmt(mx, '.1f'):>9}{c.errors:>8}"
            )
        missing([n for n in args.server_list if n in STDIO_SERVERS])
        if "ours" in cold and cold["ours"].samples_ms:
            m = cold["ours"].median_ms
            line = f"  ours median {fmt(m, '.1f')} ms   target <= {TARGET_COLD_MS:.0f} ms   "
            print(line + mark(m <= TARGET_COLD_MS if m == m else None))
        if all(n in cold and cold[n].samples_ms for n in ("ours", "sdk")):
            r = ratio(cold["ours"].median_ms, cold["sdk"].median_ms)
            print(
                f"  ratio ours/sdk  {fmt(r, '8.2f')}x   (lower is better; {fmt(ratio(1, r), '.1f')}x faster)"
            )
        print()

    total = 0
    print("errors (every flow is verified; a run with errors is not a valid measurement)")
    for name, h in http.items():
        total += h.errors
        print_errors(f"HTTP {name}", h.errors, h.error_samples)
    for name, s in stdio.items():
        total += s.errors
        print_errors(f"stdio {name}", s.errors, s.error_samples)
    for name, c in cold.items():
        total += c.errors
        print_errors(f"cold start {name}", c.errors, c.error_samples)
    for name, msg in failures.items():
        total += 1
        print(f"    {name}: FAILED\n" + "\n".join("      " + ln for ln in msg.splitlines()[:14]))
    if total == 0:
        print("    none")
    else:
        ok = False
    for name, why in unavailable.items():
        print(f"  NOT RUN: {name}.py cannot start: {why}")
    print("=" * w)
    print(
        "Targets are goals, not asserts. The machine is shared and noisy: compare the ratios "
        "from one run,\nnot absolute numbers across runs."
    )
    return ok


def to_json(
    http: dict[str, HttpSummary],
    stdio: dict[str, StdioResult],
    cold: dict[str, ColdResult],
    failures: dict[str, str],
    args: argparse.Namespace,
) -> dict[str, Any]:
    return {
        "config": {k: v for k, v in vars(args).items() if k != "json"},
        "http": {
            n: {
                "flows_per_s": h.flows_per_s,
                "rounds_flows_per_s": [r.flows_per_s for r in h.rounds],
                "p50_ms": h.latency_ms(50),
                "p99_ms": h.latency_ms(99),
                "server_cpu": h.srv_cpu,
                "client_cpu": h.client_cpu,
                "errors": h.errors,
                "error_samples": dict(h.error_samples),
                "failure": h.failure,
            }
            for n, h in http.items()
        },
        "stdio": {
            n: {
                "flows": s.flows,
                "flows_per_s": s.flows_per_s,
                "rounds_flows_per_s": s.round_rates,
                "errors": s.errors,
                "p50_ms": lc.percentile(s.latencies, 50) * 1e3,
                "p99_ms": lc.percentile(s.latencies, 99) * 1e3,
                "error_samples": dict(s.error_samples),
                "note": s.note,
            }
            for n, s in stdio.items()
        },
        "cold_start": {
            n: {
                "median_ms": c.median_ms,
                "samples_ms": c.samples_ms,
                "errors": c.errors,
                "error_samples": dict(c.error_samples),
            }
            for n, c in cold.items()
        },
        "failures": failures,
    }


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--quick",
        action="store_true",
        help="CI-size run: 2 s per HTTP server after 1 s warm-up, 300 stdio flows, 5 cold starts",
    )
    ap.add_argument(
        "--servers", default="ours,sdk,bare", help="comma-separated subset of ours,sdk,bare (default: all)"
    )
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: http,stdio,cold")
    ap.add_argument("--users", type=int, default=16, help="concurrent HTTP users (default 16)")
    ap.add_argument("--duration", type=float, help="measured seconds per HTTP server (default 10; quick 2)")
    ap.add_argument("--warmup", type=float, help="warm-up seconds per HTTP load (default 2; quick 1)")
    ap.add_argument(
        "--rounds",
        type=int,
        help="HTTP rounds, interleaved ours/sdk/bare; flows/s is the median (default 3; quick 1)",
    )
    ap.add_argument(
        "--stdio-flows", type=int, help="sequential stdio flows per server (default 2000; quick 300)"
    )
    ap.add_argument("--stdio-warmup", type=int, default=20, help="unmeasured stdio flows first (default 20)")
    ap.add_argument(
        "--stdio-rounds",
        type=int,
        help="stdio rounds, interleaved ours/sdk; flows/s is the median (default 5; quick 3)",
    )
    ap.add_argument(
        "--stdio-max-seconds",
        type=float,
        help="cap on one server's measured stdio time (default 30; quick 8)",
    )
    ap.add_argument(
        "--cold-runs", type=int, help="cold starts per server; the median is shown (default 7; quick 5)"
    )
    ap.add_argument(
        "--python", default=sys.executable, help="interpreter for the servers (default: this one)"
    )
    ap.add_argument("--json", metavar="PATH", help="also write the raw results as JSON")
    args = ap.parse_args(argv)
    quick = args.quick
    args.duration = args.duration if args.duration is not None else (2.0 if quick else 10.0)
    args.warmup = args.warmup if args.warmup is not None else (1.0 if quick else 2.0)
    args.stdio_flows = args.stdio_flows if args.stdio_flows is not None else (300 if quick else 2000)
    args.stdio_max_seconds = (
        args.stdio_max_seconds if args.stdio_max_seconds is not None else (8.0 if quick else 30.0)
    )
    args.cold_runs = args.cold_runs if args.cold_runs is not None else (5 if quick else 7)
    args.rounds = args.rounds if args.rounds is not None else (1 if quick else 3)
    args.stdio_rounds = args.stdio_rounds if args.stdio_rounds is not None else (3 if quick else 5)
    args.server_list = server_names(ap, args.servers)
    args.skip_parts = {s.strip() for s in args.skip.split(",") if s.strip()}
    if args.users < 1 or args.duration <= 0 or args.warmup < 0 or args.rounds < 1 or args.cold_runs < 1:
        ap.error("users, duration, rounds and cold-runs must be positive")
    if args.stdio_rounds < 1 or args.stdio_flows < 1:
        ap.error("stdio-rounds and stdio-flows must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logdir = Path(tempfile.mkdtemp(prefix="mcp-elicit-bench-"))
    http: dict[str, HttpSummary] = {}
    stdio: dict[str, StdioResult] = {}
    cold: dict[str, ColdResult] = {}
    failures: dict[str, str] = {}
    say = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731  progress on stderr
    say(f"server logs: {logdir}")
    unavailable: dict[str, str] = {}
    for name in args.server_list:
        why = probe(name, args.python)
        if why:
            unavailable[name] = why
            say(f"{name}: NOT RUN, its library does not import: {why}")
    runnable = [n for n in args.server_list if n not in unavailable]
    if "ours" in runnable:
        say(f"[setup] byte-compiled mcp_elicit as an install does: {byte_compile_ours(args.python)}")

    if "http" not in args.skip_parts:
        servers: dict[str, HttpServer] = {}
        try:
            for name in runnable:
                h = http[name] = HttpSummary()
                try:
                    srv = start_http(name, args.python, logdir)
                except RuntimeError as e:
                    h.failure = str(e)
                    failures[f"HTTP {name} start"] = str(e)
                    say(f"[http] {name}: failed to start")
                    continue
                servers[name] = srv
                try:  # one flow, fully checked, before any load
                    h.verify_text = lc.run(lc.one_flow(HOST, srv.port, title="T-verify"))["text"]
                    say(f"[http] {name} on {HOST}:{srv.port}: verified flow -> {h.verify_text!r}")
                except Exception as e:
                    h.failure = f"verification flow failed: {type(e).__name__}: {e}"
                    failures[f"HTTP {name} verify"] = h.failure + (
                        "\n" + tail(srv.log) if tail(srv.log) else ""
                    )
                    say(f"[http] {name}: verification failed: {e}")
            for rnd in range(args.rounds):
                for name, srv in servers.items():
                    if http[name].failure:
                        continue
                    say(
                        f"[http] round {rnd + 1}/{args.rounds}: {name} "
                        f"({args.warmup:g}+{args.duration:g} s, {args.users} users)"
                    )
                    res, scpu = load_once(srv, args)
                    http[name].rounds.append(res)
                    http[name].server_cpu.append(scpu)
                    if srv.proc.poll() is not None:
                        http[name].failure = f"server exited with code {srv.proc.returncode}"
                        failures[f"HTTP {name}"] = http[name].failure + "\n" + tail(srv.log)
        finally:
            for srv in servers.values():
                stop_process(srv.proc)

    stdio_names = [n for n in runnable if n in STDIO_SERVERS]
    if "stdio" not in args.skip_parts and stdio_names:
        stdio = run_stdio(
            stdio_names,
            args.python,
            logdir,
            args.stdio_flows,
            args.stdio_warmup,
            args.stdio_max_seconds,
            args.stdio_rounds,
            say,
        )
        for name, result in stdio.items():
            if result.flows == 0 and result.errors:
                failures[f"stdio {name}"] = (
                    (result.note or "no flow completed") + "\n" + tail(logdir / f"{name}-stdio.log")
                )

    if "cold" not in args.skip_parts:
        for name in stdio_names:
            say(f"[cold] {name}: 1 + {args.cold_runs} spawns")
            cold[name] = run_cold(name, args.python, logdir, args.cold_runs)
            if not cold[name].samples_ms:
                failures[f"cold start {name}"] = "no successful start\n" + tail(logdir / f"{name}-cold.log")

    ok = report(args, http, stdio, cold, failures, unavailable)
    if args.json:
        data = to_json(http, stdio, cold, failures, args)
        data["unavailable"] = unavailable
        Path(args.json).write_text(json.dumps(data, indent=2, default=str))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
