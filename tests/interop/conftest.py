"""Fixtures of the interop tests: the ticket server under test, over stdio and Streamable HTTP."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.helpers import free_port
from tests.interop.sdk_support import REPO_ROOT, SERVER_ENV, SERVER_SCRIPT, HttpTransport, MakeTransport
from tests.server_process import running_server


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """Start the ticket server on Streamable HTTP (127.0.0.1 only) and wait until it accepts.

    Yields the endpoint URL and the file that holds the server's stdout and stderr."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("interop") / "http-server.log"
    argv = [sys.executable, str(SERVER_SCRIPT), "--port", str(port)]
    with running_server(argv, log=log_path, port=port, env={**os.environ, **SERVER_ENV}, cwd=REPO_ROOT):
        yield f"http://127.0.0.1:{port}/mcp", log_path


@pytest.fixture(params=["stdio", "http"])
def make_transport(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeTransport]:
    """A factory of fresh SDK transports to the ticket server (stdio spawns one process per client).

    Afterwards, the server's stderr of this test must hold no traceback: nothing the SDK sent may
    have crashed a handler or the transport, even where the client saw a well-formed answer."""
    if request.param == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=[str(SERVER_SCRIPT), "--stdio"], env=SERVER_ENV, cwd=REPO_ROOT
        )
        log_path = tmp_path / "stdio-server.log"
        with log_path.open("w") as errlog:
            yield lambda: stdio_client(params, errlog=errlog)
        start = 0
    else:
        url, log_path = request.getfixturevalue("http_server")
        start = log_path.stat().st_size
        yield lambda: HttpTransport(url)
    with log_path.open("rb") as log:
        log.seek(start)
        server_output = log.read().decode(errors="replace")
    assert "Traceback" not in server_output, server_output
