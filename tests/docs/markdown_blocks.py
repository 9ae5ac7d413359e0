"""Run a guide's ``python`` blocks, in order, in one fresh module (``py`` and ``text`` blocks are
illustrations and are not run)."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def run_python_blocks(guide: str) -> types.ModuleType:
    path = DOCS / guide
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.DOTALL)
    assert blocks, f"{guide} has no runnable blocks"
    module = types.ModuleType(guide.replace("-", "_").removesuffix(".md"))
    sys.modules[module.__name__] = module  # dataclasses and pydantic look the module up
    try:
        for block in blocks:
            exec(compile(block, str(path), "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module
