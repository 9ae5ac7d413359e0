"""A 2025-11-25 call's later rounds carry state the bridge sealed and handed over in memory: no
client holds it to replay, so they never ask the single-use store, and a store outage between
the person's answers does not end the call (it used to: -32603 "state store unavailable", and a
2025-11-25 client cannot send a round again).

The server runs as a process (2025-11-25 needs stdio or HTTP); its tool closes the store after
the first answer, which makes every later use of it fail as an outage does."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from mcp_elicit import Context, Server
from mcp_elicit.client import Answer, Client
from mcp_elicit.state import SQLiteSingleUseStore
from tests.helpers import Script


@dataclass
class Name:
    name: str


def make_server(path: Path) -> Server:
    store = SQLiteSingleUseStore(str(path))
    app = Server(
        "in-process-rounds",
        state_keys=["in-process-rounds-tests-secret-0123456789abcdef"],
        single_use=store,
        single_use_redelivery=True,
    )

    @app.tool()
    async def two_names(ctx: Context) -> str:
        first = await ctx.elicit("First name?", Name, key="first")
        await store.close()  # the store is gone from here on (replays close it again)
        last = await ctx.elicit("Last name?", Name, key="last")
        return f"{first.data.name} {last.data.name}"

    return app


async def test_a_store_outage_between_answers_does_not_end_a_2025_11_25_call(tmp_path: Path) -> None:
    person = Script(form=lambda question: Answer("accept", {"name": "Ada"}))
    command = [sys.executable, "-m", __name__, "serve", str(tmp_path / "used.db")]
    async with Client.connect(command, protocol="2025-11-25", answerer=person) as client:
        assert (await client.call_tool("two_names")).text == "Ada Ada"
    assert [question.message for question in person.asked] == ["First name?", "Last name?"]


if __name__ == "__main__" and sys.argv[1:2] == ["serve"]:
    make_server(Path(sys.argv[2])).run_stdio()
