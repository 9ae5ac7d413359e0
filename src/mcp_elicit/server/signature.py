"""From a handler's Python signature to a tool's ``inputSchema``, and from the JSON
``arguments`` of a call back to keyword arguments.

Plain parameter types (str, int, float, bool, Literal, Enum, lists and dicts of those, optional
forms) are handled here without pydantic, so a server that does not use pydantic never imports
it. A signature with anything richer (a pydantic model, a dataclass, a TypedDict, constraints in
``Annotated``) is handed to pydantic as a whole, imported at registration time.
"""

from __future__ import annotations

import enum
import inspect
import math
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

import orjson

from mcp_elicit._extras import require
from mcp_elicit.schema.markers import Description
from mcp_elicit.server.param_header import ParamHeader
from mcp_elicit.server.schema_guard import misfit, resolved
from mcp_elicit.wire.codec import dumps

_MISSING = inspect.Parameter.empty


class ArgumentError(Exception):
    """The call's arguments do not fit the handler; ``str()`` is for the model to read."""


class UnsupportedAnnotation(Exception):
    """Signals that the plain path cannot express a type (the pydantic path takes over)."""


Convert = Callable[[Any, str], Any]


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str
    schema: dict[str, Any]
    required: bool
    default: Any
    convert: Convert


@dataclass(frozen=True)
class Signature:
    """What a handler takes: its arguments' schema and how to bind them."""

    input_schema: dict[str, Any]
    context_param: str | None
    bind: Callable[[Mapping[str, Any]], dict[str, Any]]
    parameters: tuple[Parameter, ...] = ()


def analyse(fn: Callable[..., Any], context_type: type, *, as_text: bool = False) -> Signature:
    """Read ``fn``'s signature; the parameter annotated ``context_type`` receives the Context.

    ``as_text``: the arguments arrive as strings (prompt arguments, resource template fields), so
    numbers and booleans are read from their text, and lists and objects are refused here."""
    if not inspect.iscoroutinefunction(inspect.unwrap(fn)):  # through functools.wraps decorators
        raise TypeError(
            f"{getattr(fn, '__qualname__', fn)!r} must be an async function (async def): handlers "
            "are awaited, and ctx.elicit needs await"
        )
    hints = _type_hints(fn)
    sig = inspect.signature(fn)
    context_param: str | None = None
    plain: list[inspect.Parameter] = []
    for param in sig.parameters.values():
        if param.kind is param.POSITIONAL_ONLY:
            raise TypeError(
                f"{fn.__qualname__}: {param.name!r} is positional-only (before '/'); arguments are "
                "passed by name"
            )
        if _is_context(hints.get(param.name), context_type):
            if context_param is not None:
                raise TypeError(
                    f"{fn.__qualname__}: {context_param!r} and {param.name!r} are both annotated "
                    f"{context_type.__name__}; a handler receives one"
                )
            context_param = param.name
            continue
        _refuse_untyped_context(fn, param, hints, context_type)
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            stars = "*" if param.kind is param.VAR_POSITIONAL else "**"
            raise TypeError(
                f"{fn.__qualname__}: {stars}{param.name}: *args and **kwargs cannot be tool arguments "
                "(a client sends arguments by name: give each its own parameter)"
            )
        plain.append(param)
    read: list[Parameter] = []
    rich: inspect.Parameter | None = None
    for p in plain:
        try:
            read.append(_plain_parameter(p, hints.get(p.name, Any)))
        except UnsupportedAnnotation:
            rich = p
            break
    if rich is not None:
        # Outside the except block: a missing [pydantic] extra is reported alone, not as
        # raised "during handling of" an internal exception.
        return _pydantic_signature(fn, plain, hints, context_param, as_text=as_text, rich=rich)
    params = tuple(_read_from_text(p, fn) for p in read) if as_text else tuple(read)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {p.name: p.schema for p in params},
    }
    required = [p.name for p in params if p.required]
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False  # the binder refuses unknown arguments: the schema says so
    return Signature(_sendable(fn, schema), context_param, _plain_binder(params), params)


def _sendable(fn: Callable[..., Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``schema``, once it is known to encode: ``tools/list`` sends it as it is, and a default it
    cannot write (an integer past 64 bits, a set) would fail every listing, not this handler."""
    for name, prop in schema.get("properties", {}).items():
        try:
            dumps(prop)
        except TypeError as exc:  # orjson's message: "Integer exceeds 64-bit range", say
            raise TypeError(
                f"{fn.__qualname__}: the schema of argument {name!r} cannot be sent as JSON ({exc}): "
                "give the argument a default JSON can carry"
            ) from None
    return schema


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The resolved annotations (string ones too, as ``from __future__ import annotations``
    makes them), or a TypeError naming what does not resolve."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except NameError as exc:
        from mcp_elicit.schema.sources import unresolved_advice  # the error path only

        advice = unresolved_advice(exc.name, inspect.unwrap(fn))
        raise TypeError(
            f"{fn.__qualname__}: its annotations name {exc.name or 'something'!r}, which its module "
            f"does not define when the handler is registered: {advice}"
        ) from None


def _is_context(annotation: Any, context_type: type) -> bool:
    """``Context`` (or a subclass), also as ``Context | None`` or in ``Annotated``."""
    if get_origin(annotation) is typing.Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        annotation = members[0] if len(members) == 1 else None
    return isinstance(annotation, type) and issubclass(annotation, context_type)


# A parameter so named is meant to receive the Context: without that annotation it would become an
# argument the client fills in ("ctx": {} in the input schema) and the handler would fail later on
# "'int' object has no attribute 'elicit'". Refused here, where the author can fix it.
_CONTEXT_NAMES = frozenset({"ctx", "context"})


def _refuse_untyped_context(
    fn: Callable[..., Any], param: inspect.Parameter, hints: dict[str, Any], context_type: type
) -> None:
    if param.name not in _CONTEXT_NAMES:
        return
    context = context_type.__name__
    fix = f"annotate it `{param.name}: {context}` (from mcp_elicit import {context})"
    if param.name not in hints:
        raise TypeError(
            f"{fn.__qualname__}: the parameter {param.name!r} has no annotation, so it would be an "
            f"argument the client fills in, not the request's {context}: {fix}"
        )
    shown = inspect.formatannotation(hints[param.name])
    raise TypeError(
        f"{fn.__qualname__}: the parameter {param.name!r} is annotated {shown}, not {context}: {fix}; "
        f"for an argument of type {shown}, rename it (`{param.name}_value: {shown}`, say): the names "
        f"ctx and context are kept for the {context}"
    )


def _plain_binder(params: tuple[Parameter, ...]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    by_name = {p.name: p for p in params}

    def bind(arguments: Mapping[str, Any]) -> dict[str, Any]:
        problems: list[str] = []
        kwargs: dict[str, Any] = {}
        if not arguments.keys() <= by_name.keys():  # one C-level check for the usual case
            problems.extend(f"unknown argument {name!r}" for name in arguments if name not in by_name)
        for p in params:
            if p.name in arguments:
                try:
                    kwargs[p.name] = p.convert(arguments[p.name], p.name)
                except ArgumentError as exc:
                    problems.append(str(exc))
            elif p.required:
                problems.append(f"missing required argument {p.name!r}")
            elif p.default is _MISSING:
                # ``x: int | None`` without a Python default: optional in the schema (the docs'
                # "X | None" row), and left out, it is None, as a form field of that type.
                kwargs[p.name] = None
        if problems:
            raise ArgumentError("; ".join(problems))
        return kwargs

    return bind


def _refuse_structured(fn: Callable[..., Any], name: str, kind: object) -> None:
    if kind in ("array", "object"):
        what = "a list" if kind == "array" else "an object"
        raise TypeError(
            f"{fn.__qualname__}: argument {name!r} arrives as text (prompt arguments and "
            f"resource template fields are strings), so it cannot be {what}"
        )


def _read_from_text(param: Parameter, fn: Callable[..., Any]) -> Parameter:
    kind = _json_kind(param.schema, {})
    _refuse_structured(fn, param.name, kind)
    parse = _TEXT_READERS.get(kind)
    if parse is None:
        return param
    convert = param.convert

    def from_text(value: Any, name: str) -> Any:
        return convert(parse(value, name) if isinstance(value, str) else value, name)

    return Parameter(param.name, param.schema, param.required, param.default, from_text)


def _int_from_text(text: str, name: str) -> int:
    digits = text[1:] if text[:1] in "+-" else text
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 4300:
        raise ArgumentError(f"argument {name!r} must be a whole number, not {text[:40]!r}")
    return int(text)


def _float_from_text(text: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not text.isascii():
        raise ArgumentError(f"argument {name!r} must be a number, not {text[:40]!r}")
    return value


def _bool_from_text(text: str, name: str) -> bool:
    lowered = text.lower()
    if lowered not in ("true", "false"):
        raise ArgumentError(f"argument {name!r} must be true or false, not {text[:40]!r}")
    return lowered == "true"


_TEXT_READERS: dict[Any, Callable[[str, str], Any]] = {
    "integer": _int_from_text,
    "number": _float_from_text,
    "boolean": _bool_from_text,
}


def _plain_parameter(param: inspect.Parameter, annotation: Any) -> Parameter:
    description: str | None = None
    header: str | None = None
    if get_origin(annotation) is typing.Annotated:
        base, *extras = get_args(annotation)
        texts: list[str] = []
        for extra in extras:
            if isinstance(extra, ParamHeader):
                header = extra.name
            elif isinstance(extra, (Description, str)):
                texts.append(extra.text if isinstance(extra, Description) else extra)
            else:
                raise UnsupportedAnnotation
        description = " ".join(texts) or None
        annotation = base
    schema, convert, optional = _schema_for(annotation)
    schema = dict(schema)
    if description:
        schema["description"] = description
    if header is not None:
        schema["x-mcp-header"] = header
    has_default = param.default is not _MISSING
    if has_default and param.default is not None:
        default = param.default.value if isinstance(param.default, enum.Enum) else param.default
        schema["default"] = default
    required = not has_default and not optional
    return Parameter(param.name, schema, required, param.default, convert)


def _marked_description(annotation: Any) -> str | None:
    """The text of the ``Description`` markers (and plain strings) of an ``Annotated`` type."""
    if get_origin(annotation) is not typing.Annotated:
        return None
    texts = [
        extra.text if isinstance(extra, Description) else extra
        for extra in get_args(annotation)[1:]
        if isinstance(extra, (Description, str))
    ]
    return " ".join(texts) or None


def _schema_for(tp: Any) -> tuple[dict[str, Any], Convert, bool]:
    """(schema, converter, optional) for a plain type; UnsupportedAnnotation otherwise.

    ``optional``: a call may leave it out without a default (``X | None``: it is None). ``Any``
    takes None too, but says nothing about being left out: without a default it is required."""
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        members = [a for a in get_args(tp) if a is not type(None)]
        if len(members) != 1:
            raise UnsupportedAnnotation
        schema, convert, _ = _schema_for(members[0])

        def optional(value: Any, name: str) -> Any:
            return None if value is None else convert(value, name)

        # null is taken (``optional``): the schema says so, as pydantic writes it.
        return ({"anyOf": [schema, {"type": "null"}]} if schema else {}), optional, True
    if tp is Any:
        return {}, lambda v, _n: v, False
    if tp is bool:
        return {"type": "boolean"}, _check_bool, False
    if tp is int:
        return {"type": "integer"}, _check_int, False
    if tp is float:
        return {"type": "number"}, _check_float, False
    if tp is str:
        return {"type": "string"}, _check_str, False
    if origin is Literal:
        literals = list(get_args(tp))
        if not all(isinstance(v, str) for v in literals):
            raise UnsupportedAnnotation
        return {"type": "string", "enum": literals}, _choice(literals, None), False
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        values = [m.value for m in tp]
        if not all(isinstance(v, str) for v in values):
            raise UnsupportedAnnotation
        return {"type": "string", "enum": values}, _choice(values, tp), False
    if origin in (list, typing.Sequence) or tp is list:
        args = get_args(tp)
        item_schema, item_convert, _ = _schema_for(args[0]) if args else ({}, lambda v, _n: v, False)

        def convert_list(value: Any, name: str) -> Any:
            if not isinstance(value, list):
                raise ArgumentError(f"argument {name!r} must be a list")
            return [item_convert(item, f"{name}[{i}]") for i, item in enumerate(value)]

        return {"type": "array", "items": item_schema}, convert_list, False
    if origin is dict or tp is dict:
        args = get_args(tp)
        if args and args[0] is not str:
            raise UnsupportedAnnotation
        value_schema, value_convert, _ = _schema_for(args[1]) if args else ({}, lambda v, _n: v, False)

        def convert_dict(value: Any, name: str) -> Any:
            if not isinstance(value, dict):
                raise ArgumentError(f"argument {name!r} must be an object")
            return {k: value_convert(v, f"{name}.{k}") for k, v in value.items()}

        object_schema: dict[str, Any] = {"type": "object"}
        if value_schema:
            object_schema["additionalProperties"] = value_schema
        return object_schema, convert_dict, False
    raise UnsupportedAnnotation


def _check_bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ArgumentError(f"argument {name!r} must be true or false")
    return value


# A whole number that arrives as a float (``3.0``, ``1e3``; and any integer beyond 64 bits, which
# the JSON parser reads as a float) is taken only while a float holds it exactly.
_EXACT_FLOAT_INT = 2**53


def _check_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArgumentError(f"argument {name!r} must be an integer")
    if isinstance(value, float):
        if not value.is_integer():
            raise ArgumentError(f"argument {name!r} must be an integer, not {value}")
        if abs(value) > _EXACT_FLOAT_INT:
            raise ArgumentError(
                f"argument {name!r} is too large to read exactly: send whole numbers beyond 64 bits "
                f"(or beyond {_EXACT_FLOAT_INT} with a fraction or an exponent) as text"
            )
        return int(value)
    return value


def _check_float(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArgumentError(f"argument {name!r} must be a number")
    return float(value)


def _check_str(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise ArgumentError(f"argument {name!r} must be a string")
    return value


def _choice(values: list[str], enum_type: type[enum.Enum] | None) -> Convert:
    allowed = set(values)

    def convert(value: Any, name: str) -> Any:
        if not isinstance(value, str) or value not in allowed:
            raise ArgumentError(f"argument {name!r} must be one of {', '.join(map(repr, values))}")
        return enum_type(value) if enum_type is not None else value

    return convert


def _json_kind(prop: object, defs: Mapping[str, Any]) -> str | None:
    """The JSON type of a property's schema, an optional one's included, through the ``$ref`` to
    ``defs`` that pydantic writes for an enum, a dataclass or a model."""
    node = resolved(prop, defs)
    if node is None:
        return None
    kind = node.get("type")
    if isinstance(kind, str):
        return kind
    branches = [resolved(branch, defs) for branch in node.get("anyOf", ())]
    kinds = [b.get("type") for b in branches if b is not None and b.get("type") != "null"]
    return kinds[0] if len(kinds) == 1 and isinstance(kinds[0], str) else None


def _to_read_again(errors: list[Any], values: dict[str, Any]) -> set[str]:
    """The arguments whose pydantic errors may go once whole floats are integers (an integer
    field given 5.0), or all of them when pydantic's parser stopped (its recursion limit: our
    nesting limit speaks first); empty when no error is of that kind."""
    again: set[str] = set()
    for error in errors:
        if error.get("type") == "json_invalid":
            return set(values)
        found = error.get("input")
        loc = error.get("loc") or ()
        if error.get("type") == "int_type" and type(found) is float and found.is_integer() and loc:
            again.add(str(loc[0]))
    return again


def _optional(annotation: Any) -> bool:
    """Whether ``annotation`` names None (``X | None``, ``Optional[X]``, in ``Annotated``): such
    an argument may be left out without a default, as on the plain path (``Any`` may not)."""
    if get_origin(annotation) is typing.Annotated:
        annotation = get_args(annotation)[0]
    return get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(annotation)


# pydantic's JSON parser stops at 200 levels (the arguments object counted): refused here first,
# with a message of our own.
PYDANTIC_MAX_NESTING = 200


def _whole(value: Any, depth: int = 1) -> Any:
    """``value`` (an argument: the arguments object is level 0) with whole floats as integers
    (5.0 is 5, as JavaScript clients write it)."""
    if type(value) is float:
        return int(value) if value.is_integer() and abs(value) <= _EXACT_FLOAT_INT else value
    if type(value) is not list and type(value) is not dict:
        return value
    if depth >= PYDANTIC_MAX_NESTING:
        raise ArgumentError(
            f"arguments must be nested at most {PYDANTIC_MAX_NESTING} levels deep for this tool"
        )
    if isinstance(value, list):
        return [_whole(item, depth + 1) for item in value]
    return {key: _whole(item, depth + 1) for key, item in value.items()}


def _needing_pydantic(fn: Callable[..., Any], rich: inspect.Parameter, hints: dict[str, Any]) -> str:
    """The part a missing [pydantic] extra is blamed on: the first argument only pydantic reads
    (``book_trip: the argument 'leaving' (date | None)``)."""
    # The annotation as written: a string under ``from __future__ import annotations``; else a
    # class of the handler's module by its bare name.
    written = rich.annotation
    if not isinstance(written, str):
        written = inspect.formatannotation(hints.get(rich.name, Any), base_module=fn.__module__)
    return f"{fn.__qualname__}: the argument {rich.name!r} ({written})"


def _pydantic_signature(
    fn: Callable[..., Any],
    params: list[inspect.Parameter],
    hints: dict[str, Any],
    context_param: str | None,
    *,
    as_text: bool,
    rich: inspect.Parameter,
) -> Signature:
    """The signature read by pydantic; ``rich`` is the first parameter the plain path cannot read."""
    require("pydantic", part=_needing_pydantic(fn, rich, hints))
    import pydantic

    # Each argument is a field of a model named by position, the argument's name its alias: a name
    # pydantic keeps for itself (``_hidden``, ``model_config``, ``model_dump``) is an argument
    # like any other, in the schema and in the call.
    fields: dict[str, Any] = {}
    for index, p in enumerate(params):
        annotation = hints.get(p.name, Any)
        default = p.default
        if default is _MISSING:
            # ``X | None`` is optional, as on the plain path: left out, it is None.
            default = None if _optional(annotation) else ...
        fields[f"a{index}"] = (annotation, pydantic.Field(default, alias=p.name))

    def arguments_model(**chosen: Any) -> tuple[Any, dict[str, Any]]:
        model = pydantic.create_model(
            f"{fn.__name__}_arguments", __config__=pydantic.ConfigDict(extra="forbid"), **chosen
        )
        return model, model.model_json_schema()

    try:
        model, schema = arguments_model(**fields)
    except (pydantic.PydanticUserError, TypeError, ValueError) as exc:
        # pydantic's message names neither the handler nor the argument: find the argument.
        for p, (field_name, spec) in zip(params, fields.items(), strict=True):
            try:
                arguments_model(**{field_name: spec})
            except (pydantic.PydanticUserError, TypeError, ValueError) as alone:
                reason = str(alone).splitlines()[0].split(". ")[0].rstrip(".")
                raise TypeError(
                    f"{fn.__qualname__}: argument {p.name!r} is annotated "
                    f"{inspect.formatannotation(spec[0])}, which cannot be read from JSON ({reason})"
                ) from exc
        raise TypeError(f"{fn.__qualname__}: its argument types cannot be read from JSON: {exc}") from exc
    schema.pop("title", None)
    defs = schema.get("$defs", {})
    # pydantic keeps Annotated markers it does not know but leaves them out of its schema: a
    # Description says what the argument is here as on the plain path.
    for p in params:
        prop = schema.get("properties", {}).get(p.name)
        text = _marked_description(hints.get(p.name))
        if text and isinstance(prop, dict) and "description" not in prop:
            prop["description"] = text
    # Read as the plain path reads them: JSON types as they are (strict: no "yes" for True, no
    # "5" for 5), whole floats as integers, and for text arguments numbers and booleans from text.
    readers: dict[str, Callable[[str, str], Any]] = {}
    for name, prop in schema.get("properties", {}).items():
        kind = _json_kind(prop, defs)
        if as_text:
            _refuse_structured(fn, name, kind)
            reader = _TEXT_READERS.get(kind)
            if reader is not None:
                readers[name] = reader

    def validate(values: dict[str, Any]) -> Any:
        try:
            encoded = orjson.dumps(values)
        except TypeError:  # orjson's JSONEncodeError: nesting past its limit, or a huge integer
            for value in values.values():
                _whole(value)  # says so if it is the nesting
            raise ArgumentError("arguments must be JSON data with integers of at most 64 bits") from None
        return model.model_validate_json(encoded, strict=True)

    def bind(arguments: Mapping[str, Any]) -> dict[str, Any]:
        values = dict(arguments)
        for name, reader in readers.items():
            value = values.get(name)
            if isinstance(value, str):
                values[name] = reader(value, name)
        # What pydantic would take although the schema forbids it (see schema_guard), by argument.
        misfits = misfit(values, schema, defs)
        try:
            try:
                instance = validate(values)
            except pydantic.ValidationError as exc:
                # Whole floats (5.0, as JavaScript writes 5) or nesting pydantic's parser stops
                # at: read those arguments again as the plain path would (a walk through every
                # value, so only when needed, and only of the arguments concerned).
                again = _to_read_again(exc.errors(), values)
                if not again:
                    raise
                instance = validate(
                    {name: _whole(value) if name in again else value for name, value in values.items()}
                )
        except pydantic.ValidationError as exc:
            # Every argument that does not fit is named once: by the guard, or else by pydantic.
            problems = [
                f"argument {'.'.join(map(str, e['loc'])) or '(all)'}: {e['msg']}"
                for e in exc.errors()
                if not e["loc"] or str(e["loc"][0]) not in misfits
            ]
            raise ArgumentError("; ".join([*misfits.values(), *problems])) from None
        if misfits:
            raise ArgumentError("; ".join(misfits.values()))
        return {p.name: getattr(instance, field) for p, field in zip(params, fields, strict=True)}

    return Signature(_sendable(fn, schema), context_param, bind)
