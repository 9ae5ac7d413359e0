"""``mcp-elicit call`` against a server that sends what a correct one never would: the command
ends with one clear line (or clean output), never a traceback or a raw escape sequence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_support import one_clear_line

RAW = Path(__file__).with_name("raw_server.py")
TARGET = f"{sys.executable} {RAW}"
SAFE = 2**53 - 1


def cli(*args: str, script: dict[str, Any] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RAW_SERVER": json.dumps(script or {})}
    return subprocess.run(
        [sys.executable, "-m", "mcp_elicit.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def asks(schema: dict[str, Any]) -> dict[str, Any]:
    """A server that asks one form question ``q`` with ``schema``, then says "done"."""
    form = {"method": "elicitation/create", "params": {"message": "How many?", "requestedSchema": schema}}
    return {"rounds": [{"resultType": "input_required", "inputRequests": {"q": form}, "requestState": "s"}]}


def answers(tmp_path: Path, text: str) -> str:
    path = tmp_path / "answers.json"
    path.write_text(text)
    return str(path)


INTEGER = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


@pytest.mark.parametrize("n", [2**64, -(2**63) - 1, SAFE + 1, 10**30])
def test_an_answer_past_the_json_safe_range_is_refused_before_it_is_sent(tmp_path: Path, n: int) -> None:
    script = answers(tmp_path, f'{{"q": {{"action": "accept", "content": {{"n": {n}}}}}}}')
    done = cli("call", TARGET, "t", "--answers", script, script=asks(INTEGER))
    assert done.returncode == 2
    line = one_clear_line(done)
    assert f"n: must be between -{SAFE} and {SAFE}" in line
    assert "cannot be sent exactly as JSON" in line
    assert done.stdout == ""  # the server never got an answer, so never said "done"


def test_the_largest_safe_answer_is_sent(tmp_path: Path) -> None:
    script = answers(tmp_path, f'{{"q": {{"action": "accept", "content": {{"n": {SAFE}}}}}}}')
    done = cli("call", TARGET, "t", "--answers", script, script=asks(INTEGER))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done\n"


@pytest.mark.parametrize(
    ("default", "said"),
    [
        (1e20, ["requestedSchema is outside the elicitation schema subset", "/properties/n/default"]),
        (2**63, ["requestedSchema is outside the elicitation schema subset", "/properties/n/default"]),
        # Past 64 bits the message itself cannot be read exactly: refused whole, never rounded.
        (2**64, ["requestedSchema.properties.n.default is outside"]),
        (-(2**70), ["requestedSchema.properties.n.default is outside"]),
    ],
)
def test_a_server_default_past_the_range_rejects_the_form(
    tmp_path: Path, default: float, said: list[str]
) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "default": default}}}
    script = answers(tmp_path, '{"q": {"action": "accept", "content": {}}}')
    done = cli("call", TARGET, "t", "--answers", script, script=asks(schema))
    assert done.returncode == 2
    line = one_clear_line(done)
    for words in said:
        assert words in line
    assert done.stdout == ""


def test_tool_arguments_past_64_bits_are_a_clear_error() -> None:
    done = cli("call", TARGET, "t", "--args", f'{{"n": {2**64}}}')
    assert done.returncode == 2
    assert "cannot be encoded as JSON" in one_clear_line(done)


# -- tool output ---------------------------------------------------------------------------------
HOSTILE_OUTPUT = (
    "Result:\x1b]52;c;cm0gLXJmIH4K\x07 saved\n"  # OSC 52: write to the clipboard
    "\x1b]0;root@bank\x1b\\title\n"  # OSC 0: set the window title
    "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\ here\n"  # OSC 8: a hidden link
    "\x1b[2J\x1b[1;1Hcleared\x1b[31m red\x1b[0m\rX\n"  # CSI: clear, move, colour; CR overwrite
    "amount\u202e0001\u202c \u2066iso\u2069 zero\u200bwidth\n"  # bidi override, isolate, ZWSP
    "col1\tcol2\n\n"  # tabs and blank lines stay
    "\x9b31mC1 CSI\x9d0;t\x07 end"  # the 8-bit forms
)
CLEANED = (
    "Result: saved\ntitle\nclick here\ncleared redX\namount0001 iso zerowidth\ncol1\tcol2\n\nC1 CSI end\n"
)


def test_tool_output_reaches_the_terminal_without_escapes_or_bidi() -> None:
    final = {"resultType": "complete", "content": [{"type": "text", "text": HOSTILE_OUTPUT}]}
    done = cli("call", TARGET, "t", script={"final": final})
    assert done.returncode == 0, done.stderr
    assert done.stdout == CLEANED
    for forbidden in ("\x1b", "\x07", "\x9b", "\x9d", "\r", "\u202e", "\u2066", "\u200b", "evil.example"):
        assert forbidden not in done.stdout


# -- targets -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("http://", "not an http(s) URL"),
        ("http://127.0.0.1:99999/mcp", "Port out of range"),
        ("http://[::1", "Invalid IPv6 URL"),
        ("", "the server command is empty"),
        ('"unclosed', "No closing quotation"),
    ],
)
@pytest.mark.parametrize("command", ["call", "tools"])
def test_an_unusable_target_is_a_usage_error(command: str, target: str, why: str) -> None:
    done = cli(command, target, *(["t"] if command == "call" else []))
    assert done.returncode == 2  # usage, protocol or transport error
    line = one_clear_line(done)
    assert "is not a server URL or command line" in line
    assert why in line


# -- -32021 --------------------------------------------------------------------------------------
def missing(required: dict[str, Any]) -> dict[str, Any]:
    data = {"requiredCapabilities": required}
    return {"error": {"code": -32021, "message": "this tool needs it", "data": data}}


def test_missing_url_mode_that_the_answers_file_declared(tmp_path: Path) -> None:
    script = answers(tmp_path, "[]")
    done = cli("call", TARGET, "t", "--answers", script, script=missing({"elicitation": {"url": {}}}))
    assert done.returncode == 2
    line = one_clear_line(done)
    assert "needs elicitation.url (this tool needs it)" in line
    assert "this client declared elicitation.url" in line
    assert "did not take the declaration into account" in line
    assert "run in a terminal" not in line
    assert "--answers FILE" not in line


def test_missing_elicitation_with_no_terminal_and_no_answers() -> None:
    done = cli("call", TARGET, "t", script=missing({"elicitation": {"form": {}}}))
    assert done.returncode == 2
    line = one_clear_line(done)
    assert "needs elicitation.form" in line
    assert "declared no elicitation" in line
    assert "run in a terminal to answer, or pass --answers FILE" in line


def test_missing_sampling_is_not_something_answers_can_give(tmp_path: Path) -> None:
    script = answers(tmp_path, "[]")
    done = cli("call", TARGET, "t", "--answers", script, script=missing({"sampling": {}}))
    assert done.returncode == 2
    line = one_clear_line(done)
    assert "needs sampling" in line
    assert "mcp-elicit call does not provide sampling" in line
    assert "--answers FILE" not in line
