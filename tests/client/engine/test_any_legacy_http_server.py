"""Whatever a 2025-11-25 server does over Streamable HTTP, the client's call ends in time, with a
result or a typed error, and every request of the server's it read is answered once.

A real HTTP server on 127.0.0.1 (:mod:`.legacy_hostile_server`) plays a legacy server from a plan
hypothesis writes: ``server/discover`` refused in any of the ways a legacy server refuses it;
``initialize`` answered with any result (wrong or odd ``protocolVersion``, capabilities and
``serverInfo`` of any shape), any ``Mcp-Session-Id`` (none, bad characters, empty, huge) or an
error, 5xx, a closed connection; the GET stream offered or not; each ``tools/call`` answered with
a JSON body of any status and content type, 404 for the session, a closed or hung connection, or
an event stream that carries ``elicitation/create`` (forms in and outside the subset, URL mode
with dangerous addresses, no ``elicitationId``, huge messages), ``ping``, unknown requests,
requests that are not valid JSON-RPC, notifications of any kind, responses to calls never made,
unreadable events, ids that look like the call's, split at any byte, cut early and resumed (or
not), never ended, then a response of any shape (an error, ``-32042``, none, twice).

For each plan:

* connecting and the call end within a bound with a :class:`ToolResult` or a
  :class:`ClientError` whose message names the problem, in printable text; where the plan
  leaves no doubt (a good handshake; the result on the call's stream after whatever comes
  before it, or after the stream dropped following an event with an id and was resumed; the
  client's answers to the requests there taken), the session opens and the call ends with that
  result;
* each request of the server's that the client read gets exactly one well-formed answer (an
  ``ElicitResult``, an empty result to ``ping``, or an error with a JSON-RPC code), or the -32600
  refusal when it is not valid JSON-RPC; a reused id gets none;
* the answerer is shown only forms inside the subset, and only URLs the server sent in a URL
  elicitation with its ``elicitationId``, exactly as sent; nothing opens a browser; a completion
  is reported only for a URL the person accepted;
* every request of the session carries the session id the server minted, never one it refused;
* nothing logs an error or a traceback, and nothing is left running once the client is closed.

Streams end their lines with LF, CRLF or CR alone. The tests after the property are the cases it
found, one each.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
import webbrowser
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

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
    Progress,
    RequestTimeoutError,
    ToolResult,
    TransportError,
    UrlQuestion,
)
from mcp_elicit.client.http import POST_RETRY_DELAYS
from mcp_elicit.client.server_requests import UrlCompleted
from mcp_elicit.client.urls import assess_url
from mcp_elicit.schema import check_schema
from mcp_elicit.wire import errors as codes
from mcp_elicit.wire.legacy import LEGACY_VERSIONS
from tests.helpers import no_errors_logged
from tests.strategies import hunt_phases, json_values

from .legacy_hostile_server import (
    CALL_ID,
    CALL_ID_TEXT,
    DROP,
    GOOD_INIT,
    HANG,
    MISSING,
    Ask,
    Head,
    HostileServer,
    Plan,
    Raw,
    Reply,
    Stream,
    key_of,
    result_of,
    valid_session,
)
from .support import Script
from .test_any_server_reply import elicitation_params, errors, good_forms, other_methods

CI_EXAMPLES = 70  # the whole file in about 20 s on a 2-core machine
WITHIN = 10.0  # connecting, or the call, takes longer: the client is stuck
REQUEST_TIMEOUT = 1.0  # what ends a call whose stream never ends
CONNECT_TIMEOUT = 2.0
SETTLE = 2.0  # how long the answers may take to arrive once the call is over
CODES = {codes.METHOD_NOT_FOUND, codes.INVALID_PARAMS, codes.INTERNAL_ERROR, codes.INVALID_REQUEST}
# What a message meant for a person must not hold: C0 controls but tab and newline, DEL, C1,
# bidi controls, zero-width characters, BOM.
UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


def mostly(common: Any, *rare: Any, weight: int = 8) -> st.SearchStrategy[Any]:
    """``common``, and each of ``rare`` about once for ``2 * weight`` times it. The rare ones sit
    in the middle of the list: hypothesis draws its ends far more often than their share, and
    the rare choices here are the ones that cost a timeout."""
    return st.sampled_from([common] * weight + list(rare) + [common] * weight)


# -- the server's requests ----------------------------------------------------------------------
# Ids of the server's own space: some equal the client's own ids (1, 2, 3...), some look alike.
request_ids = (
    st.sampled_from([0, 1, 2, 3, "1", "a", "b", ""]) | st.integers(-(2**53), 2**53) | st.text(max_size=6)
)
URLS = [
    "https://example.com/connect",
    "https://accounts.example.org/oauth?x=1",
    "javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "http://10.0.0.1/",
    "http://127.0.0.1:9/x",
    "https://exаmple.com/",  # a Cyrillic a
    "https://user:pw@evil.example/",
    "https://example.com/\u202egpj.exe",
    " https://example.com/ ",
    "https://example.com/" + "a" * 3000,
]
# (drawn by index: hypothesis shows strategies, and a 3000-character URL in each would drown it)
urls = st.integers(0, len(URLS) - 1).map(URLS.__getitem__)
ELICITATION_IDS = ["e1", "e2"]
EOLS = [b"\n", b"\r\n", b"\r"]
url_params = st.fixed_dictionaries(
    {"mode": st.just("url"), "message": st.text(max_size=20), "url": urls | st.text(max_size=20)},
    optional={"elicitationId": st.sampled_from(ELICITATION_IDS) | json_values},
)
# A URL question as the spec has it (its elicitationId), to any address.
url_questions = st.fixed_dictionaries(
    {
        "mode": st.just("url"),
        "message": st.text(max_size=20),
        "url": urls,
        "elicitationId": st.sampled_from(ELICITATION_IDS),
    }
)


def huge_form() -> dict[str, Any]:
    return {
        "mode": "form",
        "message": "x" * 200_000,
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    }


url_asks = st.fixed_dictionaries({"method": st.just("elicitation/create"), "params": url_questions})
asks = st.builds(
    lambda request_id, request: Ask(request_id, request["method"], request.get("params", MISSING)),
    request_ids,
    st.one_of(  # (questions the answerer is shown at both ends: hypothesis draws those most)
        url_asks,
        good_forms,
        st.fixed_dictionaries(
            {"method": st.just("elicitation/create"), "params": elicitation_params | json_values}
        ),
        st.fixed_dictionaries({"method": st.just("elicitation/create"), "params": url_params}),
        st.fixed_dictionaries({"method": st.just("elicitation/create"), "params": st.builds(huge_form)}),
        st.fixed_dictionaries({"method": st.just("ping")}, optional={"params": st.just({}) | json_values}),
        st.fixed_dictionaries({"method": other_methods}, optional={"params": json_values}),
        url_asks,
        good_forms,
    ),
)
# Unreadable events; a request in one whose id can be read is owed the -32600 refusal.
raws = st.sampled_from(
    [
        Raw(b"not json"),
        Raw(b"{"),
        Raw(b'{"jsonrpc": "2.0"}'),
        Raw(b"[1, 2]"),
        Raw(b"\xff\xfe{}"),
        Raw(b'{"jsonrpc":"2.0","id":true,"method":"ping"}'),
        Raw(b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}'),
        Raw(b'{"jsonrpc":"2.0","id":"x","result":1,"error":{"code":1,"message":"m"}}'),
        Raw(b'{"jsonrpc":"2.0","method":"notifications/message","params":[]}'),
        Raw(b'{"jsonrpc":"2.0","id":"bad-0","method":"ping"} and more'),
        Raw(b'{"jsonrpc":"2.0","id":"bad-1","method":"ping","params":5}', "bad-1"),
        Raw(b'{"jsonrpc":"1.0","id":"bad-2","method":"elicitation/create","params":{}}', "bad-2"),
        Raw(b'{"jsonrpc":"2.0","id":"bad-3","method":7}', "bad-3"),
    ]
)
notifications = st.one_of(
    st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "method": st.just("notifications/progress"),
            "params": st.fixed_dictionaries(
                {
                    "progressToken": st.just(CALL_ID) | request_ids,
                    "progress": st.floats(allow_nan=False) | json_values,
                },
                optional={"total": json_values, "message": json_values},
            ),
        }
    ),
    st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "method": st.just("notifications/message"),
            "params": st.fixed_dictionaries({"level": st.just("info") | json_values, "data": json_values}),
        }
    ),
    st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "method": st.just("notifications/elicitation/complete"),
            "params": st.fixed_dictionaries(
                {"elicitationId": st.sampled_from([*ELICITATION_IDS, "nobody"]) | json_values}
            ),
        }
    ),
    st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "method": st.just("notifications/cancelled"),
            "params": st.fixed_dictionaries({"requestId": request_ids}, optional={"reason": json_values}),
        }
    ),
    st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "method": st.sampled_from(["notifications/tools/list_changed", "notifications/resources/updated"])
            | st.text(max_size=10),
        },
        optional={"params": json_values},
    ),
)
completions = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "method": st.just("notifications/elicitation/complete"),
        "params": st.fixed_dictionaries({"elicitationId": st.sampled_from(ELICITATION_IDS)}),
    }
)
# Responses to calls never made: other ids, and the call's id as a string.
strays = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "id": st.sampled_from([987654, -1, "x", CALL_ID_TEXT])}
).flatmap(
    lambda envelope: st.one_of(
        st.builds(lambda r: {**envelope, "result": r}, json_values),
        st.builds(lambda e: {**envelope, "error": e}, errors),
    )
)
items = st.one_of(asks, asks, asks, notifications, strays, raws, st.none())
init_items = st.one_of(  # what may come before the answer to initialize
    st.builds(lambda i: Ask(i, "ping"), request_ids),
    st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "method": st.just("notifications/message"),
            "params": st.just({"level": "info", "data": "hi"}),
        }
    ),
    raws,
)

# -- the call's response ----------------------------------------------------------------------
GOOD_RESULT = {"content": [{"type": "text", "text": "done"}]}
call_results = st.one_of(
    st.just(GOOD_RESULT),
    st.fixed_dictionaries(
        {},
        optional={
            "content": st.lists(
                st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=10)}), max_size=2
            )
            | json_values,
            "isError": json_values,
            "structuredContent": json_values,
        },
    ),
    json_values,
)
url_entries = st.fixed_dictionaries(
    {
        "mode": st.just("url") | json_values,
        "elicitationId": st.sampled_from(ELICITATION_IDS) | json_values,
        "url": urls | st.text(max_size=10),
        "message": st.text(max_size=10) | json_values,
    }
)
url_required = st.fixed_dictionaries(
    {
        "code": st.just(-32042),
        "message": st.text(max_size=20),
        "data": st.fixed_dictionaries({"elicitations": st.lists(url_entries, max_size=2) | json_values})
        | json_values,
    }
)
responses = st.one_of(
    st.builds(lambda r: result_of(CALL_ID, r), call_results),
    st.just(result_of(CALL_ID, GOOD_RESULT)),
    st.builds(lambda e: {"jsonrpc": "2.0", "id": CALL_ID, "error": e}, errors | url_required),
    st.just({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}),
    st.just(result_of(CALL_ID_TEXT, GOOD_RESULT)),  # a look-alike id: not the answer
    st.dictionaries(st.sampled_from(["jsonrpc", "id", "result", "error"]), st.just(CALL_ID) | json_values),
)


RESUMES: list[Reply] = ["continue", "continue", Head(404, b"gone", "text/plain"), Head(500), DROP]


@st.composite
def streams(
    draw: st.DrawFn, inner: st.SearchStrategy[Any], final: st.SearchStrategy[Any] | None, min_items: int = 0
) -> Stream:
    """A stream of ``inner`` items, then 0, 1 or 2 ``final`` messages (none if ``final`` is None)."""
    chosen = draw(st.lists(inner, min_size=min_items, max_size=5))
    priming = draw(st.booleans())
    events = len(chosen) + priming
    finals = draw(st.sampled_from([1, 1, 1, 0, 2])) if final is not None else 0
    # Notifications once the answers are in (a completion is only heard for an accepted URL).
    after = draw(st.lists(completions, max_size=2)) if finals else []
    return Stream(
        items=tuple(chosen),
        final=(*after, *(draw(final) for _ in range(finals))) if final is not None else (),
        priming=priming,
        event_ids=draw(st.sampled_from([True, True, False])),
        retry=draw(mostly(5, 20, None)),  # None: the client's default, 1 s
        eol=draw(st.sampled_from(EOLS)),
        chunked=draw(st.booleans()),
        splits=tuple(draw(st.lists(st.integers(0, 2000), max_size=8))),
        cut=draw(st.none() | st.none() | st.integers(0, events)),
        half=draw(st.booleans()),
        hang=draw(mostly(False, True)),
        resume=draw(st.sampled_from(RESUMES)),
    )


session_ids = st.one_of(
    st.none(),
    st.just("s-1"),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=40),
    st.text(st.characters(codec="latin-1", exclude_characters="\r\n"), max_size=20),  # spaces, controls, é
    st.sampled_from(["", "a" * 1024, "a" * 1025, "x" * 5000]),
)
init_results = st.one_of(
    st.just(GOOD_INIT),
    st.builds(lambda v: {**GOOD_INIT, "protocolVersion": v}, st.sampled_from(LEGACY_VERSIONS)),
    st.fixed_dictionaries(
        {},
        optional={
            "protocolVersion": st.sampled_from([*LEGACY_VERSIONS, "2026-07-28", "1999-01-01"]) | json_values,
            "capabilities": st.just({"tools": {}}) | json_values,
            "serverInfo": st.just({"name": "odd", "version": "1"}) | json_values,
            "instructions": json_values,
        },
    ),
    json_values,
)


good_sessions = (
    st.none() | st.just("s-1") | st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1)
)
good_init_results = st.just(GOOD_INIT) | st.builds(
    lambda v: {**GOOD_INIT, "protocolVersion": v}, st.sampled_from(LEGACY_VERSIONS)
)


@st.composite
def initialize_replies(draw: st.DrawFn) -> Reply:
    """Mostly a good handshake (the call is where most can go wrong), else anything."""
    kind = draw(
        mostly("good", "json", "json", "stream", "stream", "error", "status", "drop", "hang", weight=10)
    )
    if kind in ("good", "json", "stream"):
        good = kind == "good"
        session = draw(good_sessions if good else session_ids)
        results = good_init_results if good else init_results
        if kind == "json" or (good and draw(st.booleans())):
            return Head(body=result_of(CALL_ID, draw(results)), session=session)
        stream = draw(streams(init_items, st.builds(lambda r: result_of(CALL_ID, r), results)))
        final = stream.final or (result_of(CALL_ID, GOOD_INIT),) if good else stream.final
        return dataclasses.replace(stream, final=final, cut=None, hang=False, session=session)
    if kind == "error":
        error = {"code": -32602, "message": "Unsupported protocol version", "data": {"supported": ["1.0"]}}
        return Head(draw(st.sampled_from([200, 400])), {"jsonrpc": "2.0", "id": CALL_ID, "error": error})
    if kind == "status":
        return Head(draw(st.sampled_from([500, 502, 503, 404])), b"<html>oops</html>", "text/html")
    return DROP if kind == "drop" else HANG


call_replies = st.one_of(
    streams(items, responses, min_items=1),
    streams(items, responses, min_items=1),
    streams(items, responses, min_items=1),
    streams(items, responses),
    st.builds(lambda r: Head(body=r), responses),
    st.just(
        Head(404, {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Session not found"}})
    ),
    st.sampled_from(
        [
            Head(404, b"Not Found", "text/plain"),
            Head(500, b"oops", "text/html"),
            Head(503, b"", None),
            Head(200, b"<html>hi</html>", "text/html"),
            Head(202),
            Head(200, b'{"jsonrpc": "2.0", "id": 1, "result": {}}{"jsonrpc": "2.0"}'),
            DROP,
            HANG,
            Head(500, b"oops", "text/html"),
        ]
    ),
)
status_replies = st.sampled_from(
    [
        Head(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Bad Request"}}),
        Head(404, b"gone", "text/plain"),
        Head(500, b"oops", "text/html"),
        DROP,
    ]
)
discover_replies = st.sampled_from(
    [
        Head(
            400, {"jsonrpc": "2.0", "id": CALL_ID, "error": {"code": -32601, "message": "Method not found"}}
        ),
        Head(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "No session"}}),
        Head(404, b"Not Found", "text/plain"),
        Head(405, b"", None),
        Head(400, b"Bad Request: no valid session ID provided", "text/plain"),
        Head(200, result_of(CALL_ID, GOOD_INIT)),  # not a DiscoverResult
    ]
)
plans = st.builds(
    Plan,
    discover=discover_replies,
    initialize=st.lists(initialize_replies(), min_size=1, max_size=2),
    initialized=mostly(Head(202), Head(400, b"no", "text/plain"), Head(500), DROP, HANG, weight=15),
    listen=st.one_of(st.just(Head(405)), st.just(Head(405)), streams(items, None), status_replies),
    calls=st.lists(call_replies, min_size=1, max_size=3),
    answer=mostly(Head(202), Head(400, b"", None), Head(404), Head(500), DROP, weight=3),
    delete=st.sampled_from([Head(200), Head(405), DROP]),
)


# -- the person and the browser -----------------------------------------------------------------
@dataclass
class Watchful:
    """Answers every question, after checking it is one the client may show: a form inside the
    subset, a URL the server sent as it sent it. A URL is accepted only when ``assess_url`` does
    not refuse it, as the shipped answerers do."""

    modes: frozenset[str]
    action: str
    problems: list[str] = field(default_factory=list)
    forms: int = 0
    urls: list[tuple[str, str]] = field(default_factory=list)  # (url, verdict)
    accepted_urls: set[str] = field(default_factory=set)

    def _identity(self, question: FormQuestion | UrlQuestion) -> None:
        if question.server.protocol_version not in LEGACY_VERSIONS:
            self.problems.append(f"a question shown as from {question.server.protocol_version!r}")

    async def answer_form(self, question: FormQuestion) -> Answer:
        self._identity(question)
        self.forms += 1
        if check_schema(question.schema) != []:
            self.problems.append(f"a form outside the subset was shown: {question.schema!r}")
        if not isinstance(question.message, str):
            self.problems.append(f"a form with message {question.message!r}")
        if self.action == "accept":
            return Answer("accept", {})
        return Answer(self.action)  # type: ignore[arg-type]

    async def answer_url(self, question: UrlQuestion) -> Answer:
        self._identity(question)
        if "url" not in self.modes:
            self.problems.append(f"a URL question to a form-only answerer: {question.url!r}")
        verdict = assess_url(question.url).verdict
        self.urls.append((question.url, verdict))
        if verdict == "refuse" or self.action != "accept":
            return Answer("decline")
        self.accepted_urls.add(question.url)
        return Answer("accept")


@contextlib.contextmanager
def no_browser() -> Iterator[list[Any]]:
    """Every way the standard library opens a browser, recorded instead."""
    opened: list[Any] = []

    def record(*args: Any, **kwargs: Any) -> bool:
        opened.append(args)
        return False

    with (
        mock.patch.object(webbrowser, "open", record),
        mock.patch.object(webbrowser, "open_new", record),
        mock.patch.object(webbrowser, "open_new_tab", record),
        mock.patch.object(webbrowser, "get", record),
    ):
        yield opened


@contextlib.contextmanager
def no_tracebacks() -> Iterator[None]:
    """Nothing at error level from the library or asyncio (an unexpected exception, a task
    that failed unseen or was destroyed pending), and no record with a traceback at any level."""
    handler = _WithTraceback()
    logging.getLogger().addHandler(handler)
    try:
        with no_errors_logged("mcp_elicit"), no_errors_logged("asyncio"):
            yield
    finally:
        logging.getLogger().removeHandler(handler)
    assert not handler.records, [r.getMessage() for r in handler.records]


class _WithTraceback(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.records.append(record)


# -- one run ------------------------------------------------------------------------------------
@dataclass
class CallRun:
    """What connecting and one call gave (this file's and its stdio twin's)."""

    connected: bool = False
    outcome: ToolResult | ClientError | None = None
    progress: list[Progress] = field(default_factory=list)
    completed: list[UrlCompleted] = field(default_factory=list)


@dataclass
class Run(CallRun):
    settled: bool = False


async def connect_and_call(
    target: Any, answerer: Watchful, done: CallRun, *, within: float, **options: Any
) -> Client | None:
    """Connect to ``target`` and call the tool once, noting in ``done`` what each gave: the
    client, still open (the caller closes it), or None when connecting failed."""
    try:
        client = await asyncio.wait_for(
            Client.connect(
                target,
                answerer=answerer,
                max_total_seconds=within - 2,
                on_progress=done.progress.append,
                on_url_complete=done.completed.append,
                **options,
            ),
            within,
        )
    except ClientError as exc:
        done.outcome = exc
        return None
    done.connected = True
    try:
        done.outcome = await asyncio.wait_for(client.call_tool("anything", {}), within)
    except ClientError as exc:
        done.outcome = exc
    except BaseException:
        await client.aclose()
        raise
    return client


async def run(server: HostileServer, answerer: Watchful, protocol: Any) -> Run:
    done = Run()
    client = await connect_and_call(
        server.url,
        answerer,
        done,
        within=WITHIN,
        protocol=protocol,
        request_timeout=REQUEST_TIMEOUT,
        connect_timeout=CONNECT_TIMEOUT,
    )
    if client is not None:
        try:
            # What was read is answered while the session is open, whatever became of the call.
            done.settled = await server.settled(SETTLE)
        finally:
            await client.aclose()
    return done


def check_what_the_person_saw(
    answerer: Watchful, offered: set[str], done: CallRun, opened: list[Any]
) -> None:
    """Only forms inside the subset and URLs the server sent as URL elicitations were shown, a
    completion only for an accepted URL, no browser opened, progress only for the call."""
    assert not answerer.problems, answerer.problems
    for url, _ in answerer.urls:
        assert url in offered, f"the answerer was shown a URL the server never sent as one: {url!r}"
    for completed in done.completed:
        assert completed.url in answerer.accepted_urls, completed
    assert opened == [], opened
    for progress in done.progress:
        assert (progress.method, progress.target) == ("tools/call", "anything"), progress


def urls_offered(plan: Plan) -> set[str]:
    """Every URL the plan sends in a URL elicitation that carries its elicitationId."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, Ask | Stream | Head | Plan):
            for part in value.__dict__.values():
                walk(part)
        elif isinstance(value, dict):
            named = isinstance(value.get("elicitationId"), str) and value["elicitationId"]
            if value.get("mode") == "url" and isinstance(value.get("url"), str) and named:
                found.add(value["url"])
            for part in value.values():
                walk(part)
        elif isinstance(value, list | tuple):
            for part in value:
                walk(part)

    walk(plan)
    return found


def check_message(error: ClientError) -> None:
    text = str(error)
    assert text.strip(), repr(error)
    assert not UNPRINTABLE.search(text), text  # what an error quotes of the server is cleaned
    assert len(text) < 2000, text


def check_answers(server: HostileServer, run: Run) -> None:
    # An answer whose POST drops before its reply is POSTed again (twice at most): the server
    # may have read it, as this one does before it drops the connection.
    copies = 1 + len(POST_RETRY_DELAYS) if server.plan.answer is DROP else 1
    for key, answers in server.answers.items():
        sent = [s for s in server.sent if s.key == key and s.first]
        assert sent, f"an answer to request {key}, which the server never sent: {answers}"
        assert len(answers) <= copies * len({s.generation for s in sent}), (
            f"request {key} answered {len(answers)} times"
        )
        for answer in answers:
            assert answer.get("jsonrpc") == "2.0", answer
            assert key_of(answer.get("id")) == key, answer
            assert ("result" in answer) != ("error" in answer), answer
            if "error" in answer:
                error = answer["error"]
                assert error["code"] in CODES, answer
                assert isinstance(error["message"], str), answer
                assert error["message"].strip(), answer
                event(f"answered {error['code']}")
                continue
            assert all(s.valid for s in sent), f"an invalid request was answered with a result: {answer}"
            methods = {s.method for s in sent}
            result = answer["result"]
            if methods == {"ping"}:
                assert result == {}, answer
            if methods == {"elicitation/create"}:
                assert result["action"] in ("accept", "decline", "cancel"), answer
                assert "content" not in result or result["action"] == "accept", answer
            event(f"answered {'/'.join(sorted(methods))} with a result")
        if not any(s.valid for s in sent):  # the -32600 refusal, and nothing else
            assert all(a.get("error", {}).get("code") == codes.INVALID_REQUEST for a in answers), answers
    if run.connected:
        owed = server.owed()
        assert run.settled, f"read and never answered: {owed}"
        assert not owed, f"read and answered late: {owed}"


def check_headers(server: HostileServer) -> None:
    """Every request of the session carries the session id the server minted (as a header
    parser reads it: without the spaces around), and none an id the client had to refuse."""
    minted = [s.strip(" \t") if s is not None else None for s in server.minted]
    valid = {s for s in minted if s is not None and valid_session(s)}
    for seen in server.seen:
        headers = seen.headers
        method = seen.body.get("method") if isinstance(seen.body, dict) else None
        if method == "server/discover":
            continue  # the probe, in 2026-07-28 form
        assert "mcp-method" not in headers, headers  # a 2026-07-28 header
        if method == "initialize":
            assert "mcp-session-id" not in headers, headers
            continue
        if "mcp-session-id" in headers:
            assert headers["mcp-session-id"] in valid, (headers, server.minted)
        if method == "tools/call":
            session = minted[seen.generation - 1]
            if session is not None:
                assert headers["mcp-session-id"] == session, (headers, session)
            assert headers["mcp-protocol-version"] in LEGACY_VERSIONS, headers


def record_run(run: CallRun, answerer: Watchful) -> None:
    """Hypothesis events of what a run came to (this file's and its stdio twin's)."""
    outcome = run.outcome
    kind = "result" if isinstance(outcome, ToolResult) else type(outcome).__name__
    event(f"{'call' if run.connected else 'connect'}: {kind}")
    if answerer.forms:
        event("a form was shown")
    for _, verdict in answerer.urls:
        event(f"a URL was shown ({verdict})")
    if run.completed:
        event("a URL was reported complete")
    if run.progress:
        event("progress reported")


def record_events(server: HostileServer, run: Run, answerer: Watchful) -> None:
    record_run(run, answerer)
    event(f"{sum(map(len, server.answers.values()))} answer(s) received")
    if server.generation > 1:
        event("a second initialize")
    if any(s.headers.get("last-event-id", "").startswith("c") for s in server.seen):
        event("a call's stream was resumed")


# -- what must come of the plans whose outcome is not in doubt ----------------------------------
GOOD_ANSWER = result_of(CALL_ID, GOOD_RESULT)


def response_in(stream: Stream) -> Any:
    """The first message of the stream's end that is not a notification (None: there is none)."""
    return next((m for m in stream.final if not (isinstance(m, dict) and "method" in m)), None)


def good_init(message: Any) -> bool:
    result = message.get("result") if isinstance(message, dict) else None
    if not isinstance(result, dict) or message.get("id") is not CALL_ID:
        return False
    info = result.get("serverInfo")
    return (
        result.get("protocolVersion") in LEGACY_VERSIONS
        and isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(result.get("capabilities"), dict)
    )


def answers_refused(plan: Plan) -> bool:
    """The server refuses the client's answers to its requests: the call whose stream carried
    one fails then."""
    return isinstance(plan.answer, Head) and not 200 <= plan.answer.status < 300


def carries_requests(reply: Reply) -> bool:
    """``reply`` is a stream with a request of the server's that the client answers (or refuses
    with -32600)."""
    return isinstance(reply, Stream) and any(
        isinstance(item, Ask) or (isinstance(item, Raw) and item.owed is not None) for item in reply.items
    )


def handshake_succeeds(plan: Plan) -> bool:
    """A good InitializeResult with a usable session id: a refused notifications/initialized, a
    GET stream refused or dropped, change nothing to that."""
    first = plan.initialize[0]
    if isinstance(first, Head):
        answered = first.status == 200 and first.content_type == "application/json" and good_init(first.body)
    else:
        answered = isinstance(first, Stream) and good_init(response_in(first))
        answered = answered and not (answers_refused(plan) and carries_requests(first))
    return answered and valid_session(first.session) and isinstance(plan.initialized, Head)  # type: ignore[union-attr]


def call_succeeds(plan: Plan) -> bool:
    """The first reply to the call carries the result, on the stream after whatever precedes it,
    or after the stream dropped following an event with an id, resumed."""
    first = plan.calls[0]
    if isinstance(first, Head):
        return first.status == 200 and first.content_type == "application/json" and first.body == GOOD_ANSWER
    if answers_refused(plan) and carries_requests(first):
        return False
    if not isinstance(first, Stream) or response_in(first) != GOOD_ANSWER:
        return False
    resumable = first.event_ids and first.resume == "continue" and first.retry is not None
    return first.cut is None or (resumable and first.cut >= 1)


@settings(
    max_examples=CI_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    phases=hunt_phases(),
)
@given(
    plan=plans,
    protocol=st.sampled_from(["auto", "2025-11-25"]),
    modes=st.sampled_from([frozenset({"form", "url"}), frozenset({"form"})]),
    action=st.sampled_from(["accept", "decline", "cancel", "accept"]),
)
async def test_any_legacy_http_server_gets_an_answer_or_a_typed_error(
    plan: Plan, protocol: str, modes: frozenset[str], action: str
) -> None:
    answerer = Watchful(modes, action)
    with no_browser() as opened, no_tracebacks():
        async with HostileServer(plan) as server:
            done = await run(server, answerer, protocol)
        await asyncio.sleep(0)  # let what was cancelled finish
        left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
        assert not left, left
    assert not server.failures, server.failures
    outcome = done.outcome
    assert isinstance(outcome, ToolResult | ClientError), outcome
    if isinstance(outcome, ClientError):
        check_message(outcome)
    if handshake_succeeds(plan):
        assert done.connected, outcome
        if call_succeeds(plan):
            # (an answerer that accepts forms with nothing filled in gives up on required fields)
            assert isinstance(outcome, ToolResult | InvalidAnswerError), outcome
    check_answers(server, done)
    check_headers(server)
    check_what_the_person_saw(answerer, urls_offered(plan), done, opened)
    record_events(server, done, answerer)


# -- what the property found, one case each ------------------------------------------------------
GOOD_HANDSHAKE = Head(body=result_of(CALL_ID, GOOD_INIT), session="s-1")
NOTE = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}}
GONE = Head(404, {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Session not found"}})


async def test_a_connection_closed_instead_of_accepting_initialized_is_a_transport_error() -> None:
    """The server drops the connection of the notifications/initialized POST: connecting fails
    with a TransportError that says so (it raised asyncio.IncompleteReadError, "0 bytes read on a
    total of undefined expected bytes")."""
    plan = Plan(initialize=[GOOD_HANDSHAKE], initialized=DROP)
    async with HostileServer(plan) as server:
        with pytest.raises(TransportError, match="connection closed before the reply was complete"):
            await asyncio.wait_for(Client.connect(server.url, protocol="2025-11-25"), WITHIN)


async def test_a_get_stream_dropped_before_its_reply_does_not_hold_up_connecting() -> None:
    """Connecting waits for the GET stream's reply head, or for the GET to fail: a dropped one
    failed, and connecting goes on at once (it waited for the listener's retry a second later)."""
    plan = Plan(initialize=[GOOD_HANDSHAKE], listen=DROP)
    async with HostileServer(plan) as server, Client.connect(server.url, protocol="2025-11-25") as client:
        gets = [s for s in server.seen if s.verb == "GET"]
        assert len(gets) == 1, gets  # connected after the first GET, not after a retry
        assert (await client.call_tool("anything")).text == "plain"


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "read-to-close"])
async def test_a_reply_stream_dropped_after_an_event_id_is_resumed(chunked: bool) -> None:
    """The connection of the call's stream drops after an event with an id (a proxy's idle timeout
    while the person answers): the client resumes with GET and Last-Event-ID, as after a stream
    the server ended, and gets the result there. A chunked stream cut short was a TransportError."""
    stream = Stream(items=(NOTE,), final=(GOOD_ANSWER,), chunked=chunked, cut=2, half=True, retry=5)
    plan = Plan(initialize=[GOOD_HANDSHAKE], calls=[stream])
    async with HostileServer(plan) as server, Client.connect(server.url, protocol="2025-11-25") as client:
        result = await asyncio.wait_for(client.call_tool("anything"), WITHIN)
    assert result.text == "done"
    resumed = [s.headers["last-event-id"] for s in server.seen if "last-event-id" in s.headers]
    assert resumed == ["c1.1"]  # after the last whole event


async def test_an_event_whose_lines_end_with_cr_alone_is_read_before_more_bytes_come() -> None:
    """The server ends its lines with CR alone, then waits for the ping's answer: the client read
    the event only once another byte came (the CR might have been half a CRLF), so never."""
    ask = Ask("q1", "ping")
    stream = Stream(items=(ask,), final=(GOOD_ANSWER,), eol=b"\r", hang=True)
    plan = Plan(initialize=[GOOD_HANDSHAKE], calls=[stream])
    async with HostileServer(plan) as server:
        async with Client.connect(
            server.url, protocol="2025-11-25", request_timeout=REQUEST_TIMEOUT
        ) as client:
            assert (await client.call_tool("anything")).text == "done"
        assert server.late == []  # the ping was answered without waiting for more bytes


async def test_a_connect_timeout_names_connect_timeout() -> None:
    """The server never answers notifications/initialized: connect_timeout ends connecting, and the
    error names that setting, and the step that hung, not request_timeout and initialize (which
    was answered)."""
    plan = Plan(initialize=[GOOD_HANDSHAKE], initialized=HANG)
    async with HostileServer(plan) as server:
        with pytest.raises(RequestTimeoutError) as caught:
            await Client.connect(server.url, protocol="2025-11-25", request_timeout=5.0, connect_timeout=0.3)
    assert str(caught.value) == "notifications/initialized: no answer within 0.3 s (connect_timeout)"


async def until(condition: Any, within: float = 5.0) -> None:
    """Wait until ``condition()`` holds (a test failure after ``within`` seconds)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not condition():
        assert loop.time() < deadline, "the condition never held"
        await asyncio.sleep(0.01)


def answers_in(server: HostileServer, session: str) -> list[Any]:
    """The ids of the answers POSTed with that Mcp-Session-Id."""
    return [
        s.body.get("id")
        for s in server.seen
        if isinstance(s.body, dict) and "method" not in s.body and s.headers.get("mcp-session-id") == session
    ]


async def test_a_question_of_an_ended_session_is_not_answered_in_the_next_one() -> None:
    """The server ends the session (404) while the person still has its question open; the client
    opens a new session. The answer must not go to the new session, where the server numbers its
    requests afresh and would take it for the answer to its own request 7 (it was POSTed with the
    new session's id)."""
    release = asyncio.Event()

    async def later(question: FormQuestion) -> Answer:
        await release.wait()
        return Answer("decline")

    person = Script(form=later, mode_names=("form",))
    form = {"message": "Sure?", "requestedSchema": {"type": "object", "properties": {}}}
    ask = Ask(7, "elicitation/create", form)
    # The first call's stream asks, then ends without an event id to resume from: that call fails.
    plan = Plan(initialize=[GOOD_HANDSHAKE], calls=[Stream(items=(ask,), final=(), event_ids=False), GONE])
    async with HostileServer(plan) as server:
        async with Client.connect(server.url, answerer=person, protocol="2025-11-25") as client:
            with pytest.raises(TransportError, match="without answering it"):
                await client.call_tool("first")
            await until(lambda: len(person.asked) == 1)
            assert (await client.call_tool("second")).text == "plain"  # on a new session, "fresh-2"
            release.set()
            await asyncio.sleep(0.2)
        assert answers_in(server, "fresh-2") == []


async def test_the_get_stream_of_a_new_session_is_served_as_that_session() -> None:
    """The session's GET stream ends (the server says retry in 300 ms), the server ends the session,
    the client opens a new one. The new session's GET stream asks a ping with the id the old one
    used: it is answered, in the new session (the old session's listener went on reconnecting
    with the new id, and dropped the ping as a reused id of the old session)."""
    plan = Plan(initialize=[GOOD_HANDSHAKE], listen=Stream(items=(Ask(0, "ping"),), retry=300), calls=[GONE])
    async with HostileServer(plan) as server, Client.connect(server.url, protocol="2025-11-25") as client:
        await until(lambda: answers_in(server, "s-1") == [0])
        assert (await client.call_tool("anything")).text == "plain"  # on a new session, "fresh-2"
        await until(lambda: answers_in(server, "fresh-2") == [0])


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "read-to-close"])
async def test_a_stream_dropped_mid_event_is_resumed_from_a_clean_start(chunked: bool) -> None:
    """The connection drops halfway through an event (a ping of the server's); the resumed stream
    sends that event again. Its half must not be glued to the start of the resumed stream, which
    made the ping unreadable: it was never answered."""
    stream = Stream(items=(Ask(5, "ping"),), final=(GOOD_ANSWER,), chunked=chunked, cut=1, half=True, retry=5)
    plan = Plan(initialize=[GOOD_HANDSHAKE], calls=[stream])
    async with HostileServer(plan) as server:
        async with Client.connect(server.url, protocol="2025-11-25") as client:
            assert (await asyncio.wait_for(client.call_tool("anything"), WITHIN)).text == "done"
        assert server.late == []  # the server did not have to give up waiting for the answer
        assert server.answers == {"5": [{"jsonrpc": "2.0", "id": 5, "result": {}}]}


async def test_a_session_id_with_a_control_character_at_its_end_is_refused() -> None:
    """HTTP trims spaces and tabs around a header value, nothing else: "s-1<VT>" is not a session
    id a client may send back (visible ASCII only). It was read as "s-1", and every request of
    the session carried an id the server never minted."""
    plan = Plan(initialize=[Head(body=result_of(CALL_ID, GOOD_INIT), session="s-1\x0b")])
    async with HostileServer(plan) as server:
        with pytest.raises(MalformedMessageError, match="Mcp-Session-Id is not 1 to 1024 visible ASCII"):
            await asyncio.wait_for(Client.connect(server.url, protocol="2025-11-25"), WITHIN)
        assert [s.headers["mcp-session-id"] for s in server.seen if "mcp-session-id" in s.headers] == []


async def test_a_completion_notice_that_carries_a_progress_token_is_still_a_completion() -> None:
    """A notification whose params held a ``progressToken`` key, whatever its method, skipped the
    session's own handling (only the progress listener saw it): a
    ``notifications/elicitation/complete`` carrying one never reached ``on_url_complete``."""
    url = {"mode": "url", "message": "m", "url": "https://example.com/connect", "elicitationId": "e1"}
    notice = {
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": "e1", "progressToken": "p-1"},
    }
    stream = Stream(items=(Ask("u", "elicitation/create", url),), final=(notice, GOOD_ANSWER))
    completed: list[UrlCompleted] = []
    with no_browser():
        async with (
            HostileServer(Plan(initialize=[GOOD_HANDSHAKE], calls=[stream])) as server,
            Client.connect(
                server.url,
                protocol="2025-11-25",
                answerer=Watchful(frozenset({"form", "url"}), "accept"),
                on_url_complete=completed.append,
            ) as client,
        ):
            result = await asyncio.wait_for(client.call_tool("anything"), WITHIN)
            await until(lambda: completed)
    assert result.text == "done"
    assert [c.elicitation_id for c in completed] == ["e1"]


async def test_closing_the_client_ends_a_call_waiting_to_resume_its_stream() -> None:
    """The call's stream ended before its response and the server said to wait 30 s before
    resuming: a client closed by another task ends the call at once with the TransportError of a
    closed client (it waited out the server's retry, up to a minute, before failing)."""
    stream = Stream(items=(NOTE,), final=(GOOD_ANSWER,), cut=2, retry=30_000)
    plan = Plan(initialize=[GOOD_HANDSHAKE], calls=[stream])
    async with HostileServer(plan) as server:
        client = await Client.connect(server.url, protocol="2025-11-25")
        task = asyncio.create_task(client.call_tool("anything"))
        await until(lambda: any(s.verb == "POST" and "tools/call" in str(s.body) for s in server.seen))
        await asyncio.sleep(0.2)  # the stream is cut: the call waits for its retry
        loop = asyncio.get_running_loop()
        closed_at = loop.time()
        await asyncio.wait_for(client.aclose(), 5)
        with pytest.raises(TransportError, match="the client was closed"):
            await asyncio.wait_for(task, 5)
        assert loop.time() - closed_at < 2.0
