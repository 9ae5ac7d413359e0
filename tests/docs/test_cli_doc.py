"""docs/cli.md as written: its servers saved as ``trips.py`` and ``trip.py``, its console sessions
run in that folder and compared line by line with what they print, the command summary against
``mcp-elicit --help``, ``run_http``'s banner against a real server, and the debug error against
real calls over stdio and over HTTP."""

from __future__ import annotations

import sys
import time
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from tests.docs.doc_shell import reader_env, run_console
from tests.docs.markdown_blocks import blocks, console_commands, doc, matches, run_python_blocks, write_files
from tests.helpers import free_port
from tests.server_process import ServerProcess, running_server

CLI = doc("cli.md")
CALL = """mcp-elicit call {target} book_trip --args '{{"city": "Oslo"}}'"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    assert write_files(CLI, tmp_path) == ["trips.py", "trip.py"]
    return tmp_path


def serving(folder: Path, module: str, **env: str) -> AbstractContextManager[ServerProcess]:
    """``module``'s app served by ``run_http`` on a free port of 127.0.0.1, in the reader's
    environment; stopped after."""
    port = free_port()
    code = f"import {module}; {module}.app.run_http(port={port})"
    return running_server(
        [sys.executable, "-c", code],
        log=folder / f"{module}.log",
        port=port,
        env=reader_env(**env),
        cwd=folder,
    )


def printed_up_to(server: ServerProcess, last: str, within: float = 10.0) -> str:
    """What ``server`` has printed, up to the end of the first line holding ``last``."""
    deadline = time.monotonic() + within
    while True:
        printed = server.log_text()
        if last in printed and "\n" in printed[printed.index(last) :]:
            return printed[: printed.index("\n", printed.index(last)) + 1]
        assert server.process.poll() is None, f"the server exited before printing {last!r}:\n{printed}"
        assert time.monotonic() < deadline, f"the server never printed {last!r}:\n{printed}"
        time.sleep(0.05)


def test_the_doc_runs_what_it_shows() -> None:
    assert [b.tag for b in blocks(CLI)] == [
        "text",
        "python",
        "console",
        "python",
        "console",
        "text",
        "python",
        "text",
    ]
    module = run_python_blocks("cli.md")  # trips.py, trip.py, then the debug server, in turn
    assert module.app.name == "trip"
    assert [tool["name"] for tool in module.app.describe_tools()] == []


def test_the_summary_names_every_command(folder: Path) -> None:
    status, printed = run_console("mcp-elicit --help", folder)
    assert status == 0
    commands = printed.split("positional arguments:")[1].split("options:")[0].split()[1::]
    offered = {word for word in commands if word.isidentifier() and word.islower()}
    listed = {line.split()[1] for line in blocks(CLI, "text")[0].code.splitlines()}
    assert listed == {"demo", "call", "tools", "check", "schema", "keygen"}
    assert listed <= offered


@pytest.mark.parametrize(("session", "status"), [(0, 0), (1, 1)], ids=["tools", "a-crash"])
def test_the_console_sessions(folder: Path, session: int, status: int) -> None:
    for command, shown in console_commands(blocks(CLI, "console")[session]):
        code, printed = run_console(command, folder)
        assert matches(shown, printed), printed
        assert code == status, printed


def test_run_http_says_where_it_serves(folder: Path) -> None:
    banner = blocks(CLI, "text")[1].code
    with serving(folder, "trips") as server:
        printed = printed_up_to(server, "tools:")  # the banner's last line (after the ephemeral key warning)
    assert matches(banner.replace("8000", str(server.port)), printed), printed


def test_debug_puts_the_exception_in_the_error(folder: Path) -> None:
    shown = blocks(CLI, "text")[2].code
    code, printed = run_console(CALL.format(target='"python trip.py"'), folder, MCP_ELICIT_DEBUG="1")
    assert code == 1
    assert matches(shown, printed), printed
    with serving(folder, "trip", MCP_ELICIT_DEBUG="1") as server:
        code, printed = run_console(CALL.format(target=server.url), folder)
    assert code == 1
    assert matches(shown, printed), printed
