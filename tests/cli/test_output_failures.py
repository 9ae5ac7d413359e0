"""The command's own output cannot be written (a full disk, a reader that went away): a local
error of its own, never blamed on the server and never a traceback; a closed pipe ends quietly.
Real processes writing to /dev/full or to a pipe whose reading end is closed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.cli_support import STDIO_TARGET

FULL = "/dev/full"  # every write fails with ENOSPC

pytestmark = pytest.mark.skipif(not os.path.exists(FULL), reason="needs /dev/full")


@pytest.fixture
def closed_pipe() -> Iterator[int]:
    """The writing end of a pipe nobody reads any more, like ``| head -0``."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    yield write_end
    os.close(write_end)


def cli_to(stdout: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_elicit.cli", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        timeout=60,
    )


def cli_to_full(*args: str) -> subprocess.CompletedProcess[str]:
    with open(FULL, "w") as full:
        return cli_to(full.fileno(), *args)


def schema_file(tmp_path: Path) -> str:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"type": "object", "properties": {"name": {"type": "string"}}}))
    return str(path)


def greet_answers(tmp_path: Path) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"name": {"action": "accept", "content": {"name": "Ada"}}}))
    return str(path)


QUESTION_SHOWN = [
    f"cli-tests (reached via {STDIO_TARGET}, MCP 2026-07-28) asks: What is your name?",
    "  answered from the script: accept (name)",
]


def test_a_call_whose_output_cannot_be_written_does_not_blame_the_server(tmp_path: Path) -> None:
    done = cli_to_full("call", STDIO_TARGET, "greet", "--answers", greet_answers(tmp_path))
    assert done.returncode == 4
    assert done.stderr.splitlines() == [
        *QUESTION_SHOWN,
        "mcp-elicit: cannot write the output: No space left on device",
    ]


COMMANDS = [["keygen"], ["tools", STDIO_TARGET], ["schema", "lint", "SCHEMA"], ["demo", "--script"]]


@pytest.mark.parametrize("command", COMMANDS)
def test_output_to_a_full_disk_is_one_clear_line(tmp_path: Path, command: list[str]) -> None:
    args = [schema_file(tmp_path) if a == "SCHEMA" else a for a in command]
    done = cli_to_full(*args)
    assert done.returncode == 4
    assert done.stderr == "mcp-elicit: cannot write the output: No space left on device\n"


def test_a_call_into_a_closed_pipe_ends_quietly(tmp_path: Path, closed_pipe: int) -> None:
    done = cli_to(closed_pipe, "call", STDIO_TARGET, "greet", "--answers", greet_answers(tmp_path))
    assert done.returncode == 141  # 128 + SIGPIPE, as a shell reports a tool the pipe ended
    assert done.stderr.splitlines() == QUESTION_SHOWN  # no error line: the reader chose to stop


@pytest.mark.parametrize("command", COMMANDS)
def test_other_commands_into_a_closed_pipe_end_quietly(
    tmp_path: Path, closed_pipe: int, command: list[str]
) -> None:
    args = [schema_file(tmp_path) if a == "SCHEMA" else a for a in command]
    done = cli_to(closed_pipe, *args)
    assert done.returncode == 141
    assert done.stderr == ""


def test_the_exit_statuses_are_in_the_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_elicit.cli", "--help"], capture_output=True, text=True, timeout=60
    )
    assert "  4    the output could not be written" in done.stdout
    assert "  141  the output pipe was closed" in done.stdout
