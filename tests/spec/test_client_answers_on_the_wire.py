"""What our client sends back as an ``ElicitResult`` ("Response actions" of the spec page), seen
on the wire by a recording server run as a real stdio process (``tests/client/engine/rogue_server.py``).

* accept in URL mode: the content field is omitted, whatever the answerer returned;
* decline and cancel: no content, whatever the answerer returned;
* the ElicitResult carries ``action`` (and ``content`` for an accepted form) only: no
  ``resultType`` or ``_meta``, which it no longer has in 2026-07-28.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit.client import Answer, Client
from tests.client.engine.support import RogueLog, Script, unique_info

ROGUE = Path(__file__).resolve().parents[1] / "client" / "engine" / "rogue_server.py"


def rogue(tmp_path: Path) -> tuple[list[str], RogueLog]:
    log = tmp_path / "received.jsonl"
    return [sys.executable, str(ROGUE), "--stdio", "--log", str(log)], RogueLog(log)


async def answers_sent(tmp_path: Path, tool: str, person: Script) -> tuple[Any, list[dict[str, Any]]]:
    """Call ``tool`` once; return the result and the ``inputResponses`` of every retry."""
    command, log = rogue(tmp_path)
    info = unique_info("spec")
    async with Client.connect(command, answerer=person, client_info=info, stderr="capture") as client:
        result = await client.call_tool(tool)
    calls = log.requests(info["name"], "tools/call")
    return result, [c["params"]["inputResponses"] for c in calls if "inputResponses" in c["params"]]


async def test_a_url_accept_is_sent_without_content(tmp_path: Path) -> None:
    person = Script(url=lambda q: Answer("accept", {"api_key": "sk-live-leak"}), mode_names=("url",))
    result, sent = await answers_sent(tmp_path, "url_question", person)
    assert result.text == "url answered"
    assert sent == [{"u": {"action": "accept"}}]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_are_sent_without_content(tmp_path: Path, action: str) -> None:
    person = Script(form=lambda q: Answer(action, {"email": "ada@example.com", "age": 40}))  # type: ignore[arg-type]
    result, sent = await answers_sent(tmp_path, "record", person)
    assert sent == [{"signup": {"action": action}}]
    assert result.structured == {"received": {"signup": {"action": action}}}


async def test_an_accepted_form_sends_action_and_validated_content_only(tmp_path: Path) -> None:
    person = Script(form=lambda q: Answer("accept", {"email": "ada@example.com", "age": 40}))
    _, sent = await answers_sent(tmp_path, "record", person)
    # Defaults of the requested schema applied before sending; nothing beyond action and content.
    content = {"email": "ada@example.com", "age": 40, "plan": "free", "news": False}
    assert sent == [{"signup": {"action": "accept", "content": content}}]
