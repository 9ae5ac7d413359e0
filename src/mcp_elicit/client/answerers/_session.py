"""The terminal answerer's screens: a form walk-through with review, and URL consent.

Form::

    header (server, how it was reached) · message · previous errors, if any
    start:   Fill in the form (f) · Decline (d) · Cancel (c)          [Enter = fill in]
    fields:  one at a time, pre-filled with the previous answer or the default
    review:  every value; Send (s) · Change a field (e) · Decline (d) · Cancel (c)
             [Enter = send; "Change" lists the fields, pick one, edit it, back to review]
    The start and review menus ignore keys for a moment after they appear (``consent_delay``),
    like the URL consent: keys typed ahead never start or send a form.

URL::

    header · message · the address (canonical, registrable domain highlighted) · warnings
    refused address: the reasons, the address altered so it is no link → decline
    consent: Open in browser (o) · Decline (d) · Cancel (c)           [Enter = decline]
    warnings: one more confirmation before opening                     [Enter = no]
    after opening (or printing the address when no browser can open here):
             Done — continue (Enter) · Not yet — keep waiting (w) · Cancel (c)

Esc and Ctrl-C cancel the whole question on every screen (``Answer("cancel")``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from mcp_elicit.client.answerers import _view as view
from mcp_elicit.client.answerers._widgets import Cancelled, Option, Terminal, ask_text, choose, choose_many
from mcp_elicit.client.answerers.fields import OMIT, Field, FormNotShown, form_fields, show_value
from mcp_elicit.client.questions import Answer, FormQuestion, ServerIdentity, UrlQuestion
from mcp_elicit.client.text import clean

if TYPE_CHECKING:
    from mcp_elicit.client.urls import OpenResult, UrlAssessment

__all__ = ["Opener", "Session"]

Opener = Callable[["UrlAssessment"], "OpenResult"]

_KEYS_HINT = (
    "Enter confirms each field (pre-filled values are kept) · Esc or Ctrl-C cancels the whole "
    "question · you review everything before it is sent"
)


def _secret_fields(question: FormQuestion) -> dict[str, str]:
    """Fields that seem to ask for a secret (which MCP forbids in forms): name -> what."""
    from mcp_elicit.schema import lint_form

    found: dict[str, str] = {}
    for finding in lint_form(question.message, question.schema).secret_fields:
        found.setdefault(finding.field, finding.category)
    return found


class Session:
    """One terminal (keys in, rich out) on which questions are asked one after another."""

    def __init__(
        self,
        console: Console,
        terminal: Terminal,
        *,
        allow_loopback_http: bool,
        opener: Opener | None,
    ) -> None:
        self.console = console
        self.terminal = terminal
        self.allow_loopback_http = allow_loopback_http
        self.opener = opener

    # -- forms ----------------------------------------------------------------------------------
    async def form(self, question: FormQuestion) -> Answer:
        console = self.console
        view.header(console, question.server, "A question")
        view.message(console, question.message)
        try:
            fields = form_fields(question.schema)
        except FormNotShown as exc:
            return await self._unshowable(question.server, exc)
        secrets = _secret_fields(question)
        if secrets:
            view.secret_warning(console, secrets, fields)
        if question.errors:
            view.form_errors(console, question.errors, fields)
        try:
            return await self._form(question, fields)
        except Cancelled:
            view.note(console, "Cancelled: nothing was sent.", "bold")
            return Answer("cancel")

    async def _form(self, question: FormQuestion, fields: list[Field]) -> Answer:
        console = self.console
        values: dict[str, Any] = {f.key: f.prefill(question.previous) for f in fields}
        errors = question.errors
        if fields:
            view.note(
                console, f"The form has {len(fields)} field{'s' if len(fields) != 1 else ''}. {_KEYS_HINT}"
            )
            # Keys typed before the form was on screen must not start it (nor, through the
            # fields' pre-filled values, send it): the first menu waits like a consent does.
            start = await self._decide(
                question.server,
                [Option("Fill in the form", "f"), Option("Decline — answer no", "d"), Option("Cancel", "c")],
                consent=True,
            )
            if start == 1:
                return self._declined()
            if start == 2:
                raise Cancelled()
            # After a rejected answer, walk only through the fields at fault (the others keep
            # the previous values and can be changed on the review screen).
            at_fault = [f for f in fields if f.key in errors]
            walk = at_fault or fields
            for f in walk:
                values[f.key] = await self._ask(
                    f, fields.index(f) + 1, len(fields), values[f.key], errors.get(f.key)
                )
        else:
            view.note(
                console, "This question has no fields to fill in: it only asks you to accept or decline."
            )
        return await self._review(question, fields, values)  # the review checks everything again

    async def _review(self, question: FormQuestion, fields: list[Field], values: dict[str, Any]) -> Answer:
        from mcp_elicit.schema import AnswerInvalid, SchemaError, validate_answer

        while True:
            content = {key: value for key, value in values.items() if value is not OMIT}
            final: dict[str, Any] | None
            try:
                final = validate_answer(question.schema, content, tolerant=True)
                problems: dict[str, str] = {}
            except AnswerInvalid as exc:
                final, problems = None, exc.errors
            except SchemaError as exc:  # the engine checks schemas first; never send unchecked
                final, problems = None, {"": str(exc)}
            view.review(self.console, fields, values, problems)
            options: list[tuple[str, Option]] = []
            if final is not None:
                options.append(("send", Option("Send this answer" if fields else "Accept", "s")))
            if fields:
                options.append(("edit", Option("Change a field…", "e")))
            options.append(("decline", Option("Decline — answer no", "d")))
            options.append(("cancel", Option("Cancel", "c")))
            # Sending is a consent: an Enter meant for the last field cannot give it.
            picked = await self._decide(question.server, [o for _, o in options], consent=True)
            action = options[picked][0]
            if action == "send":
                assert final is not None
                view.note(self.console, "Sent.", "bold green")
                return Answer("accept", final)
            if action == "decline":
                return self._declined()
            if action == "cancel":
                raise Cancelled()
            choices = [
                Option(f"{i}. {f.label}: {show_value(f, values[f.key])}") for i, f in enumerate(fields, 1)
            ]
            first_bad = next((i for i, f in enumerate(fields) if f.key in problems), 0)
            self.console.print(Text("  Which field?", style="bold"))
            index = await self._menu(choices, default=first_bad, echo=False)
            field = fields[index]
            values[field.key] = await self._ask(
                field, index + 1, len(fields), values[field.key], problems.get(field.key)
            )

    async def _ask(self, field: Field, number: int, total: int, current: Any, error: str | None) -> Any:
        view.field_block(self.console, field, number, total, error)
        kind = field.kind
        value: Any
        if kind in ("string", "number", "integer"):

            def check(text: str) -> str | None:
                problem = field.parse_text(text)[1]
                return clean(problem, single_line=True, max_length=300) if problem else None

            # The checker already refuses control and bidi characters in defaults; clean the
            # pre-filled text anyway, since the input line writes it to the terminal as is.
            prefilled = clean(field.text_of(current), single_line=True)
            text = await ask_text(self.terminal, "  › ", default=prefilled, check=check)
            value = field.parse_text(text)[0]
        elif kind == "boolean":
            options = [Option("Yes", "y"), Option("No", "n")]
            if not field.required and not field.has_default:
                options.append(Option("(leave empty)", "-"))
            if current is True:
                default = 0
            elif current is False or field.required or field.has_default:
                default = 1  # with nothing chosen yet, Enter means "no"
            else:
                default = 2
            picked = await self._menu(options, default=default, echo=False)
            value = OMIT if picked == 2 else picked == 0
        elif kind == "select":
            options = [Option(c.label) for c in field.choices]
            empty = not field.required and not field.has_default
            if empty:
                options.append(Option("(leave empty)", "-"))
            values = [c.value for c in field.choices]
            if isinstance(current, str) and current in values:
                default = values.index(current)
            else:
                default = len(values) if empty else 0
            picked = await self._menu(options, default=default, echo=False)
            value = OMIT if picked >= len(values) else values[picked]
        else:
            value = await self._ask_many(field, current)
        view.echo(self.console, field, value)
        return value

    async def _ask_many(self, field: Field, current: Any) -> Any:
        values = [c.value for c in field.choices]
        chosen = current if isinstance(current, list) else []
        selected = [values.index(v) for v in chosen if v in values]

        def result(indexes: list[int]) -> Any:
            picked = [values[i] for i in indexes]
            if picked or field.check([])[1] is None:
                return picked
            return OMIT  # nothing ticked and [] is not allowed: leave the field out

        def check(indexes: list[int]) -> str | None:
            value = result(indexes)
            # Nothing ticked on a required field: say "select at least 1", not "required".
            problem = field.check([] if value is OMIT and field.required else value)[1]
            return clean(problem, single_line=True, max_length=300) if problem else None

        indexes = await choose_many(
            self.terminal, [Option(c.label) for c in field.choices], selected=selected, check=check
        )
        return result(indexes)

    async def _unshowable(self, server: ServerIdentity, exc: FormNotShown) -> Answer:
        view.note(self.console, "This form cannot be shown; it is not a valid elicitation form:", "bold red")
        for problem in exc.problems:
            view.note(self.console, "• " + problem, "")
        try:
            picked = await self._decide(server, [Option("Decline — answer no", "d"), Option("Cancel", "c")])
        except Cancelled:
            return Answer("cancel")
        return self._declined() if picked == 0 else Answer("cancel")

    # -- URLs -----------------------------------------------------------------------------------
    async def url(self, question: UrlQuestion) -> Answer:
        from mcp_elicit.client.urls import assess_url

        console = self.console
        view.header(console, question.server, "A link")
        view.message(console, question.message)
        assessment = assess_url(question.url, allow_loopback_http=self.allow_loopback_http)
        href = assessment.href
        # Shown and opened must be the same string: a canonical href never needs cleaning.
        if assessment.verdict == "refuse" or not href or clean(href, single_line=True) != href:
            view.url_refused(console, assessment)
            return Answer("decline")
        view.url_block(console, assessment, href, question.server)
        try:
            return await self._url(question.server, assessment, href)
        except Cancelled:
            view.note(console, "Cancelled: the address was not opened by this client.", "bold")
            return Answer("cancel")

    async def _url(self, server: ServerIdentity, assessment: UrlAssessment, href: str) -> Answer:
        console = self.console
        # Enter alone declines: opening takes a deliberate "o".
        picked = await self._decide(
            server,
            [Option("Open in browser", "o"), Option("Decline — do not open", "d"), Option("Cancel", "c")],
            default=1,
            consent=True,
        )
        if picked == 1:
            return self._declined()
        if picked == 2:
            raise Cancelled()
        if assessment.verdict == "warn":
            view.note(console, "This address has the warnings listed above. Open it anyway?", "bold yellow")
            sure = await self._decide(
                server, [Option("Yes, open it", "y"), Option("No — decline", "n")], default=1, consent=True
            )
            if sure == 1:
                return self._declined()
        result = await self._open(assessment)
        if result is None:
            return Answer("cancel")
        while True:
            picked = await self._decide(
                server,
                [Option("Done — continue"), Option("Not yet — keep waiting", "w"), Option("Cancel", "c")],
                consent=True,  # a second Enter typed at "Open" must not say "done" before the browser
            )
            if picked == 0:
                return Answer("accept")
            if picked == 2:
                raise Cancelled()
            view.note(
                console,
                "Waiting. Finish in the browser, then choose “Done — continue”; the server is asked "
                "again only then. The address, if you need it again:",
            )
            console.print(Text(href), soft_wrap=True)

    async def _open(self, assessment: UrlAssessment) -> OpenResult | None:
        """Open the address; ``None`` when it could not be opened nor shown for opening."""
        opener = self.opener
        if opener is None:
            from mcp_elicit.client.urls import open_in_browser

            opener = open_in_browser
        href = assessment.href or ""
        try:
            result = await asyncio.to_thread(opener, assessment)
        except Exception as exc:  # a failed launch is a failure, not a consent
            view.note(self.console, f"The browser could not be started ({type(exc).__name__}).", "bold red")
            return None
        reason = clean(result.reason, single_line=True, max_length=300)
        if result.opened:
            view.note(
                self.console, "Opened in your browser. Finish there, then come back here.", "bold green"
            )
        elif result.print_url:
            view.note(self.console, f"Not opened from here ({reason}). Open this address yourself:", "bold")
            self.console.print(Text(href), soft_wrap=True)
        else:
            view.note(self.console, f"The address could not be opened: {reason}", "bold red")
            return None
        return result

    # -- helpers --------------------------------------------------------------------------------
    async def _decide(
        self, server: ServerIdentity, options: list[Option], *, default: int = 0, consent: bool = False
    ) -> int:
        """A choice that answers the server: who is asking is printed right above it."""
        view.asker(self.console, server)
        return await self._menu(options, default=default, consent=consent)

    async def _menu(
        self, options: list[Option], *, default: int = 0, echo: bool = True, consent: bool = False
    ) -> int:
        picked = await choose(self.terminal, options, default=default, consent=consent)
        if echo:
            self.console.print(Text("  → " + options[picked].label, style="green"))
        return picked

    def _declined(self) -> Answer:
        view.note(self.console, "Declined.", "bold")
        return Answer("decline")
