"""The public ``Client`` under concurrency and cancellation, driven as a user's asyncio code
drives it: several calls at once on one client, some cancelled (``task.cancel()``) or bounded by
``asyncio.wait_for`` at any moment (while the server runs the tool, while the person answers),
``client.aclose()`` from another task, then the same client again and a fresh one.

The server is ours (:mod:`.cancel_server`), reached in process (2026-07-28 only: that transport
carries no 2025-11-25 session), over stdio (a real subprocess) and over Streamable HTTP (a real
uvicorn process on 127.0.0.1), at 2026-07-28 and at 2025-11-25 (``protocol=`` forces the era).
Its tools ask one or two questions in a row, two questions at once, run long reporting progress,
or return at once; each puts the call's label in what it sends, so that every result, question
and progress notification tells which call it belongs to.

For each plan hypothesis draws:

* every call ends within ``WITHIN``: with its own correct result, ``CancelledError`` when it was
  cancelled, ``TimeoutError`` under ``wait_for``, or :class:`TransportError` once the client is
  being closed (docs/client.md: "client.aclose() from another task ends the calls still waiting
  at once, with TransportError"), and then within ``CLOSE_ENDS_WITHIN``; a call made once
  ``aclose()`` has returned fails without reaching the server;
* a call that is neither cancelled nor closed under gets its own correct result, whatever
  happened to the others (the answers each carry their call's label: no crosstalk);
* the server learns of a cancelled call (``Transport.send``: "Cancelling the caller cancels the
  request on the wire"; stdio: ``notifications/cancelled``; HTTP and in process: the connection
  or the ASGI call closes): the long tool's handler records its cancellation within a bound;
* the person is never shown a question of a call that has ended (2025-11-25: beyond a short race
  with the server, which asks before it has read the cancellation), nor one after the client was
  closed, nor one question twice; on 2025-11-25 over stdio a question still open when its call is
  cancelled is withdrawn (the server's ``notifications/cancelled``) and the answerer cancelled;
* ``on_progress`` hears nothing about a call after it ended;
* nothing leaks: no task left pending, no ``ResourceWarning`` or "never awaited" warning, nothing
  at error level from mcp_elicit or asyncio, the stdio server process gone after ``aclose``;
* the client answers new calls after cancellations (until it is closed), and a fresh client works.

The tests after the properties are what the hunt found, one regression each:

* 2025-11-25 over HTTP, a cancelled call was not cancelled on the server (no
  ``notifications/cancelled``; a dropped stream is not a cancellation there);
* 2026-07-28, ``aclose()`` did not end a call while the person answered its question;
* a closed in-process client still ran the tools it was asked to call;
* 2025-11-25, a server question read while ``aclose()`` ran was still put to the person, in a
  task that outlived ``aclose()``;
* 2025-11-25 over HTTP, a call made while ``aclose()`` ran failed with the server's -32600
  (``McpClientError``) instead of ``TransportError``.

``CLIENT_CANCELLATION_EXAMPLES`` sets how many plans each transport and era tries (30 by default:
the file in about two minutes on 2 cores).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import tempfile
import time
import uuid
import warnings
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mcp_elicit.client import (
    Answer,
    Client,
    FormQuestion,
    McpClientError,
    Progress,
    ToolResult,
    TransportError,
    UrlQuestion,
)
from mcp_elicit.client.era import ProtocolChoice
from tests.helpers import no_errors_logged
from tests.server_process import PY, ServerProcess
from tests.strategies import hunt_phases

from . import cancel_server
from .support import marker_server, processes_left

HERE = Path(__file__).resolve().parent
SERVER = HERE / "cancel_server.py"
EXAMPLES = int(os.environ.get("CLIENT_CANCELLATION_EXAMPLES", "15"))  # ~70 s; hunt longer with the variable
WITHIN = 10.0  # a call (or closing) that takes longer is stuck
LEARN_WITHIN = 3.0  # how long the server may take to see a cancellation
RACE = 0.25  # a cancellation this close to the tool's own end may lose to it
MODERN: Final = "2026-07-28"
LEGACY: Final = "2025-11-25"
CLIENT_LOG = logging.getLogger("mcp_elicit.client")

CLOSE_ENDS_WITHIN = 0.5  # "at once": a call still waiting ends this soon after aclose() starts


# -- the person ---------------------------------------------------------------------------------
@dataclass
class Shown:
    label: str
    key: str
    at: float
    answered: float | None = None
    cancelled: float | None = None


@dataclass
class Person:
    """Answers each form after ``delay`` seconds with ``"<label>.<key>"``; records each question,
    when it was shown and how it ended."""

    delay: float
    clock: Callable[[], float]
    shown: list[Shown] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    modes = frozenset({"form"})

    async def answer_form(self, question: FormQuestion) -> Answer:
        label, _, key = question.message.partition("|")
        record = Shown(label, key, self.clock())
        self.shown.append(record)
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            record.cancelled = self.clock()
            raise
        record.answered = self.clock()
        return Answer("accept", {"name": f"{label}.{key}"})

    async def answer_url(self, question: UrlQuestion) -> Answer:
        self.problems.append(f"a URL question: {question.url!r}")
        return Answer("decline")


# -- plans --------------------------------------------------------------------------------------
TOOLS = ("ask1", "ask2", "pair", "late", "long", "quick")


@dataclass(frozen=True)
class CallPlan:
    tool: str
    start: float  # seconds after the first call starts
    stop: str  # "none", "cancel" (task.cancel() after `at`), "wait_for" (timeout `at`)
    at: float
    seconds: float  # how long the long tool runs

    def arguments(self, label: str) -> tuple[str, dict[str, Any]]:
        if self.tool in ("ask1", "ask2"):
            return "ask", {"label": label, "count": int(self.tool[-1])}
        if self.tool in ("long", "late"):
            return self.tool, {"label": label, "seconds": self.seconds}
        return self.tool, {"label": label}

    def expected(self, label: str) -> str:
        if self.tool in ("ask1", "ask2"):
            return f"{label}:" + ",".join(f"{label}.q{i}" for i in range(int(self.tool[-1])))
        if self.tool == "pair":
            return f"{label}:{label}.left+{label}.right"
        if self.tool == "late":
            return f"{label}:{label}.late"
        return f"{label}:{self.tool}"


@dataclass(frozen=True)
class Plan:
    calls: tuple[CallPlan, ...]
    answer_delay: float
    close_at: float | None  # client.aclose() from another task, seconds after the start
    request_timeout: float | None


def _ms(low: int, high: int) -> st.SearchStrategy[float]:
    return st.integers(low, high).map(lambda ms: ms / 1000)


@st.composite
def call_plans(draw: st.DrawFn, stopping: bool) -> CallPlan:
    stop = draw(st.sampled_from(["none", "cancel", "wait_for"]))
    seconds = draw(st.sampled_from([0.05, 0.3, 1.0]))
    if stop == "none" and not stopping:
        seconds = min(seconds, 0.3)  # nothing would end a 1 s run early: it only costs time
    return CallPlan(
        tool=draw(st.sampled_from(TOOLS)),
        start=draw(st.sampled_from([0.0, 0.0, 0.02]) | _ms(0, 100)),
        stop=stop,
        at=draw(st.sampled_from([0.0, 0.001, 0.05]) | _ms(0, 300)),
        seconds=seconds,
    )


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    close_at = draw(st.one_of(st.none(), st.none(), st.sampled_from([0.0, 0.05]), _ms(0, 400)))
    calls = draw(st.lists(call_plans(close_at is not None), min_size=1, max_size=6))
    return Plan(
        calls=tuple(calls),
        answer_delay=draw(st.sampled_from([0.0, 0.05, 0.3]) | _ms(0, 300)),
        close_at=close_at,
        request_timeout=draw(st.sampled_from([None, None, 5.0])),
    )


# -- where the server is ------------------------------------------------------------------------
@dataclass
class Where:
    """How to reach the server for one example, and what it writes its markers into."""

    transport: str  # "in-process", "stdio", "http"
    protocol: ProtocolChoice
    markers: Path
    target: Any

    def connect(self, **options: Any) -> Any:
        if self.transport == "stdio":
            options["stderr"] = "capture"
        return Client.connect(self.target, protocol=self.protocol, **options)


@pytest.fixture(scope="module")
def cancel_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Path]]:
    with marker_server(SERVER, "cancel", tmp_path_factory) as running:
        yield running


def stdio_where(protocol: ProtocolChoice, folder: str) -> Where:
    return Where("stdio", protocol, Path(folder), [PY, str(SERVER), "--stdio", "--marker-dir", folder])


def in_process_where(folder: str) -> Where:
    cancel_server.MARKERS = Path(folder)
    return Where("in-process", MODERN, Path(folder), cancel_server.app)


# -- one run ------------------------------------------------------------------------------------
@dataclass
class CallRun:
    plan: CallPlan
    label: str
    started: float | None = None
    cancel_at: float | None = None  # when task.cancel() took (returned True)
    ended: float | None = None
    outcome: Any = None  # "cancelled", "timeout", a ToolResult, or the exception


@dataclass
class Run:
    calls: list[CallRun]
    person: Person
    progress: list[tuple[str, float]] = field(default_factory=list)  # (label, when)
    close_started: float | None = None
    close_ended: float | None = None
    close_error: BaseException | None = None
    stuck: list[str] = field(default_factory=list)
    era: str | None = None
    version: str | None = None
    again: list[str] = field(default_factory=list)  # what the same client answered afterwards
    tag: str = ""


def outcome_of(task: asyncio.Task[Any]) -> Any:
    if task.cancelled():
        return "cancelled"
    error = task.exception()
    if isinstance(error, TimeoutError):
        return "timeout"
    return error if error is not None else task.result()


async def run_plan(plan: Plan, where: Where, tag: str) -> Run:
    loop = asyncio.get_running_loop()
    t0 = loop.time()

    def clock() -> float:
        return loop.time() - t0

    person = Person(plan.answer_delay, clock)
    run = Run([CallRun(call, f"{tag}-{i}") for i, call in enumerate(plan.calls)], person, tag=tag)

    def heard(progress: Progress) -> None:
        run.progress.append((progress.message or "", clock()))

    client = await where.connect(answerer=person, on_progress=heard, request_timeout=plan.request_timeout)
    closed = False
    try:
        run.era, run.version = client.era, client.protocol_version
        tasks: list[asyncio.Task[Any]] = []
        t0 = loop.time()  # (the plan's times count from here)

        async def drive(call: CallRun) -> None:
            await asyncio.sleep(call.plan.start)
            name, arguments = call.plan.arguments(call.label)
            work: Awaitable[Any] = client.call_tool(name, arguments)
            if call.plan.stop == "wait_for":
                work = asyncio.wait_for(work, call.plan.at)
            call.started = clock()
            task = asyncio.ensure_future(work)
            tasks.append(task)

            def ended(done: asyncio.Task[Any]) -> None:
                call.ended = clock()
                call.outcome = outcome_of(done)

            task.add_done_callback(ended)
            if call.plan.stop == "cancel":
                await asyncio.sleep(call.plan.at)
                if task.cancel():
                    call.cancel_at = clock()

        async def close() -> None:
            assert plan.close_at is not None
            await asyncio.sleep(plan.close_at)
            run.close_started = clock()
            try:
                await client.aclose()
            except BaseException as exc:  # (reported by the checks)
                run.close_error = exc
            run.close_ended = clock()

        closer = asyncio.ensure_future(close()) if plan.close_at is not None else None
        await asyncio.gather(*(drive(call) for call in run.calls))
        _, pending = await asyncio.wait([*tasks, *([closer] if closer else [])], timeout=WITHIN)
        for task in pending:
            run.stuck.append(repr(task))
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=2)
        for task in tasks:
            if task.done() and not task.cancelled():
                task.exception()  # (retrieved: the checks read them from the records)
        closed = closer is not None
        if not closed and not run.stuck:
            # The same client, after whatever happened: still answers.
            again = await asyncio.wait_for(
                asyncio.gather(
                    client.call_tool("quick", {"label": f"{tag}-again"}),
                    client.call_tool("ask", {"label": f"{tag}-again", "count": 1}),
                ),
                WITHIN,
            )
            run.again = [result.text for result in again]
    finally:
        if not closed:
            await asyncio.wait_for(client.aclose(), WITHIN)
    return run


async def fresh_client_works(where: Where, tag: str) -> None:
    person = Person(0.0, time.monotonic)
    async with where.connect(answerer=person) as client:
        result = await asyncio.wait_for(
            client.call_tool("ask", {"label": f"{tag}-fresh", "count": 1}), WITHIN
        )
    assert result.text == f"{tag}-fresh:{tag}-fresh.q0", result.text


# -- the oracle ---------------------------------------------------------------------------------
def marker(where: Where, state: str, label: str) -> Path:
    return where.markers / f"{state}-{label}"


def exists(path: Path) -> bool:
    return path.exists()


async def wait_for_marker(path: Path, within: float) -> bool:
    for _ in range(int(within / 0.02)):
        if exists(path):
            return True
        await asyncio.sleep(0.02)
    return exists(path)


def closing_before(run: Run, when: float | None) -> bool:
    """Whether the client was being closed before ``when`` (or at all, for None)."""
    return run.close_started is not None and (when is None or run.close_started <= when)


def check_outcomes(run: Run, where: Where) -> None:
    assert not run.stuck, f"calls or aclose still running after {WITHIN} s: {run.stuck}"
    assert run.close_error is None, f"aclose raised {run.close_error!r}"
    for call in run.calls:
        outcome, plan = call.outcome, call.plan
        assert call.ended is not None, call
        closed_under = closing_before(run, call.ended)
        if outcome == "cancelled":
            assert call.cancel_at is not None, f"{call.label}: CancelledError, but nobody cancelled it"
        elif outcome == "timeout":
            assert plan.stop == "wait_for", f"{call.label}: TimeoutError without wait_for"
        elif isinstance(outcome, TransportError):
            assert closed_under, f"{call.label}: {outcome!r} without the client being closed"
            event(f"closed under: {type(outcome).__name__}: ...{str(outcome)[-40:]}")
        elif isinstance(outcome, ToolResult):
            expected = plan.expected(call.label)
            assert outcome.text == expected, (call.label, outcome.text, expected)
            assert outcome.is_error is False, (call.label, outcome.text)
            if closed_under:
                # Only a race: the reply was in before aclose could end the call.
                assert run.close_started is not None
                assert call.ended - run.close_started < 0.1, (call.label, call.ended, run.close_started)
        else:
            raise AssertionError(f"{call.label} ({plan}) ended with {outcome!r}")
        if plan.stop == "none" and not closed_under:
            assert isinstance(outcome, ToolResult), (call.label, outcome)
        if closed_under:
            check_ended_at_once(run, call, where)
        event(f"outcome: {outcome if isinstance(outcome, str) else type(outcome).__name__}")


def answering_at(run: Run, call: CallRun, when: float) -> Shown | None:
    """The question of ``call`` the person was answering at ``when``, if any."""
    for shown in run.person.shown:
        end = shown.answered if shown.answered is not None else shown.cancelled
        if shown.label == call.label and shown.at <= when and (end is None or end > when):
            return shown
    return None


def check_ended_at_once(run: Run, call: CallRun, where: Where) -> None:
    """A call still waiting when aclose() started ends at once (docs/client.md)."""
    assert run.close_started is not None
    assert call.ended is not None
    late = call.ended - run.close_started
    if late <= CLOSE_ENDS_WITHIN:
        if answering_at(run, call, run.close_started) is not None:
            event("aclose() ended a call while the person answered")
        return
    raise AssertionError(f"{call.label} ended {late:.3f} s after aclose() started ({call.outcome!r})")


async def check_nothing_runs_after_close(run: Run, where: Where) -> None:
    """A call made once aclose() has returned fails without reaching the server."""
    if run.close_ended is None:
        return
    for call in run.calls:
        if call.started is None or call.started < run.close_ended:
            continue
        assert isinstance(call.outcome, TransportError | str), (call.label, call.outcome)
        if call.plan.tool != "long":
            continue
        await asyncio.sleep(0.2)  # (a request on its way reaches the handler by then)
        ran = marker(where, "started", call.label).exists()
        assert not ran, f"{call.label}: made on a closed client, and the server ran it"


async def check_the_server_learned(run: Run, where: Where) -> None:
    """A long call cancelled (or timed out) while its handler ran: the handler is cancelled."""
    for call in run.calls:
        if call.plan.tool != "long" or call.outcome not in ("cancelled", "timeout"):
            continue
        if not marker(where, "started", call.label).exists():
            await asyncio.sleep(0.2)  # a request on its way when the caller gave up
            if not marker(where, "started", call.label).exists():
                event("a long call cancelled before its handler started")
                continue
        gave_up = call.cancel_at if call.outcome == "cancelled" else call.ended
        assert call.started is not None
        assert gave_up is not None
        learned = await wait_for_marker(marker(where, "cancelled", call.label), LEARN_WITHIN)
        if learned:
            event("the server saw the cancellation")
            continue
        finished = marker(where, "finished", call.label).exists()
        close_race = call.plan.seconds - (gave_up - call.started) < RACE
        why = (
            f"{call.label}: cancelled after {gave_up - call.started:.3f} s of a {call.plan.seconds} s run, "
            f"and the server's handler was not cancelled within {LEARN_WITHIN} s (finished: {finished})"
        )
        assert finished, why
        assert close_race, why


def check_questions(run: Run, where: Where) -> None:
    person = run.person
    assert not person.problems, person.problems
    calls = {call.label: call for call in run.calls}
    twice = [key for key, n in Counter((s.label, s.key) for s in person.shown).items() if n > 1]
    assert not twice, f"questions shown twice: {twice}"
    legacy = run.era == "legacy"
    for shown in person.shown:
        if shown.label == f"{run.tag}-again":
            continue  # (the same client, asked again once the plan is over)
        call = calls.get(shown.label)
        assert call is not None, f"a question of no call of this run: {shown}"
        assert call.plan.tool in ("ask1", "ask2", "pair", "late"), (shown, call.plan)
        assert call.ended is not None
        # 2025-11-25: the server may ask before it has read the cancellation (a race it ends by
        # withdrawing the question); 2026-07-28: the call's own task asks, so never after it.
        allowance = 1.0 if legacy else 0.0
        assert shown.at <= call.ended + allowance, (
            f"{shown} shown {shown.at - call.ended:.3f} s after its call ended ({call.outcome!r})"
        )
        if run.close_started is not None and shown.at > run.close_started:
            raise AssertionError(f"{shown} shown {shown.at - run.close_started:.3f} s after aclose")
        if legacy and where.transport == "stdio" and call.cancel_at is not None:
            # An answer still being given when the call was cancelled is withdrawn: the server
            # cancels the handler and tells the client, which cancels the answerer.
            busy_until = shown.at + person.delay
            if shown.at < call.cancel_at and busy_until > call.cancel_at + 0.3 and shown.cancelled is None:
                raise AssertionError(
                    f"{shown}: its call was cancelled at {call.cancel_at:.3f} s, not the question"
                )
        if shown.cancelled is not None:
            event("a question was withdrawn from the person")


def check_progress(run: Run) -> None:
    calls = {call.label: call for call in run.calls}
    for label, when in run.progress:
        call = calls.get(label)
        assert call is not None, f"progress {label!r} of no call"
        assert call.plan.tool == "long", f"progress {label!r} of a {call.plan.tool} call"
        assert call.ended is not None
        assert when <= call.ended, (
            f"progress of {label} at {when:.3f} s, after its call ended at {call.ended}"
        )
    if run.progress:
        event("progress heard")


def serving_task(task: asyncio.Task[Any]) -> bool:
    """A task answering one of a 2025-11-25 server's requests."""
    return getattr(task.get_coro(), "__qualname__", "") == "Serving._run"


@asynccontextmanager
async def nothing_leaks() -> AsyncIterator[None]:
    """No error logged by mcp_elicit or asyncio (a task destroyed pending, a future's exception
    never retrieved), no ResourceWarning or "never awaited" warning, no task left running once
    the client is closed."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with no_errors_logged("mcp_elicit"), no_errors_logged("asyncio"):
            yield
            current = asyncio.current_task()
            left = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
            assert not left, left
            gc.collect()  # (where a destroyed task, an unclosed transport or a lost exception shows)
            await asyncio.sleep(0)
    bad = [
        str(w.message)
        for w in caught
        if issubclass(w.category, ResourceWarning | RuntimeWarning)
        or "never awaited" in str(w.message)
        or "unclosed" in str(w.message)
    ]
    assert not bad, bad


@dataclass
class Warned(logging.Handler):
    """What the client logs at warning level (reported as hypothesis events)."""

    records: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        logging.Handler.__init__(self, logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record.getMessage())

    def __hash__(self) -> int:
        return id(self)


async def check_plan(plan: Plan, where: Where) -> None:
    tag = uuid.uuid4().hex[:10]
    warned = Warned()
    CLIENT_LOG.addHandler(warned)
    try:
        async with nothing_leaks():
            run = await asyncio.wait_for(run_plan(plan, where, tag), 4 * WITHIN)
            await asyncio.sleep(0)
        assert (run.era, run.version) == (
            ("legacy", LEGACY) if where.protocol == LEGACY else ("modern", MODERN)
        ), (run.era, run.version)
        check_outcomes(run, where)
        check_questions(run, where)
        check_progress(run)
        await check_the_server_learned(run, where)
        await check_nothing_runs_after_close(run, where)
        if run.again:
            assert run.again == [f"{tag}-again:quick", f"{tag}-again:{tag}-again.q0"], run.again
        if where.transport == "stdio":
            assert not processes_left(str(where.markers)), processes_left(str(where.markers))
        async with nothing_leaks():
            await fresh_client_works(where, tag)
        if where.transport == "stdio":
            assert not processes_left(str(where.markers)), processes_left(str(where.markers))
    finally:
        CLIENT_LOG.removeHandler(warned)
    for message in warned.records:
        event(f"client warning: {message[:80]}")


# -- the properties -------------------------------------------------------------------------------
HUNT = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    phases=hunt_phases(),
)


@pytest.fixture(autouse=True)
def _watchdog() -> Iterator[None]:
    """The engine tests' last resort against a blocked loop, with room for a whole hunt (each
    example is bounded on its own)."""
    import faulthandler

    faulthandler.dump_traceback_later(max(120.0, EXAMPLES * 15.0), exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@HUNT
@given(plan=plans())
async def test_in_process_calls_survive_cancellation(plan: Plan) -> None:
    with tempfile.TemporaryDirectory() as folder:
        await check_plan(plan, in_process_where(folder))


@pytest.mark.parametrize("protocol", [MODERN, LEGACY])
@HUNT
@given(plan=plans())
async def test_stdio_calls_survive_cancellation(protocol: ProtocolChoice, plan: Plan) -> None:
    with tempfile.TemporaryDirectory() as folder:
        await check_plan(plan, stdio_where(protocol, folder))


@pytest.mark.parametrize("protocol", [MODERN, LEGACY])
@HUNT
@given(plan=plans())
async def test_http_calls_survive_cancellation(
    protocol: ProtocolChoice, plan: Plan, cancel_http: tuple[ServerProcess, Path]
) -> None:
    server, markers = cancel_http
    await check_plan(plan, Where("http", protocol, markers, server.url))


# -- what the hunt found, one case each --------------------------------------------------------------------
async def until(condition: Callable[[], bool], within: float = 5.0) -> None:
    for _ in range(int(within / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"not within {within} s: {condition}")


async def test_cancelling_a_2025_http_call_cancels_it_on_the_server(
    cancel_http: tuple[ServerProcess, Path],
) -> None:
    """Transport.send: "Cancelling the caller cancels the request on the wire". At 2025-11-25 a
    dropped stream is not a cancellation (our server, docs/protocol.md: "A dropped connection is
    not a cancellation", keeps the call ``resume_grace`` = 30 s for a resume): the client sends
    notifications/cancelled, as the spec asks (it only dropped the connection, and the tool ran
    on). Over stdio, and at 2026-07-28 over HTTP, the property checks it too."""
    server, markers = cancel_http
    label = f"legacy-http-cancel-{uuid.uuid4().hex[:8]}"
    async with Client.connect(server.url, protocol=LEGACY, on_progress=lambda _: None) as client:
        task = asyncio.create_task(client.call_tool("long", {"label": label, "seconds": 20}))
        await until((markers / f"started-{label}").exists)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        learned = await wait_for_marker(markers / f"cancelled-{label}", LEARN_WITHIN)
    assert learned, f"the server's handler still ran {LEARN_WITHIN} s after the call was cancelled"


@pytest.mark.parametrize("transport", ["in-process", "stdio", "http"])
async def test_closing_ends_a_2026_call_while_the_person_answers(
    transport: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """docs/client.md: "client.aclose() from another task ends the calls still waiting at once,
    with TransportError", and the question is withdrawn. A 2026-07-28 call answers its rounds in
    its own task, and aclose() closed only the transport: the answerer went on, and the call ended
    once the person had answered."""
    if transport == "http":
        server, markers = request.getfixturevalue("cancel_http")
        where = Where("http", MODERN, markers, server.url)
    elif transport == "stdio":
        where = stdio_where(MODERN, str(tmp_path))
    else:
        where = in_process_where(str(tmp_path))
    loop = asyncio.get_running_loop()
    person = Person(2.0, loop.time)
    client = await where.connect(answerer=person)
    try:
        label = f"close-asking-{uuid.uuid4().hex[:8]}"
        task = asyncio.create_task(client.call_tool("ask", {"label": label, "count": 1}))
        await until(lambda: bool(person.shown))
        closed_at = loop.time()
        await client.aclose()
        with pytest.raises(TransportError):
            await asyncio.wait_for(task, WITHIN)
        waited = loop.time() - closed_at
    finally:
        await client.aclose()
    assert waited < 1.0, f"the call ended {waited:.2f} s after aclose() (the person's answer took 2 s)"
    assert person.shown[0].cancelled is not None, "the question is still in front of the person"


async def test_a_closed_in_process_client_sends_nothing(tmp_path: Path) -> None:
    """A call on a closed client fails without reaching the server, in process as over stdio and
    HTTP. AsgiTransport.send ran the app whatever ``_closed`` said and checked it only once the
    response was in: the tool ran to its end (its side effects done) and the caller was told it
    did not finish."""
    where = in_process_where(str(tmp_path))
    client = await where.connect()
    await client.aclose()
    label = f"after-close-{uuid.uuid4().hex[:8]}"
    with pytest.raises(TransportError):
        await client.call_tool("long", {"label": label, "seconds": 0.05})
    await asyncio.sleep(0.2)
    assert not (tmp_path / f"started-{label}").exists(), "the closed client's call ran the tool"


async def test_a_question_that_comes_while_the_client_closes_is_not_asked(tmp_path: Path) -> None:
    """aclose() cancels the answers being given (``Serving.aclose``) first, then stops the server;
    the transport goes on reading meanwhile, and a server request read then started a new answer
    that nothing cancelled: the person was asked after aclose() started. Here the question is in
    the pipe when aclose() starts (the loop was busy); the hunt hit the same race over stdio and
    HTTP without that help."""
    loop = asyncio.get_running_loop()
    person = Person(1.0, loop.time)
    client = await stdio_where(LEGACY, str(tmp_path)).connect(answerer=person)
    try:
        task = asyncio.create_task(client.call_tool("late", {"label": "x", "seconds": 0.05}))
        await asyncio.sleep(0)  # (the request goes out)
        time.sleep(0.5)  # noqa: ASYNC251 (the loop is busy; the server asks meanwhile)
        closing = loop.time()
        await client.aclose()
        left = [repr(t) for t in asyncio.all_tasks() if serving_task(t) and not t.done()]
        with pytest.raises(TransportError):
            await task
    finally:
        for pending in asyncio.all_tasks():
            if serving_task(pending):
                pending.cancel()
        await asyncio.sleep(0)
    asked_late = [shown for shown in person.shown if shown.at >= closing]
    assert not asked_late, f"asked after aclose() started: {asked_late}"
    assert not left, f"still answering after aclose() returned: {left}"


async def test_a_round_of_two_questions_taken_up_as_the_client_closes_asks_nobody(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2026-07-28: ``Client._unless_closed`` looks at ``_closing`` in the first step of the task
    that asks, but a round of two questions (``pair``) puts each to the person in a task of its
    own, which starts a turn of the loop later: an aclose() that began in that turn (here: called
    by a task made as the round is taken up, as the hunt's ``close_at`` did by chance) had both
    questions shown after it began, then withdrawn."""
    from mcp_elicit.client.answering import Answering

    loop = asyncio.get_running_loop()
    person = Person(1.0, loop.time)
    client = await in_process_where(str(tmp_path)).connect(answerer=person)
    closing: list[float] = []
    closers: list[asyncio.Future[None]] = []
    taken_up = Answering.round

    async def round_then_close(self: Answering, *args: Any, **kwargs: Any) -> Any:
        async def close() -> None:
            closing.append(loop.time())
            await client.aclose()

        closers.append(asyncio.ensure_future(close()))
        return await taken_up(self, *args, **kwargs)

    monkeypatch.setattr(Answering, "round", round_then_close)
    try:
        with pytest.raises(TransportError):
            await asyncio.wait_for(client.call_tool("pair", {"label": "x"}), WITHIN)
    finally:
        await asyncio.gather(*closers)
        await client.aclose()
    assert closing, "aclose() was not called"
    asked_late = [shown for shown in person.shown if shown.at >= closing[0]]
    assert not asked_late, f"asked after aclose() started: {asked_late}"


async def test_a_2025_http_call_made_while_the_client_closes_is_a_transport_error(
    cancel_http: tuple[ServerProcess, Path],
) -> None:
    """HttpTransport.aclose() forgets the session id, then waits for the DELETE that ends the
    session; send() did not look at ``_closed``, so a call made meanwhile went out without
    ``Mcp-Session-Id`` and the server's 400 came back as an McpClientError, which blames the
    server. Each attempt lets aclose() run a few more steps before the call (the first ones go
    out before the session ends, and are answered)."""
    server, _ = cancel_http
    outcomes: list[Exception | None] = []
    for steps in range(12):
        client = await Client.connect(server.url, protocol=LEGACY)
        closing = asyncio.create_task(client.aclose())
        for _ in range(steps):
            await asyncio.sleep(0)
        try:
            await client.call_tool("quick", {"label": f"during-close-{steps}"})
        except Exception as exc:  # (what it is, is the point)
            outcomes.append(exc)
        else:
            outcomes.append(None)
        await closing
    # A result is fine (the call went out before the session ended); an error must say the client
    # was closed.
    wrong = [(steps, repr(o)[:160]) for steps, o in enumerate(outcomes) if isinstance(o, McpClientError)]
    assert not wrong, wrong
    assert all(o is None or isinstance(o, TransportError) for o in outcomes), outcomes
