"""The JSON-RPC envelope: what parses, and the exact error for what does not."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.wire import codec
from mcp_elicit.wire.errors import INVALID_REQUEST, PARSE_ERROR, McpError
from mcp_elicit.wire.jsonrpc import (
    ErrorResponse,
    InvalidMessage,
    MessageTooLarge,
    Notification,
    Request,
    Result,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
    parse_message,
    refuse_response,
)


def test_request_parses() -> None:
    msg = parse_message(b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"a":1}}')
    assert msg == Request(7, "tools/list", {"a": 1})


def test_string_id_and_missing_params() -> None:
    assert parse_message('{"jsonrpc":"2.0","id":"x","method":"m"}') == Request("x", "m", {})


def test_notification_has_no_id() -> None:
    msg = parse_message(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}')
    assert msg == Notification("notifications/cancelled", {"requestId": 1})


@pytest.mark.parametrize(
    ("raw", "code", "needle", "request_id"),
    [
        (b"{not json", PARSE_ERROR, "not valid JSON", None),
        (b"", PARSE_ERROR, "not valid JSON", None),
        (b"[]", INVALID_REQUEST, "batches are not supported", None),
        (b"42", INVALID_REQUEST, "must be an object", None),
        (b'{"id":1,"method":"m"}', INVALID_REQUEST, '"jsonrpc" must be "2.0"', 1),
        (b'{"jsonrpc":"1.0","id":1,"method":"m"}', INVALID_REQUEST, '"jsonrpc" must be "2.0"', 1),
        (b'{"jsonrpc":"2.0","id":1}', INVALID_REQUEST, '"method" must be a string', 1),
        (b'{"jsonrpc":"2.0","id":1,"method":5}', INVALID_REQUEST, '"method" must be a string', 1),
        (
            b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}',
            INVALID_REQUEST,
            'both "result" and "error"',
            1,
        ),
        (b'{"jsonrpc":"2.0","id":null,"result":{}}', INVALID_REQUEST, '"id" must be a string', None),
        (b'{"jsonrpc":"2.0","result":{}}', INVALID_REQUEST, '"id" must be a string', None),
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}', INVALID_REQUEST, "integer", 1),
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":true,"message":"m"}}', INVALID_REQUEST, "integer", 1),
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":1}}', INVALID_REQUEST, '"message"', 1),
        (b'{"jsonrpc":"2.0","id":1,"error":"boom"}', INVALID_REQUEST, '"error" must be an object', 1),
        (b'{"jsonrpc":"2.0","id":1.5,"error":{"code":1,"message":"m"}}', INVALID_REQUEST, '"id"', None),
        (
            b'{"jsonrpc":"2.0","id":true,"method":"m"}',
            INVALID_REQUEST,
            '"id" must be a string or an integer',
            None,
        ),
        (
            b'{"jsonrpc":"2.0","id":1.5,"method":"m"}',
            INVALID_REQUEST,
            '"id" must be a string or an integer',
            None,
        ),
        (
            b'{"jsonrpc":"2.0","id":null,"method":"m"}',
            INVALID_REQUEST,
            '"id" must be a string or an integer',
            None,
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}',
            INVALID_REQUEST,
            '"params" must be an object',
            1,
        ),
    ],
)
def test_malformed_messages(raw: bytes, code: int, needle: str, request_id: object) -> None:
    with pytest.raises(InvalidMessage) as info:
        parse_message(raw)
    assert info.value.code == code
    assert needle in info.value.message
    assert info.value.request_id == request_id


@pytest.mark.parametrize(
    ("raw", "reply_id"),
    [
        (b'{"id":1,"method":"m"}', 1),  # a request: its error answers it
        (b'{"jsonrpc":"2.0","id":1,"method":5}', 1),
        (b'{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}', 1),
        # No method: an answer (or meant as one) to the receiver's own request 1, which an error
        # carrying id 1 would seem to answer.
        (b'{"jsonrpc":"1.0","id":1,"result":{}}', None),
        (b'{"id":1,"error":{"code":1,"message":"m"}}', None),
        (b'{"jsonrpc":"2.0","id":1}', None),
        (b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}', None),
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":1}}', None),
    ],
)
def test_the_error_about_a_message_carries_its_id_only_if_it_was_a_request(
    raw: bytes, reply_id: object
) -> None:
    with pytest.raises(InvalidMessage) as info:
        parse_message(raw)
    assert info.value.request_id == 1  # read all the same, for the receiver's own use
    assert info.value.reply_id == reply_id


def test_responses_parse_in_both_directions() -> None:
    """The parser is the same for both sides: responses are messages like any other, and the
    peer that may not receive them says so (a 2026-07-28 server)."""
    assert parse_message(b'{"jsonrpc":"2.0","id":1,"result":{"a":1}}') == Result(1, {"a": 1})
    error = parse_message(b'{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"no","data":[1]}}')
    assert error == ErrorResponse("x", -32602, "no", [1])
    assert isinstance(error, ErrorResponse)
    assert error.to_error().to_json() == {"code": -32602, "message": "no", "data": [1]}
    # An error whose request could not be identified: id null, or no id at all.
    assert parse_message(b'{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"m"}}') == ErrorResponse(
        None, -1, "m"
    )
    assert parse_message(b'{"jsonrpc":"2.0","error":{"code":-1,"message":"m"}}') == ErrorResponse(
        None, -1, "m"
    )
    refusal = refuse_response(Result(1, {}))
    assert (refusal.code, refusal.request_id) == (INVALID_REQUEST, 1)
    assert "clients send no JSON-RPC responses in MCP 2026-07-28" in refusal.message


def test_encoders_write_what_the_parser_reads() -> None:
    assert parse_message(encode_request(9, "elicitation/create", {"mode": "form"})) == Request(
        9, "elicitation/create", {"mode": "form"}
    )
    assert parse_message(encode_notification("notifications/initialized", {})) == Notification(
        "notifications/initialized", {}
    )
    assert parse_message(encode_result("r", {"action": "cancel"})) == Result("r", {"action": "cancel"})
    assert parse_message(encode_error(None, McpError(-32601, "nope"))) == ErrorResponse(None, -32601, "nope")


def test_oversized_message_is_refused_before_parsing() -> None:
    raw = b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":"' + b"a" * 2000 + b'"}}'
    with pytest.raises(MessageTooLarge) as info:
        parse_message(raw, max_bytes=1000)
    assert info.value.code == INVALID_REQUEST
    assert "over the limit of 1000 bytes" in info.value.message


def test_deep_nesting_is_a_parse_error_not_a_crash() -> None:
    raw = b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":' + b"[" * 5000 + b"]" * 5000 + b"}}"
    with pytest.raises(InvalidMessage) as info:
        parse_message(raw)
    assert info.value.code == PARSE_ERROR


def test_encoding_round_trip() -> None:
    body = encode_result(3, {"resultType": "complete"})
    assert codec.loads(body) == {"jsonrpc": "2.0", "id": 3, "result": {"resultType": "complete"}}
    err = codec.loads(encode_error(None, McpError(-32602, "bad", {"k": 1})))
    assert err == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32602, "message": "bad", "data": {"k": 1}},
    }


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(st.binary(max_size=300))
def test_any_bytes_raise_only_invalid_message(raw: bytes) -> None:
    with contextlib.suppress(InvalidMessage):
        parse_message(raw)


@given(
    st.dictionaries(
        st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error", "x"]),
        json_values,
        max_size=6,
    )
)
def test_any_object_raises_only_invalid_message(data: dict[str, object]) -> None:
    try:
        msg = parse_message(codec.dumps(data))
    except InvalidMessage:
        return
    if isinstance(msg, Request | Notification):
        assert isinstance(msg.params, dict)
    else:
        assert isinstance(msg, Result | ErrorResponse)
        assert ("result" in data) != ("error" in data)


def test_an_error_about_a_malformed_response_does_not_repeat_its_id() -> None:
    """A response's id numbers one of the receiver's own requests: the error sent back about it
    carries none (the peer would take it for the answer to its request of that number); an
    error about a malformed request carries the request's id."""
    with pytest.raises(InvalidMessage) as response:
        parse_message(b'{"jsonrpc":"2.0","id":1,"error":"boom"}')
    assert (response.value.request_id, response.value.reply_id) == (1, None)
    with pytest.raises(InvalidMessage) as request:
        parse_message(b'{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}')
    assert (request.value.request_id, request.value.reply_id) == (1, 1)


@pytest.mark.parametrize(
    ("code", "message"), [(True, "m"), ("-32000", "m"), (1.0, "m"), (-32000, None), (-32000, b"m")]
)
def test_an_error_of_no_json_rpc_shape_is_refused_where_it_is_raised(code: Any, message: Any) -> None:
    with pytest.raises(TypeError, match=r"^McpError: the (code must be an int|message must be a str)"):
        McpError(code, message)
