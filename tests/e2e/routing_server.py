"""An instance of a deployment whose 2025-11-25 sessions are routed through PostgreSQL, run as a
real process for the tests of several instances (``test_session_routing.py``).

    python tests/e2e/routing_server.py --port 8123 --dsn "host=127.0.0.1 ..." --instance a1

Every instance is given the same state keys and the same router (database and channel).
``Authorization: Bearer <name>`` names the principal ``test|<name>``. The event loop is uvloop
unless ``MCP_ELICIT_TEST_LOOP=asyncio`` (as in ``e2e_server.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: tests.shared_tools

if os.environ.get("MCP_ELICIT_TEST_LOOP") == "asyncio":
    sys.modules["uvloop"] = None  # type: ignore[assignment]  # "import uvloop" fails: not installed

from mcp_elicit import Context, Server
from mcp_elicit.storage import PostgresSessionRouter
from tests.shared_tools import add_shared_tools, bearer

KEYS = ["routing-tests-only-secret-abcdefghijklmnopqrstuvwxyz"]
NOTE = "notes://current"


def build(args: argparse.Namespace) -> Server:
    router = PostgresSessionRouter(
        args.dsn,
        channel=args.channel,
        owner_timeout=args.owner_timeout,
        keepalive=args.keepalive,
        max_relays=args.max_relays,
        timeout=args.timeout,
    )
    app = Server("routing", version="1.0.0", state_keys=KEYS, session_router=router)
    markers = Path(args.marker_dir)
    add_shared_tools(app, lambda: markers)

    @app.tool()
    async def whoami(ctx: Context) -> str:
        """The instance that runs the call (the one that holds the session)."""
        return args.instance

    @app.tool()
    async def touch(uri: str) -> str:
        """Tells the sessions of this instance that watch ``uri`` that it changed."""
        return f"told {await app.resource_updated(uri)}"

    @app.tool()
    async def big(size: int) -> str:
        return "x" * size

    @app.tool()
    async def event_loop() -> str:
        return type(asyncio.get_running_loop()).__module__.split(".")[0]

    @app.resource(NOTE, mime_type="text/plain")
    async def note() -> str:
        return "the current note"

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--instance", required=True)
    parser.add_argument("--channel", default="mcp_elicit_sessions")
    parser.add_argument("--marker-dir", default=".")
    parser.add_argument("--owner-timeout", type=float, default=1.5)
    parser.add_argument("--keepalive", type=float, default=0.5)
    parser.add_argument("--max-relays", type=int, default=1000)
    parser.add_argument("--max-message-bytes", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds a database operation may take")
    args = parser.parse_args()
    app = build(args)
    if args.max_message_bytes is not None:
        app.max_message_bytes = args.max_message_bytes
    from mcp_elicit.transport.http_app import HttpApp
    from mcp_elicit.transport.uvicorn_runner import serve

    # The instance named, so that the tests know which one a session id names.
    asgi = HttpApp(app, authenticate=bearer, sessions={"instance": args.instance})
    serve(asgi, host="127.0.0.1", port=args.port, head_timeout=5)


if __name__ == "__main__":
    main()
