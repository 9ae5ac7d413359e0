"""The storage layer sits below ``mcp_elicit.state``: it imports nothing else of mcp_elicit but
``mcp_elicit._extras`` (the message naming the [postgres] extra, which imports nothing), and
psycopg only when a PostgreSQL database is made (never at a module's top level)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import mcp_elicit.storage

STORAGE = Path(mcp_elicit.storage.__file__).parent


def _imports(nodes: list[ast.stmt] | ast.Module) -> list[tuple[str, int]]:
    """(module, level) of every import among ``nodes`` (a whole module: all of them)."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(nodes) if isinstance(nodes, ast.Module) else nodes:
        if isinstance(node, ast.Import):
            found += [(alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or "", node.level))
    return found


def test_the_layer_imports_nothing_above_it_and_psycopg_lazily() -> None:
    files = sorted(STORAGE.glob("*.py"))
    assert {f.name for f in files} >= {"database.py", "sqlite.py", "postgres.py", "pg_connection.py"}
    for path in files:
        tree = ast.parse(path.read_text(), filename=str(path))
        for module, level in _imports(tree):
            assert level <= 1, f"{path.name}: a relative import above the storage package"
            own = level == 1 or module == "mcp_elicit._extras"
            assert own or not module.startswith("mcp_elicit"), f"{path.name} imports {module}"
        # What runs when the module is imported: its top-level statements (not those under
        # ``if TYPE_CHECKING:`` or inside functions).
        for module, level in _imports(tree.body):
            assert level == 1 or not module.startswith("psycopg"), f"{path.name} imports {module} on import"


PROBE = """
import json, sys
from mcp_elicit.storage.postgres import PostgresDatabase
from mcp_elicit.storage.sqlite import SQLiteDatabase
imported = any(m == "psycopg" or m.startswith("psycopg.") for m in sys.modules)
PostgresDatabase("dbname=test", (), label="PostgreSQL probe", unavailable=RuntimeError, timeout=1, where="-")
made = any(m == "psycopg" or m.startswith("psycopg.") for m in sys.modules)
print(json.dumps([imported, made]))
"""


def test_psycopg_is_imported_when_a_postgres_database_is_made() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [False, True]
