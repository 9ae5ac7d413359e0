"""Side-by-side benchmark: mcp-elicit (ours) vs the official mcp==2.3.0 SDK vs the official
TypeScript SDK v2 vs a bare ASGI app.

One run measures, for the same tool (`create_ticket(title)` eliciting one boolean form):

  (a) HTTP: a closed-loop load (16 users, keep-alive HTTP/1.1) repeating whole MRTR flows
      (tools/call -> input_required -> retry with inputResponses + requestState -> complete)
      against ours.py, sdk.py and bare.py, all on the same uvicorn settings, and ts_v2.mjs
      (@modelcontextprotocol/server 2.4.0 on Node 24's node:http);
  (b) stdio: the same flow, one at a time, over a spawned server's stdin/stdout;
  (c) cold start: spawn the server in stdio mode -> answer to `server/discover` read;
  (d), (e) the same tool's whole flows on the 2025-11-25 wire, over HTTP and stdio, ours
      against the SDK (`legacy.py`).

Every flow is verified (final result complete, text "Created <title>"); errors are counted and
shown. The machinery the parts share is in `harness.py`. See bench/README.md.

    python bench/run.py            # full run (3 rounds of 10 s per HTTP server after 2 s warm-up)
    python bench/run.py --quick    # CI-size run (~2 s per HTTP server)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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

import legacy  # noqa: E402
import loadclient as lc  # noqa: E402
from harness import (  # noqa: E402
    HOST,
    HTTP_COLUMNS,
    STDIO_COLUMNS,
    HttpSummary,
    StdioResult,
    StdioServer,
    fmt,
    http_json,
    mark,
    paired_ratio,
    print_errors,
    print_http_row,
    print_stdio_row,
    ratio,
    run_http,
    run_stdio,
    stdio_json,
    tail,
)

# The Python servers (cold.py and instructions.py load or count these, and only these).
SERVERS = {
    "ours": HERE / "servers" / "ours.py",
    "sdk": HERE / "servers" / "sdk.py",
    "bare": HERE / "servers" / "bare.py",
}
# The official TypeScript SDK v2 on Node 24 (both installed by scripts/node.sh into .cache/).
NODE_SERVERS = {"tsv2": HERE / "servers" / "ts_v2.mjs"}
ALL_SERVERS = {**SERVERS, **NODE_SERVERS}
DEFAULT_SERVERS = "ours,sdk,tsv2,bare"
# A server of the default set that may be missing without failing the run (Node is optional).
OPTIONAL_SERVERS = frozenset(NODE_SERVERS)
LABELS = {
    "ours": "ours (mcp-elicit)",
    "sdk": "sdk (mcp 2.3.0)",
    "tsv2": "ts-sdk v2 (2.4.0)",  # the installed version replaces 2.4.0 once tsv2_toolchain ran
    "bare": "bare (canned ASGI)",
}
STDIO_SERVERS = ("ours", "sdk", "tsv2")  # bare is HTTP only
PARTS = ("http", "stdio", "cold", *legacy.PARTS)

REPO = HERE.parent
NODE_SETUP_HINT = "run bash scripts/node.sh"
# V8 compiles a stdio server's hot code over its first few hundred flows (tsv2 went from ~300 to
# ~2000 flows/s over its first 300-500 flows, on 2026-12-07): its stdio warm-up is at least this.
NODE_STDIO_WARMUP = 500

# The project's targets: flows/s against the official SDK, and cold start. The bare canned-answer
# app is the floor a correct server cannot beat; ours/bare is printed for reference, with no
# target (the old ">= 0.5x bare" goal is retired).
TARGET_HTTP_VS_SDK = 10.0
TARGET_STDIO_VS_SDK = 10.0
TARGET_COLD_MS = 100.0
# Ours must stay clearly below what the client reaches against bare, else the client may cap it.
CLIENT_HEADROOM = 0.8
CLIENT_CPU_SATURATED = 0.9


# --------------------------------------------------------------------------- processes


def server_names(ap: argparse.ArgumentParser, text: str, choices: dict[str, Path] | None = None) -> list[str]:
    """The servers named in a ``--servers`` value (comma-separated); ``ap.error`` on unknown ones.
    ``choices``: the servers the tool knows (default: the Python servers, ``SERVERS``)."""
    known = SERVERS if choices is None else choices
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        ap.error(f"unknown server(s) {unknown}; choose from {', '.join(known)}")
    return names


def tsv2_toolchain() -> tuple[Path, Path]:
    """The Node 24 binary and the node_modules folder holding the TypeScript SDK v2, as
    scripts/node.sh installs them (or its exports, NODE24_BIN_DIR and TS_SDK_V2_MODULES, name
    them); RuntimeError saying what is missing and how to get it."""
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine()
    )
    bin_dir = os.environ.get("NODE24_BIN_DIR")
    node = (
        Path(bin_dir) / "node"
        if bin_dir
        else REPO / ".cache" / "node24" / "node_modules" / f"node-linux-{arch}" / "bin" / "node"
    )
    modules = Path(os.environ.get("TS_SDK_V2_MODULES") or REPO / ".cache" / "ts-sdk-v2" / "node_modules")
    if not node.is_file():
        raise RuntimeError(f"Node 24 is missing ({node}): {NODE_SETUP_HINT}")
    package = modules / "@modelcontextprotocol" / "server" / "package.json"
    try:
        version = json.loads(package.read_text())["version"]
    except (OSError, ValueError, KeyError):
        raise RuntimeError(f"the TypeScript SDK v2 is missing ({package}): {NODE_SETUP_HINT}") from None
    LABELS["tsv2"] = f"ts-sdk v2 ({version})"
    return node, modules


def interpreter(name: str, python: str) -> str:
    """What runs a server's script: Node 24 for the TypeScript SDK, `python` for the others."""
    return str(tsv2_toolchain()[0]) if name in NODE_SERVERS else python


def probe_tsv2() -> str | None:
    """Why the TypeScript SDK v2 server cannot run (Node or the SDK missing), or None."""
    try:
        node, modules = tsv2_toolchain()
    except RuntimeError as e:
        return str(e)
    os.environ["TS_SDK_V2_MODULES"] = str(modules)  # the servers inherit it (ts_v2.mjs reads it)
    code = (
        "const { pathToFileURL } = await import('node:url');"
        "const m = process.env.TS_SDK_V2_MODULES + '/@modelcontextprotocol/server/dist/';"
        "const s = await import(pathToFileURL(m + 'index.mjs').href);"
        "await import(pathToFileURL(m + 'stdio.mjs').href);"
        "if (!s.createMcpHandler || !s.inputRequired) throw new Error('no createMcpHandler/inputRequired');"
        "console.log(process.versions.node);"
    )
    why, version = node_check(node, code, "the TypeScript SDK v2")
    if why is not None:
        return why
    major = version.split(".", 1)[0]
    if not major.isdigit() or int(major) < 22:
        return f"{node} is Node {version}; the bench pins Node 24: {NODE_SETUP_HINT}"
    return None


def node_check(node: Path, code: str, what: str) -> tuple[str | None, str]:
    """Run ``code`` (an ES module) under ``node``: why it failed (naming ``what``, and how to get
    it: scripts/node.sh) or None, and what it printed."""
    try:
        p = subprocess.run(
            [str(node), "--input-type=module", "-e", code], capture_output=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{node} does not run ({type(e).__name__}: {e}): {NODE_SETUP_HINT}", ""
    if p.returncode != 0:
        lines = p.stderr.decode(errors="replace").strip().splitlines()
        # Node's "SomeError [CODE]: message" line, not the source line it quotes above it.
        named = (ln for ln in lines if ln.split(" ", 1)[0].rstrip(":").endswith("Error"))
        why = next(named, lines[-1] if lines else "")
        return f"{what} does not load under {node}: {why[:160]} ({NODE_SETUP_HINT})", ""
    return None, p.stdout.decode(errors="replace").strip()


def probe(name: str, python: str) -> str | None:
    """Why `name` cannot run at all (its library does not import), or None if it can."""
    if name in NODE_SERVERS:
        return probe_tsv2()
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


def stdio_flow(srv: StdioServer, rid: int, title: str, timeout: float) -> str:
    title_json = orjson.dumps(title)
    srv.send(lc.first_body(rid, title_json) + b"\n")
    key, rs = lc.check_input_required(lc.result_from_message(srv.response(rid, timeout), rid), title)
    srv.send(lc.retry_body(rid + 1, title_json, key, rs) + b"\n")
    return lc.check_complete(lc.result_from_message(srv.response(rid + 1, timeout), rid + 1), title)


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
    command = interpreter(name, python)
    for i in range(runs + 1):
        t0 = time.perf_counter()
        srv = StdioServer(name, ALL_SERVERS[name], command, logdir / f"{name}-cold.log")
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


# --------------------------------------------------------------------------- report


def report(
    args: argparse.Namespace,
    http: dict[str, HttpSummary],
    stdio: dict[str, StdioResult],
    cold: dict[str, ColdResult],
    failures: dict[str, str],
    unavailable: dict[str, str],
    old: legacy.Results,
) -> bool:
    # A server that cannot start fails the run, unless it is optional and was not named.
    ok = not (set(unavailable) - args.optional)

    def missing(names: tuple[str, ...] | list[str]) -> None:
        for n in names:
            if n in unavailable:
                print(f"  {LABELS[n]:<20}  NOT RUN: {unavailable[n][:70]}")

    def beside_ours(rates: dict[str, list[float]]) -> None:
        """ours/tsv2 beside ours/sdk (no target: another language's SDK, for reference)."""
        if "ours" in rates and "tsv2" in rates:
            r = paired_ratio(rates["ours"], rates["tsv2"])
            print(f"  ratio ours/tsv2 {fmt(r, '8.2f')}x   (the TypeScript SDK v2, for reference: no target)")

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
        print(HTTP_COLUMNS)
        for name, h in http.items():
            print_http_row(LABELS[name], h, args.rounds)
        missing(args.server_list)
        fs = {n: h.flows_per_s for n, h in http.items() if not h.failure and h.rounds}
        rates = {n: [r.flows_per_s for r in h.rounds] for n, h in http.items() if n in fs}
        if "ours" in fs and "sdk" in fs:
            r = paired_ratio(rates["ours"], rates["sdk"])
            print(
                f"  ratio ours/sdk  {fmt(r, '8.2f')}x   target >= {TARGET_HTTP_VS_SDK:.0f}x   "
                f"{mark(r >= TARGET_HTTP_VS_SDK)}"
            )
        beside_ours(rates)
        if "ours" in fs and "bare" in fs:
            r = paired_ratio(rates["ours"], rates["bare"])
            print(f"  ratio ours/bare {fmt(r, '8.2f')}x   (the floor, for reference: no target)")
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
        print(STDIO_COLUMNS)
        for name, s in stdio.items():
            print_stdio_row(LABELS[name], s)
        missing([n for n in args.server_list if n in STDIO_SERVERS])
        if all(n in stdio and stdio[n].flows for n in ("ours", "sdk")):
            r = paired_ratio(stdio["ours"].round_rates, stdio["sdk"].round_rates)
            print(
                f"  ratio ours/sdk  {fmt(r, '8.2f')}x   target >= {TARGET_STDIO_VS_SDK:.0f}x  "
                f"{mark(r >= TARGET_STDIO_VS_SDK)}   (median of the rounds' side-by-side ratios)"
            )
        beside_ours({n: s.round_rates for n, s in stdio.items() if s.flows})
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
        if all(n in cold and cold[n].samples_ms for n in ("ours", "tsv2")):
            r = ratio(cold["ours"].median_ms, cold["tsv2"].median_ms)
            print(
                f"  ratio ours/tsv2 {fmt(r, '8.2f')}x   (lower is better; {fmt(ratio(1, r), '.1f')}x faster; "
                "no target)"
            )
        print()

    legacy.report(args, old, LABELS, unavailable)

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
    total += legacy.report_errors(old)
    for name, msg in failures.items():
        total += 1
        print(f"    {name}: FAILED\n" + "\n".join("      " + ln for ln in msg.splitlines()[:14]))
    if total == 0:
        print("    none")
    else:
        ok = False
    for name, why in unavailable.items():
        script = ALL_SERVERS[name].name
        extra = (
            " (optional in the default --servers: the exit status is not affected)"
            if name in args.optional
            else ""
        )
        print(f"  NOT RUN: {script} cannot start: {why}{extra}")
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
    old: legacy.Results,
) -> dict[str, Any]:
    return {
        "config": {k: v for k, v in vars(args).items() if k not in ("json", "optional")},
        "http": {n: http_json(h) for n, h in http.items()},
        "stdio": {n: stdio_json(s) for n, s in stdio.items()},
        "cold_start": {
            n: {
                "median_ms": c.median_ms,
                "samples_ms": c.samples_ms,
                "errors": c.errors,
                "error_samples": dict(c.error_samples),
            }
            for n, c in cold.items()
        },
        **legacy.to_json(old),
        "failures": failures,
    }


# --------------------------------------------------------------------------- main


def part_names(ap: argparse.ArgumentParser, text: str) -> set[str]:
    """The parts named in a ``--skip`` or ``--only`` value; ``ap.error`` on unknown ones."""
    names: set[str] = set()
    for part in (p.strip() for p in text.split(",")):
        if part == "legacy":
            names.update(legacy.PARTS)
        elif part in PARTS:
            names.add(part)
        elif part:
            ap.error(f"unknown part {part!r}; choose from {', '.join(PARTS)} or legacy")
    return names


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--quick",
        action="store_true",
        help="CI-size run: 2 s per HTTP server after 1 s warm-up, 300 stdio flows, 5 cold starts",
    )
    ap.add_argument(
        "--servers",
        help=f"comma-separated subset of {','.join(ALL_SERVERS)} (default: all; tsv2 needs Node 24 and "
        "the TypeScript SDK v2 from scripts/node.sh, and is skipped with a note when they are missing)",
    )
    ap.add_argument(
        "--skip",
        default="",
        help=f"comma-separated parts to skip: {','.join(PARTS)} (legacy: both legacy parts)",
    )
    ap.add_argument("--only", default="", help="comma-separated parts to run, nothing else (as --skip)")
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
    ap.add_argument(
        "--stdio-warmup",
        type=int,
        default=20,
        help=f"unmeasured stdio flows first (default 20; tsv2 at least {NODE_STDIO_WARMUP}, for V8)",
    )
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
    # A server missing from the default set (no Node) does not fail the run; one named does.
    args.optional = OPTIONAL_SERVERS if args.servers is None else frozenset()
    args.servers = args.servers if args.servers is not None else DEFAULT_SERVERS
    args.server_list = server_names(ap, args.servers, ALL_SERVERS)
    args.parts = (part_names(ap, args.only) if args.only else set(PARTS)) - part_names(ap, args.skip)
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
            say(f"{name}: NOT RUN, it cannot start: {why}")
    runnable = [n for n in args.server_list if n not in unavailable]
    if "ours" in runnable:
        say(f"[setup] byte-compiled mcp_elicit as an install does: {byte_compile_ours(args.python)}")

    if "http" in args.parts and runnable:
        http = run_http(
            {n: ALL_SERVERS[n] for n in runnable},
            interpreter={n: interpreter(n, args.python) for n in runnable},
            logdir=logdir,
            verify=lambda port: lc.run(lc.one_flow(HOST, port, title="T-verify"))["text"],
            load=lambda port: lc.run_load(
                HOST, port, users=args.users, duration=args.duration, warmup=args.warmup
            ),
            rounds=args.rounds,
            describe=f"{args.warmup:g}+{args.duration:g} s, {args.users} users",
            say=say,
            failures=failures,
        )

    stdio_names = [n for n in runnable if n in STDIO_SERVERS]
    stdio_warmup = {
        n: max(args.stdio_warmup, NODE_STDIO_WARMUP) if n in NODE_SERVERS else args.stdio_warmup
        for n in runnable
    }
    if "stdio" in args.parts and stdio_names:

        def spawn(name: str) -> Callable[[], StdioServer]:
            command = interpreter(name, args.python)
            return lambda: StdioServer(name, ALL_SERVERS[name], command, logdir / f"{name}-stdio.log")

        stdio = run_stdio(
            {n: spawn(n) for n in stdio_names},
            stdio_flow,
            flows=args.stdio_flows,
            warmup=stdio_warmup,
            max_seconds=args.stdio_max_seconds,
            rounds=args.stdio_rounds,
            say=say,
        )
        for name, result in stdio.items():
            if result.flows == 0 and result.errors:
                failures[f"stdio {name}"] = (
                    (result.note or "no flow completed") + "\n" + tail(logdir / f"{name}-stdio.log")
                )

    if "cold" in args.parts:
        for name in stdio_names:
            say(f"[cold] {name}: 1 + {args.cold_runs} spawns")
            cold[name] = run_cold(name, args.python, logdir, args.cold_runs)
            if not cold[name].samples_ms:
                failures[f"cold start {name}"] = "no successful start\n" + tail(logdir / f"{name}-cold.log")

    old = legacy.run(
        runnable,
        args.parts,
        args,
        logdir,
        say,
        failures,
        commands={n: interpreter(n, args.python) for n in runnable},
        stdio_warmup=stdio_warmup,
    )

    ok = report(args, http, stdio, cold, failures, unavailable, old)
    if args.json:
        data = to_json(http, stdio, cold, failures, args, old)
        data["unavailable"] = unavailable
        Path(args.json).write_text(json.dumps(data, indent=2, default=str))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
