"""What ``call`` adds to a server's error when it is not about the tool or its arguments: the
-32602 hint "(the tool and its arguments: ...)" was given to every -32602, and the official
SDK's 2025-11-25 way of asking was a dead end with no word of --legacy."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mcp_elicit.cli.call import (
    NO_ELICITATION,
    NO_ELICITATION_STDERR,
    _client_warnings_as_lines,
    _missing,
    _what_to_do,
)
from mcp_elicit.client import McpClientError, MissingCapabilityError
from tests.cli.cli_support import cli, http_server, one_clear_line
from tests.server_process import PY

SDK_LEGACY = Path(__file__).resolve().parents[1] / "interop" / "legacy_sdk_server.py"
TARGET = f"{PY} {SDK_LEGACY} stdio"


def test_the_sdks_own_elicit_reached_over_2026_07_28_says_to_try_legacy() -> None:
    # The SDK picks 2026-07-28 when asked server/discover, where its ctx.elicit() cannot ask.
    line = one_clear_line(cli("call", TARGET, "file_ticket"))
    assert "elicitation/create" in line
    assert line.endswith("the server asks its questions the 2025-11-25 way: try again with --legacy")
    assert "the tool and its arguments" not in line


def test_with_legacy_and_no_way_to_answer_it_says_why_not_check_the_arguments() -> None:
    # No terminal, no --answers: the client declares no elicitation, and the SDK server relays
    # the client's refusal as -32602 in words of its own.
    line = one_clear_line(cli("call", "--legacy", TARGET, "file_ticket"))
    assert line.endswith(NO_ELICITATION)
    assert "the tool and its arguments" not in line


def test_an_expired_request_state_says_to_call_again() -> None:
    expired = McpClientError(
        -32602, "Invalid or expired requestState", {"reason": "invalid_request_state"}, method="tools/call"
    )
    said = _what_to_do(expired, frozenset({"form"}), "auto", "2026-07-28")
    assert said is not None
    assert "waited longer than it keeps a call open" in said
    assert said.endswith("call the tool again")


def test_bad_arguments_keep_the_arguments_hint() -> None:
    wrong = McpClientError(-32602, "Invalid params: 'n' must be an integer", method="tools/call")
    assert _what_to_do(wrong, frozenset({"form"}), "auto", "2026-07-28") is None
    # The --legacy hint is for a run that let the CLI choose the era, and spoke 2026-07-28.
    asked = McpClientError(-32600, "Cannot send 'elicitation/create': no back-channel", method="tools/call")
    assert _what_to_do(asked, frozenset({"form"}), "auto", "2025-11-25") is None
    assert _what_to_do(asked, frozenset({"form"}), "2026-07-28", "2026-07-28") is None


def test_the_client_librarys_warnings_are_lines_of_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    """A server's question the client refused is logged by the library; with no handler set up
    Python printed the bare message, unlike every other line of the CLI."""
    log = logging.getLogger("mcp_elicit.client.server_requests")
    with _client_warnings_as_lines():
        log.warning("refused the server's elicitation/create %r: %s", 1, "nested objects are not allowed")
        log.info("not shown")
    log.warning("after the run: not the CLI's to print")
    assert capsys.readouterr().err == (
        "mcp-elicit: refused the server's elicitation/create 1: nested objects are not allowed\n"
    )


def test_https_to_a_plain_http_server_says_to_try_http(tmp_path: Path) -> None:
    """Only OpenSSL's "[SSL: WRONG_VERSION_NUMBER]" was said."""
    with http_server(tmp_path / "server.log") as url:
        secure = url.replace("http://", "https://", 1)
        line = one_clear_line(cli("call", secure, "echo", "--connect-timeout", "10"))
    assert line.endswith(f"(the server answers plain http, not https: try {url})")


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("stdin", "stderr", "said"),
    [
        (True, False, NO_ELICITATION_STDERR),  # `2> log.txt` in a terminal
        (False, False, NO_ELICITATION),  # no terminal at all
        (False, True, NO_ELICITATION),
    ],
    ids=["stderr-redirected", "no-terminal", "stdin-redirected"],
)
def test_no_elicitation_says_when_only_stderr_is_redirected(
    monkeypatch: pytest.MonkeyPatch, stdin: bool, stderr: bool, said: str
) -> None:
    monkeypatch.setattr("sys.stdin", _Stream(stdin))
    monkeypatch.setattr("sys.stderr", _Stream(stderr))
    exc = MissingCapabilityError(-32021, "needs elicitation", {"requiredCapabilities": ["elicitation"]})
    assert _missing(exc, frozenset(), from_file=False).endswith(said)
