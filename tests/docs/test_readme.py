"""The README's first example is a whole server: run as a real stdio process, a client deletes a
ticket through it, accepting its question."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

from mcp_elicit.client import Client
from mcp_elicit.client.answerers import ScriptedAnswerer

README = Path(__file__).resolve().parents[2] / "README.md"


async def test_the_first_example_runs_as_a_server(tmp_path: Path) -> None:
    first = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)[0]
    server = tmp_path / "readme_server.py"
    server.write_text(first)
    answerer = ScriptedAnswerer([{"action": "accept", "content": {"ok": True}}])
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(server))}"
    async with Client.connect(command, answerer=answerer, stderr="capture") as client:
        result = await client.call_tool("delete_ticket", {"ticket_id": "T-1"})
    assert (result.text, result.is_error) == ("Deleted T-1.", False)
