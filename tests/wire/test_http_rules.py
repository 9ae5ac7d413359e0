"""Header encoding and the header-versus-body check of Streamable HTTP."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.wire.errors import HEADER_MISMATCH, McpError
from mcp_elicit.wire.http import (
    check_request_headers,
    decode_header_value,
    encode_header_value,
    status_for_error,
)
from mcp_elicit.wire.jsonrpc import Request

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def call(name: str) -> Request:
    return Request(1, "tools/call", {"_meta": META, "name": name, "arguments": {}})


def good_headers(name: str) -> dict[str, str]:
    return {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": encode_header_value(name),
    }


def test_plain_ascii_is_sent_as_is() -> None:
    assert encode_header_value("get_weather") == "get_weather"


@pytest.mark.parametrize("value", ["café", " padded", "tab\there", "=?base64?looks-like-sentinel", "天气"])
def test_unsafe_values_use_the_sentinel(value: str) -> None:
    encoded = encode_header_value(value)
    assert encoded.startswith("=?base64?")
    assert encoded.endswith("?=")
    assert decode_header_value(encoded, "Mcp-Name") == value


@given(st.text(max_size=40))
def test_encode_decode_round_trip(value: str) -> None:
    assert decode_header_value(encode_header_value(value), "Mcp-Name") == value


def test_matching_headers_pass() -> None:
    check_request_headers(good_headers("café"), call("café"))


@pytest.mark.parametrize("name", ["=?base64?abc", "=?base64?=", "x=?base64?dG9vbA==?="])
def test_a_value_only_partly_like_the_sentinel_is_plain(name: str) -> None:
    # The official SDK sends these as they are: only the whole =?base64?...?= form is decoded.
    assert decode_header_value(name, "Mcp-Name") == name
    check_request_headers({**good_headers(name), "mcp-name": name}, call(name))


def test_the_empty_sentinel_is_the_empty_string() -> None:
    assert decode_header_value("=?base64??=", "Mcp-Name") == ""


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"mcp-name": "other"}, "Mcp-Name header value 'other' does not match the body value 'tool'"),
        ({"mcp-method": "tools/list"}, "Mcp-Method header value"),
        ({"mcp-protocol-version": "2025-11-25"}, "MCP-Protocol-Version header value"),
        ({"mcp-name": "=?base64?!!!?="}, "not valid base64"),
        ({"mcp-name": "=?base64?dG9vbA?="}, "not valid base64"),  # unpadded
        ({"mcp-name": "=?base64?dG9vbB==?="}, "not valid base64"),  # "tool" with stray padding bits
        ({"mcp-name": "=?base64?/w==?="}, "not valid base64"),  # not UTF-8
        ({"mcp-name": "=?base64?abc"}, "header value '=?base64?abc' does not match the body value 'tool'"),
    ],
)
def test_mismatches_are_32020(change: dict[str, str], needle: str) -> None:
    headers = {**good_headers("tool"), **change}
    with pytest.raises(McpError) as info:
        check_request_headers(headers, call("tool"))
    assert info.value.code == HEADER_MISMATCH
    assert needle in info.value.message


@pytest.mark.parametrize("missing", ["mcp-protocol-version", "mcp-method", "mcp-name"])
def test_missing_headers_are_32020(missing: str) -> None:
    headers = good_headers("tool")
    del headers[missing]
    with pytest.raises(McpError) as info:
        check_request_headers(headers, call("tool"))
    assert info.value.code == HEADER_MISMATCH
    assert "is required" in info.value.message


def test_list_requests_need_no_name_header() -> None:
    check_request_headers(
        {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"},
        Request(1, "tools/list", {"_meta": META}),
    )


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (-32700, 400),
        (-32600, 400),
        (-32601, 404),
        (-32602, 400),
        (-32020, 400),
        (-32021, 400),
        (-32022, 400),
        (-32603, 200),
    ],
)
def test_statuses(code: int, status: int) -> None:
    assert status_for_error(code) == status
