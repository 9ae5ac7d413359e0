"""Interop: the official TypeScript SDK v1 client (``@modelcontextprotocol/sdk`` 1.32.2, what most
MCP clients in use are built on) against our server, over stdio and Streamable HTTP.

The SDK only speaks 2025-11-25 and earlier: it starts with ``initialize`` and answers each
question of a tool as a real ``elicitation/create`` request. The server is
``tests/interop/tickets_server.py``, the same handlers the Python SDK interop tests drive in
both eras. ``ts_v1_client.mjs`` runs the SDK from a plan (the calls, and the answers to give in
order) and reports every message each way, so these tests read the wire, not only the outcome.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from tests.interop.driver_report import accept, received, run_driver, sent, text
from tests.interop.legacy_support import HERE, ts_env
from tests.interop.sdk_support import SERVER_ENV, SERVER_SCRIPT

DRIVER = HERE / "ts_v1_client.mjs"
FORM_AND_URL = {"elicitation": {"form": {}, "url": {}}}


@pytest.fixture(params=["stdio", "http"])
def server(request: pytest.FixtureRequest) -> dict[str, Any]:
    """How the SDK reaches the ticket server: it spawns the process itself (stdio), or the
    module's server on 127.0.0.1 (HTTP)."""
    if request.param == "stdio":
        return {"command": [sys.executable, str(SERVER_SCRIPT), "--stdio"], "env": SERVER_ENV}
    url, _log = request.getfixturevalue("http_server")
    return {"url": url}


def run(
    server: dict[str, Any],
    *calls: dict[str, Any],
    answers: dict[str, Any] | None = None,
    capabilities: dict[str, Any] = FORM_AND_URL,
    log_level: str | None = None,
) -> dict[str, Any]:
    """Run the SDK through ``calls``, answering each question by its message from ``answers`` (a
    list under one message: one answer per time it is asked); its report."""
    plan = {"server": server, "capabilities": capabilities, "answers": answers or {}, "calls": list(calls)}
    if log_level is not None:
        plan["logLevel"] = log_level
    return run_driver(DRIVER, plan, ts_env())


def test_the_handshake_is_2025_11_25_and_nothing_of_2026(server: dict[str, Any]) -> None:
    report = run(server)
    assert report["serverInfo"] == {"name": "interop-tickets", "version": "1.2.3"}
    assert report["instructions"] == "Ticket fixtures for SDK interop tests."
    assert {"tools", "prompts", "resources", "logging"} <= set(report["capabilities"])
    assert "create_ticket" in report["tools"]
    first = sent(report)[0]
    assert first["method"] == "initialize"
    (answer,) = [m["received"] for m in report["wire"] if m.get("received", {}).get("id") == first["id"]]
    assert answer["result"]["protocolVersion"] == "2025-11-25"
    assert sent(report, "notifications/initialized")
    assert not sent(report, "server/discover")
    for message in report["wire"]:
        result = message.get("received", {}).get("result")
        if isinstance(result, dict):
            assert "resultType" not in result
    if "url" in server:
        assert report["sessionId"]


def test_a_form_is_a_real_request_and_its_answer_reaches_the_tool(server: dict[str, Any]) -> None:
    report = run(
        server,
        {"name": "create_ticket", "arguments": {"title": "Kettle"}},
        answers={"Priority for 'Kettle'?": accept(priority="high")},
    )
    (outcome,) = report["results"]
    assert text(outcome) == "created 'Kettle' priority=high notify=False (round 1)"
    (request,) = received(report, "elicitation/create")
    assert request["params"]["mode"] == "form"
    assert request["params"]["requestedSchema"]["required"] == ["priority"]
    # The answer is a response to the server's request, on the id the server chose.
    (response,) = [m for m in sent(report) if m.get("id") == request["id"] and "result" in m]
    assert response["result"]["action"] == "accept"
    assert len(sent(report, "tools/call")) == 1


def test_questions_in_turn_and_at_once(server: dict[str, Any]) -> None:
    report = run(
        server,
        {"name": "plan_ticket", "arguments": {"title": "Lamp"}},
        {"name": "triage_ticket", "arguments": {"title": "Desk"}},
        answers={
            "Who should take 'Lamp'?": accept(assignee="ada"),
            "In how many days should ada finish 'Lamp'?": accept(days=4),
            "Assignee for 'Desk'?": accept(assignee="bob"),
            "Days until 'Desk' is due?": accept(days=2),
        },
    )
    in_turn, together = report["results"]
    assert text(in_turn) == "'Lamp': ada in 4 days (round 2)"
    assert text(together) == "'Desk': bob in 2 days (round 1)"
    assert [asked["message"] for asked in report["asked"][:2]] == [
        "Who should take 'Lamp'?",
        "In how many days should ada finish 'Lamp'?",
    ]
    # The gathered questions are two requests in flight at once, each with an id of its own.
    assert len({m["id"] for m in received(report, "elicitation/create")}) == 4


def test_an_invalid_answer_is_asked_again_with_the_reason(server: dict[str, Any]) -> None:
    report = run(
        server,
        {"name": "create_ticket", "arguments": {"title": "Chair"}},
        answers={"Priority for 'Chair'?": [accept(priority="urgent"), accept(priority="low")]},
    )
    (outcome,) = report["results"]
    assert text(outcome) == "created 'Chair' priority=low notify=False (round 2)"
    first, again = report["asked"]
    assert first["message"] == "Priority for 'Chair'?"
    assert again["message"].startswith("Priority for 'Chair'?\n\nThe previous answer was not accepted:")


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_reach_the_tool(server: dict[str, Any], action: str) -> None:
    report = run(
        server,
        {"name": "create_ticket", "arguments": {"title": "Mug"}},
        answers={"Priority for 'Mug'?": {"action": action}},
    )
    (outcome,) = report["results"]
    assert text(outcome) == f"not created: {action} (round 1)"


def test_url_mode_carries_an_elicitation_id(server: dict[str, Any]) -> None:
    report = run(
        server,
        {"name": "connect_tracker", "arguments": {}},
        answers={"Connect your issue tracker account.": {"action": "accept"}},
    )
    (outcome,) = report["results"]
    assert text(outcome) == "tracker consent: accept (round 1)"
    (request,) = received(report, "elicitation/create")
    assert request["params"]["mode"] == "url"
    assert request["params"]["url"] == "https://tracker.example.com/connect"
    assert len(request["params"]["elicitationId"]) >= 32


def test_a_form_only_client_is_never_sent_a_url_question(server: dict[str, Any]) -> None:
    """``elicitation: {}`` means form only: the call fails before anything is asked, with the
    code the Python SDK uses on this wire too (-32021, implementation-defined in 2025-11-25)."""
    report = run(server, {"name": "connect_tracker", "arguments": {}}, capabilities={"elicitation": {}})
    (outcome,) = report["results"]
    assert not received(report, "elicitation/create")
    assert outcome["error"]["code"] == -32021
    assert (
        "needs URL-mode elicitation (elicitation.url), which the client's capabilities do not declare"
        in (outcome["error"]["message"])
    )


def test_logs_follow_the_level_the_client_set(server: dict[str, Any]) -> None:
    report = run(
        server,
        {"name": "audit_ticket", "arguments": {"title": "Logs"}},
        answers={"Audit 'Logs'?": accept(ok=True)},
        log_level="info",
    )
    (outcome,) = report["results"]
    assert text(outcome) == "audited 'Logs' (round 1)"
    assert report["logs"] == [
        {"level": "info", "logger": "audit", "data": {"title": "Logs", "confirmed": True}},
        {"level": "warning", "logger": "audit", "data": "'Logs' audited"},
    ]
