"""Every python block of docs/server-guide.md runs, in order, in one namespace."""

from __future__ import annotations

import asyncio
import types

from tests.docs.markdown_blocks import run_python_blocks


def load_guide() -> types.ModuleType:
    return run_python_blocks("server-guide.md")


def test_guide_blocks_run() -> None:
    app = load_guide().app
    assert {t["name"] for t in app.describe_tools()} == {
        "create_ticket",
        "pair_programming",
        "reserve",
        "file_ticket",
        "connect_calendar",
        "run_report",
    }
    report = next(t for t in app.describe_tools() if t["name"] == "run_report")
    assert report["inputSchema"]["properties"]["region"]["x-mcp-header"] == "Region"


async def test_guide_tools_behave_as_described() -> None:
    from tests.helpers import Flow, accept, only_key, request, text

    guide = await asyncio.to_thread(load_guide)  # the guide calls asyncio.run itself
    pair = Flow(guide.app, "pair_programming")
    first = await pair.send()
    assert sorted(r["params"]["message"] for r in first["inputRequests"].values()) == [
        "Who drives?",
        "Who navigates?",
    ]
    names = {k: accept({"name": r["params"]["message"][4:7]}) for k, r in first["inputRequests"].items()}
    assert text(await pair.send(names)) == "dri drives, nav navigates."

    filed = Flow(guide.app, "file_ticket", {"title": "t"})
    key = only_key(await filed.send())
    assert text(await filed.send({key: accept({})})) == "TCK-1 filed; notify=True"
    assert len(guide.created) == 1

    gated = await Flow(guide.app, "connect_calendar", capabilities={"elicitation": {}}).send()
    assert text(gated).startswith("Open https://calendar.example.com/connect yourself")

    standup = Flow(guide.app, "standup", {"team": "core", "days": "3"}, method="prompts/get")
    key = only_key(await standup.send())
    done = await standup.send({key: accept({"name": "the release"})})
    assert done["messages"][0]["content"]["text"] == (
        "Summarise the last 3 days of core; also mention the release."
    )
    listed = await guide.app.dispatch(request("prompts/list"))
    assert listed["prompts"][0]["arguments"][0] == {
        "name": "team",
        "required": True,
        "description": "Team to report on",
    }
    read = await guide.app.dispatch(request("resources/read", {"uri": "tickets://7"}))
    assert read["contents"][0]["text"] == "Ticket 1007"
