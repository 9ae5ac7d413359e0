"""Read the fields of a form source: a pydantic model, a dataclass or a TypedDict.

Pydantic is never imported here: a class can only be a pydantic model if pydantic is
already in ``sys.modules``, so the checks look there first.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from .errors import SchemaBuildError

__all__ = [
    "MISSING",
    "Source",
    "SourceField",
    "from_module",
    "is_pydantic_model",
    "read_source",
]

SourceKind = Literal["pydantic", "pydantic_dataclass", "dataclass", "typeddict"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: No default.
MISSING: Final = _Missing()


@dataclass(slots=True)
class SourceField:
    """One field as the source declares it, before its type is mapped."""

    name: str  # key on the wire (pydantic alias when there is one)
    attr: str  # attribute / constructor argument
    annotation: Any
    required: bool  # the source itself needs a value
    default: Any = MISSING
    factory: Callable[[], Any] | None = None
    metadata: list[Any] = field(default_factory=list)  # extra Annotated-style metadata
    title: str | None = None
    description: str | None = None


@dataclass(slots=True)
class Source:
    kind: SourceKind
    cls: type
    fields: list[SourceField]


def from_module(obj: object, package: str) -> bool:
    """Whether ``obj``'s class (or ``obj`` itself, for a class) comes from ``package``."""
    cls = obj if isinstance(obj, type) else type(obj)
    module = getattr(cls, "__module__", "") or ""
    return module == package or module.startswith(package + ".")


def is_pydantic_model(tp: object) -> bool:
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not isinstance(tp, type):
        return False
    return issubclass(tp, pydantic.BaseModel)


def _is_pydantic_dataclass(tp: type) -> bool:
    return dataclasses.is_dataclass(tp) and hasattr(tp, "__pydantic_fields__")


def is_typeddict(tp: object) -> bool:
    # Works for typing.TypedDict and typing_extensions.TypedDict without importing either.
    return (
        isinstance(tp, type)
        and issubclass(tp, dict)
        and hasattr(tp, "__required_keys__")
        and hasattr(tp, "__optional_keys__")
    )


def is_field_info(obj: object) -> bool:
    return type(obj).__name__ == "FieldInfo" and from_module(obj, "pydantic")


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception as exc:  # NameError for a forward reference, and friends
        advice = f" ({unresolved_advice(exc.name, cls)})" if isinstance(exc, NameError) else ""
        raise SchemaBuildError(
            "", f"cannot resolve the type annotations of {cls.__name__}: {exc}{advice}"
        ) from exc


def unresolved_advice(name: str | None, owner: Any) -> str:
    """What to do about ``name``, which the string annotations of ``owner`` (a class or a
    function) name but its module does not define: the hints that apply, likeliest first.

    For the error path only: it may read the module's source."""
    module_name = getattr(owner, "__module__", None) or "its module"
    module = sys.modules.get(module_name)
    # A function's globals are its module's (or exec's namespace, which has no module).
    names: dict[str, Any] = getattr(owner, "__globals__", None) or (vars(module) if module else {})
    guarded = _type_checking_names(module)
    if name is not None and guarded is not None and name in guarded:
        return f"{name!r} is imported under `if TYPE_CHECKING:`, which does not run: import it at run time"
    hints = []
    close = _close_name(name, names) if name else None
    if close is not None:
        hints.append(f"a typo? did you mean {close!r}?")
    if "<locals>" in getattr(owner, "__qualname__", ""):
        what = "a class" if isinstance(owner, type) else "a function"
        hints.append(
            f"string annotations of {what} defined inside a function cannot see that function's "
            "local names: define it at module level"
        )
    if hints:
        return "; ".join(hints)
    if guarded is None and names.get("TYPE_CHECKING") is False:  # no source to tell: ask
        return "imported under `if TYPE_CHECKING:`? import it at run time"
    return f"import or define it at the top level of {module_name}"


def _close_name(name: str, module_names: dict[str, Any]) -> str | None:
    """The known type name ``name`` most likely misspells (``itn``: ``int``), if any: builtins,
    ``typing``'s names and the module's classes, modules and typing constructs (not its
    functions or values, which an annotation rarely means: ``Point`` is not ``print``)."""
    import builtins
    import difflib
    import types

    def is_type_like(value: object) -> bool:
        kind = type(value).__module__
        return isinstance(value, type | types.ModuleType) or kind in ("typing", "typing_extensions", "types")

    known = {n for n, v in vars(builtins).items() if isinstance(v, type) and not n.startswith("_")}
    known.update(typing.__all__)
    known.update(n for n, v in module_names.items() if not n.startswith("__") and is_type_like(v))
    found = difflib.get_close_matches(name, sorted(known), n=1)
    return found[0] if found else None


def _type_checking_names(module: object) -> set[str] | None:
    """The names ``module`` binds under ``if TYPE_CHECKING:`` (empty: it has no such block), or
    None when its source cannot be read."""
    import ast
    import inspect

    try:
        tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    except (OSError, TypeError, SyntaxError, ValueError):
        return None
    names: set[str] = set()
    guards = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.If)
        and "TYPE_CHECKING" in (getattr(node.test, "id", None), getattr(node.test, "attr", None))
    ]
    for guard in guards:
        for sub in (child for statement in guard.body for child in ast.walk(statement)):
            if isinstance(sub, ast.Import | ast.ImportFrom):
                names.update((alias.asname or alias.name).split(".")[0] for alias in sub.names)
            elif isinstance(sub, ast.ClassDef):
                names.add(sub.name)
            elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.add(sub.id)
    return names


def _field_info(name: str, attr: str, annotation: Any, info: Any) -> SourceField:
    """A pydantic ``FieldInfo`` as a :class:`SourceField`."""
    if info.json_schema_extra is not None:
        raise SchemaBuildError(
            name,
            "json_schema_extra is not supported in elicitation forms (it could put anything "
            "into the schema); use Title, Description and Choices markers instead",
        )
    required = bool(info.is_required())
    default: Any = MISSING
    factory = None
    if info.default_factory is not None:
        # A factory that needs the other fields' data cannot be called on its own.
        if not getattr(info, "default_factory_takes_data", False):
            factory = info.default_factory
    elif not required:
        default = info.default
    return SourceField(
        name=name,
        attr=attr,
        annotation=annotation,
        required=required,
        default=default,
        factory=factory,
        metadata=[m for m in info.metadata if m is not None],
        title=info.title,
        description=info.description,
    )


def _pydantic_fields(cls: type, fields: dict[str, Any]) -> list[SourceField]:
    config = getattr(cls, "model_config", {}) or {}
    by_alias = config.get("validate_by_alias", True) is not False
    out = []
    for attr, info in fields.items():
        if getattr(info, "init", None) is False:
            continue
        name = attr
        if by_alias:
            alias = info.validation_alias if info.validation_alias is not None else info.alias
            if alias is not None and not isinstance(alias, str):
                raise SchemaBuildError(
                    attr,
                    "AliasPath / AliasChoices cannot name a form field; use a plain alias",
                )
            name = alias or attr
        if info.annotation is None or isinstance(info.annotation, str | typing.ForwardRef):
            raise SchemaBuildError(
                attr, f"the annotation is not resolved; call {cls.__name__}.model_rebuild() first"
            )
        out.append(_field_info(name, attr, info.annotation, info))
    return out


def _dataclass_fields(cls: type) -> list[SourceField]:
    hints = _hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        annotation = hints.get(f.name, f.type)
        if is_field_info(f.default):
            # pydantic's Field() used as the default of a plain dataclass field.
            out.append(_field_info(f.name, f.name, annotation, f.default))
            continue
        default: Any = MISSING if f.default is dataclasses.MISSING else f.default
        factory = None if f.default_factory is dataclasses.MISSING else f.default_factory
        title = f.metadata.get("title")
        description = f.metadata.get("description")
        for key, value in (("title", title), ("description", description)):
            if value is not None and not isinstance(value, str):
                raise SchemaBuildError(f.name, f"metadata {key!r} must be a str")
        out.append(
            SourceField(
                name=f.name,
                attr=f.name,
                annotation=annotation,
                required=default is MISSING and factory is None,
                default=default,
                factory=factory,
                title=title,
                description=description,
            )
        )
    return out


def _strip_qualifiers(annotation: Any) -> Any:
    """Drop ``Required``/``NotRequired``/``ReadOnly``; requiredness comes from the class."""
    while getattr(typing.get_origin(annotation), "_name", None) in (
        "Required",
        "NotRequired",
        "ReadOnly",
    ):
        annotation = typing.get_args(annotation)[0]
    return annotation


def _typeddict_fields(cls: type) -> list[SourceField]:
    hints = _hints(cls)
    required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
    return [
        SourceField(
            name=name,
            attr=name,
            annotation=_strip_qualifiers(annotation),
            required=name in required_keys,
        )
        for name, annotation in hints.items()
    ]


def _what(source: object) -> str:
    if isinstance(source, type):
        return f"the class {source.__name__}"
    return f"{type(source).__name__} {source!r}"[:80]


def read_source(source: object) -> Source:
    """The fields of a model, dataclass or TypedDict class; anything else is refused."""
    if is_pydantic_model(source):
        assert isinstance(source, type)
        root = sys.modules["pydantic"].RootModel
        if issubclass(source, root):
            raise SchemaBuildError("", f"{source.__name__} is a RootModel; a form needs named fields")
        fields = dict(source.model_fields)  # type: ignore[attr-defined]
        return Source("pydantic", source, _pydantic_fields(source, fields))
    if isinstance(source, type) and dataclasses.is_dataclass(source):
        if _is_pydantic_dataclass(source):
            infos: dict[str, Any] = source.__pydantic_fields__  # type: ignore[attr-defined]
            return Source("pydantic_dataclass", source, _pydantic_fields(source, dict(infos)))
        return Source("dataclass", source, _dataclass_fields(source))
    if is_typeddict(source):
        assert isinstance(source, type)
        return Source("typeddict", source, _typeddict_fields(source))
    raise SchemaBuildError(
        "",
        f"a form is built from a pydantic model, a dataclass, a TypedDict or a dict "
        f"requestedSchema, not {_what(source)}; to ask for one value, make a model with "
        "one field",
    )
