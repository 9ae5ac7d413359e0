"""Every problem of a form at once, where :func:`~mcp_elicit.schema.form_spec` stops at the first.

``form_spec`` refuses a form with one error: the server cannot send it either way. A person
fixing the form wants the whole list, so that fixing what is shown never uncovers more. This
collects it without giving up at the first: each field of a type is mapped on its own, the
fields that map are checked against the subset together, and the secret lint runs whatever else
is wrong. Each problem keeps the text ``form_spec``'s error gives for it.

>>> from typing import TypedDict
>>> class Signup(TypedDict):
...     password: str
...     address: dict[str, str]
>>> [p.field for p in form_problems(Signup)]
['address', 'password']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from .build import as_build_error, map_fields
from .check import check_schema
from .errors import SchemaBuildError, SecretFieldError
from .lint import SecretFinding, lint_form
from .sources import read_source
from .spec import FormSpec
from .text import unescape_pointer_token

__all__ = ["FormProblem", "form_problems"]


class FormProblem(NamedTuple):
    """One reason a form cannot be sent.

    ``field`` is the field at fault as named on the wire (``""``: the form as a whole);
    ``message`` is what ``form_spec`` says of it.
    """

    field: str
    message: str

    def __str__(self) -> str:
        return self.message


def form_problems(source: object, *, allow_secrets: Iterable[str] = ()) -> list[FormProblem]:
    """Why ``form_spec(source, allow_secrets=...)`` refuses the form: every reason, in field
    order, secrets last. ``[]`` when it accepts it. Never raises."""
    if isinstance(allow_secrets, str):
        return [FormProblem("", "allow_secrets takes a list of field names, not one string")]
    try:
        allowed = frozenset(allow_secrets)
        if isinstance(source, FormSpec):
            if source._form is not None:  # made by form_spec: checked and linted already
                return []
            source = source.schema
        if isinstance(source, Mapping):
            return _dict_problems(source, allowed)
        return _type_problems(source, allowed)
    except Exception as exc:  # a source that breaks the reading (its own code ran): say so
        return [FormProblem("", f"the form could not be built ({type(exc).__name__}: {exc})")]


def _field_of(pointer: str) -> str:
    parts = pointer.split("/")
    return unescape_pointer_token(parts[2]) if len(parts) > 2 and parts[1] == "properties" else ""


def _dict_problems(schema: Mapping[str, Any], allowed: frozenset[str]) -> list[FormProblem]:
    problems = [FormProblem(_field_of(p.pointer), str(p)) for p in check_schema(schema)]
    return problems + _secret_problems(schema, allowed)


def _type_problems(source: object, allowed: frozenset[str]) -> list[FormProblem]:
    try:
        read = read_source(source)
    except SchemaBuildError as exc:
        return [FormProblem(exc.field, str(exc))]
    fields = map_fields(read)
    problems = [FormProblem(error.field, str(error)) for error in fields.refused]
    for problem in check_schema(fields.schema):
        error = as_build_error(problem.pointer, problem.reason)
        problems.append(FormProblem(error.field, str(error)))
    names = {f.name for f in read.fields}  # a field refused for another reason is still one
    return problems + _secret_problems(fields.schema, allowed | fields.not_secret, names)


def _secret_problems(
    schema: Mapping[str, Any], allowed: frozenset[str], names: set[str] | None = None
) -> list[FormProblem]:
    """One problem per field that asks for a secret (with ``form_spec``'s text for that field
    alone), and one per ``allow_secrets`` name that is not a field."""
    if names is None:
        properties = schema.get("properties")
        names = set(properties) if isinstance(properties, Mapping) else set()
    problems = [
        FormProblem(name, str(SchemaBuildError(name, "allow_secrets names a field that is not in the form")))
        for name in sorted(allowed - names)
    ]
    by_field: dict[str, list[SecretFinding]] = {}
    for finding in lint_form("", dict(schema), allow_secrets=allowed).secret_fields:
        by_field.setdefault(finding.field, []).append(finding)
    problems.extend(FormProblem(name, str(SecretFieldError(found))) for name, found in by_field.items())
    return problems
