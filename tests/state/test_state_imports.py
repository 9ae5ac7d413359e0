"""Importing mcp_elicit.state stays cheap: no psycopg, sqlite3 or asyncio until a store is used."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
before = set(sys.modules)
import mcp_elicit.state as state
after_import = set(sys.modules) - before
from mcp_elicit.state import SQLiteSingleUseStore
after_sqlite = set(sys.modules) - before
from mcp_elicit.state import PostgresSingleUseStore
after_pg_class = set(sys.modules) - before
PostgresSingleUseStore("dbname=test")
after_pg_store = set(sys.modules) - before
def has(mods, name):
    return any(m == name or m.startswith(name + ".") for m in mods)
print(json.dumps({
    "import": [has(after_import, n) for n in ("psycopg", "sqlite3", "asyncio")],
    "sqlite": has(after_sqlite, "sqlite3"),
    "pg_class": has(after_pg_class, "psycopg"),
    "pg_store": has(after_pg_store, "psycopg"),
    "all": sorted(state.__all__),
}))
"""


def test_import_is_light_and_psycopg_is_lazy() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    report = json.loads(out)
    assert report["import"] == [False, False, False]
    assert report["sqlite"] is True
    assert report["pg_class"] is False  # the class alone does not import psycopg
    assert report["pg_store"] is True  # creating a store does
    assert report["all"] == sorted(
        [
            "INVALID_STATE_MESSAGE",
            "KeyRing",
            "PostgresSingleUseStore",
            "RejectReason",
            "RequestBinding",
            "SQLiteSingleUseStore",
            "SingleUseStore",
            "StateRejected",
            "StateSealer",
            "StateStoreUnavailable",
            "StateTooLarge",
            "Unsealed",
            "args_digest",
        ]
    )
