"""The kit's URL-mode flows driven by clients of either era, in any order: a property test.

Hypothesis writes a script of a few flows (``ctx.secret`` through the ``summarize`` tool,
``ctx.connection("github")`` through ``list_repos``), each for one of two fresh users, and for
each flow what the client answers to the URL question (accept, decline, cancel), what happens on
the kit's page (nothing; the owner saves a secret or connects; another signed-in user tries the
owner's link and is refused; the owner saves twice; the owner declines on the page) and whether
the page step comes before or after the client's answer. The same script then runs in both eras
against one real site (uvicorn on 127.0.0.1, the real pages with planted sessions, SQLite or
PostgreSQL flow store):

* **2026-07-28**: raw ``tools/call`` retries over HTTP with ``inputResponses`` and the sealed
  ``requestState``; the flows' steps interleaved as drawn; stale and replayed states retried, and
  a state presented under another user's token;
* **2025-11-25**: a hand-played session over HTTP (``tests/http_session_support.py``): the bridge's
  URL-mode ``elicitation/create`` (with ``elicitationId``), the answer POSTed, the page step
  before or after it, ``notifications/elicitation/complete``, and a call that would wait for ever
  (accepted, never completed) cancelled by the client with ``notifications/cancelled``.

What is checked, against docs/ask-for-api-key.md, docs/connect-account.md, docs/protocol.md and
docs/threat-model.md: a secret typed on the page (or a connection made) reaches exactly the
handler of the user who started the flow, never another user's; another user's attempt on the
page is refused (403) and changes nothing; a flow completes at most once (a second Save changes
neither the flow nor the vault); declined and dismissed flows end with the documented tool errors;
nothing hangs; no secret or token appears in a URL, a log record, an error message or any MCP
message; and both eras give each script the same outcome. Owner completion of a *connection* is
done at the store level (``kit_support.browser_connects``: what the callback does), since the
test's token endpoint is not a real provider; refusals and declines go through the real pages.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from kit_sites import Site, SiteFactory, Storage, fp
from kit_support import ACCEPT, browser_connects, flow_id_of, offline_login, text_of, unique_name, url_request
from tests.http_session_support import Session, initialize, messages
from tests.strategies import fuzz_settings

from mcp_elicit.connect.flows import FlowNotFound, FlowStateConflict
from mcp_elicit.connect.identity.principal import Principal
from mcp_elicit.connect.pages.cookies import CookiePolicy
from mcp_elicit.connect.pages.csrf import csrf_token
from mcp_elicit.connect.pages.sealing import CookieSealer
from mcp_elicit.connect.pages.session import Session as PagesSession
from mcp_elicit.connect.pages.session import SessionCookies

SCALE = int(os.environ.get("KIT_ANY_CLIENT_SCALE", "1"))
HOLD = 0.2  # seconds a 2026 retry is held while the page step is not done
LEGACY_WAIT = 0.5  # how long a 2025 client waits for a call it will cancel
SECRET = "openai_api_key"
Kind = Literal["secret", "connect"]
Answer = Literal["accept", "decline", "cancel"]
PageStep = Literal[
    "none", "owner", "stranger", "stranger_then_owner", "owner_twice", "owner_declines", "stranger_declines"
]
TOOL: dict[str, str] = {"secret": "summarize", "connect": "list_repos"}
WHAT: dict[str, str] = {
    "secret": f"entering the secret {SECRET!r}",
    "connect": "connecting your GitHub account",
}


# ------------------------------------------------------------------------------ the site


class Records(logging.Handler):
    """Every record of ``mcp_elicit`` (all levels), to look for leaked values."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += " " + repr(record.exc_info[1])
        self.lines.append(f"{record.levelname} {text}")


@pytest.fixture
def records() -> Iterator[Records]:
    handler = Records()
    logger = logging.getLogger("mcp_elicit")
    level = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


@dataclass
class Pages:
    """The real pages of a site, used by browsers whose sessions are planted (the sign-in itself
    is tested elsewhere)."""

    site: Site
    http: httpx.AsyncClient
    cookies: SessionCookies = field(init=False)
    sessions: dict[str, PagesSession] = field(default_factory=dict)

    def __post_init__(self) -> None:
        sealer = CookieSealer(self.site.server.sealer.keys)
        self.cookies = SessionCookies(sealer, CookiePolicy(False), 3600)

    def session(self, user: str) -> PagesSession:
        if user not in self.sessions:
            principal = Principal(self.site.auth.issuer, user)
            self.sessions[user] = self.cookies.new(principal, user.title(), None)
        return self.sessions[user]

    async def post(self, user: str, kind: Kind, flow_id: str, form: dict[str, str]) -> httpx.Response:
        session = self.session(user)
        cookie = self.cookies.set_cookie(session)[1].decode().split(";", 1)[0]
        body = {"csrf": csrf_token(session, kind, flow_id), **form}
        return await self.http.post(
            f"{self.site.base}/{kind}/{flow_id}",
            data=body,
            headers={"cookie": cookie, "origin": self.site.base},
        )


# ------------------------------------------------------------------------------ the scripts


@dataclass(frozen=True)
class FlowScript:
    user: int  # 0 or 1: which of the example's two users starts the flow
    kind: Kind
    answer: Answer
    page: PageStep
    page_first: bool  # the page step happens before the client's answer
    replay: bool  # 2026: retry again with the first round's state afterwards
    second: Answer = "accept"  # 2026: the answer when the URL is asked again (2025 never asks again)
    hijack: bool = False  # 2025: another user first answers the question on the owner's session


flow_scripts = st.builds(
    FlowScript,
    user=st.integers(0, 1),
    kind=st.sampled_from(["secret", "connect"]),
    answer=st.sampled_from(["accept", "accept", "decline", "cancel"]),
    page=st.sampled_from(
        [
            "none",
            "owner",
            "stranger",
            "stranger_then_owner",
            "owner_twice",
            "owner_declines",
            "stranger_declines",
        ]
    ),
    page_first=st.booleans(),
    replay=st.booleans(),
    second=st.sampled_from(["accept", "accept", "decline", "cancel"]),
    hijack=st.booleans(),
)


def distinct(flows: list[FlowScript]) -> bool:
    return len({(f.user, f.kind) for f in flows}) == len(flows)


# At most one flow per (user, kind): a user's second flow for the same secret finishes with the
# first one's value ("done through another link"), whose timing the 2025 era cannot pin down.
scripts = st.lists(flow_scripts, min_size=1, max_size=3).filter(distinct)


@dataclass
class World:
    """What has happened so far to one example's users (the model the eras are checked against)."""

    users: tuple[str, str]
    pages: Pages
    values: dict[tuple[str, Kind], str] = field(default_factory=dict)  # the vault, as typed
    typed: list[str] = field(default_factory=list)  # every secret value / access token made
    typed_by: dict[str, list[str]] = field(default_factory=dict)  # ... by the owner they were for
    status: dict[str, str] = field(default_factory=dict)  # flow id -> the modelled status

    def principal(self, user: str) -> str:
        return self.pages.site.auth.principal(user)

    def fresh_value(self, kind: Kind, owner: str) -> str:
        value = ("sk-" if kind == "secret" else "gho_") + uuid.uuid4().hex
        self.typed.append(value)
        self.typed_by.setdefault(owner, []).append(value)
        return value

    async def save(self, browser: str, owner: str, kind: Kind, flow_id: str) -> None:
        """``browser`` completes ``owner``'s flow: the secret page's Save, or the connection (the
        callback's part at the store level for the owner, the real page for anyone else)."""
        site = self.pages.site
        value = self.fresh_value(kind, owner)
        before = self.status[flow_id]
        if browser != owner:
            form = {"value": value} if kind == "secret" else {"choice": "continue"}
            response = await self.pages.post(browser, kind, flow_id, form)
            assert response.status_code == 403, (response.status_code, response.text[:300])
            assert value not in response.text
            assert "location" not in response.headers
        elif kind == "secret":
            response = await self.pages.post(browser, kind, flow_id, {"value": f"  {value}\t"})
            assert response.status_code < 500, response.text[:300]
            assert value not in response.text
            if before == "pending":
                assert response.status_code == 303, response.text[:300]
                assert response.headers["location"].endswith("/done")
                self.status[flow_id] = "completed"
                self.values[(owner, kind)] = value
            else:
                assert response.status_code != 303, response.text[:300]
        else:
            try:
                await browser_connects(site.flows, site.vault, flow_id, self.principal(owner), value)
            except (FlowStateConflict, FlowNotFound):
                assert before != "pending"
            else:
                assert before == "pending"
                self.status[flow_id] = "completed"
                self.values[(owner, kind)] = value
        await self.check_store(flow_id, owner, kind)

    async def decline_on_page(self, browser: str, owner: str, kind: Kind, flow_id: str) -> None:
        response = await self.pages.post(browser, kind, flow_id, {"choice": "decline"})
        assert response.status_code < 500, response.text[:300]
        if browser != owner:
            assert response.status_code == 403, (response.status_code, response.text[:300])
        elif self.status[flow_id] == "pending":
            assert response.status_code == 200, response.text[:300]
            self.status[flow_id] = "declined"
        await self.check_store(flow_id, owner, kind)

    async def page_step(self, script: FlowScript, owner: str, stranger: str, flow_id: str) -> None:
        steps = {
            "none": [],
            "owner": [owner],
            "stranger": [stranger],
            "stranger_then_owner": [stranger, owner],
            "owner_twice": [owner, owner],
            "owner_declines": [],
            "stranger_declines": [],
        }[script.page]
        for browser in steps:
            await self.save(browser, owner, script.kind, flow_id)
        if script.page in ("owner_declines", "stranger_declines"):
            browser = owner if script.page == "owner_declines" else stranger
            await self.decline_on_page(browser, owner, script.kind, flow_id)

    def client_answered(self, flow_id: str, answer: Answer) -> None:
        """The engine closes an open flow the client declined or dismissed."""
        if answer != "accept" and self.status[flow_id] == "pending":
            self.status[flow_id] = "declined" if answer == "decline" else "failed"

    async def check_store(self, flow_id: str, owner: str, kind: Kind) -> None:
        """The flow record and the vault are exactly what the model says."""
        site = self.pages.site
        flow = await site.flows.get(flow_id)
        assert flow.owner == self.principal(owner)
        assert flow.status == self.status[flow_id], (flow.status, self.status[flow_id])
        for user in self.users:
            if kind == "secret":
                stored = await site.vault.get_secret(self.principal(user), SECRET)
                found = None if stored is None else stored.value
            else:
                connection = await site.vault.get_connection(self.principal(user), "github")
                found = None if connection is None else connection.access_token
            if user == owner:  # only this flow writes this entry
                assert found == self.values.get((user, kind))
            else:  # another user's, written by their own flow (perhaps right now): never ours
                assert found is None or found in self.typed_by[user], found

    def expected(self, script: FlowScript, owner: str, flow_id: str) -> tuple[str, str | None]:
        """(outcome, value) of the call once the client answered, as the docs say: the client's
        decline or dismissal ends the call; then a decline on the page; then the user's stored
        value finishes it; else it waits for the browser."""
        if script.answer == "decline":
            return "declined", None
        if script.answer == "cancel":
            return "dismissed", None
        if self.status[flow_id] == "declined":
            return "declined", None
        value = self.values.get((owner, script.kind))
        if value is not None:
            return "complete", value
        return "waiting", None


def outcome_of(result: dict[str, Any], kind: Kind) -> tuple[str, str | None]:
    """(outcome, fingerprint) of a final 2026-shaped or 2025-shaped tool result."""
    text = "".join(block.get("text", "") for block in result.get("content", []))
    if result.get("isError"):
        what = WHAT[kind]
        if text in (f"You declined {what}.", f"{what[0].upper()}{what[1:]} was declined in the client."):
            return "declined", None
        if (
            text
            == f"You dismissed the request for {WHAT[kind]}. Run the tool again when you want to continue."
        ):
            return "dismissed", None
        raise AssertionError(f"an undocumented tool error: {text!r}")
    if kind == "secret":
        assert text.startswith("summary of 5 characters with key "), text
        return "complete", text.rsplit(" ", 1)[1]
    return "complete", result["structuredContent"]["token_fingerprint"]


def no_leak(world: World, *texts: str) -> None:
    for text in texts:
        for value in world.typed:
            assert value not in text, f"a secret value travelled: {text[:400]}"


def expect(outcome: tuple[str, str | None], wanted: tuple[str, str | None]) -> None:
    kind, value = wanted
    assert outcome == (kind, None if value is None else fp(value)), (outcome, wanted)


# ------------------------------------------------------------------------------ 2026-07-28


async def run_modern(world: World, script: list[FlowScript], order: list[int], site: Site) -> list[str]:
    """The script as 2026-07-28 clients play it: first rounds for every flow, then each flow's
    page step and answer in the drawn interleaving. The outcome of each flow."""
    http = world.pages.http
    users = world.users
    callers = [site.caller(http, user) for user in users]
    firsts: list[dict[str, Any]] = []
    for flow in script:
        first = await callers[flow.user].call(
            TOOL[flow.kind], {"text": "hello"} if flow.kind == "secret" else {}
        )
        _, url, _ = url_request(first)
        assert url.startswith(f"{site.base}/{flow.kind}/")
        no_leak(world, json.dumps(first))
        firsts.append(first)
        world.status[flow_id_of(url)] = "pending"
    outcomes: list[str] = ["" for _ in script]
    steps = {
        i: ["page", "answer"] if flow.page_first else ["answer", "page"] for i, flow in enumerate(script)
    }
    last: dict[int, dict[str, Any]] = {}
    for i in order:
        step = steps[i].pop(0)
        flow = script[i]
        owner, stranger = users[flow.user], users[1 - flow.user]
        key, url, _ = url_request(firsts[i])
        flow_id = flow_id_of(url)
        caller = callers[flow.user]
        arguments = {"text": "hello"} if flow.kind == "secret" else {}
        if step == "page":
            await world.page_step(flow, owner, stranger, flow_id)
            if i in last:  # answered earlier and still waiting: the client retries again
                await finish_modern(world, flow, i, caller, arguments, last, outcomes, owner, flow_id)
            continue
        wanted = world.expected(flow, owner, flow_id)
        result = await caller.call(
            TOOL[flow.kind],
            arguments,
            state=firsts[i]["requestState"],
            responses={key: {"action": flow.answer}},
        )
        world.client_answered(flow_id, flow.answer)
        no_leak(world, json.dumps(result))
        await world.check_store(flow_id, owner, flow.kind)
        if wanted[0] == "waiting":
            _, again_url, _ = url_request(result)
            assert again_url == url  # the same URL, asked again
            last[i] = result
            outcomes[i] = "waiting"
            if not steps[i]:
                outcomes[i] = "abandoned"  # the client gives up: nothing to cancel on 2026
            continue
        assert result["resultType"] == "complete", result
        expect(outcome_of(result, flow.kind), wanted)
        outcomes[i] = wanted[0]
    # Replays: the first round's state again, and that state under the other user's token.
    for i, flow in enumerate(script):
        if not flow.replay:
            continue
        key, url, _ = url_request(firsts[i])
        owner = users[flow.user]
        arguments = {"text": "hello"} if flow.kind == "secret" else {}
        replayed = await callers[flow.user].rpc(
            TOOL[flow.kind],
            arguments,
            state=firsts[i]["requestState"],
            responses={key: {"action": flow.answer}},
        )
        no_leak(world, json.dumps(replayed))
        result = replayed["result"]
        what = WHAT[flow.kind]
        stale_dismissal = (
            f"{what[:1].upper()}{what[1:]} did not complete: Dismissed in the client. "
            "Run the tool again to retry."
        )
        if result["resultType"] == "input_required":
            assert url_request(result)[1] == url
        elif result.get("isError") and text_of(result) == stale_dismissal:
            # A stale state replayed after the client dismissed the re-asked URL: the flow is
            # "failed" in the store, and reads as such (see the report: not "You dismissed ...").
            assert world.status[flow_id_of(url)] == "failed"
        else:
            got = outcome_of(result, flow.kind)
            if got[0] == "complete":  # only ever the owner's own value
                assert got[1] == fp(world.values[(owner, flow.kind)]), got
        stolen = await callers[1 - flow.user].rpc(
            TOOL[flow.kind], arguments, state=firsts[i]["requestState"], responses={key: ACCEPT}
        )
        no_leak(world, json.dumps(stolen))
        assert stolen["error"]["code"] == -32602, stolen
        assert stolen["error"]["message"] == "Invalid or expired requestState"
    return outcomes


async def finish_modern(
    world: World,
    flow: FlowScript,
    i: int,
    caller: Any,
    arguments: dict[str, Any],
    last: dict[int, dict[str, Any]],
    outcomes: list[str],
    owner: str,
    flow_id: str,
) -> None:
    """A waiting flow's client retries once more (accepting again) after the page step."""
    previous = last.pop(i)
    key, url, _ = url_request(previous)
    again = FlowScript(flow.user, flow.kind, flow.second, flow.page, flow.page_first, flow.replay)
    wanted = world.expected(again, owner, flow_id)
    result = await caller.call(
        TOOL[flow.kind], arguments, state=previous["requestState"], responses={key: {"action": flow.second}}
    )
    world.client_answered(flow_id, flow.second)
    no_leak(world, json.dumps(result))
    await world.check_store(flow_id, owner, flow.kind)
    if flow.second != "accept":
        expect(outcome_of(result, flow.kind), wanted)
        outcomes[i] = "second " + wanted[0]  # no 2025 counterpart: the URL is not asked again there
        return
    if wanted[0] == "waiting":
        assert url_request(result)[1] == url
        outcomes[i] = "abandoned"
        return
    assert result["resultType"] == "complete", result
    expect(outcome_of(result, flow.kind), wanted)
    outcomes[i] = wanted[0]


# ------------------------------------------------------------------------------ 2025-11-25


async def run_legacy_flow(world: World, flow: FlowScript, site: Site) -> str:
    """One flow as a 2025-11-25 client plays it over HTTP: the call's stream read to its end,
    the URL question answered, the page step before or after the answer; a call that can only
    wait is cancelled by the client. The outcome."""
    users = world.users
    owner, stranger = users[flow.user], users[1 - flow.user]
    http = world.pages.http
    session = Session(http, site.mcp_url, token=site.token(owner))
    await session.open(initialize(capabilities={"elicitation": {"form": {}, "url": {}}}))
    arguments = {"text": "hello"} if flow.kind == "secret" else {}
    call = session.request("tools/call", {"name": TOOL[flow.kind], "arguments": arguments})
    seen: list[dict[str, Any]] = []
    final: dict[str, Any] | None = None
    elicitation_id: str | None = None
    flow_id = ""
    cancelled = False
    wanted: tuple[str, str | None] = ("", None)

    async def read() -> None:
        nonlocal final, elicitation_id, flow_id, cancelled, wanted
        async with session.stream(call) as response:
            assert response.status_code == 200, await response.aread()
            async for message in messages(response):
                seen.append(message)
                if message.get("method") == "elicitation/create":
                    params = message["params"]
                    assert params["mode"] == "url", params
                    assert elicitation_id is None, "the URL was asked twice in one call"
                    elicitation_id = params["elicitationId"]
                    flow_id = flow_id_of(params["url"])
                    assert params["url"] == f"{site.base}/{flow.kind}/{flow_id}"
                    world.status[flow_id] = "pending"
                    if flow.page_first:
                        await world.page_step(flow, owner, stranger, flow_id)
                    wanted = world.expected(flow, owner, flow_id)
                    if flow.hijack:
                        # The other user's token on the owner's session id: an unknown session.
                        thief = Session(http, site.mcp_url, token=site.token(stranger))
                        thief.id, thief.version = session.id, session.version
                        forged = {"jsonrpc": "2.0", "id": message["id"], "result": {"action": "accept"}}
                        refused = await thief.post(forged, expect=404)
                        assert refused.json()["error"]["code"] == -32600
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"action": flow.answer}}
                    await session.post(reply, expect=202)
                    world.client_answered(flow_id, flow.answer)
                    if not flow.page_first and flow.answer == "accept":
                        await world.page_step(flow, owner, stranger, flow_id)
                        wanted = world.expected(flow, owner, flow_id)
                    if wanted[0] == "waiting":
                        # Nothing will complete it: the client cancels the call after a while.
                        await asyncio.sleep(LEGACY_WAIT)
                        cancelled = True
                        note = {
                            "jsonrpc": "2.0",
                            "method": "notifications/cancelled",
                            "params": {"requestId": call["id"], "reason": "the user gave up"},
                        }
                        await session.post(note, expect=202)
                elif message.get("id") == call["id"] and "method" not in message:
                    final = message

    await asyncio.wait_for(read(), 20)  # nothing hangs: the stream ends, whatever happened
    assert elicitation_id is not None, seen
    if not flow.page_first and flow.answer != "accept":
        # After a decline or dismissal the page step comes once the call has ended (the engine
        # closes the flow when it reads the answer, after the 202).
        await world.page_step(flow, owner, stranger, flow_id)
    no_leak(world, json.dumps(seen))
    await world.check_store(flow_id, owner, flow.kind)
    completes = [m for m in seen if m.get("method") == "notifications/elicitation/complete"]
    if cancelled:
        assert final is None, final  # no response for a cancelled call
        return "abandoned"
    assert final is not None, seen
    result = final["result"]
    expect(outcome_of(result, flow.kind), wanted)
    if wanted[0] == "complete" and flow.answer == "accept":
        assert [m["params"] for m in completes] == [{"elicitationId": elicitation_id}]
        assert seen.index(completes[0]) < seen.index(final)
    else:
        assert completes == [], completes  # a step that did not complete is never said complete
    return wanted[0]


async def run_legacy(world: World, script: list[FlowScript], site: Site) -> list[str]:
    # Several calls at once, one per (user, kind): they share nothing but the site.
    return list(await asyncio.gather(*(run_legacy_flow(world, flow, site) for flow in script)))


# ------------------------------------------------------------------------------ the property


@st.composite
def interleavings(draw: st.DrawFn, script: list[FlowScript]) -> list[int]:
    """An order of the flows' two steps each (a flow's own steps stay in its order)."""
    left = {i: 2 for i in range(len(script))}
    order: list[int] = []
    while left:
        i = draw(st.sampled_from(sorted(left)))
        order.append(i)
        left[i] -= 1
        if not left[i]:
            del left[i]
    return order


@pytest.fixture
async def http_client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30, follow_redirects=False) as client:
        yield client


async def check_any_client(
    site: Site, http: httpx.AsyncClient, records: Records, data: st.DataObject
) -> None:
    script = data.draw(scripts, label="script")
    order = data.draw(interleavings(script), label="order")
    for flow in script:
        event(f"{flow.kind} {flow.answer} {flow.page} {'page first' if flow.page_first else 'answer first'}")
    pages = Pages(site, http)
    modern = World((unique_name("alice-"), unique_name("bob-")), pages)
    modern_outcomes = await run_modern(modern, script, order, site)
    legacy = World((unique_name("alice-"), unique_name("bob-")), pages)
    legacy_outcomes = await run_legacy(legacy, script, site)
    for outcome in legacy_outcomes:
        event(f"outcome {outcome}")
    # The eras agree: same outcome for each flow of the script (a 2026 client that never saw the
    # page step gives up with an input-required in hand; the 2025 client cancels the call).
    comparable = [
        legacy if modern.startswith("second ") else modern
        for modern, legacy in zip(modern_outcomes, legacy_outcomes, strict=True)
    ]
    assert comparable == legacy_outcomes, (script, modern_outcomes, legacy_outcomes)
    log = "\n".join(records.lines)
    no_leak(modern, log)
    no_leak(legacy, log)
    # Another user on the owner's page is refused and logged with both principals.
    for world in (modern, legacy):
        for flow in script:
            if flow.page in ("stranger", "stranger_then_owner", "stranger_declines"):
                owner, stranger = world.users[flow.user], world.users[1 - flow.user]
                assert any(
                    "SECURITY" in line
                    and world.principal(owner) in line
                    and world.principal(stranger) in line
                    for line in records.lines
                ), "no SECURITY line for another user's attempt"


@fuzz_settings(6 * SCALE)
@given(data=st.data())
async def test_any_client_on_sqlite(
    make_site: SiteFactory, http_client: httpx.AsyncClient, records: Records, data: st.DataObject
) -> None:
    site = await _site(make_site, None)
    await check_any_client(site, http_client, records, data)


@fuzz_settings(2 * SCALE)
@given(data=st.data())
async def test_any_client_on_postgres(
    make_site: SiteFactory,
    pg_storage: Storage,
    http_client: httpx.AsyncClient,
    records: Records,
    data: st.DataObject,
) -> None:
    site = await _site(make_site, pg_storage)
    await check_any_client(site, http_client, records, data)


_sites: dict[SiteFactory, Site] = {}


async def _site(make_site: SiteFactory, storage: Storage | None) -> Site:
    """One site per test function (the factory is function-scoped: hypothesis reuses it across
    examples, and every example has users of its own)."""
    if make_site not in _sites:
        _sites.clear()
        _sites[make_site] = await make_site(
            hold=HOLD, storage=storage, login=offline_login(), page_rate_limit=None
        )
    return _sites[make_site]
