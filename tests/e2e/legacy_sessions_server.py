"""The server of ``test_http_legacy_sessions_any_client.py``, run as a real process.

    python tests/e2e/legacy_sessions_server.py --port 8123 [--leg-timeout 30] [--max-calls 8]

``ask`` asks rounds of questions: its ``plan`` is one string per round (``"fu"``: a form and a
URL question in one round, ``asyncio.gather``), each message ``"<label> r<round>q<n>?"``, so that
a test running several calls in several sessions can tell whose question an event carries; it
says what each answer was. ``hog`` blocks the event loop (a CPU-bound handler, a long GC pause):
requests that arrive meanwhile are taken in one batch, which lines up races that a client alone
could only hit by chance. ``Authorization: Bearer <name>`` names the principal ``test|<name>``.
The event loop is uvloop unless ``MCP_ELICIT_TEST_LOOP=asyncio`` (as in ``e2e_server.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: the repository root

if os.environ.get("MCP_ELICIT_TEST_LOOP") == "asyncio":
    sys.modules["uvloop"] = None  # type: ignore[assignment]  # "import uvloop" fails: not installed

from mcp_elicit import Context, Server
from tests.shared_tools import bearer

KEYS = ["legacy-sessions-tests-only-secret-abcdefghijklmnop"]


@dataclass
class Name:
    name: str


def build() -> Server:
    """The server (its legacy options are set by :func:`main` from the command line)."""
    app = Server("legacy-sessions", version="1", state_keys=KEYS)

    async def question(ctx: Context, label: str, key: str, kind: str) -> str:
        message = f"{label} {key}?"
        if kind == "u":
            answer: Any = await ctx.elicit_url(message, f"https://example.com/{label}/{key}", key=key)
            return f"{key}={answer.action}"
        answer = await ctx.elicit(message, Name, key=key)
        return f"{key}=accept:{answer.data.name}" if answer.accepted else f"{key}={answer.action}"

    @app.tool()
    async def ask(label: str, plan: list[str], ctx: Context) -> str:
        """Each round of ``plan`` (``"f"`` a form, ``"u"`` a URL) asked at once, in turn."""
        said: list[str] = []
        for number, kinds in enumerate(plan):
            said += await asyncio.gather(
                *(question(ctx, label, f"r{number}q{index}", kind) for index, kind in enumerate(kinds))
            )
        return f"{label}: {' '.join(said)}"

    @app.tool()
    async def nap(label: str, seconds: float) -> str:
        """Runs ``seconds`` asking nothing."""
        await asyncio.sleep(seconds)
        return f"{label} napped"

    @app.tool()
    async def hog(seconds: float) -> str:
        """Blocks the event loop (on purpose: see the module docstring)."""
        time.sleep(seconds)  # noqa: ASYNC251 - blocking the loop is the point
        return "hogged"

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--leg-timeout", type=float, default=30.0)
    parser.add_argument("--max-calls", type=int, default=None)
    parser.add_argument("--resume-grace", type=float, default=None)
    args = parser.parse_args()
    app = build()
    app.legacy_leg_timeout = args.leg_timeout
    from mcp_elicit.transport.http_app import HttpApp
    from mcp_elicit.transport.uvicorn_runner import serve

    sessions = {
        name: value
        for name, value in (("max_calls", args.max_calls), ("resume_grace", args.resume_grace))
        if value is not None
    }
    serve(HttpApp(app, authenticate=bearer, sessions=sessions), host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
