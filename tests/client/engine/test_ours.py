"""The client engine against our own server (``ours_server.py``), over stdio and Streamable HTTP.

Each test runs on both transports: stdio spawns the server per test, HTTP uses one uvicorn
process per module on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.client import (
    Answer,
    Client,
    FormQuestion,
    MissingCapabilityError,
    Progress,
    ServerIdentity,
    TransportError,
    UrlQuestion,
)
from mcp_elicit.client.errors import InvalidAnswerError

from .conftest import Target
from .support import Script, accept

REPO = Path(__file__).resolve().parents[3]


def connect(target: Target, answerer: Any = None, **options: Any) -> Any:
    if target.transport == "stdio":
        options.setdefault("stderr", "capture")
    return Client.connect(target.target, answerer=answerer, **options)


def names(question: Any) -> Answer:
    return Answer(
        "accept", {"name": {"First name?": "Grace", "Last name?": "Hopper"}.get(question.message, "X")}
    )


async def test_discover_gives_the_server_identity_and_is_cached(ours: Target) -> None:
    async with connect(ours) as client:
        reached = ours.target if isinstance(ours.target, str) else " ".join(ours.target)
        assert client.server_identity == ServerIdentity(
            name="engine-tests",
            reached_via=reached,
            title="Engine test server",
            version="2.1.0",
            protocol_version="2026-07-28",
        )
        assert client.discovery.supported_versions == ("2026-07-28",)
        expected = {"logging": {}, "tools": {}, "prompts": {}, "resources": {}}
        assert client.discovery.capabilities == expected
        assert client.protocol_version == "2026-07-28"
        first = client.discovery
        assert await client.discover() is first  # cached for the server's ttlMs (an hour)
        assert await client.discover(refresh=True) is not first


async def test_list_calls(ours: Target) -> None:
    async with connect(ours) as client:
        tools = {tool["name"] for tool in await client.list_tools()}
        assert {"greet", "pair", "confirm", "signup", "caps", "slow", "grüßen"} <= tools
        assert [p["name"] for p in await client.list_prompts()] == ["draft"]
        assert await client.list_resources() == []
        templates = await client.list_resource_templates()
        assert [t["uriTemplate"] for t in templates] == ["note://{note_id}"]


async def test_a_multi_round_flow(ours: Target) -> None:
    person = Script(form=names)
    async with connect(ours, person) as client:
        result = await client.call_tool("greet")
    assert result.text == "Hello, Grace Hopper!"
    assert result.is_error is False
    assert [(q.key, q.message) for q in person.asked] == [("first", "First name?"), ("last", "Last name?")]
    assert all(isinstance(q, FormQuestion) and q.server.name == "engine-tests" for q in person.asked)


async def test_questions_of_one_round_are_answered_concurrently(ours: Target) -> None:
    arrived: list[str] = []
    both = asyncio.Event()

    async def answer(question: FormQuestion) -> Answer:
        arrived.append(question.key)
        if len(arrived) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 5)  # deadlocks if asked one after the other
        return Answer("accept", {"name": question.key.upper()})

    async with connect(ours, Script(form=answer)) as client:
        result = await client.call_tool("pair")
    assert result.text == "LEFT+RIGHT"
    assert sorted(arrived) == ["left", "right"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_reach_the_handler(ours: Target, action: str) -> None:
    async with connect(ours, Script(form=lambda q: Answer(action))) as client:  # type: ignore[arg-type]
        result = await client.call_tool("confirm")
    assert result.text == f"action={action}"


async def test_an_invalid_answer_is_asked_again_and_never_sent(ours: Target) -> None:
    answers = iter(
        [
            Answer("accept", {"email": "ada@example.com", "age": 12, "plan": "gold"}),
            Answer("accept", {"email": "ada@example.com", "age": 36}),
        ]
    )
    person = Script(form=lambda q: next(answers))
    async with connect(ours, person) as client:
        result = await client.call_tool("signup")
    first, second = person.asked
    assert isinstance(first, FormQuestion)
    assert isinstance(second, FormQuestion)
    assert first.errors == {}
    assert first.previous is None
    assert set(second.errors) == {"age", "plan"}
    assert "18" in second.errors["age"]
    assert second.previous == {"email": "ada@example.com", "age": 12, "plan": "gold"}
    assert second.message == first.message  # the server did not re-ask: it never saw the bad answer
    # Defaults applied by the client before sending; one round only (round 1 = first retry).
    assert result.structured == {
        "action": "accept",
        "content": {"email": "ada@example.com", "age": 36, "plan": "free", "news": False, "tags": []},
        "round": 1,
    }


async def test_an_answerer_that_never_gets_it_right_fails_locally(ours: Target) -> None:
    person = Script(form=accept(email="not an email", age=40))
    async with connect(ours, person, max_answer_attempts=2) as client:
        with pytest.raises(InvalidAnswerError, match="invalid 2 times") as caught:
            await client.call_tool("signup")
    assert caught.value.key == "signup"
    assert set(caught.value.errors) == {"email"}
    assert len(person.asked) == 2


async def test_a_form_only_answerer_declares_form_only_and_gets_no_url_question(ours: Target) -> None:
    person = Script(form=names, mode_names=("form",))
    info = {"name": "engine-test-client", "version": "3"}
    async with connect(ours, person, client_info=info) as client:
        assert client.capabilities == {"elicitation": {"form": {}}}
        seen = await client.call_tool("caps")
        assert seen.structured == {"capabilities": {"elicitation": {"form": {}}}, "info": info}
        fallback = await client.call_tool("link")
        assert fallback.text == "no url mode: open http://127.0.0.1:9/connect yourself"
        with pytest.raises(MissingCapabilityError) as caught:
            await client.call_tool("needs_url")
    assert caught.value.code == -32021
    assert caught.value.missing == ("elicitation.url",)
    assert caught.value.required == {"elicitation": {"url": {}}}
    assert person.asked == []


async def test_no_answerer_declares_no_elicitation(ours: Target) -> None:
    async with connect(ours) as client:
        assert client.capabilities == {}
        seen = await client.call_tool("caps")
        assert seen.structured is not None
        assert seen.structured["capabilities"] == {}
        with pytest.raises(MissingCapabilityError) as caught:
            await client.call_tool("greet")
    assert caught.value.missing == ("elicitation.form",)


async def test_url_mode(ours: Target) -> None:
    person = Script(url=lambda q: Answer("accept", {"ignored": True}), mode_names=("url", "form"))
    async with connect(ours, person) as client:
        result = await client.call_tool("link")
    assert result.text == "url accept"
    (question,) = person.asked
    assert isinstance(question, UrlQuestion)
    assert (question.key, question.url, question.message) == (
        "connect",
        "http://127.0.0.1:9/connect",
        "Connect your account",
    )


async def test_prompts_and_resources_elicit_too(ours: Target) -> None:
    person = Script(form=accept(name="Ada"))
    async with connect(ours, person) as client:
        prompt = await client.get_prompt("draft", {"topic": "engines"})
        resource = await client.read_resource("note://7")
    assert prompt.messages == [
        {"role": "user", "content": {"type": "text", "text": "Write about engines in a Ada tone."}}
    ]
    assert resource.text == "note 7 for Ada"
    assert [q.message for q in person.asked] == ["Tone for engines?", "Who may read note 7?"]


async def test_progress_reaches_the_callback(ours: Target) -> None:
    seen: list[Progress] = []
    async with connect(ours, on_progress=seen.append) as client:
        result = await client.call_tool("progress")
    assert result.text == "progressed"
    assert seen == [
        Progress("tools/call", "progress", 1.0, 2.0, "half way"),
        Progress("tools/call", "progress", 2.0, 2.0, "done"),
    ]


async def test_a_name_that_needs_the_base64_header(ours: Target) -> None:
    async with connect(ours, Script(form=accept(name="Jürgen"))) as client:
        result = await client.call_tool("grüßen")
    assert result.text == "Grüß dich, Jürgen!"


async def test_cancelling_the_caller_cancels_the_handler(ours: Target) -> None:
    assert ours.markers is not None
    label = f"{ours.transport}-{id(ours)}"
    async with connect(ours) as client:
        task = asyncio.create_task(client.call_tool("slow", {"label": label}))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        marker = ours.markers / f"cancelled-{label}"
        for _ in range(100):
            if marker.exists():
                break
            await asyncio.sleep(0.05)
        assert marker.read_text() == "cancelled"
        # The connection is still good for the next call.
        assert (await client.call_tool("caps")).is_error is False


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_closing_the_client_ends_the_calls_still_waiting(ours: Target, protocol: str) -> None:
    """Another task closes the client while a call waits for its reply: the call fails with a
    TransportError that says so, promptly (over HTTP it waited for a reply nobody would read)."""
    assert ours.markers is not None
    label = f"closed-{ours.transport}-{protocol}-{id(ours)}"
    client = await connect(ours, protocol=protocol)
    task = asyncio.create_task(client.call_tool("slow", {"label": label}))
    for _ in range(100):
        if (ours.markers / f"started-{label}").exists():
            break
        await asyncio.sleep(0.05)
    closed_at = asyncio.get_running_loop().time()
    closing = asyncio.create_task(client.aclose())
    with pytest.raises(TransportError, match=r"tools/call to .+ did not finish: the client was closed"):
        await asyncio.wait_for(task, 10)
    waited = asyncio.get_running_loop().time() - closed_at
    # At once, whatever the transport: over stdio it waited for the spawned server to exit (its
    # grace for the calls it runs, about 2 s) before the call ended.
    assert waited < 1.0, waited
    await asyncio.wait_for(closing, 10)
    # What the caller is told did not finish is cancelled on the server too, at once (over stdio
    # it ran on through the server's grace for the calls it runs, 2 s after stdin closed).
    marker = ours.markers / f"cancelled-{label}"
    for _ in range(50):
        if marker.exists():
            break
        await asyncio.sleep(0.02)
    assert marker.exists(), "the server's handler was not cancelled within 1 s"


async def test_closing_an_in_process_client_ends_the_calls_still_waiting() -> None:
    """The same over the in-process transport: the call fails with the TransportError of a closed
    client (it got the server's -32603 "shutting down", its answer to the cancellation)."""
    app = Server("closing")
    started = asyncio.Event()

    @app.tool()
    async def slow() -> str:
        started.set()
        await asyncio.sleep(30)
        return "late"

    client = await Client.connect(app)
    task = asyncio.create_task(client.call_tool("slow"))
    await asyncio.wait_for(started.wait(), 5)
    await client.aclose()
    with pytest.raises(TransportError, match=r"tools/call to .* did not finish: the client was closed"):
        await asyncio.wait_for(task, 5)


async def test_a_question_due_on_the_turn_aclose_starts_is_not_shown() -> None:
    """What waits on the person runs as a task, which starts a turn of the loop after it is made:
    when aclose() runs in between, the person is not asked (the question was shown to them,
    microseconds after close began, and answered into a closed client)."""
    client = await Client.connect(Server("closing"))
    shown: list[str] = []

    async def ask_the_person() -> str:
        shown.append("question")
        return "answer"

    waiting = asyncio.ensure_future(client._unless_closed("tools/call", ask_the_person()))
    await asyncio.sleep(0)  # the call is now waiting; the task that asks has not started yet
    await client.aclose()
    with pytest.raises(TransportError, match=r"tools/call did not finish: the client was closed"):
        await asyncio.wait_for(waiting, 5)
    assert shown == []


async def test_concurrent_calls_keep_their_own_flows(ours: Target) -> None:
    async def answer(question: FormQuestion) -> Answer:
        await asyncio.sleep(0.01)
        return Answer("accept", {"name": question.key})

    async with connect(ours, Script(form=answer)) as client:
        results = await asyncio.gather(*(client.call_tool(t) for t in ("greet", "pair", "greet", "pair")))
    assert [r.text for r in results] == [
        "Hello, first last!",
        "left+right",
        "Hello, first last!",
        "left+right",
    ]


async def test_the_command_line_may_be_one_string(tmp_path: Path) -> None:
    command = (
        f"{sys.executable} {REPO / 'tests/client/engine/ours_server.py'} --stdio --marker-dir {tmp_path}"
    )
    async with Client.connect(command, stderr="devnull") as client:
        assert client.server_identity.reached_via == command
        assert (await client.call_tool("caps")).structured == {
            "capabilities": {},
            "info": {"name": "mcp-elicit", "version": "0.1.0"},
        }


async def test_sampling_and_roots_when_configured(ours: Target) -> None:
    asked: list[dict[str, Any]] = []

    class Model:
        async def create_message(self, params: dict[str, Any]) -> dict[str, Any]:
            asked.append(params)
            return {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "tiny-1"}

    roots = [{"uri": "file:///work/a", "name": "a"}, {"uri": "file:///work/b"}]
    async with connect(ours, sampler=Model(), roots=roots) as client:
        assert client.capabilities == {"sampling": {}, "roots": {}}
        result = await client.call_tool("summarize", {"text": "a long story"})
    assert result.text == "tiny-1 says 'short' about file:///work/a, file:///work/b"
    assert asked == [
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Summarize: a long story"}}],
            "maxTokens": 20,
        }
    ]


async def test_a_form_the_server_asks_again_starts_from_the_answer_it_refused() -> None:
    """The server refuses an answer (its own check, not the schema's) and asks again under the
    same key, saying why in the message: the question comes back with the refused answer in
    ``previous``, so a person starts from what they gave (a terminal form pre-fills it), not
    from the defaults. Another call's question of the same key starts afresh."""
    from pydantic import BaseModel, Field, field_validator

    class Booking(BaseModel):
        name: str
        guests: int = Field(2, ge=1, le=8)

        @field_validator("name")
        @classmethod
        def not_bob(cls, value: str) -> str:
            if value.lower() == "bob":
                raise ValueError("Bob is banned")
            return value

    app = Server("rebook")

    @app.tool()
    async def book(ctx: Context) -> str:
        answer = await ctx.elicit("Book a room", Booking, key="booking")
        return repr(answer.data) if answer.accepted else answer.action

    answers = iter(
        [
            Answer("accept", {"name": "bob", "guests": 6}),
            Answer("accept", {"name": "alice", "guests": 6}),
            Answer("decline"),
        ]
    )
    person = Script(form=lambda q: next(answers))
    async with await Client.connect(app, answerer=person) as client:
        result = await client.call_tool("book")
        await client.call_tool("book")
    first, second, third = person.asked
    assert isinstance(first, FormQuestion)
    assert isinstance(second, FormQuestion)
    assert isinstance(third, FormQuestion)
    assert first.previous is None
    assert second.key == first.key
    assert "Bob is banned" in second.message
    assert second.previous == {"name": "bob", "guests": 6}
    assert second.errors == {}
    assert "alice" in (result.text or "")
    assert third.previous is None  # a new call
