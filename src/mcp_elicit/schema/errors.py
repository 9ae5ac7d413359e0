"""Errors raised by :mod:`mcp_elicit.schema`.

Every error subclasses :class:`SchemaError`, so a caller that only wants "the form is
wrong" can catch one class. Each has a ``str()`` meant for a person reading a log or a
traceback, and structured attributes for code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from .text import show_pointer

if TYPE_CHECKING:
    from .lint import SecretFinding

__all__ = [
    "AnswerInvalid",
    "SchemaBuildError",
    "SchemaError",
    "SchemaProblem",
    "SchemaSubsetError",
    "SecretFieldError",
]

# How many items a ``str()`` lists before it says "and N more": logs stay readable even
# when a hostile schema or answer produces hundreds of problems.
_SHOWN = 10


class SchemaError(Exception):
    """Base class of every error of this package."""


class SchemaProblem(NamedTuple):
    """One place where a schema leaves the elicitation subset.

    ``pointer`` is a JSON pointer (RFC 6901) into the schema; ``""`` is the whole schema.

    >>> str(SchemaProblem("/properties/age/minimum", "must be a number"))
    '/properties/age/minimum: must be a number'
    """

    pointer: str
    reason: str

    def __str__(self) -> str:
        # The pointer holds names from the schema, unescaped (a client reads schemas from any
        # server): shown escaped and cut short. The reasons already quote what they show.
        return f"{show_pointer(self.pointer) if self.pointer else '(schema)'}: {self.reason}"


class SchemaBuildError(SchemaError):
    """A Python type cannot be expressed in the elicitation schema subset.

    ``field`` is the form field at fault (``""`` when the whole source is at fault).

    >>> str(SchemaBuildError("address", "nested models are outside the subset"))
    "field 'address': nested models are outside the subset"
    """

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(field, reason)

    def __str__(self) -> str:
        if not self.field:
            return f"form: {self.reason}"
        return f"field {self.field!r}: {self.reason}"


class SecretFieldError(SchemaBuildError):
    """The form asks for a secret, which MCP forbids in form mode.

    ``fields`` lists the offending field names; ``findings`` says what matched where.
    """

    def __init__(self, findings: Sequence[SecretFinding]) -> None:
        self.findings = list(findings)
        self.fields: list[str] = []
        for finding in self.findings:
            if finding.field not in self.fields:
                self.fields.append(finding.field)
        shown = "; ".join(str(f) for f in self.findings[:_SHOWN])
        if len(self.findings) > _SHOWN:
            shown += f"; and {len(self.findings) - _SHOWN} more"
        reason = (
            f"the form asks for secrets ({shown}). MCP forbids collecting passwords, API "
            "keys, tokens or payment credentials in form mode: ask for them in URL mode "
            "instead, or, if a field is not a secret, mark it with "
            'Annotated[..., NotSecret("why")] (allow_secrets=[...] for dict schemas)'
        )
        super().__init__(", ".join(self.fields), reason)

    def __str__(self) -> str:
        return self.reason


class SchemaSubsetError(SchemaError):
    """A hand-written schema leaves the elicitation subset; ``problems`` says where."""

    def __init__(self, problems: Iterable[SchemaProblem]) -> None:
        self.problems = list(problems)
        super().__init__(self.problems)

    def __str__(self) -> str:
        shown = "; ".join(str(p) for p in self.problems[:_SHOWN])
        if len(self.problems) > _SHOWN:
            shown += f"; and {len(self.problems) - _SHOWN} more"
        return f"requestedSchema is outside the elicitation schema subset: {shown}"


class AnswerInvalid(SchemaError):
    """An answer does not match its form.

    ``errors`` maps a field name to a message a person can act on; the key ``""`` is
    about the answer as a whole.

    >>> str(AnswerInvalid({"age": "must be at least 18"}))
    'invalid answer: age: must be at least 18'
    """

    def __init__(self, errors: Mapping[str, str]) -> None:
        self.errors = dict(errors)
        super().__init__(self.errors)

    def __str__(self) -> str:
        items = list(self.errors.items())
        shown = "; ".join(f"{k}: {v}" if k else v for k, v in items[:_SHOWN])
        if len(items) > _SHOWN:
            shown += f"; and {len(items) - _SHOWN} more"
        return f"invalid answer: {shown}"
