"""The split of the dependencies stays true: every third-party package a module of ``src/``
imports is installed by the core or by an extra of the part that module belongs to, the core
declares nothing it does not import, and the modules ``mcp_elicit._extras`` checks for come with
the extra it names.

Imports are read from the source (ast), function bodies included; those under
``if TYPE_CHECKING:`` load nothing and are left out. Import names are mapped to distributions with
this environment's metadata (the test extra installs every extra).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections import defaultdict
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from mcp_elicit._extras import PROVIDES

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "mcp_elicit"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
RUNTIME_EXTRAS = ("http", "cli", "connect", "postgres", "pydantic", "fast")

# The parts of the core install: everything but the client, the kit, the demo and the command.
CORE_PARTS = {"<root>", "_closing", "_extras", "schema", "wire", "storage", "state", "server", "transport"}
# The extras of each part (its subpackage); a subpackage not named here is core only.
PART_EXTRAS: dict[str, tuple[str, ...]] = {
    "server": ("pydantic",),  # tool arguments typed by models
    "storage": ("postgres",),
    "transport": ("http", "fast"),
    "client": ("cli",),
    "connect": ("connect",),
    "demo": ("connect",),
    "cli": ("cli", "connect"),  # `call` and `tools`; `demo`
}


def _name(requirement: str) -> tuple[str, list[str]]:
    """A requirement's normalised distribution name and its extras."""
    found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?", requirement)
    assert found, requirement
    extras = [extra.strip() for extra in (found.group(2) or "").split(",") if extra.strip()]
    return re.sub(r"[-_.]+", "-", found.group(1)).lower(), extras


def _installs(requirements: list[str]) -> set[str]:
    """The distributions ``requirements`` install, this project's own extras followed."""
    names: set[str] = set()
    for requirement in requirements:
        name, extras = _name(requirement)
        if name == "mcp-elicit":
            for extra in extras:
                names |= _installs(PROJECT["optional-dependencies"][extra])
        else:
            names.add(name)
    return names


CORE = _installs(PROJECT["dependencies"])
EXTRA = {extra: _installs(requirements) for extra, requirements in PROJECT["optional-dependencies"].items()}
DISTRIBUTIONS = {
    module: {re.sub(r"[-_.]+", "-", name).lower() for name in names}
    for module, names in packages_distributions().items()
}


def _type_only(tree: ast.Module) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                found.update(id(sub) for sub in ast.walk(child))
    return found


def _third_party_imports() -> dict[str, set[str]]:
    """module (dotted) -> the top-level names of the third-party modules it imports."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_only(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top not in ("mcp_elicit", "__future__"):
                    found[module].add(top)
    return found


IMPORTS = _third_party_imports()


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else "<root>"


def test_the_source_imports_third_party_packages() -> None:
    # The reading works: the sealing, the codec and the HTTP server are among them.
    assert {"cryptography", "orjson", "uvicorn"} <= set().union(*IMPORTS.values())


def test_every_third_party_import_is_installed_by_the_core_or_an_extra_of_its_part() -> None:
    wrong = []
    for module, tops in sorted(IMPORTS.items()):
        extras = PART_EXTRAS.get(_part(module), ())
        allowed = CORE.union(*(EXTRA[extra] for extra in extras))
        for top in sorted(tops):
            distributions = DISTRIBUTIONS.get(top)
            if not distributions:
                wrong.append(f"{module} imports {top}, which no installed distribution provides")
            elif not distributions & allowed:
                where = f"the core or [{','.join(extras)}]" if extras else "the core"
                wrong.append(f"{module} imports {top} ({', '.join(sorted(distributions))}), not in {where}")
    assert wrong == []


def test_the_core_declares_only_what_its_modules_import() -> None:
    imported = set().union(*(tops for module, tops in IMPORTS.items() if _part(module) in CORE_PARTS))
    used = set().union(*(DISTRIBUTIONS[top] for top in imported if top in DISTRIBUTIONS))
    assert sorted(CORE - used) == []


@pytest.mark.parametrize("extra", sorted(PROVIDES))
def test_each_module_the_missing_extra_check_looks_for_comes_with_that_extra(extra: str) -> None:
    for module in PROVIDES[extra]:
        assert DISTRIBUTIONS[module] & EXTRA[extra], f"{module} is not installed by [{extra}]"
        assert not DISTRIBUTIONS[module] & CORE, f"{module} comes with the core: nothing to check"


def test_all_is_every_runtime_extra_and_test_has_all() -> None:
    assert set(PROVIDES) <= set(RUNTIME_EXTRAS)
    assert set(PROJECT["optional-dependencies"]) == {*RUNTIME_EXTRAS, "all", "test"}
    assert EXTRA["all"] == set().union(*(EXTRA[extra] for extra in RUNTIME_EXTRAS))
    assert EXTRA["all"] <= EXTRA["test"]
