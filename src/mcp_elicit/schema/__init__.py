"""The MCP elicitation ``requestedSchema`` subset (protocol revision 2026-07-28).

Build a form from Python types, check a hand-written one, validate answers and apply
defaults, turn answers back into Python values, and lint forms for secret fields and
clickable links. Pure: no I/O, standard library only at import time; pydantic and
annotated_types are looked at only when a user's type comes from them.

>>> from dataclasses import dataclass
>>> from typing import Annotated, Literal
>>> from mcp_elicit.schema import Email, Title, form_spec
>>> @dataclass
... class Signup:
...     email: Email
...     age: Annotated[int, Title("Age")]
...     plan: Literal["free", "pro"] = "free"
>>> spec = form_spec(Signup)
>>> spec.parse({"email": "a@b.example", "age": 30})
Signup(email='a@b.example', age=30, plan='free')

Size caps (constants in :mod:`mcp_elicit.schema.limits`), applied before any deep
inspection: at most 200 properties; 1000 choices per enum / ``oneOf`` / ``anyOf``;
property names of at most 256 characters; titles, descriptions, option values, string
defaults and ``$schema`` of at most 8192 characters; ``check_schema`` reports at most
100 problems; ``lint_form`` scans the first 65536 characters of a message.

Strictness beyond the letter of the spec, on purpose: unknown keywords are refused
(including a top-level ``additionalProperties: false``, ``title`` or ``description``);
names and option values may not contain control, bidi or zero-width characters, nor
duplicate each other after NFC normalization; two options may not share a title;
``maxItems`` / ``minItems`` may not exceed the number of options; ``null`` is never a value
(for an optional field it counts as leaving the field out, as typed clients send it; for a
required one it is refused); ``uri`` answers may not use ``javascript:``, ``vbscript:`` or
``data:``, nor a port past 65535 on web schemes; ``date-time`` answers must be instants of the
years 1 to 9999 in UTC too; an ``integer`` field whose bounds leave no whole number an answer may
hold (``minimum: 0.5, maximum: 0.6``) is refused.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .check import check_schema
    from .errors import (
        AnswerInvalid,
        SchemaBuildError,
        SchemaError,
        SchemaProblem,
        SchemaSubsetError,
        SecretFieldError,
    )
    from .lint import FormLint, SecretFinding, lint_form
    from .markers import Choices, Description, Email, Format, NotSecret, Title, Url
    from .problems import FormProblem, form_problems
    from .spec import FormSpec, form_spec
    from .validate import validate_answer

# Public name -> submodule. Submodules load on first use (PEP 562), so importing the
# package costs almost nothing and a process that never lints never compiles the lint's
# patterns.
_HOME = {
    "check_schema": "check",
    "AnswerInvalid": "errors",
    "SchemaBuildError": "errors",
    "SchemaError": "errors",
    "SchemaProblem": "errors",
    "SchemaSubsetError": "errors",
    "SecretFieldError": "errors",
    "FormLint": "lint",
    "SecretFinding": "lint",
    "lint_form": "lint",
    "Choices": "markers",
    "Description": "markers",
    "Email": "markers",
    "Format": "markers",
    "NotSecret": "markers",
    "Title": "markers",
    "Url": "markers",
    "FormProblem": "problems",
    "form_problems": "problems",
    "FormSpec": "spec",
    "form_spec": "spec",
    "validate_answer": "validate",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value  # next lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "AnswerInvalid",
    "Choices",
    "Description",
    "Email",
    "FormLint",
    "FormProblem",
    "FormSpec",
    "Format",
    "NotSecret",
    "SchemaBuildError",
    "SchemaError",
    "SchemaProblem",
    "SchemaSubsetError",
    "SecretFieldError",
    "SecretFinding",
    "Title",
    "Url",
    "check_schema",
    "form_problems",
    "form_spec",
    "lint_form",
    "validate_answer",
]
