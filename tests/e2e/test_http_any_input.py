"""Whatever a client sends, the HTTP app answers it: a property test over the whole ASGI app.

Hypothesis writes the requests: bytes that are not JSON, JSON that is not JSON-RPC, JSON-RPC with
any method, id and params, headers that do or do not match the body, ``tools/call`` rounds with
arbitrary arguments and answers, a real ``requestState`` with one character changed, and the
2025-11-25 opening (``initialize``) and session requests with any params. Every request must
be answered in time with an HTTP status the protocol uses, a body that is one JSON-RPC response
(an error code from the protocol's list, with a message) or nothing, and nothing logged at error
level: a traceback in the log is an unexpected exception, whatever the client got.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

import httpx
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from mcp_elicit.wire import errors
from mcp_elicit.wire.http import encode_header_value
from tests.e2e.any_input_server import build
from tests.helpers import no_errors_logged
from tests.strategies import json_values

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
CODES = {
    errors.PARSE_ERROR,
    errors.INVALID_REQUEST,
    errors.METHOD_NOT_FOUND,
    errors.INVALID_PARAMS,
    errors.HEADER_MISMATCH,
    errors.MISSING_REQUIRED_CLIENT_CAPABILITY,
    errors.UNSUPPORTED_PROTOCOL_VERSION,
}
# 200 and 202 (answered, a notification taken), and the refusals the transport documents in
# docs/protocol.md. Never a 5xx: nothing here makes the server unable to answer.
STATUSES = {200, 202, 400, 403, 404, 405, 406, 408, 413, 415}
WITHIN = 10.0  # seconds; the tools answer at once, so a request that takes this long hangs


@dataclass
class Served:
    """The server of one test's event loop (a 2025-11-25 session belongs to a loop), and its
    session once one is opened."""

    app: Any
    session: str | None = None


_served: dict[asyncio.AbstractEventLoop, Served] = {}


def served() -> Served:
    loop = asyncio.get_running_loop()
    if loop not in _served:
        _served.clear()  # an earlier test's loop is closed
        _served[loop] = Served(build().asgi())
    return _served[loop]


# -- what hypothesis writes --------------------------------------------------------------------

methods = st.sampled_from(
    [
        "tools/call",
        "tools/list",
        "prompts/get",
        "prompts/list",
        "resources/read",
        "resources/list",
        "server/discover",
        "initialize",
        "ping",
        "notifications/initialized",
        "elicitation/create",
    ]
) | st.text(max_size=20)
# Mostly ids a request may carry, so that most examples get past the envelope check.
good_ids = st.integers(-(2**53), 2**53) | st.text(max_size=10)
ids = st.one_of(
    good_ids, good_ids, good_ids, st.integers(-(2**70), 2**70), st.none(), st.floats(), st.booleans()
)
capabilities = st.sampled_from(
    [{}, {"elicitation": {}}, {"elicitation": {"form": {}}}, {"elicitation": {"form": {}, "url": {}}}]
) | st.dictionaries(st.text(max_size=8), json_values, max_size=3)
metas = (
    st.fixed_dictionaries(
        {
            "io.modelcontextprotocol/protocolVersion": st.sampled_from([MODERN, LEGACY, "2024-01-01"])
            | st.text(max_size=12),
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
        optional={"io.modelcontextprotocol/clientInfo": json_values, "progressToken": json_values},
    )
    | json_values
)
honest_meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "any-input", "version": "1"},
}
names = st.sampled_from(["file_ticket", "add", "greet", "nope"]) | st.text(max_size=10)
# The params of a request, any of the fields a method may read present or not.
request_params = st.fixed_dictionaries(
    {"_meta": st.just(honest_meta) | metas},
    optional={
        "name": names,
        "arguments": st.dictionaries(st.sampled_from(["summary", "a", "b", "name"]), json_values)
        | json_values,
        "uri": st.text(max_size=20),
        "cursor": json_values,
        "protocolVersion": st.sampled_from([LEGACY, "2025-06-18", MODERN]) | json_values,
        "capabilities": json_values,
        "inputResponses": json_values,
        "requestState": st.text(max_size=40) | json_values,
    },
)
# ElicitResults for the ticket form (any_input_server.Ticket): the right fields with any values.
elicit_results = st.fixed_dictionaries(
    {"action": st.sampled_from(["accept", "decline", "cancel"]) | json_values},
    optional={
        "content": st.fixed_dictionaries(
            {},
            optional={
                "title": json_values,
                "priority": st.integers(-5, 5) | json_values,
                "urgent": st.booleans() | json_values,
                "team": st.sampled_from(["ops", "dev"]) | json_values,
                "contact": json_values,
            },
        )
        | json_values
    },
)
answers = elicit_results | json_values


@dataclass
class Sent:
    """What one request got back."""

    status: int
    content_type: str
    body: bytes
    session: str | None = None

    def messages(self) -> list[Any]:
        if not self.body:
            return []
        if self.content_type.startswith("text/event-stream"):
            # SSE lines end at CR, LF or CRLF only (str.splitlines would also split at U+0085
            # and U+2028, which JSON strings may hold unescaped).
            lines = re.split(rb"\r\n|\r|\n", self.body)
            data = [line[5:].strip() for line in lines if line.startswith(b"data:")]
            return [json.loads(item) for item in data if item]
        return [json.loads(self.body)]


async def call(body: bytes, headers: dict[str, str]) -> Sent:
    """One POST to ``/mcp`` straight into this loop's ASGI app (httpx's ASGI transport: no
    socket, the client stays connected until the reply is complete)."""
    transport = httpx.ASGITransport(app=served().app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        reply = await asyncio.wait_for(http.post("/mcp", content=body, headers=headers), WITHIN)
    return Sent(
        reply.status_code,
        reply.headers.get("content-type", ""),
        reply.content,
        reply.headers.get("mcp-session-id"),
    )


def headers_for(message: Any, version: str = MODERN, **extra: str) -> dict[str, str]:
    """The headers an honest client sends with ``message`` (when it is a request)."""
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": version,
    }
    if isinstance(message, dict) and isinstance(message.get("method"), str):
        headers["mcp-method"] = encode_header_value(message["method"])
        params = message.get("params")
        if isinstance(params, dict):
            target = params.get("uri" if message["method"] == "resources/read" else "name")
            if isinstance(target, str):
                headers["mcp-name"] = encode_header_value(target)
    headers.update(extra)
    return headers


def check(sent: Sent, request_id: Any = ...) -> dict[str, Any] | None:
    """The protocol's rules for any answer; returns the final JSON-RPC response, if any."""
    assert sent.status in STATUSES, sent
    messages = sent.messages()
    # What the examples reached (pytest --hypothesis-show-statistics): a run where every
    # request is refused at the first check would prove little.
    final_kind = "no body" if not messages else "error" if "error" in messages[-1] else "result"
    event(f"HTTP {sent.status}, {final_kind}")
    if final_kind == "error":
        event(f"code {messages[-1]['error']['code']}")
    if not messages:
        assert sent.status == 202 or sent.status >= 400, sent  # taken, or refused before JSON-RPC
        return None
    final = messages[-1]
    assert isinstance(final, dict), sent
    assert final.get("jsonrpc") == "2.0", sent
    assert ("result" in final) != ("error" in final), final
    if "error" in final:
        error = final["error"]
        assert error["code"] in CODES, final
        assert isinstance(error["message"], str), final
        assert error["message"].strip(), final
    else:
        assert sent.status == 200, sent
    if request_id is not ...:
        assert final["id"] in (request_id, None), final
    return final


async def first_round(summary: str) -> dict[str, Any]:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "file_ticket",
            "arguments": {"summary": summary},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
            },
        },
    }
    final = check(await call(json.dumps(message).encode(), headers_for(message)))
    assert final is not None
    result: dict[str, Any] = final["result"]
    assert result["resultType"] == "input_required", final
    return result


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- the properties ------------------------------------------------------------------------------


@SETTINGS
@given(st.binary(max_size=300))
async def test_any_bytes_get_a_json_rpc_error_or_an_answer(body: bytes) -> None:
    with no_errors_logged():
        check(await call(body, headers_for(None)))


@SETTINGS
@given(json_values, st.sampled_from([MODERN, LEGACY, "2024-01-01", "junk"]))
async def test_any_json_gets_an_answer(document: Any, version: str) -> None:
    with no_errors_logged():
        check(await call(json.dumps(document).encode(), headers_for(document, version)))


@SETTINGS
@given(
    st.sampled_from(["1.0", "2", 2.0, None]) | json_values,
    ids,
    st.sampled_from(["tools/call", "tools/list", "ping"]) | st.text(max_size=10),
)
async def test_a_broken_envelope_is_an_invalid_request(jsonrpc: Any, request_id: Any, method: str) -> None:
    message = {"jsonrpc": jsonrpc, "id": request_id, "method": method, "params": {"_meta": honest_meta}}
    with no_errors_logged():
        final = check(await call(json.dumps(message).encode(), headers_for(message)))
    assert final is not None
    assert final["error"]["code"] in (errors.INVALID_REQUEST, errors.PARSE_ERROR), final


@SETTINGS
@given(
    good_ids,
    methods,
    request_params,
    st.sampled_from([True, True, True, False]),
)
async def test_any_json_rpc_request_gets_an_answer(
    request_id: Any, method: str, params: Any, honest_headers: bool
) -> None:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    headers = headers_for(message) if honest_headers else headers_for(None)
    with no_errors_logged():
        check(await call(json.dumps(message).encode(), headers), request_id)


@SETTINGS
@given(
    st.dictionaries(st.text(max_size=10), json_values, max_size=3) | json_values,
    st.dictionaries(st.text(max_size=12), answers, max_size=3) | json_values,
    st.booleans(),
)
async def test_a_tool_call_with_any_arguments_and_answers_gets_an_answer(
    arguments: Any, input_responses: Any, with_state: bool
) -> None:
    params: dict[str, Any] = {
        "name": "file_ticket",
        "arguments": arguments,
        "inputResponses": input_responses,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        },
    }
    with no_errors_logged():
        if with_state:
            first = await first_round("printer")
            params["arguments"] = {"summary": "printer"}
            params["requestState"] = first["requestState"]
            # Answer the real key with whatever hypothesis wrote, too.
            if isinstance(input_responses, dict):
                (key,) = first["inputRequests"]
                params["inputResponses"] = {
                    key: next(iter(input_responses.values()), None),
                    **input_responses,
                }
        message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
        check(await call(json.dumps(message).encode(), headers_for(message)), 7)


@SETTINGS
@given(st.data())
async def test_a_changed_request_state_is_always_refused(data: st.DataObject) -> None:
    with no_errors_logged():
        first = await first_round("changed")
        state: str = first["requestState"]
        # Drawn without the state's length, which varies from call to call.
        at = data.draw(st.integers(0, 2**16), label="at") % len(state)
        replacement = data.draw(
            st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/. é"),
            label="replacement",
        )
        assume(replacement != state[at])
        changed = state[:at] + replacement + state[at + 1 :]
        (key,) = first["inputRequests"]
        accept = {
            "action": "accept",
            "content": {"title": "T", "priority": 1, "urgent": False, "team": "ops"},
        }
        params = {
            "name": "file_ticket",
            "arguments": {"summary": "changed"},
            "inputResponses": {key: accept},
            "requestState": changed,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
            },
        }
        message = {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": params}
        final = check(await call(json.dumps(message).encode(), headers_for(message)), 8)
    assert final is not None
    assert "error" in final, final  # never taken for the state it was


@SETTINGS
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "protocolVersion": st.sampled_from([LEGACY, "2025-06-18", MODERN, "1999-01-01"]) | json_values,
            "capabilities": capabilities | json_values,
            "clientInfo": st.fixed_dictionaries({"name": st.text(max_size=8), "version": st.text(max_size=4)})
            | json_values,
        },
    )
    | json_values,
    ids,
)
async def test_any_initialize_gets_an_answer(params: Any, request_id: Any) -> None:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with no_errors_logged():
        final = check(await call(json.dumps(message).encode(), headers))
    if final is not None and "result" in final:
        assert final["result"]["protocolVersion"] in (LEGACY, "2025-06-18"), final


async def legacy_session() -> str:
    """A 2025-11-25 session with form elicitation on this loop's server, opened once."""
    target = served()
    if target.session is None:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {"elicitation": {"form": {}}},
                "clientInfo": {"name": "any-input", "version": "1"},
            },
        }
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        opened = await call(json.dumps(message).encode(), headers)
        assert opened.status == 200, opened
        assert opened.session is not None, opened
        notified = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        headers.update({"mcp-session-id": opened.session, "mcp-protocol-version": LEGACY})
        assert (await call(json.dumps(notified).encode(), headers)).status == 202
        target.session = opened.session
    return target.session


@SETTINGS
@given(
    good_ids, methods, st.dictionaries(st.sampled_from(["name", "arguments", "_meta", "uri"]), json_values)
)
async def test_any_request_in_a_2025_11_25_session_gets_an_answer(
    request_id: Any, method: str, params: Any
) -> None:
    session = await legacy_session()
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": LEGACY,
        "mcp-session-id": session,
    }
    with no_errors_logged():
        check(await call(json.dumps(message).encode(), headers))
