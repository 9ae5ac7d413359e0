"""What the CLI tests share: the test server, running ``mcp-elicit`` as a real process, and the
one clear error line every refusal must be."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers import free_port
from tests.server_process import PY, running_server

SERVER = Path(__file__).with_name("cli_server.py")
STDIO_TARGET = f"{sys.executable} {SERVER} --stdio"


def cli(
    *args: str,
    timeout: float = 60,
    close: int | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``mcp-elicit ARGS`` with no input; ``close``: a standard descriptor the child closes
    before it starts (its output is then not captured); ``env``: variables over this one's;
    ``cwd``: the folder it runs in."""
    return subprocess.run(
        [sys.executable, "-m", "mcp_elicit.cli", *args],
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
        capture_output=close not in (1, 2),
        stdout=subprocess.PIPE if close == 2 else None,
        stderr=subprocess.PIPE if close == 1 else None,
        stdin=subprocess.DEVNULL if close != 0 else None,
        text=True,
        timeout=timeout,
        preexec_fn=None if close is None else lambda: os.close(close),
    )


def one_clear_line(done: subprocess.CompletedProcess[str]) -> str:
    """The single ``mcp-elicit: ...`` line on stderr, with no traceback."""
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("mcp-elicit: ")
    return lines[0]


@contextmanager
def http_server(log: Path, *extra: str) -> Iterator[str]:
    """The test server over HTTP on 127.0.0.1 (``extra``: its other arguments; its output in
    ``log``): its URL."""
    port = free_port()
    with running_server([PY, str(SERVER), "--port", str(port), *extra], log=log, port=port) as server:
        yield server.url
