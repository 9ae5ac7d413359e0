"""Build a ``requestedSchema`` from a pydantic model, a dataclass or a TypedDict.

>>> from dataclasses import dataclass
>>> from typing import Literal
>>> @dataclass
... class Booking:
...     guests: int
...     room: Literal["single", "double"] = "double"
>>> build_form(Booking).schema["properties"]["room"]
{'type': 'string', 'enum': ['single', 'double'], 'default': 'double'}
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .check import compile_schema
from .convert import Conv, make_converter
from .errors import SchemaBuildError
from .rules import CompiledForm
from .sources import MISSING, Source, read_source
from .text import unescape_pointer_token
from .typemap import encode_default, map_field

__all__ = ["BuiltForm", "MappedFields", "as_build_error", "build_form", "map_fields"]


@dataclass(frozen=True, slots=True)
class BuiltForm:
    schema: dict[str, Any]
    form: CompiledForm
    convert: Callable[[dict[str, Any]], Any]
    not_secret: frozenset[str]


def as_build_error(pointer: str, reason: str) -> SchemaBuildError:
    """A checker problem in a built schema, told about the field it concerns."""
    parts = [unescape_pointer_token(p) for p in pointer.split("/")[1:]]
    if len(parts) < 2 or parts[0] != "properties":
        return SchemaBuildError("", reason)
    tail = "/".join(parts[2:])
    if tail and not reason.startswith(parts[2]):
        reason = f"{tail}: {reason}"
    return SchemaBuildError(parts[1], reason)


@dataclass(slots=True)
class MappedFields:
    """The fields of a source as a ``requestedSchema`` (those that could be mapped), and why
    the others could not."""

    schema: dict[str, Any]
    convs: list[Conv]
    not_secret: frozenset[str]
    refused: list[SchemaBuildError]


def map_fields(read: Source) -> MappedFields:
    """Map every field of ``read``; one that the subset cannot express is left out of the
    schema and its reason kept in ``refused`` (so that all of them can be shown at once)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    convs: list[Conv] = []
    not_secret: set[str] = set()
    refused: list[SchemaBuildError] = []
    for f in read.fields:
        if f.name in properties:
            refused.append(SchemaBuildError(f.name, "two fields use this name on the wire (check aliases)"))
            continue
        try:
            mapped = map_field(f)
            prop = mapped.prop
            if f.default is not MISSING and f.default is not None:
                prop["default"] = encode_default(f.default)
            elif f.factory is not None and mapped.multi:
                # List factories are how dataclasses spell a pre-selected multi-select; other
                # factories (datetime.now, uuid4) are not called: the source applies them when
                # the field is left empty.
                try:
                    produced = f.factory()
                except Exception as exc:
                    raise SchemaBuildError(f.name, f"default_factory failed: {exc!r}") from exc
                if produced is not None:
                    prop["default"] = encode_default(produced)
        except SchemaBuildError as exc:
            refused.append(exc)
            continue
        properties[f.name] = prop
        if f.required and not mapped.nullable:
            required.append(f.name)
        if mapped.not_secret:
            not_secret.add(f.name)
        convs.append(
            Conv(
                name=f.name,
                attr=f.attr,
                kind=mapped.conv_kind,
                target=mapped.target,
                fill_none=mapped.nullable and f.required,
            )
        )
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return MappedFields(schema, convs, frozenset(not_secret), refused)


def build_form(source: object) -> BuiltForm:
    """Map every field of ``source``; refuse the first one the subset cannot express."""
    read = read_source(source)
    fields = map_fields(read)
    if fields.refused:
        raise fields.refused[0]
    form, problems = compile_schema(fields.schema)
    if form is None:
        # Reachable for values the type system cannot rule out: a default outside the
        # bounds, min > max, a name with control characters.
        raise as_build_error(problems[0].pointer, problems[0].reason)
    convert = make_converter(read.kind, read.cls, fields.convs)
    return BuiltForm(fields.schema, form, convert, fields.not_secret)
