"""The tickets example, driven like a client would drive it: the real client, or by hand
(:class:`tests.helpers.RawCall`) where the test sends an answer that fails validation and
replays a round whose response was lost, which ours never does."""

from __future__ import annotations

import importlib.util
import sqlite3
import sys
from pathlib import Path
from types import ModuleType

import pytest

from mcp_elicit.client import Answer, Client
from tests.helpers import RawCall, Script, accept, only_key, text

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tickets.py"


@pytest.fixture
def tickets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("tickets_example", EXAMPLE)
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "tickets_example", module)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "DB", tmp_path / "tickets.db")
    return module


async def test_create_ticket_end_to_end(tickets: ModuleType) -> None:
    flow = RawCall(tickets.app, "create_ticket", {"title": "Printer on fire"})
    first = await flow.send()
    key = only_key(first)
    schema = first["inputRequests"][key]["params"]["requestedSchema"]
    assert schema["properties"]["watchers"]["items"]["enum"] == ["platform", "billing", "support"]
    assert schema["properties"]["reporter"]["format"] == "email"
    assert schema["required"] == ["reporter"]

    invalid = await flow.send({key: accept({"reporter": "not-an-email"})})
    assert "reporter" in invalid["inputRequests"][key]["params"]["message"]

    details = {
        "priority": "high",
        "due": "2026-12-24",
        "watchers": ["support"],
        "reporter": "ada@example.com",
    }
    confirm = await flow.send({key: accept(details)})
    confirm_key = only_key(confirm)
    assert (
        "high priority, 2026-12-24, notify support"
        in confirm["inputRequests"][confirm_key]["params"]["message"]
    )
    state_before_insert = flow.state

    done = text(await flow.send({confirm_key: accept({"ok": True})}))
    assert done.startswith("Created TCK-1: Printer on fire (high, 2026-12-24, watchers: support")

    # A client that retries the last round (its response was lost) gets the same ticket, not a second one.
    flow.state = state_before_insert
    again = text(await flow.send({confirm_key: accept({"ok": True})}))
    assert again == done
    with sqlite3.connect(tickets.DB) as conn:
        assert conn.execute("SELECT COUNT(*) FROM tickets").fetchone() == (1,)


async def test_decline_creates_nothing(tickets: ModuleType) -> None:
    person = Script(form=lambda question: Answer("decline"))
    async with Client.connect(tickets.app, answerer=person) as client:
        result = await client.call_tool("create_ticket", {"title": "x"})
    assert result.text == "No ticket created (decline)."
    assert len(person.asked) == 1
    assert not tickets.DB.exists()  # the database is opened only to insert
