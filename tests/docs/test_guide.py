"""docs/server-guide.md as written: every python block runs, in order, in one namespace (its
asserts included); the form shown as JSON is the one the class builds; the answers file answers;
the error shown is the one raised; ``mcp-elicit check`` prints what the guide says; and the tools
behave as the prose says."""

from __future__ import annotations

import asyncio
import json
import types
from pathlib import Path

from mcp_elicit.client import Client, ScriptedAnswerer
from mcp_elicit.schema import form_spec
from tests.docs.doc_shell import run_console
from tests.docs.markdown_blocks import blocks, console_commands, doc, matches, run_python_blocks, write_files
from tests.helpers import Flow, accept, only_key, request, text

GUIDE = doc("server-guide.md")


def load_guide() -> types.ModuleType:
    return run_python_blocks("server-guide.md")


def test_guide_blocks_run() -> None:
    guide = load_guide()
    assert {t["name"] for t in guide.app.describe_tools()} == {
        "create_ticket",
        "pair_programming",
        "reserve",
        "file_ticket",
        "connect_calendar",
        "run_report",
    }
    report = next(t for t in guide.app.describe_tools() if t["name"] == "run_report")
    assert report["inputSchema"]["properties"]["region"]["x-mcp-header"] == "Region"
    assert [t["name"] for t in guide.bookings.describe_tools()] == ["book", "sign_up"]


def test_the_form_shown_is_the_form_built() -> None:
    shown = json.loads(blocks(GUIDE, "json")[0].code)
    assert form_spec(load_guide().Ticket).schema == shown


async def test_the_answers_file_answers_whatever_the_city(tmp_path: Path) -> None:
    guide = await asyncio.to_thread(load_guide)  # the guide calls asyncio.run itself
    answers = tmp_path / "answers.json"
    answers.write_text(blocks(GUIDE, "json")[1].code)
    async with Client.connect(guide.trips, answerer=ScriptedAnswerer.from_file(answers)) as client:
        booked = await client.call_tool("book_trip", {"city": "Oslo"})
    assert booked.text == "Booked 2 seat(s) to Oslo on 2027-07-01."


def test_the_error_shown_is_the_one_raised() -> None:
    assert blocks(GUIDE, "text")[0].code == load_guide().message + "\n"


def test_mcp_elicit_check_prints_what_the_guide_shows(tmp_path: Path) -> None:
    assert write_files(GUIDE, tmp_path) == ["booking.py"]
    (session,) = blocks(GUIDE, "console")
    for command, shown in console_commands(session):
        status, printed = run_console(command, tmp_path)
        assert status == 1  # problems found
        assert matches(shown, printed), printed


async def test_guide_tools_behave_as_described() -> None:
    guide = await asyncio.to_thread(load_guide)
    pair = Flow(guide.app, "pair_programming")
    first = await pair.send()
    assert sorted(r["params"]["message"] for r in first["inputRequests"].values()) == [
        "Who drives?",
        "Who navigates?",
    ]
    names = {k: accept({"name": r["params"]["message"][4:7]}) for k, r in first["inputRequests"].items()}
    assert text(await pair.send(names)) == "dri drives, nav navigates."

    reserve = Flow(guide.app, "reserve", {"room": "Ada"})
    asked = await reserve.send()
    (question,) = asked["inputRequests"].values()
    assert question["params"]["message"].startswith("Reserve Ada (asked at ")
    assert text(await reserve.send({only_key(asked): accept()})) == "reserved"

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


def test_the_guide_shows_every_kind_of_field() -> None:
    """One form with an e-mail, a titled choice, a multi-select, a date, an optional field and
    defaults, as the guide promises, its markers imported from mcp_elicit itself."""
    schema = form_spec(load_guide().Ticket).schema
    fields = schema["properties"]
    assert fields["reporter"]["format"] == "email"
    assert [choice["title"] for choice in fields["priority"]["oneOf"]] == [
        "Low",
        "Normal",
        "High: wake someone up",
    ]
    assert fields["labels"]["items"]["enum"] == ["bug", "ux", "docs"]
    assert fields["due"]["format"] == "date"
    assert schema["required"] == ["reporter"]  # the others are optional or have a default
    assert [fields[name]["default"] for name in ("priority", "labels", "notify")] == ["normal", [], True]
    assert "from mcp_elicit import Choices, Context, Description, Email, Server, Title" in GUIDE.read_text()
