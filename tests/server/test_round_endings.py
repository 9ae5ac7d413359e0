"""How a round ends when the handler does not simply wait: a handler or branch that catches the
CancelledError ending the round, tasks the handler left behind (``gather`` after a failure,
``shield``, ``create_task``), and ``ctx.once`` steps still running when a state is sealed.

The calls are the real client's (``Client.connect(server)``); a test that must look at a round's
``InputRequiredResult`` or at what happened between two rounds with no question in them sends
its rounds by hand (:class:`tests.helpers.RawCall`)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from mcp_elicit import Context, InputRequired, Server, ToolError
from mcp_elicit.client import Answer, Client, McpClientError
from mcp_elicit.wire.errors import INTERNAL_ERROR
from tests.helpers import RawCall, Script, text

SWALLOWED = "caught the CancelledError with which the engine ends a round"


class Log:
    """What the handlers did, and the tasks they left behind."""

    def __init__(self) -> None:
        self.effects: list[str] = []
        self.tasks: list[asyncio.Task[Any]] = []

    async def charge(self) -> str:
        await asyncio.sleep(0.05)  # real I/O: the step is still running when the round ends
        self.effects.append("charged")
        return "receipt-1"


def make_server(log: Log) -> Server:
    app = Server("endings", state_keys=["round-endings-tests-secret-0123456789abcdef"])

    @app.tool()
    async def asks_again_when_cancelled(ctx: Context) -> str:
        try:
            await ctx.elicit("First?", None)
        except asyncio.CancelledError:
            await ctx.elicit("Second?", None)
        return "done"

    @app.tool()
    async def branch_asks_again_when_cancelled(ctx: Context) -> str:
        async def stubborn() -> str:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                await ctx.elicit("Still there?", None)
            return "stubborn"

        await asyncio.gather(ctx.elicit("First?", None), stubborn())
        return "done"

    @app.tool()
    async def group_branch_asks_again_when_cancelled(ctx: Context) -> str:
        async def stubborn() -> None:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                await ctx.elicit("Still there?", None)

        async with asyncio.TaskGroup() as group:
            group.create_task(ctx.elicit("First?", None))
            group.create_task(stubborn())
        return "done"

    @app.tool()
    async def gives_up_when_cancelled(ctx: Context) -> str:
        try:
            answer = await ctx.elicit("Confirm?", None)
        except asyncio.CancelledError:
            return "aborted"
        return answer.action

    @app.tool()
    async def cleans_up_when_cancelled(ctx: Context) -> str:
        try:
            answer = await ctx.elicit("Confirm?", None)
        except asyncio.CancelledError:
            log.effects.append("cleaned up")
            raise
        return answer.action

    @app.tool()
    async def waits_with_a_deadline(ctx: Context) -> str:
        async with asyncio.timeout(30):
            first = await ctx.elicit("First?", None)
        second = await asyncio.wait_for(ctx.elicit("Second?", None), 30)
        third = await asyncio.shield(ctx.elicit("Third?", None))
        return f"{first.action} {second.action} {third.action}"

    @app.tool()
    async def retries_while_charging(ctx: Context) -> str:
        async def not_ready_yet() -> None:
            await asyncio.sleep(0)
            if ctx.round == 0:
                ctx.retry_later()

        receipt, _ = await asyncio.gather(ctx.once("charge", log.charge), not_ready_yet())
        return f"{receipt} in round {ctx.round}"

    @app.tool()
    async def low_level_while_charging(ctx: Context) -> Any:
        step = asyncio.create_task(ctx.once("charge", log.charge))
        log.tasks.append(step)
        if ctx.round == 0:
            await asyncio.sleep(0)  # the step has started
            return InputRequired({}, state="later")
        return f"{await step} in round {ctx.round}"

    @app.tool()
    async def charges_in_the_background(ctx: Context) -> str:
        async def later() -> str:
            await asyncio.sleep(0.05)  # starts after the round ended
            return str(await ctx.once("charge", log.charge))

        log.tasks.append(asyncio.create_task(later()))
        answer = await ctx.elicit("Go on?", None)
        if ctx.round:
            await log.tasks[-1]
        return answer.action

    @app.tool()
    async def asks_from_a_task_it_forgets(ctx: Context) -> str:
        log.tasks.append(asyncio.create_task(ctx.elicit("Forgotten?", None)))
        return (await ctx.elicit("Go on?", None)).action

    @app.tool()
    async def asks_in_a_gather_that_fails(ctx: Context) -> str:
        async def refuse() -> None:
            await asyncio.sleep(0)
            raise ToolError("the ticket system is closed")

        async def ask() -> None:
            task = asyncio.current_task()
            assert task is not None
            log.tasks.append(task)
            await ctx.elicit("Which ticket?", None)

        await asyncio.gather(ask(), refuse())
        return "unreachable"

    @app.tool()
    async def asks_after_returning(ctx: Context) -> str:
        async def later() -> None:
            await asyncio.sleep(0.02)
            await ctx.elicit("Too late?", None)

        log.tasks.append(asyncio.create_task(later()))
        return "returned"

    return app


async def refused(app: Server, tool: str) -> McpClientError:
    """The error calling ``tool`` ends with (its questions, if any went out, are never answered)."""
    async with Client.connect(app, answerer=Script()) as client:
        with pytest.raises(McpClientError) as info:
            await client.call_tool(tool)
    return info.value


def answering(action: str) -> Script:
    return Script(form=lambda question: Answer(action))  # type: ignore[arg-type]


async def test_a_handler_that_catches_the_rounds_cancellation_and_asks_again_is_a_defect() -> None:
    error = await asyncio.wait_for(refused(make_server(Log()), "asks_again_when_cancelled"), 5)  # it hung
    assert error.code == INTERNAL_ERROR
    assert SWALLOWED in error.message
    assert "asked 'elicit-" in error.message


@pytest.mark.parametrize(
    "tool", ["branch_asks_again_when_cancelled", "group_branch_asks_again_when_cancelled"]
)
async def test_a_branch_that_catches_the_rounds_cancellation_and_asks_again_is_a_defect(tool: str) -> None:
    call = asyncio.ensure_future(refused(make_server(Log()), tool))
    # Not wait_for: under a TaskGroup the request used to hang even through its own cancellation.
    await asyncio.wait([call], timeout=5)
    assert call.done(), "the request hung"
    error = call.result()
    assert error.code == INTERNAL_ERROR
    assert SWALLOWED in error.message


async def test_a_handler_that_catches_the_rounds_cancellation_and_returns_is_a_defect() -> None:
    # It used to complete with "aborted": the question was never sent to anyone.
    error = await refused(make_server(Log()), "gives_up_when_cancelled")
    assert error.code == INTERNAL_ERROR
    assert SWALLOWED in error.message
    assert "and returned" in error.message


async def test_clean_up_on_cancellation_that_re_raises_still_works() -> None:
    log = Log()
    async with Client.connect(make_server(log), answerer=answering("decline")) as client:
        assert (await client.call_tool("cleans_up_when_cancelled")).text == "decline"
    assert log.effects == ["cleaned up"]


async def test_questions_under_timeout_wait_for_and_shield_take_their_rounds() -> None:
    log = Log()
    person = answering("accept")
    async with Client.connect(make_server(log), answerer=person) as client:
        result = await client.call_tool("waits_with_a_deadline")
    await asyncio.sleep(0)
    assert result.text == "accept accept accept"
    assert [question.message for question in person.asked] == ["First?", "Second?", "Third?"]
    # shield's inner task, left waiting when the round ended, was ended with it.
    assert [t for t in asyncio.all_tasks() if "elicit" in repr(t.get_coro())] == []


async def test_a_step_still_running_when_a_branch_asks_to_retry_later_is_recorded() -> None:
    log = Log()
    flow = RawCall(make_server(log), "retries_while_charging")
    first = await flow.send()
    assert first["resultType"] == "input_required"
    assert "inputRequests" not in first
    assert log.effects == ["charged"]
    assert text(await flow.send()) == "receipt-1 in round 1"
    assert log.effects == ["charged"]  # it used to charge again in round 1


async def test_a_step_still_running_when_a_low_level_handler_asks_is_recorded() -> None:
    log = Log()
    flow = RawCall(make_server(log), "low_level_while_charging")
    await flow.send()
    assert log.effects == ["charged"]
    assert text(await flow.send()) == "receipt-1 in round 1"
    assert log.effects == ["charged"]  # it used to charge again in round 1


async def test_a_step_started_after_its_round_ended_is_not_run(caplog: pytest.LogCaptureFixture) -> None:
    log = Log()
    between_rounds: list[Any] = []

    async def accept_later(question: object) -> Answer:
        await asyncio.sleep(0.2)
        between_rounds.extend([list(log.effects), log.tasks[0].cancelled(), caplog.text])
        return Answer("accept")

    async with Client.connect(make_server(log), answerer=Script(form=accept_later)) as client:
        assert (await client.call_tool("charges_in_the_background")).text == "accept"
    effects, cancelled, logged = between_rounds
    # Its result could not be recorded any more: running it would charge twice.
    assert effects == []
    assert cancelled
    assert "ctx.once step 'charge' was started after its round had ended" in logged
    assert log.effects == ["charged"]


async def test_tasks_left_waiting_for_an_answer_end_with_their_round() -> None:
    # By hand: the round's questions are looked at, not answered (an answer to the forgotten
    # question would reach a replay that returns before the forgotten task asks it again).
    log = Log()
    app = make_server(log)
    first = await RawCall(app, "asks_from_a_task_it_forgets").send()
    assert len(first["inputRequests"]) == 2  # the forgotten task's question went out too
    await asyncio.sleep(0)
    assert log.tasks[0].cancelled()  # it used to wait forever ("Task was destroyed but it is pending!")

    async with Client.connect(app, answerer=Script()) as client:
        failed = await client.call_tool("asks_in_a_gather_that_fails")
    assert failed.is_error is True
    await asyncio.sleep(0)
    assert log.tasks[1].cancelled()


async def test_a_question_asked_after_the_handler_returned_is_not_left_waiting(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = Log()
    async with Client.connect(make_server(log), answerer=Script()) as client:
        assert (await client.call_tool("asks_after_returning")).text == "returned"
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.wait_for(log.tasks[0], 5)  # it used to wait forever
    assert log.tasks[0].cancelled()
    assert "was asked after its round had ended" in caplog.text
