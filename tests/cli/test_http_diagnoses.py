"""What a newcomer sees over HTTP (issue 20, points 1 and 7): a URL without ``/mcp`` is said to
be wrong, with the path to try; ``run_http()`` says where it serves and what; a tool that fails
names its exception only on a server started with ``MCP_ELICIT_DEBUG=1``. Real servers on
127.0.0.1, the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cli.cli_support import cli, http_server, one_clear_line
from tests.helpers import free_port
from tests.server_process import PY, ServerProcess, running_server

SERVER = textwrap.dedent(
    """
    import sys
    from mcp_elicit import Server

    app = Server("trips", version="1.2.0")


    @app.tool()
    async def greet(name: str) -> str:
        return f"Hello, {name}!"


    @app.tool()
    async def book_trip(city: str) -> str:
        return f"Booked {city} at {hotel}"


    app.run_http(port=int(sys.argv[1]), **({"quiet": True} if sys.argv[2:] == ["quiet"] else {}))
    """
)


@contextmanager
def trips(tmp_path: Path, *args: str, debug: str | None = None) -> Iterator[tuple[int, ServerProcess]]:
    """The server above on a free port (``debug``: its MCP_ELICIT_DEBUG), its output in a log."""
    script = tmp_path / "trips_http.py"
    script.write_text(SERVER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_ELICIT_")}
    if debug is not None:
        env["MCP_ELICIT_DEBUG"] = debug
    port = free_port()
    argv = [PY, str(script), str(port), *args]
    with running_server(argv, log=tmp_path / "trips.log", port=port, env=env) as server:
        yield port, server


def output_of(server: ServerProcess) -> list[str]:
    """Everything the server wrote (to stderr: nothing goes to its stdout), once it stopped."""
    server.stop()
    return server.log_text().splitlines()


# -- point 7: the path forgotten ----------------------------------------------------------------
@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The CLI tests' server, which serves MCP at /mcp: its port."""
    with http_server(tmp_path_factory.mktemp("served") / "server.log") as url:
        yield int(url.removesuffix("/mcp").rpartition(":")[2])


@pytest.mark.parametrize("command", [["call", "{url}", "greet"], ["tools", "{url}"]])
@pytest.mark.parametrize("path", ["/", "", "/api"])
def test_a_url_without_the_mcp_path_says_not_found_and_the_path_to_try(
    served: int, command: list[str], path: str
) -> None:
    url = f"http://127.0.0.1:{served}{path}"
    done = cli(*(part.format(url=url) for part in command))
    assert done.returncode == 2
    assert one_clear_line(done) == (
        f"mcp-elicit: {url} was not found (HTTP 404): no MCP server answers there; "
        f"MCP servers usually serve at http://127.0.0.1:{served}/mcp"
    )
    for era_talk in ("initialize", "server/discover", "2025-11-25", "2026-07-28", "Legacy"):
        assert era_talk not in done.stderr


def test_a_wrong_path_that_already_ends_in_mcp_suggests_nothing_else(served: int) -> None:
    url = f"http://127.0.0.1:{served}/v1/mcp"
    line = one_clear_line(cli("tools", url))
    assert line == (
        f"mcp-elicit: {url} was not found (HTTP 404): no MCP server answers there; "
        "check the path the server serves MCP at"
    )


def test_with_modern_only_a_404_also_names_the_other_era(served: int) -> None:
    url = f"http://127.0.0.1:{served}/"
    line = one_clear_line(cli("tools", url, "--modern"))
    assert line.startswith(f"mcp-elicit: {url} was not found (HTTP 404): ")
    assert line.endswith(
        f"usually serve at http://127.0.0.1:{served}/mcp (or a 2025-11-25 server that answers 404 "
        "before initialize: try without --modern)"
    )


def test_the_right_url_still_works(served: int) -> None:
    done = cli("call", f"http://127.0.0.1:{served}/mcp", "fails")
    assert (done.returncode, one_clear_line(done)) == (
        1,
        "mcp-elicit: the tool reported an error: the printer is on fire",
    )


# -- point 7: run_http() says where it serves ---------------------------------------------------
def test_run_http_says_where_it_serves_and_what_once_listening(tmp_path: Path) -> None:
    with trips(tmp_path) as (port, server):
        lines = output_of(server)
    assert lines[:3] == [
        "requestState uses an ephemeral key (lost on restart, unknown to other instances): "
        "run `mcp-elicit keygen` once and set MCP_ELICIT_STATE_KEYS to it",
        f"trips 1.2.0: MCP over Streamable HTTP at http://127.0.0.1:{port}/mcp",
        "  tools: greet, book_trip",
    ]
    assert len(lines) == 3  # nothing else, before or after


def test_run_http_says_so_when_debug_is_on(tmp_path: Path) -> None:
    with trips(tmp_path, debug="1") as (port, server):
        lines = output_of(server)
    assert lines[1:] == [
        f"trips 1.2.0: MCP over Streamable HTTP at http://127.0.0.1:{port}/mcp",
        "  tools: greet, book_trip",
        "  debug: on: failures show their exception to the client (for development only)",
    ]


def test_quiet_run_http_prints_no_start_message(tmp_path: Path) -> None:
    with trips(tmp_path, "quiet") as (_, server):
        lines = output_of(server)
    assert len(lines) == 1
    assert lines[0].startswith("requestState uses an ephemeral key")


def test_a_port_already_taken_is_not_announced(tmp_path: Path) -> None:
    with trips(tmp_path) as (port, _):
        script = tmp_path / "trips_http.py"
        second = subprocess.run(
            [sys.executable, str(script), str(port)], capture_output=True, text=True, timeout=30, check=False
        )
    assert second.returncode != 0
    assert "MCP over Streamable HTTP at" not in second.stderr
    assert "address already in use" in second.stderr.lower()


# -- point 1: over HTTP, the development flag ---------------------------------------------------
def test_with_debug_a_failing_tool_names_its_exception(tmp_path: Path) -> None:
    with trips(tmp_path, debug="1") as (port, _):
        done = cli("call", f"http://127.0.0.1:{port}/mcp", "book_trip", "--args", '{"city": "Oslo"}')
    assert done.returncode == 1
    assert one_clear_line(done) == (
        "mcp-elicit: the tool reported an error: Tool 'book_trip' failed: NameError: name 'hotel' is "
        f"not defined ({tmp_path / 'trips_http.py'}:15, in book_trip)"
    )


@pytest.mark.parametrize("debug", [None, "0"])
def test_without_debug_the_error_stays_as_it_was_and_leaks_nothing(tmp_path: Path, debug: str | None) -> None:
    with trips(tmp_path, debug=debug) as (port, server):
        started = time.monotonic()
        done = cli("call", f"http://127.0.0.1:{port}/mcp", "book_trip", "--args", '{"city": "Oslo"}')
        assert time.monotonic() - started < 30
        log = "\n".join(output_of(server))
    assert done.returncode == 1
    assert one_clear_line(done) == (
        "mcp-elicit: the tool reported an error: Tool 'book_trip' failed with an unexpected error; "
        "the server log has details"
    )
    for internal in ("NameError", "hotel", "trips_http.py", "line", "Traceback"):
        assert internal not in done.stderr
    assert "NameError: name 'hotel' is not defined" in log  # where the details are
