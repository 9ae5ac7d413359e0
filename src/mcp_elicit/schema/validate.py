"""Validate an answer (``ElicitResult.content``) against a form and apply defaults.

>>> schema = {"type": "object", "properties": {"age": {"type": "integer", "minimum": 18},
...           "news": {"type": "boolean", "default": False}}, "required": ["age"]}
>>> validate_answer(schema, {"age": 30.0})
{'age': 30, 'news': False}
>>> validate_answer(schema, {"age": "30"})
Traceback (most recent call last):
...
mcp_elicit.schema.errors.AnswerInvalid: invalid answer: age: must be a whole number, got the text '30'
"""

from __future__ import annotations

import copy
from typing import Any

from .check import compile_schema
from .errors import AnswerInvalid, SchemaSubsetError
from .limits import MAX_UNKNOWN_REPORTED
from .rules import CompiledForm, check_value
from .text import describe, quote

__all__ = ["validate_answer", "validate_compiled"]


def validate_compiled(form: CompiledForm, content: object) -> dict[str, Any]:
    """:func:`validate_answer` for an already compiled form (what ``FormSpec`` uses)."""
    try:
        return _validate(form, content)
    except AnswerInvalid:
        raise
    except Exception as exc:  # e.g. a key whose __hash__ raises: never anything but AnswerInvalid
        raise AnswerInvalid({"": f"the answer could not be read ({type(exc).__name__})"}) from exc


def _validate(form: CompiledForm, content: object) -> dict[str, Any]:
    if not isinstance(content, dict):
        raise AnswerInvalid(
            {"": f"the answer must be an object mapping field names to values, got {describe(content)}"}
        )
    errors: dict[str, str] = {}
    result: dict[str, Any] = {}
    for rule in form.fields:
        # null is no value in the spec's answers, but clients built on typed models send it for
        # an optional field left empty (the official Python SDK does): read it as left out.
        if rule.name not in content or (not rule.required and content[rule.name] is None):
            if rule.required:
                errors[rule.name] = "this field is required"
            elif rule.has_default:
                # Lists are the only mutable defaults; copy so callers cannot share them.
                result[rule.name] = copy.copy(rule.default)
            continue
        value, error = check_value(rule, content[rule.name])
        if error is not None:
            errors[rule.name] = error
        else:
            result[rule.name] = value
    # issuperset first: the usual answer has no unknown field, and it spares the list.
    unknown = [] if form.names.issuperset(content) else [key for key in content if key not in form.names]
    if unknown:
        for key in unknown[:MAX_UNKNOWN_REPORTED]:
            name = key if isinstance(key, str) else repr(key)
            shown = quote(name)
            # The client chose this name: it goes into messages escaped and cut short.
            errors[name if name and shown == f"'{name}'" else shown] = f"unknown field {shown}"
        if len(unknown) > MAX_UNKNOWN_REPORTED:
            errors[""] = f"and {len(unknown) - MAX_UNKNOWN_REPORTED} more unknown fields"
    if errors:
        raise AnswerInvalid(errors)
    return result


def validate_answer(schema: dict[str, Any], content: object, *, tolerant: bool = False) -> dict[str, Any]:
    """Check ``content`` against ``schema``; return a new dict with defaults applied.

    Raises :class:`AnswerInvalid` with one message per field (``""`` for the answer as a
    whole). Numbers are never read from strings; an integral float such as ``3.0`` counts
    as the integer ``3``. ``null`` is never a value: for an optional field it counts as
    leaving the field out (its default applies), for a required one it is refused.
    A schema outside the subset raises :class:`SchemaSubsetError`; ``tolerant`` reads it as a
    client does (:func:`~mcp_elicit.schema.check.compile_schema`).
    """
    form, problems = compile_schema(schema, tolerant=tolerant)
    if form is None:
        raise SchemaSubsetError(problems)
    return validate_compiled(form, content)
