"""The mistakes a newcomer makes with ``call`` and ``tools``, each ending soon in one line that
says what TARGET is likely to be, with a hint: an HTTP server (or ``sleep``, or a socket that
never answers) taken as a server, a program whose output is not JSON-RPC, a ``.py`` file or a
URL without its scheme as TARGET, the command line left unquoted, a tool the server does not
have. Also ``--version``, and error lines that name no Python class (``--verbose`` does)."""

from __future__ import annotations

import shlex
import socket
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from mcp_elicit.cli import _parser
from tests.cli.cli_support import SERVER, STDIO_TARGET, cli, one_clear_line
from tests.helpers import free_port
from tests.server_process import PY, running_server


def err_lines(done: object) -> list[str]:
    stderr = getattr(done, "stderr", "")
    assert "Traceback" not in stderr
    return str(stderr).strip().splitlines()


# -- connecting is bounded by --connect-timeout ---------------------------------------------------
def test_the_connect_timeout_is_10_seconds_by_default_for_call_and_tools() -> None:
    parser = _parser()
    assert parser.parse_args(["call", "python server.py", "t"]).connect_timeout == 10.0
    assert parser.parse_args(["tools", "python server.py"]).connect_timeout == 10.0


def test_an_http_server_started_as_a_stdio_one_is_named_with_its_url() -> None:
    port = free_port()
    target = f"{PY} {SERVER} --port {port}"  # run_http(): it serves HTTP, and reads no stdin
    started = time.monotonic()
    # Long enough for a loaded machine to start the server and print where it serves.
    done = cli("call", target, "greet", "--connect-timeout", "4")
    assert time.monotonic() - started < 15
    assert done.returncode == 2
    lines = err_lines(done)
    url = f"http://127.0.0.1:{port}/mcp"
    assert lines[0] == (
        f"mcp-elicit: the server did not answer within 4 s: is {target!r} an MCP server on stdio? "
        f"It says it serves {url}: give that URL as TARGET instead."
    )
    assert lines[1] == "the server's stderr (all of it):"
    assert f"  cli-tests 2.0.0: MCP over Streamable HTTP at {url}" in lines


def test_a_command_that_says_nothing_fails_at_the_connect_timeout() -> None:
    done = cli("tools", "sleep 100", "--connect-timeout", "1")
    assert done.returncode == 2
    assert one_clear_line(done) == (
        "mcp-elicit: the server did not answer within 1 s: is 'sleep 100' an MCP server on stdio? "
        "It wrote nothing to stderr (if it is slow to start, give it longer with --connect-timeout SECONDS)."
    )


def test_the_connect_timeout_does_not_bound_the_call(tmp_path: Path) -> None:
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import asyncio, sys\n"
        f"sys.path.insert(0, {str(SERVER.parent)!r})\n"
        "from cli_server import app\n\n"
        "@app.tool()\n"
        "async def slow() -> str:\n"
        "    await asyncio.sleep(4.0)\n"
        "    return 'slept'\n\n"
        "app.run_stdio()\n"
    )
    # Connecting (a server start on a loaded machine) fits in 3 s; the call takes longer.
    done = cli("call", f"{PY} {slow}", "slow", "--connect-timeout", "3")
    assert (done.returncode, done.stdout) == (0, "slept\n"), done.stderr


@pytest.fixture
def silent_socket() -> Iterator[str]:
    """A URL on 127.0.0.1 whose socket takes connections (the kernel's backlog) and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"


def test_a_socket_that_never_answers_fails_at_the_connect_timeout(silent_socket: str) -> None:
    done = cli("call", silent_socket, "x", "--connect-timeout", "1")
    assert done.returncode == 2
    assert one_clear_line(done) == (
        f"mcp-elicit: {silent_socket} did not answer within 1 s: is an MCP server listening there? "
        "(--connect-timeout SECONDS waits longer)"
    )


# -- programs and web servers that are not MCP servers --------------------------------------------
def test_a_program_that_floods_its_stdout_is_not_an_mcp_server() -> None:
    started = time.monotonic()
    done = cli("call", "yes", "x", timeout=30)
    assert time.monotonic() - started < 15
    assert done.returncode == 2
    assert one_clear_line(done) == (
        "mcp-elicit: 'yes' is not an MCP server: its output is not JSON-RPC (first line: 'y'); "
        "it wrote 20 such lines and no message"
    )


def test_a_script_that_prints_text_and_exits_is_started_once(tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    script = tmp_path / "notmcp.py"
    script.write_text(
        f"open({str(runs)!r}, 'a').write('ran\\n')\nprint('Hello from a script')\nprint('bye')\n"
    )
    target = f"{PY} {script}"
    done = cli("call", target, "x")
    assert done.returncode == 2
    assert one_clear_line(done) == (
        f"mcp-elicit: {target!r} is not an MCP server: its output is not JSON-RPC "
        "(first line: 'Hello from a script'); then it exited (exit code 0)"
    )
    assert runs.read_text() == "ran\n"  # not started again for the other protocol era


def test_a_web_server_that_is_not_mcp_is_said_so_without_its_page(tmp_path: Path) -> None:
    port = free_port()
    argv = [PY, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)]
    with running_server(argv, log=tmp_path / "http.log", port=port):
        done = cli("call", f"http://127.0.0.1:{port}/mcp", "x")
    assert done.returncode == 2
    line = one_clear_line(done)
    url = f"http://127.0.0.1:{port}/mcp"
    assert line.startswith(f"mcp-elicit: {url} is not an MCP server: it answered HTTP 501: ")
    assert "an HTML page: Error response Error code: 501 Message: Unsupported method ('POST')" in line
    assert "<" not in line
    assert len(line) < 400


# -- TARGET mistakes ------------------------------------------------------------------------------
def test_a_python_file_as_the_command_gets_a_hint(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text("print('never run')\n")
    done = cli("tools", "server.py", cwd=tmp_path)
    assert done.returncode == 2
    line = one_clear_line(done)
    assert line.startswith("mcp-elicit: cannot start the server 'server.py': server.py is a Python file")
    assert line.endswith(("did you mean 'python server.py'?", "did you mean 'python3 server.py'?"))


def test_a_file_that_is_not_executable_gets_a_hint(tmp_path: Path) -> None:
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")
    done = cli("tools", str(script))
    assert done.returncode == 2
    assert one_clear_line(done) == (
        f"mcp-elicit: cannot start the server {str(script)!r}: {script} is not executable; run it with "
        "its interpreter, or make it executable (chmod +x)"
    )


def test_a_url_without_its_scheme_gets_a_hint() -> None:
    done = cli("call", "127.0.0.1:8000/mcp", "x")
    assert done.returncode == 2
    assert one_clear_line(done) == (
        "mcp-elicit: cannot start the server '127.0.0.1:8000/mcp': there is no such command; "
        "did you mean http://127.0.0.1:8000/mcp?"
    )


def test_an_unquoted_command_line_gets_a_hint() -> None:
    done = cli("call", "python", "server.py", "book_trip")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "mcp-elicit: error: unrecognized arguments: book_trip; quote the server's command line: "
        "mcp-elicit call 'python server.py' book_trip"
    )
    listed = cli("tools", "python", "server.py")
    assert listed.stderr.splitlines()[-1] == (
        "mcp-elicit: error: unrecognized arguments: server.py; quote the server's command line: "
        "mcp-elicit tools 'python server.py'"
    )


def test_a_command_line_cut_in_two_is_refused_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text("print('never run')\n")
    started = time.monotonic()
    done = cli("call", "python", "server.py", "--args", "{}", cwd=tmp_path)  # `python` would read stdin
    assert time.monotonic() - started < 5
    assert done.returncode == 2
    assert one_clear_line(done) == (
        "mcp-elicit: TARGET 'python' and TOOL 'server.py' look like one command line cut in two: "
        "quote the server's command line, then name the tool: mcp-elicit call 'python server.py' TOOL"
    )


# -- the tool -------------------------------------------------------------------------------------
def test_an_unknown_tool_is_said_with_the_tools_the_server_has(http_target: str) -> None:
    for target in (STDIO_TARGET, http_target):
        done = cli("call", target, "nosuchtool")
        assert done.returncode == 2
        assert one_clear_line(done) == (
            "mcp-elicit: the server has no tool 'nosuchtool'; its tools: greet, open_page, fails, chart "
            f"(see mcp-elicit tools {shlex.quote(target)})"
        )


def test_invalid_arguments_point_to_the_tools_listing() -> None:
    target = f"{PY} {SERVER.with_name('raw_server.py')}"  # it lists the tool "t"
    error = '{"error": {"code": -32602, "message": "Invalid params: n must be a number"}}'
    done = cli("call", target, "t", env={"RAW_SERVER": error})
    assert done.returncode == 2
    assert one_clear_line(done) == (
        "mcp-elicit: server error -32602 to tools/call: Invalid params: n must be a number "
        f"(the tool and its arguments: mcp-elicit tools {shlex.quote(target)})"
    )


# -- the error line, --version --------------------------------------------------------------------
def test_error_lines_name_no_class_unless_verbose(tmp_path: Path) -> None:
    script = tmp_path / "exits.py"
    script.write_text("raise SystemExit(3)\n")
    target = f"{PY} {script}"
    said = f"mcp-elicit: the server process exited ({target}) (exit code 3)"
    assert one_clear_line(cli("call", target, "x")) == said
    assert one_clear_line(cli("call", target, "x", "--verbose")) == f"{said} (ServerExitedError)"


def test_version_is_the_installed_distributions() -> None:
    done = cli("--version")
    version = metadata.version("mcp-elicit")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"mcp-elicit {version}\n", "")
