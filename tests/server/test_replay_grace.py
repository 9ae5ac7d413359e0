"""The grace period a replay gets to reach a question the client answered counts the time the
engine could watch, not time the event loop spent blocked by other code."""

from __future__ import annotations

import asyncio
import time

from mcp_elicit import Context, Server
from mcp_elicit.client import Answer, Client
from tests.helpers import Script


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
    answers = {"colour": Answer("accept"), "size": Answer("decline")}
    person = Script(form=lambda question: answers[question.key])
    async with Client.connect(make_server(), answerer=person) as client:
        # The answered question is reached 50 ms into the round: the loop was blocked for 600 ms
        # of the 300 ms grace in between. That used to fail as a replay mismatch (-32603).
        assert (await client.call_tool("slow_branch")).text == "accept decline"
    assert [question.key for question in person.asked] == ["colour", "size"]
