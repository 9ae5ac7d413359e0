"""Client-side benchmark: our client engine vs the official SDK client (mcp==2.3.0 ``Client``).

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

    python bench/client/run.py              # 300 flows per case, 11 spawns for (b) and (c)
    python bench/client/run.py --quick      # 100 flows, 5 spawns
"""

from __future__ import annotations

import argparse
import asyncio
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


def startup_http_ms(python: str, probe: str, runs: int) -> float:
    """Spawn -> the first bytes of the first request arrive at our listening socket."""
    samples = []
    for attempt in range(runs + 1):
        with socket.socket() as listener:
            listener.bind((HOST, 0))
            listener.listen(4)
            listener.settimeout(20)
            url = f"http://{HOST}:{listener.getsockname()[1]}/mcp"
            started = time.perf_counter()
            process = subprocess.Popen(
                [python, "-c", probe, url], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
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


def startup_stdio_ms(python: str, probe: str, runs: int) -> float:
    """Spawn -> the first line arrives at a ``sh`` stand-in server, which records the time."""
    samples = []
    with tempfile.TemporaryDirectory() as folder:
        stamp = Path(folder) / "arrived"
        server = ["/bin/sh", "-c", f'read -r line; date +%s%N > "{stamp}"; sleep 5']
        for attempt in range(runs + 1):
            stamp.unlink(missing_ok=True)
            started_ns = time.time_ns()
            process = subprocess.Popen(
                [python, "-c", probe, *server], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
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
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--skip", default="", help="comma list of: flows,import,startup")
    parser.add_argument("--json", help="also write the numbers here")
    parser.add_argument("--worker", choices=["ours", "sdk"], help=argparse.SUPPRESS)
    parser.add_argument("--target", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return 0
    flows = args.flows or (100 if args.quick else 300)
    spawns = args.spawns or (5 if args.quick else 11)
    skip = set(filter(None, args.skip.split(",")))
    python = args.python
    script = SERVERS[args.server]
    numbers: dict[str, Any] = {"flows": flows, "spawns": spawns, "server": args.server}
    ok = True

    print(f"client benchmark: {flows} flows per case against bench/servers/{script.name}; python {python}")
    print(f"machine: {os.cpu_count()} CPUs; the server runs in its own process (not counted)\n")

    if "flows" not in skip:
        http_server, url = start_http_server(script, python)
        try:
            cases = {"stdio": [python, str(script), "stdio"], "http": url}
            rows = []
            for transport, target in cases.items():
                for client in ("ours", "sdk"):
                    print(f"  running {client} over {transport} ...", file=sys.stderr)
                    numbers[f"{client}_{transport}"] = run_worker(python, client, target, flows, args.warmup)
                ours, sdk = numbers[f"ours_{transport}"], numbers[f"sdk_{transport}"]
                ratio = sdk["cpu_us"] / ours["cpu_us"]
                ok &= ratio >= TARGET_RATIO
                verdict = "meets target" if ratio >= TARGET_RATIO else "BELOW target"
                rows.append(
                    f"| {transport:<5} | {ours['cpu_us']:>9.0f} | {sdk['cpu_us']:>9.0f} | {ratio:>6.1f}x | "
                    f"{ours['wall_us']:>9.0f} | {sdk['wall_us']:>9.0f} | >= {TARGET_RATIO:.0f}x: {verdict} |"
                )
        finally:
            stop(http_server)
        print(
            "(a) per-flow client CPU (microseconds of the client process per whole flow; lower is better)\n"
        )
        print("| transport | ours CPU | sdk CPU | sdk/ours | ours wall | sdk wall | target |")
        print("|-----------|---------:|--------:|---------:|----------:|---------:|--------|")
        for row in rows:
            print(row)
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
        ok &= ours_import <= TARGET_STARTUP_MS
        print(f"(b) import time (median of {spawns} fresh processes, wall ms)\n")
        print("| what | ms |")
        print("|------|---:|")
        print(f"| python -c pass | {bare:.0f} |")
        print(f"| import mcp_elicit.client | {ours_import:.0f} |")
        print(f"| from mcp_elicit.client import Client | {engine_import:.0f} |")
        print(f"| from mcp import Client (SDK) | {sdk_import:.0f} |")
        print()

    if "startup" not in skip:
        rows = []
        startup: dict[str, float] = {}
        for transport, measure in (("http", startup_http_ms), ("stdio", startup_stdio_ms)):
            mine = measure(python, _PROBE_OURS, spawns)
            theirs = measure(python, _PROBE_SDK, spawns)
            startup[f"ours_{transport}"], startup[f"sdk_{transport}"] = mine, theirs
            ok &= mine <= TARGET_STARTUP_MS
            verdict = "meets target" if mine <= TARGET_STARTUP_MS else "BELOW target"
            rows.append(
                f"| {transport} | {mine:.0f} | {theirs:.0f} | <= {TARGET_STARTUP_MS:.0f} ms: {verdict} |"
            )
        numbers["startup_ms"] = startup
        print(f"(c) start-up to first request (median of {spawns} spawns, ms)\n")
        print("| transport | ours | sdk | target |")
        print("|-----------|-----:|----:|--------|")
        for row in rows:
            print(row)
        print()

    if args.json:
        Path(args.json).write_text(json.dumps(numbers, indent=2))
    print("all targets met" if ok else "SOME TARGETS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
