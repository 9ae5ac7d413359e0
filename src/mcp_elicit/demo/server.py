"""The demo issue tracker: a form with every kind of field, a confirmation, and a URL-mode step
that connects the user's account at the demo CI service through the real URL-mode kit.

:func:`build_tracker` makes the :class:`~mcp_elicit.Server`; :mod:`mcp_elicit.demo.site` gives it
its kit (DEMO ONLY identity and sign-in) and the demo CI provider, and serves them on 127.0.0.1
(``python -m mcp_elicit.demo``, which ``mcp-elicit demo`` spawns). Issues live in memory: the
demo keeps nothing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Final

from mcp_elicit import Context, Server
from mcp_elicit.schema import Choices, Description, Email, Title
from mcp_elicit.server.errors import ToolError
from mcp_elicit.state import KeyRing

if TYPE_CHECKING:
    from mcp_elicit.connect.kit import ConnectKit

__all__ = ["CI_PROVIDER", "Confirm", "IssueDetails", "Label", "build_tracker"]

CI_PROVIDER: Final = "ci"
"""The id the demo CI service is registered under (``kit.oauth_provider``)."""
_API_TIMEOUT: Final = 10.0


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


def build_tracker(kit: ConnectKit, builds_url: str) -> Server:
    """The tracker, with ``kit`` for ``ctx.connection`` and the CI service's builds API at
    ``builds_url`` (called with the connection's access token)."""
    app = Server(
        "demo-issue-tracker",
        # The demo keeps nothing between runs: one fresh key per process is exactly right here.
        state_keys=[KeyRing.generate_secret()],
        version="1.0.0",
        title="Demo issue tracker (mcp-elicit)",
        instructions="File issues; the tools ask the user for what they need.",
        connect=kit,
    )
    numbers = itertools.count(101)
    filed: dict[str, int] = {}

    def file(key: str) -> int:
        """Idempotent: the same flow step always gets the same issue number."""
        return filed.setdefault(key, next(numbers))

    @app.tool()
    async def file_issue(title: str, ctx: Context) -> str:
        """File an issue: asks for its details, a confirmation, then connects the demo CI service."""
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
        number = await ctx.once("file", file)
        summary = (
            f"Filed issue #{number}: {title} ({d.severity}; labels: {labels}; {due}; reporter {d.reporter})"
        )
        if not ctx.can_elicit("url"):
            return summary + ". (This client cannot open links, so CI watching was skipped.)"
        try:
            # Sends the user to this server's own /connect page (URL mode) until the account is
            # connected; the token stays in the server's vault and never reaches the client.
            ci = await ctx.connection(CI_PROVIDER, reason="let it watch builds for this issue")
        except ToolError as exc:  # declined, dismissed, expired: the issue is filed all the same
            return f"{summary}. CI service not connected: {exc}"
        return f"{summary}. {await _latest_build(builds_url, ci.access_token)}"

    return app


async def _latest_build(builds_url: str, access_token: str) -> str:
    """What the CI service says about the latest build (the token goes to the CI service only)."""
    import httpx

    try:
        # trust_env=False: the CI service is on 127.0.0.1; no proxy from the environment applies.
        async with httpx.AsyncClient(timeout=_API_TIMEOUT, trust_env=False) as http:
            response = await http.get(builds_url, headers={"Authorization": f"Bearer {access_token}"})
        body: Any = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        body = None
    if not isinstance(body, dict):
        raise ToolError("The CI service is connected but did not answer; try again.")
    account = body.get("account")
    builds = body.get("builds")
    latest = builds[0] if isinstance(builds, list) and builds and isinstance(builds[0], dict) else {}
    number, status = latest.get("id"), latest.get("status")
    # Another service's words, so kept short (the client cleans what it displays).
    who = account[:64] if isinstance(account, str) else "an unnamed account"
    if not isinstance(number, int) or not isinstance(status, str):
        return f"CI service connected as {who}; no builds yet."
    return f"CI service connected as {who}; last build #{number} {status[:32]}."
