"""A minimal stdio server for the transport tests: answers discover and ``tools/call``, with
knobs for awkward behaviour.

    python tiny_server.py [--ignore-eof] [--ignore-term] [--noise] [--big N]

``--ignore-eof``: keep running after stdin closes; ``--ignore-term``: ignore SIGTERM too;
``--noise``: print a banner, a blank line and a server->client request before each answer;
``--big N``: the tool ``big`` answers with N bytes of text; every tool writes to stderr.

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


def reply(request_id: object, result: dict[str, object]) -> None:
    sys.stdout.write(
        json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {**result, "_meta": META}}) + "\n"
    )
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ignore-eof", action="store_true")
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--noise", action="store_true")
    parser.add_argument("--big", type=int, default=0)
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
            text = "x" * args.big if name == "big" else f"ran {name}"
            reply(message["id"], {"resultType": "complete", "content": [{"type": "text", "text": text}]})
    if args.ignore_eof:
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
