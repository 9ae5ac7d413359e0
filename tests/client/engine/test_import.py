"""``import mcp_elicit.client`` stays light, and every exported name resolves."""

from __future__ import annotations

import json
import subprocess
import sys

import mcp_elicit.client as client_package

HEAVY = ("httpx", "prompt_toolkit", "rich", "ada_url", "asyncio", "mcp_elicit.client.client")


def imported_after(code: str) -> list[str]:
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=30, check=True
    )
    return list(json.loads(out.stdout))


def test_importing_the_package_imports_nothing_heavy() -> None:
    assert imported_after("import mcp_elicit.client") == []


def test_the_engine_does_not_import_httpx_until_an_http_client_starts() -> None:
    assert imported_after("from mcp_elicit.client import Client, McpClientError") == [
        "asyncio",
        "mcp_elicit.client.client",
    ]


def test_every_export_resolves_and_is_listed() -> None:
    exports = client_package._EXPORTS
    assert sorted(exports) == sorted(client_package.__all__)
    for name in exports:
        assert getattr(client_package, name).__name__ == name
    assert set(exports) <= set(dir(client_package))
