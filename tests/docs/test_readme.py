"""The README as a new user follows it: its server saved as ``server.py``, its commands run as
written in a folder holding it (the interactive one in a real pseudo-terminal, typing the
answers), and what they print compared with what the README says they print.

Run as a script, it prints the count the issue measures: ``python -m tests.docs.test_readme``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from tests.docs.doc_shell import in_terminal, reader_env, run_shell
from tests.docs.markdown_blocks import REPO, blocks, doc, write_files

README = doc("README.md")
# Words before the first runnable snippet: what to install and what the library is, no more.
MOST_WORDS_BEFORE_THE_SNIPPET = 150


def words_before_the_first_snippet() -> int:
    """Words of the README (prose, headings and commands) above its first ``python`` block."""
    first = blocks(README, "python")[0]
    above = "\n".join(README.read_text().split("\n")[: first.line - 1])
    return len(re.findall(r"\S+", re.sub(r"[#`*\[\]()]|!\[.*?\]\(.*?\)", " ", above)))


def test_the_snippet_comes_after_a_few_words_only() -> None:
    count = words_before_the_first_snippet()
    assert count <= MOST_WORDS_BEFORE_THE_SNIPPET, f"{count} words before the first snippet"


def test_the_readme_runs_what_it_shows() -> None:
    # The blocks this test answers for, in order; test_code_blocks.py checks the py and sh ones.
    assert [b.tag for b in blocks(README)] == ["sh", "python", "bash", "text", "bash", "py"]
    assert [b.file_name for b in blocks(README, "python")] == ["server.py"]


def test_the_call_in_a_terminal(tmp_path: Path) -> None:
    write_files(README, tmp_path)
    call = blocks(README, "bash")[0].code.strip()
    printed = blocks(README, "text")[0].code.strip()
    terminal = in_terminal(call, tmp_path)
    try:
        terminal.expect("Fill in the form")
        terminal.type("\r")
        terminal.expect("[1/3]")
        terminal.type("2027-07-01\r", after=0.2)
        terminal.expect("[2/3]")
        terminal.type("\r", after=0.2)  # nights: the default
        terminal.expect("[3/3]")
        terminal.type("\r", after=0.2)  # cabin: the default
        terminal.expect("Send this answer")
        terminal.type("s")
        terminal.expect(printed)
    finally:
        status = terminal.close()
    assert status == 0
    screen = "\n".join(terminal.screen.history() + terminal.screen.display())
    for shown in ("trips", "When do you fly to Lisbon?", "Leaving", "Nights", "Cabin", printed):
        assert shown in screen, screen


def test_the_call_answered_from_a_file(tmp_path: Path) -> None:
    write_files(README, tmp_path)
    scripted = blocks(README, "bash")[1].code
    done = run_shell(scripted, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == blocks(README, "text")[0].code
    assert "When do you fly to Lisbon?" in done.stderr  # the question is still shown


def test_a_fresh_copy_installed_as_the_readme_says(tmp_path: Path) -> None:
    """The first hour, literally: a copy of the repository as a clone has it, the README's
    install block run as written (a new virtual environment, only the extra it names), then its
    server called from a file of answers with the ``mcp-elicit`` that install put on the PATH."""
    clone = tmp_path / "mcp-elicit"
    shutil.copytree(
        REPO,
        clone,
        ignore=shutil.ignore_patterns(
            ".git", ".venv*", ".cache", "__pycache__", "*.egg-info", ".*_cache", ".hypothesis", "build"
        ),
    )
    write_files(README, clone)
    install = blocks(README, "sh")[0].code
    scripted = blocks(README, "bash")[1].code
    env = reader_env()
    env["PATH"] = env["PATH"].split(":", 1)[1]  # not this test run's environment: a new one
    done = subprocess.run(
        ["bash", "-e", "-c", install + scripted],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # pip, on a cold cache
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.endswith(blocks(README, "text")[0].code), done.stdout[-2000:]
    assert (clone / ".venv" / "bin" / "mcp-elicit").exists()
    assert not (clone / ".venv" / "bin" / "uvicorn").exists()  # [cli] only: no [http]


if __name__ == "__main__":
    print(f"README.md: {words_before_the_first_snippet()} words before the first runnable snippet")
