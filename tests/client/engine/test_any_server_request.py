"""Whatever a 2025-11-25 server asks, the client answers it once, with a well-formed response.

A real stdio server (``legacy_rogue_server.py``, its ``relay`` tool) sends, while one tools/call
is open, the requests hypothesis writes: ``elicitation/create`` with forms inside and outside the
subset, URL questions with any address or none, ``sampling/createMessage`` and ``roots/list`` to a
client that declared neither, ``ping``, unknown methods, any params. The server reports what
came back. Every request must get exactly one JSON-RPC response with its id (a result, or an
error with a code the spec gives it), an elicitation's result must be an ``ElicitResult``, the
answerer must only see forms inside the subset, and the call itself must end with the server's
text.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from mcp_elicit.client import Answer, Client, FormQuestion, UrlQuestion
from mcp_elicit.schema import check_schema
from mcp_elicit.wire import codec, errors

from .test_any_server_reply import elicitation_params, good_forms, json_values, other_methods

ROGUE = Path(__file__).with_name("legacy_rogue_server.py")
CODES = {errors.METHOD_NOT_FOUND, errors.INVALID_PARAMS, errors.INTERNAL_ERROR, errors.INVALID_REQUEST}


class Declining:
    """Declines every question, after checking that it is one the client may show."""

    modes = frozenset({"form", "url"})

    async def answer_form(self, question: FormQuestion) -> Answer:
        assert check_schema(question.schema) == [], question.schema  # a form the client must refuse
        event("a form was shown")
        return Answer("decline")

    async def answer_url(self, question: UrlQuestion) -> Answer:
        event("a URL question was shown")
        return Answer("cancel")


def fits_in_json(value: Any) -> bool:
    try:
        codec.dumps(value)
    except TypeError:
        return False
    return True


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    """One 2025-11-25 session, shared by a test's examples (one client's questions in turn)."""
    async with Client.connect(
        [sys.executable, str(ROGUE)], answerer=Declining(), protocol="2025-11-25", stderr="capture"
    ) as connected:
        yield connected


# What the server's relay sends: {method, params}, its params always present (as JSON, any value).
server_requests = st.one_of(
    good_forms,
    st.fixed_dictionaries(
        {"method": st.just("elicitation/create"), "params": elicitation_params | json_values}
    ),
    st.fixed_dictionaries({"method": other_methods, "params": json_values}),
)
KNOWN = ("elicitation/create", "sampling/createMessage", "roots/list", "ping")


def kind(method: str) -> str:
    """The method, or "another method" (for the statistics: one line each)."""
    return method if method in KNOWN else "another method"


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(server_requests, min_size=1, max_size=3))
async def test_every_server_request_gets_one_well_formed_answer(
    client: Client, requests: list[dict[str, Any]]
) -> None:
    # The requests travel to the server as the tool's arguments: integers past 64 bits cannot.
    assume(fits_in_json(requests))
    result = await client.call_tool("relay", {"requests": requests})
    replies = json.loads(result.text)
    assert len(replies) == len(requests), replies
    for request, reply in zip(requests, replies, strict=True):
        assert reply["jsonrpc"] == "2.0", reply
        assert str(reply["id"]).startswith("relay-"), reply
        assert ("result" in reply) != ("error" in reply), reply
        if "error" in reply:
            assert reply["error"]["code"] in CODES, (request, reply)
            assert reply["error"]["message"].strip(), reply
            event(f"{kind(request['method'])} -> {reply['error']['code']}")
        elif request["method"] == "elicitation/create":
            assert reply["result"]["action"] in ("accept", "decline", "cancel"), reply
            event(f"elicitation/create -> {reply['result']['action']}")
        else:
            event(f"{kind(request['method'])} -> result")
