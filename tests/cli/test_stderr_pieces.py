"""The plain parts behind what the CLI shows of a stdio server's stderr: lines cut out of chunks
(bounded), the tail under an error (bounded, cleaned), and the import failure read from it."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from mcp_elicit.cli.import_failure import interpreter, missing_module
from mcp_elicit.cli.server_stderr import TAIL_CHARS, Lines, ServerStderr, tail


def test_lines_come_out_whole_whatever_the_chunks() -> None:
    lines = Lines()
    assert lines.feed(b"first li") == []
    assert lines.feed(b"ne\nsecond\n\nthi") == [b"first line", b"second", b""]
    assert lines.end() == [b"thi"]
    assert lines.end() == []


def test_a_line_longer_than_the_limit_comes_out_in_pieces() -> None:
    lines = Lines(limit=4)
    assert lines.feed(b"abcdefghij") == [b"abcd", b"efgh"]  # never more than 4 bytes held
    assert lines.feed(b"k\nlmnopq\n") == [b"ijk", b"lmno", b"pq"]


def test_the_tail_keeps_the_last_lines_cleaned() -> None:
    captured = "".join(f"line {n}\n" for n in range(100)) + "\x1b[31mred\x1b[0m \ufffd\r\n\n"
    lines, cut = tail(captured, lines=3)
    assert (lines, cut) == (["line 98", "line 99", "red \ufffd"], True)
    assert tail("one\ntwo\n") == (["one", "two"], False)
    assert tail("") == ([], False)


def test_the_tail_is_bounded_in_characters_too() -> None:
    lines, cut = tail("x" * (3 * TAIL_CHARS) + "\nthe end\n")
    assert cut
    assert lines[-1] == "the end"
    assert lines[0].startswith("\u2026x")  # starts inside a line: said so
    assert sum(map(len, lines)) <= TAIL_CHARS + 1


def test_live_lines_are_prefixed_and_cleaned() -> None:
    shown: list[str] = []
    stderr = ServerStderr(verbose=True, write=shown.append)
    stderr._live(b"a \x1b]0;title\x07line\nhalf")
    stderr._live(b" \xffline\n")
    stderr._live(b"no end")
    stderr.finish()
    assert shown == ["[server] a line", "[server] half \ufffdline", "[server] no end"]


def test_missing_module_takes_the_last_import_failure() -> None:
    stderr = (
        "Traceback (most recent call last):\n"
        "ModuleNotFoundError: No module named 'yaml'\n"
        "During handling ...\n"
        "ModuleNotFoundError: No module named 'mcp_elicit.server'\n"
    )
    assert missing_module(stderr) == "mcp_elicit.server"
    assert missing_module("ImportError: No module named 'old_style'") == "old_style"
    assert missing_module("ModuleNotFoundError: No module named 'bad name; rm -rf'") is None
    assert missing_module("it said ModuleNotFoundError: No module named 'x'") is None  # not a line of its own


def test_the_interpreter_is_resolved_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    python3 = tmp_path / "python3"
    python3.write_text("#!/bin/sh\n")
    python3.chmod(python3.stat().st_mode | stat.S_IXUSR)
    script = tmp_path / "server"
    script.write_text("#!/usr/bin/env python3\nprint('hi')\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    shell = tmp_path / "run.sh"
    shell.write_text("#!/bin/sh\nexec python3 trip.py\n")
    shell.chmod(shell.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert interpreter(["python3", "trip.py"]) == str(python3)
    assert interpreter(["env", "DEBUG=1", "python3", "trip.py"]) == str(python3)
    assert interpreter([str(script)]) == str(python3)  # its #! line
    assert interpreter([sys.executable, "trip.py"]) == sys.executable
    assert interpreter([str(shell)]) is None
    assert interpreter(["uv", "run", "trip.py"]) is None  # not on this PATH
    assert interpreter([]) is None
