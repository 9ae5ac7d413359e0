"""Tools that both process-level test servers serve (``tests/e2e/e2e_server.py`` and
``tests/client/engine/ours_server.py``): one definition, so a fix reaches both; and the
``authenticate`` hook the HTTP test servers share (:func:`bearer`).

``markers()`` gives the folder where ``slow`` writes ``started-<label>`` when it starts and
``cancelled-<label>`` when it is cancelled, so that a test can see the cancellation reached the
handler.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Annotated

from pydantic import Field

from mcp_elicit import Caller, Context, Server


async def bearer(headers: Mapping[str, str]) -> str | Caller | None:
    """``Bearer <user>`` (principal ``test|<user>``) or ``Bearer <user>@<client>`` (a token issued
    to that OAuth client); no token: anonymous."""
    value = headers.get("authorization", "")
    if not value.startswith("Bearer "):
        return None
    user, _, client = value[7:].partition("@")
    return Caller(f"test|{user}", client) if client else f"test|{user}"


@dataclass
class Name:
    name: str


def add_shared_tools(app: Server, markers: Callable[[], Path]) -> None:
    @app.tool()
    async def greet(ctx: Context) -> str:
        """Two questions, two rounds."""
        first = await ctx.elicit("First name?", Name, key="first")
        last = await ctx.elicit("Last name?", Name, key="last")
        return f"Hello, {first.data.name} {last.data.name}!"

    @app.tool(name="grüßen")
    async def gruessen(ctx: Context) -> str:
        """A name that must travel base64-encoded in the Mcp-Name header."""
        answer = await ctx.elicit("Name?", Name, key="n")
        return f"Grüß dich, {answer.data.name}!"

    @app.tool()
    async def slow(label: str) -> str:
        """Sleeps; records that it started and whether it was cancelled (for the cancellation
        tests: cancel once ``started-<label>`` exists, or the cancel may come before it runs)."""
        (markers() / f"started-{label}").write_text("started")
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            (markers() / f"cancelled-{label}").write_text("cancelled")
            raise
        return "finished"

    @app.tool()
    async def progress(ctx: Context) -> str:
        """Reports progress twice, then completes."""
        await ctx.report_progress(1, 2, "half way")
        await ctx.report_progress(2, 2, "done")
        return "progressed"

    @app.tool()
    async def run_query(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
        query: str,
        limit: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Limit"})] = 10,
    ) -> str:
        """Arguments mirrored in Mcp-Param-Region and Mcp-Param-Limit headers."""
        return f"ran {query} in {region} (limit {limit})"


def serve_from_argv(app: Server, module: ModuleType) -> None:
    """Serve ``app`` as the command line of a test server process says: ``--stdio``, or HTTP on
    127.0.0.1 ``--port P``; ``--marker-dir D`` (where its tools write their markers) becomes
    ``module.MARKERS`` before anything is served."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("--port", type=int)
    parser.add_argument("--marker-dir", default=".")
    args = parser.parse_args()
    module.MARKERS = Path(args.marker_dir)
    if args.stdio:
        app.run_stdio()
    else:
        from mcp_elicit.transport.uvicorn_runner import serve

        serve(app.asgi(), host="127.0.0.1", port=args.port)
