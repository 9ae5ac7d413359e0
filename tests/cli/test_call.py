"""``mcp-elicit call``, ``tools`` and ``demo`` as a person runs them: real processes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.cli_support import STDIO_TARGET, cli, http_server


def answers(tmp_path: Path, script: object) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(script))
    return str(path)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_call_with_answers_prints_the_result(tmp_path: Path, http_target: str, transport: str) -> None:
    target = STDIO_TARGET if transport == "stdio" else http_target
    done = cli(
        "call",
        target,
        "greet",
        "--answers",
        answers(tmp_path, {"name": {"action": "accept", "content": {"name": "Ada"}}}),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello, Ada!\n"


def test_declining_exits_3_with_a_reason(tmp_path: Path) -> None:
    done = cli("call", STDIO_TARGET, "greet", "--answers", answers(tmp_path, [{"action": "decline"}]))
    assert done.returncode == 3
    assert done.stdout == "No greeting (decline).\n"
    assert done.stderr.splitlines() == [
        # shown, though scripted
        f"cli-tests (reached via {STDIO_TARGET}, MCP 2026-07-28) asks: What is your name?",
        "  answered from the script: decline",
        "mcp-elicit: declined: the question 'What is your name?' was declined",
    ]


def test_a_scripted_form_answer_is_shown_with_its_question(tmp_path: Path) -> None:
    """A server asking again under the same key with other words gets the scripted answer, but
    not unseen: every question answered from the file goes to stderr."""
    script = answers(tmp_path, {"name": {"action": "accept", "content": {"name": "Ada"}}})
    done = cli("call", STDIO_TARGET, "greet", "--answers", script)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"cli-tests (reached via {STDIO_TARGET}, MCP 2026-07-28) asks: What is your name?",
        "  answered from the script: accept (name)",
    ]


def test_a_scripted_url_answer_still_shows_the_address_first(tmp_path: Path) -> None:
    script = answers(tmp_path, {"page": {"action": "accept"}})
    args = '{"url": "https://mcp.example.com/connect/Zq3xYb9"}'
    done = cli("call", STDIO_TARGET, "open_page", "--args", args, "--answers", script)
    assert (done.returncode, done.stdout) == (0, "page accept\n")
    assert done.stderr.splitlines() == [
        f"cli-tests (reached via {STDIO_TARGET}, MCP 2026-07-28) asks you to open a page: "
        "Connect your account",
        "  address: https://mcp.example.com/connect/Zq3xYb9",
        "  domain:  example.com",
        "  answered from the script: accept",
    ]


def test_a_scripted_accept_of_an_address_that_must_not_be_opened_is_a_decline(tmp_path: Path) -> None:
    script = answers(tmp_path, {"page": {"action": "accept"}})
    args = '{"url": "http://127.0.0.1:9/connect"}'  # the server allows it; the client does not
    done = cli("call", STDIO_TARGET, "open_page", "--args", args, "--answers", script)
    assert (done.returncode, done.stdout) == (3, "page decline\n")
    assert "  refused: " in done.stderr
    assert "the script accepted it, but this address must not be opened: declined" in done.stderr
    assert "address:" not in done.stderr  # a refused address is not offered, even as text
    allowed = cli(
        "call", STDIO_TARGET, "open_page", "--args", args, "--answers", script, "--allow-loopback-http"
    )
    assert (allowed.returncode, allowed.stdout) == (0, "page accept\n")
    assert "  warning: " in allowed.stderr


def test_a_tool_error_exits_1() -> None:
    done = cli("call", STDIO_TARGET, "fails")
    assert done.returncode == 1
    assert done.stderr.strip() == "mcp-elicit: the tool reported an error: the printer is on fire"


def test_an_invalid_scripted_answer_is_refused_before_it_is_sent(tmp_path: Path) -> None:
    done = cli(
        "call",
        STDIO_TARGET,
        "greet",
        "--answers",
        answers(tmp_path, [{"action": "accept", "content": {"name": 7}}]),
    )
    assert done.returncode == 2
    assert "name" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["call", STDIO_TARGET, "nope", "--args", "{}"], "the server has no tool 'nope'; its tools: greet, "),
        (["call", STDIO_TARGET, "greet", "--args", "[1]"], "--args must be a JSON object"),
        (["call", STDIO_TARGET, "greet", "--args", "{oops"], "--args is not JSON"),
        # not numbers: json.loads takes these, and they went out as null
        (["call", STDIO_TARGET, "greet", "--args", '{"n": NaN}'], "--args is not JSON"),
        (["call", STDIO_TARGET, "greet", "--args", '{"n": Infinity}'], "--args is not JSON"),
        (["call", STDIO_TARGET, "greet", "--args", '{"n": 1e400}'], "--args is not JSON"),
        (
            ["call", STDIO_TARGET, "greet"],
            "elicitation.form (This request needs",
        ),
        (["call", "/nonexistent/server", "greet"], "cannot start the server"),
        (["tools", "/nonexistent/server"], "cannot start the server"),
        (["call", STDIO_TARGET, "greet", "--answers", "/nonexistent/answers.json"], "answers.json"),
    ],
)
def test_failures_are_one_line_on_stderr_with_exit_2(args: list[str], needle: str) -> None:
    done = cli(*args)
    assert done.returncode == 2
    assert needle in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_tools_lists_name_description_and_arguments(http_target: str) -> None:
    done = cli("tools", http_target)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "# cli-tests 2.0.0, speaking MCP 2026-07-28",  # a comment: who, and which era
        "greet",  # the name starts a line; what it is and takes, indented below
        "    Asks for a name.",
        "    (no arguments)",
        "open_page",
        "    Sends the person to ``url``.",
        "    - url: string, required",
        "fails",
        "    Always reports an error.",
        "    (no arguments)",
        "chart",
        "    Draws a chart: an image, its data and its caption; no text.",
        "    (no arguments)",
    ]


@pytest.fixture(scope="module")
def guarded_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same server behind a bearer-token check (401 without the right token)."""
    with http_server(tmp_path_factory.mktemp("guarded") / "server.log", "s3cret-token") as url:
        yield url


def test_header_option_carries_the_token(guarded_target: str) -> None:
    done = cli("tools", guarded_target, "--header", "Authorization: Bearer s3cret-token")
    assert done.returncode == 0, done.stderr
    assert "greet\n    Asks for a name.\n" in done.stdout
    called = cli("call", guarded_target, "fails", "--header", "Authorization: Bearer s3cret-token")
    assert called.returncode == 1  # the tool's own error, reached with the token
    assert "the printer is on fire" in called.stderr


def test_a_refused_token_says_so_and_how_to_send_one(guarded_target: str) -> None:
    for extra in ([], ["--header", "Authorization: Bearer wrong"]):
        done = cli("tools", guarded_target, *extra)
        assert done.returncode == 2
        assert "mcp-elicit: HTTP 401: " in done.stderr
        assert 'Bearer error="invalid_token"' in done.stderr
        assert "does not speak MCP" not in done.stderr
        assert "(pass --header 'Authorization: Bearer ...')" in done.stderr  # the CLI's way, not Python's
        assert "headers=" not in done.stderr


@pytest.mark.parametrize("bad", ["no colon", ": empty name", "Bad Name: x", "Tab\tName: x"])
def test_malformed_header_option_is_refused(guarded_target: str, bad: str) -> None:
    done = cli("call", guarded_target, "greet", "--header", bad)
    assert done.returncode == 2
    assert "is not 'Name: value'" in done.stderr


@pytest.mark.parametrize(
    "header",
    [
        "Content-Length: 0",
        "transfer-encoding: chunked",
        "Content-Type: text/plain",
        "Host: elsewhere.example",
        "Accept: */*",
        "Connection: close",
        "Mcp-Method: tools/list",
        "MCP-Protocol-Version: 2025-06-18",
        "Mcp-Name: greet",
        "Mcp-Param-Region: eu",
    ],
)
def test_a_header_the_client_sets_itself_is_refused_not_blamed_on_the_server(
    http_target: str, header: str
) -> None:
    """A second Content-Length or Mcp-Method made the server refuse the request, and the
    message then said the server does not speak MCP."""
    name = header.partition(":")[0]
    for args in (["call", http_target, "greet"], ["tools", http_target]):
        done = cli(*args, "--header", header)
        assert done.returncode == 2
        assert done.stderr.startswith(f"mcp-elicit: --header {header!r} cannot be sent: mcp-elicit sets ")
        assert name in done.stderr or "Mcp-*" in done.stderr
        assert "does not speak MCP" not in done.stderr
        assert done.stdout == ""


def test_custom_headers_are_still_sent(guarded_target: str) -> None:
    done = cli(
        "tools",
        guarded_target,
        "--header",
        "X-Request-Id: 42",
        "--header",
        "Authorization: Bearer s3cret-token",
    )
    assert done.returncode == 0, done.stderr
    assert "greet\n    Asks for a name.\n" in done.stdout


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("nan", "is not a positive, finite number of seconds"),
        ("inf", "is not a positive, finite number of seconds"),
        ("0", "is not a positive, finite number of seconds"),
        ("-1", "is not a positive, finite number of seconds"),
        ("soon", "is not a number of seconds"),
    ],
)
def test_a_timeout_that_cannot_be_waited_for_is_a_usage_error(value: str, why: str) -> None:
    """It used to "give up: the call took longer than --timeout" before sending anything."""
    done = cli("call", STDIO_TARGET, "fails", f"--timeout={value}")
    assert done.returncode == 2
    assert f"mcp-elicit call: error: argument --timeout: {value!r} {why}" in done.stderr
    assert "gave up" not in done.stderr


def test_a_positive_timeout_is_waited_for() -> None:
    done = cli("call", STDIO_TARGET, "fails", "--timeout", "30.5")
    assert done.returncode == 1  # the tool ran and reported its error
    assert "the printer is on fire" in done.stderr


DEEP = 20_000  # far past the JSON decoder's recursion limit (and short enough for argv)


def test_deeply_nested_args_are_a_usage_error() -> None:
    args = '{"a": ' + "[" * DEEP + "]" * DEEP + "}"
    done = cli("call", STDIO_TARGET, "greet", "--args", args)
    assert done.returncode == 2
    assert done.stderr == "mcp-elicit: --args is nested too deeply to read\n"


def test_a_deeply_nested_answers_file_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text("[" + '{"action": "accept", "content": ' * DEEP + "1" + "}" * DEEP + "]")
    done = cli("call", STDIO_TARGET, "greet", "--answers", str(path))
    assert done.returncode == 2
    assert done.stderr == f"mcp-elicit: {path}: the script is nested too deeply to read\n"
