"""Every code block of README.md, CONTRIBUTING.md and docs/*.md is accounted for: its tag is one
of markdown_blocks.TAGS, the blocks shown but not run still compile (``py``), parse (``sh``,
``json``), and each doc with blocks to run has a test that runs them."""

from __future__ import annotations

import ast
import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.docs.markdown_blocks import REPO, TAGS, Block, blocks, markdown_files

HERE = REPO / "tests" / "docs"
RUN = ("python", "bash", "console")
# The test that runs each doc's python, bash and console blocks (all of them: each checks it).
RUNNERS = {
    "README.md": "test_readme.py",
    "docs/server-guide.md": "test_guide.py",
    "docs/cli.md": "test_cli_doc.py",
    "docs/client.md": "test_client_doc.py",
    "docs/deployment.md": "test_deployment_doc.py",
    "docs/connect-account.md": "test_connect_guides.py",
    "docs/ask-for-api-key.md": "test_connect_guides.py",
}


def every_block() -> list[Block]:
    return [block for path in markdown_files() for block in blocks(path)]


def shown(tag: str) -> list[Block]:
    return [block for block in every_block() if block.tag == tag]


def test_the_docs_are_all_there() -> None:
    assert {p.name for p in markdown_files()} >= {"README.md", "CONTRIBUTING.md", "server-guide.md"}
    assert all(path.is_file() for path in markdown_files())


def test_every_block_says_what_it_is() -> None:
    untagged = [f"{b.where}: ```{b.tag}" for b in every_block() if b.tag not in TAGS]
    assert not untagged, f"tag these blocks with one of {TAGS}: {untagged}"


def test_every_doc_with_blocks_to_run_has_its_test() -> None:
    for path in markdown_files():
        name = str(path.relative_to(REPO))
        if any(block.tag in RUN for block in blocks(path)):
            assert name in RUNNERS, f"{name} has blocks to run: add its test to RUNNERS"
            runner = HERE / RUNNERS[name]
            assert runner.is_file(), runner
            assert path.name in runner.read_text(), f"{runner.name} does not read {path.name}"


@pytest.mark.parametrize("block", shown("py"), ids=lambda b: b.where)
def test_python_shown_but_not_run_compiles(block: Block) -> None:
    compile(block.code, block.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


@pytest.mark.parametrize("block", shown("sh"), ids=lambda b: b.where)
def test_shell_shown_but_not_run_parses(block: Block) -> None:
    checked = subprocess.run(["bash", "-n"], input=block.code, capture_output=True, text=True, timeout=10)
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize("block", shown("json"), ids=lambda b: b.where)
def test_json_parses(block: Block) -> None:
    json.loads(block.code)


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of ``path``."""
    prose = re.sub(r"^```.*?^```$", "", path.read_text(), flags=re.DOTALL | re.MULTILINE)
    headings = re.findall(r"^#+ (.+)$", prose, flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def test_every_picture_and_local_link_is_there() -> None:
    for path in markdown_files():
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", path.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            linked = path.parent / target if target else path
            where = f"{path.relative_to(REPO)} links to {target}#{anchor}"
            assert linked.exists(), where
            if anchor:
                assert anchor in anchors(linked), where
