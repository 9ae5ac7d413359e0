"""The HTML of the pages: small, script-free, every interpolated value escaped.

Every value that reaches the markup goes through :func:`html.escape` (quotes included), whether
it came from configuration, an ID token, the flow record or a provider's error text. The one
stylesheet is a constant whose hash the CSP allows (see :mod:`.headers`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from mcp_elicit.connect.flows.model import visible_identifier

__all__ = ["DEMO_LABEL", "STYLESHEET", "Identity", "Page", "render"]

STYLESHEET: Final = (
    "body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;"
    "line-height:1.5;color:#1b1b1b}"
    "h1{font-size:1.4rem}.who{background:#f3f3f3;padding:.6rem .8rem;border-radius:.4rem}"
    ".warn{border-left:.3rem solid #b00020;padding-left:.8rem}"
    "button,.button{font-size:1rem;padding:.5rem 1.1rem;border-radius:.3rem;border:1px solid #555;"
    "background:#fff;color:#1b1b1b;text-decoration:none;display:inline-block;cursor:pointer}"
    ".primary{background:#1b4dd8;color:#fff;border-color:#1b4dd8}"
    "input[type=password]{font-size:1rem;padding:.4rem;width:100%;box-sizing:border-box}"
    "form.inline{display:inline}.small{font-size:.9rem;color:#555}code{word-break:break-all}"
    ".demo{background:#fff3cd;border:1px solid #b58a00;padding:.4rem .8rem;border-radius:.4rem}"
    ".named{overflow-wrap:anywhere}.host{font-size:1.1rem}"
)

DEMO_LABEL: Final = "DEMO ONLY"
"""What every page of a development-mode :class:`~mcp_elicit.connect.pages.ConnectPages` says
first (and only those: a production page never carries it)."""


def esc(value: object) -> str:
    """``value`` as text safe inside HTML content and quoted attribute values."""
    return html.escape(str(value), quote=True)


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the browser is signed in as, for display (already-escaped text is never passed)."""

    label: str  # name and/or email, else the subject
    subject: str
    issuer: str


@dataclass(frozen=True, slots=True)
class Page:
    """A rendered page: status and HTML."""

    status: int
    html: str


def render(status: int, title: str, body: str, *, server_name: str, demo: bool = False) -> Page:
    """The common layout around ``body`` (``body`` is already-built, escaped markup). ``demo``:
    the page belongs to a development-mode site, and says so above everything else."""
    banner = ""
    tab = f"{esc(title)} · {esc(server_name)}"
    if demo:
        banner = (
            f'<p class="demo"><strong>{DEMO_LABEL}</strong>: development mode. This page runs on '
            "this computer for trying things out; never use it with real accounts or real "
            "credentials.</p>"
        )
        tab = f"{DEMO_LABEL} · {tab}"
    document = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{tab}</title><style>{STYLESHEET}</style></head>"
        f"<body><main>{banner}<h1>{esc(title)}</h1>{body}</main></body></html>\n"
    )
    return Page(status, document)


def paragraphs(*texts: str) -> str:
    """Plain text paragraphs, escaped."""
    return "".join(f"<p>{esc(text)}</p>" for text in texts)


def hidden(name: str, value: str) -> str:
    return f'<input type="hidden" name="{esc(name)}" value="{esc(value)}">'


def who_block(identity: Identity, *, logout_action: str, logout_token: str, next_path: str) -> str:
    """The "Signed in as …" block with its "Not you? Sign out" POST form."""
    subject = visible_identifier(identity.subject)
    return (
        '<div class="who"><p>Signed in as <strong>'
        f'{esc(identity.label)}</strong> <span class="small">({esc(subject)})</span></p>'
        f'<form class="inline" method="post" action="{esc(logout_action)}">'
        f"{hidden('csrf', logout_token)}{hidden('next', next_path)}"
        'Not you? <button type="submit">Sign out</button></form></div>'
    )


def scope_list(scopes: Sequence[str]) -> str:
    if not scopes:
        return "<p>No specific permissions are requested.</p>"
    items = "".join(f"<li><code>{esc(scope)}</code></li>" for scope in scopes)
    return f"<p>Permissions requested:</p><ul>{items}</ul>"


def post_form(action: str, token: str, inner: str, button: str, *, decline: str | None = None) -> str:
    """A POST form with the CSRF token. With ``decline``, a second button of that label: both
    send ``choice`` (``continue`` / ``decline``), and the second skips the browser's checks of
    ``inner``'s fields (saying no needs nothing filled in)."""
    if decline is None:
        buttons = f'<button class="primary" type="submit">{esc(button)}</button>'
    else:
        buttons = (
            f'<button class="primary" type="submit" name="choice" value="continue">{esc(button)}</button> '
            f'<button type="submit" name="choice" value="decline" formnovalidate>{esc(decline)}</button>'
        )
    return f'<form method="post" action="{esc(action)}">{hidden("csrf", token)}{inner}<p>{buttons}</p></form>'
