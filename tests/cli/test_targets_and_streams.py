"""``mcp-elicit`` with a TARGET or ``--header`` that would go wrong silently, and started with a
standard stream closed (``<&-``, ``>&-``, ``2>&-``): real processes, one clear line and the
documented exit status."""

from __future__ import annotations

import pytest

from tests.cli.cli_support import STDIO_TARGET, cli, one_clear_line

REFUSED = "http://127.0.0.1:1/mcp"  # nothing listens: a target the checks must stop before


# -- TARGET ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["call", "tools"])
def test_credentials_in_the_url_are_refused_and_never_repeated(command: str, http_target: str) -> None:
    """They were dropped without a word (the request went out without them) and the password
    was then printed in every error message about the server."""
    target = http_target.replace("http://", "http://ada:s3cret-pw@")
    done = cli(command, target, *(["greet"] if command == "call" else []))
    assert done.returncode == 2
    line = one_clear_line(done)
    assert "s3cret-pw" not in line
    assert "holds credentials before the '@', which are not sent" in line
    assert "--header 'Authorization: ...'" in line
    assert done.stdout == ""


@pytest.mark.parametrize("target", ["ftp://127.0.0.1/mcp", "file:///etc/passwd", "ws://127.0.0.1:1/mcp"])
def test_a_url_of_another_scheme_is_not_run_as_a_command(target: str) -> None:
    done = cli("tools", target)
    assert done.returncode == 2
    line = one_clear_line(done)
    scheme = target.split(":", 1)[0]
    assert f"uses the {scheme}: scheme; a server is reached at an http:// or https:// URL" in line
    assert "cannot start the server" not in line


def test_a_url_scheme_in_capitals_is_still_a_url(http_target: str) -> None:
    done = cli("tools", http_target.replace("http://", "HTTP://"))
    assert done.returncode == 0, done.stderr
    assert "greet\n    Asks for a name.\n" in done.stdout


@pytest.mark.parametrize("command", ["call", "tools"])
def test_a_header_for_a_stdio_server_is_a_usage_error(command: str) -> None:
    """A token given with --header to a command line was silently not sent anywhere."""
    done = cli(
        command, STDIO_TARGET, *(["greet"] if command == "call" else []), "--header", "Authorization: x"
    )
    assert done.returncode == 2
    line = one_clear_line(done)
    assert "--header is sent with HTTP requests, and TARGET is the command line of a stdio server" in line
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("header", "code"),
    [("X-Note: a\x0bb", "U+000B"), ("X-Note: a\x7f", "U+007F"), ("X-Note: 5 \u20ac", "U+20AC")],
)
def test_a_header_value_http_cannot_carry_is_named(header: str, code: str) -> None:
    """Sent as it was (a vertical tab), or blamed on TARGET ("not a server URL")."""
    done = cli("tools", REFUSED, "--header", header)
    assert done.returncode == 2
    line = one_clear_line(done)
    assert f"cannot be sent: {code} is not allowed in an HTTP header" in line
    assert "TARGET" not in line
    assert "cannot connect" not in line  # refused before anything is sent


@pytest.mark.parametrize("header", ["X(Note): a", "Ünicode: a", "X/Y: a"])
def test_a_header_name_that_is_not_a_token_is_refused(header: str) -> None:
    done = cli("tools", REFUSED, "--header", header)
    assert done.returncode == 2
    assert "is not 'Name: value'" in one_clear_line(done)


def test_a_latin1_header_value_is_still_accepted(http_target: str) -> None:
    done = cli("tools", http_target, "--header", "X-Note: caf\u00e9")
    assert done.returncode == 0, done.stderr


# -- closed standard streams ---------------------------------------------------------------------
@pytest.mark.parametrize("command", [["keygen"], ["tools", STDIO_TARGET]])
def test_a_closed_stdout_is_an_output_error_not_a_silent_success(command: list[str]) -> None:
    """``>&-``: print() dropped everything and the command exited 0."""
    done = cli(*command, close=1)
    assert done.returncode == 4
    assert done.stderr == "mcp-elicit: cannot write the output: stdout is closed\n"


def test_schema_lint_from_a_closed_stdin_reads_nothing_instead_of_a_traceback() -> None:
    done = cli("schema", "lint", "-", close=0)
    assert done.returncode == 2
    assert one_clear_line(done).startswith("mcp-elicit: - is not JSON: Expecting value")


def test_the_demo_with_a_closed_stdin_plays_the_script() -> None:
    done = cli("demo", close=0)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "That was the scripted walk-through." in done.stdout


def test_with_stderr_closed_errors_do_not_land_in_the_output() -> None:
    """``2>&-``: the error line was printed to stdout, into whatever reads the tool's text."""
    done = cli("call", "/nonexistent/server", "t", close=2)
    assert done.returncode == 2
    assert done.stdout == ""


def test_a_server_that_exits_at_once_is_one_line_and_nothing_more() -> None:
    """`true` exits before reading its request: the write fails and the reader sees the exit at
    the same moment; the error was also set on a future nobody awaited, which asyncio reported
    at exit as "Future exception was never retrieved" with a traceback."""
    for _ in range(3):  # the race went that way most of the time, not always
        done = cli("call", "true", "x")
        assert done.returncode == 2
        line = one_clear_line(done)
        assert "the server process exited (true) (exit code 0)" in line
