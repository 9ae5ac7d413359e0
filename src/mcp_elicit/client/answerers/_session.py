"""The terminal answerer's screens: a form walk-through with review, and URL consent.

Form::

    header (server, how it was reached) · message · previous errors, if any
    start:   Fill in the form (f) · Decline (d) · Cancel (c)          [Enter = fill in]
    fields:  one at a time, pre-filled with the previous answer or the default; a yes/no
             is one key (y/n, Enter takes the marked default)
    review:  every value; Send (s) · Change a field (e) · Decline (d) · Cancel (c)
             [Enter = send; "Change" lists the fields, pick one, edit it, back to review]
    The start and review menus ignore keys for a moment after they appear (``consent_delay``),
    like the URL consent: keys typed ahead never start or send a form.

A form of one yes/no field is a confirmation: one key answers it and sends the answer
(Yes (y) · No (n) · Decline (d) · Cancel (c)), with the same consent delay.

URL::

    header · message · the address (canonical, registrable domain highlighted) · warnings
    refused address: the reasons, the address altered so it is no link → decline
    consent: Open in browser (o) · Decline (d) · Cancel (c)           [Enter = decline]
    warnings: one more confirmation before opening                     [Enter = no]
    after opening (or printing the address when no browser can open here):
             Done — continue (Enter) · Not yet — keep waiting (w) · Cancel (c)

Esc and Ctrl-C cancel the whole question on every screen (``Answer("cancel")``). The last
line says what goes back to the server: the answer, the decline, or the cancel.

The header names the server (self-reported name, and how this client reached it) once per
session, and again only when another server asks. Its identity must still be in sight when the
person decides, however much the server wrote: a choice that answers the server shows who is
asking over its options whenever the header has scrolled off the screen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from mcp_elicit.client.answerers import _view as view
from mcp_elicit.client.answerers._widgets import (
    Cancelled,
    Option,
    Terminal,
    ask_text,
    ask_yes_no,
    choose,
    choose_many,
)
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
# What the last line says went back to the server.
_SENT = "Sent: the server gets this answer."
_DECLINED = "Declined: the server is told that you said no"
_CANCELLED = "Cancelled: the server is told that you cancelled"
_NOTHING_SENT = "none of the form's values are sent"


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
        self.out = view.Out(console)
        self.terminal = terminal
        self.allow_loopback_http = allow_loopback_http
        self.opener = opener
        self._named: ServerIdentity | None = None  # the server the last header named
        self._named_at = 0  # the line that header started on (``out.lines``)

    def _header(self, server: ServerIdentity, what: str) -> None:
        seen = server == self._named
        if not seen:
            self._named_at = self.out.lines
        view.header(self.out, server, what, seen=seen, again=self._named is not None)
        self._named = server

    def _asker(self, server: ServerIdentity, rows: int) -> str | None:
        """Who is asking, for a widget ``rows`` lines high about to answer ``server``: ``None``
        while the header naming it is still on screen above the widget."""
        height = self.terminal.output.get_size().rows
        if server == self._named and self.out.lines - self._named_at + rows <= height:
            return None
        return view.asker(server)

    # -- forms ----------------------------------------------------------------------------------
    async def form(self, question: FormQuestion) -> Answer:
        out = self.out
        self._header(question.server, "A question")
        view.message(out, question.message)
        try:
            fields = form_fields(question.schema)
        except FormNotShown as exc:
            return await self._unshowable(question.server, exc)
        secrets = _secret_fields(question)
        if secrets:
            view.secret_warning(out, secrets, fields)
        if question.errors:
            view.form_errors(out, question.errors, fields)
        try:
            if len(fields) == 1 and fields[0].kind == "boolean":
                return await self._confirm(question, fields[0])
            return await self._form(question, fields)
        except Cancelled:
            view.note(out, f"{_CANCELLED}; {_NOTHING_SENT}.", "bold")
            return Answer("cancel")

    async def _form(self, question: FormQuestion, fields: list[Field]) -> Answer:
        out = self.out
        values: dict[str, Any] = {f.key: f.prefill(question.previous) for f in fields}
        errors = question.errors
        if fields:
            view.note(out, f"The form has {len(fields)} field{'s' if len(fields) != 1 else ''}. {_KEYS_HINT}")
            # Keys typed before the form was on screen must not start it (nor, through the
            # fields' pre-filled values, send it): the first menu waits like a consent does.
            start = await self._decide(
                question.server,
                [Option("Fill in the form", "f"), Option("Decline — answer no", "d"), Option("Cancel", "c")],
                consent=True,
            )
            if start == 1:
                return self._declined(_NOTHING_SENT)
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
            view.note(out, "This question has no fields to fill in: it only asks you to accept or decline.")
        return await self._review(question, fields, values)  # the review checks everything again

    async def _confirm(self, question: FormQuestion, field: Field) -> Answer:
        """A form of one yes/no field: one key answers it (no start menu, no field walk), then
        the review, where the person sees the answer and can change it before it is sent (the
        spec: a form answer is reviewed, and can be modified, before it goes out)."""
        out = self.out
        view.note(
            out,
            "One yes-or-no question: press y or n, then send your answer from the review "
            "(d declines it, c or Esc cancels).",
        )
        view.field_block(out, field, 1, 1, question.errors.get(field.key))
        current = field.prefill(question.previous)
        others = [Option("Decline — answer nothing", "d"), Option("Cancel", "c")]
        # Keys typed before the question was on screen cannot answer it.
        got = await ask_yes_no(
            self.terminal,
            default=current if isinstance(current, bool) else None,
            empty=not field.required and not field.has_default,
            others=others,
            consent=True,
            above=self._asker(question.server, 4),
        )
        if got.other == 0:
            self._echo(others[0].label)
            return self._declined(_NOTHING_SENT)
        if got.other == 1:
            self._echo(others[1].label)
            raise Cancelled()
        value = OMIT if got.value is None else got.value
        view.echo(out, field, value)
        return await self._review(question, [field], {field.key: value})

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
            view.review(self.out, fields, values, problems)
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
                view.note(self.out, _SENT, "bold green")
                return Answer("accept", final)
            if action == "decline":
                return self._declined(_NOTHING_SENT)
            if action == "cancel":
                raise Cancelled()
            choices = [
                Option(f"{i}. {f.label}: {show_value(f, values[f.key])}") for i, f in enumerate(fields, 1)
            ]
            first_bad = next((i for i, f in enumerate(fields) if f.key in problems), 0)
            self.out.print(Text("  Which field?", style="bold"))
            index = await self._menu(choices, default=first_bad, echo=False)
            field = fields[index]
            values[field.key] = await self._ask(
                field, index + 1, len(fields), values[field.key], problems.get(field.key)
            )

    async def _ask(self, field: Field, number: int, total: int, current: Any, error: str | None) -> Any:
        view.field_block(self.out, field, number, total, error)
        kind = field.kind
        value: Any
        if kind in ("string", "number", "integer"):
            # The checker already refuses control and bidi characters in defaults; clean the
            # pre-filled text anyway, since the input line writes it to the terminal as is.
            original = field.text_of(current)
            prefilled = clean(original, single_line=True)

            def kept(text: str) -> str:
                # The pre-fill left as shown stands for the value itself: clean() shortens runs
                # of combining marks that may be the text's own (Hebrew with its points).
                return original if text == prefilled else text

            def check(text: str) -> str | None:
                problem = field.parse_text(kept(text))[1]
                return clean(problem, single_line=True, max_length=300) if problem else None

            text = await ask_text(self.terminal, "  › ", default=prefilled, check=check)
            value = field.parse_text(kept(text))[0]
        elif kind == "boolean":
            got = await ask_yes_no(
                self.terminal,
                default=current if isinstance(current, bool) else None,
                empty=not field.required and not field.has_default,
            )
            value = OMIT if got.value is None else got.value
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
        view.echo(self.out, field, value)
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
        view.note(self.out, "This form cannot be shown; it is not a valid elicitation form:", "bold red")
        for problem in exc.problems:
            self.out.print(Text("  • " + problem), hang=4)
        try:
            picked = await self._decide(server, [Option("Decline — answer no", "d"), Option("Cancel", "c")])
        except Cancelled:
            picked = 1
        if picked == 0:
            return self._declined(_NOTHING_SENT)
        view.note(self.out, f"{_CANCELLED}; {_NOTHING_SENT}.", "bold")
        return Answer("cancel")

    # -- URLs -----------------------------------------------------------------------------------
    async def url(self, question: UrlQuestion) -> Answer:
        from mcp_elicit.client.urls import assess_url

        out = self.out
        self._header(question.server, "A link")
        view.message(out, question.message)
        assessment = assess_url(question.url, allow_loopback_http=self.allow_loopback_http)
        href = assessment.href
        # Shown and opened must be the same string: a canonical href never needs cleaning.
        if assessment.verdict == "refuse" or not href or clean(href, single_line=True) != href:
            view.url_refused(out, assessment)
            return Answer("decline")
        view.url_block(out, assessment, href, question.server)
        opened: list[bool] = []
        try:
            return await self._url(question.server, assessment, href, opened)
        except Cancelled:
            what = "close the page in your browser if it is open" if opened else "the address was not opened"
            view.note(out, f"{_CANCELLED}; {what}.", "bold")
            return Answer("cancel")

    async def _url(
        self, server: ServerIdentity, assessment: UrlAssessment, href: str, opened: list[bool]
    ) -> Answer:
        out = self.out
        # Enter alone declines: opening takes a deliberate "o".
        picked = await self._decide(
            server,
            [Option("Open in browser", "o"), Option("Decline — do not open", "d"), Option("Cancel", "c")],
            default=1,
            consent=True,
        )
        if picked == 1:
            return self._declined("the address was not opened")
        if picked == 2:
            raise Cancelled()
        if assessment.verdict == "warn":
            view.note(out, "This address has the warnings listed above. Open it anyway?", "bold yellow")
            sure = await self._decide(
                server, [Option("Yes, open it", "y"), Option("No — decline", "n")], default=1, consent=True
            )
            if sure == 1:
                return self._declined("the address was not opened")
        result = await self._open(assessment)
        if result is None:
            raise Cancelled()
        opened.append(True)  # opened, or shown for opening by hand
        while True:
            picked = await self._decide(
                server,
                [Option("Done — continue"), Option("Not yet — keep waiting", "w"), Option("Cancel", "c")],
                consent=True,  # a second Enter typed at "Open" must not say "done" before the browser
            )
            if picked == 0:
                view.note(out, "Done: the server is told that you finished in the browser.", "bold green")
                return Answer("accept")
            if picked == 2:
                raise Cancelled()
            view.note(
                out,
                "Waiting. Finish in the browser, then choose “Done — continue”; the server is asked "
                "again only then. The address, if you need it again:",
            )
            view.address_to_copy(out, href)

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
            view.note(self.out, f"The browser could not be started ({type(exc).__name__}).", "bold red")
            return None
        reason = clean(result.reason, single_line=True, max_length=300)
        if result.opened:
            view.note(self.out, "Opened in your browser. Finish there, then come back here.", "bold green")
        elif result.print_url:
            view.note(self.out, f"Not opened from here ({reason}). Open this address yourself:", "bold")
            view.address_to_copy(self.out, href)
        else:
            view.note(self.out, f"The address could not be opened: {reason}", "bold red")
            return None
        return result

    # -- helpers --------------------------------------------------------------------------------
    async def _decide(
        self, server: ServerIdentity, options: list[Option], *, default: int = 0, consent: bool = False
    ) -> int:
        """A choice that answers the server: who is asking is in sight when it is made."""
        above = self._asker(server, len(options) + 3)
        return await self._menu(options, default=default, consent=consent, above=above)

    async def _menu(
        self,
        options: list[Option],
        *,
        default: int = 0,
        echo: bool = True,
        consent: bool = False,
        above: str | None = None,
    ) -> int:
        picked = await choose(self.terminal, options, default=default, consent=consent, above=above)
        if echo:
            self._echo(options[picked].label)
        return picked

    def _echo(self, label: str) -> None:
        self.out.print(Text("  → " + label, style="green"), hang=4)

    def _declined(self, what: str) -> Answer:
        view.note(self.out, f"{_DECLINED}; {what}.", "bold")
        return Answer("decline")
