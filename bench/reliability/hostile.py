"""Hostile input against the real HTTP endpoint and the real stdio loop.

Hand-written cases have one exact expected outcome (HTTP status and JSON-RPC code, or a result).
Generated cases (hypothesis: random bytes, random JSON put anywhere in a valid request, random
header values) have invariants instead. For every case:

* a response must arrive (no hang, no dropped connection), and the server must still be alive;
* never an HTTP 5xx, never a traceback or a file path in the body;
* a JSON-RPC error must travel with the HTTP status its code maps to (``status_for_error``),
  except the 2025-11-25 "no such session" answer: HTTP 404 with -32600, which clients read as
  "initialize again";
* the response id must be the request's id when that id was readable.

The exchanges are blocking (raw sockets, pipes) and run in a worker thread, so the harness's
event loop keeps a canary load going against the same server meanwhile.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import select
import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from httpclient import META, PROTOCOL_VERSION, ProtocolError, Response, parse_response

from mcp_elicit.state import KeyRing, RequestBinding, StateSealer, args_digest
from mcp_elicit.wire.http import status_for_error

INVALID_STATE = "Invalid or expired requestState"
_TRACE_MARKERS = (b"Traceback", b'File "', b'.py", line', b"site-packages")

# --------------------------------------------------------------------------------- raw exchanges


def http_bytes(
    port: int,
    body: bytes,
    *,
    method: str | None = "tools/call",
    name: str | None = "order",
    headers: list[tuple[str, str]] | None = None,
    content_type: str = "application/json",
    accept: str = "application/json, text/event-stream",
    version: str | None = PROTOCOL_VERSION,
    verb: str = "POST",
    path: str = "/mcp",
    content_length: int | None = -1,
) -> bytes:
    lines = [f"{verb} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    if content_type:
        lines.append(f"Content-Type: {content_type}")
    if accept:
        lines.append(f"Accept: {accept}")
    if version is not None:
        lines.append(f"MCP-Protocol-Version: {version}")
    if method is not None:
        lines.append(f"Mcp-Method: {method}")
    if name is not None:
        lines.append(f"Mcp-Name: {name}")
    for key, value in headers or []:
        lines.append(f"{key}: {value}")
    if content_length is not None:
        lines.append(f"Content-Length: {len(body) if content_length == -1 else content_length}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
    return head + body


def chunked_bytes(port: int, total: int, chunk: int = 1 << 20) -> bytes:
    """A chunked POST whose body is ``total`` bytes of a never-ending JSON string."""
    head = http_bytes(port, b"", content_length=None, headers=[("Transfer-Encoding", "chunked")])
    piece = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":"' + b"a" * chunk
    parts = [head]
    sent = 0
    while sent < total:
        data = piece if sent == 0 else b"a" * chunk
        parts.append(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        sent += len(data)
    parts.append(b"0\r\n\r\n")
    return b"".join(parts)


@dataclass
class Outcome:
    response: Response | None
    problem: str = ""  # why there is no response
    seconds: float = 0.0


def exchange(port: int, raw: bytes, *, within: float = 20.0) -> Outcome:
    """Send ``raw`` on a fresh connection and read one response, reading while sending (a
    server may answer 413 before the body is all sent)."""
    t0 = time.perf_counter()
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError as exc:
        return Outcome(None, f"connect failed: {exc}", time.perf_counter() - t0)
    sock.setblocking(False)
    buf = bytearray()
    view = memoryview(raw)
    sent = 0
    deadline = t0 + within
    try:
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                return Outcome(None, "no response in time", time.perf_counter() - t0)
            want_write = [sock] if sent < len(raw) else []
            readable, writable, _ = select.select([sock], want_write, [], min(remaining, 1.0))
            if readable:
                try:
                    chunk = sock.recv(1 << 16)
                except (ConnectionResetError, BrokenPipeError) as exc:
                    return Outcome(
                        _parsed(buf), f"connection reset while reading: {exc}", time.perf_counter() - t0
                    )
                if not chunk:
                    parsed = _parsed(buf)
                    return Outcome(
                        parsed, "" if parsed else "closed without a response", time.perf_counter() - t0
                    )
                buf += chunk
                parsed = _parsed(buf)
                if parsed is not None:
                    return Outcome(parsed, "", time.perf_counter() - t0)
            if writable:
                try:
                    sent += sock.send(view[sent : sent + (1 << 18)])
                except (BrokenPipeError, ConnectionResetError):
                    sent = len(raw)  # the server stopped reading; its answer may be on the way
    finally:
        sock.close()


def _parsed(buf: bytearray) -> Response | None:
    try:
        return parse_response(bytearray(buf))
    except (ProtocolError, ValueError):
        return None


# ----------------------------------------------------------------------------------- judging


@dataclass
class Tally:
    tried: int = 0
    refused: int = 0  # an error answer (HTTP 4xx or a JSON-RPC error)
    accepted: int = 0  # a result (what the request asked for, or a tool error result)
    crashed: int = 0  # 5xx, traceback, no answer, connection dropped, server gone
    unexpected: int = 0  # an answer, but not the one expected
    problems: Counter[str] = field(default_factory=Counter)
    by_group: Counter[str] = field(default_factory=Counter)

    def add(self, group: str, verdict: str, problem: str = "") -> None:
        self.tried += 1
        self.by_group[group] += 1
        if verdict == "refused":
            self.refused += 1
        elif verdict == "accepted":
            self.accepted += 1
        elif verdict == "crashed":
            self.crashed += 1
        else:
            self.unexpected += 1
        if problem:
            key = f"{group}: {problem}"[:160]
            if key in self.problems or len(self.problems) < 40:
                self.problems[key] += 1


def judge_http(outcome: Outcome, request_id: Any = None) -> tuple[str, str, int | None, int | None, Any]:
    """(verdict, problem, status, jsonrpc code, message) for an HTTP exchange, by the invariants."""
    response = outcome.response
    if response is None:
        return "crashed", outcome.problem or "no response", None, None, None
    status = response.status
    body = response.body
    if status >= 500:
        return "crashed", f"HTTP {status}", status, None, None
    if any(marker in body for marker in _TRACE_MARKERS):
        return "crashed", "traceback or source path in the response", status, None, None
    content_type = response.head.split(b"\r\ncontent-type:", 1)[-1].split(b"\r\n", 1)[0].strip()
    if not body and status == 202:  # a notification: accepted, nothing to answer
        return "accepted", "", status, None, None
    if not body:
        return (
            "unexpected",
            f"empty body with HTTP {status}",
            status,
            None,
            None,
        )
    if not content_type.startswith(b"application/json"):
        verdict = "refused" if 400 <= status < 500 else "unexpected"
        return verdict, "" if verdict == "refused" else f"HTTP {status} {content_type!r}", status, None, None
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return "unexpected", f"HTTP {status}: body is not JSON", status, None, None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "unexpected", f"HTTP {status}: not a JSON-RPC message", status, None, None
    if request_id is not None and message.get("id") not in (request_id, None):
        return "unexpected", f"answered id {message.get('id')!r} for id {request_id!r}", status, None, None
    error = message.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        if not isinstance(code, int) or not isinstance(error.get("message"), str):
            return "unexpected", "malformed error object", status, None, None
        mapped = status_for_error(code)
        unknown_session = status == 404 and code == -32600
        if status in (200, 400, 404) and status != mapped and not unknown_session:
            return "unexpected", f"JSON-RPC {code} with HTTP {status} (expected {mapped})", status, code, None
        return "refused", "", status, code, error.get("message")
    if "result" in message and status == 200:
        return "accepted", "", status, None, message["result"]
    return "unexpected", f"HTTP {status} with neither result nor error", status, None, None


@dataclass
class Case:
    group: str
    name: str
    raw: bytes
    status: int | None  # expected HTTP status (None: invariants only)
    code: int | None = None  # expected JSON-RPC error code (None: a result is expected)
    message: str | None = None  # expected error message, exactly
    check: Callable[[Any], str] | None = None  # extra check on the result: "" when fine
    request_id: Any = None


def run_case(port: int, case: Case, tally: Tally) -> None:
    outcome = exchange(port, case.raw)
    verdict, problem, status, code, payload = judge_http(outcome, case.request_id)
    if verdict in ("crashed", "unexpected"):
        tally.add(case.group, verdict, f"{case.name}: {problem}")
        return
    if case.status is not None:
        wrong = ""
        if status != case.status:
            wrong = f"HTTP {status}, expected {case.status}"
        elif case.code is not None and code != case.code:
            wrong = f"JSON-RPC {code}, expected {case.code}"
        elif case.code is None and verdict != "accepted" and case.status < 400:
            wrong = "an error, expected a result"
        elif case.message is not None and payload != case.message:
            wrong = f"message {str(payload)[:80]!r}, expected {case.message!r}"
        elif case.check is not None and verdict == "accepted":
            wrong = case.check(payload)
        if wrong:
            tally.add(case.group, "unexpected", f"{case.name}: {wrong}")
            return
    tally.add(case.group, verdict)


# ------------------------------------------------------------------------------ request makers


def body_of(method: str, params: Any, rid: Any = 1, **extra: Any) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    message.update(extra)
    return json.dumps(message).encode()


def order_params(item: str = "x", **extra: Any) -> dict[str, Any]:
    return {"_meta": META, "name": "order", "arguments": {"item": item}, **extra}


def answer(value: str) -> dict[str, Any]:
    return {"pick": {"action": "accept", "content": {"value": value}}}


def reencode_standard(token: str) -> str:
    raw = base64.urlsafe_b64decode(token[3:] + "=" * (-len(token[3:]) % 4))
    return "v1." + base64.b64encode(raw).decode()


def flip(token: str) -> str:
    middle = len(token) // 2
    return token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]


def foreign_token(item: str, *, same_kid_as: str | None = None) -> str:
    """A state sealed by a key ring this deployment does not have (optionally wearing one of
    its key ids)."""
    sealer = StateSealer(KeyRing.from_secrets([KeyRing.generate_secret()]), audience="mcp-elicit:reliability")
    binding = RequestBinding("tools/call", "order", args_digest({"item": item}), None)
    token = sealer.seal({"v": 1, "f": "0" * 32, "r": 1, "q": {"pick": ["0" * 64, 0]}}, binding)
    if same_kid_as is None:
        return token
    raw = bytearray(base64.urlsafe_b64decode(token[3:] + "=" * (-len(token[3:]) % 4)))
    raw[:4] = bytes.fromhex(same_kid_as)
    return "v1." + base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def deep_text(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


# ---------------------------------------------------------------------------------- stdio side


class StdioPeer:
    """A raw client for a stdio server: one JSON line out, response lines back (by a reader
    thread), with a sentinel request after each case to know when its answers are complete."""

    def __init__(self, argv: list[str], log_path: str) -> None:
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, start_new_session=True
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._sentinel = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def roundtrip(self, line: bytes, *, within: float = 15.0) -> tuple[list[Any], str]:
        """Send ``line`` (one or more lines) and a sentinel request; return every JSON message
        that arrives until both the sentinel's answer and an answer to each request id the line
        carries are in. Requests run concurrently on the server, so a slow request may be
        answered after the sentinel; an unreadable line is answered at once, in order."""
        wanted = Counter(request_ids(line))
        self._sentinel += 1
        sentinel = f"sentinel-{self._sentinel}"
        probe = orjson.dumps(
            {"jsonrpc": "2.0", "id": sentinel, "method": "server/discover", "params": {"_meta": META}}
        )
        try:
            self.send(line.rstrip(b"\n") + b"\n" + probe + b"\n")
        except (BrokenPipeError, OSError) as exc:
            return [], f"cannot write to the server: {exc}"
        out: list[Any] = []
        seen_sentinel = False
        deadline = time.monotonic() + within
        while True:
            try:
                raw = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                return out, "no answer in time"
            if raw is None:
                return out, f"the server exited (code {self.proc.wait()})"
            try:
                message = orjson.loads(raw)
            except orjson.JSONDecodeError:
                return out, f"non-JSON on stdout: {raw[:60]!r}"
            if isinstance(message, dict) and message.get("id") == sentinel:
                seen_sentinel = True
            else:
                out.append(message)
                key = _id_key(message.get("id")) if isinstance(message, dict) else None
                if key is not None and wanted[key] > 0:
                    wanted[key] -= 1
            if seen_sentinel and not +wanted:
                return out, ""

    def close(self) -> int:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(timeout=5)
        self._log.close()
        return code


def _id_key(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    return f"{type(value).__name__}:{value}"


STDIO_LIMIT = 4 * 1024 * 1024  # the server's max_message_bytes (its default)


def request_ids(line: bytes) -> list[str]:
    """The ids of the requests in ``line`` (one JSON message per physical line) that the server
    can read (a line over its size limit is refused without reading the id)."""
    ids = []
    for part in line.split(b"\n"):
        if len(part) > STDIO_LIMIT:
            continue
        try:
            message = orjson.loads(part)
        except orjson.JSONDecodeError:
            continue
        if (
            isinstance(message, dict)
            and message.get("jsonrpc") == "2.0"
            and isinstance(message.get("method"), str)
            and isinstance(message.get("params", {}), dict | type(None))
        ):
            key = _id_key(message.get("id"))
            if key is not None:
                ids.append(key)
    return ids


def expected_stdio_answers(line: bytes) -> int:
    """How many answers a line must get: 0 for a notification or a blank line, else 1."""
    if not line.strip():
        return 0
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return 1
    if (
        isinstance(message, dict)
        and "id" not in message
        and message.get("jsonrpc") == "2.0"
        and isinstance(message.get("method"), str)
        and isinstance(message.get("params", {}), dict | type(None))
    ):
        return 0
    return 1


def judge_stdio(line: bytes, answers: list[Any], problem: str) -> tuple[str, str]:
    if problem:
        return "crashed", problem
    wanted = expected_stdio_answers(line)
    if len(answers) != wanted:
        return "unexpected", f"{len(answers)} answers, expected {wanted}"
    if not answers:
        return "accepted", ""
    (message,) = answers
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "unexpected", "not a JSON-RPC message"
    text = orjson.dumps(message)
    if any(marker in text for marker in _TRACE_MARKERS):
        return "crashed", "traceback or source path in the answer"
    if isinstance(message.get("error"), dict):
        return "refused", ""
    if "result" in message:
        return "accepted", ""
    return "unexpected", "neither result nor error"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True
