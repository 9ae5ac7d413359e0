"""``serve()`` (and so ``Server.run_http()``) runs the ASGI lifespan: an application of the
user's own around ours starts and stops as under plain uvicorn, and what our HTTP app holds is
let go at the shutdown. ``serve()`` used to pass ``lifespan="off"``: a wrapper's startup and
shutdown never ran, and neither did ``HttpApp.aclose`` (ending 2025-11-25 sessions, relaying)."""

from __future__ import annotations

import signal
import textwrap
from pathlib import Path

import httpx

from tests.helpers import free_port
from tests.server_process import PY, REPO, running_server

WRAPPER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    sys.path.insert(0, {src!r})
    from mcp_elicit import Server
    from mcp_elicit.state import KeyRing
    from mcp_elicit.transport.uvicorn_runner import serve

    MARKS = Path({marks!r})
    inner = Server("wrapped", state_keys=[KeyRing.generate_secret()]).asgi()
    inner_aclose = inner.aclose

    async def closing():
        (MARKS / "inner closed").touch()
        await inner_aclose()

    inner.aclose = closing

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":  # the user's app sees the lifespan, then hands it on

            async def seen():
                message = await receive()
                (MARKS / message["type"]).touch()
                return message

            await inner(scope, seen, send)
            return
        await inner(scope, receive, send)

    serve(app, host="127.0.0.1", port=int(sys.argv[1]))
    """
)


def test_serve_runs_the_lifespan_of_the_app_it_is_given(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    script = tmp_path / "wrapper.py"
    script.write_text(WRAPPER.format(src=str(REPO / "src"), marks=str(marks)))
    port = free_port()
    with running_server([PY, str(script), str(port)], log=tmp_path / "server.log", port=port) as server:
        assert (marks / "lifespan.startup").exists()
        reply = httpx.post(
            server.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers={"accept": "application/json", "content-type": "application/json"},
        )
        assert reply.headers["content-type"].startswith("application/json"), reply.text  # ours answered
        status = server.stop()
    assert status in (0, -signal.SIGTERM), server.log_text()
    seen = sorted(p.name for p in marks.iterdir())
    assert seen == ["inner closed", "lifespan.shutdown", "lifespan.startup"]
    assert "Traceback" not in server.log_text(), server.log_text()
