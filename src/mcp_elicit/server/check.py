"""Check a server's forms before anyone calls it: ``Server.check()`` and ``mcp-elicit check``.

A form is built when ``ctx.elicit`` runs, so one that the subset cannot express (a nested model,
a field named ``password``, a default of the wrong type) would otherwise first show as an
internal error on somebody's call. The check reads each handler's source with :mod:`ast`,
finds its ``ctx.elicit(message, Form)`` calls (``ctx`` being the parameter that receives the
Context) and builds the forms it can name without running anything:

- a name (or ``module.Name``, ``Outer.Inner``) that the handler's module globals, or the
  variables it closes over, hold: a model, a dataclass, a TypedDict, a schema dict, a FormSpec;
- such a name subscripted by others (``Generic[Item]``);
- a dict literal (``{"type": "object", ...}``) made of constants;
- no form at all (``None``): a confirm-only question.

Each is checked as ``ctx.elicit`` would check it (:func:`~mcp_elicit.schema.form_problems`:
every problem at once) with the ``allow_secrets`` the call gives, when that is a literal.

It also reports a coroutine method of the Context (``elicit``, ``secret``, ``log``...) called
without ``await``: not under ``await``, not handed to a call (``asyncio.gather``,
``create_task``) or a collection, not kept in a name that is.

What it cannot see, and reports as not checked (``unchecked``): a form held in a local variable
or built by a call (``make_form()``, ``create_model(...)``), a dict literal with names in it,
arguments passed with ``*`` or ``**``, an ``allow_secrets`` that is not a literal. A handler
whose source is not available is a problem instead: nothing of it was checked. Questions asked
in helper functions the handler calls (``await ask_dates(ctx)``) are not seen at all: only the
handler's own body is read.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import sys
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mcp_elicit.server.registry import Entry, Prompt, Resource, Tool


@dataclass(frozen=True, slots=True)
class Problem:
    """A form that ``ctx.elicit`` would refuse, a Context call not awaited, or a handler that
    could not be read, found by :meth:`Server.check`.

    ``file`` and ``line`` are where the call is (the handler's, for one not read); ``kind`` is
    ``"tool"``, ``"prompt"`` or ``"resource"`` and ``name`` the handler's name (a resource's URI);
    ``message`` is the text ``ctx.elicit`` would fail with, or what is wrong. ``field`` names the
    field at fault (``""``: the form as a whole) and ``field_file`` / ``field_line`` where it is
    declared, when the check can tell.
    """

    file: str
    line: int
    kind: str
    name: str
    message: str
    field: str = ""
    field_file: str | None = None
    field_line: int | None = None

    def __str__(self) -> str:
        if self.field_line is None:
            declared = ""
        elif self.field_file == self.file:
            declared = f" (declared at line {self.field_line})"
        else:
            declared = f" (declared at {self.field_file}:{self.field_line})"
        return f"{self.file}:{self.line}: {self.kind} {self.name!r}: {self.message}{declared}"


@dataclass(frozen=True, slots=True)
class Unchecked:
    """A ``ctx.elicit`` call (or a handler) whose form the check cannot build, and why."""

    file: str
    line: int
    kind: str
    name: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.kind} {self.name!r}: not checked: {self.reason}"


class CheckResult(list[Problem]):
    """The problems :meth:`Server.check` found: a list, empty when there are none (so that a
    test reads ``assert not app.check()``), with what was looked at besides.

    ``forms``: the ``ctx.elicit`` calls whose form was built; ``unchecked``: those it could
    not build (see :mod:`mcp_elicit.server.check`); ``handlers``: how many tools, prompts and
    resources the server has, by kind.
    """

    def __init__(
        self,
        problems: Iterable[Problem] = (),
        *,
        forms: int = 0,
        unchecked: Iterable[Unchecked] = (),
        handlers: dict[str, int] | None = None,
    ) -> None:
        super().__init__(problems)
        self.forms = forms
        self.unchecked = list(unchecked)
        self.handlers = dict(handlers or {})


def check_entries(entries: Iterable[Entry]) -> CheckResult:
    """Check the forms of these handlers (see the module docstring)."""
    checker = _Checker()
    for entry in entries:
        checker.handler(entry)
    return CheckResult(
        checker.problems, forms=checker.forms, unchecked=checker.unchecked, handlers=checker.handlers
    )


class _Checker:
    """One check: what it found so far, and the module sources it parsed (once each)."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.unchecked: list[Unchecked] = []
        self.forms = 0
        self.handlers = {"tool": 0, "prompt": 0, "resource": 0}
        self._trees: dict[str, ast.Module | None] = {}

    def handler(self, entry: Entry) -> None:
        kind, name = _describe(entry)
        self.handlers[kind] += 1
        context = entry.signature.context_param
        if context is None:
            return  # no Context: it cannot ask anything
        fn = inspect.unwrap(entry.fn)
        code = getattr(fn, "__code__", None)
        # A handler not read at all is a problem, not a note: `assert not app.check()` must not
        # pass for a server none of whose questions were looked at.
        if code is None:
            self._skipped("?", 0, kind, name, f"the handler {fn!r} has no Python source")
            return
        file, line = code.co_filename, code.co_firstlineno
        try:
            node = self._function(file, fn.__globals__, fn.__name__, line)
            scope = _Scope(fn, node) if node is not None else None
        except Exception as exc:  # a handler this check cannot read: say so, check the rest
            self._skipped(file, line, kind, name, _failed(exc))
            return
        if node is None or scope is None:
            reason = (
                f"the source of {fn.__qualname__} is not available (defined in a REPL or by exec?): "
                "define it in a file to have it checked"
            )
            self._skipped(file, line, kind, name, reason)
            return
        for call in _unawaited_calls(node, context):
            shown = f"{context}.{_method(call)}(...)"
            message = f"{shown} is not awaited: write `await {shown}`"
            self.problems.append(Problem(file, call.lineno, kind, name, message))
        for call in _elicit_calls(node, context):
            try:
                self._call(call, scope, file, kind, name)
            except Exception as exc:  # the server's own code ran (a metaclass, a module __getattr__)
                self.unchecked.append(Unchecked(file, call.lineno, kind, name, _failed(exc)))

    def _skipped(self, file: str, line: int, kind: str, name: str, reason: str) -> None:
        self.problems.append(Problem(file, line, kind, name, f"not checked: {reason}"))

    def _call(self, call: ast.Call, scope: _Scope, file: str, kind: str, name: str) -> None:
        expression = _form_argument(call)
        allow = _allow_secrets(call)
        form = expression if isinstance(expression, _NotResolved) else scope.resolve(expression)
        for failed in (form, allow):
            if isinstance(failed, _NotResolved):
                self.unchecked.append(Unchecked(file, call.lineno, kind, name, failed.reason))
                return
        assert not isinstance(allow, _NotResolved)
        self.forms += 1
        if form is None:
            return  # a confirm-only question: nothing to build
        from mcp_elicit.schema.problems import form_problems  # the form machinery, on first use

        declared = self._field_lines(form, expression, file)
        for problem in form_problems(form, allow_secrets=allow):
            field_file, field_line = declared.get(problem.field, (None, None))
            self.problems.append(
                Problem(file, call.lineno, kind, name, problem.message, problem.field, field_file, field_line)
            )

    def _tree(self, file: str, module_globals: dict[str, Any]) -> ast.Module | None:
        if file not in self._trees:
            lines = linecache.getlines(file, module_globals)
            try:
                self._trees[file] = ast.parse("".join(lines), filename=file) if lines else None
            except (SyntaxError, ValueError):
                self._trees[file] = None
        return self._trees[file]

    def _function(
        self, file: str, module_globals: dict[str, Any], name: str, first_line: int
    ) -> ast.AsyncFunctionDef | ast.FunctionDef | None:
        """The ``def`` named ``name`` whose first line (its first decorator's) is ``first_line``
        in ``file``, as its code object says."""
        tree = self._tree(file, module_globals)
        for node in ast.walk(tree) if tree is not None else ():
            if not isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef) or node.name != name:
                continue
            if min([node.lineno, *(d.lineno for d in node.decorator_list)]) == first_line:
                return node
        return None

    def _class(self, cls: type) -> tuple[str, ast.ClassDef] | None:
        """The file and the ``class`` statement of ``cls``, found by its qualified name (the
        last definition of a name wins, as when the module ran)."""
        try:
            file = inspect.getsourcefile(cls)
        except TypeError:  # a built-in class
            return None
        module = sys.modules.get(cls.__module__)
        tree = self._tree(file, vars(module) if module else {}) if file else None
        node: ast.AST | None = tree
        for part in cls.__qualname__.split("."):
            if node is None:
                return None
            if part != "<locals>":
                found = [d for d in _definitions(node) if d.name == part]
                node = found[-1] if found else None
        return (file, node) if file is not None and isinstance(node, ast.ClassDef) else None

    def _field_lines(
        self, form: object, expression: ast.expr | _NotResolved | None, call_file: str
    ) -> dict[str, tuple[str, int]]:
        """Field name (on the wire) -> (file, line) of its declaration, for those it can find."""
        if isinstance(expression, ast.Dict):
            return {name: (call_file, line) for name, line in _dict_literal_lines(expression).items()}
        if isinstance(form, type):
            return self._class_field_lines(form)
        return {}

    def _class_field_lines(self, cls: type) -> dict[str, tuple[str, int]]:
        by_attr: dict[str, tuple[str, int]] = {}
        for klass in reversed(cls.__mro__):  # a subclass's declaration wins
            if klass.__module__.partition(".")[0] in _BASES:
                continue
            found = self._class(klass)
            if found is None:
                continue
            file, node = found
            for statement in node.body:
                if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                    by_attr[statement.target.id] = (file, statement.lineno)
        from mcp_elicit.schema.sources import read_source

        try:
            attrs = {f.name: f.attr for f in read_source(cls).fields}  # wire name -> attribute
        except Exception:  # the form's own problem, which form_problems reports
            return by_attr
        return {name: by_attr[attr] for name, attr in attrs.items() if attr in by_attr}


# Where the bases of forms come from (pydantic.BaseModel, TypedDict, object): never a form's field.
_BASES = frozenset({"builtins", "typing", "typing_extensions", "pydantic", "pydantic_core"})


def _definitions(node: ast.AST) -> Iterator[ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef]:
    """The classes and functions ``node``'s body defines (inside ``if`` and ``try`` too), not
    those nested in them."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            yield child
        else:
            yield from _definitions(child)


def _failed(exc: Exception) -> str:
    return f"the check failed on it ({type(exc).__name__}: {exc})"


def _describe(entry: Entry) -> tuple[str, str]:
    if isinstance(entry, Tool):
        return "tool", entry.name
    if isinstance(entry, Prompt):
        return "prompt", entry.name
    assert isinstance(entry, Resource)
    return "resource", entry.uri


# -- the handler's source ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _NotResolved:
    """Why a form (or its ``allow_secrets``) cannot be told without running the handler."""

    reason: str


def _elicit_calls(node: ast.AST, context: str) -> list[ast.Call]:
    """``<context>.elicit(...)`` calls in the handler's body, in source order."""
    calls = [
        sub
        for sub in ast.walk(node)
        if isinstance(sub, ast.Call)
        and isinstance(sub.func, ast.Attribute)
        and sub.func.attr == "elicit"
        and isinstance(sub.func.value, ast.Name)
        and sub.func.value.id == context
    ]
    return sorted(calls, key=lambda call: (call.lineno, call.col_offset))


def _method(call: ast.Call) -> str:
    assert isinstance(call.func, ast.Attribute)
    return call.func.attr


def _coroutine_methods() -> frozenset[str]:
    """The Context methods that return a coroutine: ``elicit``, ``secret``, ``log``..."""
    from mcp_elicit.server.context import Context

    return frozenset(
        name
        for name, value in vars(Context).items()
        if not name.startswith("_") and inspect.iscoroutinefunction(value)
    )


# Where a coroutine is awaited: under ``await``, or handed on to what may await it: an argument
# (``asyncio.gather(...)``, ``tg.create_task(...)``), an item of a collection, the body of a lambda
# (a factory).
_AWAITED_THERE: tuple[type[ast.AST], ...] = (
    *(ast.Await, ast.Call, ast.keyword, ast.Starred, ast.Lambda),
    *(ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp),
)


def _unawaited_calls(node: ast.AsyncFunctionDef | ast.FunctionDef, context: str) -> list[ast.Call]:
    """``<context>.<coroutine method>(...)`` calls in the handler whose coroutine is never awaited:
    not under ``await`` nor handed on (:data:`_AWAITED_THERE`), nor kept in a name that is."""
    coroutines = _coroutine_methods()
    parents = {child: parent for parent in ast.walk(node) for child in ast.iter_child_nodes(parent)}
    calls = [
        sub
        for sub in ast.walk(node)
        if isinstance(sub, ast.Call)
        and isinstance(sub.func, ast.Attribute)
        and sub.func.attr in coroutines
        and isinstance(sub.func.value, ast.Name)
        and sub.func.value.id == context
    ]
    unawaited = [call for call in calls if not _awaited(call, parents, node, follow_names=True)]
    return sorted(unawaited, key=lambda call: (call.lineno, call.col_offset))


def _awaited(
    expression: ast.expr,
    parents: dict[ast.AST, ast.AST],
    handler: ast.AST,
    *,
    follow_names: bool,
) -> bool:
    """Whether the coroutine ``expression`` gives is (or may be) awaited, judging by where it
    stands; kept in a name (``task = ctx.elicit(...)``), by where that name is read."""
    parent = parents.get(expression)
    if isinstance(parent, _AWAITED_THERE):
        return True
    if isinstance(parent, ast.Return | ast.Yield | ast.YieldFrom):
        return _enclosing_function(parent, parents) is not handler  # a helper hands it back
    target = _assigned_name(parent)
    if target is None or not follow_names:
        return False
    reads = [
        sub
        for sub in ast.walk(handler)
        if isinstance(sub, ast.Name) and sub.id == target and isinstance(sub.ctx, ast.Load)
    ]
    return any(_awaited(read, parents, handler, follow_names=False) for read in reads)


def _assigned_name(statement: ast.AST | None) -> str | None:
    """The name ``statement`` (``x = ...``, ``x: T = ...``, ``(x := ...)``) binds, if that is all."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target: ast.expr | None = statement.targets[0]
    elif isinstance(statement, ast.AnnAssign | ast.NamedExpr):
        target = statement.target
    else:
        target = None
    return target.id if isinstance(target, ast.Name) else None


def _enclosing_function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST | None:
    current = parents.get(node)
    while current is not None and not isinstance(
        current, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    ):
        current = parents.get(current)
    return current


def _form_argument(call: ast.Call) -> ast.expr | _NotResolved | None:
    """The expression passed as the form (None: none given)."""
    if any(isinstance(arg, ast.Starred) for arg in call.args) or any(k.arg is None for k in call.keywords):
        return _NotResolved("the arguments are passed with * or **")
    if len(call.args) >= 2:
        return call.args[1]
    for keyword in call.keywords:
        if keyword.arg == "schema":
            return keyword.value
    return None


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _MISSING


def _allow_secrets(call: ast.Call) -> Any:
    """The call's ``allow_secrets`` when it is a literal (a string too: form_problems says what
    is wrong with that), ``()`` when it has none."""
    for keyword in call.keywords:
        if keyword.arg == "allow_secrets":
            value = _literal(keyword.value)
            if not isinstance(value, str | list | tuple | set | frozenset):
                return _NotResolved("allow_secrets is not a literal list of names")
            return value
    return ()


_MISSING = object()


@dataclass
class _Scope:
    """The names a handler's form expression can be read from without running the handler:
    its module's globals and the variables it closes over, minus the names it binds itself."""

    fn: Any
    node: ast.AsyncFunctionDef | ast.FunctionDef
    local: set[str] = field(init=False)
    names: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.local = _bound_names(self.node)
        closure = inspect.getclosurevars(self.fn)
        self.names = {**vars(builtins), **self.fn.__globals__, **closure.nonlocals}

    def resolve(self, node: ast.expr | None) -> object:
        """The form ``node`` names (None for none), or :class:`_NotResolved`."""
        if node is None or isinstance(node, ast.Constant):
            return None if node is None else node.value  # None: confirm only; other constants fail
        if isinstance(node, ast.Dict):
            value = _literal(node)
            if value is _MISSING:
                return _NotResolved("the schema dict is built from names, not constants only")
            return value
        if isinstance(node, ast.Name):
            if node.id in self.local:
                return _NotResolved(f"the form is {node.id!r}, a name the handler sets itself")
            if node.id not in self.names:
                return _NotResolved(f"the form is {node.id!r}, which the module does not define")
            return self.names[node.id]
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        return _NotResolved(f"the form ({_shown(node)}) is made when the handler runs")

    def _attribute(self, node: ast.Attribute) -> object:
        owner = self.resolve(node.value)
        if isinstance(owner, _NotResolved):
            return owner
        if isinstance(owner, types.ModuleType):
            value = getattr(owner, node.attr, _MISSING)
        elif isinstance(owner, type):
            value = inspect.getattr_static(owner, node.attr, _MISSING)
        else:  # an attribute of an object: a property would run code
            return _NotResolved(f"the form ({_shown(node)}) is made when the handler runs")
        if value is _MISSING:
            return _NotResolved(f"{_shown(node)} does not exist when the module is imported")
        return value

    def _subscript(self, node: ast.Subscript) -> object:
        keys = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        parts = [self.resolve(node.value)]
        parts.extend(k.value if isinstance(k, ast.Constant) else self.resolve(k) for k in keys)
        for part in parts:
            if isinstance(part, _NotResolved):
                return part
        base: Any = parts[0]
        try:
            return base[tuple(parts[1:]) if isinstance(node.slice, ast.Tuple) else parts[1]]
        except Exception as exc:
            return _NotResolved(f"{_shown(node)} fails: {type(exc).__name__}: {exc}")


def _shown(node: ast.expr) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:39] + "…"


def _bound_names(node: ast.AsyncFunctionDef | ast.FunctionDef) -> set[str]:
    """Names the handler binds itself: its parameters and whatever its body assigns."""
    args = node.args
    bound = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    bound.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    declared_global: set[str] = set()
    for sub in ast.walk(node):
        if sub is node:
            continue
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store | ast.Del):
            bound.add(sub.id)
        elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(sub.name)
        elif isinstance(sub, ast.Import | ast.ImportFrom):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in sub.names)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            bound.add(sub.name)
        elif isinstance(sub, ast.Global | ast.Nonlocal):
            declared_global.update(sub.names)
        elif isinstance(sub, ast.MatchAs | ast.MatchStar) and sub.name:
            bound.add(sub.name)
    return bound - declared_global


def _dict_literal_lines(node: ast.Dict) -> dict[str, int]:
    """The line of each field of a dict literal's ``properties``."""
    for key, value in zip(node.keys, node.values, strict=True):
        if isinstance(key, ast.Constant) and key.value == "properties" and isinstance(value, ast.Dict):
            keys = [k for k in value.keys if isinstance(k, ast.Constant)]
            return {k.value: k.lineno for k in keys if isinstance(k.value, str)}
    return {}
