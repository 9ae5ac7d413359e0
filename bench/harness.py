"""What every part of the benchmark shares: server processes, stdio servers, interleaved rounds,
side-by-side ratios and the report's number formatting.

`run.py` (the 2026-07-28 parts) and `legacy.py` (the 2025-11-25 parts) measure different flows
with this one machinery, so their figures are taken the same way: servers started and stopped by
their own handles, CPU read from `/proc`, rounds interleaved so that a slow spell of the machine
hits every server, and a ratio that is the median of the rounds' side-by-side ratios.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import statistics
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

import loadclient as lc

HOST = "127.0.0.1"  # loopback only, always


# --------------------------------------------------------------------------- processes


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


def start_http(name: str, script: Path, interpreter: str, log: Path, timeout: float = 30.0) -> HttpServer:
    """`interpreter script PORT` on a free port, once it listens (RuntimeError if it does not).
    `interpreter`: Python, or Node 24 for `ts_v2.mjs`."""
    port = free_port()
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            [interpreter, str(script), str(port)], stdin=subprocess.DEVNULL, stdout=fh, stderr=fh
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{script.name} exited with code {proc.returncode} on start:\n{tail(log)}")
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=0.5):
            return HttpServer(name, port, proc, log)
        time.sleep(0.05)
    stop_process(proc)
    raise RuntimeError(f"{script.name} did not listen on {HOST}:{port} within {timeout:.0f} s:\n{tail(log)}")


# --------------------------------------------------------------------------- stdio


class StdioServer:
    """A spawned `interpreter script stdio` with a bounded line reader (select + os.read);
    `interpreter`: Python, or Node 24 for `ts_v2.mjs`."""

    def __init__(
        self, name: str, script: Path, interpreter: str, log: Path, prefix: Sequence[str] = ()
    ) -> None:
        """``prefix``: a command the server runs under (``instructions.py``: valgrind)."""
        self.name = name
        self.log = log
        with log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [*prefix, interpreter, str(script), "stdio"],
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

    def message(self, timeout: float) -> Any:
        """The next JSON-RPC message, whatever it is (blank lines skipped)."""
        while True:
            line = self.readline(timeout)
            if line.strip():
                return orjson.loads(line)

    def response(self, rid: int, timeout: float) -> dict[str, Any]:
        """The JSON-RPC response for `rid`, skipping notifications."""
        while True:
            msg = self.message(timeout)
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


# One whole flow over a stdio server: (server, request id, title, timeout) -> the final text;
# ValueError (or a JSON error) for a flow that is wrong, TimeoutError/EOFError/OSError when the
# server cannot go on. Request ids are even and grow by 2, so a flow may also use `rid + 1`.
StdioFlow = Callable[[StdioServer, int, str, float], str]
# What a server needs once, before any flow (the 2025-11-25 handshake); raises as a flow does.
StdioSetup = Callable[[StdioServer], None]


class _StdioRun:
    """One server's side of the interleaved stdio measurement."""

    def __init__(self, srv: StdioServer, flow: StdioFlow, setup: StdioSetup | None) -> None:
        self.srv = srv
        self.flow = flow
        self.setup = setup
        self.res = StdioResult()
        self.rid = 0
        self.done = False

    def flows(self, count: int, *, measured: bool, max_seconds: float) -> None:
        """Run `count` sequential flows; measured ones add to the result and make one round."""
        res = self.res
        t_start = time.perf_counter()
        done_here = 0
        try:
            if self.setup is not None:
                setup, self.setup = self.setup, None
                try:
                    setup(self.srv)
                except (ValueError, orjson.JSONDecodeError) as e:
                    raise OSError(f"set-up failed: {e}") from None
            for _ in range(count):
                self.rid += 2
                t0 = time.perf_counter()
                try:
                    self.flow(self.srv, self.rid, f"T-0-{self.rid}", 10.0)
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


def run_stdio(
    spawn: Mapping[str, Callable[[], StdioServer]],
    flow: StdioFlow,
    *,
    flows: int,
    warmup: int | Mapping[str, int],
    max_seconds: float,
    rounds: int,
    say: Callable[[str], None],
    setup: StdioSetup | None = None,
    tag: str = "stdio",
) -> dict[str, StdioResult]:
    """Sequential flows over one spawned stdio server per name, in `rounds` interleaved rounds
    (ours, sdk, ours, sdk...): a slow spell of the machine then hits both servers, not one.
    Each server stops at `flows` measured flows or `max_seconds` of measured time. `warmup`:
    the unmeasured flows first, for every server or by name."""
    runs: dict[str, _StdioRun] = {}
    try:
        for name, start in spawn.items():
            runs[name] = _StdioRun(start(), flow, setup)
            first = warmup if isinstance(warmup, int) else warmup[name]
            say(f"[{tag}] {name}: {first} warm-up flows")
            runs[name].flows(first, measured=False, max_seconds=max_seconds)
        per_round = max(1, -(-flows // rounds))
        for rnd in range(rounds):
            for name, run in runs.items():
                if run.done:
                    continue
                say(f"[{tag}] round {rnd + 1}/{rounds}: {name}, {per_round} sequential flows")
                run.flows(per_round, measured=True, max_seconds=max_seconds)
    finally:
        for run in runs.values():
            run.srv.close()
    return {name: run.res for name, run in runs.items()}


def paired_ratio(ours: list[float], other: list[float]) -> float:
    """Median over rounds of ours/other flows/s, each pair measured side by side (in the same
    time window, so a slow spell of the machine hits both)."""
    pairs = [a / b for a, b in zip(ours, other, strict=False) if b > 0]
    return statistics.median(pairs) if pairs else float("nan")


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


def load_once(srv: HttpServer, load: Coroutine[Any, Any, lc.LoadResult]) -> tuple[lc.LoadResult, float]:
    """Run one load against `srv`: its result, and the server's CPU share over it."""
    # Server CPU is sampled around the whole load (warm-up included) and divided by its wall.
    c0, w0 = cpu_seconds(srv.proc.pid), time.perf_counter()
    res = lc.run(load)
    c1, w1 = cpu_seconds(srv.proc.pid), time.perf_counter()
    return res, (c1 - c0) / (w1 - w0)


def run_http(
    scripts: Mapping[str, Path],
    *,
    interpreter: str | Mapping[str, str],
    logdir: Path,
    verify: Callable[[int], str],
    load: Callable[[int], Coroutine[Any, Any, lc.LoadResult]],
    rounds: int,
    describe: str,
    say: Callable[[str], None],
    failures: dict[str, str],
    tag: str = "http",
    title: str = "HTTP",
) -> dict[str, HttpSummary]:
    """Start every server, check one flow on each (`verify(port)` returns its final text or
    raises), then run `rounds` interleaved loads (ours, sdk, bare, ours...; `load(port)`). A
    server that fails to start, to verify or to stay up is reported in `failures` (under
    `title`) and skipped; `tag` names the progress lines and the logs. `interpreter` runs
    every script, or maps each server to what runs its script (Node for the TypeScript SDK)."""
    http: dict[str, HttpSummary] = {}
    servers: dict[str, HttpServer] = {}
    try:
        for name, script in scripts.items():
            h = http[name] = HttpSummary()
            try:
                runner = interpreter if isinstance(interpreter, str) else interpreter[name]
                srv = start_http(name, script, runner, logdir / f"{name}-{tag}.log")
            except RuntimeError as e:
                h.failure = str(e)
                failures[f"{title} {name} start"] = str(e)
                say(f"[{tag}] {name}: failed to start")
                continue
            servers[name] = srv
            try:  # one flow, fully checked, before any load
                h.verify_text = verify(srv.port)
                say(f"[{tag}] {name} on {HOST}:{srv.port}: verified flow -> {h.verify_text!r}")
            except Exception as e:
                h.failure = f"verification flow failed: {type(e).__name__}: {e}"
                failures[f"{title} {name} verify"] = h.failure + (
                    "\n" + tail(srv.log) if tail(srv.log) else ""
                )
                say(f"[{tag}] {name}: verification failed: {e}")
        for rnd in range(rounds):
            for name, srv in servers.items():
                if http[name].failure:
                    continue
                say(f"[{tag}] round {rnd + 1}/{rounds}: {name} ({describe})")
                res, scpu = load_once(srv, load(srv.port))
                http[name].rounds.append(res)
                http[name].server_cpu.append(scpu)
                if srv.proc.poll() is not None:
                    http[name].failure = f"server exited with code {srv.proc.returncode}"
                    failures[f"{title} {name}"] = http[name].failure + "\n" + tail(srv.log)
    finally:
        for srv in servers.values():
            stop_process(srv.proc)
    return http


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


HTTP_COLUMNS = (
    f"  {'server':<20}{'flows/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'srv CPU':>9}{'cli CPU':>9}"
    f"{'flows/CPU-s':>12}{'errors':>8}"
)


def print_http_row(label: str, h: HttpSummary, rounds: int) -> None:
    """One server's line of an HTTP table (see HTTP_COLUMNS), and its rounds when there are several."""
    if h.failure:
        print(f"  {label:<20}  unavailable: {h.failure.splitlines()[0][:50]}")
        return
    per_cpu = ratio(h.flows_per_s, h.srv_cpu)
    print(
        f"  {label:<20}{fmt(h.flows_per_s):>9}{fmt(h.latency_ms(50), '.2f'):>9}"
        f"{fmt(h.latency_ms(99), '.2f'):>9}{fmt(h.srv_cpu * 100):>8}%{fmt(h.client_cpu * 100):>8}%"
        f"{fmt(per_cpu):>12}{h.errors:>8}"
    )
    if rounds > 1:
        print(f"  {'':<20}rounds: " + ", ".join(fmt(r.flows_per_s) for r in h.rounds))


STDIO_COLUMNS = f"  {'server':<20}{'flows':>9}{'flows/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}"


def print_stdio_row(label: str, s: StdioResult) -> None:
    print(
        f"  {label:<20}{s.flows:>9}{fmt(s.flows_per_s):>9}"
        f"{fmt(lc.percentile(s.latencies, 50) * 1e3, '.3f'):>9}"
        f"{fmt(lc.percentile(s.latencies, 99) * 1e3, '.3f'):>9}{s.errors:>8}"
        + (f"  ({s.note})" if s.note else "")
    )


def http_json(h: HttpSummary) -> dict[str, Any]:
    return {
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


def stdio_json(s: StdioResult) -> dict[str, Any]:
    return {
        "flows": s.flows,
        "flows_per_s": s.flows_per_s,
        "rounds_flows_per_s": s.round_rates,
        "errors": s.errors,
        "p50_ms": lc.percentile(s.latencies, 50) * 1e3,
        "p99_ms": lc.percentile(s.latencies, 99) * 1e3,
        "error_samples": dict(s.error_samples),
        "note": s.note,
    }
