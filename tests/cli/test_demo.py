"""``mcp-elicit demo`` without a terminal, as a real subprocess: the scripted walk-through files the
issue, connects the demo CI service through the kit's pages (every one labelled DEMO ONLY: the
sign-in, the confirmation, the provider's consent, ``/done``) and prints the result, twice in a
row; and at 80 columns, its lines are wrapped there without splitting a word or a URL."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys

import pytest
from rich.cells import cell_len

from mcp_elicit.cli.demo import wrap

RESULT = re.compile(
    r"^Result: Filed issue #101: .*CI service connected as demo-user; last build #812 passed\.$", re.M
)


KEY = "demo-debug-tests-secret-0123456789abcdef"


def _demo(*args: str, columns: int | None = None) -> subprocess.CompletedProcess[str]:
    """The demo with stdout a pipe: whole lines, unless ``columns`` sets ``COLUMNS``."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run(
        [sys.executable, "-m", "mcp_elicit.cli", "demo", *args],
        stdin=subprocess.DEVNULL,  # not a terminal: the scripted walk-through plays
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def _ports(transcript: str) -> set[int]:
    return {int(port) for port in re.findall(r"http://127\.0\.0\.1:(\d+)", transcript)}


def test_scripted_demo_connects_the_ci_service_end_to_end() -> None:
    run = _demo("--script")
    out = run.stdout
    assert run.returncode == 0, out + run.stderr
    assert re.search(
        r"^Connected to Demo issue tracker \(mcp-elicit\) 1\.0\.0 at http://127\.0\.0\.1:\d+/mcp "
        r"\(MCP 2026-07-28\)\.$",
        out,
        re.M,
    ), out
    assert out.count("asks:") == 3  # two forms and the link
    assert "(verdict: warn)" in out  # a loopback http address, allowed in development mode only
    for step in (
        "DEMO ONLY development identity",
        "-> 200 'Sign in to continue' [DEMO ONLY]",
        "page: DEMO ONLY: development mode.",
        "-> 200 'DEMO ONLY sign-in: continue as demo-user' [DEMO ONLY]",
        "[Continue as demo-user] -> 303",
        "-> 200 'Connect Demo CI service (demo only)' [DEMO ONLY]",
        "page: Signed in as Demo user (demo-user)",
        # The client as it calls itself (our own client: "mcp-elicit"), the server, the provider.
        "page: An app that calls itself “mcp-elicit” (self-reported: not verified) asks you, "
        "through the server Demo issue tracker (mcp-elicit), to connect your Demo CI service "
        "(demo only) account.",
        "permissions: builds:read",
        "[Continue] -> 303",
        "/authorize -> 200 'Demo CI service' [DEMO ONLY]",
        # The provider names the application by the name it was registered under.
        "page: The application Demo issue tracker (mcp-elicit) (client ",
        "[Allow] -> 303",
        "/oauth/ci/callback -> 303",
        "/done -> 200 'All set' [DEMO ONLY]",
        "answer: accept",
    ):
        assert step in out, f"{step!r} missing from:\n{out}"
    # Where the page said Continue goes is the CI service, and that is where it went.
    (promised,) = re.findall(r"page: Continue takes you to (127\.0\.0\.1:\d+), where Demo CI service", out)
    assert f"[Continue] -> 303, to http://{promised}/authorize" in out
    assert RESULT.search(out), out
    # Addresses are shown without their query strings: no code, state or token in the transcript.
    for secret_looking in ("code=", "state=", "access_token", "refresh_token", "Bearer "):
        assert secret_looking not in out
    assert len(_ports(out)) == 2  # the tracker (MCP and its pages) and the CI service


def test_a_second_run_starts_afresh_and_nothing_is_left_listening() -> None:
    first, second = _demo(), _demo("--script")  # stdin is not a terminal: scripted either way
    for run in (first, second):
        assert run.returncode == 0, run.stdout + run.stderr
        assert RESULT.search(run.stdout), run.stdout  # issue #101 again, connected again
        assert "That was the scripted walk-through." in run.stdout
    # The child process is gone with its servers: nothing answers on the demo's ports any more.
    for port in _ports(first.stdout) | _ports(second.stdout):
        with socket.socket() as sock:
            assert sock.connect_ex(("127.0.0.1", port)) != 0, f"port {port} is still served"


async def test_the_demo_site_is_started_in_debug_and_the_environment_restored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The demo is a development server: its tools' failures name their exception
    (``MCP_ELICIT_DEBUG=1`` in the environment the site process inherits, and only there)."""
    from mcp_elicit.cli.demo import _debug_for_children

    for before in (None, "0"):
        if before is None:
            monkeypatch.delenv("MCP_ELICIT_DEBUG", raising=False)
        else:
            monkeypatch.setenv("MCP_ELICIT_DEBUG", before)
        async with _debug_for_children():
            made = f"from mcp_elicit import Server; print(Server('x', state_keys=[{KEY!r}]).debug)"
            # started as demo_site() starts the site: inheriting this environment
            child = await asyncio.create_subprocess_exec(
                sys.executable, "-c", made, stdout=asyncio.subprocess.PIPE
            )
            out, _ = await child.communicate()
            assert out == b"True\n"
        assert os.environ.get("MCP_ELICIT_DEBUG") == before


# The whole addresses the demo prints (a URL broken across lines would leave a piece that is not one).
_ADDRESS = re.compile(
    r"http://127\.0\.0\.1:\d+(/mcp|/connect/[A-Za-z0-9_-]{43}|/login|/authorize|/oauth/ci/callback|/done)?"
)
_HOST = re.compile(r"127\.0\.0\.1(:\d+)?")


def test_at_80_columns_the_lines_fit_and_no_word_or_address_is_split() -> None:
    run = _demo("--script", columns=80)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    too_wide = [line for line in lines if cell_len(line) > 80]
    assert not too_wide, "\n".join(too_wide)
    words = [word.strip("()[],.;") for line in lines for word in line.split()]
    # An address starts with its scheme or holds the host ("allow_loopback_http" is no address).
    addresses = [word for word in words if "127.0.0.1" in word or word.startswith("http") or "//" in word]
    assert len(addresses) > 10
    for address in addresses:
        assert _ADDRESS.fullmatch(address) or _HOST.fullmatch(address), address
    for whole in ("ada@example.com", "demo-user", "2026-07-28", "urn:mcp-elicit:development|demo-user"):
        assert any(whole in word for word in words), whole
    # Continuations hang two cells in under their line (the result, for one).
    (start,) = [n for n, line in enumerate(lines) if line.startswith("Result: Filed issue #101")]
    assert lines[start + 1].startswith("  ")
    assert not lines[start + 1].startswith("   ")
    assert "last build #812 passed." in " ".join(lines[start : start + 4])


def test_the_wrapper_breaks_only_at_spaces_and_keeps_every_word() -> None:
    """The narration of a whole-line run, wrapped at 80 columns: every word that fits on a line
    is on one line, whole; put back together, the lines are the text."""
    run = _demo("--script")
    assert run.returncode == 0, run.stdout + run.stderr
    for line in run.stdout.splitlines():
        assert wrap(line, None) == [line]
        pieces = wrap(line, 80)
        assert all(cell_len(piece) <= 80 for piece in pieces), pieces
        lead = len(line) - len(line.lstrip(" "))
        assert all(piece.startswith(" " * (lead + 2)) for piece in pieces[1:]), pieces
        kept = [word for piece in pieces for word in piece.split()]
        for word in line.split():
            if cell_len(word) <= 80 - lead - 2:
                assert word in kept, (word, pieces)
        assert "".join(kept) == "".join(line.split()), pieces
