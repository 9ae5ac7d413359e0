"""Answerers: what puts an elicitation question in front of a person, or a script.

* :class:`TerminalAnswerer` -- interactive, in the terminal (prompt_toolkit + rich).
* :class:`ScriptedAnswerer` -- answers given in advance (a dict, a list or a JSON file),
  for headless runs and CI; never waits, raises on a missing or invalid answer.
* :class:`AutoDecline` -- declines everything.

Each implements :class:`mcp_elicit.client.questions.Answerer`. Names load on first use,
so importing this package imports neither prompt_toolkit nor rich.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .auto import AutoDecline
    from .errors import (
        AnswererError,
        ScriptedAnswerInvalid,
        ScriptedAnswerMissing,
        ScriptError,
        ScriptExhausted,
        ScriptFileError,
        TerminalUnavailable,
    )
    from .scripted import ScriptedAnswerer
    from .terminal import TerminalAnswerer

_HOME = {
    "AutoDecline": "auto",
    "AnswererError": "errors",
    "ScriptError": "errors",
    "ScriptExhausted": "errors",
    "ScriptFileError": "errors",
    "ScriptedAnswerInvalid": "errors",
    "ScriptedAnswerMissing": "errors",
    "TerminalUnavailable": "errors",
    "ScriptedAnswerer": "scripted",
    "TerminalAnswerer": "terminal",
}

__all__ = [
    "AnswererError",
    "AutoDecline",
    "ScriptError",
    "ScriptExhausted",
    "ScriptFileError",
    "ScriptedAnswerInvalid",
    "ScriptedAnswerMissing",
    "ScriptedAnswerer",
    "TerminalAnswerer",
    "TerminalUnavailable",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
