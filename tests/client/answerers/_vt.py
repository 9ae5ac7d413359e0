"""A small VT100 screen: what a person would see, rebuilt from what the answerer writes.

It understands what rich and prompt_toolkit send to a terminal: text (wide characters take two
cells, combining marks none), CR, LF (as a tty with ``onlcr`` shows it: back to the first
column), backspace, tab, cursor moves (``CSI A B C D G H``), erases (``CSI J K``), autowrap on
and off (``CSI ?7 h/l``), cursor save and restore, and the cursor position report
(``CSI 6n``, answered through ``respond``). Colours and other modes are ignored. A line that
reaches the last column and goes on is folded as a terminal folds it, and counted in
:attr:`Screen.folds`: text that was too wide for the screen.

Lines that scroll off the top are kept (:meth:`Screen.history`), so a whole session can be read
back as the scrollback shows it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from prompt_toolkit.utils import get_cwidth

_CSI = re.compile(r"\x1b\[([0-9;?<=>]*)([ -/]*)([@-~])")
_OSC = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


class Screen:
    def __init__(self, columns: int, rows: int, respond: Callable[[str], None] | None = None) -> None:
        self.columns = columns
        self.rows = rows
        self.respond = respond
        self.grid = [self._blank() for _ in range(rows)]
        self.scrolled: list[list[str]] = []
        self.x = self.y = 0
        self.pending_wrap = False
        self.autowrap = True
        self.saved = (0, 0)
        self.folds = 0
        self._rest = ""  # an escape sequence cut between two writes

    def _blank(self) -> list[str]:
        return [" "] * self.columns

    # -- input ----------------------------------------------------------------------------------
    def feed(self, data: str) -> None:
        data = self._rest + data
        self._rest = ""
        i = 0
        while i < len(data):
            ch = data[i]
            if ch == "\x1b":
                if i + 1 >= len(data):
                    self._rest = data[i:]
                    return
                nxt = data[i + 1]
                if nxt == "[":
                    m = _CSI.match(data, i)
                    if m is None:
                        self._rest = data[i:]
                        return
                    self._csi(m.group(1), m.group(2), m.group(3))
                    i = m.end()
                    continue
                if nxt == "]":
                    m = _OSC.match(data, i)
                    if m is None:
                        self._rest = data[i:]
                        return
                    i = m.end()
                    continue
                if nxt == "7":
                    self.saved = (self.x, self.y)
                elif nxt == "8":
                    self.x, self.y = self.saved
                i += 2  # any other two-character escape (keypad modes...) changes nothing shown
                continue
            if ch == "\r":
                self.x, self.pending_wrap = 0, False
            elif ch == "\n":
                self.x, self.pending_wrap = 0, False
                self._linefeed()
            elif ch == "\x08":
                self.x, self.pending_wrap = max(0, self.x - 1), False
            elif ch == "\t":
                self.x = min(self.columns - 1, (self.x // 8 + 1) * 8)
            elif ch == "\x07" or ord(ch) < 0x20:
                pass
            else:
                self._put(ch)
            i += 1

    def _linefeed(self) -> None:
        if self.y == self.rows - 1:
            self.scrolled.append(self.grid.pop(0))
            self.grid.append(self._blank())
        else:
            self.y += 1

    def _put(self, ch: str) -> None:
        width = get_cwidth(ch)
        if width == 0:
            x = self.x - 1 if not self.pending_wrap else self.x
            if x >= 0:
                self.grid[self.y][x] += ch
            return
        if self.pending_wrap and self.autowrap:
            self.folds += 1
            self.x, self.pending_wrap = 0, False
            self._linefeed()
        if self.x + width > self.columns:
            if not self.autowrap:
                self.x = self.columns - width
            else:
                self.folds += 1
                self.x = 0
                self._linefeed()
        row = self.grid[self.y]
        row[self.x] = ch
        if width == 2:
            row[self.x + 1] = ""
        self.x += width
        if self.x >= self.columns:
            self.x, self.pending_wrap = self.columns - 1, True

    def _csi(self, params: str, _middle: str, final: str) -> None:
        private = params.startswith("?")
        numbers = [int(p) if p.isdigit() else 0 for p in params.lstrip("?<=>").split(";")] if params else []
        n = numbers[0] if numbers and numbers[0] else 1
        self.pending_wrap = self.pending_wrap and final == "m"
        if private:
            if final in "hl" and 7 in numbers:
                self.autowrap = final == "h"
            return
        if final == "A":
            self.y = max(0, self.y - n)
        elif final == "B":
            self.y = min(self.rows - 1, self.y + n)
        elif final == "C":
            self.x = min(self.columns - 1, self.x + n)
        elif final == "D":
            self.x = max(0, self.x - n)
        elif final == "G":
            self.x = min(self.columns - 1, n - 1)
        elif final in "Hf":
            row = numbers[0] if numbers and numbers[0] else 1
            col = numbers[1] if len(numbers) > 1 and numbers[1] else 1
            self.y, self.x = min(self.rows, row) - 1, min(self.columns, col) - 1
        elif final == "J":
            mode = numbers[0] if numbers else 0
            if mode == 0:
                self.grid[self.y][self.x :] = [" "] * (self.columns - self.x)
                for y in range(self.y + 1, self.rows):
                    self.grid[y] = self._blank()
            elif mode == 1:
                for y in range(self.y):
                    self.grid[y] = self._blank()
                self.grid[self.y][: self.x + 1] = [" "] * (self.x + 1)
            else:
                self.grid = [self._blank() for _ in range(self.rows)]
        elif final == "K":
            mode = numbers[0] if numbers else 0
            row = self.grid[self.y]
            if mode == 0:
                row[self.x :] = [" "] * (self.columns - self.x)
            elif mode == 1:
                row[: self.x + 1] = [" "] * (self.x + 1)
            else:
                self.grid[self.y] = self._blank()
        elif final == "n" and numbers[:1] == [6] and self.respond is not None:
            self.respond(f"\x1b[{self.y + 1};{self.x + 1}R")
        elif final == "s":
            self.saved = (self.x, self.y)
        elif final == "u":
            self.x, self.y = self.saved

    # -- output ---------------------------------------------------------------------------------
    @staticmethod
    def _text(row: list[str]) -> str:
        return "".join(row).rstrip()

    def display(self) -> list[str]:
        """The screen now, row by row (trailing blank rows left out)."""
        lines = [self._text(row) for row in self.grid]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def history(self) -> list[str]:
        """Everything that scrolled off the top, then the screen."""
        return [self._text(row) for row in self.scrolled] + self.display()
