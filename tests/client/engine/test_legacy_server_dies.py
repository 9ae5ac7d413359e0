"""A 2025-11-25 server over HTTP that dies during a call: the client resumes the reply's stream
(the connection dropped after an event id) and finds nothing listening. What it says must be
about the call it lost, not that it cannot connect at all (it was connected a moment ago)."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from mcp_elicit.client import Client, ScriptedAnswerer, TransportError
from tests.helpers import free_port
from tests.server_process import PY, start_server

SERVER = textwrap.dedent(
    """
    import os, sys
    from dataclasses import dataclass
    from mcp_elicit import Context, Server

    app = Server("dies", state_keys=["dies-mid-call-tests-0123456789abcdefghijkl"])


    @dataclass
    class Ok:
        ok: bool


    @app.tool()
    async def die_after_answer(ctx: Context) -> str:
        await ctx.elicit("Go on?", Ok)
        os._exit(3)


    app.run_http(host="127.0.0.1", port=int(sys.argv[1]), quiet=True)
    """
)


async def test_a_server_gone_mid_call_is_named_as_such(tmp_path: Path) -> None:
    script = tmp_path / "dies.py"
    script.write_text(SERVER, encoding="utf-8")
    port = free_port()
    server = start_server([PY, str(script), str(port)], log=tmp_path / "server.log", port=port)
    try:
        answerer = ScriptedAnswerer([{"action": "accept", "content": {"ok": True}}])
        async with (
            asyncio.timeout(30),
            Client.connect(
                f"http://127.0.0.1:{port}/mcp", answerer=answerer, protocol="2025-11-25", request_timeout=20
            ) as client,
        ):
            with pytest.raises(TransportError) as lost:
                await client.call_tool("die_after_answer", {})
    finally:
        server.stop()
    said = str(lost.value)
    assert said.startswith("the connection dropped during tools/call, and resuming its reply failed: "), said
    assert said.endswith("(the server may have stopped; the call may have run)"), said
