"""A stdio server that exits because its Python cannot import a module, said in one sentence.

The usual cause: ``mcp-elicit call "python3 trip.py"`` outside the virtual environment where
``mcp_elicit`` (or another of the server's packages) is installed, so ``python3`` is the
system's. The server's stderr then ends in a traceback whose last line is
``ModuleNotFoundError: No module named 'mcp_elicit'``; this module finds that line and names
the interpreter (as ``shutil.which`` resolves it), the module, and the fix.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import sys
from collections.abc import Sequence

# The last line of the traceback; a module name is dotted identifiers, nothing else is taken.
_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_MISSING = re.compile(rf"^(?:ModuleNotFoundError|ImportError): No module named '({_NAME})'", re.MULTILINE)
_SHEBANG_BYTES = 256


def missing_module(stderr: str) -> str | None:
    """The module the last import failure on ``stderr`` names, if any."""
    found = _MISSING.findall(stderr)
    return found[-1] if found else None


def interpreter(argv: Sequence[str]) -> str | None:
    """The Python that runs the server ``argv``, as a path: ``python3 ...`` resolved on PATH,
    ``env [VAR=value ...] python3 ...``, or a script whose ``#!`` line names a Python; None
    when it cannot be told (``uv run ...``, a shell script)."""
    if not argv:
        return None
    command = argv[0]
    name = os.path.basename(command)
    if name == "env":
        rest = [arg for arg in argv[1:] if "=" not in arg and not arg.startswith("-")]
        return interpreter(rest)
    found = shutil.which(command)
    if found is None:
        return None
    if name.startswith("python"):
        return found
    return _shebang_python(found)


def _shebang_python(path: str) -> str | None:
    try:
        with open(path, "rb") as script:
            first = script.read(_SHEBANG_BYTES).split(b"\n", 1)[0]
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = words[1:]
    if words and os.path.basename(words[0]).startswith("python"):
        return interpreter(words)
    return None


def explain(argv: Sequence[str], module: str) -> str:
    """One sentence: which interpreter cannot import ``module``, and what to do about it."""
    python = interpreter(argv)
    who = python or f"the Python that {argv[0]!r} starts"
    said = f"the server exited at start-up: {who} cannot import {module!r} (ModuleNotFoundError)"
    top = module.partition(".")[0]
    here = sys.executable
    if python != here and _importable_here(top):
        activate = os.path.join(sys.prefix, "bin", "activate")
        in_venv = sys.prefix != sys.base_prefix
        venv = f"activate its virtual environment (source {activate}) or " if in_venv else ""
        command = shlex.join([here, *argv[1:]]) if python is not None else f"{here} ..."
        return f"{said}, which {here} can: {venv}run the server with that Python: {command}"
    target = python or "that Python"
    return (
        f"{said}: install the package that provides it for {target} ({target} -m pip install {top}, "
        "if the package has the module's name) or activate the virtual environment where it is installed"
    )


def _importable_here(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
