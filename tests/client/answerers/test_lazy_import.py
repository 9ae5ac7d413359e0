"""Importing the answerers must not import prompt_toolkit or rich (CLI start-up budget)."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
import mcp_elicit.client.answerers as a
from mcp_elicit.client.answerers import AutoDecline, ScriptedAnswerer, TerminalAnswerer
from mcp_elicit.client.text import clean
heavy = {'prompt_toolkit', 'rich', 'ada_url', 'publicsuffixlist'}
print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))
"""


def test_import_is_light() -> None:
    result = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]", result.stdout
