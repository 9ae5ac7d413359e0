"""A command in a real pseudo-terminal (its stdin, stdout and stderr), 100 x 40, typed at as a
person types: for the terminal answerer as it runs (``test_terminal_pty.py``) and for the docs'
interactive commands (``tests/docs/doc_shell.py``).

What the child draws is replayed on a :class:`._vt.Screen`, which also answers prompt_toolkit's
cursor position requests with the real position, as a terminal does.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from ._vt import Screen

COLUMNS, LINES = 100, 40
# The start menu and the review's Send ignore keys for the consent delay (0.3 s by default), as
# a person takes longer than that to read them: keys typed ahead never answer the form.
READ = 0.6


class Terminal:
    """``argv`` running in a pseudo-terminal, in ``cwd``, with ``env`` (this process's
    environment unless given) and the terminal's ``TERM``, ``COLUMNS`` and ``LINES``."""

    def __init__(
        self, argv: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None
    ) -> None:
        self.master, slave = os.openpty()
        environment = {**(os.environ if env is None else env), "TERM": "xterm"}
        environment.update(COLUMNS=str(COLUMNS), LINES=str(LINES))
        self.proc = subprocess.Popen(
            list(argv), cwd=cwd, stdin=slave, stdout=slave, stderr=slave, env=environment, close_fds=True
        )
        os.close(slave)
        self.seen = ""
        self.screen = Screen(COLUMNS, LINES, respond=self._respond)

    def _respond(self, answer: str) -> None:
        """What the terminal answers the child (its cursor position), as if typed."""
        os.write(self.master, answer.encode())

    def expect(self, text: str, timeout: float = 20) -> None:
        """Read what the child writes until ``text`` has appeared; fail, showing the terminal so
        far, if it does not within ``timeout`` s or the child closes the terminal first."""
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
                self.screen.feed(data)  # answers the cursor position requests too
                self.seen += data

    def type(self, keys: str, after: float = READ) -> None:
        """Type ``keys`` once ``after`` seconds have passed: a person reads the screen first (see
        :data:`READ`); within a form, a shorter pause lets the widget start reading."""
        time.sleep(after)
        os.write(self.master, keys.encode())

    def close(self, within: float = 60.0) -> int:
        """Wait up to ``within`` s for the child to exit (killed if it has not); its exit status."""
        try:
            self.proc.wait(within)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        finally:
            os.close(self.master)
        return self.proc.returncode
