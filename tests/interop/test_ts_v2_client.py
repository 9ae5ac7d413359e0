"""Interop: the official TypeScript SDK **v2** client (``@modelcontextprotocol/client`` 2.4.0, the
second real implementation of 2026-07-28) against our server, in both eras, over stdio and
Streamable HTTP.

``ts_v2_client.mjs`` runs the SDK from a plan (the era, the calls, the answers to give) and
reports every message each way (and over HTTP every exchange's MCP headers and status), so these
tests read the wire, not only the outcome. The server is ``tests/interop/tickets_server.py``.

* ``2025-11-25``: the SDK's default (``versionNegotiation`` left out): ``initialize``, then each
  question is a real ``elicitation/create`` request that its handler answers.
* ``2026-07-28``: ``versionNegotiation: {mode: "auto"}``: ``server/discover``, then every request
  carries its ``_meta`` envelope, and the SDK fulfils each ``input_required`` result through the
  same handler and retries with ``inputResponses`` and the echoed ``requestState``. On stdio the
  SDK probes in a throw-away sibling process, so ``server/discover`` is not on the recorded
  connection there; its answer (from our server) is what ``getDiscoverResult()`` reports.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.interop.driver_report import accept, received, run_driver, sent, text
from tests.interop.legacy_support import HERE, ts_v2_env
from tests.interop.sdk_support import SERVER_ENV, SERVER_SCRIPT

DRIVER = HERE / "ts_v2_client.mjs"
FORM_AND_URL: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


@pytest.fixture(params=["stdio", "http"])
def server(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """How the SDK reaches the ticket server: it spawns the process itself (stdio, its stderr
    checked by :func:`run`), or the module's server on 127.0.0.1 (HTTP, its log checked after
    the test: nothing the SDK sent may have crashed a handler)."""
    if request.param == "stdio":
        yield {"command": [sys.executable, str(SERVER_SCRIPT), "--stdio"], "env": SERVER_ENV}
        return
    url, log = request.getfixturevalue("http_server")
    start = log.stat().st_size
    yield {"url": url}
    with log.open("rb") as output:
        output.seek(start)
        written = output.read().decode(errors="replace")
    assert "Traceback" not in written, written


@pytest.fixture(params=[LEGACY, MODERN])
def era(request: pytest.FixtureRequest) -> str:
    """The revision the SDK is made to speak."""
    return str(request.param)


def run(
    server: dict[str, Any],
    era: str,
    *calls: dict[str, Any],
    answers: dict[str, Any] | None = None,
    capabilities: dict[str, Any] = FORM_AND_URL,
) -> dict[str, Any]:
    """Run the SDK through ``calls`` (``{"name", "arguments"}`` for a tool, ``{"prompt", ...}``,
    ``{"resource": uri}``), answering each question by its message from ``answers`` (a list under
    one message: one answer per time it is asked); its report, checked to be in ``era``."""
    plan = {
        "server": server,
        "era": "auto" if era == MODERN else "legacy",
        "capabilities": capabilities,
        "answers": answers or {},
        "calls": list(calls),
    }
    report = run_driver(DRIVER, plan, ts_v2_env())
    assert report["errors"] == []  # nothing our server sent puzzled the SDK
    assert (report["era"], report["protocolVersion"]) == (
        ("modern", MODERN) if era == MODERN else ("legacy", LEGACY)
    )
    return report


def reply_to(report: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """Our server's response to one of the SDK's requests."""
    replies: list[dict[str, Any]] = [
        m["received"]
        for m in report["wire"]
        if "received" in m and m["received"].get("id") == request["id"] and "method" not in m["received"]
    ]
    (reply,) = replies
    return reply


def answered(report: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """The SDK's response to one of our server's requests (2025-11-25)."""
    (response,) = [m for m in sent(report) if m.get("id") == request["id"] and "method" not in m]
    return response


def rounds(report: dict[str, Any], method: str = "tools/call") -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(params, result) of every request of ``method``, in order."""
    return [(request["params"], reply_to(report, request)["result"]) for request in sent(report, method)]


def test_the_era_is_spoken_on_every_message(server: dict[str, Any], era: str) -> None:
    """Each era's shape, end to end, with a tool that asks nothing (it reports the
    capabilities it was given): 2025-11-25 opens with ``initialize`` and never shows a 2026 byte;
    2026-07-28 has no handshake, and every request carries its own envelope (and on HTTP the
    matching ``MCP-Protocol-Version`` header, without a session)."""
    report = run(server, era, {"name": "client_capabilities", "arguments": {}})
    (outcome,) = report["results"]
    assert json.loads(text(outcome)) == FORM_AND_URL
    assert report["serverInfo"] == {"name": "interop-tickets", "version": "1.2.3"}
    assert report["instructions"] == "Ticket fixtures for SDK interop tests."
    assert "create_ticket" in report["tools"]
    requests = [m for m in sent(report) if "id" in m and "method" in m]
    if era == LEGACY:
        first = requests[0]
        assert first["method"] == "initialize"
        assert first["params"]["protocolVersion"] == LEGACY
        assert reply_to(report, first)["result"]["protocolVersion"] == LEGACY
        assert sent(report, "notifications/initialized")
        assert not sent(report, "server/discover")
        assert all("_meta" not in m.get("params", {}) for m in requests)
        results = [m["received"]["result"] for m in report["wire"] if "result" in m.get("received", {})]
        assert all("resultType" not in result for result in results)
        if "url" in server:
            assert report["sessionId"]
            assert {h["protocolVersion"] for h in report["http"][1:]} == {LEGACY}
        return
    assert not sent(report, "initialize")
    assert report["discover"]["supportedVersions"] == [MODERN]
    assert report["discover"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "interop-tickets"
    for request in requests:
        meta = request["params"]["_meta"]
        assert meta[PROTOCOL_VERSION] == MODERN
        assert meta[CAPABILITIES] == FORM_AND_URL
        assert reply_to(report, request)["result"]["resultType"] == "complete"
    if "url" in server:
        assert requests[0]["method"] == "server/discover"  # in place on HTTP
        assert report["sessionId"] is None
        heads = [(h["method"], h["protocolVersion"], h["sessionId"], h["status"]) for h in report["http"]]
        assert heads == [("POST", MODERN, None, 200)] * 3
        assert [h["mcpMethod"] for h in report["http"]] == ["server/discover", "tools/list", "tools/call"]
        assert report["http"][-1]["mcpName"] == "client_capabilities"
    else:
        assert requests[0]["method"] == "tools/list"  # the probe ran in the SDK's sibling process


def test_a_form_answer_reaches_the_tool_typed(server: dict[str, Any], era: str) -> None:
    report = run(
        server,
        era,
        {"name": "create_ticket", "arguments": {"title": "Kettle"}},
        answers={"Priority for 'Kettle'?": accept(priority="high", notify=True)},
    )
    (outcome,) = report["results"]
    assert text(outcome) == "created 'Kettle' priority=high notify=True (round 1)"
    (asked,) = report["asked"]
    assert asked["mode"] == "form"
    assert asked["requestedSchema"]["required"] == ["priority"]
    if era == LEGACY:
        (request,) = received(report, "elicitation/create")
        assert request["params"] == asked
        assert answered(report, request)["result"] == accept(priority="high", notify=True)
        assert len(sent(report, "tools/call")) == 1
        return
    assert not received(report, "elicitation/create")  # no server-to-client request at 2026-07-28
    (first, first_result), (retry, final) = rounds(report)
    assert first_result["resultType"] == "input_required"
    assert first_result["inputRequests"] == {"priority": {"method": "elicitation/create", "params": asked}}
    state = first_result["requestState"]
    assert isinstance(state, str)
    assert state
    assert "inputResponses" not in first
    assert "requestState" not in first
    assert retry["inputResponses"] == {"priority": accept(priority="high", notify=True)}
    assert retry["requestState"] == state  # echoed byte for byte
    assert (retry["name"], retry["arguments"]) == (first["name"], first["arguments"])
    assert retry["_meta"][PROTOCOL_VERSION] == MODERN
    first_id, retry_id = (m["id"] for m in sent(report, "tools/call"))
    assert first_id != retry_id
    assert final["resultType"] == "complete"
    if "url" in server:
        both = [(h["mcpMethod"], h["mcpName"]) for h in report["http"][-2:]]  # the call, then its retry
        assert both == [("tools/call", "create_ticket")] * 2


def test_decline_and_cancel_reach_the_tool(server: dict[str, Any], era: str) -> None:
    report = run(
        server,
        era,
        {"name": "create_ticket", "arguments": {"title": "Mug"}},
        {"name": "create_ticket", "arguments": {"title": "Cup"}},
        answers={"Priority for 'Mug'?": {"action": "decline"}, "Priority for 'Cup'?": {"action": "cancel"}},
    )
    declined, cancelled = report["results"]
    assert text(declined) == "not created: decline (round 1)"
    assert text(cancelled) == "not created: cancel (round 1)"
    if era == MODERN:
        retries = [params for params, _result in rounds(report) if "inputResponses" in params]
        assert [params["inputResponses"] for params in retries] == [
            {"priority": {"action": "decline"}},
            {"priority": {"action": "cancel"}},
        ]


def test_two_questions_in_turn(server: dict[str, Any], era: str) -> None:
    """The second question depends on the first answer: two rounds (2026-07-28: each retry
    answers only the latest round, with that round's state) or two requests one after the other."""
    report = run(
        server,
        era,
        {"name": "plan_ticket", "arguments": {"title": "Lamp"}},
        answers={
            "Who should take 'Lamp'?": accept(assignee="ada"),
            "In how many days should ada finish 'Lamp'?": accept(days=4),
        },
    )
    (outcome,) = report["results"]
    assert text(outcome) == "'Lamp': ada in 4 days (round 2)"
    assert [asked["message"] for asked in report["asked"]] == [
        "Who should take 'Lamp'?",
        "In how many days should ada finish 'Lamp'?",
    ]
    if era == LEGACY:
        first, second = received(report, "elicitation/create")
        assert first["id"] != second["id"]
        # In turn: the second is sent only once the first is answered.
        order = [m.get("sent", m.get("received")) for m in report["wire"]]
        assert order.index(second) > order.index(answered(report, first))
        return
    (_, one), (retry1, two), (retry2, final) = rounds(report)
    assert list(one["inputRequests"]) == ["assignee"]
    assert list(two["inputRequests"]) == ["due"]
    assert retry1["inputResponses"] == {"assignee": accept(assignee="ada")}
    assert retry2["inputResponses"] == {"due": accept(days=4)}
    assert (retry1["requestState"], retry2["requestState"]) == (one["requestState"], two["requestState"])
    assert one["requestState"] != two["requestState"]
    assert final["resultType"] == "complete"


def test_a_url_question(server: dict[str, Any], era: str) -> None:
    """URL mode: at 2025-11-25 with an ``elicitationId`` (and no completion notice: the accept
    says only that the user agreed to open the page); at 2026-07-28 without one (removed), and
    the accept carries no content."""
    report = run(
        server,
        era,
        {"name": "connect_tracker", "arguments": {}},
        answers={"Connect your issue tracker account.": {"action": "accept"}},
    )
    (outcome,) = report["results"]
    assert text(outcome) == "tracker consent: accept (round 1)"
    (asked,) = report["asked"]
    assert (asked["mode"], asked["url"]) == ("url", "https://tracker.example.com/connect")
    if era == LEGACY:
        (request,) = received(report, "elicitation/create")
        assert len(request["params"]["elicitationId"]) >= 32
        assert received(report, "notifications/elicitation/complete") == []
        return
    assert "elicitationId" not in asked
    (_, first), (retry, final) = rounds(report)
    assert first["inputRequests"]["tracker"]["params"] == asked
    assert retry["inputResponses"] == {"tracker": {"action": "accept"}}
    assert final["resultType"] == "complete"


def test_an_invalid_answer_is_asked_again_with_the_reason(server: dict[str, Any], era: str) -> None:
    """The SDK sends what its handler returns without checking it against the form (``urgent``
    is not one of the choices): our server asks again with the reason, never hands it on."""
    report = run(
        server,
        era,
        {"name": "create_ticket", "arguments": {"title": "Chair"}},
        answers={"Priority for 'Chair'?": [accept(priority="urgent"), accept(priority="low")]},
    )
    (outcome,) = report["results"]
    assert text(outcome) == "created 'Chair' priority=low notify=False (round 2)"
    first, again = report["asked"]
    assert first["message"] == "Priority for 'Chair'?"
    assert again["message"].startswith("Priority for 'Chair'?\n\nThe previous answer was not accepted:")
    assert "urgent" in again["message"]
    if era == LEGACY:
        bad, _good = received(report, "elicitation/create")
        assert answered(report, bad)["result"] == accept(priority="urgent")
    else:
        (_, _), (retry, reasked), (_, final) = rounds(report)
        assert retry["inputResponses"] == {"priority": accept(priority="urgent")}
        assert reasked["resultType"] == "input_required"
        assert final["resultType"] == "complete"


def test_prompts_and_resources_ask_too(server: dict[str, Any], era: str) -> None:
    """``prompts/get`` and ``resources/read`` are the other requests that may ask."""
    report = run(
        server,
        era,
        {"prompt": "ticket_brief", "arguments": {"topic": "printers"}},
        {"resource": "tickets://42"},
        answers={
            "Who is the brief about 'printers' for?": accept(assignee="ops"),
            "Show ticket 42?": accept(ok=True),
        },
        capabilities={"elicitation": {"form": {}}},
    )
    prompt, resource = report["results"]
    (message,) = prompt["result"]["messages"]
    assert message["content"]["text"] == "Write a ticket brief about printers for ops."
    assert json.loads(resource["result"]["contents"][0]["text"]) == {"id": "42", "shown": "yes"}
    if era == MODERN:
        for method in ("prompts/get", "resources/read"):
            (_, first), (retry, final) = rounds(report, method)
            assert first["resultType"] == "input_required"
            assert retry["requestState"] == first["requestState"]
            assert final["resultType"] == "complete"
    else:
        assert len(received(report, "elicitation/create")) == 2


def test_a_client_without_elicitation_is_never_asked(server: dict[str, Any], era: str) -> None:
    """No ``elicitation`` capability: nothing is asked, the call that needs a question fails with
    -32021 naming the mode it needs (HTTP 400 at 2026-07-28), and a tool that asks nothing works."""
    report = run(
        server,
        era,
        {"name": "create_ticket", "arguments": {"title": "Mug"}},
        {"name": "connect_tracker", "arguments": {}},
        {"name": "client_capabilities", "arguments": {}},
        capabilities={},
    )
    form, url, plain = report["results"]
    assert form["error"]["code"] == -32021
    assert form["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert url["error"]["code"] == -32021
    assert url["error"]["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}
    assert json.loads(text(plain)) == {}
    assert report["asked"] == []
    assert not received(report, "elicitation/create")
    for message in report["wire"]:
        assert "inputRequests" not in message.get("received", {}).get("result", {})
    if era == MODERN:
        assert all(m["params"]["_meta"][CAPABILITIES] == {} for m in sent(report, "tools/call"))
        if "url" in server:
            assert [h["status"] for h in report["http"] if h["mcpMethod"] == "tools/call"] == [400, 400, 200]
    else:
        assert sent(report, "initialize")[0]["params"]["capabilities"] == {}
