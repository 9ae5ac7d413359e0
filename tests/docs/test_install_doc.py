"""docs/install.md says what the install tests prove: its messages are the ones
tests/install/test_core_install.py gets from a core-only install (a real venv, not here), its
commands name only extras pyproject.toml declares, and its table lists every one of them."""

from __future__ import annotations

import re
import tomllib

from tests.docs.markdown_blocks import REPO, blocks
from tests.install.test_core_install import WHAT

DOC = REPO / "docs" / "install.md"


def declared_extras() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return set(project["optional-dependencies"])


def test_the_messages_shown_are_those_a_core_install_gives() -> None:
    proven = {f"{what}: pip install 'mcp-elicit[{extra}]'" for extra, what in WHAT.items()}
    messages, session = blocks(DOC, "text")
    for line in messages.code.splitlines():
        assert line in proven, line
    command, said = session.code.splitlines()
    assert command == '$ mcp-elicit call "python examples/tickets.py" create_ticket'
    # the exact line test_a_subcommand_without_its_extra_says_which_in_one_line gets from `call`
    assert said == (
        "mcp-elicit: the call command needs the [cli] extra (httpx is not installed): "
        "pip install 'mcp-elicit[cli]'"
    )


def test_the_commands_and_the_table_name_the_declared_extras() -> None:
    declared = declared_extras()
    commands = "".join(block.code for block in blocks(DOC, "sh"))
    for extras in re.findall(r"\[([a-z,]+)\]", commands):
        assert set(extras.split(",")) <= declared, extras
    table = re.findall(r"^\| `\[([a-z]+)\]` \|", DOC.read_text(), flags=re.MULTILINE)
    assert sorted(table) == sorted(declared)
