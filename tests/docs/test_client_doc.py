"""docs/client.md as written: its python blocks run, in order, in a folder holding the README's
``server.py``, with ``python`` the virtual environment's (as the reader's activated one)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.docs.doc_shell import VENV_BIN
from tests.docs.markdown_blocks import blocks, doc, run_python_blocks, write_files


def test_the_client_doc_runs_next_to_the_readme_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert [b.tag for b in blocks(doc("client.md"))] == ["python", "py"]
    write_files(doc("README.md"), tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    module = run_python_blocks("client.md")
    assert module.booked == "Booked 3 nights in Lisbon from 01 July 2027, business."
    assert capsys.readouterr().out == "trips asks: When do you fly to Lisbon?\n"
