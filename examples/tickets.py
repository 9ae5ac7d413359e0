"""An issue tracker whose tools ask the person for what they need, in the middle of their body.

    pip install mcp-elicit                     # the core: enough for stdio
    python examples/tickets.py                 # stdio (what an MCP client spawns)

    pip install 'mcp-elicit[http]'
    python examples/tickets.py --http          # Streamable HTTP on http://127.0.0.1:8765/mcp

``create_ticket`` asks for details with a form (enum, date, multi-select, email), asks for
confirmation, and inserts the ticket exactly once per flow however many rounds the
conversation takes. For URL mode (secrets, third-party accounts) see the URL-mode kit:
``mcp-elicit demo`` and ``docs/connect-account.md``.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

from mcp_elicit import Context, Description, Email, Server, Title

app = Server(
    "tickets",
    version="1.0.0",
    title="Ticket tracker (mcp-elicit example)",
    instructions="Create and look up tickets. Tools ask the user for details when they need them.",
)


class Team(StrEnum):
    PLATFORM = "platform"
    BILLING = "billing"
    SUPPORT = "support"


# kw_only: the form lists the fields in this order, the required one last.
@dataclass(kw_only=True)
class Details:
    priority: Literal["low", "normal", "high"] = "normal"
    due: Annotated[date | None, Description("When it must be done (optional)")] = None
    watchers: Annotated[list[Team], Description("Teams to notify")] = field(default_factory=list)
    reporter: Annotated[Email, Title("Your e-mail")]


@dataclass
class Confirm:
    ok: Annotated[bool, Title("Create the ticket?")]


DB = Path(tempfile.gettempdir()) / "mcp-elicit-tickets.db"


def _db() -> sqlite3.Connection:
    conn = sqlite3.connect(DB)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS tickets (id INTEGER PRIMARY KEY, idem TEXT UNIQUE, title TEXT, "
        "priority TEXT, due TEXT, watchers TEXT, reporter TEXT)"
    )
    return conn


def insert_ticket(idempotency_key: str, title: str, details: Details) -> str:
    """Insert once: a retried step with the same key finds the row it wrote before."""
    with _db() as conn:
        conn.execute(
            "INSERT OR IGNORE INTO tickets (idem, title, priority, due, watchers, reporter) "
            "VALUES (?,?,?,?,?,?)",
            (
                idempotency_key,
                title,
                details.priority,
                details.due.isoformat() if details.due else None,
                ",".join(t.value for t in details.watchers),
                details.reporter,
            ),
        )
        (ticket_id,) = conn.execute("SELECT id FROM tickets WHERE idem = ?", (idempotency_key,)).fetchone()
    return f"TCK-{ticket_id}"


@app.tool()
async def create_ticket(title: str, ctx: Context) -> str:
    """Create a ticket; asks the user for its details and a confirmation."""
    details = await ctx.elicit(f"Details for the ticket {title!r}", Details)
    if not details.accepted:
        return f"No ticket created ({details.action})."
    d = details.data
    due = d.due.isoformat() if d.due else "no due date"
    watchers = ", ".join(t.value for t in d.watchers) or "nobody"
    confirm = await ctx.elicit(f"Create {title!r}: {d.priority} priority, {due}, notify {watchers}?", Confirm)
    if not (confirm.accepted and confirm.data.ok):
        return "Cancelled: no ticket created."
    ticket = await ctx.once("insert", lambda key: insert_ticket(key, title, d))
    return f"Created {ticket}: {title} ({d.priority}, {due}, watchers: {watchers}, reporter: {d.reporter})"


@app.resource("tickets://{ticket_id}", mime_type="application/json")
async def ticket(ticket_id: str) -> dict[str, str | None]:
    """One ticket by id (TCK-n)."""
    number = ticket_id.removeprefix("TCK-")
    with _db() as conn:
        row = conn.execute(
            "SELECT title, priority, due, watchers, reporter FROM tickets WHERE id = ?", (number,)
        ).fetchone()
    if row is None:
        return {"error": f"no ticket {ticket_id}"}
    return dict(zip(("title", "priority", "due", "watchers", "reporter"), row, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description="The mcp-elicit ticket tracker example.")
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    if not args.http:
        app.run_stdio()
        return
    url = f"http://127.0.0.1:{args.port}/mcp"
    print(f"tickets: serving MCP 2026-07-28 (Streamable HTTP) at {url}", file=sys.stderr)
    for tool in app.describe_tools():
        print(f"  tool {tool['name']}: {tool.get('description', '')}", file=sys.stderr)
    app.run_http(host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
