"""Whatever a 2025-11-25 server does over stdio, the client's call ends in time, with a result or a
typed error, and every request of the server's it read is answered once.

A real subprocess (:mod:`.legacy_stdio_script_server`) plays what hypothesis writes, the stdio
twin of :mod:`.test_any_legacy_http_server`: before the answer to ``initialize``, pings, logs and
unreadable lines; then that answer, of any shape (odd ``protocolVersion``, capabilities and
``serverInfo`` of any shape, an error, nothing at all); then, once the ``tools/call`` came, any
number of lines: requests of the server's own (forms in and outside the subset, URL mode with
dangerous addresses, sampling and roots well-formed or not, ``ping``, unknown methods, ids that
repeat or equal the client's own ids, requests that are not valid JSON-RPC), notifications of any
kind (progress with any token and values, logs, ``notifications/cancelled``, completions of
unknown elicitations), responses to calls never made, unreadable lines (not JSON, not UTF-8, the
call's answer with a byte that is not UTF-8), blank lines, a line over the client's 16 MiB limit,
stderr noise, each line ending with LF or CRLF and written in pieces cut at any byte; then
(after waiting for the client's answers, or not) the call's response of any shape, none or two;
and an end: staying until stdin closes, exiting with any code, exiting mid-line, a last message
with no line end, closing stdout, or ignoring the end of stdin.

For each plan:

* connecting and the call end within a bound with a :class:`ToolResult` or a
  :class:`ClientError` whose message is printable text; where the plan leaves no doubt, it is the
  one the model says: the session opens on a good ``InitializeResult``; the call returns the
  result the server sent for its id, raises :class:`McpClientError` with the code and message the
  server sent, :class:`MalformedMessageError` for a response it cannot read, or
  :class:`ServerExitedError` / :class:`RequestTimeoutError` when no response came;
* each request of the server's that the client read, and that the server waited for, gets
  exactly one well-formed answer (a result of the method's shape, or an error with a JSON-RPC
  code), the -32600 refusal when it is not valid JSON-RPC; a reused id gets none, nothing is
  answered twice, nothing the server never asked;
* the answerer is shown only forms inside the subset and URLs the server sent in a URL
  elicitation, as sent; nothing opens a browser; a completion is reported only for an accepted URL;
* nothing logs an error or a traceback, the process has exited once the client is closed, and
  no task is left running.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mcp_elicit.client import (
    Answer,
    Client,
    ClientError,
    FormQuestion,
    InvalidAnswerError,
    MalformedMessageError,
    McpClientError,
    NotMcpServerError,
    RequestTimeoutError,
    ServerExitedError,
    ToolResult,
    UrlQuestion,
)
from mcp_elicit.client.stdio import DEFAULT_MAX_MESSAGE_BYTES
from mcp_elicit.wire import errors as codes
from tests.strategies import hunt_phases, json_values

from .legacy_hostile_server import CALL_ID, CALL_ID_TEXT, GOOD_INIT, MISSING, Ask, Raw, key_of, result_of
from .test_any_legacy_http_server import (
    CODES,
    GOOD_RESULT,
    UNPRINTABLE,
    CallRun,
    Watchful,
    asks,
    call_results,
    check_message,
    check_what_the_person_saw,
    completions,
    connect_and_call,
    good_init,
    good_init_results,
    init_results,
    mostly,
    no_browser,
    no_tracebacks,
    notifications,
    raws,
    record_run,
    request_ids,
    strays,
    url_required,
    urls_offered,
)
from .test_any_server_reply import errors, good_forms

SCRIPT = Path(__file__).with_name("legacy_stdio_script_server.py")
# The whole file in about 8 s on a 2-core machine; more for a longer hunt.
CI_EXAMPLES = int(os.environ.get("ANY_LEGACY_STDIO_SERVER_EXAMPLES", "35"))
WITHIN = 10.0  # connecting, or the call, or closing takes longer: the client is stuck
# What ends a call that gets no response from a server that stays. It also times initialize,
# which is sent as the server's interpreter starts: 0.5 s was not enough on a loaded 2-core
# machine (a good handshake failed now and then with RequestTimeoutError).
REQUEST_TIMEOUT = 1.0
CONNECT_TIMEOUT = 2.0
ANSWER_WAIT = 2.0  # how long the server waits for the answers it is owed
GOOD_ANSWER = result_of(CALL_ID, GOOD_RESULT)


# -- what the server writes ---------------------------------------------------------------------
@dataclass(frozen=True)
class Blank:
    """A line with nothing in it (or only spaces)."""

    data: bytes = b""


@dataclass(frozen=True)
class Huge:
    """A line past the client's limit of one message (16 MiB): it cannot be read, and fails what
    is waiting for an answer."""


@dataclass(frozen=True)
class Noise:
    """Bytes on stderr (between the lines on stdout)."""

    data: bytes


# The call's answer, unreadable (a byte that is not UTF-8): it fails the call at once.
UNREADABLE_ANSWER = Raw(b'{"jsonrpc":"2.0","id":"@@CALL_ID@@","result":{"content":"\xff"}}')
Item = Ask | Raw | Blank | Huge | Noise | dict[str, Any] | None

sampling_asks = st.builds(
    lambda request_id, params: Ask(request_id, "sampling/createMessage", params),
    request_ids,
    st.fixed_dictionaries(
        {
            "messages": mostly(
                [{"role": "user", "content": {"type": "text", "text": "hi"}}], [], "hi", weight=3
            ),
            "maxTokens": mostly(10, "10", None, 1.5, weight=3),
        },
        optional={"includeContext": st.sampled_from(["none", "thisServer"]), "tools": st.just([])},
    ),
)
roots_asks = st.builds(lambda i, p: Ask(i, "roots/list", p), request_ids, st.just(MISSING) | json_values)
noise = st.builds(
    Noise,
    st.sampled_from(
        [b"warming up\n", b"\x1b[31mred\x1b[0m\n", b"\xff\xfe not utf-8\n", b"no newline", b"x" * 5000]
    ),
)
blanks = st.builds(Blank, st.sampled_from([b"", b"   ", b"\t"]))
ITEM_KINDS: dict[str, st.SearchStrategy[Item]] = {
    "ask": asks,
    "form": st.builds(lambda i, r: Ask(i, r["method"], r["params"]), request_ids, good_forms),
    "sampling": sampling_asks,
    "roots": roots_asks,
    "note": notifications,
    "stray": strays,
    "raw": raws,
    "blank": blanks,
    "noise": noise,
    "null": st.none(),  # a line of "null": JSON, not a message
}
# (one_of draws the same strategy given twice no more often: the kinds are drawn by name)
items: st.SearchStrategy[Item] = st.sampled_from(
    [
        "ask",
        "form",
        "ask",
        "note",
        "sampling",
        "roots",
        "stray",
        "raw",
        "blank",
        "noise",
        "null",
        "form",
        "ask",
    ]
).flatmap(ITEM_KINDS.__getitem__)
rare_items: st.SearchStrategy[Item] = mostly(None, Huge(), UNREADABLE_ANSWER, weight=6)
init_items: st.SearchStrategy[Item] = st.one_of(
    st.builds(lambda i: Ask(i, "ping"), request_ids),
    st.just({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}),
    raws,
    blanks,
    noise,
)
init_replies = mostly("good", "any", "error", "none", weight=6).flatmap(
    lambda kind: {
        "good": st.builds(lambda r: result_of(CALL_ID, r), good_init_results),
        "any": st.builds(lambda r: result_of(CALL_ID, r), init_results),
        "error": st.builds(lambda e: {"jsonrpc": "2.0", "id": CALL_ID, "error": e}, errors),
        "none": st.none(),  # no answer: the end comes first
    }[kind]
)
responses = st.one_of(
    st.just(GOOD_ANSWER),
    st.just(GOOD_ANSWER),
    st.builds(lambda r: result_of(CALL_ID, r), call_results),
    st.builds(lambda e: {"jsonrpc": "2.0", "id": CALL_ID, "error": e}, errors | url_required),
    st.just({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Parse error somewhere"}}),
    st.just(result_of(CALL_ID_TEXT, GOOD_RESULT)),  # a look-alike id: not the answer
    st.dictionaries(st.sampled_from(["jsonrpc", "id", "result", "error"]), st.just(CALL_ID) | json_values),
)
# How the play ends. "eof": it stays until the client closes stdin; "exit": exits with a code;
# "mid-line": writes half of the call's answer and exits; "no-eol": the call's answer with no line
# end, then exits; "close-stdout": closes stdout and stays; "ignore-eof": never exits by itself.
endings = st.sampled_from(
    ["eof", "exit", "eof", "mid-line", "no-eol", "exit", "close-stdout", "ignore-eof", "eof", "exit", "eof"]
    + ["eof"] * 8
)
MID_LINE = b'{"jsonrpc": "2.0", "id": "@@CALL_ID@@", "result": {"content": [{"type": "te'


@dataclass
class Plan:
    init_items: list[Item]
    init_reply: dict[str, Any] | None
    items: list[Item]
    wait: bool  # wait for the client's answers before the response
    finals: list[Any]
    ending: str
    exit_code: int
    eol: bytes
    splits: list[int]


plans = st.builds(
    Plan,
    init_items=st.lists(init_items, max_size=3),
    init_reply=init_replies,
    items=st.builds(
        lambda a, b: [*a, *([b] if b is not None else [])], st.lists(items, max_size=6), rare_items
    ),
    wait=mostly(True, False, weight=3),
    finals=st.builds(
        lambda after, chosen: [*after, *chosen],
        st.lists(completions, max_size=1),
        st.sampled_from([1, 1, 1, 0, 2]).flatmap(lambda n: st.lists(responses, min_size=n, max_size=n)),
    ),
    ending=endings,
    exit_code=st.sampled_from([0, 1, 3, 255]),
    eol=st.sampled_from([b"\n", b"\r\n"]),
    splits=st.lists(st.integers(0, 3000), max_size=6),
)


# -- the script the server plays ----------------------------------------------------------------
def marked(value: Any) -> Any:
    """``value`` with the placeholders as the strings the script replaces."""
    if value is CALL_ID:
        return "@@CALL_ID@@"
    if value is CALL_ID_TEXT:
        return "@@CALL_ID_TEXT@@"
    if isinstance(value, dict):
        return {k: marked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [marked(v) for v in value]
    return value


def line_of(item: Item, eol: bytes) -> bytes:
    if isinstance(item, Ask):
        data = json.dumps(marked(item.message()), ensure_ascii=False).encode("utf-8", "surrogatepass")
    elif isinstance(item, Raw | Blank):
        data = item.data
    elif isinstance(item, Huge):
        data = b"x" * (DEFAULT_MAX_MESSAGE_BYTES + 10)
    else:
        data = json.dumps(marked(item), ensure_ascii=False).encode("utf-8", "surrogatepass")
    return data + eol


def writes(lines: list[Item], eol: bytes, splits: list[int]) -> list[dict[str, Any]]:
    """The steps that write ``lines``: stdout in pieces, stderr noise where it falls."""
    steps: list[dict[str, Any]] = []
    out = b""

    def flush() -> None:
        nonlocal out
        if out:
            steps.append({"op": "out", "data": out.hex(), "splits": splits})
        out = b""

    for item in lines:
        if isinstance(item, Noise):
            flush()
            steps.append({"op": "err", "data": item.data.hex()})
        else:
            out += line_of(item, eol)
    flush()
    return steps


@dataclass
class Model:
    """What the plan says must come of it, where it leaves no doubt."""

    connects: bool | None  # None: either way
    init_error: type[ClientError] | tuple[type[ClientError], ...] | None = None
    outcome: Callable[[ToolResult | ClientError], bool] | None = None
    owed: dict[str, str] = field(default_factory=dict)  # request key -> "answer" | "refuse"
    once: set[str] = field(default_factory=set)  # keys that may get one answer, or none
    methods: dict[str, str] = field(default_factory=dict)


def script(plan: Plan) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = [{"op": "await", "method": "initialize"}]
    steps += writes(plan.init_items, plan.eol, plan.splits)
    if plan.init_reply is not None:
        steps += writes([plan.init_reply], plan.eol, plan.splits)
        steps.append({"op": "await", "method": "tools/call"})
        steps += writes(plan.items, plan.eol, plan.splits)
        if plan.wait:
            steps.append({"op": "answers", "ids": sorted(requests_owed(plan)), "timeout": ANSWER_WAIT})
        steps += writes(plan.finals, plan.eol, plan.splits)
    ending = plan.ending
    if ending == "mid-line":
        steps.append({"op": "out", "data": MID_LINE.hex()})
    if ending == "no-eol":
        steps.append({"op": "out", "data": line_of(GOOD_ANSWER, b"").hex()})
    if ending in ("exit", "mid-line", "no-eol"):
        steps.append({"op": "exit", "code": plan.exit_code})
    if ending == "close-stdout":
        steps.append({"op": "close_stdout"})
    steps.append({"op": "end", "mode": "ignore_eof" if ending == "ignore-eof" else "eof"})
    return steps


def command(plan: Plan, folder: str) -> tuple[list[str], Path]:
    """The command line that plays ``plan`` (written to ``folder``), and the log it keeps."""
    plan_path, log_path = Path(folder, "plan.json"), Path(folder, "log.jsonl")
    plan_path.write_text(json.dumps({"steps": script(plan)}), encoding="utf-8")
    return [sys.executable, str(SCRIPT), str(plan_path), str(log_path)], log_path


def server_requests(lines: list[Item], known: set[str]) -> tuple[dict[str, str], set[str], dict[str, str]]:
    """The requests among ``lines`` a client owes an answer (``key -> "answer" | "refuse"``), those
    it may answer or not (the server cancelled them), and their methods; ``known``: the ids seen
    before (a reused id is owed nothing), updated."""
    owed: dict[str, str] = {}
    maybe: set[str] = set()
    methods: dict[str, str] = {}
    for item in lines:
        if isinstance(item, Ask) or (isinstance(item, Raw) and item.owed is not None):
            key = key_of(item.id if isinstance(item, Ask) else item.owed)
            if key in known:
                continue
            known.add(key)
            owed[key] = "answer" if isinstance(item, Ask) and item.valid else "refuse"
            methods[key] = item.method if isinstance(item, Ask) else "(unreadable)"
        elif isinstance(item, dict) and item.get("method") == "notifications/cancelled":
            params = item.get("params")
            named = params.get("requestId") if isinstance(params, dict) else None
            if isinstance(named, str | int) and not isinstance(named, bool) and key_of(named) in owed:
                key = key_of(named)
                maybe.add(key)  # (cancelled before its answer went out, or after)
                del owed[key]
    return owed, maybe, methods


def requests_owed(plan: Plan) -> set[str]:
    known: set[str] = set()
    server_requests(plan.init_items, known)
    owed, _, _ = server_requests(plan.items, known)
    return set(owed)


def response_kind(item: Item) -> str:
    """What a line does to the call: ``neutral`` (nothing), ``result``, ``good`` (GOOD_ANSWER),
    ``error`` (a JSON-RPC error for it), ``malformed`` (its answer, unreadable), ``unknown``."""
    if isinstance(item, Huge) or item is UNREADABLE_ANSWER:
        return "malformed"
    if not isinstance(item, dict) or "method" in item:
        return "neutral"
    if item.get("id") is None and "id" in item and set(item) == {"jsonrpc", "id", "error"}:
        error = item["error"]
        if item["jsonrpc"] == "2.0" and valid_error(error):
            return "error"  # a null id with one request waiting: that request's
        return "unknown"
    if item.get("id") is not CALL_ID:
        return "neutral" if item.get("id") in (987654, -1, "x", CALL_ID_TEXT) else "unknown"
    if item.get("jsonrpc") != "2.0":
        return "unknown"
    if set(item) == {"jsonrpc", "id", "result"}:
        if item == GOOD_ANSWER:
            return "good"
        return "result" if isinstance(item["result"], dict) else "malformed"
    if set(item) == {"jsonrpc", "id", "error"} and valid_error(item["error"]):
        return "error"
    if "result" in item or "error" in item:
        return "malformed"
    return "unknown"


def valid_error(error: Any) -> bool:
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return False
    code = error.get("code")
    return isinstance(code, int) and not isinstance(code, bool) and code != -32042


def model(plan: Plan, answerer: Watchful) -> Model:
    found = Model(connects=None)
    reply = plan.init_reply
    if reply is None:
        found.connects = False
        errors_of: dict[str, type[ClientError] | tuple[type[ClientError], ...]] = {
            "eof": RequestTimeoutError,
            "ignore-eof": RequestTimeoutError,
            # (the client waits a second for the exit code before it calls the server gone)
            "close-stdout": (ServerExitedError, RequestTimeoutError),
        }
        found.init_error = errors_of.get(plan.ending, ServerExitedError)
        if any(isinstance(item, Raw) for item in plan.init_items):
            # A line that may not be JSON-RPC, before any that is: the client may name the program
            # as no MCP server (NotMcpServerError) rather than say how it ended.
            ended = found.init_error if isinstance(found.init_error, tuple) else (found.init_error,)
            found.init_error = (*ended, NotMcpServerError)
        if plan.ending == "no-eol":
            found.init_error = None  # that last line reads as a response to initialize: anything
        return found
    if good_init(reply):
        found.connects = True
    elif set(reply) == {"jsonrpc", "id", "error"} and valid_error(reply["error"]):
        found.connects, found.init_error = False, McpClientError
    elif set(reply) == {"jsonrpc", "id", "result"}:
        found.connects = False  # a result that is no InitializeResult: refused
    if found.connects is not True:
        return found
    known: set[str] = set()
    owed, _, methods = server_requests(plan.init_items, known)
    call_owed, maybe, call_methods = server_requests(plan.items, known)
    found.methods = {**methods, **call_methods}
    found.owed = owed  # answered before initialize's result, whatever the plan does later
    found.once = maybe | set(call_owed)
    if plan.wait:
        found.owed = {**owed, **call_owed}
        found.once = maybe
    found.outcome = call_outcome(plan, answerer)
    return found


def call_outcome(plan: Plan, answerer: Watchful) -> Callable[[ToolResult | ClientError], bool] | None:
    lines = [*plan.items, *plan.finals]
    if plan.ending == "no-eol":
        lines.append(GOOD_ANSWER)  # a whole last message is still taken
    for item in lines:
        kind = response_kind(item)
        if kind == "neutral":
            continue
        # (an answerer that accepts a form with nothing filled in gives up on required fields)
        may_fail = answerer.action == "accept"
        if kind == "good":
            return lambda o: (
                (isinstance(o, ToolResult) and o.text == "done")
                or (may_fail and isinstance(o, InvalidAnswerError))
            )
        if kind == "error":
            expected = (item["error"]["code"], item["error"]["message"])
            return lambda o: (
                (isinstance(o, McpClientError) and (o.code, o.message) == expected)
                or (may_fail and isinstance(o, InvalidAnswerError))
            )
        if kind == "malformed":
            return lambda o: isinstance(o, MalformedMessageError | InvalidAnswerError)
        return None  # result (it may not be a ToolResult's shape), unknown
    if plan.ending == "eof":
        return lambda o: isinstance(o, RequestTimeoutError | InvalidAnswerError)
    if plan.ending == "ignore-eof":
        return lambda o: isinstance(o, RequestTimeoutError | InvalidAnswerError)
    if plan.ending == "close-stdout":
        # (the client waits a second for the exit code before it calls the server gone: a shorter
        # request_timeout ends the call first)
        return lambda o: isinstance(o, ServerExitedError | RequestTimeoutError | InvalidAnswerError)
    return lambda o: isinstance(o, ServerExitedError | InvalidAnswerError)


# -- the person -----------------------------------------------------------------------------------
@dataclass
class Slow(Watchful):
    """:class:`Watchful`, taking ``delay`` seconds over each answer (the server may exit meanwhile)."""

    delay: float = 0.0

    async def answer_form(self, question: FormQuestion) -> Answer:
        await asyncio.sleep(self.delay)
        return await super().answer_form(question)

    async def answer_url(self, question: UrlQuestion) -> Answer:
        await asyncio.sleep(self.delay)
        return await super().answer_url(question)


class Sampler:
    async def create_message(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}


ROOTS = [{"uri": "file:///tmp/project", "name": "project"}]


# -- one run ------------------------------------------------------------------------------------
@dataclass
class Run(CallRun):
    returncode: int | None = None
    closed_in: float = 0.0


async def run(
    argv: list[str], answerer: Watchful, providers: bool, stderr: Any, log: Path | None = None
) -> Run:
    done = Run()
    extra: dict[str, Any] = {"sampler": Sampler(), "roots": ROOTS} if providers else {}
    client = await connect_and_call(
        argv,
        answerer,
        done,
        within=WITHIN,
        protocol="2025-11-25",
        stderr=stderr,
        request_timeout=REQUEST_TIMEOUT,
        connect_timeout=CONNECT_TIMEOUT,
        **extra,
    )
    if client is None:
        return done
    try:
        # What was read is answered while the session is open, whatever became of the call.
        await until_noted(log, client)
    finally:
        started = time.monotonic()
        await asyncio.wait_for(client.aclose(), WITHIN)
        done.closed_in = time.monotonic() - started
        proc = client._transport._proc  # type: ignore[attr-defined]
        done.returncode = proc.returncode if proc is not None else None
    return done


async def until_noted(log: Path | None, client: Client) -> None:
    """Wait until the server is done waiting for its answers (or gone), at most a bound."""
    proc = client._transport._proc  # type: ignore[attr-defined]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + ANSWER_WAIT + 1
    while log is not None and loop.time() < deadline and proc.returncode is None:
        _, noted = read_log(log)
        if any(n.get("event") in ("answers", "eof", "exit", "closed stdout") for n in noted):
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.02)  # answers still on their way out


def read_log(path: Path) -> tuple[list[Any], list[dict[str, Any]]]:
    """The client's messages as the server read them, and what the play noted."""
    messages: list[Any] = []
    noted: list[dict[str, Any]] = []
    if not path.exists():
        return messages, noted
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if "line" in entry:
            try:
                messages.append(json.loads(entry["line"]))
            except ValueError:
                messages.append(entry["line"])
        else:
            noted.append(entry)
    return messages, noted


def check_answers(found: Model, messages: list[Any], noted: list[dict[str, Any]], connected: bool) -> None:
    answers: dict[str, list[dict[str, Any]]] = {}
    for message in messages:
        assert isinstance(message, dict), f"the client wrote a line that is not a JSON object: {message!r}"
        assert message.get("jsonrpc") == "2.0", message
        if "method" not in message:
            answers.setdefault(key_of(message.get("id")), []).append(message)
    may = {**found.owed, **dict.fromkeys(found.once, "answer")}
    for key, got in answers.items():
        assert key in may or not connected or found.connects is None, (
            f"an answer to {key}, never asked: {got}"
        )
        assert len(got) == 1, f"request {key} answered {len(got)} times: {got}"
        (answer,) = got
        assert ("result" in answer) != ("error" in answer), answer
        if "error" in answer:
            error = answer["error"]
            assert error["code"] in CODES, answer
            assert isinstance(error["message"], str), answer
            assert error["message"].strip(), answer
            if may.get(key) == "refuse":
                assert error["code"] == codes.INVALID_REQUEST, answer
            event(f"answered {error['code']}")
            continue
        assert may.get(key) == "answer", f"an invalid request was answered with a result: {answer}"
        method, result = found.methods.get(key), answer["result"]
        if method == "ping":
            assert result == {}, answer
        elif method == "elicitation/create":
            assert result["action"] in ("accept", "decline", "cancel"), answer
            assert "content" not in result or result["action"] == "accept", answer
        elif method == "sampling/createMessage":
            assert result["model"] == "m", answer
        elif method == "roots/list":
            assert result == {"roots": ROOTS}, answer
        event(f"answered {method} with a result")
    settled = [n["settled"] for n in noted if n.get("event") == "answers"]
    if settled:  # the server waited for its answers, the session open
        missing = [k for k in found.owed if k not in answers]
        assert settled == [True], f"read and never answered: {missing}"
        assert not missing, missing


@settings(
    max_examples=CI_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    phases=hunt_phases(),
)
@given(
    plan=plans,
    modes=st.sampled_from([frozenset({"form", "url"}), frozenset({"form"})]),
    action=st.sampled_from(["accept", "decline", "cancel", "accept"]),
    delay=mostly(0.0, 0.3, weight=3),
    providers=st.booleans(),
    stderr=st.sampled_from(["capture", "devnull"]),
)
async def test_any_legacy_stdio_server_gets_an_answer_or_a_typed_error(
    plan: Plan, modes: frozenset[str], action: str, delay: float, providers: bool, stderr: str
) -> None:
    answerer = Slow(modes, action, delay=delay)
    found = model(plan, answerer)
    with tempfile.TemporaryDirectory() as folder:
        argv, log_path = command(plan, folder)
        with no_browser() as opened, no_tracebacks():
            done = await run(argv, answerer, providers, stderr, log_path if plan.wait else None)
            await asyncio.sleep(0)  # let what was cancelled finish
            left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
            assert not left, left
        messages, noted = read_log(log_path)
    outcome = done.outcome
    assert isinstance(outcome, ToolResult | ClientError), outcome
    if isinstance(outcome, ServerExitedError):
        assert not UNPRINTABLE.search(outcome.summary), outcome.summary  # (its stderr is the server's)
    elif isinstance(outcome, ClientError):
        check_message(outcome)
    if found.connects is not None:
        assert done.connected == found.connects, (outcome, found)
    if not done.connected and found.init_error is not None:
        assert isinstance(outcome, found.init_error), outcome
    if done.connected:
        assert done.returncode is not None, "the server still runs after close"
        assert done.closed_in < 2 * 2.0 + 1, done.closed_in  # stdin closed, then SIGTERM at most
        if found.outcome is not None:
            assert found.outcome(outcome), outcome
        check_answers(found, messages, noted, done.connected)
    offered = urls_offered((plan.init_items, plan.items, plan.finals))  # type: ignore[arg-type]
    check_what_the_person_saw(answerer, offered, done, opened)
    record_run(done, answerer)
    event(f"ending: {plan.ending}")


# -- cases, one each ------------------------------------------------------------------------------
GOOD_INIT_REPLY = result_of(CALL_ID, GOOD_INIT)


def plan_of(items: list[Item], finals: list[Any], ending: str = "eof", wait: bool = True) -> Plan:
    return Plan([], GOOD_INIT_REPLY, items, wait, finals, ending, 0, b"\n", [])


@pytest.mark.parametrize("ending", ["exit", "mid-line", "close-stdout"])
async def test_a_server_that_goes_while_the_person_answers_fails_the_call_at_once(ending: str) -> None:
    """The server asks, then goes before the answer (the person takes a while): the call fails with
    ServerExitedError, well before the person is done."""
    form = {"mode": "form", "message": "Sure?", "requestedSchema": {"type": "object", "properties": {}}}
    plan = plan_of([Ask(7, "elicitation/create", form)], [], ending=ending, wait=False)
    answerer = Slow(frozenset({"form"}), "decline", delay=3.0)
    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        done = await run(command(plan, folder)[0], answerer, False, "capture")
    assert isinstance(done.outcome, ServerExitedError), done.outcome
    assert time.monotonic() - started < 3.0


# Was a bug (stdio.py, StdioTransport._route): any notification whose params carried a
# progressToken that matched a request in flight went to that request's progress listener,
# whatever its method, and the listener dropped all but notifications/progress. A
# notifications/elicitation/complete (or a notifications/cancelled) with such a field was lost:
# on_url_complete was never called, a cancelled question was still answered.
async def test_a_completion_notice_that_carries_a_progress_token_is_still_a_completion() -> None:
    url = {"mode": "url", "message": "m", "url": "https://example.com/connect", "elicitationId": "e1"}
    notice = {
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": "e1", "progressToken": CALL_ID},
    }
    plan = plan_of([Ask("u", "elicitation/create", url)], [notice, GOOD_ANSWER])
    answerer = Slow(frozenset({"form", "url"}), "accept")
    with tempfile.TemporaryDirectory() as folder, no_browser():
        done = await run(command(plan, folder)[0], answerer, False, "capture")
    assert isinstance(done.outcome, ToolResult), done.outcome
    assert [c.elicitation_id for c in done.completed] == ["e1"]
