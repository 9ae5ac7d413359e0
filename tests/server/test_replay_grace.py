"""The grace period a replay gets to reach a question the client answered counts the time the
engine could watch, not time the event loop spent blocked by other code."""

from __future__ import annotations

import asyncio
import time

from mcp_elicit import Context, Server
from tests.helpers import Flow, only_key, text


def make_server() -> Server:
    app = Server("grace", state_keys=["replay-grace-tests-secret-0123456789abcdef"], replay_grace=0.3)

    @app.tool()
    async def slow_branch(ctx: Context) -> str:
        async def later() -> str:
            if ctx.round:
                await asyncio.sleep(0.05)  # real I/O before the question it asked last round
            return (await ctx.elicit("Colour?", None, key="colour")).action

        async def now() -> str:
            if not ctx.round:
                return "-"
            return (await ctx.elicit("Size?", None, key="size")).action

        async def blocker() -> None:
            if ctx.round == 1:
                await asyncio.sleep(0.01)
                time.sleep(0.6)  # noqa: ASYNC251 - another request's handler blocking the loop

        colour, size, _ = await asyncio.gather(later(), now(), blocker())
        return f"{colour} {size}"

    return app


async def test_a_blocked_event_loop_does_not_use_up_the_replay_grace() -> None:
    flow = Flow(make_server(), "slow_branch")
    first = await flow.send()
    assert only_key(first) == "colour"
    # The answered question is reached 50 ms into the round: the loop was blocked for 600 ms of
    # the 300 ms grace in between. That used to fail as a replay mismatch (-32603).
    second = await flow.send({"colour": {"action": "accept"}})
    assert only_key(second) == "size"
    assert text(await flow.send({"size": {"action": "decline"}})) == "accept decline"
