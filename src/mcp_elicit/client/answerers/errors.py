"""Errors raised by the answerers.

They all derive from :class:`AnswererError`, itself a
:class:`~mcp_elicit.client.errors.LocalError`: they are failures on this side, never
something the server sent. An answerer raises instead of guessing an answer; the engine
sends nothing for that question.
"""

from __future__ import annotations

from collections.abc import Mapping

from mcp_elicit.client.errors import LocalError

__all__ = [
    "AnswererError",
    "ScriptError",
    "ScriptExhausted",
    "ScriptFileError",
    "ScriptedAnswerInvalid",
    "ScriptedAnswerMissing",
    "TerminalUnavailable",
]

_SHOWN = 10


class AnswererError(LocalError):
    """Base class of the answerers' errors."""


class TerminalUnavailable(AnswererError):
    """A :class:`~mcp_elicit.client.answerers.TerminalAnswerer` needs a terminal and has none.

    Raised when one is created without an explicit ``input`` while standard input (or
    the output it would draw on) is not a TTY. Use a ``ScriptedAnswerer`` or
    ``AutoDecline`` for headless runs.
    """


class ScriptError(AnswererError):
    """A scripted answer cannot be used. ``source`` names the script (a file path or
    ``"<script>"``)."""

    def __init__(self, source: str, message: str) -> None:
        self.source = source
        super().__init__(f"{source}: {message}")


class ScriptFileError(ScriptError):
    """A script (a file, or the dict/list given to the constructor) is malformed: not
    readable, not JSON, or not the expected shape. ``problem`` says what and where."""

    def __init__(self, source: str, problem: str) -> None:
        self.problem = problem
        super().__init__(source, problem)


class ScriptedAnswerMissing(ScriptError):
    """The script has no answer for a question the server asked (``key``)."""

    def __init__(self, source: str, key: str, detail: str = "") -> None:
        self.key = key
        message = f"no scripted answer for input request {key!r}"
        if detail:
            message += f" ({detail})"
        super().__init__(source, message)


class ScriptExhausted(ScriptedAnswerMissing):
    """A list script (or a per-key list) has no answers left."""


class ScriptedAnswerInvalid(ScriptError):
    """A scripted answer does not fit the question.

    ``errors`` maps a field name to a message (``""`` for the answer as a whole), as in
    :class:`mcp_elicit.schema.AnswerInvalid`.
    """

    def __init__(self, source: str, key: str, errors: Mapping[str, str], *, where: str = "") -> None:
        self.key = key
        self.errors = dict(errors)
        self.where = where
        items = list(self.errors.items())
        shown = "; ".join(f"{k}: {v}" if k else v for k, v in items[:_SHOWN])
        if len(items) > _SHOWN:
            shown += f"; and {len(items) - _SHOWN} more"
        at = f" (at {where} in the script)" if where else ""
        super().__init__(source, f"the scripted answer for input request {key!r}{at} is invalid: {shown}")
