"""A tool that reports progress before, between and after two questions (for
test_legacy_progress.py); ``python legacy_progress_server.py`` serves it on stdio."""

from __future__ import annotations

from dataclasses import dataclass

from mcp_elicit import Context, Server

app = Server("legacy-progress")


@dataclass
class Ok:
    ok: bool


@app.tool()
async def three_steps(ctx: Context) -> str:
    """A report that does not move on (2 again) goes nowhere either."""
    await ctx.report_progress(1, 3, "asking")
    first = await ctx.elicit("First?", Ok, key="first")
    await ctx.report_progress(2, 3, "asking again")
    await ctx.report_progress(2, 3, "still asking")
    second = await ctx.elicit("Second?", Ok, key="second")
    await ctx.report_progress(3, 3, "done")
    return f"{first.data.ok} {second.data.ok}"


if __name__ == "__main__":
    app.run_stdio()
