"""A hand-written server that misbehaves on purpose, and records everything it receives.

    python rogue_server.py --stdio --log FILE
    python rogue_server.py --port PORT --log FILE        (Streamable HTTP on 127.0.0.1)

No library code: raw JSON-RPC, so it can send what a correct server never would. Each line of
the log is one JSON object: ``{"kind": "message", "message": ..., "headers": ...}`` for every
message received (``headers`` on HTTP only), ``{"kind": "disconnect", "id": ...}`` when an HTTP
client closes the stream of a request still waiting for its answer.

Tests tell their runs apart by ``clientInfo.name``; a name may also select a behaviour for the
whole run: ``reject-version-once-*`` (the first request gets -32022, like the conformance
harness), ``no-common-version-*`` (every request gets -32022 listing only an unknown version),
``supported-as-string-*`` (the same, with ``supported`` a string instead of an array).
What ``tools/call`` does depends on the tool name; see ``TOOLS``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

LOG: Path | None = None
_LOG_LOCK = threading.Lock()
VERSION = "2026-07-28"
# A state with characters JSON may escape in several ways: an echo that re-serialises or
# normalises it is caught.
TRICKY_STATE = 'v1.{"nonce": "é\\u00e9 \\"q\\" \\/ \u2028 😀", "n": 1.0}\t<>&'
FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
SIGNUP = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 18},
        "plan": {"type": "string", "enum": ["free", "pro"], "default": "free"},
        "news": {"type": "boolean", "default": False},
    },
    "required": ["email", "age"],
}


def log(entry: dict[str, Any]) -> None:
    if LOG is None:
        return
    with _LOG_LOCK, LOG.open("a", encoding="utf-8") as out:
        out.write(json.dumps(entry, ensure_ascii=False) + "\n")


def ask(key: str = "q", schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        key: {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Confirm?", "requestedSchema": schema or FORM},
        }
    }


def input_required(requests: dict[str, Any] | None = None, state: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "input_required"}
    if requests is not None:
        result["inputRequests"] = requests
    if state is not None:
        result["requestState"] = state
    return result


def done(text: str, **extra: Any) -> dict[str, Any]:
    return {"resultType": "complete", "content": [{"type": "text", "text": text}], **extra}


class Die(Exception):
    pass


class Hang(Exception):
    pass


BLIPS: dict[str, int] = {}  # store_blip: attempts of each retry round seen so far


def call_tool(params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    responses = params.get("inputResponses")
    state = params.get("requestState")
    if name == "echo_state":
        if responses is None:
            return input_required(ask(), TRICKY_STATE)
        return done("echoed" if state == TRICKY_STATE else f"WRONG STATE {state!r}")
    if name == "no_state":
        return (
            input_required(ask()) if responses is None else done(f"state present: {'requestState' in params}")
        )
    if name == "state_then_question":
        # Round 1 state-only, round 2 a question, round 3 done: the state changes every round.
        if state is None:
            return input_required(None, "s1")
        if state == "s1":
            return input_required(ask(), "s2")
        return done(f"finished with {state} and {json.dumps(responses, sort_keys=True)}")
    if name == "record":
        if responses is None:
            return input_required(ask("signup", SIGNUP))
        return done("recorded", structuredContent={"received": responses})
    if name == "url_question":
        if responses is None:
            return input_required(
                {
                    "u": {
                        "method": "elicitation/create",
                        "params": {"mode": "url", "message": "Go", "url": "https://example.com/x"},
                    }
                }
            )
        return done("url answered")
    if name == "sampling_question":
        return input_required(
            {"s": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}}
        )
    if name == "roots_question":
        return input_required({"r": {"method": "roots/list"}})
    if name == "bad_schema":
        nested = {"type": "object", "properties": {"address": {"type": "object", "properties": {}}}}
        return input_required(ask("q", nested))
    if name == "non_object_entry":
        return input_required({"q": "please answer"})
    if name == "no_method":
        return input_required({"q": {"params": {"message": "?", "requestedSchema": FORM}}})
    if name == "unknown_mode":
        return input_required(
            {"q": {"method": "elicitation/create", "params": {"mode": "telepathy", "message": "?"}}}
        )
    if name == "empty_input_required":
        return {"resultType": "input_required"}
    if name == "unknown_result_type":
        return {"resultType": "task", "task": {"taskId": "t1"}}
    if name == "no_result_type":
        if responses is not None or state is not None:
            return done("RETRIED A COMPLETE RESULT")
        return {"content": [{"type": "text", "text": "no resultType"}]}
    if name == "loop_questions":
        return input_required(ask(), "again")
    if name == "loop_state":
        return input_required(None, "still waiting")
    if name == "error":
        raise RpcError(-32603, "the database is on fire", {"retryAfter": 5})
    if name == "store_blip":
        # The retry round meets a store outage that lasts ``arguments.blips`` attempts.
        if responses is None:
            return input_required(ask(), "blip")
        key = str(params.get("arguments"))
        BLIPS[key] = BLIPS.get(key, 0) + 1
        if BLIPS[key] <= int((params.get("arguments") or {}).get("blips", 0)):
            raise RpcError(
                -32603,
                "Internal error: the server's state store is unavailable; retry the request shortly",
                {"reason": "state_store_unavailable", "retryable": True},
            )
        return done(f"done after {BLIPS[key] - 1} refusals, state {state}")
    if name == "needs_url":
        raise RpcError(
            -32021, "this tool needs URL mode", {"requiredCapabilities": {"elicitation": {"url": {}}}}
        )
    if name == "die":
        raise Die
    if name == "hang":
        raise Hang
    if name == "plain":
        return done("plain", structuredContent={"arguments": params.get("arguments")})
    if name == "unreadable":
        return done("\ud83d")  # json writes the lone surrogate as an escape no strict parser takes
    raise RpcError(-32602, f"Unknown tool: {name!r}")


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


_seen_names: set[str] = set()


def handle(message: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
    """(HTTP status, response) for one message; None for a notification."""
    if "id" not in message:
        return 202, None
    request_id = message["id"]
    params = message.get("params") or {}
    meta = params.get("_meta") or {}
    name = (meta.get("io.modelcontextprotocol/clientInfo") or {}).get("name", "")
    try:
        if name.startswith("no-common-version"):
            raise RpcError(
                -32022, "Unsupported protocol version", {"supported": ["2099-01-01"], "requested": VERSION}
            )
        if name.startswith("supported-as-string"):
            raise RpcError(-32022, "Unsupported protocol version", {"supported": "2099-01-01"})
        if name.startswith("reject-version-once") and name not in _seen_names:
            _seen_names.add(name)
            raise RpcError(
                -32022, "Unsupported protocol version", {"supported": [VERSION], "requested": VERSION}
            )
        result = dispatch(message["method"], params)
    except RpcError as exc:
        status = 400 if exc.code in (-32602, -32021, -32022) else 200
        return status, {"jsonrpc": "2.0", "id": request_id, "error": exc.to_json()}
    result.setdefault("_meta", {"io.modelcontextprotocol/serverInfo": {"name": "rogue", "version": "6.6.6"}})
    return 200, {"jsonrpc": "2.0", "id": request_id, "result": result}


def dispatch(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "server/discover":
        return {
            "resultType": "complete",
            "supportedVersions": [VERSION],
            "capabilities": {"tools": {}, "prompts": {}},
            "ttlMs": 0,
            "cacheScope": "public",
        }
    if method == "tools/list":
        region = {"type": "string", "x-mcp-header": "Region"}
        broken = {"type": "number", "x-mcp-header": "Amount"}  # invalid: a client must drop this tool
        return {
            "resultType": "complete",
            "tools": [
                {"name": "plain", "inputSchema": {"type": "object", "properties": {"region": region}}},
                {"name": "broken", "inputSchema": {"type": "object", "properties": {"amount": broken}}},
            ],
        }
    if method == "prompts/list":
        return input_required(ask())  # forbidden: only tools/call, prompts/get, resources/read may
    if method == "tools/call":
        return call_tool(params)
    raise RpcError(-32601, f"Method not found: {method!r}")


# -- stdio --------------------------------------------------------------------------------------
def run_stdio() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        message = json.loads(line)
        log({"kind": "message", "message": message})
        try:
            _, response = handle(message)
        except Die:
            out.write(b'{"jsonrpc": "2.0", "id": ')  # half a message, then gone
            out.flush()
            os._exit(3)
        except Hang:
            continue
        if response is not None:
            out.write(json.dumps(response).encode() + b"\n")
            out.flush()


# -- HTTP (raw ASGI) ----------------------------------------------------------------------------
async def read_body(receive: Any) -> bytes:
    """An ASGI request's whole body."""
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            return body


async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = await read_body(receive)
    headers = {k.decode(): v.decode() for k, v in scope["headers"]}
    message = json.loads(body)
    log({"kind": "message", "message": message, "headers": headers})
    try:
        status, response = handle(message)
    except Hang:
        while (await receive())["type"] != "http.disconnect":
            pass
        log({"kind": "disconnect", "id": message.get("id")})
        return
    if response is None:
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    payload = json.dumps(response).encode()
    if response.get("result", {}).get("content") == [{"type": "text", "text": "plain"}]:
        # The SSE reply shape: a notification about the request first, then the response.
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        await send({"type": "http.response.body", "body": b": keep-alive\r\n\r\n", "more_body": True})
        await send(
            {
                "type": "http.response.body",
                "body": b"data: " + json.dumps(note).encode() + b"\r\n\r\n",
                "more_body": True,
            }
        )
        await send({"type": "http.response.body", "body": b"event: message\ndata: " + payload + b"\n\n"})
        return
    await send(
        {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
    )
    await send({"type": "http.response.body", "body": payload})


def main() -> None:
    global LOG
    parser = argparse.ArgumentParser()
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("--port", type=int)
    parser.add_argument("--log")
    args = parser.parse_args()
    LOG = Path(args.log) if args.log else None
    if args.stdio:
        run_stdio()
        return
    import uvicorn

    asyncio.run(
        uvicorn.Server(
            uvicorn.Config(asgi, host="127.0.0.1", port=args.port, log_level="warning", lifespan="off")
        ).serve()
    )


if __name__ == "__main__":
    main()
