"""The client engine against ``examples/tickets.py``, the project's own example server, spawned
over stdio and served over Streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_elicit.client import Answer, Client, FormQuestion
from tests.helpers import free_port
from tests.server_process import PY, REPO, ServerProcess, running_server

from .support import Script

TICKETS = str(REPO / "examples" / "tickets.py")


@pytest.fixture(scope="module")
def tickets_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    port = free_port()
    argv = [PY, TICKETS, "--http", "--port", str(port)]
    with running_server(argv, log=tmp_path_factory.mktemp("tickets") / "server.log", port=port) as server:
        yield server


@pytest.fixture(params=["stdio", "http"])
def tickets(request: pytest.FixtureRequest) -> str | list[str]:
    if request.param == "stdio":
        return [PY, TICKETS]
    server: ServerProcess = request.getfixturevalue("tickets_http")
    return server.url


def person(first_reporter: str) -> Script:
    """Gives a bad e-mail first (the engine must catch it), then a good one; confirms."""
    reporters = iter([first_reporter, "ada@example.com"])

    def form(question: FormQuestion) -> Answer:
        if "reporter" in question.schema["properties"]:
            return Answer("accept", {"reporter": next(reporters), "watchers": ["billing"]})
        return Answer("accept", {"ok": True})

    return Script(form=form, url=lambda q: Answer("accept"))


async def test_create_ticket_with_defaults_and_a_corrected_answer(tickets: Any) -> None:
    answerer = person("not-an-email")
    async with Client.connect(tickets, answerer=answerer, stderr="devnull") as client:
        assert client.server_identity.name == "tickets"
        assert client.server_identity.title == "Ticket tracker (mcp-elicit example)"
        result = await client.call_tool("create_ticket", {"title": "Printer on fire"})
    summary = r"Printer on fire \(normal, no due date, watchers: billing, reporter: ada@example\.com\)"
    assert re.fullmatch(rf"Created TCK-\d+: {summary}", result.text), result.text
    details, corrected, confirm = answerer.asked
    assert isinstance(corrected, FormQuestion)
    assert details.key == corrected.key
    assert set(corrected.errors) == {"reporter"}
    assert corrected.previous == {"reporter": "not-an-email", "watchers": ["billing"]}
    assert isinstance(confirm, FormQuestion)
    assert confirm.message.startswith(
        "Create 'Printer on fire': normal priority, no due date, notify billing?"
    )
