"""Run a doc's shell commands as a reader would: in a folder holding the doc's files, with this
virtual environment's ``bin`` first on ``PATH`` (so ``python`` and ``mcp-elicit`` are the ones the
doc means, as in an activated environment), either plainly (:func:`run_shell`) or in a real
pseudo-terminal, typing keys (:func:`in_terminal`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.client.answerers._pty import Terminal

VENV_BIN = Path(sys.executable).parent
TIMEOUT = 60.0


def reader_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_ELICIT_")}
    env.update(PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}", **extra)
    env.pop("VIRTUAL_ENV", None)
    return env


def run_shell(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``script`` under ``bash -e``; stdout and stderr kept apart."""
    return subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=cwd,
        env=reader_env(**env),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )


def run_console(command: str, cwd: Path, **env: str) -> tuple[int, str]:
    """``command`` as typed at a prompt; its exit status and its output, stdout and stderr in
    the order they were written."""
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=reader_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stdout


def in_terminal(command: str, cwd: Path) -> Terminal:
    """``command`` as typed at a prompt, in a real pseudo-terminal, in the reader's environment."""
    return Terminal(["bash", "-c", command], cwd=cwd, env=reader_env())
