"""Per-request _meta, capabilities, and the MRTR shapes."""

from __future__ import annotations

import pytest

from mcp_elicit.wire import mrtr
from mcp_elicit.wire.errors import INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION, McpError
from mcp_elicit.wire.meta import ClientCapabilities, check_version, parse_request_meta

V = "io.modelcontextprotocol/protocolVersion"
C = "io.modelcontextprotocol/clientCapabilities"


def test_meta_parses() -> None:
    meta = parse_request_meta(
        {
            "_meta": {
                V: "2026-07-28",
                C: {"elicitation": {}},
                "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                "progressToken": 5,
            }
        }
    )
    assert meta.protocol_version == "2026-07-28"
    assert meta.client_info == {"name": "c", "version": "1"}
    assert meta.progress_token == 5


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({}, "params._meta is required"),
        ({"_meta": []}, "params._meta is required"),
        ({"_meta": {C: {}}}, "protocolVersion"),
        ({"_meta": {V: "2026-07-28"}}, "clientCapabilities"),
        ({"_meta": {V: "2026-07-28", C: []}}, "clientCapabilities"),
        ({"_meta": {V: 1, C: {}}}, "protocolVersion"),
        ({"_meta": {V: "2026-07-28", C: {}, "io.modelcontextprotocol/clientInfo": "me"}}, "clientInfo"),
    ],
)
def test_bad_meta_is_32602(params: dict[str, object], needle: str) -> None:
    with pytest.raises(McpError) as info:
        parse_request_meta(params)
    assert info.value.code == INVALID_PARAMS
    assert needle in info.value.message


def test_unsupported_version_names_supported_and_requested() -> None:
    meta = parse_request_meta({"_meta": {V: "1900-01-01", C: {}}})
    with pytest.raises(McpError) as info:
        check_version(meta)
    assert info.value.code == UNSUPPORTED_PROTOCOL_VERSION
    assert info.value.data == {"supported": ["2026-07-28"], "requested": "1900-01-01"}


@pytest.mark.parametrize(
    ("caps", "modes"),
    [
        ({}, set()),
        ({"elicitation": {}}, {"form"}),
        ({"elicitation": {"form": {}}}, {"form"}),
        ({"elicitation": {"url": {}}}, {"url"}),
        ({"elicitation": {"form": {}, "url": {}}}, {"form", "url"}),
        ({"elicitation": True}, set()),
        ({"elicitation": {"url": True}}, {"form"}),
    ],
)
def test_elicitation_modes(caps: dict[str, object], modes: set[str]) -> None:
    assert ClientCapabilities(caps).elicitation_modes() == modes


def test_sampling_and_roots() -> None:
    caps = ClientCapabilities({"sampling": {}, "roots": {}})
    assert caps.can_sample()
    assert caps.can_list_roots()
    assert not caps.can_sample(tools=True)
    assert not ClientCapabilities({}).can_sample()


def test_input_required_never_has_empty_requests() -> None:
    assert mrtr.input_required_result({}, "s") == {"resultType": "input_required", "requestState": "s"}
    with pytest.raises(ValueError, match="needs inputRequests or requestState"):
        mrtr.input_required_result({}, None)


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"inputResponses": []}, "inputResponses must be an object"),
        ({"inputResponses": {"k": 12345}}, "inputResponses['k'] must be an object"),
    ],
)
def test_malformed_retry_params(params: dict[str, object], needle: str) -> None:
    def read() -> None:
        responses = mrtr.read_input_responses(params)
        for key, value in responses.items():  # the engine checks the answers it asked for
            mrtr.check_input_response(key, value)

    with pytest.raises(McpError) as info:
        read()
    assert info.value.code == INVALID_PARAMS
    assert needle in info.value.message


def test_null_input_responses_is_absent() -> None:
    assert mrtr.read_input_responses({"inputResponses": None}) == {}


def test_elicit_result_ignores_content_on_decline() -> None:
    assert mrtr.check_elicit_result("k", {"action": "decline", "content": "junk"}) == ("decline", None)
    with pytest.raises(McpError, match="action must be one of"):
        mrtr.check_elicit_result("k", {"action": "maybe"})
    with pytest.raises(McpError, match="content must be an object"):
        mrtr.check_elicit_result("k", {"action": "accept", "content": [1]})


@pytest.mark.parametrize("action", [{}, [], ["accept"], 1, None, True])
def test_an_action_that_is_not_text_is_invalid_params(action: object) -> None:
    # Found by tests/e2e/test_http_any_input.py: an object or a list used to raise TypeError
    # (unhashable) inside the handler's ctx.elicit, a tool failure instead of -32602.
    with pytest.raises(McpError, match="action must be one of") as refused:
        mrtr.check_elicit_result("k", {"action": action})
    assert refused.value.code == -32602


def test_low_level_entries_are_sent_as_method_and_params_only() -> None:
    legacy = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": mrtr.ELICIT,
        "params": {"mode": "url", "message": "Connect", "url": "https://x.example/c", "elicitationId": "e1"},
    }
    assert mrtr.as_input_request(legacy) == {
        "method": mrtr.ELICIT,
        "params": {"mode": "url", "message": "Connect", "url": "https://x.example/c"},
    }
    assert legacy["params"]["elicitationId"] == "e1"  # the handler's own dict is left alone
    assert mrtr.as_input_request({"method": mrtr.LIST_ROOTS}) == {"method": mrtr.LIST_ROOTS}
    sampling = {
        "method": mrtr.SAMPLE,
        "params": {"elicitationId": "kept: not an elicitation", "maxTokens": 5},
    }
    assert mrtr.as_input_request(sampling) == sampling
