"""The 2025-11-25 parts of the benchmark: whole legacy elicitation flows, ours against the SDK.

A 2025-11-25 client opens a session with `initialize` (once per user), and a question is a real
request from the server: `tools/call` -> `elicitation/create` on the call's stream (SSE on HTTP,
stdout on stdio) -> the client's ElicitResult sent back (a POST answered 202 on HTTP) -> the
call's result. Same tool as the modern parts (`create_ticket(title)`, one form question, a
required boolean `ok`):

  ours  `servers/ours.py`, the very server of the modern parts: one handler serves both eras;
  sdk   `servers/sdk_legacy.py`, `mcp==2.3.0` `MCPServer` whose tool calls the legacy
        `ctx.elicit`; on HTTP the *stateful* `streamable_http_app()` (sessions, SSE replies);
  tsv2  `servers/ts_v2.mjs`, the TypeScript SDK v2 server of the modern parts, on stdio only:
        `serveStdio` pins a connection that opens with `initialize` to the 2025-11-25 era, and
        the SDK's legacy shim turns the handler's `inputRequired` into a real
        `elicitation/create` (its HTTP entry's 2025 fallback is stateless: no way to ask).

  (d) legacy HTTP: 16 users, one session each, closed loop on keep-alive connections
      (`legacyclient.py`), interleaved rounds like part (a);
  (e) legacy stdio: one spawned server each, one flow at a time after one `initialize`,
      interleaved rounds like part (b).

`run.py` runs these after its own parts (`--skip legacy` leaves them out, `--only legacy` runs
nothing else); the flags for the load's shape are run.py's.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

import legacyclient as llc
from harness import (
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
    run_http,
    run_stdio,
    stdio_json,
    tail,
)

HERE = Path(__file__).resolve().parent
SERVERS = {
    "ours": HERE / "servers" / "ours.py",
    "sdk": HERE / "servers" / "sdk_legacy.py",
}
# On stdio the TypeScript SDK v2 serves 2025-11-25 from its one server (its legacy shim).
STDIO_SERVERS = {**SERVERS, "tsv2": HERE / "servers" / "ts_v2.mjs"}
PARTS = ("legacy-http", "legacy-stdio")
TARGET_HTTP_VS_SDK = 5.0
TARGET_STDIO_VS_SDK = 5.0


@dataclass
class Results:
    http: dict[str, HttpSummary] = field(default_factory=dict)
    stdio: dict[str, StdioResult] = field(default_factory=dict)


# --------------------------------------------------------------------------- stdio


def stdio_setup(srv: StdioServer, timeout: float = 30.0) -> None:
    """The session's handshake, once per process: initialize, then notifications/initialized."""
    srv.send(llc.initialize_body() + b"\n")
    llc.check_initialize(srv.message(timeout))
    srv.send(llc.INITIALIZED_BODY + b"\n")


def stdio_flow(srv: StdioServer, rid: int, title: str, timeout: float) -> str:
    """One whole flow: the call, the question it sends back, the answer, the result. The
    messages must come in that order, nothing between them."""
    srv.send(llc.call_body(rid, orjson.dumps(title)) + b"\n")
    eid = llc.check_elicitation(srv.message(timeout), title)
    srv.send(llc.answer_body(eid) + b"\n")
    return llc.check_result(srv.message(timeout), rid, title)


# --------------------------------------------------------------------------- the parts


def run(
    names: list[str],
    parts: set[str],
    args: argparse.Namespace,
    logdir: Path,
    say: Callable[[str], None],
    failures: dict[str, str],
    *,
    commands: Mapping[str, str] | None = None,
    stdio_warmup: Mapping[str, int] | None = None,
) -> Results:
    """The legacy parts in `parts` for the servers in `names` that have a legacy server.
    `commands`: what runs each server's script (default `args.python`); `stdio_warmup`: the
    unmeasured stdio flows of each (default `args.stdio_warmup`)."""
    http_names = [n for n in names if n in SERVERS]
    stdio_names = [n for n in names if n in STDIO_SERVERS]
    command = {n: (commands or {}).get(n, args.python) for n in stdio_names}
    out = Results()
    if "legacy-http" in parts and http_names:
        out.http = run_http(
            {n: SERVERS[n] for n in http_names},
            interpreter={n: command[n] for n in http_names},
            logdir=logdir,
            verify=lambda port: llc.one_flow(HOST, port),
            load=lambda port: llc.run_load(
                HOST, port, users=args.users, duration=args.duration, warmup=args.warmup
            ),
            rounds=args.rounds,
            describe=f"{args.warmup:g}+{args.duration:g} s, {args.users} sessions",
            say=say,
            failures=failures,
            tag="legacy-http",
            title="legacy HTTP",
        )
    if "legacy-stdio" in parts and stdio_names:

        def spawn(name: str) -> Callable[[], StdioServer]:
            log = logdir / f"{name}-legacy-stdio.log"
            return lambda: StdioServer(name, STDIO_SERVERS[name], command[name], log)

        out.stdio = run_stdio(
            {n: spawn(n) for n in stdio_names},
            stdio_flow,
            setup=stdio_setup,
            flows=args.stdio_flows,
            warmup={n: (stdio_warmup or {}).get(n, args.stdio_warmup) for n in stdio_names},
            max_seconds=args.stdio_max_seconds,
            rounds=args.stdio_rounds,
            say=say,
            tag="legacy-stdio",
        )
        for name, result in out.stdio.items():
            if result.flows == 0 and result.errors:
                failures[f"legacy stdio {name}"] = (
                    (result.note or "no flow completed") + "\n" + tail(logdir / f"{name}-legacy-stdio.log")
                )
    return out


# --------------------------------------------------------------------------- report


def report(
    args: argparse.Namespace, res: Results, labels: dict[str, str], unavailable: dict[str, str]
) -> None:
    """Print the legacy sections of the report (`unavailable`: the servers that could not run, and
    why)."""

    def missing(servers: dict[str, Path]) -> None:
        for n in servers:
            if n in unavailable and n in args.server_list:
                print(f"  {labels[n]:<20}  NOT RUN: {unavailable[n][:70]}")

    if res.http:
        print(
            f"2025-11-25 HTTP  whole legacy flows, {args.users} sessions (one per user, initialize "
            f"once), closed loop,\n      {fmt(args.duration, '.1f')} s after {fmt(args.warmup, '.1f')} s "
            f"warm-up, {args.rounds} interleaved round(s), median of rounds"
        )
        print(HTTP_COLUMNS)
        for name, h in res.http.items():
            print_http_row(labels[name], h, args.rounds)
        missing(SERVERS)
        ok = {n: h for n, h in res.http.items() if not h.failure and h.rounds}
        if "ours" in ok and "sdk" in ok:
            r = paired_ratio(
                [x.flows_per_s for x in ok["ours"].rounds], [x.flows_per_s for x in ok["sdk"].rounds]
            )
            print(
                f"  ratio ours/sdk  {fmt(r, '8.2f')}x   target >= {TARGET_HTTP_VS_SDK:.0f}x   "
                f"{mark(r >= TARGET_HTTP_VS_SDK)}"
            )
        print()
    if res.stdio:
        print(
            "2025-11-25 stdio  whole legacy flows, one at a time over one spawned server each "
            f"(initialize once),\n      {args.stdio_rounds} interleaved round(s), median of rounds"
        )
        print(STDIO_COLUMNS)
        for name, s in res.stdio.items():
            print_stdio_row(labels[name], s)
        missing(STDIO_SERVERS)
        if all(n in res.stdio and res.stdio[n].flows for n in ("ours", "sdk")):
            r = paired_ratio(res.stdio["ours"].round_rates, res.stdio["sdk"].round_rates)
            print(
                f"  ratio ours/sdk  {fmt(r, '8.2f')}x   target >= {TARGET_STDIO_VS_SDK:.0f}x   "
                f"{mark(r >= TARGET_STDIO_VS_SDK)}   (median of the rounds' side-by-side ratios)"
            )
        if all(n in res.stdio and res.stdio[n].flows for n in ("ours", "tsv2")):
            r = paired_ratio(res.stdio["ours"].round_rates, res.stdio["tsv2"].round_rates)
            print(f"  ratio ours/tsv2 {fmt(r, '8.2f')}x   (the TypeScript SDK v2, for reference: no target)")
        print()


def report_errors(res: Results) -> int:
    """Print the legacy parts' errors; how many there were."""
    for name, h in res.http.items():
        print_errors(f"legacy HTTP {name}", h.errors, h.error_samples)
    for name, s in res.stdio.items():
        print_errors(f"legacy stdio {name}", s.errors, s.error_samples)
    return sum(h.errors for h in res.http.values()) + sum(s.errors for s in res.stdio.values())


def to_json(res: Results) -> dict[str, Any]:
    return {
        "legacy_http": {n: http_json(h) for n, h in res.http.items()},
        "legacy_stdio": {n: stdio_json(s) for n, s in res.stdio.items()},
    }
