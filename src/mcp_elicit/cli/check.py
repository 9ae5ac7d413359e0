"""``mcp-elicit check TARGET``: build every form a server's handlers name, before anyone calls.

TARGET names the server as uvicorn's argument does, or as a file:

- ``module:app``: the attribute ``app`` (dotted: ``pkg.mod:servers.main``) of a module imported
  from the current directory;
- ``path/to/server.py`` or ``module``: every :class:`~mcp_elicit.Server` its globals hold;
- ``path/to/server.py:app``: that one.

A file is imported as a module (its directory first on ``sys.path``, as ``python server.py``
would have it), not run: its ``if __name__ == "__main__":`` block does not run. What is checked
is :meth:`Server.check <mcp_elicit.server.app.Server.check>`'s.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import logging
import os
import sys
import traceback
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from mcp_elicit.cli import EXIT_FAILURE, EXIT_OK, EXIT_TOOL_ERROR, write_output

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from mcp_elicit.server.app import Server
    from mcp_elicit.server.check import CheckResult


class TargetError(Exception):
    """The target cannot be imported, or does not name a Server: ``str()`` is the one line."""


def run_check(target: str) -> int:
    try:
        servers = load_servers(target)
    except TargetError as exc:
        print(f"mcp-elicit: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    results = [server.check() for _, server in servers]
    problems = [problem for result in results for problem in result]
    for problem in problems:
        where = _shown_path(problem.file)
        field_file = _shown_path(problem.field_file) if problem.field_file else None
        write_output(str(dataclasses.replace(problem, file=where, field_file=field_file)))
    for result in results:
        for unchecked in result.unchecked:
            print(
                f"note: {dataclasses.replace(unchecked, file=_shown_path(unchecked.file))}", file=sys.stderr
            )
    counts = _counts(results)
    if problems:
        print(f"{counts}: {_plural(len(problems), 'problem')}", file=sys.stderr)
        return EXIT_TOOL_ERROR
    unchecked_count = sum(len(result.unchecked) for result in results)
    more = f" ({_plural(unchecked_count, 'form')} not checked: see above)" if unchecked_count else ""
    write_output(f"{counts}: no problems{more}")
    return EXIT_OK


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _counts(results: list[CheckResult]) -> str:
    handlers = {
        kind: sum(r.handlers.get(kind, 0) for r in results) for kind in ("tool", "prompt", "resource")
    }
    parts = [_plural(handlers["tool"], "tool")]
    parts.extend(_plural(handlers[kind], kind) for kind in ("prompt", "resource") if handlers[kind])
    parts.append(_plural(sum(r.forms for r in results), "form"))
    if len(results) > 1:
        parts.insert(0, _plural(len(results), "server"))
    return ", ".join(parts)


def _shown_path(path: str) -> str:
    """``path`` relative to the current directory when it is below it, as compilers print it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith("..") else relative


# -- finding the servers ----------------------------------------------------------------------


def load_servers(target: str) -> list[tuple[str, Server]]:
    """The servers ``target`` names, each with the name it is shown by."""
    from mcp_elicit.server.app import Server

    where, _, attribute = target.rpartition(":") if _has_attribute(target) else (target, "", "")
    if not where:
        raise TargetError(f"{target!r} names no module or file (write module:app or path/to/server.py)")
    module = _import(where)
    if attribute:
        found: object = module
        for part in attribute.split("."):
            if not hasattr(found, part):
                raise TargetError(f"{where} has no attribute {attribute!r}")
            found = getattr(found, part)
        if not isinstance(found, Server):
            what = "class" if isinstance(found, type) else type(found).__name__
            raise TargetError(f"{target} is {_article(what)} {what}, not a Server (mcp_elicit.Server)")
        return [(target, found)]
    servers: dict[int, tuple[str, Server]] = {}
    for name, value in vars(module).items():
        if isinstance(value, Server):
            servers.setdefault(id(value), (f"{where}:{name}", value))
    if not servers:
        raise TargetError(
            f"{where} holds no Server (mcp_elicit.Server) at module level; name one as {where}:NAME"
        )
    return list(servers.values())


def _has_attribute(target: str) -> bool:
    """Whether ``target`` ends in ``:attribute`` (dotted names; not a drive: ``C:\\server.py``)."""
    head, sep, tail = target.rpartition(":")
    return bool(sep) and len(head) > 1 and all(part.isidentifier() for part in tail.split("."))


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _is_file(where: str) -> bool:
    return where.endswith(".py") or os.sep in where or "/" in where


def _import(where: str) -> ModuleType:
    if _is_file(where):
        path = Path(where)
        if not path.is_file():
            raise TargetError(f"cannot import {where}: no such file")
        return _run_import(where, path.resolve(), partial(_import_file, path.resolve()))
    sys.path.insert(0, os.getcwd())  # as `python -m` and uvicorn have it
    return _run_import(where, None, partial(importlib.import_module, where))


def _import_file(path: Path) -> ModuleType:
    # Its own name, so that its modules can import it back; not over a module already loaded
    # (a server.py named like one this command uses must not replace it).
    name = path.stem if path.stem not in sys.modules else f"{path.stem}__checked"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot import {path}: not a Python file")
    sys.path.insert(0, str(path.parent))  # its own modules import as when it runs
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@contextmanager
def _quiet_state_keys() -> Iterator[None]:
    """The check seals and opens no state: the warning about an ephemeral key (a server without
    ``state_keys``) is not about anything it does."""
    state_log = logging.getLogger("mcp_elicit.state")
    level = state_log.level
    state_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        state_log.setLevel(level)


class _ServesWhenImported(Exception):
    """The module called ``Server.run()`` (or ``run_stdio``, ``run_http``) while being imported."""


@contextmanager
def _not_serving() -> Iterator[None]:
    """A module that starts its server at import (``app.run()`` with no ``__main__`` guard) would
    serve instead of being checked: on stdio, wait silently on this terminal for a client. Its
    call raises instead, for the check to say so."""
    from mcp_elicit.server.app import Server

    def refuse(method: str) -> Callable[..., None]:
        def refused(*_args: object, **_kwargs: object) -> None:
            raise _ServesWhenImported(method)

        return refused

    methods = ("run", "run_stdio", "run_http")
    saved = {name: vars(Server)[name] for name in methods}
    for name in methods:
        setattr(Server, name, refuse(name))
    try:
        yield
    finally:
        for name, method in saved.items():
            setattr(Server, name, method)


def _run_import(where: str, path: Path | None, load: Callable[[], ModuleType]) -> ModuleType:
    """``load()``, its failure (whatever the server's code raised, SystemExit too) as one line."""
    try:
        with _quiet_state_keys(), _not_serving():
            module = load()
    except TargetError:
        raise
    except _ServesWhenImported as exc:
        raise TargetError(
            f"cannot check {where}{_location(exc, path)}: it starts its server when imported "
            f"(.{exc.args[0]}() at module level); put that call under "
            '`if __name__ == "__main__":` (running the file then still serves)'
        ) from None
    except (Exception, SystemExit) as exc:
        if isinstance(exc, ModuleNotFoundError) and path is None and exc.name == where.split(".")[0]:
            raise TargetError(
                f"cannot import {where}: no module named {exc.name!r} here (for a file, write its path: "
                f"{where.replace('.', '/')}.py)"
            ) from None
        raise TargetError(f"cannot import {where}{_location(exc, path)}: {_one_line(exc)}") from None
    return module


def _location(exc: BaseException, path: Path | None) -> str:
    """`` (file:line)`` of the failure in the server's own code: the syntax error's, else the
    innermost frame in the imported file (else in any file that is not this package's)."""
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return f" ({_shown_path(exc.filename)}:{exc.lineno})"
    frames = traceback.extract_tb(exc.__traceback__)
    package = str(Path(__file__).resolve().parents[1])
    mine = [f for f in frames if path is not None and Path(f.filename) == path]
    theirs = [f for f in frames if not f.filename.startswith((package, "<frozen"))]
    chosen = (mine or theirs)[-1:]
    return f" ({_shown_path(chosen[0].filename)}:{chosen[0].lineno})" if chosen else ""


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r}) while being imported"
    text = str(exc.msg if isinstance(exc, SyntaxError) else exc).strip()
    first = text.splitlines()[0] if text else ""
    more = " …" if len(text.splitlines()) > 1 else ""
    return f"{type(exc).__name__}: {first}{more}" if first else type(exc).__name__
