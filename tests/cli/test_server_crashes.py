"""A stdio server that crashes, as a newcomer writes one: ``mcp-elicit call`` shows why, from the
server's own stderr, under the error (issue 20, points 1 and 4). Each server is a real script in
``tmp_path``, run through the real CLI."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.cli.cli_support import cli

GENERIC = "failed with an unexpected error; the server log has details"
HEAD = """\
import asyncio, sys
from dataclasses import dataclass
from mcp_elicit import Context, Server

app = Server("trips", state_keys=["server-crash-tests-secret-0123456789abcdef"])


@dataclass
class City:
    city: str


"""


def server(tmp_path: Path, body: str, *, name: str = "trip.py") -> str:
    """A stdio server whose tools are ``body``: the command line that starts it."""
    path = tmp_path / name
    path.write_text(HEAD + textwrap.dedent(body) + "\napp.run_stdio()\n")
    return f"{sys.executable} {path}"


# Runs the command in argv, then prints the peak RSS (KiB) of it and its children, and its stderr.
PEAK_RSS = """\
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, stdin=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.stdout.write(done.stderr)
"""


def err_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return done.stderr.splitlines()


def test_a_name_error_shows_the_servers_traceback_under_the_error(tmp_path: Path) -> None:
    target = server(
        tmp_path,
        """
        @app.tool()
        async def book_trip(city: str) -> str:
            return f"Booked {city} at {hotel}"
        """,
    )
    done = cli("call", target, "book_trip", "--args", '{"city": "Oslo"}')
    assert done.returncode == 1
    lines = err_lines(done)
    assert lines[0] == f"mcp-elicit: the tool reported an error: Tool 'book_trip' {GENERIC}"
    assert lines[1] == "the server's stderr (all of it):"
    assert lines[2] == "  ERROR mcp_elicit.server: tool 'book_trip' failed"
    assert f'  File "{tmp_path / "trip.py"}", line 16, in book_trip' in [line[2:] for line in lines]
    assert lines[-1] == "  NameError: name 'hotel' is not defined"
    assert done.stdout == ""


def test_a_forgotten_await_shows_the_coroutine_it_left(tmp_path: Path) -> None:
    target = server(
        tmp_path,
        """
        @app.tool()
        async def book_trip(ctx: Context) -> str:
            answer = ctx.elicit("Where to?", City, key="city")
            return f"Booked {answer.data.city}"
        """,
    )
    done = cli("call", target, "book_trip")
    assert done.returncode == 1
    lines = err_lines(done)
    assert lines[0] == f"mcp-elicit: the tool reported an error: Tool 'book_trip' {GENERIC}"
    assert "  AttributeError: 'coroutine' object has no attribute 'data'" in lines
    assert any("coroutine 'Context.elicit' was never awaited" in line for line in lines)


def test_ctx_without_its_annotation_shows_what_went_wrong(tmp_path: Path) -> None:
    """Today such a ``ctx`` becomes an argument and the call fails inside the handler; once the
    registration refuses it (issue 20, point 2) the server exits at start-up with the refusal.
    Either way the cause is on the screen, not only in a log."""
    target = server(
        tmp_path,
        """
        @app.tool()
        async def book_trip(ctx, city: str) -> str:
            answer = await ctx.elicit(f"Fly to {city}?", City)
            return f"Booked {answer.data.city}"
        """,
    )
    done = cli("call", target, "book_trip", "--args", '{"ctx": 1, "city": "Oslo"}')
    assert done.returncode in (1, 2)
    assert "the server's stderr" in done.stderr
    assert "AttributeError: 'int' object has no attribute 'elicit'" in done.stderr or "Context" in done.stderr


def test_a_protocol_error_from_a_stdio_server_shows_its_stderr_too(tmp_path: Path) -> None:
    target = server(
        tmp_path,
        """
        @dataclass
        class Trip:
            destination: City

        @app.tool()
        async def book_trip(ctx: Context) -> str:
            await ctx.elicit("Where to?", Trip)
            return "booked"
        """,
    )
    answers = tmp_path / "answers.json"
    answers.write_text("{}")
    done = cli("call", target, "book_trip", "--answers", str(answers))
    assert done.returncode == 2
    lines = err_lines(done)
    assert lines[0].startswith("mcp-elicit: server error -32603 to tools/call: Internal error: ")
    assert lines[1] == "the server's stderr (all of it):"
    assert lines[2].startswith("  ERROR mcp_elicit.server: SchemaBuildError in tools/call 'book_trip': ")


def test_the_tail_is_the_last_40_lines(tmp_path: Path) -> None:
    target = server(
        tmp_path,
        """
        @app.tool()
        async def book_trip() -> str:
            for n in range(100):
                print(f"step {n}", file=sys.stderr)
            raise SystemError("out of seats")
        """,
    )
    done = cli("call", target, "book_trip")
    lines = err_lines(done)
    assert lines[1] == "the server's stderr (its last 40 lines):"
    assert len(lines) == 2 + 40
    assert "  step 99" in lines
    assert "  step 50" not in lines
    assert lines[-1] == "  SystemError: out of seats"


def test_escape_sequences_controls_and_invalid_utf8_are_cleaned(tmp_path: Path) -> None:
    target = server(
        tmp_path,
        r"""
        @app.tool()
        async def book_trip() -> str:
            sys.stderr.buffer.write(b"\xff\xfe caf\xc3\xa9 \x1b]0;PWNED\x07\x1b[31mred\x1b[0m\r")
            sys.stderr.buffer.write(b"\x1b]52;c;Y2xpcA==\x07\x08bell\x07\n")
            sys.stderr.buffer.flush()
            raise ValueError("bad \x1b[2Jvalue")
        """,
    )
    done = cli("call", target, "book_trip")
    assert done.returncode == 1
    lines = err_lines(done)
    assert "  \ufffd\ufffd caf\u00e9 redbell" in lines
    assert "  ValueError: bad value" in lines
    for control in ("\x1b", "\x07", "\x08", "\r", "PWNED", "Y2xpcA"):
        assert control not in done.stderr


def test_ten_megabytes_on_stderr_do_not_slow_the_call_nor_fill_memory(tmp_path: Path) -> None:
    body = """
        @app.tool()
        async def book_trip(megabytes: int) -> str:
            block = b"x" * 1023 + b"\\n"
            for _ in range(megabytes * 1024):
                sys.stderr.buffer.write(block)
            sys.stderr.buffer.flush()
            raise RuntimeError("flooded")
        """
    target = server(tmp_path, body)

    def run(megabytes: int) -> tuple[float, int, str]:
        """Wall time, peak RSS (KiB) of the CLI and its server, and the CLI's stderr."""
        started = time.monotonic()
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                PEAK_RSS,
                sys.executable,
                "-m",
                "mcp_elicit.cli",
                "call",
                target,
                "book_trip",
                "--args",
                f'{{"megabytes": {megabytes}}}',
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        peak, _, stderr = out.partition("\n")
        return time.monotonic() - started, int(peak), stderr

    small_time, small_peak, _ = run(0)
    big_time, big_peak, stderr = run(10)
    print(f"0 MB: {small_time:.2f} s, {small_peak} KiB; 10 MB: {big_time:.2f} s, {big_peak} KiB")
    assert big_time < small_time + 3.0
    assert big_peak < small_peak + 8 * 1024  # the 10 MB were not kept
    assert len(stderr) < 9 * 1024  # the tail: 8 KiB at most, and the error line
    assert stderr.splitlines()[-1] == "  RuntimeError: flooded"


def test_verbose_shows_the_servers_stderr_live(tmp_path: Path) -> None:
    target = server(
        tmp_path,
        """
        @app.tool()
        async def book_trip() -> str:
            print("looking for flights", file=sys.stderr, flush=True)
            await asyncio.sleep(3)
            print("found one \\x1b[31mcheap\\x1b[0m", file=sys.stderr, flush=True)
            return "booked"
        """,
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_elicit.cli", "call", target, "book_trip", "--verbose"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        assert first == "[server] looking for flights\n"
        assert process.poll() is None  # the call is still running: shown live
        out, rest = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    assert (process.returncode, out) == (0, "booked\n")
    assert rest == "[server] found one cheap\n"


def test_verbose_does_not_repeat_the_tail_under_an_error(tmp_path: Path) -> None:
    target = server(
        tmp_path,
        """
        @app.tool()
        async def book_trip() -> str:
            raise LookupError("no flights")
        """,
    )
    done = cli("call", target, "book_trip", "-v")
    assert done.returncode == 1
    assert "[server] LookupError: no flights" in err_lines(done)
    assert "the server's stderr" not in done.stderr
    assert done.stderr.count("LookupError: no flights") == 1


def test_a_server_that_writes_nothing_gets_no_tail(tmp_path: Path) -> None:
    target = server(
        tmp_path,
        """
        from mcp_elicit import ToolError

        @app.tool()
        async def book_trip() -> str:
            raise ToolError("no seats left")
        """,
    )
    done = cli("call", target, "book_trip")
    assert done.returncode == 1
    assert err_lines(done) == ["mcp-elicit: the tool reported an error: no seats left"]


# -- point 4: the interpreter cannot import the server's modules --------------------------------
@pytest.fixture
def system_python(tmp_path: Path) -> dict[str, str]:
    """A ``python3`` first on PATH that is not this environment's: the base interpreter, without
    this run's PYTHONPATH (so ``mcp_elicit`` cannot be imported), as outside a venv."""
    folder = tmp_path / "bin"
    folder.mkdir()
    python3 = folder / "python3"
    base = getattr(sys, "_base_executable", sys.executable)
    python3.write_text(f'#!/bin/sh\nunset PYTHONPATH\nexec {base} -s "$@"\n')
    python3.chmod(python3.stat().st_mode | stat.S_IXUSR)
    missing = subprocess.run([str(python3), "-c", "import mcp_elicit"], capture_output=True, check=False)
    if missing.returncode == 0:
        pytest.skip("the base interpreter can import mcp_elicit itself")
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def test_python3_outside_the_venv_is_said_in_one_sentence(
    tmp_path: Path, system_python: dict[str, str]
) -> None:
    script = tmp_path / "trip.py"
    script.write_text("from mcp_elicit import Server\n\nServer('trips').run_stdio()\n")
    done = cli("call", f"python3 {script}", "book_trip", env=system_python)
    assert done.returncode == 2
    lines = err_lines(done)
    python3 = tmp_path / "bin" / "python3"
    assert lines[0] == (
        f"mcp-elicit: the server exited at start-up: {python3} cannot import 'mcp_elicit' "
        f"(ModuleNotFoundError), which {sys.executable} can: "
        + (
            f"activate its virtual environment (source {sys.prefix}/bin/activate) or "
            if sys.prefix != sys.base_prefix
            else ""
        )
        + f"run the server with that Python: {sys.executable} {script}"
    )
    # the traceback follows, line by line (never squashed onto one)
    assert lines[1] == "the server's stderr (all of it):"
    assert lines[2] == "  Traceback (most recent call last):"
    assert lines[-1] == "  ModuleNotFoundError: No module named 'mcp_elicit'"
    assert "Traceback" not in lines[0]


def test_a_module_no_python_here_has_names_the_install(tmp_path: Path) -> None:
    target = server(tmp_path, "import trip_helpers_not_installed\n")
    done = cli("call", target, "book_trip")
    assert done.returncode == 2
    first = err_lines(done)[0]
    assert first.startswith(
        f"mcp-elicit: the server exited at start-up: {sys.executable} cannot import "
        "'trip_helpers_not_installed' (ModuleNotFoundError): install the package that provides it "
        f"for {sys.executable} ({sys.executable} -m pip install trip_helpers_not_installed, "
    )
    assert err_lines(done)[-1] == "  ModuleNotFoundError: No module named 'trip_helpers_not_installed'"


def test_a_server_that_exits_for_another_reason_shows_its_last_words(tmp_path: Path) -> None:
    target = server(tmp_path, "raise SystemExit('config file trips.toml not found')\n")
    done = cli("call", target, "book_trip")
    assert done.returncode == 2
    lines = err_lines(done)
    assert lines[0] == f"mcp-elicit: the server process exited ({target}) (exit code 1)"
    assert lines[1:] == ["the server's stderr (all of it):", "  config file trips.toml not found"]
