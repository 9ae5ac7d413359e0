"""What ``mcp-elicit call`` and ``tools`` show of a stdio server's stderr.

A server that fails tells why on its stderr (a traceback, an import error), and only there. The
CLI captures it (the transport keeps its last 64 KiB) and shows:

* under an error, its **tail**: the last :data:`TAIL_LINES` lines, at most :data:`TAIL_CHARS`
  characters in all, after the server has exited (so that what it wrote last is there);
* with ``--verbose``, **every line as it comes**, each prefixed with :data:`LIVE_PREFIX`.

Every line is cleaned first (:func:`~mcp_elicit.client.text.clean`): the server's bytes are
not UTF-8 for sure, and escape sequences or control characters must not reach the terminal.
The splitting into lines is plain code (:class:`Lines`), bounded however long a line is.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from mcp_elicit.client.text import ELLIPSIS, clean

if TYPE_CHECKING:
    from mcp_elicit.client.stdio import StdioTransport

TAIL_LINES = 40
TAIL_CHARS = 8 * 1024
LIVE_PREFIX = "[server] "
LIVE_LINE_BYTES = 4096  # a longer line is shown in pieces of this size: what is held stays bounded


class Lines:
    """Bytes in, whole lines out (without their line ending). A line longer than ``limit``
    bytes comes out in pieces of ``limit`` bytes, so at most that much is ever held."""

    def __init__(self, limit: int = LIVE_LINE_BYTES) -> None:
        self._limit = limit
        self._partial = bytearray()

    def feed(self, chunk: bytes) -> list[bytes]:
        buffer = self._partial + chunk
        out: list[bytes] = []
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            out.extend(self._pieces(bytes(buffer[start:end])))
            start = end + 1
        rest = bytes(buffer[start:])
        while len(rest) > self._limit:
            out.append(rest[: self._limit])
            rest = rest[self._limit :]
        self._partial = bytearray(rest)
        return out

    def _pieces(self, line: bytes) -> list[bytes]:
        if len(line) <= self._limit:
            return [line]
        return [line[i : i + self._limit] for i in range(0, len(line), self._limit)]

    def end(self) -> list[bytes]:
        """What is left after the last line ending (the stream has ended)."""
        rest, self._partial = bytes(self._partial), bytearray()
        return [rest] if rest else []


def shown(line: bytes | str) -> str:
    """One line of the server's stderr as it may be printed: decoded, cleaned, on one line."""
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    return clean(text.rstrip("\r"), single_line=True).rstrip()


def tail(captured: str, *, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> tuple[list[str], bool]:
    """The last ``lines`` lines of ``captured`` (from at most its last ``chars`` characters),
    cleaned; and whether anything before them was left out."""
    text = captured.rstrip()
    cut = len(text) > chars
    if cut:
        text = text[-chars:]
    found = text.split("\n")
    if len(found) > lines:
        found = found[-lines:]
        cut = True
    elif cut:
        found[0] = ELLIPSIS + found[0]  # the first line starts before the cut
    kept = [shown(line) for line in found]
    while kept and not kept[0]:
        kept.pop(0)
    return kept, cut


class ServerStderr:
    """A stdio server's stderr for one CLI run: the transport that captures it, the live lines
    with ``verbose``, and the tail under an error."""

    def __init__(self, *, verbose: bool = False, write: Callable[[str], None] | None = None) -> None:
        self.verbose = verbose
        self._write = write or _to_stderr
        self._lines = Lines()
        self._transport: StdioTransport | None = None

    def transport(self, argv: Sequence[str], display: str) -> StdioTransport:
        """The transport for the server ``argv``, capturing its stderr for this object."""
        from mcp_elicit.client.stdio import StdioTransport

        self._transport = StdioTransport(
            argv, display=display, stderr="capture", on_stderr=self._live if self.verbose else None
        )
        return self._transport

    @property
    def captured(self) -> str:
        """What the server wrote to stderr, as far as the transport keeps it."""
        return self._transport.stderr_text if self._transport is not None else ""

    def _live(self, chunk: bytes) -> None:
        for line in self._lines.feed(chunk):
            self._write(f"{LIVE_PREFIX}{shown(line)}")

    def finish(self) -> None:
        """The run is over: show the last line if it had no line ending (``verbose``)."""
        for line in self._lines.end():
            self._write(f"{LIVE_PREFIX}{shown(line)}")

    def show_tail(self) -> None:
        """Under an error: the end of the server's stderr (nothing when it wrote nothing, or
        with ``verbose``, which has shown it all already)."""
        if self.verbose:
            return
        lines, cut = tail(self.captured)
        if not lines:
            return
        said = f"its last {len(lines)} lines" if cut else "all of it"
        self._write(f"the server's stderr ({said}):")
        for line in lines:
            self._write(f"  {line}")


def _to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
