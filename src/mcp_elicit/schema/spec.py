"""``FormSpec``: a checked form with its digest, and ``form_spec`` to make one.

>>> from typing import TypedDict
>>> class Confirm(TypedDict):
...     ok: bool
>>> spec = form_spec(Confirm)
>>> spec.schema
{'type': 'object', 'properties': {'ok': {'type': 'boolean'}}, 'required': ['ok']}
>>> spec.parse({"ok": True})
{'ok': True}
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .check import compile_schema
from .errors import SchemaBuildError, SchemaSubsetError, SecretFieldError
from .rules import CompiledForm
from .validate import validate_compiled

__all__ = ["FormSpec", "digest_of", "form_spec"]


def digest_of(schema: dict[str, Any]) -> str:
    """SHA-256 hex of the canonical JSON of ``schema`` (sorted keys, no spaces, UTF-8).

    >>> digest_of({"b": 1, "a": [True]}) == digest_of({"a": [True], "b": 1})
    True
    """
    import hashlib  # lazily: loading OpenSSL costs more than the rest of this module

    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class FormSpec:
    """A form inside the subset: the wire ``requestedSchema`` and its digest.

    Two specs are equal when their schemas are. Treat ``schema`` as read-only: specs
    built from types are cached and shared.
    """

    schema: dict[str, Any] = field(compare=False)
    digest: str
    _form: CompiledForm | None = field(default=None, repr=False, compare=False)
    _convert: Callable[[dict[str, Any]], Any] | None = field(default=None, repr=False, compare=False)

    def __hash__(self) -> int:
        return hash(self.digest)

    def validate(self, content: object) -> dict[str, Any]:
        """:func:`~mcp_elicit.schema.validate_answer` against this form."""
        form = self._form
        if form is None:
            form, problems = compile_schema(self.schema)
            if form is None:
                raise SchemaSubsetError(problems)
        return validate_compiled(form, content)

    def to_python(self, content: dict[str, Any]) -> Any:
        """The source type's value for validated ``content`` (defaults already applied).

        A model, a dataclass instance, a dict for a TypedDict, or a copy of ``content``
        for a dict schema. Dates, date-times and enum members are converted. A model's
        or dataclass's own validation failing raises ``AnswerInvalid``.
        """
        if self._convert is None:
            return dict(content)
        return self._convert(content)

    def parse(self, content: object) -> Any:
        """``to_python(validate(content))``: from raw answer to Python value."""
        return self.to_python(self.validate(content))


# Forms built from types, the most recently used last. Bounded rather than weak: a spec refers to
# its type (to convert answers), so weak keys never expired, and a server building a type per
# request (choices from data: make_dataclass, create_model) kept every one of them.
_CACHE: OrderedDict[type, dict[frozenset[str], FormSpec]] = OrderedDict()
MAX_CACHED_TYPES = 256


def _lint(schema: dict[str, Any], allowed: frozenset[str]) -> None:
    from .lint import lint_form  # lazily, with its vocabulary and patterns

    unknown = sorted(allowed - set(schema.get("properties", {})))
    if unknown:
        raise SchemaBuildError(unknown[0], "allow_secrets names a field that is not in the form")
    findings = lint_form("", schema, allow_secrets=allowed).secret_fields
    if findings:
        raise SecretFieldError(findings)


def _from_type(source: type, allowed: frozenset[str]) -> FormSpec:
    try:
        per_type = _CACHE.get(source)
    except TypeError:  # a metaclass whose instances do not hash: build every time
        per_type = None
    if per_type is not None and allowed in per_type:
        _CACHE.move_to_end(source)
        return per_type[allowed]
    from .build import build_form  # lazily: only forms built from types need it

    built = build_form(source)
    _lint(built.schema, allowed | built.not_secret)
    spec = FormSpec(built.schema, digest_of(built.schema), built.form, built.convert)
    with contextlib.suppress(TypeError):
        _CACHE.setdefault(source, {})[allowed] = spec
        _CACHE.move_to_end(source)
        while len(_CACHE) > MAX_CACHED_TYPES:
            _CACHE.popitem(last=False)
    return spec


def _from_dict(source: dict[str, Any], allowed: frozenset[str]) -> FormSpec:
    form, problems = compile_schema(source)
    if form is None:
        raise SchemaSubsetError(problems)
    # A checked schema holds only JSON values, so a deep copy is cheap, and the caller
    # can no longer change what was checked.
    schema = copy.deepcopy(source)
    _lint(schema, allowed)
    return FormSpec(schema, digest_of(schema), form, None)


def _plain(source: Mapping[str, Any]) -> dict[str, Any]:
    """A read-only mapping (``MappingProxyType``, a frozen dict) as dicts, down to the fields."""
    out = dict(source)
    properties = out.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {k: dict(v) if isinstance(v, Mapping) else v for k, v in properties.items()}
    return out


def form_spec(source: type | Mapping[str, Any] | FormSpec, *, allow_secrets: Iterable[str] = ()) -> FormSpec:
    """Build (for a type) or check (for a dict) a form, then run the secret lint.

    Raises :class:`SchemaBuildError` for a type outside the subset,
    :class:`SchemaSubsetError` for a dict outside it, and :class:`SecretFieldError` when
    a field asks for a secret and is neither marked ``NotSecret`` nor in
    ``allow_secrets``. Specs built from types are cached per type.
    """
    if isinstance(allow_secrets, str):
        raise TypeError("allow_secrets takes a list of field names, not one string")
    allowed = frozenset(allow_secrets)
    if isinstance(source, FormSpec):
        if source._form is not None:  # made by form_spec: already checked and linted
            return source
        return _from_dict(source.schema, allowed)
    if isinstance(source, dict):
        return _from_dict(source, allowed)
    if isinstance(source, Mapping):
        return _from_dict(_plain(source), allowed)
    return _from_type(source, allowed)
