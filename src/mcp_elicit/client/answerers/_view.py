"""What the terminal answerer prints, with rich.

Only :class:`rich.text.Text` objects are printed, never strings: rich therefore never
interprets server text as markup (``[bold]``, ``[link=…]``) or emoji codes, and no style
here carries a ``link``, so nothing is ever emitted as an OSC 8 hyperlink. Every string
that came from the server is cleaned with :func:`mcp_elicit.client.text.clean` first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from mcp_elicit.client.answerers.fields import (
    MESSAGE_MAX,
    NAME_MAX,
    OMIT,
    VALUE_MAX,
    Field,
    show_value,
)
from mcp_elicit.client.questions import ServerIdentity
from mcp_elicit.client.text import clean

if TYPE_CHECKING:
    from mcp_elicit.client.urls import UrlAssessment

__all__ = [
    "DESCRIPTION_LINES",
    "MESSAGE_LINES",
    "asker",
    "defang",
    "echo",
    "field_block",
    "form_errors",
    "header",
    "message",
    "note",
    "review",
    "secret_warning",
    "url_block",
    "url_refused",
]

_INDENT = "  "
#: The most lines shown of a message and of a field's description (after blank runs are
#: collapsed): a server cannot fill the screen and scroll its identity out of sight.
MESSAGE_LINES = 30
DESCRIPTION_LINES = 12
_PART_STYLES = {
    "scheme": "dim",
    "userinfo": "bold red",
    "subdomain": "dim",
    "domain": "bold reverse",
    "host": "bold",
    "port": "bold magenta",
    "rest": "",
}


def _server_line(server: ServerIdentity) -> Text:
    name = clean(server.name, single_line=True, max_length=NAME_MAX)
    title = clean(server.title, single_line=True, max_length=NAME_MAX) if server.title else ""
    version = clean(server.version, single_line=True, max_length=40) if server.version else ""
    extras: list[str] = []
    if title and title != name:
        main = title
        extras.append(f"name “{name}”")
    else:
        main = name
    if version:
        extras.append(f"version {version}")
    line = Text(_INDENT + "Server:      ", style="bold")
    line.append(f"“{main}”", style="bold")
    if extras:
        line.append(" (" + ", ".join(extras) + ")")
    line.append("  — as the server describes itself", style="dim italic")
    return line


def asker(console: Console, server: ServerIdentity) -> None:
    """Who is asking, on one line, printed right above every choice that answers the server:
    however much text the server sent, its identity is on screen when the person decides."""
    name = clean(server.name, single_line=True, max_length=NAME_MAX)
    title = clean(server.title, single_line=True, max_length=NAME_MAX) if server.title else ""
    line = Text(_INDENT + "Answering: ", style="bold")
    line.append(f"“{title or name}”", style="bold")
    if title and title != name:
        line.append(f" (name “{name}”)")
    line.append(" reached via ", style="dim")
    line.append(clean(server.reached_via, single_line=True, max_length=VALUE_MAX))
    console.print(line)


def header(console: Console, server: ServerIdentity, what: str) -> None:
    """Who asks, and how this client reached them (ours, not the server's words)."""
    console.print()
    console.print(Text(f"━━ {what} from an MCP server ━━", style="bold cyan"))
    console.print(_server_line(server))
    via = Text(_INDENT + "Reached via: ", style="bold")
    via.append(clean(server.reached_via, single_line=True, max_length=VALUE_MAX))
    via.append("  — how this client connected", style="dim italic")
    console.print(via)


def _lines(text: str, limit: int) -> tuple[list[str], int]:
    """``text``'s lines with runs of blank lines collapsed to one, at most ``limit`` of them;
    and how many lines were left out."""
    lines: list[str] = []
    blank = False
    for line in text.split("\n"):
        if not line.strip():
            if blank:
                continue  # blank lines would push the header off screen without showing anything
            blank = True
            line = ""
        else:
            blank = False
        lines.append(line.rstrip())
    return lines[:limit], max(0, len(lines) - limit)


def message(console: Console, text: str) -> None:
    """The server's message, as plain text (never a link, never markup), blank lines
    collapsed and at most :data:`MESSAGE_LINES` lines."""
    shown = clean(text, max_length=MESSAGE_MAX).strip()
    console.print(Text(_INDENT + "Message from the server:", style="bold"))
    if not shown:
        console.print(Text(_INDENT * 2 + "(no message)", style="dim"))
        return
    lines, hidden = _lines(shown, MESSAGE_LINES)
    # Indent every line of the message, so the server cannot imitate this UI's own lines.
    for line in lines:
        console.print(Text(_INDENT * 2 + line))
    if hidden:
        console.print(
            Text(_INDENT * 2 + f"… {hidden} more line{'s' if hidden != 1 else ''} not shown", style="dim")
        )
    if len(text) > MESSAGE_MAX:
        console.print(Text(_INDENT * 2 + f"(shortened: the message has {len(text)} characters)", style="dim"))


def note(console: Console, text: str, style: str = "dim") -> None:
    console.print(Text(_INDENT + text, style=style))


def form_errors(console: Console, errors: Mapping[str, str], fields: Sequence[Field]) -> None:
    """The problems the engine found in the previous answer."""
    console.print(Text(_INDENT + "Your previous answer was not accepted:", style="bold red"))
    labels = {f.key: f.label for f in fields}
    items = list(errors.items())
    for key, problem in items[:20]:
        where = labels.get(key) or clean(key, single_line=True, max_length=NAME_MAX)
        line = Text(_INDENT * 2 + "✗ ", style="red")
        if key:
            line.append(f"{where}: ", style="bold")
        line.append(clean(problem, single_line=True, max_length=VALUE_MAX))
        console.print(line)
    if len(items) > 20:
        note(console, f"  and {len(items) - 20} more", "red")


def secret_warning(console: Console, secrets: Mapping[str, str], fields: Sequence[Field]) -> None:
    """Fields that look like they collect a secret: MCP forbids that in a form."""
    labels = {f.key: f.label for f in fields}
    shown = ", ".join(
        f"{labels.get(key) or clean(key, single_line=True, max_length=NAME_MAX)} "
        f"({clean(what, single_line=True, max_length=60)})"
        for key, what in list(secrets.items())[:10]
    )
    console.print(Text(_INDENT + "⚠ This form seems to ask for a secret: " + shown, style="bold yellow"))
    note(
        console,
        "MCP does not allow servers to ask for passwords, API keys, tokens or payment details in a "
        "form (the client would see them). Consider declining.",
        "yellow",
    )


def field_block(console: Console, field: Field, number: int, total: int, error: str | None) -> None:
    """A field's title, description, rules and last error, before its input."""
    console.print()
    head = Text(_INDENT + f"[{number}/{total}] ", style="dim")
    head.append(field.label, style="bold")
    if field.required:
        head.append(" *", style="bold red")
    if field.label != field.name:
        head.append(f"  ({field.name})", style="dim")
    console.print(head)
    pad = _INDENT + " " * len(f"[{number}/{total}] ")
    if field.description:
        lines, hidden = _lines(field.description, DESCRIPTION_LINES)
        for line in lines:
            console.print(Text(pad + line))
        if hidden:
            console.print(
                Text(pad + f"… {hidden} more line{'s' if hidden != 1 else ''} not shown", style="dim")
            )
    console.print(Text(pad + " · ".join(field.constraints()), style="dim"))
    if error:
        console.print(Text(pad + "✗ " + clean(error, single_line=True, max_length=VALUE_MAX), style="red"))


def echo(console: Console, field: Field, value: Any) -> None:
    """What the person entered, once the input widget is gone."""
    pad = _INDENT + "  → "
    shown = show_value(field, value)
    if value is OMIT and field.has_default:
        shown += f" — the default ({show_value(field, field.default)}) applies"
    console.print(Text(pad + shown, style="green"))


def review(
    console: Console, fields: Sequence[Field], values: Mapping[str, Any], errors: Mapping[str, str]
) -> None:
    """Every value, one row per field, with any problem next to it."""
    console.print()
    console.print(Text(_INDENT + "Review your answer before it is sent:", style="bold"))
    table = Table(box=box.SIMPLE, show_header=True, header_style="bold", padding=(0, 1), pad_edge=True)
    table.add_column(Text("#"), justify="right", style="dim")
    table.add_column(Text("Field"), overflow="fold")
    table.add_column(Text("Value"), overflow="fold")
    for i, field in enumerate(fields, 1):
        value = values.get(field.key, OMIT)
        label = Text(field.label)
        if field.required:
            label.append(" *", style="bold red")
        shown = Text(show_value(field, value), style="dim" if value is OMIT else "")
        if value is OMIT and field.has_default:
            shown.append(f" — the default ({show_value(field, field.default)}) applies", style="dim")
        problem = errors.get(field.key)
        if problem:
            shown.append("\n✗ " + clean(problem, single_line=True, max_length=VALUE_MAX), style="red")
        table.add_row(Text(str(i)), label, shown)
    if not fields:
        table.add_row(Text(""), Text("(this question has no fields)", style="dim"), Text(""))
    console.print(table)
    whole = errors.get("")
    if whole:
        note(console, "✗ " + clean(whole, single_line=True, max_length=VALUE_MAX), "red")


def defang(text: str) -> str:
    """A refused address written so that no terminal turns it into a clickable link."""
    return clean(text, single_line=True, max_length=300).replace("://", "[:]//").replace(".", "[.]")


def url_refused(console: Console, assessment: UrlAssessment) -> None:
    console.print()
    console.print(Text(_INDENT + "✗ This address will not be opened:", style="bold red"))
    for reason in assessment.reasons or ("it is not a safe web address",):
        console.print(Text(_INDENT * 2 + "• " + clean(reason, single_line=True, max_length=VALUE_MAX)))
    raw = assessment.original or assessment.href or ""
    if raw:
        shown = Text(_INDENT * 2 + "The server sent (altered so that it is not a link): ", style="dim")
        shown.append(defang(raw))
        console.print(shown)
    console.print(Text(_INDENT + "The question was declined.", style="bold"))


def _address(assessment: UrlAssessment, href: str) -> Text:
    parts = assessment.parts
    if parts and "".join(text for _, text in parts) == href:
        line = Text(_INDENT * 2)
        for kind, text in parts:
            line.append(text, style=_PART_STYLES.get(kind, ""))
        return line
    return Text(_INDENT * 2 + href)


def _server_host(reached_via: str) -> str | None:
    if not reached_via.startswith(("https://", "http://")):
        return None
    try:
        host = urlsplit(reached_via).hostname
    except ValueError:
        return None
    return host.rstrip(".").lower() if host else None


def url_block(console: Console, assessment: UrlAssessment, href: str, server: ServerIdentity) -> None:
    """The address in full (canonical form, registrable domain highlighted) and every
    warning. Plain text: no hyperlink escape is emitted."""
    console.print()
    console.print(Text(_INDENT + "The server asks you to open this address in your browser:", style="bold"))
    console.print(_address(assessment, href), soft_wrap=True)  # no line break inside: copyable
    domain = assessment.registrable_domain
    if domain:
        site = Text(_INDENT * 2 + "Site: ", style="bold")
        site.append(clean(domain, single_line=True, max_length=300), style="bold reverse")
        site.append("  — the part of the address that says who runs it", style="dim italic")
        console.print(site)
    host = assessment.host
    uhost = assessment.unicode_host
    if host and uhost and uhost != host:
        line = Text(_INDENT * 2 + "Written in Unicode, the host reads “", style="yellow")
        line.append(clean(uhost, single_line=True, max_length=300))
        line.append("”; the real address is the ASCII form above.", style="yellow")
        console.print(line)
    server_host = _server_host(server.reached_via)
    if domain and server_host and server_host != domain and not server_host.endswith("." + domain):
        line = Text(
            _INDENT * 2 + "This address is on another site than the server you connected to (", style="dim"
        )
        line.append(clean(server_host, single_line=True, max_length=300))
        line.append(").", style="dim")
        console.print(line)
    if assessment.reasons:
        console.print(Text(_INDENT + "⚠ Check before opening:", style="bold yellow"))
        for reason in assessment.reasons:
            console.print(Text(_INDENT * 2 + "• " + clean(reason, single_line=True, max_length=VALUE_MAX)))
    if assessment.original != href:
        note(console, "The server's text of the address was normalized; the form above is what would open.")
