"""Whatever a 2025-11-25 client answers the server's question with, the call that asked ends: a
property test of the server's side of elicitation over Streamable HTTP, the client played by
hypothesis.

A session is opened (``initialize``, ``notifications/initialized``), ``file_ticket`` is called
(``any_input_server``: a form of text, integer, boolean, enum and optional fields, asked a second
time once accepted), and each ``elicitation/create`` that comes on the call's stream is answered
with what hypothesis writes: ElicitResults whose content does or does not match the form (wrong
types, missing or extra fields, huge strings, nested junk), declines and cancels, unknown actions
and actions that are not strings, JSON-RPC errors; and responses that are not valid (both
``result`` and ``error``, neither, an ``error`` without an integer code and a string message, an
id of the wrong type or one that names no question, the right id a second time), sent in another
session, an unknown one or none, with an ``MCP-Protocol-Version`` the sessions do not speak, from
a foreign ``Origin``, as another media type; batches, bytes that are not JSON, bodies over the
size limit. Meanwhile the client may drop the stream's connection and pick the stream up again
(``GET`` with ``Last-Event-ID``), or give up: cancel the call, or end the session.

Each POST of an answer gets what docs/protocol.md promises: 202 and no body for an answer taken;
a refusal (400; 404 for an unknown session; 413 over the size limit; 403, 406 and 415 for what its
headers say) with a -32600 or -32700 body that does not carry the question's id, the question
still waiting. And the call always ends, soon
(the server's ``legacy_leg_timeout`` is short here): its stream carries exactly one response, as
its last message, and it is what the answers taken make of it -- a form answered with invalid
content is asked again with the reason (three answers at most, then a tool error), a malformed
ElicitResult ends the call with -32602, a JSON-RPC error or no answer at all with a tool error
that says why (the question withdrawn with ``notifications/cancelled`` first); a cancelled call
ends with its question withdrawn and no response, as docs/protocol.md says. Nothing is logged at
error level.

The call's stream must be read as it comes, so the app runs under uvicorn in the test's own event
loop (:class:`tests.helpers.InProcessServer`): httpx's ASGI transport, which the other any-input
tests drive, hands a reply back only once it is complete, and a call's stream completes only
after its questions are answered. Every answer is drawn before the call starts: a question waits
``legacy_leg_timeout`` from the moment it is sent, and drawing while it waits would make what the
server does depend on how fast hypothesis draws.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mcp_elicit.client.sse import SseDecoder
from mcp_elicit.schema import AnswerInvalid, validate_answer
from mcp_elicit.transport.http_app import HttpApp
from mcp_elicit.wire.errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR
from tests.e2e.any_input_server import build
from tests.e2e.test_http_any_input import WITHIN, Sent, check, elicit_results
from tests.helpers import InProcessServer, no_errors_logged
from tests.http_session_support import LEGACY, Session
from tests.strategies import json_values, past_64_bits

LEG_TIMEOUT = 0.5  # seconds a question waits for its answer (600 by default: a person answers)
MAX_BYTES = 65_536  # the server's max_message_bytes: a body over it gets 413
TOOL = "file_ticket"
SUMMARY = "printer"
QUESTIONS = (f"File {SUMMARY}?", "Sure?")  # what file_ticket asks, in turn
MAX_ANSWERS = 3  # the server's max_answer_attempts: invalid answers to one question, then it gives up
MAX_QUESTIONS = len(QUESTIONS) * MAX_ANSWERS  # the most a call asks (each question asked again twice)
# The longest a call may take: each of its questions waiting out its leg, and more.
BOUND = MAX_QUESTIONS * LEG_TIMEOUT + WITHIN


# -- the server --------------------------------------------------------------------------------


@dataclass
class Served:
    """The server of one test (shared by its examples: each opens a session of its own), and a
    second session on it (an answer sent there answers nothing)."""

    url: str
    http: httpx.AsyncClient
    other: Session


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    app = build(legacy_leg_timeout=LEG_TIMEOUT, max_message_bytes=MAX_BYTES).asgi()
    assert isinstance(app, HttpApp)
    async with InProcessServer(app) as running, httpx.AsyncClient(timeout=WITHIN) as http:
        url = running.base + "/mcp"
        other = Session(http, url)
        await other.open()
        try:
            yield Served(url, http, other)
        finally:
            # A call a failed example left running would hold uvicorn's shutdown.
            app.sessions.close()


@contextmanager
def no_tracebacks() -> Iterator[None]:
    """Nothing logged at error level by the server, nor by uvicorn, which logs what the app raises
    (``Exception in ASGI application``) where httpx's ASGI transport would raise it in the test."""
    with no_errors_logged(), no_errors_logged("uvicorn.error"):
        yield


# -- what the client posts ---------------------------------------------------------------------

# Where the question's id goes in an answer drawn before the question is asked: the JSON of these
# strings is replaced by the id (as a number, a float, a string) when the answer is sent.
QUESTION = "\x00the question's id\x00"
QUESTION_AS_FLOAT = "\x00the question's id, a float\x00"
QUESTION_AS_TEXT = "\x00the question's id, a string\x00"
OTHER_SESSION = "\x00the other session's id\x00"  # a header value: the other session's id
CUT = 2**16  # "cut short" and "not UTF-8" places are drawn as fractions of the body, out of this
HEAD_REFUSALS = (403, 406, 415)  # Origin, Accept, Content-Type/-Encoding: checked before the size


@dataclass(frozen=True, repr=False)
class Answer:
    """One POST of the client's, and what the server must make of it.

    ``body``: the JSON posted, with :data:`QUESTION` (and the like) where the question's id goes;
    ``cut``: only ``cut / CUT`` of it is sent; ``inserted``: these bytes are put at that place.
    ``headers``: how its headers differ from an honest client's (None: left out).
    ``takes``: the JSON-RPC response (its ``result`` or ``error`` member) the question takes --
    202 -- if it still waits; None for a POST refused whatever waits: ``status``, with an error of
    one of ``codes`` and no id."""

    kind: str
    body: bytes
    takes: dict[str, Any] | None = None
    status: int = 400
    codes: frozenset[int] = frozenset({INVALID_REQUEST})
    headers: Mapping[str, str | None] = field(default_factory=dict)
    cut: int | None = None
    inserted: tuple[int, bytes] | None = None

    def __repr__(self) -> str:  # what a failing example shows: a huge body cut short
        body = self.body if len(self.body) <= 400 else self.body[:400] + b"... (%d bytes)" % len(self.body)
        shown = [repr(self.kind), f"body={body!r}"]
        shown += [
            f"{name}={getattr(self, name)!r}"
            for name in ("headers", "cut", "inserted")
            if getattr(self, name)
        ]
        return f"Answer({', '.join(shown)})"

    def sent_to(self, question: int) -> tuple[Answer, bytes]:
        """The body sent to ``question``, and what the server must make of it: a body over the
        server's limit gets 413, unless its headers are refused first."""
        body = (
            self.body.replace(encoded(QUESTION), b"%d" % question)
            .replace(encoded(QUESTION_AS_FLOAT), b"%d.0" % question)
            .replace(encoded(QUESTION_AS_TEXT), encoded(str(question)))
        )
        if self.cut is not None:
            body = body[: self.cut * len(body) // CUT]
        if self.inserted is not None:
            at = self.inserted[0] * (len(body) + 1) // CUT
            body = body[:at] + self.inserted[1] + body[at:]
        if len(body) <= MAX_BYTES or self.status in HEAD_REFUSALS:
            return self, body
        over = replace(
            self,
            kind=self.kind if "size limit" in self.kind else self.kind + ", over the size limit",
            takes=None,
            status=413,
            codes=frozenset({INVALID_REQUEST}),
        )
        return over, body


def encoded(message: Any) -> bytes:
    return json.dumps(message).encode()


def response(reply: Mapping[str, Any], question: Any = QUESTION) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": question, **reply}


# A ticket the form takes (any_input_server.Ticket: whole numbers within what JSON carries exactly).
tickets = st.fixed_dictionaries(
    {
        "title": st.text(max_size=30),
        "priority": st.integers(-(2**53) + 1, 2**53 - 1),
        "urgent": st.booleans(),
        "team": st.sampled_from(["ops", "dev"]),
    },
    optional={"contact": st.text(max_size=20) | st.none()},
)
huge_strings = st.builds(
    lambda character, count: character * count,
    st.sampled_from(["a", "é", "\u2028", "\x00", "😀", '"']),
    st.integers(1_000, 40_000),
)


@st.composite
def changed_tickets(draw: st.DrawFn) -> dict[str, Any]:
    """A ticket with one to three changes: a field of another type, left out, added, or huge."""
    ticket: dict[str, Any] = dict(draw(tickets))
    for _ in range(draw(st.integers(1, 3))):
        change = draw(st.sampled_from(["wrong type", "missing", "extra", "huge"]))
        name = draw(st.sampled_from(["title", "priority", "urgent", "team", "contact"]))
        if change == "wrong type":
            ticket[name] = draw(json_values)
        elif change == "missing":
            ticket.pop(name, None)
        elif change == "extra":
            ticket[draw(st.text(max_size=10))] = draw(json_values)
        else:
            ticket[draw(st.sampled_from(["title", "contact", "team"]))] = draw(huge_strings)
    return ticket


contents = st.one_of(tickets, changed_tickets(), changed_tickets(), json_values)
accepts = st.fixed_dictionaries({"action": st.just("accept"), "content": tickets})
declines = st.fixed_dictionaries(
    {"action": st.sampled_from(["decline", "cancel"])}, optional={"content": st.none()}
)
# ElicitResults of every kind; valid accepts twice, so that many calls go on to the second question.
results = st.one_of(
    accepts,
    accepts,
    declines,
    st.fixed_dictionaries(
        {"action": st.just("accept")}, optional={"content": contents, "_meta": json_values}
    ),
    st.fixed_dictionaries({"action": st.sampled_from(["decline", "cancel"]), "content": contents}),
    st.fixed_dictionaries(
        {"action": st.sampled_from(["Accept", "accepted", "", "yes", "reject"]) | json_values},
        optional={"content": contents},
    ),
    elicit_results,  # the any-input tests' answers: the form's fields with any values
    json_values,  # not an object at all
)
errors = st.fixed_dictionaries(
    {"code": st.integers(-(2**63), 2**63 - 1), "message": st.text(max_size=40)},
    optional={"data": json_values},
)
replies = results.map(lambda result: {"result": result}) | errors.map(lambda error: {"error": error})
# The version header an honest client sends: the one initialize answered, the other one these
# sessions speak, or none (the session's own).
honest_versions = st.sampled_from([LEGACY, "2025-06-18", None])


@st.composite
def taken_answers(draw: st.DrawFn, reply: st.SearchStrategy[dict[str, Any]] = replies) -> Answer:
    """An answer the server takes (while the question waits): any result or error."""
    drawn = draw(reply)
    kind = "result" if "result" in drawn else "error"
    headers = {"mcp-protocol-version": draw(honest_versions)}
    if past_64_bits(drawn):  # not read rounded: refused as any response that cannot be read
        return Answer(f"{kind}, an integer past 64 bits", encoded(response(drawn)), headers=headers)
    return Answer(kind, encoded(response(drawn)), takes=drawn, headers=headers)


# A valid accept, decline or cancel.
good_answers = taken_answers((accepts | declines).map(lambda result: {"result": result}))
DECLINE = Answer(
    "decline", encoded(response({"result": {"action": "decline"}})), takes={"result": {"action": "decline"}}
)

not_errors = st.one_of(
    json_values.filter(lambda value: not isinstance(value, dict)),
    st.fixed_dictionaries({"message": st.text(max_size=10)}),
    st.fixed_dictionaries({"code": st.integers()}),
    st.fixed_dictionaries(
        {
            "code": st.floats(allow_nan=False, allow_infinity=False)
            | st.text(max_size=5)
            | st.booleans()
            | st.none()
            | st.lists(st.integers(), max_size=2)
            | st.integers(2**64, 2**80),  # past 64 bits: refused (-32600)
            "message": st.text(max_size=10),
        }
    ),
    st.fixed_dictionaries(
        {"code": st.integers(-5, 5), "message": json_values.filter(lambda value: not isinstance(value, str))}
    ),
)
wrong_ids = st.one_of(
    st.just(QUESTION_AS_FLOAT),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.integers(2**64, 2**80),  # past 64 bits: refused (-32600)
)
# Ids of the right type that name no question: the question's as a string, any string, whole
# numbers no question of a call has (they count from 1 in each session).
unknown_ids = st.one_of(
    st.just(QUESTION_AS_TEXT),
    st.text(max_size=8),
    st.integers(-(2**63), 0),
    st.integers(MAX_QUESTIONS + 1, 2**63 - 1),
)
versions_not_spoken = st.sampled_from(["2024-11-05", "2025-03-26", "2026-07-28", "1.0", "latest"]) | st.text(
    "0123456789-.abcXYZ", min_size=1, max_size=12
).filter(lambda version: version not in ("2025-11-25", "2025-06-18"))
session_ids = st.text("abcdefABCDEF0123456789._-~!", min_size=1, max_size=60)
REFUSALS = [
    "both result and error",
    "neither result nor error",
    "an error that is not one",
    "an id of the wrong type",
    "an id that names no question",
    "no id",
    "jsonrpc not 2.0",
    "in another session",
    "in no session",
    "in an unknown session",
    "a version the session does not speak",
    "a batch",
    "not JSON",
    "cut short",
    "not UTF-8",
    "over the size limit",
    "from a foreign origin",
    "not application/json",
    "compressed",
    "accepting no JSON",
]


@st.composite
def refused_answers(draw: st.DrawFn) -> Answer:
    """A POST the server refuses, whether the question waits or not."""
    kind = draw(st.sampled_from(REFUSALS))
    reply = draw(replies)
    honest = encoded(response(reply))
    if kind == "both result and error":
        both = {**response({"result": draw(results)}), "error": draw(errors | json_values)}
        return Answer(kind, encoded(both))
    if kind == "neither result nor error":
        neither = response(draw(st.sampled_from([{}, {"params": {}}, {"_meta": {}}])))
        return Answer(kind, encoded(neither))
    if kind == "an error that is not one":
        return Answer(kind, encoded(response({"error": draw(not_errors)})))
    if kind == "an id of the wrong type":
        return Answer(kind, encoded(response(reply, draw(wrong_ids))))
    if kind == "an id that names no question":
        return Answer(kind, encoded(response(reply, draw(unknown_ids))))
    if kind == "no id":
        return Answer(kind, encoded({"jsonrpc": "2.0", **reply}))
    if kind == "jsonrpc not 2.0":
        version = draw((st.sampled_from(["1.0", "2", 2.0, None]) | json_values).filter(lambda v: v != "2.0"))
        return Answer(kind, encoded({**response(reply), "jsonrpc": version}))
    if kind == "in another session":
        return Answer(kind, honest, headers={"mcp-session-id": OTHER_SESSION})
    if kind == "in no session":
        return Answer(kind, honest, headers={"mcp-session-id": None})
    if kind == "in an unknown session":
        # The body is read before its session is looked for (an initialize needs none): one that
        # cannot be read, an integer past 64 bits in it, is refused as such (400), not as a 404.
        status = 400 if past_64_bits(reply) else 404
        return Answer(kind, honest, status=status, headers={"mcp-session-id": draw(session_ids)})
    if kind == "a version the session does not speak":
        return Answer(kind, honest, headers={"mcp-protocol-version": draw(versions_not_spoken)})
    if kind == "a batch":
        return Answer(kind, encoded(draw(st.lists(st.just(response(reply)) | json_values, max_size=3))))
    if kind == "not JSON":
        return Answer(kind, draw(st.binary(max_size=50)), codes=frozenset({PARSE_ERROR, INVALID_REQUEST}))
    if kind == "cut short":
        return Answer(kind, honest, codes=frozenset({PARSE_ERROR}), cut=draw(st.integers(0, CUT - 1)))
    if kind == "not UTF-8":
        bad = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80"]))
        return Answer(
            kind, honest, codes=frozenset({PARSE_ERROR}), inserted=(draw(st.integers(0, CUT - 1)), bad)
        )
    if kind == "over the size limit":
        padded = {"result": {"action": "decline", "_meta": {"padding": "x" * MAX_BYTES}}}
        return Answer(kind, encoded(response(padded)))
    # Refused on its headers, before the body is read: as any message (docs/protocol.md).
    header, values, status = {
        "from a foreign origin": ("origin", ["http://evil.example", "null"], 403),
        "not application/json": ("content-type", ["text/plain", "application/jsonx"], 415),
        "compressed": ("content-encoding", ["gzip", "br", "identity, gzip"], 415),
        "accepting no JSON": ("accept", ["text/html", "text/event-stream"], 406),
    }[kind]
    return Answer(kind, honest, status=status, headers={header: draw(st.sampled_from(values))})


any_answers = taken_answers() | taken_answers() | refused_answers()


KEPT = "kept"
DROPPED_BEFORE = "dropped before answering"
DROPPED_AFTER = "dropped after answering"
TAKEN_OVER = "taken over after answering"
CANCELS = "cancels the call"
ENDS = "ends the session"


@dataclass(frozen=True)
class Turn:
    """What the client does with one question: it posts ``answers`` in turn. ``connection``: it
    keeps reading the stream where it is; or drops that connection before or after answering and
    picks the stream up again with a ``GET`` and ``Last-Event-ID`` (the question's event); or
    opens that ``GET`` with the first connection still open (which the server then ends: one
    connection per stream). ``gives_up``: once its answers are posted, if none was taken, it
    cancels the call (``notifications/cancelled``) or ends the session (``DELETE``)."""

    answers: list[Answer]
    connection: str = KEPT
    gives_up: str | None = None


connections = st.sampled_from([KEPT, KEPT, DROPPED_BEFORE, DROPPED_AFTER, TAKEN_OVER])


def turns(answers: st.SearchStrategy[list[Answer]], gives_up: bool = False) -> st.SearchStrategy[list[Turn]]:
    """What the client does with each question of a call, in turn (a question past the end is
    declined)."""
    giving_up = st.sampled_from([None, None, None, None, CANCELS, ENDS]) if gives_up else st.none()
    return st.lists(st.builds(Turn, answers, connections, giving_up), min_size=1, max_size=MAX_QUESTIONS)


# -- what the server must make of them ---------------------------------------------------------


@dataclass
class Expected:
    """What the call's next message must be: a question (``asking``: which of :data:`QUESTIONS`,
    ``again``: after that many invalid answers), its withdrawal (for ``reason``), or the call's
    response (a result with ``text``, or an error with ``code`` and a ``needle`` in its message;
    ``silent``: none, the stream ends)."""

    asking: int | None = None
    again: int = 0
    withdrawn: int | None = None
    reason: str = "timed out"
    silent: bool = False  # the call ends with no response (cancelled)
    text: str | None = None
    is_error: bool = False
    code: int | None = None
    needle: str = ""


@dataclass
class Flow:
    """The model of one call: which question it is at, and what the first one's answer was."""

    asking: int = 0
    again: int = 0
    title: str = ""

    def after(self, question: dict[str, Any], taken: dict[str, Any] | None) -> Expected:
        """What follows once ``question`` took ``taken`` (None: no answer; it times out)."""
        if taken is None:
            event("no answer taken: the question timed out")
            text = f"the client did not answer elicitation/create within {LEG_TIMEOUT:g} s"
            return Expected(
                withdrawn=question["id"], text=f"Tool {TOOL!r} could not finish: {text}", is_error=True
            )
        if "error" in taken:
            event("answered with a JSON-RPC error: a tool error")
            error = taken["error"]
            text = f"the client answered elicitation/create with error {error['code']}: {error['message']}"
            return Expected(text=f"Tool {TOOL!r} could not finish: {text}", is_error=True)
        result = taken["result"]
        action = result.get("action") if isinstance(result, dict) else None
        content = result.get("content") if isinstance(result, dict) else None
        if not isinstance(action, str) or action not in ("accept", "decline", "cancel"):
            event("an ElicitResult that is not one: -32602")
            return Expected(code=INVALID_PARAMS, needle="the client's ElicitResult")
        if action != "accept":
            # A decline or cancel is one whatever content it carries (dropped), as at 2026-07-28.
            event(f"{action} of question {self.asking + 1}")
            return Expected(text=action if self.asking == 0 else f"{self.title} {action}")
        if content is not None and not isinstance(content, dict):
            event("content that is not an object: -32602")
            return Expected(code=INVALID_PARAMS, needle="content must be an object")
        try:
            # The form the question itself carries is the oracle: what a client validates against.
            cleaned = validate_answer(question["params"]["requestedSchema"], content or {})
        except AnswerInvalid:
            self.again += 1
            if self.again == MAX_ANSWERS:
                event("invalid content, too many times: a tool error")
                text = f"The answer to {QUESTIONS[self.asking]!r} was invalid {MAX_ANSWERS} times"
                return Expected(text=text, is_error=True)
            event("invalid content: asked again")
            return Expected(asking=self.asking, again=self.again)
        event(f"a valid accept of question {self.asking + 1}")
        if self.asking == 0:
            self.asking, self.again, self.title = 1, 0, cleaned["title"]
            return Expected(asking=1)
        return Expected(text=f"{self.title} accept")


def check_question(message: dict[str, Any], expected: Expected, schema: dict[str, Any] | None) -> None:
    assert message.get("method") == "elicitation/create", (expected, message)
    assert expected.asking is not None, (expected, message)
    assert isinstance(message.get("id"), int), message
    params = message["params"]
    assert params["mode"] == "form", message
    asked = QUESTIONS[expected.asking]
    if expected.again:
        # Asked again with the reason added, the same form.
        assert params["message"].startswith(asked + "\n\nThe previous answer was not accepted: "), message
    else:
        assert params["message"] == asked, message
    if schema is not None:
        assert params["requestedSchema"] == schema, message


def check_response(message: dict[str, Any], call_id: int, expected: Expected) -> None:
    assert expected.asking is None, (expected, message)
    assert expected.withdrawn is None, (expected, message)
    assert "method" not in message, (expected, message)
    assert message.get("id") == call_id, message
    assert ("result" in message) != ("error" in message), message
    if expected.code is not None:
        assert message["error"]["code"] == expected.code, (expected, message)
        assert expected.needle in message["error"]["message"], (expected, message)
        return
    assert "result" in message, (expected, message)
    (content,) = message["result"]["content"]
    assert message["result"].get("isError", False) is expected.is_error, (expected, message)
    assert expected.text is not None
    if expected.is_error and "was invalid" in expected.text:
        assert content["text"].startswith(expected.text), (expected, message)
    else:
        assert content["text"] == expected.text, (expected, message)


async def post(served: Served, session: Session, body: bytes, changes: Mapping[str, str | None]) -> Sent:
    headers = session.headers()
    for name, value in changes.items():
        if value is None:
            headers.pop(name, None)
        elif value == OTHER_SESSION:
            assert served.other.id is not None
            headers[name] = served.other.id
        else:
            headers[name] = value
    reply = await asyncio.wait_for(served.http.post(served.url, content=body, headers=headers), WITHIN)
    return Sent(reply.status_code, reply.headers.get("content-type", ""), reply.content)


async def answer(
    served: Served, session: Session, question: int, answers: Sequence[Answer]
) -> dict[str, Any] | None:
    """POST ``answers`` to ``question`` in turn, each reply checked; the response the question
    took (None if none)."""
    loop = asyncio.get_running_loop()
    asked_at = loop.time()
    taken: dict[str, Any] | None = None
    for drawn in answers:
        expected, body = drawn.sent_to(question)
        sent = await post(served, session, body, expected.headers)
        event(f"{expected.kind}: HTTP {sent.status}")
        check(sent)
        waits = expected.takes is not None and taken is None
        if waits and sent.status == 400 and loop.time() - asked_at >= LEG_TIMEOUT / 2:
            # Posted as the question timed out (a machine this slow...): refused as late, and the
            # call ends as for no answer.
            event("an answer too late")
            waits = False
            expected = replace(expected, takes=None)
        if waits:
            assert sent.status == 202, (expected, sent)
            assert sent.body == b"", sent
            taken = expected.takes
            continue
        # Refused (or a second answer to a question already answered): the question still waits.
        assert sent.status == (expected.status if expected.takes is None else 400), (expected, sent)
        (error,) = sent.messages()
        assert error["error"]["code"] in expected.codes, (expected, error)
        # The question's id is the server's own: the client could take an error that carries it
        # for the answer to its own request of that number.
        assert error.get("id") is None, (expected, error)
    return taken


class CallStream:
    """A call's stream as the client reads it: on its POST's connection, then on each ``GET``
    that picks it up again after the last event read, decoded with the client's own SSE decoder
    (which keeps the last event id such a ``GET`` sends)."""

    def __init__(self, served: Served, session: Session) -> None:
        self._http = served.http
        self._url = served.url
        self._session = session
        self._reply: httpx.Response | None = None
        self._chunks: AsyncIterator[bytes] | None = None
        self._decoder = SseDecoder(4 * MAX_BYTES)
        self._events: list[bytes] = []  # read, not taken yet
        self._ended = False

    @property
    def last_event_id(self) -> str | None:
        """The id a resumption starts after, when every event read has been taken."""
        return None if self._events else self._decoder.last_event_id

    async def start(self, call: dict[str, Any]) -> None:
        await self._open(
            self._http.build_request(
                "POST", self._url, content=encoded(call), headers=self._session.headers()
            )
        )

    async def resume(self, after: str, *, drop: bool = True) -> None:
        """Pick the stream up again after ``after``, on a new connection; ``drop``: the one before
        is dropped first (if not yet), else it must end by itself once the new one is open."""
        if drop:
            await self.drop()
        before, chunks = self._reply, self._chunks
        headers = self._session.headers(accept="text/event-stream", **{"last-event-id": after})
        await self._open(self._http.build_request("GET", self._url, headers=headers))
        if before is not None and chunks is not None:
            async for _ in chunks:  # what it still had, then its end (the wait is BOUND at most)
                pass
            await before.aclose()

    async def _open(self, request: httpx.Request) -> None:
        reply = await self._http.send(request, stream=True)
        self._reply = reply
        assert reply.status_code == 200, (request, await reply.aread())
        assert reply.headers["content-type"].startswith("text/event-stream"), reply.headers
        self._chunks = reply.aiter_bytes()
        self._decoder = SseDecoder(4 * MAX_BYTES)  # a new connection starts a new event stream
        self._ended = False

    async def next(self) -> dict[str, Any] | None:
        """The next JSON-RPC message; None once the stream has ended."""
        assert self._chunks is not None
        while not self._events and not self._ended:
            chunk = await anext(self._chunks, None)
            found = [] if chunk is None else self._decoder.feed(chunk)
            self._events += [data for data in found if data.strip()]  # (not the priming event)
            self._ended = chunk is None
        if not self._events:
            return None
        message: dict[str, Any] = json.loads(self._events.pop(0))
        return message

    async def drop(self) -> None:
        if self._reply is not None:
            await self._reply.aclose()
            self._reply = None


async def converse(served: Served, plan: Sequence[Turn]) -> None:
    """Call ``file_ticket`` in a new session and do with its questions what ``plan`` says, in
    turn; check every reply, and the call's stream against :class:`Flow`."""
    session = Session(served.http, served.url)
    await session.open()
    call = session.request("tools/call", {"name": TOOL, "arguments": {"summary": SUMMARY}})
    flow = Flow()
    expected = Expected(asking=0)
    schema: dict[str, Any] | None = None
    asked = 0
    stream = CallStream(served, session)
    try:
        async with asyncio.timeout(BOUND):
            await stream.start(call)
            while True:
                message = await stream.next()
                if expected.silent and expected.withdrawn is None:
                    assert message is None, message  # cancelled: no response
                    break
                assert message is not None, expected  # the stream ended before the response
                if expected.withdrawn is not None:
                    withdrawn = expected.withdrawn
                    assert message == {
                        "jsonrpc": "2.0",
                        "method": "notifications/cancelled",
                        "params": {"requestId": withdrawn, "reason": expected.reason},
                    }, message
                    late = await post(served, session, DECLINE.sent_to(withdrawn)[1], {})
                    assert late.status == 400, late  # withdrawn: nothing waits for an answer now
                    expected = replace(expected, withdrawn=None)
                    continue
                if expected.asking is None:
                    check_response(message, call["id"], expected)
                    break
                check_question(message, expected, schema)
                schema = message["params"]["requestedSchema"]
                asked += 1
                assert asked <= MAX_QUESTIONS, message
                turn = plan[asked - 1] if asked <= len(plan) else Turn([DECLINE])
                # The question is the last event so far: nothing comes before it is answered.
                resume_after = stream.last_event_id
                assert resume_after is not None, message
                if turn.connection == DROPPED_BEFORE:
                    await stream.drop()
                taken = await answer(served, session, message["id"], turn.answers)
                if turn.connection != KEPT:
                    event(f"the connection {turn.connection}, the stream picked up again")
                    await stream.resume(resume_after, drop=turn.connection != TAKEN_OVER)
                if turn.gives_up == CANCELS and taken is None:
                    event("the call cancelled")
                    cancel = {
                        "jsonrpc": "2.0",
                        "method": "notifications/cancelled",
                        "params": {"requestId": call["id"]},
                    }
                    await session.post(cancel, expect=202)
                    reason = "the request it belongs to was cancelled"
                    expected = Expected(withdrawn=message["id"], reason=reason, silent=True)
                    continue
                if turn.gives_up == ENDS and taken is None:
                    event("the session ended")
                    ended = await served.http.delete(served.url, headers=session.headers())
                    assert ended.status_code == 200, ended
                    # Its calls end with nothing more (the question is not withdrawn: there is no
                    # session left to tell), and an answer now names a session that is no more.
                    assert await stream.next() is None
                    late = await post(served, session, DECLINE.sent_to(message["id"])[1], {})
                    assert late.status == 404, late
                    return
                expected = flow.after(message, taken)
            # The response was the stream's last message: nothing follows it (a second response, say).
            left = await stream.next()
            assert left is None, left
    finally:
        await stream.drop()


SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


# -- the properties ------------------------------------------------------------------------------


@st.composite
def answered_once(draw: st.DrawFn) -> list[Answer]:
    """One answer taken, sometimes posted twice (the second is refused: already answered)."""
    drawn = draw(taken_answers())
    return [drawn, drawn] if draw(st.booleans()) else [drawn]


@SETTINGS
@given(turns(answered_once()) | answered_once().map(lambda answers: [Turn(answers)] * MAX_QUESTIONS))
async def test_any_answer_taken_ends_the_call_as_the_docs_say(served: Served, plan: list[Turn]) -> None:
    """Each question answered with any result or error (or every question with the same one, so
    that an invalid form is answered until the server gives up): the call goes on, asks again or
    ends, as the answer says."""
    with no_tracebacks():
        await converse(served, plan)


refused_then_good = st.builds(
    lambda refused, good: [*refused, good], st.lists(refused_answers(), min_size=1, max_size=3), good_answers
)


@SETTINGS
@given(turns(refused_then_good))
async def test_a_refused_answer_leaves_the_question_waiting(served: Served, plan: list[Turn]) -> None:
    """Answers the server refuses (malformed, misaddressed, too large...), then a good one: each
    refusal has its documented status, and the question takes the good answer."""
    with no_tracebacks():
        await converse(served, plan)


@settings(SETTINGS, max_examples=60)
@given(turns(st.lists(any_answers, min_size=1, max_size=4), gives_up=True))
async def test_any_answers_in_any_order_end_the_call(served: Served, plan: list[Turn]) -> None:
    """Anything, in any order: a question that takes no answer times out, a second answer is
    refused. Or the client gives up: it cancels the call (the question is withdrawn, the stream
    ends with no response, as docs/protocol.md says) or ends the session (the stream ends)."""
    with no_tracebacks():
        await converse(served, plan)
