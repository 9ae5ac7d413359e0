"""The sans-IO parts of the engine: the MRTR state machine, input-request checks, declared
capabilities, JSON-RPC classification, the SSE decoder and Mcp-Param headers. No I/O here."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit.client.capabilities import Declared
from mcp_elicit.client.errors import (
    InvalidSchemaError,
    MalformedMessageError,
    McpClientError,
    MissingCapabilityError,
    RoundLimitError,
    UndeclaredRequestError,
)
from mcp_elicit.client.inputs import FormInput, RootsInput, SamplingInput, UrlInput, parse_input_requests
from mcp_elicit.client.messages import decode, server_error
from mcp_elicit.client.rounds import AskInputs, Backoff, Complete, RetryAfter, Rounds
from mcp_elicit.client.sse import SseDecoder
from mcp_elicit.wire.jsonrpc import ErrorResponse, Notification, Request, Result
from mcp_elicit.wire.param_headers import InvalidHeaderAnnotation, header_map, param_headers

from .support import Script

FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
ALL = Declared(frozenset({"form", "url"}), sampling=True, roots=True)
FORM_ONLY = Declared(frozenset({"form"}), sampling=False, roots=False)


def form_request(key: str = "q") -> dict[str, Any]:
    return {key: {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": FORM}}}


def flow(method: str = "tools/call", *, max_rounds: int = 5, declared: Declared = ALL) -> Rounds:
    return Rounds(
        method, {"name": "t", "arguments": {"a": 1}}, declared, max_rounds=max_rounds, backoff=Backoff()
    )


# -- the loop -----------------------------------------------------------------------------------
def test_absent_result_type_is_complete_and_unknown_is_refused() -> None:
    assert flow().receive({"content": []}) == Complete({"content": []})
    assert flow().receive({"resultType": "complete", "x": 1}) == Complete({"resultType": "complete", "x": 1})
    with pytest.raises(MalformedMessageError, match="unknown resultType 'task'"):
        flow().receive({"resultType": "task"})
    with pytest.raises(MalformedMessageError, match="unknown resultType 7"):
        flow().receive({"resultType": 7})


def test_retry_repeats_params_adds_answers_and_echoes_the_same_state_object() -> None:
    f = flow()
    state = "opaque \u2028 é"
    step = f.receive({"resultType": "input_required", "inputRequests": form_request(), "requestState": state})
    assert isinstance(step, AskInputs)
    assert [type(r) for r in step.requests] == [FormInput]
    f.retry_with({"q": {"action": "accept", "content": {"ok": True}}}, step.requests)
    retry = f.params()
    assert retry == {
        "name": "t",
        "arguments": {"a": 1},
        "inputResponses": {"q": {"action": "accept", "content": {"ok": True}}},
        "requestState": state,
    }
    assert retry["requestState"] is state  # never rebuilt


def test_no_state_means_no_state_on_the_retry_and_state_does_not_carry_over() -> None:
    f = flow()
    f.receive({"resultType": "input_required", "inputRequests": form_request(), "requestState": "s1"})
    f.retry_with({"q": {"action": "decline"}})
    assert f.params()["requestState"] == "s1"
    f.receive({"resultType": "input_required", "inputRequests": form_request()})
    f.retry_with({"q": {"action": "cancel"}})
    assert "requestState" not in f.params()
    assert f.params()["inputResponses"] == {"q": {"action": "cancel"}}  # only the latest round


def test_state_only_rounds_back_off_and_reset_after_a_question() -> None:
    f = flow(max_rounds=20)
    delays = []
    for _ in range(7):
        step = f.receive({"resultType": "input_required", "requestState": "wait"})
        assert isinstance(step, RetryAfter)
        delays.append(step.delay)
        f.retry_with(None)
        assert f.params() == {"name": "t", "arguments": {"a": 1}, "requestState": "wait"}
    assert delays == [0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    f.receive({"resultType": "input_required", "inputRequests": form_request(), "requestState": "x"})
    f.retry_with({"q": {"action": "accept", "content": {"ok": True}}})
    step = f.receive({"resultType": "input_required", "requestState": "wait"})
    assert step == RetryAfter(0.05)


def test_after_an_accepted_url_the_state_only_wait_may_grow_longer() -> None:
    f = flow(max_rounds=20)
    url = {
        "u": {
            "method": "elicitation/create",
            "params": {"mode": "url", "message": "go", "url": "https://x.example"},
        }
    }
    step = f.receive({"resultType": "input_required", "inputRequests": url, "requestState": "a"})
    assert isinstance(step, AskInputs)
    f.retry_with({"u": {"action": "accept"}}, step.requests)
    waits = []
    for _ in range(9):
        waiting = f.receive({"resultType": "input_required", "requestState": "a"})
        assert isinstance(waiting, RetryAfter)
        waits.append(waiting.delay)
        f.retry_with(None)
    assert waits == [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]


def test_round_limit_counts_every_input_required_result() -> None:
    f = flow(max_rounds=3)
    for _ in range(3):
        f.receive({"resultType": "input_required", "requestState": "again"})
        f.retry_with(None)
    with pytest.raises(RoundLimitError, match="after 3 rounds") as caught:
        f.receive({"resultType": "input_required", "requestState": "again"})
    assert caught.value.max_rounds == 3
    assert caught.value.method == "tools/call"


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ({"resultType": "input_required"}, "neither"),
        ({"resultType": "input_required", "inputRequests": {}}, "neither"),
        ({"resultType": "input_required", "inputRequests": [], "requestState": "s"}, "inputRequests must be"),
        ({"resultType": "input_required", "requestState": 5}, "requestState must be a string"),
    ],
)
def test_malformed_input_required_results(result: dict[str, Any], message: str) -> None:
    with pytest.raises(MalformedMessageError, match=message):
        flow().receive(result)


def test_only_three_methods_may_answer_input_required() -> None:
    with pytest.raises(MalformedMessageError, match="tools/list answered input_required"):
        flow("tools/list").receive({"resultType": "input_required", "requestState": "s"})
    for method in ("prompts/get", "resources/read"):
        assert isinstance(
            flow(method).receive({"resultType": "input_required", "requestState": "s"}), RetryAfter
        )


# -- input requests -----------------------------------------------------------------------------
def test_every_kind_of_input_request_is_typed() -> None:
    raw = {
        **form_request("f"),
        "u": {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://x"}},
        "s": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 3}},
        "r": {"method": "roots/list"},
    }
    parsed = parse_input_requests(raw, ALL)
    assert [type(p) for p in parsed] == [FormInput, UrlInput, SamplingInput, RootsInput]
    assert [p.key for p in parsed] == ["f", "u", "s", "r"]


@pytest.mark.parametrize(
    ("entry", "needed"),
    [
        (
            {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://x"}},
            "elicitation.url",
        ),
        (
            {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 3}},
            "sampling capability",
        ),
        ({"method": "roots/list"}, "roots capability"),
    ],
)
def test_requests_the_client_did_not_declare_are_refused(entry: dict[str, Any], needed: str) -> None:
    with pytest.raises(UndeclaredRequestError, match=needed) as caught:
        parse_input_requests({"k": entry}, FORM_ONLY)
    assert caught.value.key == "k"


def test_a_url_only_client_refuses_forms_and_sampling_sub_capabilities_are_not_declared() -> None:
    url_only = Declared(frozenset({"url"}), sampling=True, roots=False)
    with pytest.raises(UndeclaredRequestError, match=r"elicitation\.form"):
        parse_input_requests(form_request(), url_only)
    tools = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 3, "tools": []}}
    with pytest.raises(UndeclaredRequestError, match=r"sampling\.tools"):
        parse_input_requests({"k": tools}, url_only)
    context = {
        "method": "sampling/createMessage",
        "params": {"messages": [], "maxTokens": 3, "includeContext": "allServers"},
    }
    with pytest.raises(UndeclaredRequestError, match=r"sampling\.context"):
        parse_input_requests({"k": context}, url_only)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"k": "text"}, "must be an object"),
        ({"k": ["method"]}, "must be an object"),
        ({"k": {"params": {}}}, "method must be"),
        ({"k": {"method": "ping", "params": {}}}, "method must be"),
        ({"k": {"method": "elicitation/create"}}, "params must be an object"),
        (
            {"k": {"method": "elicitation/create", "params": {"mode": "x", "message": "m"}}},
            "unknown elicitation mode",
        ),
        (
            {"k": {"method": "elicitation/create", "params": {"requestedSchema": FORM}}},
            "message must be a string",
        ),
        ({"k": {"method": "elicitation/create", "params": {"mode": "url", "message": "m"}}}, "url must be"),
        ({"k": {"method": "sampling/createMessage", "params": {"maxTokens": 1}}}, "messages must be"),
        (
            {"k": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": "1"}}},
            "maxTokens",
        ),
    ],
)
def test_malformed_input_requests(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(MalformedMessageError, match=message):
        parse_input_requests(raw, ALL)


def test_schemas_outside_the_subset_are_refused_with_their_problems() -> None:
    nested = {"type": "object", "properties": {"a": {"type": "object", "properties": {}}}}
    with pytest.raises(InvalidSchemaError, match="outside the elicitation schema subset") as caught:
        parse_input_requests(
            {"k": {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": nested}}},
            ALL,
        )
    assert caught.value.problems[0].pointer == "/properties/a/type"
    with pytest.raises(InvalidSchemaError):
        parse_input_requests({"k": {"method": "elicitation/create", "params": {"message": "m"}}}, ALL)


# -- capabilities -------------------------------------------------------------------------------
def test_declared_capabilities_follow_what_is_configured() -> None:
    assert Declared.of(None, None, None).to_wire() == {}
    assert Declared.of(Script(mode_names=()), None, None).to_wire() == {}
    assert Declared.of(Script(mode_names=("form",)), None, None).to_wire() == {"elicitation": {"form": {}}}
    assert Declared.of(Script(mode_names=("url",)), None, None).to_wire() == {"elicitation": {"url": {}}}
    assert Declared.of(Script(mode_names=("url", "form", "voice")), None, None).to_wire() == {
        "elicitation": {"form": {}, "url": {}}
    }

    class Sampler:
        async def create_message(self, params: dict[str, Any]) -> dict[str, Any]:
            return {}

    class Roots:
        async def list_roots(self) -> list[dict[str, Any]]:
            return []

    assert Declared.of(None, Sampler(), Roots()).to_wire() == {"sampling": {}, "roots": {}}


# -- JSON-RPC -----------------------------------------------------------------------------------
def test_classifying_what_the_server_sends() -> None:
    assert decode(b'{"jsonrpc":"2.0","id":3,"result":{"x":1}}') == Result(3, {"x": 1})
    assert decode(b'{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"m"}}') == ErrorResponse(
        "a", -1, "m"
    )
    assert decode(b'{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"m"}}') == ErrorResponse(
        None, -1, "m"
    )
    assert decode(b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"p":1}}') == Notification(
        "notifications/progress", {"p": 1}
    )
    assert decode(b'{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{}}') == Request(
        1, "elicitation/create", {}
    )
    for bad in (
        b"nope",
        b"[]",
        b'{"id":1,"result":{}}',
        b'{"jsonrpc":"2.0","id":true,"result":{}}',
        b'{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}',
        b'{"jsonrpc":"2.0","id":1}',
        b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}',
        b'{"jsonrpc":"2.0","id":null,"result":{}}',
    ):
        with pytest.raises(MalformedMessageError):
            decode(bad)


def test_server_errors_become_typed_exceptions() -> None:
    plain = server_error(ErrorResponse(1, -32603, "boom", {"x": 1}), "tools/call")
    assert type(plain) is McpClientError
    assert (plain.code, plain.message, plain.data, plain.method) == (-32603, "boom", {"x": 1}, "tools/call")
    missing = server_error(
        ErrorResponse(
            1, -32021, "need url", {"requiredCapabilities": {"elicitation": {"url": {}}, "roots": {}}}
        ),
        "tools/call",
    )
    assert isinstance(missing, MissingCapabilityError)
    assert missing.missing == ("elicitation.url", "roots")
    assert "elicitation.url, roots" in str(missing)


# -- SSE ----------------------------------------------------------------------------------------
def test_sse_decoder_handles_every_line_ending_comments_and_split_chunks() -> None:
    stream = (
        b': keep-alive\r\n\r\nevent: message\r\ndata: {"a":\r\ndata: 1}\r\n\r\nid: 7\rdata:x\r\rdata: y\n\n'
    )
    for size in (1, 2, 3, 5, len(stream)):
        decoder = SseDecoder(1024)
        events: list[bytes] = []
        for i in range(0, len(stream), size):
            events.extend(decoder.feed(stream[i : i + size]))
        assert events == [b'{"a":\n1}', b"x", b"y"], size


def test_sse_decoder_bounds_an_event() -> None:
    decoder = SseDecoder(10)
    with pytest.raises(MalformedMessageError, match="over the limit"):
        decoder.feed(b"data: 0123456789abc\n")


# -- Mcp-Param headers --------------------------------------------------------------------------
def test_param_headers_mirror_annotated_arguments() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "note": {"type": "string"},
        },
    }
    mapping = header_map(schema)
    assert mapping == {("region",): "Region", ("dry",): "Dry-Run", ("n",): "N"}
    assert param_headers(mapping, {"region": "Zürich", "dry": False, "note": "x"}) == {
        "Mcp-Param-Region": "=?base64?WsO8cmljaA==?=",
        "Mcp-Param-Dry-Run": "false",
    }
    for bad in (
        {"properties": {"a": {"type": "number", "x-mcp-header": "A"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "bad name"}}},
        {
            "properties": {
                "a": {"type": "string", "x-mcp-header": "A"},
                "b": {"type": "string", "x-mcp-header": "a"},
            }
        },
    ):
        with pytest.raises(InvalidHeaderAnnotation):
            header_map(bad)
