"""The server under test in the reliability harness (one process per instance).

    python server.py http  --port P --keys-file F --dsn DSN --table T --effects-table E [...]
    python server.py stdio --keys-file F

Tools:

* ``order(item)``: asks one form question (``value``: a string the client makes unique to its
  flow), then writes one side-effect row through ``ctx.once("effect", ...)`` keyed by the step's
  idempotency key (``INSERT ... ON CONFLICT DO NOTHING`` in PostgreSQL), and returns
  ``ordered <item> value <value>``.
* ``note(item)``: the same question, no side effect (a second tool to swap states with).
* ``keep(data)``: takes any JSON object, asks the same question (deeply nested arguments).
* ``slow(seconds)``: sleeps (at most 30 s) and returns ``slept``.
* the crash tool (its name is given with ``--crash-tool``, random per run, so that hostile input
  cannot call it by chance): like ``order``, but the process SIGKILLs itself right after the
  side-effect row was written for the first time: a crash between the side effect and the answer.

HTTP: ``Authorization: Bearer <user>`` becomes the principal ``bench|<user>`` (so states can be
swapped between users); no header is anonymous. ``--body-timeout`` wraps the app in
:class:`BodyTimeout` (a request body that does not arrive in time gets 408): the change proposed
for ``HttpApp._read_body``, tried here from the outside. ``--header-timeout`` gives uvicorn a
bound on the request head (the library's
:func:`mcp_elicit.transport.head_timeout.head_timeout_protocol`, which ``serve()`` uses too). On
SIGHUP the key file is re-read.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from mcp_elicit import Context, Server
from mcp_elicit.state import PostgresSingleUseStore
from mcp_elicit.state.key_file import KeyFile
from mcp_elicit.transport.head_timeout import head_timeout_protocol
from mcp_elicit.wire.errors import INTERNAL_ERROR, McpError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

log = logging.getLogger("reliability.server")


@dataclass
class Pick:
    value: str


class EffectsUnavailable(McpError):
    def __init__(self, detail: str) -> None:
        super().__init__(
            INTERNAL_ERROR,
            "Internal error: the orders database is unavailable; retry the request shortly",
            {"reason": "effects_unavailable", "retryable": True, "detail": detail[:200]},
        )


class Effects:
    """The tool's side-effect table: one row per idempotency key.

    One connection, one lock, every operation under a timeout; a failed connection is dropped
    and the next call reconnects. Failures become a retryable JSON-RPC error.
    """

    def __init__(self, dsn: str, table: str, timeout: float = 3.0) -> None:
        from psycopg import sql

        self.dsn = dsn
        self.timeout = timeout
        self._conn: Any = None
        self._lock = asyncio.Lock()
        ident = sql.Identifier(table)
        self._create = sql.SQL(
            "CREATE TABLE IF NOT EXISTS {} (idem_key text PRIMARY KEY, item text NOT NULL, "
            "value text NOT NULL, pid integer NOT NULL, at timestamptz NOT NULL DEFAULT now())"
        ).format(ident)
        self._insert = sql.SQL(
            "INSERT INTO {} (idem_key, item, value, pid) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (idem_key) DO NOTHING RETURNING 1"
        ).format(ident)

    async def _connection(self) -> Any:
        import psycopg

        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True, connect_timeout=2)
        await conn.execute("SET statement_timeout = 3000")
        with contextlib.suppress(psycopg.errors.UniqueViolation, psycopg.errors.DuplicateTable):
            await conn.execute(self._create)
        self._conn = conn
        return conn

    async def record(self, key: str, item: str, value: str) -> bool:
        """Write the row for ``key``; ``True`` if this call inserted it."""
        import psycopg

        try:
            async with asyncio.timeout(self.timeout):
                async with self._lock:
                    conn = await self._connection()
                    try:
                        cursor = await conn.execute(self._insert, (key, item, value, os.getpid()))
                        return await cursor.fetchone() is not None
                    except BaseException:
                        self._conn = None
                        with contextlib.suppress(Exception):
                            await conn.close()
                        raise
        except (psycopg.Error, OSError, TimeoutError) as exc:
            log.warning("orders database: %s: %s", type(exc).__name__, exc)
            raise EffectsUnavailable(f"{type(exc).__name__}: {exc}") from None


class BodyTimeout:
    """ASGI middleware: a request body that stops arriving for ``timeout`` seconds gets 408.

    Once the body is complete, ``receive`` is passed through untouched (the transport waits on
    it for ``http.disconnect``, which may take as long as the handler runs).
    """

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], timeout: float) -> None:
        self.app = app
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body_done = False
        started = False

        async def guarded_receive() -> Message:
            nonlocal body_done
            if body_done:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), self.timeout)
            except TimeoutError:
                raise _BodyTimedOut from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, guarded_receive, tracking_send)
        except _BodyTimedOut:
            if started:
                raise
            body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: the request body did not arrive in time"}}'  # noqa: E501
            await send(
                {
                    "type": "http.response.start",
                    "status": 408,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"connection", b"close"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})


class _BodyTimedOut(Exception):
    pass


def build(args: argparse.Namespace) -> tuple[Server, Effects | None, KeyFile]:
    keys = KeyFile(args.keys_file, check_interval=args.key_check_interval)
    store = None
    effects = None
    if args.dsn:
        store = PostgresSingleUseStore(args.dsn, table=args.table, timeout=3.0)
        effects = Effects(args.dsn, args.effects_table)
    app = Server(
        "reliability",
        version="1.0.0",
        state_keys=keys,
        state_ttl=args.ttl,
        single_use=store,
        single_use_redelivery=store is not None,
        max_message_bytes=args.max_message_bytes,
    )

    async def write_effect(key: str, item: str, value: str) -> bool:
        if effects is None:
            return True
        return await effects.record(key, item, value)

    @app.tool()
    async def order(item: str, ctx: Context) -> str:
        """Order an item: one question, one side effect, once per flow."""
        answer = await ctx.elicit(f"Which value for {item}?", Pick, key="pick")
        if not answer.accepted or answer.data is None:
            return f"not ordered {item}"
        value = answer.data.value
        await ctx.once("effect", lambda key: write_effect(key, item, value))
        return f"ordered {item} value {value}"

    @app.tool()
    async def note(item: str, ctx: Context) -> str:
        """The same question, no side effect."""
        answer = await ctx.elicit(f"Which value for {item}?", Pick, key="pick")
        return f"noted {item} value {answer.data.value if answer.data else None}"

    @app.tool()
    async def keep(data: dict[str, Any], ctx: Context) -> str:
        """Takes any JSON object (its digest binds the state), asks one question."""
        answer = await ctx.elicit("Keep it?", Pick, key="pick")
        return f"kept {len(data)} keys, value {answer.data.value if answer.data else None}"

    @app.tool()
    async def slow(seconds: float) -> str:
        """Sleep (at most 30 s)."""
        await asyncio.sleep(max(0.0, min(float(seconds), 30.0)))
        return "slept"

    if args.crash_tool:

        async def crash_after_effect(key: str, item: str, value: str) -> bool:
            inserted = await write_effect(key, item, value)
            if inserted:  # the first attempt: die between the side effect and the answer
                os.kill(os.getpid(), signal.SIGKILL)
            return inserted

        async def crash(item: str, ctx: Context) -> str:
            answer = await ctx.elicit(f"Which value for {item}?", Pick, key="pick")
            if not answer.accepted or answer.data is None:
                return f"not ordered {item}"
            value = answer.data.value
            await ctx.once("effect", lambda key: crash_after_effect(key, item, value))
            return f"ordered {item} value {value}"

        app.tool(name=args.crash_tool)(crash)

    return app, effects, keys


async def authenticate(headers: Mapping[str, str]) -> str | None:
    value = headers.get("authorization")
    if value is None or not value.startswith("Bearer "):
        return None
    user = value[len("Bearer ") :].strip()
    return f"bench|{user}" if user else None


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("transport", choices=["http", "stdio"])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--keys-file", required=True)
    ap.add_argument("--key-check-interval", type=float, default=0.5)
    ap.add_argument("--dsn", default="")
    ap.add_argument("--table", default="mcp_elicit_used_state")
    ap.add_argument("--effects-table", default="reliability_effects")
    ap.add_argument("--ttl", type=float, default=30.0)
    ap.add_argument("--crash-tool", default="")
    ap.add_argument("--max-message-bytes", type=int, default=4 * 1024 * 1024)
    ap.add_argument("--body-timeout", type=float, default=0.0)
    ap.add_argument("--keep-alive", type=int, default=5)
    ap.add_argument("--header-timeout", type=float, default=0.0)
    args = ap.parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )

    app, _, keys = build(args)
    keys.install_sighup()
    if args.transport == "stdio":
        app.run_stdio()
        return
    import uvicorn

    asgi: Any = app.asgi(authenticate=authenticate)
    if args.body_timeout > 0:
        asgi = BodyTimeout(asgi, args.body_timeout)
    http: Any = head_timeout_protocol(args.header_timeout) if args.header_timeout > 0 else "httptools"
    uvicorn.run(
        asgi,
        host="127.0.0.1",  # loopback only
        port=args.port,
        loop="uvloop",
        http=http,
        workers=1,
        access_log=False,
        log_level="warning",
        lifespan="off",
        timeout_keep_alive=args.keep_alive,
        backlog=2048,
    )


if __name__ == "__main__":
    main()
