"""The 2025-11-25 part of ``bench/run.py``: a short real run of ours and the SDK, and the checks
that make anything but a whole, correct flow an error."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest

from tests.bench.bench_support import BENCH, SHORT_RUN, bench

sys.path.insert(0, str(BENCH))

import legacyclient as llc


def test_a_short_run_measures_checked_flows_of_ours_and_the_sdk() -> None:
    done = bench("--only", "legacy", "--servers", "ours,sdk", *SHORT_RUN, timeout=150)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "2025-11-25 HTTP" in out, out
    assert "2025-11-25 stdio" in out, out
    http, stdio = out.split("2025-11-25 stdio")
    for section in (http, stdio):
        rows = dict(re.findall(r"^  (ours|sdk) \(.*?\)\s+(\d+)", section, re.MULTILINE))
        assert set(rows) == {"ours", "sdk"}, section
        assert all(int(n) > 0 for n in rows.values()), section
        assert re.search(r"ratio ours/sdk\s+[\d.]+x", section), section
    assert "errors (every flow is verified" in out, out
    assert "\n    none\n" in out, out
    # the modern parts did not run
    assert "HTTP  closed loop" not in out
    assert "cold start" not in out


def test_unknown_parts_are_refused() -> None:
    done = bench("--skip", "legacy-tcp", timeout=60)
    assert done.returncode == 2
    assert "unknown part 'legacy-tcp'" in done.stderr


QUESTION: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Create ticket 'T-1-1'?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
    },
}


def with_params(**changes: Any) -> dict[str, Any]:
    return {**QUESTION, "params": {**QUESTION["params"], **changes}}


def test_the_question_is_checked_and_its_own_id_answered() -> None:
    assert llc.check_elicitation(QUESTION, "T-1-1") == 7
    assert (
        llc.answer_body(7) == b'{"jsonrpc":"2.0","id":7,"result":{"action":"accept","content":{"ok":true}}}'
    )
    assert llc.answer_body("a").startswith(b'{"jsonrpc":"2.0","id":"a",')


@pytest.mark.parametrize(
    ("message", "why"),
    [
        ({**QUESTION, "method": "sampling/createMessage"}, "expected an elicitation/create request"),
        ({k: v for k, v in QUESTION.items() if k != "id"}, "without a request id"),
        ({**QUESTION, "id": True}, "without a request id"),
        (with_params(mode="url", url="https://example.com"), "not a form question"),
        (with_params(requestedSchema={"type": "object", "properties": {}}), "does not ask for ok"),
        (with_params(message="Create ticket 'T-2-1'?"), "does not name T-1-1"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "expected an elicitation/create request"),
    ],
)
def test_anything_but_the_question_is_an_error(message: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        llc.check_elicitation(message, "T-1-1")


def result(text: str = "Created T-1-1", rid: int = 3, **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}], **extra}}


def test_the_result_is_checked() -> None:
    assert llc.check_result(result(), 3, "T-1-1") == "Created T-1-1"
    with pytest.raises(ValueError, match="id mismatch"):
        llc.check_result(result(rid=4), 3, "T-1-1")
    with pytest.raises(ValueError, match="expected text 'Created T-1-1'"):
        llc.check_result(result("Not created"), 3, "T-1-1")
    with pytest.raises(ValueError, match="isError"):
        llc.check_result(result(isError=True), 3, "T-1-1")
    with pytest.raises(ValueError, match="JSON-RPC error"):
        llc.check_result({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "x"}}, 3, "T-1-1")


class Recorder:
    """Stands where a user is: what a connection hands over."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def on_message(self, conn: Any, msg: Any) -> None:
        self.seen.append(msg)

    def on_end(self, conn: Any, status: int, body: bytes) -> None:
        self.seen.append(("end", status, conn.header(b"mcp-session-id")))

    def fail(self, msg: str) -> None:
        self.seen.append(("fail", msg))


def chunk(data: bytes) -> bytes:
    return b"%x\r\n" % len(data) + data + b"\r\n"


STREAM = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nMcp-Session-Id: AbC.dEf\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
    + chunk(b"retry: 1000\nid: s1.0\ndata: \n\n")
    + chunk(b'event: message\r\ndata: {"a":1}\r\n\r\n')
    + chunk(b'id: s1.2\ndata: {"b"')
    + chunk(b":2}\n\n")
    + b"0\r\n\r\n"
    + b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n"
)


@pytest.mark.parametrize("step", [1, 7, len(STREAM)])
def test_a_streamed_response_is_read_event_by_event_however_the_bytes_arrive(step: int) -> None:
    user = Recorder()
    conn = llc._Connection(user)  # type: ignore[arg-type]
    for i in range(0, len(STREAM), step):
        conn.data_received(STREAM[i : i + step])
    # the priming event (no data) is skipped; an event split across chunks is one message;
    # header values keep their case
    assert user.seen == [{"a": 1}, {"b": 2}, ("end", 200, "AbC.dEf"), ("end", 202, None)]
