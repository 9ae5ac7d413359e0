"""A hand-written 2025-11-25 stdio server that misbehaves on purpose. Test-only, no library code.

    python legacy_rogue_server.py [--initialize MODE] [--log FILE]

``--initialize``: ``ok`` (default), ``modern`` (answers with 2026-07-28), ``unknown``
(1999-01-01), ``no-server-info``, ``silent`` (never answers), ``error`` (-32601). A
``server/discover`` before ``initialize`` gets -32601, as from a legacy server.

Each tool does one thing to the client while its call is open (see ``TOOLS``) and reports in its
text what came back; ``relay`` sends the requests its arguments hold, as a test wrote them.
``--log`` gets every message received, one JSON object per line.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

LOG: Path | None = None
FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
PENDING: list[dict[str, Any]] = []  # messages read while waiting for something else


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def read() -> dict[str, Any]:
    if PENDING:
        return PENDING.pop(0)
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    message: dict[str, Any] = json.loads(line)
    if LOG is not None:
        with LOG.open("a", encoding="utf-8") as out:
            out.write(json.dumps(message) + "\n")
    return message


def ask(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    """Send a request of ours and wait for its answer (other messages wait their turn)."""
    send({"id": request_id, "method": method, "params": params})
    return answer_to(request_id)


def answer_to(request_id: Any) -> dict[str, Any]:
    held: list[dict[str, Any]] = []
    while True:
        message = read()
        if "method" not in message and message.get("id") == request_id:
            PENDING[:0] = held
            return message
        held.append(message)


def text(call_id: Any, value: str, *, is_error: bool = False) -> None:
    send({"id": call_id, "result": {"content": [{"type": "text", "text": value}], "isError": is_error}})


def elicit(message: str = "Confirm?", schema: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"mode": "form", "message": message, "requestedSchema": schema or FORM, **extra}


def said(reply: dict[str, Any]) -> str:
    if "error" in reply:
        return f"error {reply['error']['code']}: {reply['error']['message']}"
    return json.dumps(reply["result"], sort_keys=True)


def tool(name: str, call_id: Any, arguments: dict[str, Any]) -> None:
    if name == "ask":
        text(call_id, said(ask("s-1", "elicitation/create", elicit())))
    elif name == "same_id_as_yours":
        # The server's request carries the id of the client's pending tools/call: it must be
        # answered as a request, never taken for the call's response.
        reply = ask(call_id, "elicitation/create", elicit())
        text(call_id, f"answered {said(reply)}")
    elif name == "duplicate_id":
        send({"id": "dup", "method": "elicitation/create", "params": elicit()})
        send({"id": "dup", "method": "elicitation/create", "params": elicit("Again?")})
        first = answer_to("dup")
        send({"id": "after", "method": "ping"})  # a marker: every answer to "dup" came before it
        answer_to("after")
        count = 1 + sum(1 for m in PENDING if m.get("id") == "dup" and "method" not in m)
        PENDING[:] = [m for m in PENDING if m.get("id") != "dup"]
        text(call_id, f"{count} answer(s) to dup: {said(first)}")
    elif name == "stray_response":
        send({"id": 987654, "result": {"content": [{"type": "text", "text": "to nobody"}]}})
        text(call_id, "the real result")
    elif name == "answers_twice":
        text(call_id, "first")
        ask(f"after-{call_id}", "ping", {})  # answered once the client has taken the first
        text(call_id, "second")
    elif name == "result_and_error":
        send({"id": call_id, "result": {"content": []}, "error": {"code": -32603, "message": "both"}})
    elif name == "endless":
        # A new question after every answer, until the client refuses one (or cancels the call).
        number = 0
        while "error" not in (reply := ask(f"e-{number}", "elicitation/create", elicit(f"#{number}?"))):
            number += 1
        text(call_id, f"refused after {number}: {said(reply)}")
    elif name == "ask_twice":
        first = ask(f"a-{call_id}-1", "elicitation/create", elicit())
        second = ask(f"a-{call_id}-2", "elicitation/create", elicit("Again?"))
        text(call_id, f"{said(first)} {said(second)}")
    elif name == "url":
        params = {"mode": "url", "message": "Open it", "url": "https://example.com/x", "elicitationId": "e-1"}
        text(call_id, said(ask("u-1", "elicitation/create", params)))
    elif name == "url_then_complete":
        params = {"mode": "url", "message": "Open it", "url": "https://example.com/x", "elicitationId": "e-2"}
        reply = ask("u-2", "elicitation/create", params)
        send({"method": "notifications/elicitation/complete", "params": {"elicitationId": "nobody-knows"}})
        send({"method": "notifications/elicitation/complete", "params": {"elicitationId": "e-2"}})
        send({"id": "after", "method": "ping"})
        answer_to("after")
        text(call_id, said(reply))
    elif name == "url_without_id":
        params = {"mode": "url", "message": "Open it", "url": "https://example.com/x"}
        text(call_id, said(ask("u-3", "elicitation/create", params)))
    elif name == "bad_schema":
        nested = {"type": "object", "properties": {"inner": {"type": "object", "properties": {}}}}
        text(call_id, said(ask("b-1", "elicitation/create", elicit(schema=nested))))
    elif name == "ping":
        text(call_id, said(ask("p-1", "ping", {})))
    elif name == "sampling":
        params = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}
        params.update(arguments)
        text(call_id, said(ask(f"m-{call_id}", "sampling/createMessage", params)))
    elif name == "roots":
        text(call_id, said(ask(f"r-{call_id}", "roots/list", {})))
    elif name == "invalid_request":
        text(call_id, said(ask("i-1", "elicitation/create", 5)))  # params must be an object
    elif name == "unknown_method":
        text(call_id, said(ask("x-1", "tasks/frobnicate", {})))
    elif name == "cancelled":
        send({"id": "c-1", "method": "elicitation/create", "params": elicit("Never mind?")})
        send({"method": "notifications/cancelled", "params": {"requestId": "c-1"}})
        send({"method": "notifications/cancelled", "params": {"requestId": "never-sent"}})
        send({"id": "after", "method": "ping"})
        answer_to("after")
        answered = any(m.get("id") == "c-1" for m in PENDING)
        text(call_id, f"c-1 answered: {answered}")
    elif name == "needs_url":
        if arguments.get("round") == "again" or CONNECTED["done"]:
            text(call_id, "connected")
            return
        CONNECTED["done"] = True
        entry = {
            "mode": "url",
            "elicitationId": "n-1",
            "url": "https://example.com/connect",
            "message": "Connect",
        }
        send(
            {
                "id": call_id,
                "error": {"code": -32042, "message": "Connect first", "data": {"elicitations": [entry]}},
            }
        )
    elif name == "relay":
        # Each of arguments["requests"] ({method, params}, as a test wrote them) sent as a request
        # of ours, one after the other; the text is the client's replies, in order.
        replies = []
        for item in arguments.get("requests", []):
            RELAYED["count"] += 1  # an id this session never used (a reused one is answered once)
            replies.append(ask(f"relay-{RELAYED['count']}", item["method"], item["params"]))
        text(call_id, json.dumps(replies))
    else:
        send({"id": call_id, "error": {"code": -32602, "message": f"Unknown tool {name}"}})


CONNECTED = {"done": False}
RELAYED = {"count": 0}
TOOLS = ["ask", "same_id_as_yours", "duplicate_id", "stray_response", "result_and_error", "url",
         "url_then_complete", "url_without_id", "bad_schema", "ping", "sampling", "roots",
         "unknown_method", "cancelled", "needs_url", "relay", "invalid_request", "endless",
         "ask_twice", "answers_twice"]  # fmt: skip


def initialize_result(mode: str, requested: str) -> dict[str, Any]:
    version = {"modern": "2026-07-28", "unknown": "1999-01-01"}.get(mode, requested)
    result: dict[str, Any] = {"protocolVersion": version, "capabilities": {"tools": {}}}
    if mode != "no-server-info":
        result["serverInfo"] = {"name": "legacy-rogue", "version": "0.0.1"}
    return result


def main() -> None:
    global LOG
    parser = argparse.ArgumentParser()
    parser.add_argument("--initialize", default="ok")
    parser.add_argument("--log")
    args = parser.parse_args()
    LOG = Path(args.log) if args.log else None
    while True:
        message = read()
        method, request_id = message.get("method"), message.get("id")
        if method is None or request_id is None:
            continue  # responses out of turn and notifications
        if method == "initialize":
            if args.initialize == "silent":
                continue
            if args.initialize == "error":
                send({"id": request_id, "error": {"code": -32601, "message": "Method not found"}})
                continue
            requested = message["params"]["protocolVersion"]
            send({"id": request_id, "result": initialize_result(args.initialize, requested)})
        elif method == "tools/list":
            send(
                {
                    "id": request_id,
                    "result": {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in TOOLS]},
                }
            )
        elif method == "tools/call":
            tool(message["params"]["name"], request_id, message["params"].get("arguments") or {})
        else:
            send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
