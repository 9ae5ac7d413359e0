"""Exceptions a handler author meets."""

from __future__ import annotations


class ToolError(Exception):
    """Raise from a tool to end the call with ``isError: true`` and this message.

    The message is shown to the client (and usually the model), so keep secrets out of it.
    Unexpected exceptions are not shown: the client gets a generic message and the server log
    gets the traceback.
    """


class HandlerDefect(Exception):
    """A handler does something the engine cannot serve (asks a question inside ``ctx.once``,
    hands back a state that is not a string...). The client gets -32603 with this message and
    the server log an error: it is the handler's code that needs fixing, not the request."""


class ReplayMismatch(HandlerDefect):
    """A handler asked different questions on replay than in the round the client answered.

    Handlers are replayed from the top on every round; they must ask the same questions, with the
    same content, each time. Put non-deterministic values (timestamps, random ids, fresh database
    reads) in ``ctx.once(...)`` so that they are recorded and replayed.
    """


class TooManyInvalidAnswers(ToolError):
    """The client kept answering a form with content that fails validation."""
