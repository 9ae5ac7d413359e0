"""A minimal stdio server for the transport tests: answers discover and ``tools/call``, with
knobs for awkward behaviour.

    python tiny_server.py [--ignore-eof] [--ignore-term] [--noise] [--big N] [--pages N [--pad N]]

``--ignore-eof``: keep running after stdin closes; ``--ignore-term``: ignore SIGTERM too;
``--noise``: print a banner, a blank line and a server->client request before each answer;
``--big N``: the tool ``big`` answers with N bytes of text; every tool writes to stderr.

``tools/list`` lists ``plain`` and a tool with an invalid ``x-mcp-header`` on a property whose
name carries terminal escape sequences (``ESCAPES``); with ``--pages N`` it never ends instead:
every page has N tools (each with a description of ``--pad`` bytes) and a next cursor.

Tools whose answers cannot be read: ``latin1`` (a byte that is not UTF-8), ``deep`` (nested
deeper than a strict parser goes). ``escapes`` sends a server->client request whose method is
``ESCAPES`` before answering.

Two tools end the server without answering: ``cut`` writes N bytes (``--big``) with no newline and
exits; ``orphan`` starts a child that inherits stdout (its pid goes to the file named by the
argument ``pidfile``), then exits with code 3 while the child keeps stdout open.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

META = {"io.modelcontextprotocol/serverInfo": {"name": "tiny", "version": "0"}}
# Set the window title, clear the screen, write in red.
ESCAPES = "\x1b]0;PWNED\x07\x1b[2J\x1b[31mall good\x1b[0m"


def reply(request_id: object, result: dict[str, object]) -> None:
    sys.stdout.write(
        json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {**result, "_meta": META}}) + "\n"
    )
    sys.stdout.flush()


def raw(line: bytes) -> None:
    sys.stdout.buffer.write(line + b"\n")
    sys.stdout.buffer.flush()


def list_tools(message: dict[str, object], per_page: int, pad: int) -> None:
    if not per_page:
        bad = {"type": "string", "x-mcp-header": "not a token"}
        tools = [
            {"name": "plain", "inputSchema": {"type": "object"}},
            {"name": "bad", "inputSchema": {"type": "object", "properties": {ESCAPES: bad}}},
        ]
        reply(message["id"], {"resultType": "complete", "tools": tools})
        return
    params = message["params"]
    assert isinstance(params, dict)
    page = int(params.get("cursor", 0))
    tools = [
        {"name": f"t{page}-{i}", "description": "x" * pad, "inputSchema": {"type": "object"}}
        for i in range(per_page)
    ]
    reply(message["id"], {"resultType": "complete", "tools": tools, "nextCursor": str(page + 1)})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ignore-eof", action="store_true")
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--noise", action="store_true")
    parser.add_argument("--big", type=int, default=0)
    parser.add_argument("--pages", type=int, default=0)
    parser.add_argument("--pad", type=int, default=0)
    args = parser.parse_args()
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        if args.noise:
            sys.stdout.write("tiny server v0 starting up\n\n")
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": 99, "method": "ping"}) + "\n")
        method = message["method"]
        if method == "server/discover":
            reply(
                message["id"],
                {
                    "resultType": "complete",
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}},
                    "ttlMs": 0,
                    "cacheScope": "public",
                },
            )
        elif method == "tools/list":
            list_tools(message, args.pages, args.pad)
        else:
            name = message["params"]["name"]
            print(f"tiny: calling {name}", file=sys.stderr, flush=True)
            if name == "cut":
                sys.stdout.write("x" * args.big)
                sys.stdout.flush()
                os._exit(0)
            if name == "orphan":
                child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
                with open(message["params"]["arguments"]["pidfile"], "w") as pidfile:
                    pidfile.write(str(child.pid))
                os._exit(3)
            request_id = json.dumps(message["id"]).encode()
            if name == "latin1":
                raw(b'{"jsonrpc":"2.0","id":' + request_id + b',"result":{"content":"caf\xe9"}}')
                continue
            if name == "deep":
                nest = b"[" * 1100 + b"]" * 1100
                raw(b'{"jsonrpc":"2.0","result":{"content":' + nest + b'},"id":' + request_id + b"}")
                continue
            if name == "escapes":
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": 99, "method": ESCAPES}) + "\n")
            text = "x" * args.big if name == "big" else f"ran {name}"
            reply(message["id"], {"resultType": "complete", "content": [{"type": "text", "text": text}]})
    if args.ignore_eof:
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
