"""A small ticket server built on mcp-elicit, run as a real subprocess by the interop tests.

    python tests/interop/tickets_server.py --stdio          # one JSON-RPC message per line
    python tests/interop/tickets_server.py --port 8123      # Streamable HTTP at http://127.0.0.1:8123/mcp

Every tool returns plain text that encodes exactly what the server received (the typed answer,
the action, the round number), so a client-side test can assert the server's view of the flow.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import itertools
import json
from dataclasses import dataclass
from typing import Annotated, Literal

import annotated_types as at

from mcp_elicit import Context, Server
from mcp_elicit.schema import Choices, Description, Email, Title

app = Server("interop-tickets", version="1.2.3", instructions="Ticket fixtures for SDK interop tests.")

# How often each ctx.once step really ran, per ticket title (process-wide, for the test of `once`).
_ALLOCATIONS: dict[str, int] = {}
_TICKET_NUMBERS = itertools.count(1001)
# What happened to each slow_export call (started, then cancelled or finished).
_EXPORTS: dict[str, list[str]] = {}


@dataclass
class Priority:
    priority: Literal["low", "normal", "high"]
    notify: bool = False


@dataclass
class Assignee:
    assignee: str


@dataclass
class DueDays:
    days: int


@dataclass
class Confirm:
    ok: bool


@dataclass
class Escalation:
    """One field of each of the eight kinds of the 2026-07-28 form schema subset."""

    reporter: Annotated[Email, Title("Reporter"), Description("Your e-mail address")]
    severity: Annotated[int, at.Ge(1), at.Le(5)]
    due: dt.date
    team: Annotated[str, Choices({"net": "Network", "db": "Database"})]
    channels: list[Literal["email", "chat", "pager"]]
    watchers: Annotated[list[str], Choices({"ada": "Ada", "bob": "Bob"})]
    size: Annotated[str, Choices({"s": "Small", "l": "Large"}, legacy=True)]
    budget: float = 0.5
    public: bool = False


@app.tool()
async def create_ticket(title: str, ctx: Context) -> str:
    """Creates a ticket after asking for its priority (one round)."""
    answer = await ctx.elicit(f"Priority for {title!r}?", Priority, key="priority")
    if not answer.accepted:
        return f"not created: {answer.action} (round {ctx.round})"
    data = answer.data
    return f"created {title!r} priority={data.priority} notify={data.notify} (round {ctx.round})"


@app.tool()
async def plan_ticket(title: str, ctx: Context) -> str:
    """Asks who takes the ticket, then (knowing that) when it is due: two rounds."""
    who = await ctx.elicit(f"Who should take {title!r}?", Assignee, key="assignee")
    name = who.data.assignee if who.accepted else "nobody"
    due = await ctx.elicit(f"In how many days should {name} finish {title!r}?", DueDays, key="due")
    days = due.data.days if due.accepted else -1
    return f"{title!r}: {name} in {days} days (round {ctx.round})"


@app.tool()
async def triage_ticket(title: str, ctx: Context) -> str:
    """Asks for an assignee and a due date at the same time: both in one round."""
    who, due = await asyncio.gather(
        ctx.elicit(f"Assignee for {title!r}?", Assignee, key="assignee"),
        ctx.elicit(f"Days until {title!r} is due?", DueDays, key="due"),
    )
    return f"{title!r}: {who.data.assignee} in {due.data.days} days (round {ctx.round})"


@app.tool()
async def open_numbered_ticket(title: str, ctx: Context) -> str:
    """Allocates a ticket number once (ctx.once, round 0), confirms, and returns the number."""

    def allocate() -> str:
        _ALLOCATIONS[title] = _ALLOCATIONS.get(title, 0) + 1
        return f"T-{next(_TICKET_NUMBERS)}"

    number = await ctx.once("allocate", allocate)
    confirm = await ctx.elicit(f"Open {number} for {title!r}?", Confirm, key="confirm")
    opened = confirm.accepted and confirm.data.ok
    return f"{number} opened={opened} allocations={_ALLOCATIONS.get(title, 0)} (round {ctx.round})"


@app.tool()
async def suggest_title(draft: str, ctx: Context) -> str:
    """Asks the client's model for a better title and checks the client's roots (one round)."""
    reply, roots = await asyncio.gather(
        ctx.sample(f"Suggest a short ticket title for: {draft}", max_tokens=40, key="model"),
        ctx.list_roots(key="roots"),
    )
    listed = ",".join(root.uri for root in roots)
    return f"title={reply.text!r} roots={listed} (round {ctx.round})"


@app.tool()
async def escalate_ticket(title: str, ctx: Context) -> str:
    """Asks for an escalation with a form that uses every field kind; echoes the typed answer."""
    answer = await ctx.elicit(f"Escalate {title!r}", Escalation, key="escalation")
    if not answer.accepted:
        return f"not escalated: {answer.action}"
    e = answer.data
    return (
        f"reporter={e.reporter} severity={e.severity!r} due={e.due!r} team={e.team} "
        f"channels={e.channels} watchers={e.watchers} size={e.size} budget={e.budget!r} "
        f"public={e.public} (round {ctx.round})"
    )


@app.tool()
async def connect_tracker(ctx: Context) -> str:
    """Sends the person to the tracker's consent page (URL-mode elicitation)."""
    answer = await ctx.elicit_url(
        "Connect your issue tracker account.", "https://tracker.example.com/connect", key="tracker"
    )
    return f"tracker consent: {answer.action} (round {ctx.round})"


@app.tool()
async def import_tickets(count: int, ctx: Context) -> str:
    """Reports progress, asks to confirm, then reports progress while importing."""
    await ctx.report_progress(0, count, "checking")
    confirm = await ctx.elicit(f"Import {count} tickets?", Confirm, key="confirm")
    if not (confirm.accepted and confirm.data.ok):
        return f"import stopped (round {ctx.round})"
    for done in range(1, count + 1):
        await ctx.report_progress(done, count, f"imported {done}")
    return f"imported {count} (round {ctx.round})"


@app.tool()
async def slow_export(label: str, seconds: float) -> str:
    """Takes ``seconds`` to finish; records under ``label`` whether it finished or was cancelled."""
    events = _EXPORTS.setdefault(label, [])
    events.append("started")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        events.append("cancelled")
        raise
    events.append("finished")
    return f"exported {label}"


@app.tool()
async def export_log(label: str) -> str:
    """What happened to the slow exports recorded under ``label``, in order."""
    return ",".join(_EXPORTS.get(label, []))


@app.tool()
async def audit_ticket(title: str, ctx: Context) -> str:
    """Logs at debug, info and warning around one question (the client's log level decides which
    reach it)."""
    await ctx.log("debug", f"auditing {title!r}", logger_name="audit")
    confirm = await ctx.elicit(f"Audit {title!r}?", Confirm, key="audit")
    await ctx.log("info", {"title": title, "confirmed": confirm.accepted}, logger_name="audit")
    await ctx.log("warning", f"{title!r} audited", logger_name="audit")
    return f"audited {title!r} (round {ctx.round})"


@app.tool()
async def client_capabilities(ctx: Context) -> str:
    """Returns the clientCapabilities the request declared, as JSON (never elicits)."""
    return json.dumps(ctx.meta.capabilities.raw, sort_keys=True)


@app.prompt()
async def ticket_brief(topic: str, ctx: Context) -> str:
    """A prompt that asks who the brief is for before it is rendered."""
    who = await ctx.elicit(f"Who is the brief about {topic!r} for?", Assignee, key="audience")
    audience = who.data.assignee if who.accepted else "everyone"
    return f"Write a ticket brief about {topic} for {audience}."


@app.resource("tickets://{ticket_id}", mime_type="application/json")
async def ticket(ticket_id: str, ctx: Context) -> dict[str, str]:
    """A ticket that is only shown after the person confirms."""
    confirm = await ctx.elicit(f"Show ticket {ticket_id}?", Confirm, key="show")
    shown = confirm.accepted and confirm.data.ok
    return {"id": ticket_id, "shown": "yes" if shown else "no"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--stdio", action="store_true", help="serve stdio")
    group.add_argument("--port", type=int, help="serve Streamable HTTP on 127.0.0.1:PORT")
    args = parser.parse_args()
    if args.stdio:
        app.run_stdio()
    else:
        app.run_http(host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
