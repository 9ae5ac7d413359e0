"""Run a doc's shell commands as a reader would: in a folder holding the doc's files, with this
virtual environment's ``bin`` first on ``PATH`` (so ``python`` and ``mcp-elicit`` are the ones the
doc means, as in an activated environment), either plainly (:func:`run_shell`) or in a real
pseudo-terminal, typing keys (:class:`Terminal`)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.client.answerers._vt import Screen

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


class Terminal:
    """``command`` running in a pseudo-terminal (stdin, stdout and stderr), 100 x 40."""

    def __init__(self, command: str, cwd: Path) -> None:
        self.master, slave = os.openpty()
        env = reader_env(TERM="xterm", COLUMNS="100", LINES="40")
        self.proc = subprocess.Popen(
            ["bash", "-c", command], cwd=cwd, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
        )
        os.close(slave)
        self.seen = ""
        # Answers prompt_toolkit's cursor position requests, as a terminal does.
        self.screen = Screen(100, 40, respond=lambda answer: os.write(self.master, answer.encode()))

    def expect(self, text: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"never saw {text!r}; the terminal so far:\n{self.seen[-3000:]}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"the terminal closed before {text!r}:\n{self.seen[-3000:]}")
                data = chunk.decode("utf-8", "replace")
                self.screen.feed(data)
                self.seen += data

    def type(self, keys: str, after: float = 0.6) -> None:
        """Type ``keys`` once ``after`` seconds have passed: a person reads the screen first (and
        the start and send menus ignore keys for a moment after they appear)."""
        time.sleep(after)
        os.write(self.master, keys.encode())

    def close(self) -> int:
        try:
            return self.proc.wait(TIMEOUT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)
            os.close(self.master)
