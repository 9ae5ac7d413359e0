"""What ``mcp-elicit call`` prints of a tool's result: every kind of content, in a way a person
can use (never base64 in the terminal), and a result the spec does not allow as one clear line
with exit 2, never silence with exit 0."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit.cli.tool_output import result_text
from mcp_elicit.client import ToolResult
from mcp_elicit.wire import codec
from tests.cli.cli_support import STDIO_TARGET, cli, one_clear_line

RAW = f"{sys.executable} {Path(__file__).with_name('raw_server.py')}"
PNG = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}  # 8 bytes
CHART = [
    "(image: image/png, 8 bytes)",
    '(resource link "q3.csv": file:///charts/q3.csv, text/csv)',
    "(resource: file:///charts/q3.txt)",
    "Q3: up 4%",
]


def complete(*content: Any, **members: Any) -> dict[str, Any]:
    return {"resultType": "complete", "content": list(content), **members}


def call_raw(final: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """``call`` of a raw stdio server whose tool's result is ``final``."""
    return cli("call", RAW, "t", env={"RAW_SERVER": json.dumps({"final": final})})


@pytest.mark.parametrize("how", ["stdio", "http", "legacy"])
def test_a_result_with_no_text_is_shown_block_by_block(http_target: str, how: str) -> None:
    target = http_target if how == "http" else STDIO_TARGET
    done = cli("call", target, "chart", *(["--legacy"] if how == "legacy" else []))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == CHART
    assert "iVBORw0KGgo" not in done.stdout  # the image's data never goes to the terminal


@pytest.mark.parametrize(
    ("block", "line"),
    [
        (PNG, "(image: image/png, 8 bytes)"),
        ({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}, "(audio: audio/wav, 4 bytes)"),
        (
            {"type": "image", "data": "A", "mimeType": "image/png"},
            "(image: image/png, data that is not valid base64)",
        ),
        (
            {"type": "resource_link", "uri": "https://example.com/r", "name": "r"},
            '(resource link "r": https://example.com/r)',
        ),
        (
            {"type": "resource_link", "uri": "file:///r.pdf", "name": "r.pdf", "title": "The report"},
            '(resource link "The report": file:///r.pdf)',
        ),
        (
            {
                "type": "resource",
                "resource": {"uri": "file:///a.bin", "mimeType": "application/zip", "blob": "AAEC"},
            },
            "(resource: file:///a.bin, application/zip, 3 bytes)",
        ),
        ({"type": "video", "uri": "https://example.com/v.mp4"}, "(unknown content type video)"),
    ],
)
def test_each_kind_of_block_gets_a_line_that_says_what_it_is(block: dict[str, Any], line: str) -> None:
    done = call_raw(complete(block))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{line}\n"


def test_text_blocks_and_other_blocks_are_shown_in_their_order() -> None:
    done = call_raw(complete({"type": "text", "text": "Here it is:"}, PNG, {"type": "text", "text": "done"}))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Here it is:\n(image: image/png, 8 bytes)\ndone\n"


@pytest.mark.parametrize("structured", [{"temp": 21, "city": "Zürich"}, [1, "two"], "sunny"])
def test_structured_content_is_printed_as_json_when_no_block_is_text(structured: Any) -> None:
    done = call_raw(complete(structuredContent=structured))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == structured  # complete, for a script
    assert done.stdout.isascii()  # "Zürich" escaped, as tools --json does
    # With a text block (the spec asks for the same JSON there), it is not printed twice.
    with_text = call_raw(complete({"type": "text", "text": "21 degrees"}, structuredContent=structured))
    assert with_text.stdout == "21 degrees\n"


def test_an_image_and_structured_content_are_both_shown() -> None:
    done = call_raw(complete(PNG, structuredContent={"temp": 21}))
    assert done.returncode == 0, done.stderr
    assert done.stdout == '(image: image/png, 8 bytes)\n{\n  "temp": 21\n}\n'


def test_an_empty_result_is_said_to_be_empty_on_stderr() -> None:
    done = call_raw(complete())
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # the result holds nothing: a pipe gets nothing
    assert done.stderr == "(the tool returned no content)\n"


def test_a_tool_error_with_no_text_shows_what_it_sent() -> None:
    done = call_raw(complete(PNG, isError=True))
    assert done.returncode == 1
    assert one_clear_line(done) == "mcp-elicit: the tool reported an error: (image: image/png, 8 bytes)"


def test_what_the_server_names_reaches_the_terminal_cleaned() -> None:
    link = {"type": "resource_link", "uri": "file:///x\x1b]52;c;ZXZpbA==\x07", "name": "n\u202eam\x1b[2Je"}
    image = {"type": "image", "data": "", "mimeType": "image/png\r\nFAKE LINE"}
    done = call_raw(complete(link, image))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        '(resource link "name": file:///x)',
        "(image: image/png FAKE LINE, 0 bytes)",
    ]


TEXT = {"type": "text", "text": "x"}


@pytest.mark.parametrize(
    ("result", "said"),
    [
        ({"resultType": "complete"}, "the result of tools/call has no 'content' array"),
        ({"resultType": "complete", "structuredContent": {"temp": 21}}, "has no 'content' array"),
        (complete(5), "has content[0] that is the number 5, not an object with a string 'type'"),
        (complete(PNG, {"text": "x"}), "has content[1] with no 'type'"),
        (complete({"type": "text"}), "has content[0] of type 'text' with no 'text'"),
        (complete({"type": "text", "text": 7}), "whose 'text' is the number 7, not a string"),
        (complete({"type": "image", "data": "AA=="}), "of type 'image' with no 'mimeType'"),
        (complete(TEXT, isError="yes"), "must have 'isError' as a boolean, not the text 'yes'"),
    ],
)
def test_a_malformed_result_is_one_clear_line_and_exit_2(result: dict[str, Any], said: str) -> None:
    done = call_raw(result)
    assert done.returncode == 2
    assert said in one_clear_line(done)
    assert done.stdout == ""


def test_structured_content_too_deep_to_print_is_said_so() -> None:
    # The client reads JSON 1024 levels deep; the standard library writes about 1000.
    deep = ToolResult.parse({"content": [], "structuredContent": codec.loads("[" * 1020 + "]" * 1020)})
    assert result_text(deep) == "(structured content nested too deeply to print)"
