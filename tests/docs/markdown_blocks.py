"""The code blocks of the project's Markdown (README.md, CONTRIBUTING.md, docs/*.md), and how the
doc tests run them.

A block's tag says what the tests do with it (tests/docs/test_code_blocks.py checks that every
block has one of these, and that each doc with blocks to run has a test that runs them):

    python   run: a doc's python blocks run in order, in one fresh module (run_python_blocks);
             one whose first line is ``# NAME.py`` is also a file the doc's commands use
    bash     run: commands that work offline, run by the doc's test
    console  run: ``$ command`` lines and what they print, compared by the doc's test
    text     what a program prints, compared by the doc's test where it can be; or a diagram
    json     data, parsed (and used or compared by the doc's test where it can be)
    py       Python shown, not run (a fragment, settings that need real services): compiled
    sh       shell shown, not run (it needs the network, root, or minutes): parsed by ``bash -n``

Output compared with :func:`matches`: a line ``...`` stands for any number of lines, and ``...``
inside a line for any text.
"""

from __future__ import annotations

import linecache
import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
TAGS = ("python", "bash", "console", "text", "json", "py", "sh")


def markdown_files() -> list[Path]:
    """Every Markdown file whose blocks the tests answer for."""
    return [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted(DOCS.glob("*.md"))]


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    tag: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"

    @property
    def file_name(self) -> str | None:
        """``NAME.py`` when a python block starts with the comment ``# NAME.py``."""
        first = self.code.split("\n", 1)[0]
        found = re.fullmatch(r"# (\w+\.py)", first) if self.tag == "python" else None
        return found.group(1) if found else None


def doc(name: str) -> Path:
    """``README.md``/``CONTRIBUTING.md`` at the top, anything else in docs/."""
    top = REPO / name
    return top if name in ("README.md", "CONTRIBUTING.md") else DOCS / name


def blocks(path: Path, tag: str | None = None) -> list[Block]:
    """The fenced blocks of ``path`` in order (only those tagged ``tag``, if given)."""
    found: list[Block] = []
    lines = path.read_text().split("\n")
    i = 0
    while i < len(lines):
        opening = re.fullmatch(r"```(\S*)\s*", lines[i])
        if opening is None:
            i += 1
            continue
        end = lines.index("```", i + 1)  # a fence left open is a ValueError: the doc is broken
        found.append(Block(path, i + 1, opening.group(1), "\n".join(lines[i + 1 : end]) + "\n"))
        i = end + 1
    return [b for b in found if tag is None or b.tag == tag]


def write_files(path: Path, folder: Path) -> list[str]:
    """Save the doc's file blocks (``# NAME.py`` first) into ``folder``; their names."""
    names = []
    for block in blocks(path, "python"):
        if block.file_name:
            (folder / block.file_name).write_text(block.code)
            names.append(block.file_name)
    return names


def run_python_blocks(guide: str) -> types.ModuleType:
    """Run the doc's python blocks in order, in one fresh module, as a reader pasting them would."""
    path = doc(guide)
    found = blocks(path, "python")
    assert found, f"{guide} has no runnable blocks"
    # The doc as Python sees it: its python blocks at their own lines, every other line blank, so
    # that tracebacks and what reads a handler's source (app.check()) find the code in the doc.
    lines = [""] * len(path.read_text().split("\n"))
    for block in found:
        code = block.code.split("\n")[:-1]
        lines[block.line : block.line + len(code)] = code
    linecache.cache[str(path)] = (len(lines), None, [line + "\n" for line in lines], str(path))
    module = types.ModuleType(path.stem.replace("-", "_"))
    sys.modules[module.__name__] = module  # dataclasses and pydantic look the module up
    try:
        for block in found:
            exec(compile("\n" * block.line + block.code, str(path), "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module


def _line_pattern(line: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in line.split("...")))


def matches(shown: str, real: str) -> bool:
    """Whether the lines ``shown`` in a doc are a run of consecutive lines of ``real`` output
    (``...`` alone on a line: any number of lines; ``...`` in a line: any text)."""
    want = shown.rstrip("\n").split("\n")
    got = real.rstrip("\n").split("\n")

    def fits(w: int, g: int) -> bool:
        if w == len(want):
            return True
        if want[w] == "...":
            return any(fits(w + 1, k) for k in range(g, len(got) + 1))
        return g < len(got) and _line_pattern(want[w]).fullmatch(got[g]) is not None and fits(w + 1, g + 1)

    return any(fits(0, start) for start in range(len(got)))


def console_commands(block: Block) -> list[tuple[str, str]]:
    """A console block's ``$ command`` lines, each with the output shown under it."""
    pairs: list[tuple[str, str]] = []
    for line in block.code.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            pairs.append((line[2:], ""))
        else:
            assert pairs, f"{block.where}: a console block starts with a $ line"
            command, output = pairs[-1]
            pairs[-1] = (command, output + line + "\n")
    return pairs
