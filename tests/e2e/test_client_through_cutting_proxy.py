"""Our client, over HTTP, to our server as a real uvicorn process, through a proxy that breaks
connections: what a user of ``Client`` sees when the network between them misbehaves.

The server (``cut_server.py``) has tools that report progress and ask one or two forms (in turn,
or two at once), each message naming the call; a handler that runs to its end appends one line
to a marker file of its call. Between client and server sits a TCP proxy on 127.0.0.1
(:mod:`.cutting_proxy_support`). Hypothesis draws, per example: the era the client speaks
(``protocol="2026-07-28"``: stateless rounds; ``"2025-11-25"``: ``initialize``, a session, the GET
stream, each call's SSE stream resumed with ``Last-Event-ID``), one or two clients (two sessions)
with one or two calls running at once and then one more, how each question is answered, whether
the client asks for progress, and up to three faults: any connection (by the order the proxy
accepts them) cut at any byte of either direction (a FIN or a RST), written in small pieces, or
stalled for a while.

For every call, within :data:`WITHIN` seconds (a call still running then is a hang):

* it ends with its own result (the text its answers make, never another call's or another
  session's), or with a :class:`~mcp_elicit.client.TransportError` that a cut explains: at
  2026-07-28 any cut of a request in flight ("not sent again: it may have run", as documented);
  at 2025-11-25 only a cut of the call's POST before its stream gave an event id, or
  ``MAX_IDLE_RESUMES`` resumptions cut in a row (a stream with an id is resumed, as documented).
  Connecting may fail with a TransportError only when a cut broke one of its requests. Never an
  exception outside :class:`~mcp_elicit.client.ClientError`;
* each question is put to the answerer at most once: neither era's documentation lets the
  client ask a person again after a drop (2026-07-28 never re-sends a request; at 2025-11-25 the
  resumed stream replays only what follows the last event read, and the server's request ids are
  answered once); progress reported to a client is about its own calls;
* a call the client reports completed ran its handler to the end exactly once (the marker holds
  that line once); a call that failed ran it at most once;
* nothing is logged at error level by the client (nor asyncio's "exception was never
  retrieved"), and the server's log holds no traceback;
* afterwards, a call straight to the server (no proxy) in each era succeeds.

Two bugs this found have a regression test each at the end: an answer to a 2025-11-25 question
whose POST was cut was never sent again (the call waited for the server's
``legacy_leg_timeout``, 600 s by default, then ended with a tool error though the person
answered), and a resumption whose connection dropped before its reply head ended the call with
TransportError instead of resuming again. An answer is lost now only when every one of its POSTs
is cut (the first and each retry of :data:`~mcp_elicit.client.http.POST_RETRY_DELAYS`).

The server runs with a 2 s ``legacy_leg_timeout`` and a 100 ms stream ``retry`` (1000 ms in
production) so that an example takes a second or two. ``CUT_PROXY_EXAMPLES`` sets the examples
(default 40 per event loop, about 30 s for both).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from mcp_elicit.client import (
    Answer,
    Client,
    ClientError,
    FormQuestion,
    Progress,
    TransportError,
    UrlQuestion,
)
from mcp_elicit.client.era import ProtocolChoice
from mcp_elicit.client.http import MAX_IDLE_RESUMES, POST_RETRY_DELAYS
from tests.e2e.cutting_proxy_support import Cut, CuttingProxy, Fault, Interrupted, Slow, Stall
from tests.helpers import free_port
from tests.server_process import PY, ServerProcess, running_server
from tests.strategies import fuzz_settings, hunt_phases

EXAMPLES = int(os.environ.get("CUT_PROXY_EXAMPLES", "30"))
SERVER = Path(__file__).with_name("cut_server.py")
WITHIN = 30.0  # seconds an example's calls may take, all told (a hang otherwise)
LEG_TIMEOUT = 2.0  # the server's wait for a 2025-11-25 answer (600 s in production)
RETRY_MS = 100  # the retry of a 2025-11-25 stream (1000 ms in production)
ERAS: tuple[ProtocolChoice, ...] = ("2026-07-28", "2025-11-25")
PHASES = hunt_phases()


@dataclass
class Served:
    """The server process and the folder its handlers leave their markers (and its log) in."""

    running: ServerProcess
    markers: Path
    log_seen: int = 0

    def new_log(self) -> str:
        """What the server logged since the last call."""
        text = self.running.log_text()
        fresh, self.log_seen = text[self.log_seen :], len(text)
        return fresh

    def marker_lines(self, label: str) -> list[str]:
        path = self.markers / label
        return path.read_text().splitlines() if path.exists() else []


@pytest.fixture(scope="module")
def cut_server(server_loop: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server per module run (per event loop, see conftest.py): examples tell their calls
    apart by label, and the health check after each proves it is still well."""
    markers = tmp_path_factory.mktemp("cut-markers")
    port = free_port()
    argv = [PY, str(SERVER), "--port", str(port), "--marker-dir", str(markers)]
    argv += ["--leg-timeout", str(LEG_TIMEOUT), "--retry-ms", str(RETRY_MS)]
    with running_server(argv, log=markers / "server.log", port=port) as running:
        yield Served(running, markers)


@pytest.fixture
async def proxy(cut_server: Served) -> AsyncIterator[CuttingProxy]:
    """The proxy, in the test's loop (its schedule is set per example with ``plan``)."""
    assert cut_server.running.port is not None
    async with CuttingProxy(cut_server.running.port) as running:
        yield running


# -- what is drawn ---------------------------------------------------------------------------------

Action = Literal["accept", "decline"]


@dataclass(frozen=True)
class CallPlan:
    """One call: ``ask`` (``len(actions)`` forms in turn) or ``pair`` (two at once)."""

    tool: Literal["ask", "pair"]
    actions: tuple[Action, ...]

    def arguments(self, label: str) -> dict[str, Any]:
        if self.tool == "pair":
            return {"label": label}
        return {"label": label, "count": len(self.actions)}

    def expected(self, label: str) -> str:
        said = [answer_name(label, n) if a == "accept" else "no" for n, a in enumerate(self.actions)]
        return f"{label} done: {' '.join(said)}"


@dataclass(frozen=True)
class Example:
    """The era, each client's calls (run at once), whether progress is asked, the faults."""

    era: ProtocolChoice
    clients: tuple[tuple[CallPlan, ...], ...]
    progress: bool
    faults: tuple[Fault, ...]


actions = st.sampled_from(["accept", "accept", "decline"])
calls = st.one_of(
    st.builds(CallPlan, st.just("ask"), st.lists(actions, min_size=1, max_size=2).map(tuple)),
    st.builds(CallPlan, st.just("pair"), st.tuples(actions, actions)),
)
conns = st.integers(0, 4)
offsets = st.integers(0, 2000)
cuts = st.builds(Cut, conns, st.booleans(), offsets, st.booleans())
faults = st.one_of(
    cuts,
    cuts,  # twice as likely as the others: the cuts are what can go wrong
    st.builds(Slow, conns, st.booleans(), st.sampled_from([1, 2, 7, 64, 500]), st.sampled_from([0.0, 0.002])),
    st.builds(Stall, conns, st.booleans(), offsets, st.sampled_from([0.05, 0.4])),
)
examples = st.builds(
    Example,
    st.sampled_from(ERAS),
    st.lists(st.lists(calls, min_size=1, max_size=2).map(tuple), min_size=1, max_size=2).map(tuple),
    st.booleans(),
    st.lists(faults, max_size=3).map(tuple),
)


# -- the client's side -----------------------------------------------------------------------------


def answer_name(label: str, number: int) -> str:
    """The name given to question ``number`` of call ``label``: its result must quote it."""
    return f"{label}-a{number}"


@dataclass
class Answerer:
    """Answers each call's questions as its plan says, counting how often each was asked."""

    plans: dict[str, CallPlan]
    modes: frozenset[str] = frozenset({"form"})
    asked: Counter[str] = field(default_factory=Counter)
    strays: list[str] = field(default_factory=list)  # questions of no call of this client
    progress: list[str] = field(default_factory=list)  # the messages of the progress reported

    async def answer_form(self, question: FormQuestion) -> Answer:
        self.asked[question.message] += 1
        label, _, rest = question.message.partition(" ")
        plan = self.plans.get(label)
        number = (
            int(rest[1:-1]) if rest.startswith("q") and rest.endswith("?") and rest[1:-1].isdigit() else -1
        )
        if plan is None or not 0 <= number < len(plan.actions):
            self.strays.append(question.message)
            return Answer("cancel")
        if plan.actions[number] == "decline":
            return Answer("decline")
        return Answer("accept", {"name": answer_name(label, number)})

    async def answer_url(self, question: UrlQuestion) -> Answer:
        self.strays.append(question.url)
        return Answer("decline")


@dataclass
class Outcome:
    """How one call ended: its text (and whether a tool error), or what it raised."""

    label: str
    plan: CallPlan
    text: str | None = None
    is_error: bool = False
    error: BaseException | None = None


class _Records(logging.Handler):
    """Every record at warning level or above (the lost answers are warnings; errors fail)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class Run:
    """What one example did: each call's outcome, each client's answerer, connects that failed."""

    outcomes: list[Outcome] = field(default_factory=list)
    answerers: list[Answerer] = field(default_factory=list)
    connect_errors: list[BaseException] = field(default_factory=list)
    hung: bool = False


async def _one_client(
    url: str, era: ProtocolChoice, plans: dict[str, CallPlan], follow_up: str, progress: bool, run: Run
) -> None:
    """Connect, run ``plans`` at once, then one more call (``follow_up``: the client still works
    after what the faults did to the first ones, and hands it its own result), then close."""
    last = CallPlan("ask", ("accept",))
    answerer = Answerer({**plans, follow_up: last})
    run.answerers.append(answerer)
    outcomes = [Outcome(label, plan) for label, plan in plans.items()]
    after = Outcome(follow_up, last)
    run.outcomes.extend([*outcomes, after])

    def on_progress(update: Progress) -> None:
        answerer.progress.append(update.message or "")

    try:
        client = await Client.connect(
            url, answerer=answerer, protocol=era, on_progress=on_progress if progress else None
        )
    except Exception as exc:
        run.connect_errors.append(exc)
        for outcome in [*outcomes, after]:
            outcome.error = exc
        return
    try:

        async def call(outcome: Outcome) -> None:
            try:
                result = await client.call_tool(outcome.plan.tool, outcome.plan.arguments(outcome.label))
            except Exception as exc:
                outcome.error = exc
                return
            outcome.text, outcome.is_error = result.text, result.is_error

        await asyncio.gather(*(call(outcome) for outcome in outcomes))
        await call(after)
    finally:
        await client.aclose()


async def run_example(url: str, example: Example, prefix: str) -> Run:
    """Every client of ``example`` at once, through ``url``; a hang is noted, not waited out."""
    run = Run()
    tasks = []
    for number, plans in enumerate(example.clients):
        labelled = {f"{prefix}s{number}c{index}": plan for index, plan in enumerate(plans)}
        follow_up = f"{prefix}s{number}f"
        client = _one_client(url, example.era, labelled, follow_up, example.progress, run)
        tasks.append(asyncio.ensure_future(client))
    try:
        async with asyncio.timeout(WITHIN):
            await asyncio.gather(*tasks)
    except TimeoutError:
        run.hung = True
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return run


async def healthy(url: str, label: str) -> list[str]:
    """A call in each era straight to the server; what went wrong."""
    problems = []
    for era in ERAS:
        try:
            async with asyncio.timeout(10):
                async with Client.connect(url, protocol=era) as client:
                    result = await client.call_tool("plain", {"label": f"{label}-{era}"})
            if result.text != f"{label}-{era} done: ":
                problems.append(f"health check at {era}: {result.text!r}")
        except Exception as exc:
            problems.append(f"health check at {era} failed: {exc!r}")
    return problems


# -- the oracle ------------------------------------------------------------------------------------

CONNECTING = frozenset({"server/discover", "initialize", "notifications/initialized"})


@dataclass
class Cuts:
    """What the cuts of one example broke, read from the proxy's record of each connection."""

    era: ProtocolChoice
    interrupted: list[Interrupted]

    @property
    def any(self) -> bool:
        return bool(self.interrupted)

    def explain_connect_error(self) -> bool:
        return any(cut.rpc in CONNECTING for cut in self.interrupted)

    def explain_call_error(self) -> bool:
        """Whether a cut explains a call that ended with a TransportError, as the library
        documents it.

        At 2026-07-28 any cut of a request in flight does ("not sent again: it may have run").
        At 2025-11-25 a call's stream is resumed once it gave an event id, so only a cut of the
        call's POST before its first complete event with an id does, or
        :data:`~mcp_elicit.client.http.MAX_IDLE_RESUMES` resumptions in a row cut."""
        if self.era == "2026-07-28":
            return self.any
        if any(c.rpc == "tools/call" and not c.event_with_id for c in self.interrupted):
            return True
        resumes = [c for c in self.interrupted if c.method == "GET" and c.resuming]
        return len(resumes) >= MAX_IDLE_RESUMES

    def lost_an_answer(self) -> bool:
        """Cuts broke every POST of an answer to one of the server's questions (no method): the
        first and each one sent again."""
        answers = [c for c in self.interrupted if c.method == "POST" and c.rpc is None]
        return len(answers) > len(POST_RETRY_DELAYS)


def judge(run: Run, served: Served, cuts: Cuts, records: Sequence[logging.LogRecord]) -> list[str]:
    """The problems of one example."""
    problems: list[str] = []
    if run.hung:
        problems.append(f"calls still running after {WITHIN} s")
    for answerer in run.answerers:
        if answerer.strays:
            problems.append(f"questions of another call or session were asked: {answerer.strays}")
        foreign = [m for m in answerer.progress if m.partition(" ")[0] not in answerer.plans]
        if foreign:
            problems.append(f"progress of another call or session was reported: {foreign}")
        again = {message: count for message, count in answerer.asked.items() if count > 1}
        if again:
            problems.append(f"questions asked more than once: {again}")
    for exc in run.connect_errors:
        if not isinstance(exc, TransportError) or not cuts.explain_connect_error():
            problems.append(f"connecting failed with {exc!r}, which no cut explains")
    for outcome in run.outcomes:
        lines = served.marker_lines(outcome.label)
        expected = outcome.plan.expected(outcome.label)
        if len(lines) > 1:
            problems.append(f"{outcome.label}: the handler completed {len(lines)} times: {lines}")
        if outcome.error is not None:
            if outcome.error in run.connect_errors:
                continue
            if not isinstance(outcome.error, ClientError):
                problems.append(f"{outcome.label}: not a ClientError: {outcome.error!r}")
                continue
            if type(outcome.error) is not TransportError or not cuts.explain_call_error():
                problems.append(f"{outcome.label}: {outcome.error!r}, which no cut explains")
            continue
        if outcome.text is None:
            if not run.hung:
                problems.append(f"{outcome.label}: neither a result nor an error")
            continue
        if outcome.is_error:
            if not (cuts.lost_an_answer() and "did not answer elicitation/create" in outcome.text):
                problems.append(f"{outcome.label}: a tool error: {outcome.text!r}")
            continue
        if outcome.text != expected:
            problems.append(f"{outcome.label}: result {outcome.text!r}, expected {expected!r}")
        if lines != [expected]:
            problems.append(f"{outcome.label}: completed, but its handler's marker holds {lines}")
    for record in records:
        if record.levelno >= logging.ERROR:
            problems.append(f"logged at {record.levelname} by {record.name}: {record.getMessage()}")
        elif "again while it is open or already answered" in record.getMessage():
            problems.append(f"the server sent a request twice: {record.getMessage()}")
    log = served.new_log()
    for sign in ("Traceback", "Exception in ASGI application", "ERROR", "Task exception"):
        if sign in log:
            problems.append(f"the server's log holds {sign!r}:\n{log[-3000:]}")
            break
    return problems


_counter = iter(range(10**9))


@settings(fuzz_settings(EXAMPLES), phases=PHASES)
@given(example=examples)
async def test_any_cut_delay_or_split_ends_each_call_with_its_result_or_a_transport_error(
    cut_server: Served, proxy: CuttingProxy, example: Example
) -> None:
    prefix = f"e{next(_counter)}"
    records = _Records()
    watched = [logging.getLogger(name) for name in ("mcp_elicit", "asyncio")]
    for logger in watched:
        logger.addHandler(records)
    try:
        proxy.plan(example.faults)
        run = await run_example(proxy.url, example, prefix)
        await proxy.drop_all()
        gc.collect()  # a task whose exception nobody retrieved says so now
        await asyncio.sleep(0)
    finally:
        for logger in watched:
            logger.removeHandler(records)
    cuts = Cuts(example.era, [found for conn in proxy.cuts if (found := conn.interrupted()) is not None])
    problems = judge(run, cut_server, cuts, records.records)
    problems += await healthy(f"{cut_server.running.base}/mcp", f"{prefix}h")
    event(f"era {example.era}; cut: {cuts.any}")
    event("outcomes: " + ", ".join(sorted({_kind(outcome) for outcome in run.outcomes})))
    assert not problems, "\n".join([*problems, "proxy:", *proxy.log])


def _kind(outcome: Outcome) -> str:
    if outcome.error is not None:
        return type(outcome.error).__name__
    return "tool error" if outcome.is_error else "result"


# -- the bugs found, one regression test each ------------------------------------------------------


class Symptom(AssertionError):
    """The bug's symptom itself, apart from a test whose set-up went wrong (a cut that missed
    what it aims at)."""


async def _legacy_call(proxy: CuttingProxy, label: str, count: int) -> tuple[str, bool]:
    """One ``ask`` call at 2025-11-25 through the proxy: its text and whether it is a tool error
    (a TransportError propagates)."""
    accept: tuple[Action, ...] = tuple("accept" for _ in range(count))
    answerer = Answerer({label: CallPlan("ask", accept)})
    async with asyncio.timeout(WITHIN):
        async with Client.connect(proxy.url, answerer=answerer, protocol="2025-11-25") as client:
            result = await client.call_tool("ask", {"label": label, "count": count})
    return result.text, result.is_error


def _only_cut(proxy: CuttingProxy) -> Interrupted:
    (conn,) = proxy.cuts
    interrupted = conn.interrupted()
    assert interrupted is not None, proxy.log
    return interrupted


# Regression (lost answer): the POST that carries the answer to a 2025-11-25 server's question
# failed (its connection dropped before the 202: a cut before the server had the whole body);
# the client logged "could not send the answer" and never sent it again. The call then waited for
# the server's legacy_leg_timeout (600 s by default; LEG_TIMEOUT here) and ended with a tool error
# "the client did not answer", though the person answered. Sending the same answer again is safe
# (client/http.py HttpTransport._post_message): the server takes it once and answers 400 to a
# second copy (docs/protocol.md).
async def test_regression_an_answer_whose_post_is_cut_is_sent_again(proxy: CuttingProxy) -> None:
    # Connection 0: initialize, initialized, then the GET stream; 1: the call's POST; 2: the
    # answer's POST, cut before its first byte reaches the server.
    proxy.plan([Cut(2, upstream=True, offset=0)])
    text, is_error = await _legacy_call(proxy, "lost", 1)
    cut = _only_cut(proxy)
    assert (cut.method, cut.rpc, cut.reply_started) == ("POST", None, False), cut  # an answer's POST
    if is_error or text != "lost done: lost-a0":
        raise Symptom(f"the person answered, and the call ended with {text!r}")


async def _priming_end(proxy: CuttingProxy, label: str) -> int:
    """Where the priming event of a call's stream ends, in the bytes of its connection (one call
    with no fault, to measure: the heads and the event are the same length every time)."""
    proxy.plan([])
    await _legacy_call(proxy, label, 1)
    down = bytes(proxy.conns[1].down)
    end = down.index(b"data: \n\n") + len(b"data: \n\n")
    assert b'"method":"elicitation/create"' in down[end:], down  # the question comes after it
    return end


# Regression (resume cut): a 2025-11-25 call's stream drops after its priming event (an id,
# nothing else yet): the client resumes it with GET and Last-Event-ID, as documented. When that
# GET's connection dropped too before its reply head was in, the call ended with TransportError
# ("HTTP tools/call ... failed ... not sent again: it may have run"), though the server still held
# the stream for resume_grace and the same drop one byte after the head was resumed again
# (client/http.py HttpTransport._resume: ``conn.request`` was outside the ``try`` that turns a
# dropped connection into "resume again").
@pytest.mark.parametrize("upstream", [False, True], ids=["reply-cut", "request-cut"])
async def test_regression_a_resumption_whose_connection_drops_before_its_head_is_tried_again(
    proxy: CuttingProxy, upstream: bool
) -> None:
    end = await _priming_end(proxy, f"measure-{upstream}")
    # Connection 1: the call's POST, cut right after the priming event; 2: the resuming GET, cut
    # before anything of it went through (its request, or its reply).
    proxy.plan([Cut(1, upstream=False, offset=end), Cut(2, upstream=upstream, offset=0)])
    label = f"resume-{upstream}"
    try:
        text, is_error = await _legacy_call(proxy, label, 1)
    except TransportError as exc:
        resumed = [conn.interrupted() for conn in proxy.cuts]
        assert [(c.method, c.resuming, c.reply_head_done) for c in resumed if c is not None][-1] == (
            "GET",
            True,
            False,
        ), proxy.log
        raise Symptom(f"one dropped resumption ended the call: {exc}") from exc
    assert (text, is_error) == (f"{label} done: {label}-a0", False)
