"""The server of ``test_client_through_cutting_proxy.py``, run as a real uvicorn process.

    python tests/e2e/cut_server.py --port 8123 --marker-dir DIR [--leg-timeout S] [--retry-ms MS]

Its tools ask forms and report progress; every message names the call (``label``), so that a
result or a question delivered to the wrong call (or session) shows. A handler that runs to its
end appends one line to ``DIR/<label>`` just before it returns: the side effect a client that
reports the call completed must find there, exactly once.

``--retry-ms`` sets the ``retry`` a 2025-11-25 stream's priming event names (1000 ms in
production): the client waits that long before it resumes a dropped stream, and a shorter
wait lets the property test run more examples in the same time. Nothing else changes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path

# Run as a script: the repository root, for tests.*.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

if os.environ.get("MCP_ELICIT_TEST_LOOP") == "asyncio":
    sys.modules["uvloop"] = None  # type: ignore[assignment]  # "import uvloop" fails: not installed

from mcp_elicit import Context, Server

MARKERS = Path(".")

app = Server("cut", version="1.0.0", state_keys=["cut-proxy-tests-only-secret-abcdefghijklmnopqrstuvwxyz"])


@dataclass
class Name:
    name: str


def _said(answer: object) -> str:
    data = getattr(answer, "data", None)
    return f"{data.name}" if getattr(answer, "accepted", False) and data is not None else "no"


def _done(label: str, said: list[str]) -> str:
    """The side effect of a completed run, then the result that names it."""
    text = f"{label} done: {' '.join(said)}"
    with (MARKERS / label).open("a") as marker:
        marker.write(text + "\n")
    return text


@app.tool()
async def ask(label: str, count: int, ctx: Context) -> str:
    """``count`` forms in turn, with progress before and after each."""
    said: list[str] = []
    await ctx.report_progress(0, count + 1, f"{label} starting")
    for number in range(count):
        said.append(_said(await ctx.elicit(f"{label} q{number}?", Name, key=f"q{number}")))
        await ctx.report_progress(number + 1, count + 1, f"{label} got q{number}")
    return _done(label, said)


@app.tool()
async def pair(label: str, ctx: Context) -> str:
    """Two forms in one round (two questions to a 2025-11-25 client at once)."""
    await ctx.report_progress(0, 1, f"{label} starting")
    answers = await asyncio.gather(
        ctx.elicit(f"{label} q0?", Name, key="q0"), ctx.elicit(f"{label} q1?", Name, key="q1")
    )
    return _done(label, [_said(answer) for answer in answers])


@app.tool()
async def plain(label: str) -> str:
    """Asks nothing: the health check after each example."""
    return _done(label, [])


def main() -> None:
    global MARKERS
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--marker-dir", required=True)
    parser.add_argument("--leg-timeout", type=float, default=None, help="seconds a 2025 client may take")
    parser.add_argument("--resume-grace", type=float, default=None, help="seconds to pick a stream up again")
    parser.add_argument("--retry-ms", type=int, default=None, help="the retry of a 2025 stream's priming")
    args = parser.parse_args()
    MARKERS = Path(args.marker_dir)
    if args.leg_timeout is not None:
        app.legacy_leg_timeout = args.leg_timeout
    if args.retry_ms is not None:
        from mcp_elicit.transport import event_stream

        setattr(event_stream, "RETRY_MS", args.retry_ms)  # noqa: B010  (a Final, for this test only)
    from mcp_elicit.transport.http_app import HttpApp
    from mcp_elicit.transport.uvicorn_runner import serve

    sessions = {} if args.resume_grace is None else {"resume_grace": args.resume_grace}
    serve(HttpApp(app, sessions=sessions), host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
