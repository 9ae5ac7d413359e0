"""A 2025-11-25 stdio "server" that plays the bytes a test wrote for it, and when. Test-only, no
library code, standard library only (it starts once per example).

    python legacy_stdio_script_server.py PLAN LOG

``PLAN`` is a JSON file ``{"steps": [...]}``, played in order:

* ``{"op": "await", "method": M}``: wait for the client's request ``M`` (its id is then the one
  ``@@CALL_ID@@`` stands for); stdin ending or 5 s of nothing ends the play (exit 0).
* ``{"op": "out", "data": HEX, "splits": [...]}``: write those bytes to stdout, cut into writes at
  ``splits``; ``"@@CALL_ID@@"`` (quotes included) becomes the awaited request's id as JSON and
  ``"@@CALL_ID_TEXT@@"`` that id as a JSON string.
* ``{"op": "err", "data": HEX}``: write those bytes to stderr.
* ``{"op": "answers", "ids": [KEY, ...], "timeout": S}``: wait until the client answered each of
  those requests (ids as JSON text), at most S seconds.
* ``{"op": "exit", "code": N}``: exit at once, with that code (what was written stays written).
* ``{"op": "close_stdout"}``: close stdout, and go on.
* ``{"op": "end", "mode": "eof" | "ignore_eof"}``: wait for stdin to end, then exit 0 (answering
  any further ``tools/call`` with the text ``plain`` meanwhile); ``ignore_eof``: never exit by
  itself (the client must stop it with a signal).

Every line read from stdin is appended to ``LOG`` as it comes, one JSON object per line:
``{"line": TEXT}`` (the line as received) or ``{"event": ...}`` (what the play did).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

CALL = b'"@@CALL_ID@@"'
CALL_TEXT = b'"@@CALL_ID_TEXT@@"'


class Inbox:
    """The client's messages, read by a thread of their own (a play may not read stdin itself:
    it must go on writing while the client writes)."""

    def __init__(self, log_path: str) -> None:
        self.messages: list[Any] = []
        self.eof = False
        self.cond = threading.Condition()
        self.log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 (kept open for the run)
        self.cursor = 0
        self.answer_plain = False
        threading.Thread(target=self._read, daemon=True).start()

    def note(self, **entry: Any) -> None:
        with self.cond:
            self.log.write(json.dumps(entry) + "\n")
            self.log.flush()

    def _read(self) -> None:
        for raw in sys.stdin.buffer:
            text = raw.decode("utf-8", "replace")
            self.note(line=text)
            try:
                message = json.loads(text)
            except ValueError:
                message = None
            with self.cond:
                self.messages.append(message)
                self.cond.notify_all()
            if self.answer_plain and isinstance(message, dict) and message.get("method") == "tools/call":
                result = {"content": [{"type": "text", "text": "plain"}]}
                write(
                    json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "result": result}).encode() + b"\n"
                )
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def wait_request(self, method: str, within: float) -> Any:
        """The id of the next request ``method`` (None: stdin ended, or nothing came in time)."""
        deadline = time.monotonic() + within
        with self.cond:
            while True:
                while self.cursor < len(self.messages):
                    message = self.messages[self.cursor]
                    self.cursor += 1
                    if isinstance(message, dict) and message.get("method") == method and "id" in message:
                        return message["id"]
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    return None
                self.cond.wait(left)

    def wait_answers(self, keys: list[str], within: float) -> bool:
        deadline = time.monotonic() + within
        with self.cond:
            while True:
                answered = {
                    json.dumps(m.get("id"))
                    for m in self.messages
                    if isinstance(m, dict) and "method" not in m and ("result" in m or "error" in m)
                }
                if set(keys) <= answered:
                    return True
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    return False
                self.cond.wait(left)

    def wait_eof(self) -> None:
        with self.cond:
            while not self.eof:
                self.cond.wait()


WRITE_LOCK = threading.Lock()


def write(data: bytes, stream: int = 1) -> None:
    with WRITE_LOCK:
        try:
            while data:
                data = data[os.write(stream, data) :]
        except OSError:
            pass  # the client closed its end: what it did not read is lost


def main() -> None:
    plan_path, log_path = sys.argv[1], sys.argv[2]
    with open(plan_path, encoding="utf-8") as plan_file:
        steps = json.load(plan_file)["steps"]
    inbox = Inbox(log_path)
    call_id: Any = None
    for step in steps:
        op = step["op"]
        if op == "await":
            call_id = inbox.wait_request(step["method"], 5.0)
            inbox.note(event="awaited", method=step["method"], id=call_id)
            if call_id is None:
                os._exit(0)
        elif op == "out":
            data = bytes.fromhex(step["data"])
            data = data.replace(CALL, json.dumps(call_id).encode()).replace(
                CALL_TEXT, json.dumps(str(call_id)).encode()
            )
            start = 0
            for cut in [*sorted(c for c in step.get("splits", []) if 0 < c < len(data)), len(data)]:
                if cut > start:
                    write(data[start:cut])
                    time.sleep(0.002)  # let the client read this piece on its own
                start = cut
        elif op == "err":
            write(bytes.fromhex(step["data"]), 2)
        elif op == "answers":
            settled = inbox.wait_answers(step["ids"], step["timeout"])
            inbox.note(event="answers", settled=settled)
        elif op == "exit":
            inbox.note(event="exit", code=step["code"])
            os._exit(step["code"])
        elif op == "close_stdout":
            with WRITE_LOCK:
                os.close(1)
            inbox.note(event="closed stdout")
        elif op == "end":
            inbox.answer_plain = True
            if step["mode"] == "ignore_eof":
                while True:
                    time.sleep(60)
            inbox.wait_eof()
            inbox.note(event="eof")
            os._exit(0)
    os._exit(0)


if __name__ == "__main__":
    main()
