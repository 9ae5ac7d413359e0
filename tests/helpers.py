"""Shared test helpers: an answerer that records, hand-written requests to a server in this
process, and the servers tests start."""

from __future__ import annotations

import asyncio
import getpass
import inspect
import itertools
import json
import logging
import os
import socket
import stat
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import uvicorn

from mcp_elicit.client import Answer, FormQuestion, UrlQuestion
from mcp_elicit.client.asgi_transport import AsgiApp, AsgiTransport, app_of
from mcp_elicit.client.transport import Outgoing
from mcp_elicit.server.app import Server
from mcp_elicit.wire.errors import McpError
from mcp_elicit.wire.jsonrpc import ErrorResponse, Notification, Request
from mcp_elicit.wire.meta import PROTOCOL_VERSION_KEY

if TYPE_CHECKING:
    from mcp_elicit.transport.http_app import HttpApp

FORM_AND_URL: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
_ids = itertools.count(1)
_NAMED = ("tools/call", "prompts/get", "resources/read")  # the methods whose target is a header


def meta(capabilities: dict[str, Any] | None = None, version: str = "2026-07-28") -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": FORM_AND_URL if capabilities is None else capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1"},
    }


def request(
    method: str, params: dict[str, Any] | None = None, *, capabilities: dict[str, Any] | None = None
) -> Request:
    body = dict(params or {})
    body.setdefault("_meta", meta(capabilities))
    return Request(next(_ids), method, body)


def signed_in(server: Server, principal: str | None) -> HttpApp:
    """``server``'s MCP endpoint (its Streamable HTTP app) with every request made by
    ``principal``, as if a validated token named them (None: anonymous). For a server with a
    ConnectKit this is its ``/mcp`` without the kit's identity, whose tokens need an
    authorization server these tests do not run."""
    from mcp_elicit.transport.http_app import HttpApp

    async def authenticate(headers: Mapping[str, str]) -> str | None:
        return principal

    return HttpApp(server, authenticate=authenticate)


async def post(
    target: Server | AsgiApp,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    capabilities: dict[str, Any] | None = None,
    notifications: list[Notification] | None = None,
) -> dict[str, Any]:
    """One JSON-RPC request, written by hand, to a server in this process: a real POST through
    the path ``Client.connect(server)`` takes (the server's HTTP app and header checks, the
    client's reply parsing), for what no honest client sends. ``params`` gets a ``_meta``
    (:func:`meta`) unless it has one. Returns the result; a JSON-RPC error is raised as
    :class:`McpError`. The server's notifications about the request go to ``notifications``."""
    found = app_of(target)
    assert found is not None, f"not a server in this process: {target!r}"
    app, path = found
    body = dict(params or {})
    body.setdefault("_meta", meta(capabilities))
    request_id = next(_ids)
    envelope = body["_meta"]
    version = envelope.get(PROTOCOL_VERSION_KEY) if isinstance(envelope, dict) else None
    name = body.get("uri" if method == "resources/read" else "name") if method in _NAMED else None
    outgoing = Outgoing(
        request_id,
        method,
        # The standard library's JSON: it writes what orjson cannot (integers past 64 bits).
        json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": body}).encode(),
        version if isinstance(version, str) else "2026-07-28",  # the header says what _meta says
        name if isinstance(name, str) else None,
    )
    transport = AsgiTransport(app, url=f"http://in-process{path}")
    response = await transport.send(outgoing, None if notifications is None else notifications.append)
    if isinstance(response, ErrorResponse):
        raise response.to_error()
    assert isinstance(response.result, dict), response
    return response.result


class RawCall:
    """One call's rounds as hand-written JSON-RPC (:func:`post`), for tests that must do what no
    honest client does: replay or tamper with ``requestState``, answer keys never asked, send
    answers that fail validation, or look at the ``InputRequiredResult`` itself. Each
    :meth:`send` carries the last round's ``requestState`` unless told otherwise. A test that
    plays a normal client uses ``Client.connect(server)`` instead."""

    def __init__(
        self,
        target: Server | AsgiApp,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        method: str = "tools/call",
        capabilities: dict[str, Any] | None = None,
        principal: str | None = None,
    ) -> None:
        if principal is not None:
            assert isinstance(target, Server), "principal= needs the Server itself"
            target = signed_in(target, principal)
        self.target = target
        self.method = method
        self.target_key = "uri" if method == "resources/read" else "name"
        self.tool = tool
        self.arguments = arguments or {}
        self.capabilities = capabilities
        self.state: str | None = None
        self.results: list[dict[str, Any]] = []

    async def send(
        self,
        responses: dict[str, Any] | None = None,
        *,
        state: Any = ...,
        extra: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {self.target_key: self.tool}
        if self.method != "resources/read":
            params["arguments"] = self.arguments
        if responses is not None:
            params["inputResponses"] = responses
        chosen = self.state if state is ... else state
        if chosen is not None:
            params["requestState"] = chosen
        if extra:
            params.update(extra)
        result = await post(self.target, self.method, params, capabilities=self.capabilities)
        self.results.append(result)
        self.state = result.get("requestState")
        return result

    async def error(self, responses: dict[str, Any] | None = None, *, state: Any = ...) -> McpError:
        with pytest.raises(McpError) as info:
            await self.send(responses, state=state)
        return info.value


def _never(question: Any) -> Answer:
    raise AssertionError(f"this answerer was not supposed to be asked {question!r}")


@dataclass
class Script:
    """An answerer driven by functions (each given the question, returning an
    :class:`~mcp_elicit.client.Answer`, or awaitable one); records every question it was shown."""

    form: Callable[[FormQuestion], Answer | Awaitable[Answer]] = _never
    url: Callable[[UrlQuestion], Answer | Awaitable[Answer]] = _never
    mode_names: Iterable[str] = ("form", "url")
    asked: list[FormQuestion | UrlQuestion] = field(default_factory=list)

    @property
    def modes(self) -> frozenset[str]:
        return frozenset(self.mode_names)

    async def answer_form(self, question: FormQuestion) -> Answer:
        self.asked.append(question)
        answer = self.form(question)
        return await answer if inspect.isawaitable(answer) else answer

    async def answer_url(self, question: UrlQuestion) -> Answer:
        self.asked.append(question)
        answer = self.url(question)
        return await answer if inspect.isawaitable(answer) else answer


class UnusedModel:
    """A sampler the server is not meant to call: with it the client declares ``sampling``."""

    async def create_message(self, params: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError(f"this model was not supposed to be asked: {params!r}")


def text(result: dict[str, Any]) -> str:
    assert result["resultType"] == "complete", result
    return "".join(block["text"] for block in result["content"] if block["type"] == "text")


def only_key(result: dict[str, Any]) -> str:
    assert result["resultType"] == "input_required", result
    (key,) = result["inputRequests"]
    return str(key)


def accept(content: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"action": "accept", "content": content or {}}


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


async def wait_for_text(path: Path, expected: str, within: float = 5.0) -> str:
    """Poll until ``path`` holds ``expected`` (another process writes it); give up after ``within`` s."""
    for _ in range(int(within / 0.05)):
        if _read(path) == expected:
            break
        await asyncio.sleep(0.05)
    return _read(path)


class FakeClock:
    """A settable clock (``clock=`` of the stores, vault, sealers...) for expiry tests."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@contextmanager
def no_errors_logged(name: str = "mcp_elicit") -> Iterator[list[logging.LogRecord]]:
    """Every record of logger ``name`` at error level or above, asserted empty on the way out: in
    a test of bad input, a traceback in the log is an unexpected exception, whatever the peer got."""
    handler = _Records(logging.ERROR)
    logger = logging.getLogger(name)
    logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)
    assert not handler.records, [record.getMessage() for record in handler.records]


class _Records(logging.Handler):
    def __init__(self, level: int) -> None:
        super().__init__(level)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (the only address tests listen on)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def find_pg_dsn(what: str) -> str:
    """A PostgreSQL DSN that answers (``MCP_ELICIT_PG_DSN``, else 127.0.0.1:5432/test as postgres
    or the OS user), or a clear test failure naming ``what`` cannot be tested; a skip instead only
    with ``MCP_ELICIT_SKIP_PG=1``."""
    import psycopg
    import pytest

    explicit = os.environ.get("MCP_ELICIT_PG_DSN")
    users = ["postgres"]
    try:
        me = getpass.getuser()
    except Exception:  # pragma: no cover - no OS user name
        me = ""
    if me and me not in users:
        users.append(me)
    candidates = (
        [explicit]
        if explicit
        else [f"host=127.0.0.1 port=5432 dbname=test user={user} connect_timeout=3" for user in users]
    )
    errors: list[str] = []
    for dsn in candidates:
        try:
            with psycopg.connect(dsn) as conn:
                conn.execute("SELECT 1")
            return dsn
        except psycopg.Error as exc:
            errors.append(f"{dsn!r}: {exc}".strip())
    message = (
        f"PostgreSQL is unreachable, so {what} cannot be tested.\n"
        "Tried:\n  " + "\n  ".join(errors) + "\n"
        "Start PostgreSQL on 127.0.0.1:5432 with a database 'test' (trust auth), or point "
        "MCP_ELICIT_PG_DSN at one, or set MCP_ELICIT_SKIP_PG=1 to skip these tests."
    )
    if os.environ.get("MCP_ELICIT_SKIP_PG") == "1":
        pytest.skip(message)
    pytest.fail(message, pytrace=False)


def bound_socket() -> socket.socket:
    """A socket bound to a free port on 127.0.0.1, not listening yet: its address is known
    before the server that will listen on it is built. Made with the TCP protocol number, not 0:
    asyncio sets TCP_NODELAY only on sockets that say so, and without it a response written in
    two parts (head, then body) waits ~40 ms for the client's delayed ACK."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    return sock


class InProcessServer:
    """uvicorn serving ``app`` on 127.0.0.1 (on ``sock``, else a free port) in this process, the
    one way tests serve an app over real HTTP without a process of its own:

    * ``with InProcessServer(app)``: in a background thread with its own event loop, of the kind
      the test runs on (uvloop for a test on uvloop, else asyncio's); for a test that blocks, or an
      app whose async objects belong to that loop. ``on_close``, when set, runs in that loop after
      the server stopped (to close stores the app opened in it).
    * ``async with InProcessServer(app)``: in the test's own event loop, for an app that shares
      the test's async objects (stores the test opened); ``on_close`` runs there.
    """

    def __init__(self, app: Any, sock: socket.socket | None = None) -> None:
        self.sock = bound_socket() if sock is None else sock
        self.port = int(self.sock.getsockname()[1])
        config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
        self.server = uvicorn.Server(config)
        self.on_close: Callable[[], Awaitable[None]] | None = None
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        self._uvloop = type(running).__module__.startswith("uvloop")
        self.thread = threading.Thread(target=self._run, daemon=True)
        self._task: asyncio.Task[None] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _serve(self) -> None:
        try:
            await self.server.serve(sockets=[self.sock])
        finally:
            if self.on_close is not None:
                await self.on_close()

    # -- in a thread of its own ------------------------------------------------------------------
    def _run(self) -> None:
        if self._uvloop:
            import uvloop

            uvloop.run(self._serve())
        else:
            asyncio.run(self._serve())

    def __enter__(self) -> InProcessServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("test server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()

    # -- in the test's event loop ----------------------------------------------------------------
    async def __aenter__(self) -> InProcessServer:
        self._task = asyncio.create_task(self._serve())
        deadline = time.monotonic() + 10
        while not self.server.started:
            if self._task.done():
                self._task.result()  # why it failed
                raise RuntimeError("test server stopped before it started")
            if time.monotonic() > deadline:
                raise RuntimeError("test server did not start")
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.should_exit = True
        if self._task is not None:
            await self._task
        self.sock.close()


def file_modes(folder: Path) -> dict[str, int]:
    """Permission bits of each file in ``folder`` (for the checks that stores keep files private)."""
    return {entry.name: stat.S_IMODE(entry.stat().st_mode) for entry in folder.iterdir()}
