"""``mcp-elicit demo`` without a terminal, as a real subprocess: the scripted walk-through files the
issue, connects the demo CI service through the kit's pages (DEMO ONLY sign-in, confirmation,
the provider's DEMO ONLY consent, ``/done``) and prints the result, twice in a row."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys

import pytest

RESULT = re.compile(
    r"^Result: Filed issue #101: .*CI service connected as demo-user; last build #812 passed\.$", re.M
)


KEY = "demo-debug-tests-secret-0123456789abcdef"


def _demo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_elicit.cli", "demo", *args],
        stdin=subprocess.DEVNULL,  # not a terminal: the scripted walk-through plays
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
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
        "-> 200 'Sign in to continue'",
        "-> 200 'DEMO ONLY sign-in: continue as demo-user'",
        "[Continue as demo-user] -> 303",
        "-> 200 'Connect Demo CI service (demo only)'",
        "page: Signed in as Demo user (demo-user)",
        "permissions: builds:read",
        "[Continue] -> 303",
        "page: DEMO ONLY: a local stand-in for a third-party service.",
        "[Allow] -> 303",
        "/oauth/ci/callback -> 303",
        "/done -> 200 'All set'",
        "answer: accept",
    ):
        assert step in out, f"{step!r} missing from:\n{out}"
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
