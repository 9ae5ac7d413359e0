"""The demo issue tracker: a form with every kind of field, a confirmation, and a URL-mode step.

    python -m mcp_elicit.demo.server            # stdio (what ``mcp-elicit demo`` spawns)

Issues live in memory: the demo keeps nothing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from typing import Annotated

from mcp_elicit import Context, Server
from mcp_elicit.demo.pages import LinkPages
from mcp_elicit.schema import Choices, Description, Email, Title
from mcp_elicit.state import KeyRing

app = Server(
    "demo-issue-tracker",
    # The demo keeps nothing between runs: one fresh key per process is exactly right here.
    state_keys=[KeyRing.generate_secret()],
    version="1.0.0",
    title="Demo issue tracker (mcp-elicit)",
    instructions="File issues; the tools ask the user for what they need.",
)
pages = LinkPages()
_numbers = itertools.count(101)
_filed: dict[str, int] = {}


class Label(StrEnum):
    BUG = "bug"
    UX = "ux"
    DOCS = "docs"
    PERFORMANCE = "performance"


@dataclass
class IssueDetails:
    reporter: Annotated[Email, Title("Your e-mail")]
    severity: Annotated[
        str, Title("Severity"), Choices({"low": "Low", "medium": "Medium", "high": "High: wake someone up"})
    ] = "medium"
    labels: Annotated[list[Label], Title("Labels"), Description("Pick any that apply")] = field(
        default_factory=list
    )
    due: Annotated[date | None, Title("Due date"), Description("YYYY-MM-DD, optional")] = None


@dataclass
class Confirm:
    ok: Annotated[bool, Title("File it?")] = True


def _file(key: str) -> int:
    """Idempotent: the same flow step always gets the same issue number."""
    return _filed.setdefault(key, next(_numbers))


@app.tool()
async def file_issue(title: str, ctx: Context) -> str:
    """File an issue: asks for its details, a confirmation, then offers to connect the CI service."""
    details = await ctx.elicit(f"New issue {title!r}: a few details, please.", IssueDetails)
    if not details.accepted:
        return f"No issue filed ({details.action})."
    d = details.data
    labels = ", ".join(label.value for label in d.labels) or "none"
    due = d.due.isoformat() if d.due else "no due date"
    confirm = await ctx.elicit(
        f"File {title!r} as {d.severity} severity, labels: {labels}, {due}, reported by {d.reporter}?",
        Confirm,
    )
    if not (confirm.accepted and confirm.data.ok):
        return "Not filed."
    number = await ctx.once("file", _file)
    summary = f"Filed issue #{number}: {title} ({d.severity}; labels: {labels}; {due}; reporter {d.reporter})"
    if not ctx.can_elicit("url"):
        return summary + ". (This client cannot open links, so CI watching was skipped.)"
    link = await ctx.once("link", pages.new_link)
    message = "Connect the demo CI service so it can watch builds for this issue."
    for _ in range(3):
        if pages.done(link):
            return summary + ". CI service connected: builds are watched."
        # accept only means "I will open it"; until the page says done, ask again (same URL).
        answer = await ctx.elicit_url(message, pages.url(link))
        if not answer.accepted:
            return summary + f". CI service not connected ({answer.action})."
        message = "The CI service is not connected yet: press Connect on the page, then continue."
    return summary + ". CI service not connected (the page was never completed)."


if __name__ == "__main__":
    app.run_stdio()
