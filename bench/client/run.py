"""Client-side benchmark: our client engine vs the official SDK client (mcp==2.3.0 ``Client``), and
the official TypeScript SDK v2 client (``tsv2``: npm ``@modelcontextprotocol/client`` 2.4.0 on
Node 24, installed by ``bash scripts/node.sh``) beside them for reference.

Both clients drive the SAME server (``bench/servers/ours.py`` by default; ``--server sdk`` for
``bench/servers/sdk.py``) through whole elicitation flows -- ``tools/call create_ticket`` ->
``input_required`` (one form) -> the answer ``{"ok": true}`` -> retry with ``inputResponses`` and the
echoed ``requestState`` -> ``complete``, checked to say ``Created <title>`` -- over stdio (the
client spawns the server) and Streamable HTTP (one server on 127.0.0.1, shared).

Measured:

  (a) per-flow client CPU: each client runs in its own worker process; after warm-up flows, the
      worker's own CPU time (``time.process_time``: user + system of that process, not of the
      server, which is a separate process) over N sequential flows, divided by N. Lower is better.
      Target: ours >= 3x smaller than the SDK's.
  (b) ``import`` time: median wall time of fresh ``python -c "import mcp_elicit.client"`` processes
      (and ``python -c pass`` and ``import mcp`` for scale).
  (c) start-up to first request: spawn a fresh process that imports the client and connects; the
      time until its first request reaches the server (HTTP: the first bytes arrive at a socket
      this script listens on; stdio: the first line arrives at a ``sh`` stand-in server that
      timestamps it). Target: ours <= 150 ms median.

tsv2 (``ts_v2_client.mjs``, a Node worker) connects with ``versionNegotiation: {mode: "auto"}``,
so it speaks 2026-07-28 (its first request is ``server/discover``); it is measured the same way
(``process.cpuUsage()`` for (a), ``node -e`` for (b) and (c)). ``tsv2/ours`` is printed beside
``sdk/ours`` with no target. When Node or the SDK is missing, tsv2 is reported as not run and the
exit status is unaffected, unless ``--clients`` named it.

    python bench/client/run.py              # 300 flows per case, 11 spawns for (b) and (c)
    python bench/client/run.py --quick      # 100 flows, 5 spawns
    python bench/client/run.py --clients ours,tsv2
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
REPO = BENCH.parent
SERVERS = {"ours": BENCH / "servers" / "ours.py", "sdk": BENCH / "servers" / "sdk.py"}
HOST = "127.0.0.1"  # loopback only
TARGET_RATIO = 3.0
TARGET_STARTUP_MS = 150.0
CLIENTS = ("ours", "sdk", "tsv2")
# tsv2 may be missing (Node is optional) without failing a run that did not name it.
OPTIONAL_CLIENTS = frozenset({"tsv2"})
TS_WORKER = HERE / "ts_v2_client.mjs"
TS_CLIENT_DIST = Path("@modelcontextprotocol") / "client" / "dist"


# ----------------------------------------------------------------------------- the workers
async def _flows_ours(target: str | list[str], flows: int, warmup: int) -> dict[str, float]:
    from mcp_elicit.client import Answer, Client, FormQuestion, UrlQuestion

    class Yes:
        modes = frozenset({"form"})

        async def answer_form(self, question: FormQuestion) -> Answer:
            return Answer("accept", {"ok": True})

        async def answer_url(self, question: UrlQuestion) -> Answer:
            return Answer("decline")

    async with Client.connect(target, answerer=Yes(), stderr="devnull") as client:

        async def flow(i: int) -> None:
            result = await client.call_tool("create_ticket", {"title": f"T-{i}"})
            if result.text != f"Created T-{i}":
                raise RuntimeError(f"flow {i}: unexpected result {result.raw!r}")

        return await _measure(flow, flows, warmup)


async def _flows_sdk(target: str | list[str], flows: int, warmup: int) -> dict[str, float]:
    import mcp_types as types
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def yes(context: Any, params: Any) -> Any:
        return types.ElicitResult(action="accept", content={"ok": True})

    server: Any = target
    if isinstance(target, list):
        server = StdioServerParameters(command=target[0], args=target[1:])
    async with Client(server, elicitation_callback=yes) as client:

        async def flow(i: int) -> None:
            result = await client.call_tool("create_ticket", {"title": f"T-{i}"})
            text = result.content[0].text  # type: ignore[union-attr]
            if text != f"Created T-{i}":
                raise RuntimeError(f"flow {i}: unexpected result {result!r}")

        return await _measure(flow, flows, warmup)


async def _measure(flow: Any, flows: int, warmup: int) -> dict[str, float]:
    for i in range(warmup):
        await flow(-1 - i)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for i in range(flows):
        await flow(i)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {"cpu_us": cpu / flows * 1e6, "wall_us": wall / flows * 1e6, "flows": flows}


def worker(args: argparse.Namespace) -> None:
    target: str | list[str] = json.loads(args.target)
    run = _flows_ours if args.worker == "ours" else _flows_sdk
    print(json.dumps(asyncio.run(run(target, args.flows, args.warmup))))


# ----------------------------------------------------------------------------- helpers
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def start_http_server(script: Path, python: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        [python, str(script), str(port)], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 30
    while True:
        if process.poll() is not None:
            raise RuntimeError(
                f"{script.name} exited: {process.stderr.read().decode() if process.stderr else ''}"
            )
        try:
            socket.create_connection((HOST, port), timeout=0.2).close()
            return process, f"http://{HOST}:{port}/mcp"
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"{script.name} did not listen on {HOST}:{port}") from None
            time.sleep(0.05)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


def run_worker(
    python: str, client: str, target: str | list[str], flows: int, warmup: int
) -> dict[str, float]:
    argv = [python, __file__, "--worker", client, "--target", json.dumps(target)]
    argv += ["--flows", str(flows), "--warmup", str(warmup)]
    out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"{client} worker failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def run_node_worker(
    node: Path, modules: Path, target: str | list[str], flows: int, warmup: int
) -> dict[str, float]:
    """tsv2's flows in ``ts_v2_client.mjs`` (same arguments and JSON line as the Python workers)."""
    argv = [str(node), str(TS_WORKER), json.dumps(target), str(flows), str(warmup)]
    env = {**os.environ, "TS_SDK_V2_MODULES": str(modules)}
    out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"tsv2 worker failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _bench_run() -> Any:
    """bench/run.py as a module (``bench_run``: its name ``run`` is this script's too), for its
    TypeScript SDK v2 toolchain helpers ``tsv2_toolchain`` and ``probe_tsv2``."""
    if "bench_run" not in sys.modules:
        spec = importlib.util.spec_from_file_location("bench_run", BENCH / "run.py")
        if spec is None or spec.loader is None:
            raise RuntimeError(f"cannot load {BENCH / 'run.py'}")
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench_run"] = module
        spec.loader.exec_module(module)
    return sys.modules["bench_run"]


def tsv2_setup() -> tuple[Path, Path] | str:
    """Node 24 and the node_modules folder holding the TypeScript SDK v2 client, or why they
    cannot run (ending with what to do: run bash scripts/node.sh)."""
    bench_run = _bench_run()
    why = bench_run.probe_tsv2()  # Node 24 runs and the SDK (its server package) loads
    if why:
        return str(why)
    node, modules = bench_run.tsv2_toolchain()
    dist = modules / TS_CLIENT_DIST
    code = (
        f"const c = await import({(dist / 'index.mjs').as_uri()!r});"
        f"await import({(dist / 'stdio.mjs').as_uri()!r});"
        "if (!c.Client || !c.StreamableHTTPClientTransport) throw new Error('no Client');"
    )
    failed, _printed = bench_run.node_check(node, code, "the TypeScript SDK v2 client")
    return (node, modules) if failed is None else str(failed)


def median_spawn_ms(argv: list[str], runs: int) -> float:
    subprocess.run(argv, check=True, capture_output=True)  # warm the page cache and .pyc files
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


# The start-up probes: import the client, connect, send the first request (discover).
_PROBE_OURS = """
import asyncio, sys
from mcp_elicit.client import Client
async def main():
    target = sys.argv[1] if sys.argv[1].startswith("http") else sys.argv[1:]
    async with Client.connect(target, connect_timeout=5):
        pass
try:
    asyncio.run(main())
except Exception:
    pass
"""
_PROBE_SDK = """
import asyncio, sys
from mcp import Client
from mcp.client.stdio import StdioServerParameters
async def main():
    http = sys.argv[1].startswith("http")
    target = sys.argv[1] if http else StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with Client(target, read_timeout_seconds=5):
        pass
try:
    asyncio.run(main())
except BaseException:
    pass
"""
# tsv2: the SDK's client module (and, for stdio, its stdio transport) imported by a fresh Node,
# connecting in 'auto' mode: its first request is server/discover (over stdio the SDK sends it
# from a short-lived process of its own first; that is still the first request to arrive).
_PROBE_TSV2 = """
const { pathToFileURL } = await import("node:url");
const dist = process.env.TS_SDK_V2_MODULES + "/@modelcontextprotocol/client/dist/";
const { Client, StreamableHTTPClientTransport } = await import(pathToFileURL(dist + "index.mjs").href);
const [first, ...rest] = process.argv.slice(1);
let transport;
if (first.startsWith("http")) {
  transport = new StreamableHTTPClientTransport(new URL(first));
} else {
  const { StdioClientTransport } = await import(pathToFileURL(dist + "stdio.mjs").href);
  transport = new StdioClientTransport({ command: first, args: rest });
}
const client = new Client({ name: "probe", version: "0" }, { versionNegotiation: { mode: "auto" } });
try { await client.connect(transport); await client.close(); } catch {}
process.exit(0);
"""


def startup_http_ms(command: list[str], runs: int) -> float:
    """Spawn ``command`` + [url] -> the first bytes of the first request arrive at our listening
    socket. ``command``: a probe, e.g. ``[python, "-c", probe]``."""
    samples = []
    for attempt in range(runs + 1):
        with socket.socket() as listener:
            listener.bind((HOST, 0))
            listener.listen(4)
            listener.settimeout(20)
            url = f"http://{HOST}:{listener.getsockname()[1]}/mcp"
            started = time.perf_counter()
            process = subprocess.Popen([*command, url], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                conn, _ = listener.accept()
                with conn:
                    conn.settimeout(20)
                    conn.recv(1)
                    arrived = time.perf_counter()
            finally:
                process.kill()
                process.wait()
        if attempt:  # the first spawn only warms caches
            samples.append((arrived - started) * 1000)
    return statistics.median(samples)


def startup_stdio_ms(command: list[str], runs: int) -> float:
    """Spawn ``command`` + [the server's argv] -> the first line arrives at a ``sh`` stand-in
    server, which records the time."""
    samples = []
    with tempfile.TemporaryDirectory() as folder:
        stamp = Path(folder) / "arrived"
        server = ["/bin/sh", "-c", f'read -r line; date +%s%N > "{stamp}"; sleep 5']
        for attempt in range(runs + 1):
            stamp.unlink(missing_ok=True)
            started_ns = time.time_ns()
            process = subprocess.Popen(
                [*command, *server], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            deadline = time.monotonic() + 20
            while not (stamp.exists() and stamp.read_text().strip()) and time.monotonic() < deadline:
                time.sleep(0.002)
            process.kill()
            process.wait()
            if attempt and stamp.exists():
                samples.append((int(stamp.read_text()) - started_ns) / 1e6)
    return statistics.median(samples)


# ----------------------------------------------------------------------------- the run
def fmt_ratio(numerator: float | None, denominator: float | None) -> str:
    if not numerator or not denominator:
        return "-"
    return f"{numerator / denominator:.1f}x"


def fmt_num(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="100 flows and 5 spawns")
    parser.add_argument("--flows", type=int, help="measured flows per case (default 300)")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--spawns", type=int, help="spawns for the import and start-up medians (default 11)")
    parser.add_argument(
        "--server", choices=sorted(SERVERS), default="ours", help="the server both clients drive"
    )
    parser.add_argument(
        "--clients",
        help=f"comma list of {','.join(CLIENTS)} (default: all; tsv2 needs Node 24 and the TypeScript "
        "SDK v2 from bash scripts/node.sh, and is skipped with a note when they are missing)",
    )
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--skip", default="", help="comma list of: flows,import,startup")
    parser.add_argument("--json", help="also write the numbers here")
    parser.add_argument("--worker", choices=["ours", "sdk"], help=argparse.SUPPRESS)
    parser.add_argument("--target", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return 0
    clients = [c.strip() for c in (args.clients or ",".join(CLIENTS)).split(",") if c.strip()]
    unknown = [c for c in clients if c not in CLIENTS]
    if unknown or not clients:
        parser.error(f"unknown client(s) {unknown}; choose from {', '.join(CLIENTS)}")
    optional = OPTIONAL_CLIENTS if args.clients is None else frozenset()
    flows = args.flows or (100 if args.quick else 300)
    spawns = args.spawns or (5 if args.quick else 11)
    skip = set(filter(None, args.skip.split(",")))
    python = args.python
    script = SERVERS[args.server]
    numbers: dict[str, Any] = {"flows": flows, "spawns": spawns, "server": args.server, "clients": clients}
    ok = True

    print(f"client benchmark: {flows} flows per case against bench/servers/{script.name}; python {python}")
    print(f"machine: {os.cpu_count()} CPUs; the server runs in its own process (not counted)")
    ts: tuple[Path, Path] | None = None  # Node and the SDK's node_modules, when tsv2 runs
    if "tsv2" in clients:
        setup = tsv2_setup()
        if isinstance(setup, str):
            clients.remove("tsv2")
            numbers["unavailable"] = {"tsv2": setup}
            ok &= "tsv2" in optional
            note = (
                " (optional by default: the exit status is not affected)"
                if "tsv2" in optional
                else " (named in --clients: the run fails)"
            )
            print(f"tsv2: NOT RUN: {setup}{note}")
        else:
            ts = setup
            os.environ["TS_SDK_V2_MODULES"] = str(ts[1])  # the Node probes and workers read it
            print(f"tsv2: @modelcontextprotocol/client on {ts[0]}")
    print()

    if "flows" not in skip:
        http_server, url = start_http_server(script, python)
        try:
            cases = {"stdio": [python, str(script), "stdio"], "http": url}
            rows = []
            for transport, target in cases.items():
                got: dict[str, dict[str, float]] = {}
                for client in clients:
                    print(f"  running {client} over {transport} ...", file=sys.stderr)
                    if client == "tsv2" and ts:
                        got[client] = run_node_worker(*ts, target, flows, args.warmup)
                    else:
                        got[client] = run_worker(python, client, target, flows, args.warmup)
                    numbers[f"{client}_{transport}"] = got[client]
                cpu = {c: got[c]["cpu_us"] if c in got else None for c in CLIENTS}
                wall = {c: got[c]["wall_us"] if c in got else None for c in CLIENTS}
                verdict = "-"
                if cpu["ours"] and cpu["sdk"]:
                    met = cpu["sdk"] / cpu["ours"] >= TARGET_RATIO
                    ok &= met
                    verdict = f">= {TARGET_RATIO:.0f}x: {'meets target' if met else 'BELOW target'}"
                rows.append(
                    f"| {transport:<9} | {fmt_num(cpu['ours']):>8} | {fmt_num(cpu['sdk']):>7} | "
                    f"{fmt_num(cpu['tsv2']):>8} | {fmt_ratio(cpu['sdk'], cpu['ours']):>8} | "
                    f"{fmt_ratio(cpu['tsv2'], cpu['ours']):>9} | {fmt_num(wall['ours']):>9} | "
                    f"{fmt_num(wall['sdk']):>8} | {fmt_num(wall['tsv2']):>9} | {verdict} |"
                )
        finally:
            stop(http_server)
        print(
            "(a) per-flow client CPU (microseconds of the client process per whole flow; lower is better;"
            " tsv2/ours for reference, no target)\n"
        )
        print(
            "| transport | ours CPU | sdk CPU | tsv2 CPU | sdk/ours | tsv2/ours | ours wall | sdk wall "
            "| tsv2 wall | target |"
        )
        print(
            "|-----------|---------:|--------:|---------:|---------:|----------:|----------:|---------:"
            "|----------:|--------|"
        )
        for row in rows:
            print(row)
        if ts:
            print()
            for transport in ("stdio", "http"):
                got = numbers[f"tsv2_{transport}"]
                print(
                    f"tsv2 over {transport}: {got['flows']} measured flows, each verified "
                    f"('Created <title>'), protocol {got['protocol']}"
                )
        print()

    if "import" not in skip:
        bare = median_spawn_ms([python, "-c", "pass"], spawns)
        ours_import = median_spawn_ms([python, "-c", "import mcp_elicit.client"], spawns)
        engine_import = median_spawn_ms([python, "-c", "from mcp_elicit.client import Client"], spawns)
        sdk_import = median_spawn_ms([python, "-c", "from mcp import Client"], spawns)
        numbers["import_ms"] = {
            "bare": bare,
            "package": ours_import,
            "engine": engine_import,
            "sdk": sdk_import,
        }
        if ts:
            node, modules = ts
            index = (modules / TS_CLIENT_DIST / "index.mjs").as_uri()
            node_bare = median_spawn_ms([str(node), "-e", ""], spawns)
            node_import = median_spawn_ms(
                [str(node), "--input-type=module", "-e", f"await import({index!r})"], spawns
            )
            numbers["import_ms"].update({"node_bare": node_bare, "tsv2": node_import})
        ok &= ours_import <= TARGET_STARTUP_MS
        print(f"(b) import time (median of {spawns} fresh processes, wall ms)\n")
        print("| what | ms |")
        print("|------|---:|")
        print(f"| python -c pass | {bare:.0f} |")
        print(f"| import mcp_elicit.client | {ours_import:.0f} |")
        print(f"| from mcp_elicit.client import Client | {engine_import:.0f} |")
        print(f"| from mcp import Client (SDK) | {sdk_import:.0f} |")
        if ts:
            tsv2_ms = numbers["import_ms"]
            print(f"| node -e '' | {tsv2_ms['node_bare']:.0f} |")
            print(f"| node: import('@modelcontextprotocol/client') (tsv2) | {tsv2_ms['tsv2']:.0f} |")
        print()

    if "startup" not in skip:
        rows = []
        startup: dict[str, float] = {}
        probes = {"ours": [python, "-c", _PROBE_OURS], "sdk": [python, "-c", _PROBE_SDK]}
        if ts:
            probes["tsv2"] = [str(ts[0]), "--input-type=module", "-e", _PROBE_TSV2]
        for transport, measure in (("http", startup_http_ms), ("stdio", startup_stdio_ms)):
            for client in clients:
                startup[f"{client}_{transport}"] = measure(probes[client], spawns)
            ms = {c: startup.get(f"{c}_{transport}") for c in CLIENTS}
            verdict = "-"
            if ms["ours"] is not None:
                met = ms["ours"] <= TARGET_STARTUP_MS
                ok &= met
                verdict = f"<= {TARGET_STARTUP_MS:.0f} ms: {'meets target' if met else 'BELOW target'}"
            rows.append(
                f"| {transport} | {fmt_num(ms['ours'])} | {fmt_num(ms['sdk'])} | {fmt_num(ms['tsv2'])} | "
                f"{verdict} |"
            )
        numbers["startup_ms"] = startup
        print(f"(c) start-up to first request (median of {spawns} spawns, ms)\n")
        print("| transport | ours | sdk | tsv2 | target |")
        print("|-----------|-----:|----:|-----:|--------|")
        for row in rows:
            print(row)
        print()

    if args.json:
        Path(args.json).write_text(json.dumps(numbers, indent=2))
    print("all targets met" if ok else "SOME TARGETS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
