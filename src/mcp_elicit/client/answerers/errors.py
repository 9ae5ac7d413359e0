"""Errors raised by the answerers.

They all derive from :class:`AnswererError`, itself a
:class:`~mcp_elicit.client.errors.LocalError`: they are failures on this side, never
something the server sent. An answerer raises instead of guessing an answer; the engine
sends nothing for that question.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

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
# A key the server engine made up for a question that was asked without one.
_GENERATED = re.compile(r"(?:elicit|url)-[0-9a-f]{12}(?:-[0-9]+)?")


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
    """The script has no answer for a question the server asked (``key``).

    ``asked`` lists the questions of that round as ``(key, what)`` pairs (``what``: the kind
    of question and its message, cleaned and cut), so that a script keyed by names the server
    never used (its keys are often generated, such as ``elicit-0939815311cd``) can be fixed.
    """

    def __init__(
        self, source: str, key: str, detail: str = "", *, asked: Sequence[tuple[str, str]] = ()
    ) -> None:
        self.key = key
        self.asked = list(asked)
        message = f"no scripted answer for input request {key!r}"
        if detail:
            message += f" ({detail})"
        if self.asked:
            shown = ", ".join(f"{json.dumps(k)} ({what})" for k, what in self.asked[:_SHOWN])
            if len(self.asked) > _SHOWN:
                shown += f", and {len(self.asked) - _SHOWN} more"
            message += f"; the round asked for {shown}"
            made = next((k for k, _ in self.asked if _GENERATED.fullmatch(k)), None)
            if made is not None:
                message += (
                    f"; a key like {made} is made from the question itself and changes when its "
                    'text does: a server sets a stable one with ctx.elicit(..., key="...")'
                )
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
