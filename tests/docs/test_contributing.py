"""CONTRIBUTING.md names what is there: the two commands, the scripts and benchmarks it tells
to run, the environment variable it offers, and every folder of its layout (and every package
of src/mcp_elicit in it)."""

from __future__ import annotations

import re

from tests.docs.markdown_blocks import REPO, blocks, doc

CONTRIBUTING = doc("CONTRIBUTING.md")


def test_the_two_commands_and_the_scripts_it_names_exist() -> None:
    text = CONTRIBUTING.read_text()
    assert "bash scripts/main.sh" in text
    assert "bash scripts/test.sh" in text
    for path in set(re.findall(r"\b((?:scripts|bench)/[\w/]+\.(?:sh|py))\b", text)):
        assert (REPO / path).is_file(), path
    assert "scripts/test.sh" in (REPO / ".ci" / "run").read_text()  # what CI runs


def test_the_variable_it_offers_is_read() -> None:
    assert "MCP_ELICIT_RELIABILITY_NO_PG_RESTART=1" in CONTRIBUTING.read_text()
    assert (
        "MCP_ELICIT_RELIABILITY_NO_PG_RESTART" in (REPO / "tests/reliability/test_quick_run.py").read_text()
    )


def test_the_layout_is_the_tree() -> None:
    (layout,) = [b for b in blocks(CONTRIBUTING, "text") if b.code.startswith("src/mcp_elicit/")]
    named = set(re.findall(r"^\s*(\w+)/\s", layout.code, flags=re.MULTILINE))
    packages = {p.name for p in (REPO / "src" / "mcp_elicit").iterdir() if (p / "__init__.py").is_file()}
    assert packages <= named, packages - named
    for top in ("examples", "bench", "docs", "scripts"):
        assert top in named
        assert (REPO / top).is_dir()
