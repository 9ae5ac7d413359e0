"""A lean closed-loop load client for whole MCP 2025-11-25 elicitation flows over Streamable HTTP.

Each user opens one session, once (`initialize`, then `notifications/initialized`), and then
repeats whole flows back to back on two keep-alive HTTP/1.1 connections, as a real client's pool
would (HTTP/1.1 cannot send a request on a connection whose response is still streaming):

    call connection:     POST tools/call create_ticket {title}   -> 200 text/event-stream ...
                           event: elicitation/create request (id chosen by the server)
    session connection:  POST the ElicitResult {"action":"accept","content":{"ok":true}}
                           for that id                            -> 202
    call connection:       ... event: the call's result, then the stream ends

A flow counts once the result has been read, the stream has ended (the connection is free again)
and the answer's 202 has come. Every step is checked: the HTTP statuses, the session id, the
JSON-RPC ids (the result answers the call; the answer goes to the elicitation's own id), that the
elicitation is there and names the title, and the final text. Anything else -- another message on
the stream, a second question, a result before the question, a stream that ends without a
result -- is an error with its message, never a flow; the user then starts over with a new
session. Priming events (an id and no data) are skipped, as a client does.

Like `loadclient.py` (whose result type, percentiles and error grouping this reuses), it is a
callback-driven `asyncio.Protocol` state machine on uvloop with orjson, so that the client is
not what limits the servers.

Standalone use:
    python bench/legacyclient.py --port 8000 --users 16 --duration 10 --warmup 2
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from array import array
from typing import Any

import orjson

import loadclient as lc

LEGACY_VERSION = "2025-11-25"
TOOL = lc.TOOL
ELICIT = "elicitation/create"
CLIENT_INFO = {"name": "bench", "version": "1"}
CAPABILITIES = {"elicitation": {"form": {}}}
INIT_ID = 0  # the initialize request's id; calls use 1, 2, ...


# --------------------------------------------------------------------------- messages


def initialize_body(rid: int = INIT_ID) -> bytes:
    params = {"protocolVersion": LEGACY_VERSION, "capabilities": CAPABILITIES, "clientInfo": CLIENT_INFO}
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params})


INITIALIZED_BODY = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
_CALL1 = b'{"jsonrpc":"2.0","id":'
_CALL2 = b',"method":"tools/call","params":{"name":"' + TOOL.encode() + b'","arguments":{"title":'
_ANSWER1 = b'{"jsonrpc":"2.0","id":'
_ANSWER2 = b',"result":' + orjson.dumps(lc.ACCEPT_ANSWER) + b"}"


def call_body(rid: int, title_json: bytes) -> bytes:
    return _CALL1 + str(rid).encode() + _CALL2 + title_json + b"}}}"


def answer_body(elicitation_id: str | int) -> bytes:
    """The client's ElicitResult (accept, ok: true), for the elicitation request it answers."""
    return _ANSWER1 + orjson.dumps(elicitation_id) + _ANSWER2


def check_initialize(msg: Any, rid: int = INIT_ID) -> None:
    result = lc.result_from_message(msg if isinstance(msg, dict) else {}, rid)
    if result.get("protocolVersion") != LEGACY_VERSION or not isinstance(result.get("serverInfo"), dict):
        raise ValueError(f"unexpected initialize result: {result!r:.200}")


def check_elicitation(msg: Any, title: str) -> str | int:
    """Validate the server's question; return its request id (which the answer must carry)."""
    if not isinstance(msg, dict) or msg.get("method") != ELICIT:
        raise ValueError(f"expected an {ELICIT} request, got {msg!r:.200}")
    eid = msg.get("id")
    if isinstance(eid, bool) or not isinstance(eid, str | int):
        raise ValueError(f"{ELICIT} without a request id: {msg!r:.200}")
    params = msg.get("params")
    if not isinstance(params, dict) or params.get("mode", "form") != "form":
        raise ValueError(f"{ELICIT} is not a form question: {params!r:.200}")
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or "ok" not in properties:
        raise ValueError(f"{ELICIT} does not ask for ok: {schema!r:.200}")
    if title not in str(params.get("message", "")):
        raise ValueError(f"{ELICIT} message does not name {title}: {params.get('message')!r:.200}")
    return eid


def check_result(msg: Any, rid: int, title: str) -> str:
    """Validate the call's final result (a 2025-11-25 CallToolResult); return its text."""
    result = lc.result_from_message(msg if isinstance(msg, dict) else {}, rid)
    if result.get("isError"):
        raise ValueError(f"tool returned isError: {result.get('content')!r:.200}")
    content = result.get("content")
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        raise ValueError(f"result without content: {result!r:.200}")
    text = content[0].get("text")
    if content[0].get("type") != "text" or text != lc.expected_text(title):
        raise ValueError(f"expected text {lc.expected_text(title)!r}, got {text!r}")
    return str(text)


def request_head(host: str, port: int, session_id: str | None, path: str = "/mcp") -> bytes:
    """The constant part of every POST of a session (`Content-Length` and the body follow).
    Without a session id: the head of `initialize`."""
    session = f"Mcp-Session-Id: {session_id}\r\nMCP-Protocol-Version: {LEGACY_VERSION}\r\n"
    return (
        f"POST {path} HTTP/1.1\r\n"
        f"Host: {host}:{port}\r\n"
        "Content-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"{session if session_id else ''}"
        "Content-Length: "
    ).encode()


# --------------------------------------------------------------------------- responses


class _Connection(asyncio.Protocol):
    """One keep-alive connection of a user. It reads responses incrementally and hands the user
    each JSON-RPC message as soon as it is whole (a JSON body, or the data of one SSE event:
    `on_message`), then the end of the response (`on_end`)."""

    def __init__(self, user: _User) -> None:
        self.user = user
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.status = 0
        self.raw_head = b""  # as sent (header values keep their case)
        self.head = b""  # lower-cased, to find headers in
        self.reading_body = False
        self.length = -1  # Content-Length, or -1 for a chunked body
        self.sse = False
        self.events = bytearray()  # SSE text not yet cut into events
        self.body = bytearray()  # a chunked body that is not SSE

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.user.lost(self, exc)

    def send(self, head: bytes, body: bytes) -> None:
        assert self.transport is not None
        self.transport.write(head + str(len(body)).encode() + b"\r\n\r\n" + body)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        try:
            while self._step():  # a body may be empty: step on even when buf is
                pass
        except (lc.ProtocolError, ValueError) as e:  # an unreadable response: the connection is over
            self.user.fail(f"protocol: {e}")
        except Exception as e:  # a bug in the checks must not hang the user
            self.user.fail(f"client: {type(e).__name__}: {e}")

    def _step(self) -> bool:
        """Read what `buf` holds of the current response; False when more bytes are needed."""
        buf = self.buf
        if not self.reading_body:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > 65536:
                    raise lc.ProtocolError("response head too large")
                return False
            self.raw_head = bytes(buf[:end])
            head = self.head = self.raw_head.lower()
            del buf[: end + 4]
            if not head.startswith(b"http/1.1 "):
                raise lc.ProtocolError(f"bad status line: {head[:40]!r}")
            self.status = int(head[9:12])
            self.sse = b"\r\ncontent-type: text/event-stream" in head
            i = head.find(b"\r\ncontent-length:")
            if i >= 0:
                j = head.find(b"\r\n", i + 17)
                self.length = int(head[i + 17 : j if j >= 0 else len(head)])
            elif b"\r\ntransfer-encoding: chunked" in head:
                self.length = -1
            else:
                raise lc.ProtocolError("response without Content-Length or chunked encoding")
            self.reading_body = True
            return True
        if self.length >= 0:  # the whole body at once
            if len(buf) < self.length:
                return False
            body = bytes(buf[: self.length])
            del buf[: self.length]
            self._content(body)
            self._end(body)
            return True
        j = buf.find(b"\r\n")
        if j < 0:
            return False
        size = int(bytes(buf[:j]).split(b";", 1)[0], 16)
        if len(buf) < j + 2 + size + 2:
            return False
        chunk = bytes(buf[j + 2 : j + 2 + size])
        del buf[: j + 2 + size + 2]  # no trailers expected after the last chunk: "0\r\n\r\n"
        if size:
            self._content(chunk)
        else:
            body = bytes(self.body)
            self.body.clear()
            if not self.sse and body and 200 <= self.status < 300:
                self._message(body)
            self._end(body)
        return True

    def _content(self, data: bytes) -> None:
        if not self.sse:
            if self.length >= 0:
                if data and 200 <= self.status < 300:
                    self._message(data)
            else:
                self.body += data
            return
        events = self.events
        events += data
        if b"\r" in events:
            events[:] = events.replace(b"\r\n", b"\n")
        while True:
            k = events.find(b"\n\n")
            if k < 0:
                return
            event = bytes(events[:k])
            del events[: k + 2]
            data_lines = [line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:")]
            payload = b"\n".join(data_lines)
            if payload:  # a priming event has an id and no data
                self._message(payload)

    def _message(self, payload: bytes) -> None:
        self.user.on_message(self, orjson.loads(payload))

    def _end(self, body: bytes) -> None:
        self.reading_body = False
        self.events.clear()
        self.user.on_end(self, self.status, body)

    def header(self, name: bytes) -> str | None:
        """A header of the current response (``name`` in lower case), its value as sent."""
        i = self.head.find(b"\r\n" + name + b":")
        if i < 0:
            return None
        start = i + len(name) + 3
        end = self.head.find(b"\r\n", start)
        return self.raw_head[start : end if end >= 0 else len(self.head)].strip().decode("latin-1")

    def close(self) -> None:
        self.buf.clear()  # nothing more is read from it
        if self.transport is not None:
            self.transport.abort()


# --------------------------------------------------------------------------- the load

_CONNECTING, _INITIALIZING, _INITIALIZED, _IDLE, _FLOW, _OVER = range(6)


class _User:
    """One user: a session on two connections (see the module docstring), driven by callbacks."""

    def __init__(
        self, shared: lc._Shared, index: int, host: str, port: int, over: asyncio.Future[None]
    ) -> None:
        self.s = shared
        self.index = index
        self.host = host
        self.port = port
        self.over = over  # resolved when this user stops or fails
        self.ready: asyncio.Future[None] = over.get_loop().create_future()  # the session is open
        self.failed = False
        self.state = _CONNECTING
        self.call = _Connection(self)  # the calls and their streams
        self.control = _Connection(self)  # initialize, notifications/initialized, the answers
        self.head = request_head(host, port, None)
        self.session_id = ""
        self.initialized = False
        self.seq = 0
        self.rid = 0
        self.title = ""
        self.t0 = 0.0
        self.asked: str | int | None = None  # the elicitation's id, once it came
        self.accepted = False  # the answer's 202 came
        self.result = False  # the result came, checked
        self.ended = False  # the call's stream ended

    # -- the session
    def begin(self) -> None:
        self.state = _INITIALIZING
        self.control.send(self.head, initialize_body())

    def _session_opened(self, status: int) -> None:
        if status != 200 or not self.initialized:
            raise ValueError(f"initialize: HTTP {status}, initialized={self.initialized}")
        session_id = self.control.header(b"mcp-session-id")
        if not session_id:
            raise ValueError("initialize: no Mcp-Session-Id header")
        self.session_id = session_id
        self.head = request_head(self.host, self.port, self.session_id)
        self.state = _INITIALIZED
        self.control.send(self.head, INITIALIZED_BODY)

    # -- flows
    def start(self) -> None:
        """Flows back to back, from now on (the session is open and both connections are)."""
        if self.state == _IDLE:
            self._start_flow()

    def _start_flow(self) -> None:
        s = self.s
        if time.perf_counter() >= s.stop_at or (s.max_flows is not None and s.started >= s.max_flows):
            self._end()
            return
        s.started += 1
        self.seq += 1
        self.title = f"T-{self.index}-{self.seq}"
        s.next_id += 1
        self.rid = s.next_id
        self.asked = None
        self.accepted = self.result = self.ended = False
        self.state = _FLOW
        self.t0 = time.perf_counter()
        self.call.send(self.head, call_body(self.rid, orjson.dumps(self.title)))

    def _flow_done(self) -> None:
        if not (self.result and self.ended and self.accepted):
            return
        now = time.perf_counter()
        s = self.s
        s.flows_total += 1
        if s.measure_from <= now <= s.stop_at:
            s.flows += 1
            s.latencies.append(now - self.t0)
        self.state = _IDLE
        self._start_flow()

    # -- what the connections hand over
    def on_message(self, conn: _Connection, msg: Any) -> None:
        try:
            if conn is self.control:
                if self.state != _INITIALIZING or self.initialized:
                    raise ValueError(f"unexpected message on the session connection: {msg!r:.160}")
                check_initialize(msg)
                self.initialized = True
                return
            if self.state != _FLOW or conn.status != 200:
                raise ValueError(f"call: HTTP {conn.status}, message {msg!r:.160}")
            if self.asked is None:
                self.asked = check_elicitation(msg, self.title)
                self.control.send(self.head, answer_body(self.asked))
            elif not self.result:
                check_result(msg, self.rid, self.title)
                self.result = True
            else:
                raise ValueError(f"a message after the call's result: {msg!r:.160}")
        except (ValueError, TypeError, KeyError) as e:
            self.fail(str(e))

    def on_end(self, conn: _Connection, status: int, body: bytes) -> None:
        try:
            if conn is self.control:
                if self.state == _INITIALIZING:
                    self._session_opened(status)
                elif self.state == _INITIALIZED:
                    if status != 202:
                        raise ValueError(f"notifications/initialized: HTTP {status}: {body[:160]!r}")
                    self.state = _IDLE
                    self.ready.set_result(None)
                elif self.state == _FLOW and self.asked is not None and not self.accepted:
                    if status != 202:
                        raise ValueError(f"answer: HTTP {status}: {body[:160]!r}")
                    self.accepted = True
                    self._flow_done()
                else:
                    raise ValueError(f"an unexpected response on the session connection: HTTP {status}")
                return
            if self.state != _FLOW or status != 200 or not conn.sse:
                raise ValueError(f"call: HTTP {status}: {body[:160]!r}")
            if not self.result:
                what = "its question" if self.asked is None else "its result"
                raise ValueError(f"the call's stream ended without {what}")
            self.ended = True
            self._flow_done()
        except (ValueError, TypeError, KeyError) as e:
            self.fail(str(e))

    def lost(self, conn: _Connection, exc: Exception | None) -> None:
        if self.state != _OVER:  # the user closes its connections itself only once it is over
            self.fail(f"connection lost mid-flow: {exc!r}")

    # -- the end
    def fail(self, msg: str) -> None:
        if self.state == _OVER:
            return
        self.s.error(("" if self.state == _FLOW else "session: ") + msg)
        self.failed = True
        self._end()

    def _end(self) -> None:
        self.state = _OVER
        self.call.close()
        self.control.close()
        if not self.ready.done():
            self.ready.set_result(None)
        if not self.over.done():
            self.over.set_result(None)

    def abort(self) -> None:
        if self.state in (_INITIALIZING, _INITIALIZED, _FLOW):
            self.s.error("timeout: no response before the end of the grace period")
        self._end()


async def run_load(
    host: str,
    port: int,
    *,
    users: int = 16,
    duration: float = 10.0,
    warmup: float = 2.0,
    max_flows: int | None = None,
    grace: float = 10.0,
    max_restarts: int = 200,
) -> lc.LoadResult:
    """Closed loop: `users` sessions repeat flows for `warmup + duration` seconds.

    Only flows that complete inside the last `duration` seconds are counted. Bounded: users stop
    starting flows at the end, in-flight flows get `grace` seconds, then are aborted and counted
    as errors. A user whose flow failed starts over with new connections and a new session (at
    most `max_restarts` in total).
    """
    loop = asyncio.get_running_loop()
    t_start = time.perf_counter()
    # The modern client's counters (its `head` is unused here: each session has its own).
    shared = lc._Shared(b"", t_start + warmup, t_start + warmup + duration, max_flows)
    restarts = 0
    timed_out = 0
    cpu_mark: list[float] = []

    async def mark_cpu() -> None:
        await asyncio.sleep(max(0.0, shared.measure_from - time.perf_counter()))
        cpu_mark.append(time.process_time())

    cpu_task = asyncio.ensure_future(mark_cpu())

    def left() -> float:
        return shared.stop_at + grace - time.perf_counter()

    async def connect(conn: _Connection) -> None:
        await asyncio.wait_for(loop.create_connection(lambda: conn, host, port), timeout=5.0)

    async def one_user(u: int) -> None:
        nonlocal restarts, timed_out
        while True:
            over: asyncio.Future[None] = loop.create_future()
            user = _User(shared, u, host, port, over)
            # The session first, then the call connection: an idle connection opened early could be
            # closed by the server's keep-alive timeout before the first call (a slow initialize).
            try:
                await connect(user.control)
                user.begin()
                await asyncio.wait_for(asyncio.shield(user.ready), timeout=max(0.1, left()))
                if user.state == _IDLE:
                    await connect(user.call)
            except (TimeoutError, OSError) as e:
                user.fail(f"connect: {e!r}" if isinstance(e, OSError) else "initialize: no answer in time")
            else:
                user.start()
                try:
                    await asyncio.wait_for(asyncio.shield(over), timeout=max(0.1, left()))
                except TimeoutError:
                    timed_out += 1
                    user.abort()
                    return
                if not user.failed:
                    return  # stopped by itself: the run is over
            if time.perf_counter() >= shared.stop_at or restarts >= max_restarts:
                return
            if max_flows is not None and shared.started >= max_flows:
                return
            restarts += 1
            await asyncio.sleep(0.01)

    await asyncio.gather(*(one_user(u) for u in range(users)))
    cpu_end = time.process_time()
    t_end = min(time.perf_counter(), shared.stop_at)
    cpu_task.cancel()
    window = max(1e-9, t_end - shared.measure_from)
    if max_flows is not None:  # a counted run (verification): the window is the whole run
        window = max(1e-9, time.perf_counter() - t_start)
    cpu_from = cpu_mark[0] if cpu_mark else cpu_end
    return lc.LoadResult(
        users=users,
        duration=window,
        flows=shared.flows if max_flows is None else shared.flows_total,
        flows_total=shared.flows_total,
        errors=shared.errors,
        error_samples=shared.error_samples,
        latencies=shared.latencies if shared.latencies else array("d"),
        client_cpu=(cpu_end - cpu_from) / window,
        reconnects=restarts,
        timed_out=timed_out,
    )


def one_flow(host: str, port: int) -> str:
    """One whole flow (a new session, initialize, the call, the answer), every step checked;
    its final text (checked to be this), or ValueError with the first error."""
    result = lc.run(run_load(host, port, users=1, duration=30.0, warmup=0.0, max_flows=1, max_restarts=0))
    if result.errors or result.flows_total != 1:
        raise ValueError(f"{result.errors} errors: {dict(result.error_samples)}")
    return lc.expected_text("T-0-1")  # user 0's first flow


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--users", type=int, default=16)
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--warmup", type=float, default=2.0)
    args = ap.parse_args(argv)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        ap.error("loopback only")
    print(f"verified flow -> {one_flow(args.host, args.port)!r}")
    r = lc.run(run_load(args.host, args.port, users=args.users, duration=args.duration, warmup=args.warmup))
    print(
        f"{r.flows_per_s:.0f} flows/s ({r.flows} flows in {r.duration:.2f}s, {r.users} users), "
        f"p50 {r.percentile(50) * 1e3:.2f} ms, p99 {r.percentile(99) * 1e3:.2f} ms, "
        f"client CPU {r.client_cpu * 100:.0f}%, errors {r.errors}"
    )
    for msg, n in r.error_samples.most_common(5):
        print(f"  {n} x {msg}")
    return 1 if r.errors else 0


if __name__ == "__main__":
    sys.exit(main())
