"""The packages' layers only point down: a module imports only from its own layer or below.

Read from every module's source (ast), at any depth (function bodies included: an import run
later is still an arrow). Imports under ``if TYPE_CHECKING:`` are left out: they load nothing and
only name types. The layers, bottom first::

    _extras                      which extra installs a missing package (a message, no imports)
    schema                       the requestedSchema subset
    wire                         sans-IO protocol (may use schema's text helpers)
    _closing, storage            the storage layer (SQLite and PostgreSQL databases) and its helper
    _tty                         whether a stream is a terminal (no imports)
    state                        sealed requestState, single-use stores
    server                       Server, the engine, Context
    transport                    stdio and Streamable HTTP, server side
    connect                      the URL-mode kit (through server's public names only)
    client                       the client (wire and schema only: never the server)
    cli, demo                    the command and the demo: anything

One arrow points up, on purpose, and is allowed below: ``Server.run_stdio()``, ``run_http()``
and ``asgi()`` start a transport, importing it when they are called (never at import time).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "mcp_elicit"

BELOW: dict[str, set[str]] = {
    "_extras": set(),
    "schema": set(),
    "wire": {"schema"},
    "_closing": set(),
    "_tty": set(),
    "storage": {"_extras"},
    "state": {"schema", "wire", "_closing", "storage"},
    "server": {"schema", "wire", "state", "_closing", "_extras"},
    "transport": {"schema", "wire", "state", "server", "_tty", "_extras"},
    "connect": {"schema", "wire", "state", "server", "transport", "_closing", "storage", "_extras"},
    "client": {"schema", "wire", "<root>", "_tty", "_extras"},
    "cli": {
        "schema",
        "wire",
        "state",
        "server",
        "transport",
        "connect",
        "client",
        "demo",
        "<root>",
        "_tty",
        "_extras",
    },
    "demo": {
        "schema",
        "wire",
        "state",
        "server",
        "transport",
        "connect",
        "client",
        "cli",
        "<root>",
        "_tty",
        "_extras",
    },
    "<root>": set(),
}
# The one arrow up (see the module docstring).
DEFERRED = {
    ("mcp_elicit.server.app", "mcp_elicit.transport.stdio_server"),
    ("mcp_elicit.server.app", "mcp_elicit.transport.http_app"),
    ("mcp_elicit.server.app", "mcp_elicit.transport.uvicorn_runner"),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_only(tree: ast.Module) -> set[int]:
    """The nodes under ``if TYPE_CHECKING:``."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                for child in node.body:
                    found.update(id(sub) for sub in ast.walk(child))
    return found


def _imports() -> dict[str, set[tuple[str, tuple[str, ...]]]]:
    """module -> {(imported module, names imported from it)} for every mcp_elicit import."""
    found: dict[str, set[tuple[str, tuple[str, ...]]]] = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_only(tree)
        here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "mcp_elicit":
                        found[module].add((alias.name, ()))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[: len(here) - node.level + 1]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                if target.split(".")[0] == "mcp_elicit":
                    found[module].add((target, tuple(alias.name for alias in node.names)))
    return found


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "<root>"


IMPORTS = _imports()


def test_every_layer_is_known() -> None:
    layers = {_layer(module) for module in IMPORTS} | {
        _layer(_module_name(path)) for path in PACKAGE.rglob("*.py")
    }
    assert layers <= set(BELOW), f"add {sorted(layers - set(BELOW))} to BELOW in this test"


@pytest.mark.parametrize("layer", sorted(BELOW))
def test_no_arrow_points_up(layer: str) -> None:
    up = sorted(
        f"{module} imports {target}"
        for module, targets in IMPORTS.items()
        if _layer(module) == layer
        for target, _ in targets
        if _layer(target) != layer and _layer(target) not in BELOW[layer] and (module, target) not in DEFERRED
    )
    assert up == []


def test_connect_uses_only_the_public_names_of_server() -> None:
    private = sorted(
        f"{module} imports {target}: {', '.join(names)}"
        for module, targets in IMPORTS.items()
        if _layer(module) == "connect"
        for target, names in targets
        if _layer(target) == "server"
        and (any(part.startswith("_") for part in target.split(".")) or any(n.startswith("_") for n in names))
    )
    assert private == []


def test_the_packages_form_no_cycle() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, targets in IMPORTS.items():
        for target, _ in targets:
            if _layer(module) != _layer(target) and (module, target) not in DEFERRED:
                graph[_layer(module)].add(_layer(target))
    seen: set[str] = set()
    path: list[str] = []

    def visit(layer: str) -> None:
        if layer in path:
            raise AssertionError("import cycle: " + " -> ".join([*path[path.index(layer) :], layer]))
        if layer in seen:
            return
        path.append(layer)
        for below in sorted(graph[layer]):
            visit(below)
        path.pop()
        seen.add(layer)

    for layer in sorted(graph):
        visit(layer)


def test_the_deferred_arrows_are_only_inside_functions() -> None:
    """The transport imports of server/app.py run when a method is called, never at import."""
    tree = ast.parse((PACKAGE / "server" / "app.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
            assert not (module or "").startswith("mcp_elicit.transport"), module
