"""Which source files a request runs through: an HTTP ``tools/call`` that asks one form, both
rounds, on a warm server (the form's type compiled by an earlier call, as for every call but a
process's first), from the ASGI app to the handler and back.

    .venv/bin/python bench/path_files.py          # the files and their line counts, then the total

It runs the server's ASGI app in process (httpx's ASGI transport posts the two rounds as any
client would, so the same script measures any version of the tree) and records, with a profile
hook, every ``mcp_elicit`` source file whose code runs while the app handles the second call. A
reader following that request from the socket to the handler and back holds these files.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src" / "mcp_elicit"
sys.path.insert(0, str(SRC.parent))

from mcp_elicit import Context, Server  # noqa: E402

logging.disable(logging.WARNING)  # the ephemeral-key warning
app = Server("path", state_keys=["path-files-" + "k" * 40])


@dataclass
class Confirm:
    ok: bool


@app.tool()
async def create_ticket(title: str, ctx: Context) -> str:
    answer = await ctx.elicit(f"Create {title}?", Confirm)
    return f"Created {title}" if answer.accepted and answer.data.ok else "Not created"


META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "path-files", "version": "1"},
}


async def flow(http: Any, title: str) -> None:
    """Both rounds over HTTP, as any 2026-07-28 client sends them."""
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "create_ticket",
    }
    params: dict[str, Any] = {"_meta": META, "name": "create_ticket", "arguments": {"title": title}}
    first = (
        await http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params},
            headers=headers,
        )
    ).json()["result"]
    (key,) = first["inputRequests"]
    retry = {
        **params,
        "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
        "requestState": first["requestState"],
    }
    final = (
        await http.post(
            "/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry}, headers=headers
        )
    ).json()["result"]
    assert final["content"][0]["text"] == f"Created {title}", final


async def main() -> None:
    import httpx

    seen: set[str] = set()
    recording = {"on": False}
    asgi = app.asgi()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and recording["on"]:
            name = frame.f_code.co_filename
            if name.startswith(str(SRC)):
                seen.add(name)

    async def traced(scope: Any, receive: Any, send: Any) -> None:
        sys.setprofile(profile)
        try:
            await asgi(scope, receive, send)
        finally:
            sys.setprofile(None)

    transport = httpx.ASGITransport(app=traced)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        await flow(http, "warm-up")
        recording["on"] = True
        await flow(http, "T-1")
    report(seen)


def report(seen: set[str]) -> None:
    total = 0
    for name in sorted(seen):
        lines = len(Path(name).read_text(encoding="utf-8").splitlines())
        total += lines
        print(f"{lines:6d}  {Path(name).relative_to(SRC.parent)}")
    packages = {Path(name).relative_to(SRC).parts[0] for name in seen}
    print(f"{len(seen)} files, {total} lines, in {len(packages)} packages ({', '.join(sorted(packages))})")


if __name__ == "__main__":
    asyncio.run(main())
