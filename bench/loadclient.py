"""A lean closed-loop HTTP/1.1 load client for the MCP 2026-07-28 elicitation flow.

Each user owns one keep-alive connection and repeats whole flows, back to back:

    POST tools/call create_ticket {title}           -> 200, resultType "input_required"
    POST tools/call ... + inputResponses + requestState (echoed) -> 200, resultType "complete",
                                                       content[0].text == "Created {title}"

Every response is checked (HTTP status, JSON-RPC id, resultType, the elicitation request, the
final text); anything else is counted as an error with its message, never as a flow.

Why not httpx: it costs far more CPU per request than the servers under test, so on a 2-core
box it tops out near the SDK's figure. This client is a callback-driven `asyncio.Protocol`
state machine on uvloop (no coroutine or future per request), with pre-built request heads,
minimal response parsing (status line, Content-Length; chunked and SSE bodies are handled on a
slow path) and orjson for bodies. Its ceiling is measured against `servers/bare.py`.

Standalone use:
    python bench/loadclient.py --port 8000 --users 16 --duration 10 --warmup 2
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

try:  # uvloop is part of the bench environment; fall back to asyncio's loop if missing.
    import uvloop
except ImportError:  # pragma: no cover
    uvloop = None

PROTOCOL_VERSION = "2026-07-28"
TOOL = "create_ticket"
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
ACCEPT_ANSWER = {"action": "accept", "content": {"ok": True}}
_META_JSON = orjson.dumps(META)
_ANSWER_JSON = orjson.dumps(ACCEPT_ANSWER)


def expected_text(title: str) -> str:
    return f"Created {title}"


# --------------------------------------------------------------------------- request bytes


def request_head(host: str, port: int, path: str = "/mcp") -> bytes:
    """The constant part of every POST head; `Content-Length` and the body follow."""
    return (
        f"POST {path} HTTP/1.1\r\n"
        f"Host: {host}:{port}\r\n"
        "Content-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {PROTOCOL_VERSION}\r\n"
        "Mcp-Method: tools/call\r\n"
        f"Mcp-Name: {TOOL}\r\n"
        "Content-Length: "
    ).encode()


_B1 = b'{"jsonrpc":"2.0","id":'
_B2 = b',"method":"tools/call","params":{"_meta":' + _META_JSON + b',"name":"' + TOOL.encode()
_B2 += b'","arguments":{"title":'
_B_END_FIRST = b"}}}"
_B_RETRY_IR = b'},"inputResponses":{'
_B_RETRY_RS = b":" + _ANSWER_JSON + b'},"requestState":'


def first_body(rid: int, title_json: bytes) -> bytes:
    return _B1 + str(rid).encode() + _B2 + title_json + _B_END_FIRST


def retry_body(rid: int, title_json: bytes, key: str, request_state: str | None) -> bytes:
    # Same params as the first call, plus inputResponses and the echoed requestState.
    body = _B1 + str(rid).encode() + _B2 + title_json + _B_RETRY_IR + orjson.dumps(key) + _B_RETRY_RS
    if request_state is None:  # the spec: no requestState in the result -> none in the retry
        return body[: -len(b',"requestState":')] + b"}}"
    return body + orjson.dumps(request_state) + b"}}"


# --------------------------------------------------------------------------- response parsing


class ProtocolError(Exception):
    """The byte stream is not a parseable HTTP/1.1 response: the connection is unusable."""


def _parse_response(buf: bytearray) -> tuple[int, bytes, bytes] | None:
    """Pop one complete response from `buf`: (status, lower-cased head, body); None if partial."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        if len(buf) > 65536:
            raise ProtocolError("response head too large")
        return None
    head = bytes(buf[:end]).lower()
    if not head.startswith(b"http/1.1 "):
        raise ProtocolError(f"bad status line: {head[:40]!r}")
    try:
        status = int(head[9:12])
    except ValueError:
        raise ProtocolError(f"bad status line: {head[:40]!r}") from None
    i = head.find(b"\r\ncontent-length:")
    if i >= 0:
        j = head.find(b"\r\n", i + 17)
        n = int(head[i + 17 : j if j >= 0 else len(head)])
        total = end + 4 + n
        if len(buf) < total:
            return None
        body = bytes(buf[end + 4 : total])
        del buf[:total]
        return status, head, body
    if b"\r\ntransfer-encoding: chunked" in head:
        return _parse_chunked(buf, end + 4, status, head)
    if status in (204, 304) or 100 <= status < 200:
        del buf[: end + 4]
        return status, head, b""
    raise ProtocolError("response without Content-Length or chunked encoding")


def _parse_chunked(buf: bytearray, pos: int, status: int, head: bytes) -> tuple[int, bytes, bytes] | None:
    out = bytearray()
    while True:
        j = buf.find(b"\r\n", pos)
        if j < 0:
            return None
        size = int(bytes(buf[pos:j]).split(b";", 1)[0], 16)
        if size == 0:
            k = buf.find(b"\r\n\r\n", j)  # no trailers expected: "0\r\n\r\n"
            if k < 0:
                return None
            del buf[: k + 4]
            return status, head, bytes(out)
        if len(buf) < j + 2 + size + 2:
            return None
        out += buf[j + 2 : j + 2 + size]
        pos = j + 2 + size + 2


def _jsonrpc_from_body(head: bytes, body: bytes, rid: int) -> dict[str, Any]:
    """The JSON-RPC response for `rid` from a JSON or SSE body."""
    if b"content-type: text/event-stream" in head:  # slow path: last matching `data:` event
        found: dict[str, Any] | None = None
        for event in body.replace(b"\r\n", b"\n").split(b"\n\n"):
            data = b"\n".join(
                line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:")
            )
            if data:
                msg = orjson.loads(data)
                if isinstance(msg, dict) and msg.get("id") == rid:
                    found = msg
        if found is None:
            raise ValueError("SSE stream ended without a response for this request")
        return found
    msg = orjson.loads(body)
    if not isinstance(msg, dict):
        raise ValueError("response body is not a JSON object")
    return msg


def _result_of(status: int, head: bytes, body: bytes, rid: int) -> dict[str, Any]:
    """Check status and JSON-RPC envelope; return `result` or raise ValueError(reason)."""
    if status != 200:
        raise ValueError(f"HTTP {status}: {body[:200].decode(errors='replace')}")
    return result_from_message(_jsonrpc_from_body(head, body, rid), rid)


def result_from_message(msg: dict[str, Any], rid: int) -> dict[str, Any]:
    """Check a JSON-RPC response for `rid`; return its `result` or raise ValueError(reason)."""
    if msg.get("id") != rid:
        raise ValueError(f"JSON-RPC id mismatch: sent {rid}, got {msg.get('id')!r}")
    if "error" in msg:
        raise ValueError(f"JSON-RPC error: {orjson.dumps(msg['error'])[:200].decode()}")
    result = msg.get("result")
    if not isinstance(result, dict):
        raise ValueError("JSON-RPC response without a result object")
    return result


def _brief(result: dict[str, Any]) -> str:
    """A short view of a result for an error message (the text of an isError result)."""
    content = result.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        return f"isError={result.get('isError')!r} text={str(content[0].get('text'))[:120]!r}"
    return repr(result)[:160]


def check_input_required(result: dict[str, Any], title: str) -> tuple[str, str | None]:
    """Validate the first answer; return (inputRequests key, requestState)."""
    if result.get("resultType") != "input_required":
        got = result.get("resultType")
        raise ValueError(f"expected resultType input_required, got {got!r}: {_brief(result)}")
    reqs = result.get("inputRequests")
    if not isinstance(reqs, dict) or len(reqs) != 1:
        raise ValueError(f"expected exactly one inputRequests entry, got {reqs!r:.200}")
    ((key, req),) = reqs.items()
    if not isinstance(req, dict) or req.get("method") != "elicitation/create":
        raise ValueError(f"inputRequests[{key!r}] is not elicitation/create: {req!r:.200}")
    params = req.get("params") or {}
    schema = params.get("requestedSchema") or {}
    if "ok" not in (schema.get("properties") or {}) or title not in str(params.get("message", "")):
        raise ValueError(f"unexpected elicitation params: {params!r:.200}")
    rs = result.get("requestState")
    if rs is not None and not isinstance(rs, str):
        raise ValueError("requestState is not a string")
    return key, rs


def check_complete(result: dict[str, Any], title: str) -> str:
    """Validate the final answer; return its text."""
    if result.get("resultType") != "complete":
        raise ValueError(f"expected resultType complete, got {result.get('resultType')!r}: {result!r:.200}")
    if result.get("isError"):
        raise ValueError(f"tool returned isError: {result.get('content')!r:.200}")
    content = result.get("content")
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        raise ValueError(f"complete result without content: {result!r:.200}")
    text = content[0].get("text")
    if content[0].get("type") != "text" or text != expected_text(title):
        raise ValueError(f"expected text {expected_text(title)!r}, got {text!r}")
    return text


# --------------------------------------------------------------------------- the load


@dataclass
class LoadResult:
    users: int
    duration: float  # the measured window, seconds
    flows: int  # flows completed and verified inside the window
    flows_total: int  # including warm-up
    errors: int
    error_samples: Counter[str] = field(default_factory=Counter)
    latencies: array = field(default_factory=lambda: array("d"))  # seconds, window flows
    client_cpu: float = 0.0  # client process CPU seconds over the window / window seconds
    reconnects: int = 0
    timed_out: int = 0

    @property
    def flows_per_s(self) -> float:
        return self.flows / self.duration if self.duration > 0 else 0.0

    def percentile(self, p: float) -> float:
        return percentile(self.latencies, p)


def percentile(values: Any, p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    k = min(len(s) - 1, max(0, round(p / 100.0 * (len(s) - 1))))
    return s[k]


_TITLE_RE = re.compile(r"T-\d+-\d+")


def error_key(msg: str) -> str:
    """Group the same error across flows: the per-flow title is masked."""
    return _TITLE_RE.sub("T-<u>-<n>", msg[:200])


class _Shared:
    """State shared by all connections of one run."""

    def __init__(self, head: bytes, measure_from: float, stop_at: float, max_flows: int | None) -> None:
        self.head = head
        self.measure_from = measure_from
        self.stop_at = stop_at
        self.max_flows = max_flows
        self.started = 0
        self.flows = 0
        self.flows_total = 0
        self.errors = 0
        self.error_samples: Counter[str] = Counter()
        self.latencies = array("d")
        self.next_id = 0

    def error(self, msg: str) -> None:
        self.errors += 1
        key = error_key(msg)
        if key in self.error_samples or len(self.error_samples) < 50:
            self.error_samples[key] += 1
        else:
            self.error_samples["(other errors)"] += 1


class FlowConnection(asyncio.Protocol):
    """One user: one keep-alive connection, flows back to back, driven by callbacks."""

    def __init__(self, shared: _Shared, user: int, idle: asyncio.Future[None]) -> None:
        self.s = shared
        self.user = user
        self.idle = idle  # resolved when this user stops (no more flows) or the connection dies
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.seq = 0
        self.state = 0  # 0 idle, 1 waiting for input_required, 2 waiting for complete
        self.rid = 0
        self.title = ""
        self.title_json = b""
        self.t0 = 0.0

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self._start_flow()

    def data_received(self, data: bytes) -> None:
        self.buf += data
        try:
            while self.state and self.buf:
                parsed = _parse_response(self.buf)
                if parsed is None:
                    return
                self._on_response(*parsed)
        except ProtocolError as e:
            self._fail(f"protocol: {e}", close=True)
        except Exception as e:  # a bug in the checks must not hang the user
            self._fail(f"client: {type(e).__name__}: {e}", close=True)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.state:
            self.s.error(f"connection lost mid-flow: {exc!r}")
            self.state = 0
        self.transport = None
        if not self.idle.done():
            self.idle.set_result(None)

    # -- the flow
    def _send(self, body: bytes) -> None:
        assert self.transport is not None
        self.transport.write(self.s.head + str(len(body)).encode() + b"\r\n\r\n" + body)

    def _new_id(self) -> int:
        self.s.next_id += 1
        return self.s.next_id

    def _start_flow(self) -> None:
        s = self.s
        if time.perf_counter() >= s.stop_at or (s.max_flows is not None and s.started >= s.max_flows):
            self.state = 0
            if not self.idle.done():
                self.idle.set_result(None)
            return
        s.started += 1
        self.seq += 1
        self.title = f"T-{self.user}-{self.seq}"
        self.title_json = orjson.dumps(self.title)
        self.rid = self._new_id()
        self.state = 1
        self.t0 = time.perf_counter()
        self._send(first_body(self.rid, self.title_json))

    def _on_response(self, status: int, head: bytes, body: bytes) -> None:
        try:
            result = _result_of(status, head, body, self.rid)
            if self.state == 1:
                key, rs = check_input_required(result, self.title)
                self.rid = self._new_id()
                self.state = 2
                self._send(retry_body(self.rid, self.title_json, key, rs))
                return
            check_complete(result, self.title)
        except (ValueError, orjson.JSONDecodeError, KeyError, TypeError) as e:
            closing = b"\r\nconnection: close" in head
            self._fail(f"{'first' if self.state == 1 else 'retry'}: {e}", close=closing)
            return
        now = time.perf_counter()
        s = self.s
        s.flows_total += 1
        if s.measure_from <= now <= s.stop_at:
            s.flows += 1
            s.latencies.append(now - self.t0)
        if b"\r\nconnection: close" in head:
            self.state = 0
            self._close()
            return
        self._start_flow()

    def _fail(self, msg: str, close: bool) -> None:
        self.s.error(msg)
        self.state = 0
        if close:
            self._close()
        else:
            self._start_flow()

    def _close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        if self.state:
            self.s.error("timeout: no response before the end of the grace period")
            self.state = 0
        if self.transport is not None:
            self.transport.abort()


async def run_load(
    host: str,
    port: int,
    *,
    users: int = 16,
    duration: float = 10.0,
    warmup: float = 2.0,
    max_flows: int | None = None,
    grace: float = 10.0,
    max_reconnects: int = 200,
) -> LoadResult:
    """Closed loop: `users` connections repeat flows for `warmup + duration` seconds.

    Only flows that complete inside the last `duration` seconds are counted. Bounded: users
    stop starting flows at the end, in-flight flows get `grace` seconds, then are aborted and
    counted as errors. A dropped connection is re-opened (at most `max_reconnects` in total).
    """
    loop = asyncio.get_running_loop()
    t_start = time.perf_counter()
    shared = _Shared(request_head(host, port), t_start + warmup, t_start + warmup + duration, max_flows)
    reconnects = 0
    timed_out = 0
    cpu_mark: list[float] = []

    async def mark_cpu() -> None:
        await asyncio.sleep(max(0.0, shared.measure_from - time.perf_counter()))
        cpu_mark.append(time.process_time())

    cpu_task = asyncio.ensure_future(mark_cpu())

    async def user(u: int) -> None:
        nonlocal reconnects, timed_out
        while True:
            idle: asyncio.Future[None] = loop.create_future()
            try:
                transport, proto = await asyncio.wait_for(
                    loop.create_connection(lambda idle=idle: FlowConnection(shared, u, idle), host, port),
                    timeout=5.0,
                )
            except (TimeoutError, OSError) as e:
                shared.error(f"connect: {e!r}")
                transport = None
            if transport is not None:
                remaining = shared.stop_at + grace - time.perf_counter()
                try:
                    await asyncio.wait_for(asyncio.shield(idle), timeout=max(0.1, remaining))
                except TimeoutError:
                    timed_out += 1
                    proto.abort()
                    return
                if proto.transport is not None:  # stopped by itself: the run is over
                    proto.transport.close()
                    return
            # The connection died (or never opened): reconnect while the run lasts.
            if time.perf_counter() >= shared.stop_at or reconnects >= max_reconnects:
                return
            if max_flows is not None and shared.started >= max_flows:
                return
            reconnects += 1
            await asyncio.sleep(0.01)

    await asyncio.gather(*(user(u) for u in range(users)))
    cpu_end = time.process_time()
    t_end = min(time.perf_counter(), shared.stop_at)
    cpu_task.cancel()
    window = max(1e-9, t_end - shared.measure_from)
    if max_flows is not None:  # a counted run (verification): the window is the whole run
        window = max(1e-9, time.perf_counter() - t_start)
    cpu_from = cpu_mark[0] if cpu_mark else cpu_end
    return LoadResult(
        users=users,
        duration=window,
        flows=shared.flows if max_flows is None else shared.flows_total,
        flows_total=shared.flows_total,
        errors=shared.errors,
        error_samples=shared.error_samples,
        latencies=shared.latencies,
        client_cpu=(cpu_end - cpu_from) / window,
        reconnects=reconnects,
        timed_out=timed_out,
    )


async def one_flow(host: str, port: int, title: str = "T-verify", io_wait: float = 10.0) -> dict[str, Any]:
    """One flow with full details, for verifying a server before loading it (slow, clear)."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), io_wait)
    head = request_head(host, port)
    title_json = orjson.dumps(title)
    buf = bytearray()

    async def roundtrip(body: bytes) -> tuple[int, bytes, bytes]:
        writer.write(head + str(len(body)).encode() + b"\r\n\r\n" + body)
        while True:
            parsed = _parse_response(buf)
            if parsed is not None:
                return parsed
            chunk = await asyncio.wait_for(reader.read(65536), io_wait)
            if not chunk:
                raise ProtocolError("connection closed")
            buf.extend(chunk)

    try:
        first = _result_of(*(await roundtrip(first_body(1, title_json))), 1)
        key, rs = check_input_required(first, title)
        final = _result_of(*(await roundtrip(retry_body(2, title_json, key, rs))), 2)
        text = check_complete(final, title)
    finally:
        writer.close()
    return {"input_required": first, "key": key, "requestState": rs, "complete": final, "text": text}


def new_event_loop() -> asyncio.AbstractEventLoop:
    return uvloop.new_event_loop() if uvloop is not None else asyncio.new_event_loop()


def run(coro: Any) -> Any:
    loop = new_event_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()


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
    print(orjson.dumps(run(one_flow(args.host, args.port))["complete"]).decode())
    r = run(run_load(args.host, args.port, users=args.users, duration=args.duration, warmup=args.warmup))
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
