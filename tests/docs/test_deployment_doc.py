"""docs/deployment.md as written: its server runs on the PostgreSQL at 127.0.0.1:5432 with the
single-use store, answers through our client, and does what the doc says the store is for: a
retry sent twice gets the answer committed for it, and the state cannot be used for another."""

from __future__ import annotations

import types

import pytest

from mcp_elicit.client import Client, ScriptedAnswerer
from mcp_elicit.state import KeyRing
from tests.docs.markdown_blocks import blocks, doc, run_python_blocks
from tests.helpers import RawCall, accept, find_pg_dsn, only_key, text


@pytest.fixture
def guide(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    assert [b.tag for b in blocks(doc("deployment.md"))] == ["py", "python"]
    monkeypatch.setenv("DATABASE_URL", find_pg_dsn("docs/deployment.md"))
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS", KeyRing.generate_secret())
    return run_python_blocks("deployment.md")


async def test_the_server_answers_through_the_client(guide: types.ModuleType) -> None:
    for answer, said in (({"action": "accept"}, "Closed T-1."), ({"action": "decline"}, "T-1 stays open.")):
        async with Client.connect(guide.app, answerer=ScriptedAnswerer([answer])) as client:
            assert (await client.call_tool("close_ticket", {"ticket_id": "T-1"})).text == said


async def test_a_retry_sent_twice_is_answered_once(guide: types.ModuleType) -> None:
    # Hand-written rounds (RawCall): our client never sends a round twice, nor the same
    # requestState with another answer, and these are what the single-use store is for.
    flow = RawCall(guide.app, "close_ticket", {"ticket_id": "T-2"})
    key = only_key(await flow.send())
    state = flow.state
    first = text(await flow.send({key: accept()}, state=state))
    again = text(await flow.send({key: accept()}, state=state))  # the same request re-issued
    assert first == again == "Closed T-2."
    refused = await flow.error({key: {"action": "decline"}}, state=state)  # another use of it
    assert refused.code == -32602
