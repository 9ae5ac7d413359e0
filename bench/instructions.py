"""Instructions per HTTP flow, server by server, counted by valgrind (callgrind) in the real server.

Time on this shared 2-core machine swings by 10-30% from one run to the next; the number of
machine instructions a server executes per flow does not. This runs each server on uvicorn
under `valgrind --tool=callgrind` with instrumentation off, warms it up with the load client,
switches counting on, drives a fixed number of flows (16 users, keep-alive), dumps the counts
and divides. The ratio bare/ours is the HTTP ratio the time-based benchmark aims at, as far as
time follows instructions (it does within ~15% here; memory stalls make up the rest).

    python bench/instructions.py                     # ours and bare, 1500 flows each
    python bench/instructions.py --servers ours,sdk,bare --flows 500
    python bench/instructions.py --legacy --servers ours,sdk --flows 500   # 2025-11-25 flows
    python bench/instructions.py --stdio --servers ours,sdk --flows 300    # over stdio
    python bench/instructions.py --stdio --legacy --servers ours,sdk --flows 300

With `--legacy` the flows are whole 2025-11-25 ones (`legacyclient.py`: sessions, the question on
the call's SSE stream, the answer POSTed back) against `legacy.py`'s servers; each counted run
opens its users' sessions anew, so the count includes one `initialize` per user. With `--stdio`
one spawned `server.py stdio` process runs the flows one at a time, as `run.py`'s stdio parts do
(on 2025-11-25 after one `initialize`, not counted).

Needs valgrind (Debian package `valgrind`); a server runs about 50 times slower under it, so
keep the flow count modest. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import legacy
import legacyclient as llc
import loadclient as lc
import run
from harness import HOST, StdioServer, free_port, stop_process, tail
from run import LABELS, SERVERS, byte_compile_ours, server_names

START_TIMEOUT = 120.0  # seconds: importing under valgrind is slow
DUMP_TIMEOUT = 60.0


def _callgrind_control(*args: str) -> None:
    subprocess.run(["callgrind_control", *args], capture_output=True, timeout=60, check=True)


def _dumped_instructions(workdir: Path, name: str) -> int:
    """The instructions counted in the dump ``callgrind_control --dump`` asked of ``name``'s
    server, once callgrind has written it."""
    deadline = time.monotonic() + DUMP_TIMEOUT
    parts = sorted(workdir.glob(f"callgrind.{name}.*"))
    while not parts and time.monotonic() < deadline:
        time.sleep(0.2)
        parts = sorted(workdir.glob(f"callgrind.{name}.*"))
    if not parts:
        raise RuntimeError(f"{name}: callgrind wrote no dump")
    time.sleep(0.5)  # let the dump finish writing
    return _total_instructions(parts[-1])


def _total_instructions(path: Path) -> int:
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no totals in {path}")


def _wait_for_port(proc: subprocess.Popen[bytes], port: int, log: Path, name: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name}.py exited with code {proc.returncode} on start:\n{tail(log)}")
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=0.5):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{name}.py did not listen on {HOST}:{port} within {START_TIMEOUT:.0f} s")


def measure(
    name: str, python: str, workdir: Path, flows: int, users: int, *, old: bool = False
) -> tuple[float, int]:
    """(instructions per flow, flows counted) for one server (`old`: on the 2025-11-25 wire)."""
    load = llc.run_load if old else lc.run_load
    script = legacy.SERVERS[name] if old else SERVERS[name]
    port = free_port()
    log = workdir / f"{name}.log"
    out = workdir / f"callgrind.{name}"
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",  # start-up and warm-up are not counted
        f"--callgrind-out-file={out}",
        python,
        str(script),
        str(port),
    ]
    with log.open("wb") as fh:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=fh, stderr=fh)
    try:
        _wait_for_port(proc, port, log, name)
        warm = lc.run(load(HOST, port, users=users, duration=60.0, warmup=0.0, max_flows=flows // 5))
        if warm.errors:
            raise RuntimeError(f"{name}: {warm.errors} errors in the warm-up: {dict(warm.error_samples)}")
        _callgrind_control("--instr=on", str(proc.pid))
        result = lc.run(load(HOST, port, users=users, duration=600.0, warmup=0.0, max_flows=flows))
        _callgrind_control("--dump", str(proc.pid))
        if result.errors:
            raise RuntimeError(f"{name}: {result.errors} errors: {dict(result.error_samples)}")
        return _dumped_instructions(workdir, name) / result.flows_total, result.flows_total
    finally:
        stop_process(proc, timeout=30.0)


def measure_stdio(
    name: str, python: str, workdir: Path, flows: int, *, old: bool = False
) -> tuple[float, int]:
    """(instructions per flow, flows counted) for one stdio server, flows one at a time."""
    script = legacy.SERVERS[name] if old else SERVERS[name]
    out = workdir / f"callgrind.{name}"
    valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
    srv = StdioServer(name, script, python, workdir / f"{name}.log", prefix=valgrind)
    flow = legacy.stdio_flow if old else run.stdio_flow
    try:
        if old:
            legacy.stdio_setup(srv, START_TIMEOUT)
        rid = 10
        for n in range(max(flows // 5, 5) + flows):
            if n == max(flows // 5, 5):  # warmed up: count from here
                _callgrind_control("--instr=on", str(srv.proc.pid))
            flow(srv, rid, f"T-{n}", START_TIMEOUT)
            rid += 2
        _callgrind_control("--dump", str(srv.proc.pid))
        return _dumped_instructions(workdir, name) / flows, flows
    except (TimeoutError, EOFError, ValueError) as exc:
        raise RuntimeError(f"{name} stdio: {exc}\n{tail(srv.log)}") from None
    finally:
        srv.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default="ours,bare", help="comma-separated subset of ours,sdk,bare")
    ap.add_argument("--flows", type=int, default=1500, help="counted flows per server (default 1500)")
    ap.add_argument("--users", type=int, default=16, help="concurrent users (default 16)")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs the servers")
    ap.add_argument("--legacy", action="store_true", help="whole 2025-11-25 flows (servers ours, sdk)")
    ap.add_argument("--stdio", action="store_true", help="over stdio, one flow at a time (ours, sdk)")
    args = ap.parse_args(argv)
    names = server_names(ap, args.servers)
    if args.legacy and not set(names) <= set(legacy.SERVERS):
        ap.error(f"--legacy counts {', '.join(legacy.SERVERS)} only (bare has no 2025-11-25 server)")
    if args.stdio and "bare" in names:
        ap.error("--stdio counts ours and sdk only (bare has no stdio server)")
    if args.flows < 50:
        ap.error("--flows must be at least 50")
    missing = [tool for tool in ("valgrind", "callgrind_control") if shutil.which(tool) is None]
    if missing:
        print(f"needs {' and '.join(missing)}: apt-get install valgrind", file=sys.stderr)
        return 2
    if "ours" in names:
        print(f"[setup] byte-compiled mcp_elicit in {byte_compile_ours(args.python)}", flush=True)
    per_flow: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="mcp-elicit-instr-") as tmp:
        for name in names:
            wire = "2025-11-25" if args.legacy else "2026-07-28"
            how = "over stdio" if args.stdio else f"{args.users} users"
            print(f"[callgrind] {name}: {args.flows} {wire} flows, {how}", flush=True)
            try:
                if args.stdio:
                    per_flow[name], counted = measure_stdio(
                        name, args.python, Path(tmp), args.flows, old=args.legacy
                    )
                else:
                    per_flow[name], counted = measure(
                        name, args.python, Path(tmp), args.flows, args.users, old=args.legacy
                    )
            except (RuntimeError, subprocess.SubprocessError, OSError) as exc:
                print(f"[callgrind] {name} failed: {exc}", file=sys.stderr)
                return 1
            print(f"[callgrind] {name}: {per_flow[name] / 1000:.0f}k instructions per flow ({counted} flows)")
    print()
    print(f"  {'server':22s} {'instructions/flow':>18s}")
    for name in names:
        print(f"  {LABELS[name]:22s} {per_flow[name] / 1000:17.0f}k")
    if "ours" in per_flow and "bare" in per_flow:
        ratio = per_flow["bare"] / per_flow["ours"]
        print(f"  bare/ours {ratio:.2f}x by instructions (the floor, for reference)")
    if "ours" in per_flow and "sdk" in per_flow:
        print(f"  sdk/ours  {per_flow['sdk'] / per_flow['ours']:.1f}x by instructions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
