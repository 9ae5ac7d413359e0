"""What the terminal answerer prints, with rich.

Only :class:`rich.text.Text` objects are printed, never strings: rich therefore never
interprets server text as markup (``[bold]``, ``[link=…]``) or emoji codes, and no style
here carries a ``link``, so nothing is ever emitted as an OSC 8 hyperlink. Every string
that came from the server is cleaned with :func:`mcp_elicit.client.text.clean` first.

Every line goes through :class:`Out`, which wraps it to the console's width (:mod:`._wrap`:
words whole, continuations under their text) and counts the lines, so that the session knows
whether the server's identity, printed once, is still on screen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from mcp_elicit.client.answerers._wrap import MIN_WIDTH, spans
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
    "Out",
    "address_to_copy",
    "asker",
    "defang",
    "echo",
    "field_block",
    "form_errors",
    "header",
    "message",
    "note",
    "pieces",
    "review",
    "secret_warning",
    "url_block",
    "url_refused",
]

_INDENT = "  "
#: The most lines shown of a message and of a field's description (after blank runs are
#: collapsed), so that a server cannot scroll the screen without end. A message the person
#: answers is shown up to 200 lines, which a real one fits (a list of files to delete, say):
#: what they answer must be in sight, and when the header naming the server has scrolled off,
#: the choices name it again. Past that, the middle is left out: a server appends the reason
#: it refused an answer at the end, and the last lines stay in sight.
MESSAGE_LINES = 200
MESSAGE_TAIL = 5
DESCRIPTION_LINES = 12
_TAB = 4  # server text keeps its tabs (multi-line cleaning); they are expanded to measure it
_PART_STYLES = {
    "scheme": "dim",
    "userinfo": "bold red",
    "subdomain": "dim",
    "domain": "bold reverse",
    "host": "bold",
    "port": "bold magenta",
    "rest": "",
}


def pieces(text: Text, first: int, rest: int) -> list[Text]:
    """``text`` (one line, no indent) cut into lines of at most ``first``, then ``rest``, cells."""
    return [text[start:end] for start, end in spans(text.plain, first, rest)]


class Out:
    """The console, with each line wrapped here (words whole, hanging indents) and counted."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.lines = 0  # lines printed so far

    @property
    def width(self) -> int:
        return max(1, self.console.width)

    def print(self, text: Text | None = None, hang: int | None = None) -> None:
        """Print ``text`` wrapped to the width: each line of it starts with its own indent, and
        its continuations start ``hang`` cells in (default: under the text, after the indent)."""
        if text is None:
            self.laid(Text(""))
            return
        width = self.width
        for line in text.split("\n", allow_blank=True):
            plain = line.plain
            lead = len(plain) - len(plain.lstrip(" "))
            # On a narrow terminal the indents shrink: the text keeps some room.
            first = min(lead, max(0, width - MIN_WIDTH))
            later = min(lead if hang is None else hang, max(0, width - MIN_WIDTH))
            body = line[lead:]
            for n, piece in enumerate(pieces(body, width - first, width - later)):
                shown = Text(" " * (first if n == 0 else later))
                shown.append_text(piece)
                self.laid(shown)

    def laid(self, line: Text) -> None:
        """Print one line already laid out to fit the width."""
        self.console.print(line, soft_wrap=True)  # wrapped here: rich must not fold it again
        self.lines += 1


def _who(server: ServerIdentity) -> tuple[str, str, str]:
    """The server's self-reported name, title and version, cleaned for display."""
    name = clean(server.name, single_line=True, max_length=NAME_MAX)
    title = clean(server.title, single_line=True, max_length=NAME_MAX) if server.title else ""
    version = clean(server.version, single_line=True, max_length=40) if server.version else ""
    return name, title, version


def _server_line(server: ServerIdentity) -> Text:
    name, title, version = _who(server)
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


#: Where the text of the header's identity lines starts (after "  Server:      ").
_HEADER_HANG = len(_INDENT + "Server:      ")


def asker(server: ServerIdentity) -> str:
    """Who is asking, in one line (cleaned): shown with a choice that answers the server when
    the header that names it is no longer on screen."""
    name, title, _ = _who(server)
    line = f"Answering: “{title or name}”"
    if title and title != name:
        line += f" (name “{name}”)"
    return line + " reached via " + clean(server.reached_via, single_line=True, max_length=VALUE_MAX)


def header(out: Out, server: ServerIdentity, what: str, *, seen: bool, again: bool) -> None:
    """Who asks, and how this client reached them (ours, not the server's words). ``seen``:
    the same server was named for an earlier question of this session, so it is not again;
    ``again``: another server was, so this one is said to be another."""
    out.print()
    if seen:
        out.print(Text(f"━━ {what} from the same server ━━", style="bold cyan"))
        return
    out.print(Text(f"━━ {what} from {'another' if again else 'an'} MCP server ━━", style="bold cyan"))
    out.print(_server_line(server), hang=_HEADER_HANG)
    via = Text(_INDENT + "Reached via: ", style="bold")
    via.append(clean(server.reached_via, single_line=True, max_length=VALUE_MAX))
    via.append("  — how this client connected", style="dim italic")
    out.print(via, hang=_HEADER_HANG)


def _lines(text: str, limit: int) -> tuple[list[str], int]:
    """``text``'s lines with runs of blank lines collapsed to one, at most ``limit`` of them;
    and how many lines were left out."""
    lines = _collapsed(text)
    return lines[:limit], max(0, len(lines) - limit)


def _collapsed(text: str) -> list[str]:
    """``text``'s lines with runs of blank lines collapsed to one."""
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
        lines.append(line.rstrip().expandtabs(_TAB))
    return lines


def _more(hidden: int) -> str:
    return f"… {hidden} more line{'s' if hidden != 1 else ''} not shown"


def message(out: Out, text: str) -> None:
    """The server's message, as plain text (never a link, never markup), blank lines
    collapsed and at most :data:`MESSAGE_LINES` lines (its last ones among them)."""
    shown = clean(text, max_length=MESSAGE_MAX).strip()
    out.print(Text(_INDENT + "Message from the server:", style="bold"))
    if not shown:
        out.print(Text(_INDENT * 2 + "(no message)", style="dim"))
        return
    lines = _collapsed(shown)
    head, tail = lines, []
    if len(lines) > MESSAGE_LINES:
        head, tail = lines[: MESSAGE_LINES - MESSAGE_TAIL], lines[-MESSAGE_TAIL:]
    hidden = len(lines) - len(head) - len(tail)
    # Indent every line of the message, so the server cannot imitate this UI's own lines.
    for line in head:
        out.print(Text(_INDENT * 2 + line))
    if hidden:
        left_out = f"… {hidden} line{'s' if hidden != 1 else ''} left out here …"
        out.print(Text(_INDENT * 2 + left_out, style="dim"))
    for line in tail:
        out.print(Text(_INDENT * 2 + line))
    if len(text) > MESSAGE_MAX:
        out.print(Text(_INDENT * 2 + f"(shortened: the message has {len(text)} characters)", style="dim"))


def note(out: Out, text: str, style: str = "dim") -> None:
    out.print(Text(_INDENT + text, style=style))


def form_errors(out: Out, errors: Mapping[str, str], fields: Sequence[Field]) -> None:
    """The problems the engine found in the previous answer."""
    out.print(Text(_INDENT + "Your previous answer was not accepted:", style="bold red"))
    labels = {f.key: f.label for f in fields}
    items = list(errors.items())
    for key, problem in items[:20]:
        where = labels.get(key) or clean(key, single_line=True, max_length=NAME_MAX)
        line = Text(_INDENT * 2 + "✗ ", style="red")
        if key:
            line.append(f"{where}: ", style="bold")
        line.append(clean(problem, single_line=True, max_length=VALUE_MAX))
        out.print(line, hang=len(_INDENT * 2 + "✗ "))
    if len(items) > 20:
        note(out, f"  and {len(items) - 20} more", "red")


def secret_warning(out: Out, secrets: Mapping[str, str], fields: Sequence[Field]) -> None:
    """Fields that look like they collect a secret: MCP forbids that in a form."""
    labels = {f.key: f.label for f in fields}
    shown = ", ".join(
        f"{labels.get(key) or clean(key, single_line=True, max_length=NAME_MAX)} "
        f"({clean(what, single_line=True, max_length=60)})"
        for key, what in list(secrets.items())[:10]
    )
    warning = Text(_INDENT + "⚠ This form seems to ask for a secret: " + shown, style="bold yellow")
    out.print(warning, hang=len(_INDENT + "⚠ "))
    note(
        out,
        "MCP does not allow servers to ask for passwords, API keys, tokens or payment details in a "
        "form (the client would see them). Consider declining.",
        "yellow",
    )


def field_block(out: Out, field: Field, number: int, total: int, error: str | None) -> None:
    """A field's title, description, rules and last error, before its input."""
    out.print()
    counter = f"[{number}/{total}] " if total > 1 else ""  # no "[1/1]" on a form of one field
    head = Text(_INDENT + counter, style="dim")
    head.append(field.label, style="bold")
    if field.required:
        head.append(" *", style="bold red")
    if field.show_name:
        head.append(f"  ({field.name})", style="dim")
    pad = _INDENT + " " * (len(counter) or len(_INDENT))
    out.print(head, hang=len(pad))
    if field.description:
        lines, hidden = _lines(field.description, DESCRIPTION_LINES)
        for line in lines:
            out.print(Text(pad + line))
        if hidden:
            out.print(Text(pad + _more(hidden), style="dim"))
    out.print(Text(pad + " · ".join(field.constraints()), style="dim"))
    if error:
        problem = Text(pad + "✗ " + clean(error, single_line=True, max_length=VALUE_MAX), style="red")
        out.print(problem, hang=len(pad) + 2)


def echo(out: Out, field: Field, value: Any) -> None:
    """What the person entered, once the input widget is gone."""
    pad = _INDENT + "  → "
    shown = show_value(field, value)
    if value is OMIT and field.has_default:
        shown += f" — the default ({show_value(field, field.default)}) applies"
    out.print(Text(pad + shown, style="green"), hang=len(pad))


def _cell(text: Text, width: int, hang: int = 0) -> list[Text]:
    """``text`` wrapped within a column ``width`` cells wide, continuations ``hang`` cells in."""
    return [
        Text(" " * hang) + piece if n else piece for n, piece in enumerate(pieces(text, width, width - hang))
    ]


def review(out: Out, fields: Sequence[Field], values: Mapping[str, Any], errors: Mapping[str, str]) -> None:
    """Every value, one row per field, with any problem under it. The columns are laid out
    here: each cell is wrapped within its column, words whole."""
    out.print()
    out.print(Text(_INDENT + "Review your answer before it is sent:", style="bold"))
    out.print()
    if not fields:
        out.print(Text(_INDENT * 2 + "(this question has no fields)", style="dim"))
    number_w = len(str(len(fields)))
    gap = "  "
    room = max(MIN_WIDTH, out.width - len(_INDENT) - number_w - 2 * len(gap))
    labels = [Text(f.label) + (Text(" *", style="bold red") if f.required else Text("")) for f in fields]
    # The label column: its longest label, within a third of the room, or more (up to half of
    # it) so that no word of a label has to be cut.
    longest_word = max([0, *(cell_len(word) for label in labels for word in label.plain.split())])
    label_w = min(max([5, *(cell_len(label.plain) for label in labels)]), max(8, room // 3, longest_word))
    label_w = min(label_w, max(8, room // 2))
    value_w = room - label_w
    cells: list[tuple[list[Text], list[Text]]] = []
    for field, label in zip(fields, labels, strict=True):
        value = values.get(field.key, OMIT)
        shown = Text(show_value(field, value), style="dim" if value is OMIT else "")
        if value is OMIT and field.has_default:
            shown.append(f" — the default ({show_value(field, field.default)}) applies", style="dim")
        right = _cell(shown, value_w)
        problem = errors.get(field.key)
        if problem:
            wrong = Text("✗ " + clean(problem, single_line=True, max_length=VALUE_MAX), style="red")
            right += _cell(wrong, value_w, 2)
        cells.append((_cell(label, label_w), right))
    if fields:
        out.laid(
            Text(_INDENT + "#".rjust(number_w) + gap + "Field".ljust(label_w) + gap + "Value", style="bold")
        )
        widest = max(cell_len(line.plain) for _, right in cells for line in right)
        out.laid(Text(_INDENT + "─" * (number_w + 2 * len(gap) + label_w + max(5, widest)), style="dim"))
    for i, (left, right) in enumerate(cells, 1):
        for n in range(max(len(left), len(right))):
            line = Text(_INDENT)
            line.append((str(i) if n == 0 else "").rjust(number_w), style="dim")
            line.append(gap)
            cell = left[n] if n < len(left) else Text("")
            line.append_text(cell)
            if n < len(right):
                line.append(" " * (label_w - cell_len(cell.plain)) + gap)
                line.append_text(right[n])
            out.laid(line)
    out.print()
    whole = errors.get("")
    if whole:
        note(out, "✗ " + clean(whole, single_line=True, max_length=VALUE_MAX), "red")


def defang(text: str) -> str:
    """A refused address written so that no terminal turns it into a clickable link."""
    return clean(text, single_line=True, max_length=300).replace("://", "[:]//").replace(".", "[.]")


def url_refused(out: Out, assessment: UrlAssessment) -> None:
    out.print()
    out.print(Text(_INDENT + "✗ This address will not be opened:", style="bold red"))
    for reason in assessment.reasons or ("it is not a safe web address",):
        out.print(Text(_INDENT * 2 + "• " + clean(reason, single_line=True, max_length=VALUE_MAX)), hang=6)
    raw = assessment.original or assessment.href or ""
    if raw:
        shown = Text(_INDENT * 2 + "The server sent (altered so that it is not a link): ", style="dim")
        shown.append(defang(raw))
        out.print(shown, hang=len(_INDENT * 2))
    declined = "The question was declined: the server is told that you said no; the address was not opened."
    out.print(Text(_INDENT + declined, style="bold"))


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


def url_block(out: Out, assessment: UrlAssessment, href: str, server: ServerIdentity) -> None:
    """The address in full (canonical form, registrable domain highlighted) and every
    warning. Plain text: no hyperlink escape is emitted. An address wider than the terminal
    is wrapped at its own boundaries (after ``/``, ``?``, ``&``…), never shortened."""
    out.print()
    out.print(Text(_INDENT + "The server asks you to open this address in your browser:", style="bold"))
    out.print(_address(assessment, href))
    domain = assessment.registrable_domain
    if domain:
        site = Text(_INDENT * 2 + "Site: ", style="bold")
        site.append(clean(domain, single_line=True, max_length=300), style="bold reverse")
        site.append("  — the part of the address that says who runs it", style="dim italic")
        out.print(site, hang=len(_INDENT * 2 + "Site: "))
    host = assessment.host
    uhost = assessment.unicode_host
    if host and uhost and uhost != host:
        line = Text(_INDENT * 2 + "Written in Unicode, the host reads “", style="yellow")
        line.append(clean(uhost, single_line=True, max_length=300))
        line.append("”; the real address is the ASCII form above.", style="yellow")
        out.print(line)
    server_host = _server_host(server.reached_via)
    if domain and server_host and server_host != domain and not server_host.endswith("." + domain):
        line = Text(
            _INDENT * 2 + "This address is on another site than the server you connected to (", style="dim"
        )
        line.append(clean(server_host, single_line=True, max_length=300))
        line.append(").", style="dim")
        out.print(line)
    if assessment.reasons:
        out.print(Text(_INDENT + "⚠ Check before opening:", style="bold yellow"))
        for reason in assessment.reasons:
            out.print(
                Text(_INDENT * 2 + "• " + clean(reason, single_line=True, max_length=VALUE_MAX)), hang=6
            )
    if assessment.original != href:
        note(out, "The server's text of the address was normalized; the form above is what would open.")


def address_to_copy(out: Out, href: str) -> None:
    """The address alone, from the first column (wrapped at its boundaries if it must be)."""
    out.print(Text(href))
