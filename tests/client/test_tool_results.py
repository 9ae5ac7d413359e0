"""ToolResult.parse: every CallToolResult the spec allows is read whole, and one it does not is
a MalformedMessageError naming what is wrong, never a result with parts silently left out."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit.client import MalformedMessageError, ToolResult

PNG = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
WAV = {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}
LINK = {"type": "resource_link", "uri": "file:///r.pdf", "name": "r.pdf"}
EMBEDDED_TEXT = {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}}
EMBEDDED_BLOB = {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAEC"}}


def test_everything_the_spec_allows_is_read_whole() -> None:
    # Every kind of block, one of a type a newer server may send, and structured content that
    # is no object (any JSON value, since 2026-07-28).
    video = {"type": "video", "uri": "https://example.com/v.mp4"}
    blocks = [PNG, WAV, LINK, EMBEDDED_TEXT, EMBEDDED_BLOB, video, {"type": "text", "text": "a"}]
    result = ToolResult.parse({"content": blocks, "structuredContent": [1, 2], "isError": None})
    assert result.content == blocks
    assert result.structured == [1, 2]
    assert result.text == "a"
    assert result.is_error is False  # null is taken as absent


@pytest.mark.parametrize("structured", ["sunny", 21, True])
def test_structured_content_may_be_any_json_value(structured: Any) -> None:
    result = ToolResult.parse({"content": [], "structuredContent": structured})
    assert result.structured == structured


@pytest.mark.parametrize(
    ("result", "said"),
    [
        ({}, "has no 'content' array"),
        ({"resultType": "complete", "structuredContent": {"temp": 21}}, "has no 'content' array"),
        ({"content": None}, "has no 'content' array"),
        ({"content": [5]}, "content[0] that is the number 5, not an object with a string 'type'"),
        ({"content": [PNG, None]}, "content[1] that is null, not an object"),
        ({"content": [{"text": "x"}]}, "content[0] with no 'type'"),
        ({"content": [{"type": 3}]}, "content[0] whose 'type' is the number 3, not a string"),
        ({"content": [{"type": "text"}]}, "content[0] of type 'text' with no 'text'"),
        ({"content": [{"type": "text", "text": 7}]}, "whose 'text' is the number 7, not a string"),
        ({"content": [{"type": "image", "data": "AA=="}]}, "of type 'image' with no 'mimeType'"),
        ({"content": [{"type": "resource_link", "uri": "file:///x"}]}, "type 'resource_link' with no 'name'"),
        ({"content": [{"type": "resource", "resource": "x"}]}, "no 'resource' object holding a string 'uri'"),
        (
            {"content": [{"type": "resource", "resource": {"uri": "file:///x"}}]},
            "has neither a string 'text' nor a string 'blob'",
        ),
        ({"content": [], "isError": "yes"}, "must have 'isError' as a boolean, not the text 'yes'"),
        ({"content": [], "isError": 1}, "must have 'isError' as a boolean, not the number 1"),
    ],
)
def test_a_result_the_spec_does_not_allow_is_malformed(result: dict[str, Any], said: str) -> None:
    with pytest.raises(MalformedMessageError, match="the result of tools/call") as raised:
        ToolResult.parse(result)
    assert said in str(raised.value)
