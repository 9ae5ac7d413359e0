"""ctx.connection / ctx.secret called more than once in a handler, several flows in one round,
a flow finished through another link, and the text the user reads (message, page description,
failure). Driven in-process on real SQLite stores: the real client (``Client.connect`` to the
server's ``/mcp``, the user given as a validated token would name them), whose answerer plays
the pages before it accepts; a call whose client went away after one round, or that replays a
``requestState``, sends its rounds by hand (:class:`tests.helpers.RawCall`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kit_sites import offline_kit
from kit_support import ACCEPT, browser_connects, browser_enters_secret, flow_id_of
from tests.helpers import RawCall, Script, signed_in, text

from mcp_elicit import Context
from mcp_elicit.client import Answer, Client, ToolResult, UrlQuestion
from mcp_elicit.connect.kit import ConnectKit
from mcp_elicit.server.app import Server
from mcp_elicit.state import KeyRing

ALICE = "https://auth.example.com|alice"
URL_CAPS: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[ConnectKit]:
    made = offline_kit(tmp_path, hold=0.4)
    for provider in ("github", "gitlab"):
        made.oauth_provider(
            provider,
            authorize_url=f"https://{provider}.example/authorize",
            token_url=f"https://{provider}.example/token",
            client_id="c",
            scopes=["repo"],
        )
    try:
        yield made
    finally:
        await made.aclose()


@pytest.fixture
def app(kit: ConnectKit) -> Server:
    server = Server("slots", state_keys=[KeyRing.generate_secret()], connect=kit)

    @server.tool()
    async def github_twice(ctx: Context) -> str:
        first = await ctx.connection("github", reason="list your repositories")
        second = await ctx.connection("github", reason="read your issues")
        return f"{first.access_token} {second.access_token}"

    @server.tool()
    async def github_gathered(ctx: Context) -> str:
        first, second = await asyncio.gather(ctx.connection("github"), ctx.connection("github"))
        return f"{first.access_token} {second.access_token}"

    @server.tool()
    async def secret_twice(ctx: Context) -> str:
        first = await ctx.secret("api-key", "Your API key")
        second = await ctx.secret("api-key", "Your API key")
        return f"{len(first)} {first == second}"

    @server.tool()
    async def two_providers(ctx: Context) -> str:
        github, gitlab = await asyncio.gather(ctx.connection("github"), ctx.connection("gitlab"))
        return f"{github.access_token} {gitlab.access_token}"

    @server.tool()
    async def connect(ctx: Context, reason: str) -> str:
        return (await ctx.connection("github", reason=reason)).access_token

    @server.tool()
    async def secret(ctx: Context, description: str) -> str:
        return str(len(await ctx.secret("api-key", description)))

    return server


def url_questions(result: dict[str, Any]) -> dict[str, tuple[str, str]]:
    assert result["resultType"] == "input_required", result
    return {
        key: (request["params"]["url"], request["params"]["message"])
        for key, request in result["inputRequests"].items()
    }


async def call(app: Server, person: Script, tool: str, arguments: dict[str, Any] | None = None) -> ToolResult:
    """``tool`` called by alice, whose client answers with ``person``."""
    async with Client.connect(signed_in(app, ALICE), answerer=person) as client:
        return await client.call_tool(tool, arguments)


def shown(person: Script) -> list[tuple[str, str, str]]:
    """The key, URL and message of each URL question the person was shown, in order."""
    return [(q.key, q.url, q.message) for q in person.asked if isinstance(q, UrlQuestion)]


async def test_the_same_connection_twice_in_one_handler(app: Server, kit: ConnectKit) -> None:
    async def connect(question: UrlQuestion) -> Answer:
        await browser_connects(kit.flows, kit.vault, flow_id_of(question.url), ALICE, "gho_one")
        return Answer("accept")

    person = Script(url=connect)
    # The second call shares the first call's flow: no second link, no "key used twice".
    assert (await call(app, person, "github_twice")).text == "gho_one gho_one"
    ((_, _, message),) = shown(person)
    assert message == "Connect your GitHub account to list your repositories."


async def test_the_same_connection_twice_in_asyncio_gather(app: Server, kit: ConnectKit) -> None:
    async def connect_when_asked_again(question: UrlQuestion) -> Answer:
        if question.key == "connect-github-1":  # accepted before the page was done: held, asked again
            await browser_connects(kit.flows, kit.vault, flow_id_of(question.url), ALICE, "gho_both")
        return Answer("accept")

    person = Script(url=connect_when_asked_again)
    assert (await call(app, person, "github_gathered")).text == "gho_both gho_both"
    (first_key, url, _), (retry_key, retry_url, _) = shown(person)
    assert (first_key, retry_key) == ("connect-github-0", "connect-github-1")
    assert retry_url == url


async def test_the_same_secret_twice_in_one_handler(app: Server, kit: ConnectKit) -> None:
    async def enter(question: UrlQuestion) -> Answer:
        await browser_enters_secret(
            kit.flows, kit.vault, flow_id_of(question.url), ALICE, "api-key", "sk-12345"
        )
        return Answer("accept")

    person = Script(url=enter)
    assert (await call(app, person, "secret_twice")).text == "8 True"
    assert len(shown(person)) == 1


async def test_two_providers_in_one_round(app: Server, kit: ConnectKit) -> None:
    async def github_now_gitlab_when_asked_again(question: UrlQuestion) -> Answer:
        if question.key == "connect-github-0":
            await browser_connects(kit.flows, kit.vault, flow_id_of(question.url), ALICE, "gho_g")
        if question.key == "connect-gitlab-1":
            await browser_connects(kit.flows, kit.vault, flow_id_of(question.url), ALICE, "glpat_l", "gitlab")
        return Answer("accept")

    person = Script(url=github_now_gitlab_when_asked_again)
    assert (await call(app, person, "two_providers")).text == "gho_g glpat_l"
    *first, second = shown(person)
    questions = {key: (url, message) for key, url, message in first}
    assert sorted(questions) == ["connect-github-0", "connect-gitlab-0"]
    assert questions["connect-github-0"][0] != questions["connect-gitlab-0"][0]
    # GitHub is done; GitLab is held and asked again, alone, with the same URL.
    assert second == ("connect-gitlab-1", *questions["connect-gitlab-0"])


async def test_a_connection_made_through_another_link_finishes_the_waiting_call(
    app: Server, kit: ConnectKit
) -> None:
    """The model called the tool twice (two links); the user finished the first link. The
    second call must not hold and re-ask for a page nobody will open."""
    kit.hold = 8.0
    # The earlier call's client asked once and went away: one round by hand.
    earlier = RawCall(app, "connect", {"reason": "x"}, capabilities=URL_CAPS, principal=ALICE)
    ((_, (earlier_url, _)),) = url_questions(await earlier.send()).items()
    accepted_at: list[float] = []

    async def finish_the_earlier_link(question: UrlQuestion) -> Answer:
        await browser_connects(kit.flows, kit.vault, flow_id_of(earlier_url), ALICE, "gho_tab1")
        accepted_at.append(time.monotonic())
        return Answer("accept")

    person = Script(url=finish_the_earlier_link)
    assert (await call(app, person, "connect", {"reason": "x"})).text == "gho_tab1"
    assert time.monotonic() - accepted_at[0] < 4.0, "finished at once, not after the hold"
    ((_, later_url, _),) = shown(person)
    assert later_url != earlier_url
    # Later rounds of the same call go to the vault, as after a completed flow.
    assert (await kit.flows.get(flow_id_of(later_url))).status == "pending"  # left to expire


async def test_completed_through_another_link_during_the_hold(app: Server, kit: ConnectKit) -> None:
    kit.hold = 1.0
    earlier = RawCall(app, "connect", {"reason": "x"}, capabilities=URL_CAPS, principal=ALICE)
    ((_, (earlier_url, _)),) = url_questions(await earlier.send()).items()
    tabs: list[asyncio.Task[None]] = []

    async def other_tab() -> None:
        await asyncio.sleep(0.3)
        await browser_connects(kit.flows, kit.vault, flow_id_of(earlier_url), ALICE, "gho_tab1")

    async def accept_then_the_other_tab_finishes(question: UrlQuestion) -> Answer:
        tabs.append(asyncio.create_task(other_tab()))  # while the accepted round is held
        return Answer("accept")

    person = Script(url=accept_then_the_other_tab_finishes)
    assert (await call(app, person, "connect", {"reason": "x"})).text == "gho_tab1"
    await asyncio.gather(*tabs)
    assert len(tabs) == 1


def reading_the_page(kit: ConnectKit) -> tuple[Script, list[str]]:
    """A person who opens the link, reads what the page says (the flow's description), and
    declines; and the list of what they read."""
    pages: list[str] = []

    async def read_then_decline(question: UrlQuestion) -> Answer:
        pages.append((await kit.flows.get(flow_id_of(question.url))).description)
        return Answer("decline")

    return Script(url=read_then_decline), pages


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("...", "Connect your GitHub account to continue with connect."),
        (" read your repos. ", "Connect your GitHub account to read your repos."),
        ("read\nyour\u202e repos\x07", "Connect your GitHub account to read your repos."),
    ],
)
async def test_the_reason_is_one_clean_line(app: Server, kit: ConnectKit, reason: str, message: str) -> None:
    person, pages = reading_the_page(kit)
    await call(app, person, "connect", {"reason": reason})
    ((_, _, sent),) = shown(person)
    assert sent == message
    assert pages == [message]  # what the page shows


async def test_a_very_long_reason_reads_the_same_in_the_client_and_on_the_page(
    app: Server, kit: ConnectKit
) -> None:
    person, pages = reading_the_page(kit)
    await call(app, person, "connect", {"reason": "read " + "x" * 5000})
    ((_, _, sent),) = shown(person)
    assert len(sent) <= 300
    assert sent.startswith("Connect your GitHub account to read xxx")
    assert sent.endswith("…")
    assert pages == [sent]


async def test_a_secret_description_is_cleaned_the_same_for_the_client_and_the_page(
    app: Server, kit: ConnectKit
) -> None:
    described = {"description": "Your\u202e API\nkey\x07"}
    person, pages = reading_the_page(kit)
    await call(app, person, "secret", described)
    ((_, _, sent),) = shown(person)
    assert sent.startswith("Your API key is needed to continue with secret.")
    assert pages == ["Your API key"]


async def test_a_secret_description_with_nothing_printable_is_refused(app: Server) -> None:
    result = await call(app, Script(), "secret", {"description": "\u202e\u200b\x07"})
    assert result.is_error is True
    assert "needs a description" in result.text


async def test_dismissed_then_the_same_state_accepted_reads_as_a_sentence(app: Server) -> None:
    flow = RawCall(app, "connect", {"reason": "x"}, capabilities=URL_CAPS, principal=ALICE)
    ((key, _),) = url_questions(await flow.send()).items()
    state = flow.state
    dismissed = await flow.send({key: {"action": "cancel"}}, state=state)
    assert text(dismissed).startswith("You dismissed the request")
    replayed = await flow.send({key: ACCEPT}, state=state)  # the same state again, now "accept"
    assert replayed["isError"] is True
    assert text(replayed) == (
        "Connecting your GitHub account did not complete: Dismissed in the client. "
        "Run the tool again to retry."
    )


async def test_one_user_replaying_a_state_cannot_hold_without_bound(app: Server, kit: ConnectKit) -> None:
    """Each held retry polls the store five times a second: one user sending the same state many
    times at once gets a bounded number held, the rest answered at once with the same URL."""
    kit.hold = 2.0
    flow = RawCall(app, "connect", {"reason": "x"}, capabilities=URL_CAPS, principal=ALICE)
    ((key, (url, _)),) = url_questions(await flow.send()).items()
    state = flow.state

    async def replay() -> tuple[float, dict[str, Any]]:
        started = time.monotonic()
        result = await RawCall(app, "connect", {"reason": "x"}, capabilities=URL_CAPS, principal=ALICE).send(
            {key: ACCEPT}, state=state
        )
        return time.monotonic() - started, result

    replays = await asyncio.gather(*(replay() for _ in range(14)))
    quick = [result for took, result in replays if took < 1.0]
    assert len(quick) == 14 - 8, [took for took, _ in replays]  # MAX_HOLDS_PER_USER is 8
    for _, result in replays:
        assert url_questions(result) == {"connect-github-1": (url, "Connect your GitHub account to x.")}
    # Another user is not affected by alice's held retries.
    bob = "https://auth.example.com|bob"
    other = RawCall(app, "connect", {"reason": "x"}, capabilities=URL_CAPS, principal=bob)
    ((bob_key, _),) = url_questions(await other.send()).items()
    started = time.monotonic()
    await other.send({bob_key: ACCEPT})
    assert time.monotonic() - started >= 1.8, "bob's retry is held as usual"
