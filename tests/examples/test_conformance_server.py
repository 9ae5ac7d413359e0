"""The conformance fixtures' 2025-11-25 handlers serve both eras: as a 2026-07-28 request
(``InputRequiredResult`` rounds, in process) and as a 2025-11-25 session over stdio (the example
as a real process, spawned by our client; its questions come as real requests on stdout)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mcp_elicit.client import Answer, Client, FormQuestion
from tests.helpers import Script
from tests.server_process import PY

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "conformance_server.py"
USER = {"username": "testuser", "email": "test@example.com"}


@pytest.fixture
def fixtures(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_server_example", EXAMPLE)
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "conformance_server_example", module)  # for its dataclasses
    spec.loader.exec_module(module)
    return module


async def test_the_2026_era_asks_the_same_question_in_a_round(fixtures: ModuleType) -> None:
    person = Script(form=lambda question: Answer("accept", USER))
    async with Client.connect(fixtures.app, answerer=person) as client:
        assert client.era == "modern"
        done = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert done.text == f"User response: action=accept, content={json.dumps(USER)}"
    (question,) = person.asked
    assert question.message == "Who are you?"
    assert question.schema["required"] == ["username", "email"]


class Model:
    """The client's model: checks what the server asks it, answers "hi"."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    async def create_message(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}


async def test_over_stdio_a_2025_client_is_asked_with_real_requests() -> None:
    answers = {"Who are you?": Answer("accept", USER)}
    person = Script(form=lambda question: answers.get(question.message, Answer("decline")))
    model = Model()
    async with Client.connect(
        [PY, str(EXAMPLE), "--stdio"], answerer=person, sampler=model, protocol="2025-11-25", stderr="devnull"
    ) as client:
        assert client.era == "legacy"
        reply = await client.call_tool("test_elicitation", {"message": "Who are you?"})
        assert reply.text == f"User response: action=accept, content={json.dumps(USER)}"
        assert person.asked[0].message == "Who are you?"

        reply = await client.call_tool("test_elicitation_sep1034_defaults", {})
        assert reply.text == "Elicitation completed: action=decline, content=null"
        defaults = person.asked[1]
        assert isinstance(defaults, FormQuestion)
        props = defaults.schema["properties"]
        assert {name: prop["default"] for name, prop in props.items()} == {
            "name": "John Doe",
            "age": 30,
            "score": 95.5,
            "status": "active",
            "verified": True,
        }

        assert (await client.call_tool("test_sampling", {"prompt": "Say hi"})).text == "LLM response: hi"
        (asked,) = model.asked
        assert asked["messages"][0]["content"] == {"type": "text", "text": "Say hi"}
        assert asked["maxTokens"] == 100
        # stdout is the whole connection: closing "the stream" changes nothing.
        reconnected = await client.call_tool("test_reconnection", {})
        assert reconnected.text == "Reconnection test completed successfully"
