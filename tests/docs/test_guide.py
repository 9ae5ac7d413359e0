"""docs/server-guide.md as written: every python block runs, in order, in one namespace (its
asserts included); the form shown as JSON is the one the class builds; the answers file answers;
the error shown is the one raised; ``mcp-elicit check`` prints what the guide says; and the tools
behave as the prose says."""

from __future__ import annotations

import asyncio
import json
import types
from pathlib import Path

from mcp_elicit.client import Answer, Client, ScriptedAnswerer
from mcp_elicit.schema import form_spec
from tests.docs.doc_shell import run_console
from tests.docs.markdown_blocks import blocks, console_commands, doc, matches, run_python_blocks, write_files
from tests.helpers import RawCall, Script

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
    # Each question answered with the three letters after "Who " ("dri", "nav").
    pair = Script(form=lambda question: Answer("accept", {"name": question.message[4:7]}))
    async with Client.connect(guide.app, answerer=pair) as client:
        assert (await client.call_tool("pair_programming")).text == "dri drives, nav navigates."
    assert sorted(question.message for question in pair.asked) == ["Who drives?", "Who navigates?"]
    # Both in the first round (asked at once): the InputRequiredResult itself, which only a
    # hand-written request shows.
    first = await RawCall(guide.app, "pair_programming").send()
    assert sorted(r["params"]["message"] for r in first["inputRequests"].values()) == [
        "Who drives?",
        "Who navigates?",
    ]

    reserve = Script(form=lambda question: Answer("accept", {}))
    async with Client.connect(guide.app, answerer=reserve) as client:
        assert (await client.call_tool("reserve", {"room": "Ada"})).text == "reserved"
    (question,) = reserve.asked
    assert question.message.startswith("Reserve Ada (asked at ")

    filed = Script(form=lambda question: Answer("accept", {}))
    async with Client.connect(guide.app, answerer=filed) as client:
        assert (await client.call_tool("file_ticket", {"title": "t"})).text == "TCK-1 filed; notify=True"
    assert len(filed.asked) == 1
    assert len(guide.created) == 1

    # A client that answers forms only: the tool says what to open instead of asking by URL.
    forms_only = Script(mode_names=("form",))
    async with Client.connect(guide.app, answerer=forms_only) as client:
        gated = await client.call_tool("connect_calendar")
        assert gated.text.startswith("Open https://calendar.example.com/connect yourself")
        assert forms_only.asked == []

    standup = Script(form=lambda question: Answer("accept", {"name": "the release"}))
    async with Client.connect(guide.app, answerer=standup) as client:
        done = await client.get_prompt("standup", {"team": "core", "days": "3"})
        assert done.messages[0]["content"]["text"] == (
            "Summarise the last 3 days of core; also mention the release."
        )
        assert len(standup.asked) == 1
        listed = await client.list_prompts()
        assert listed[0]["arguments"][0] == {
            "name": "team",
            "required": True,
            "description": "Team to report on",
        }
        read = await client.read_resource("tickets://7")
        assert read.contents[0]["text"] == "Ticket 1007"


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
