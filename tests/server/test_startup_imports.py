"""A server answers its first requests without loading what only a flow needs.

A stdio server is spawned per session and answers ``server/discover`` and ``tools/list`` first;
the form compiler and lint, the URL checks and ``cryptography`` load at the first form, URL or
sealed state instead. Each check runs in a fresh interpreter (``sys.modules`` is per process).
"""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import asyncio, json, sys
from mcp_elicit import Context, Server
from mcp_elicit.wire.jsonrpc import Request

app = Server("probe")

@app.tool()
async def ask(title: str, ctx: Context) -> str:
    answer = await ctx.elicit(f"Create {title}?", None)
    return "yes" if answer.accepted else "no"

def loaded():
    names = ("mcp_elicit.schema.spec", "mcp_elicit.schema.lint", "mcp_elicit.server.urls",
             "cryptography")
    return {n: n in sys.modules for n in names}

meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
async def main():
    report = {"start": loaded()}
    await app.dispatch(Request(1, "server/discover", {"_meta": meta}))
    await app.dispatch(Request(2, "tools/list", {"_meta": meta}))
    report["listed"] = loaded()
    call = {"_meta": meta, "name": "ask", "arguments": {"title": "T"}}
    result = await app.dispatch(Request(3, "tools/call", call))
    report["asked"] = loaded()
    report["result_type"] = result["resultType"]
    print(json.dumps(report))
asyncio.run(main())
"""


def test_first_answers_load_no_form_url_or_crypto_machinery() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    report = json.loads(out)
    lazy = ["mcp_elicit.schema.spec", "mcp_elicit.schema.lint", "mcp_elicit.server.urls", "cryptography"]
    for stage in ("start", "listed"):
        assert [name for name in lazy if report[stage][name]] == [], stage
    # The first question builds its form and seals the flow: now they are loaded.
    assert report["result_type"] == "input_required"
    assert report["asked"]["mcp_elicit.schema.spec"] is True
    assert report["asked"]["cryptography"] is True


STDIO_SERVER = """
import sys
from mcp_elicit import Server

app = Server("probe")

@app.tool()
async def legacy_loaded() -> str:
    return str("mcp_elicit.server.legacy.session" in sys.modules)

app.run_stdio()
"""


def test_a_2026_stdio_server_never_loads_the_2025_session_code() -> None:
    """The 2025-11-25 session code loads with a first ``initialize``; a 2026-07-28 client's
    requests (``server/discover``, a call) are answered without it."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"_meta": meta, "name": "legacy_loaded", "arguments": {}},
        },
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    done = subprocess.run(
        [sys.executable, "-c", STDIO_SERVER], input=stdin, capture_output=True, text=True, timeout=60
    )
    answers = {message["id"]: message for message in map(json.loads, done.stdout.splitlines())}
    assert "supportedVersions" in answers[1]["result"]
    assert answers[2]["result"]["content"][0]["text"] == "False"
