"""The URL-mode guides' servers, saved under the file name each guide gives and run the way a
reader runs them (``python <file>``), with ``EXAMPLE_BASE_URL`` written as a reader may write
it: with a trailing slash. (tests/docs runs their blocks in-process, past ``__main__``.)"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import httpx
import pytest
from tests.docs.markdown_blocks import blocks, doc
from tests.helpers import free_port
from tests.server_process import running_server


def _saved_as(guide: str) -> str:
    """The file name the guide tells the reader to save its example as."""
    found = re.search(r"[Ss]ave (?:it|the blocks below) as `([\w.]+\.py)`", doc(guide).read_text())
    assert found, f"{guide} does not say what file to save its example as"
    return found.group(1)


@pytest.mark.parametrize(
    ("guide", "file_name"),
    [("ask-for-api-key.md", "api_key_example.py"), ("connect-account.md", "connect_example.py")],
)
def test_the_guides_server_runs_from_its_file(guide: str, file_name: str, tmp_path: Path) -> None:
    assert _saved_as(guide) == file_name
    script = tmp_path / file_name
    script.write_text("\n".join(block.code for block in blocks(doc(guide), "python")))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {"EXAMPLE_BASE_URL": base + "/", "EXAMPLE_CI_URL": "http://127.0.0.1:9"}
    with running_server(
        [sys.executable, str(script)], log=tmp_path / "server.log", port=port, env=env, cwd=tmp_path
    ) as server:
        deadline = time.monotonic() + 10
        while "Streamable HTTP at" not in server.log_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert f"MCP over Streamable HTTP at {base}/mcp\n" in server.log_text()
        # The MCP endpoint is there, behind the kit's identity.
        assert (
            httpx.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).status_code
            == 401
        )
