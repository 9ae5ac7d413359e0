"""The pages themselves, as functions of what they show (no I/O, no request access).

Wording aims at a person who followed a link from an app: say what is happening, who is signed
in, what will happen on the button, and, when something is wrong, what to do (usually: close the
page, go back to the app). Nothing here echoes request input except through the escaped fields
shown; error pages never reflect the URL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from mcp_elicit.connect.client_label import read_client_label
from mcp_elicit.connect.flows.model import clean_label

from .templates import Identity, Page, esc, paragraphs, post_form, render, scope_list, who_block

__all__ = ["Chrome", "OwnerFrame", "Requester"]

NAME_SHOWN: Final = 64
"""Characters shown of the name a client gives itself (the rest is cut with "…")."""


@dataclass(frozen=True, slots=True)
class Chrome:
    """What every page needs: the server's name, the sign-out form's action, and whether the
    site runs in development mode (every page then says DEMO ONLY)."""

    server_name: str
    logout_action: str
    demo: bool = False


def _page(chrome: Chrome, status: int, title: str, body: str) -> Page:
    return render(status, title, body, server_name=chrome.server_name, demo=chrome.demo)


@dataclass(frozen=True, slots=True)
class Requester:
    """Who asks: the MCP client (a flow's ``client`` label, see
    :mod:`~mcp_elicit.connect.client_label`) and this server."""

    client: str | None
    server_name: str

    def sentence(self, what: str) -> str:
        """``<p>`` "<the app> asks you, through the server <server>, to <what>." ``what`` is
        markup. The client's name is what it calls itself, and said to be: any app can give itself
        any name (cut short, isolated from the text around it, escaped). Only the OAuth client id,
        from a validated token, is stated as fact."""
        label = read_client_label(self.client)
        name = clean_label(label.name, NAME_SHOWN)
        if name:
            who = (
                'An app that calls itself <strong class="named">“<bdi>'
                f'{esc(name)}</bdi>”</strong> <span class="small">(self-reported: not verified)</span>'
            )
        else:
            who = "An app that gave no name"
        if label.oauth_client:
            who += (
                ", using an access token issued to the OAuth client "
                f'<code class="named">{esc(label.oauth_client)}</code>,'
            )
        server = f"<strong>{esc(self.server_name)}</strong>"
        return f"<p>{who} asks you, through the server {server}, to {what}.</p>"


@dataclass(frozen=True, slots=True)
class OwnerFrame:
    """What the owner's form on a flow's page is framed by: who is signed in (with the sign-out
    form, which comes back to ``path``), who asks, and where the form posts (``path``, with this
    session's CSRF ``token`` for it)."""

    identity: Identity
    logout_token: str
    path: str
    token: str
    requester: Requester

    def intro(self, chrome: Chrome, what: str) -> str:
        """Who is signed in, then who asks to ``what`` (markup)."""
        who = who_block(
            self.identity,
            logout_action=chrome.logout_action,
            logout_token=self.logout_token,
            next_path=self.path,
        )
        return who + self.requester.sentence(what)

    def form(self, inner: str, submit: str) -> str:
        """The form: ``inner`` fields, then the ``submit`` button and Decline."""
        return post_form(self.path, self.token, inner, submit, decline="Decline")


def message(chrome: Chrome, status: int, title: str, *texts: str) -> Page:
    return _page(chrome, status, title, paragraphs(*texts))


def not_found(chrome: Chrome) -> Page:
    # One page for unknown, expired, malformed and finished-and-purged ids (no enumeration).
    return message(
        chrome,
        404,
        "Link not found",
        "This link is invalid or has expired.",
        "Go back to your app and try again: it will give you a new link.",
    )


def sign_in(chrome: Chrome, login_href: str, what: str) -> Page:
    body = (
        paragraphs(f"{chrome.server_name} needs to know who you are before you can {what}.")
        + f'<p><a class="button primary" href="{esc(login_href)}">Sign in</a></p>'
        + paragraphs("Sign in with the same account you use in your app.")
    )
    return _page(chrome, 200, "Sign in to continue", body)


def development_sign_in(chrome: Chrome, *, identity: Identity, action: str, token: str) -> Page:
    """The DEMO ONLY sign-in (:class:`~mcp_elicit.connect.pages.DevelopmentLogin`): one button."""
    body = (
        '<div class="warn">'
        + paragraphs(
            "There is no real sign-in here: anyone on this computer who presses the button "
            f"continues as {identity.subject}.",
        )
        + "</div>"
        + f'<p class="who">Continue as <strong>{esc(identity.label)}</strong> <span class="small">'
        + f"({esc(identity.subject)}, issuer <code>{esc(identity.issuer)}</code>)</span></p>"
        + post_form(action, token, "", f"Continue as {identity.subject}")
    )
    title = f"DEMO ONLY sign-in: continue as {identity.subject}"
    return _page(chrome, 200, title, body)


def other_account(chrome: Chrome, identity: Identity, logout_token: str, next_path: str) -> Page:
    body = (
        who_block(
            identity, logout_action=chrome.logout_action, logout_token=logout_token, next_path=next_path
        )
        + '<div class="warn">'
        + paragraphs(
            "This link was created for another account.",
            "Do not continue. If someone sent you this link, they may be trying to connect your "
            "account to theirs. Close this page.",
            "If the link is yours, sign out and sign in with the account you use in your app.",
        )
        + "</div>"
    )
    return _page(chrome, 403, "This link is not for you", body)


def connect_confirm(
    chrome: Chrome,
    frame: OwnerFrame,
    *,
    provider_name: str,
    destination: str,
    scopes: Sequence[str],
    description: str | None,
    again: bool = False,
) -> Page:
    """Who is signed in, who asks (the app as it calls itself, the server), for which provider,
    where Continue goes (``destination``: the host of the provider's authorize URL), and the
    two answers, Continue and Decline. ``again``: Continue was pressed before on this link and
    the connection is not finished (the provider's page was left, or is open in another tab)."""
    body = (
        frame.intro(chrome, f"connect your <strong>{esc(provider_name)}</strong> account")
        + (_started_before(provider_name) if again else "")
        + (paragraphs(description) if description else "")
        + scope_list(scopes)
        + f'<p>Continue takes you to <strong class="host">{esc(destination)}</strong>, where '
        + f"{esc(provider_name)} asks you to approve. The connection is stored for the account shown "
        + f"above; the app itself never sees your {esc(provider_name)} credentials.</p>"
        + paragraphs("Decline ends the request here: nothing is connected, and the app is told you declined.")
        + frame.form("", "Continue")
    )
    return _page(chrome, 200, f"Connect {provider_name}", body)


def _started_before(provider_name: str) -> str:
    return (
        '<div class="warn">'
        + paragraphs(
            f"You already pressed Continue on this link, and the connection is not finished. If "
            f"the {provider_name} page is still open in another tab or window, you can finish "
            "there. Continue here starts again: the earlier page will then no longer work.",
        )
        + "</div>"
    )


def secret_form(
    chrome: Chrome,
    frame: OwnerFrame,
    *,
    name: str,
    description: str | None,
    problem: str | None = None,
) -> Page:
    what = description or name
    # No maxlength: a browser cuts a longer paste to it without a word, and a key cut short is
    # stored as if whole. The server refuses one too long, saying so.
    inner = (
        f'<p><label for="value">{esc(what)}</label></p>'
        '<p><input type="password" id="value" name="value" autocomplete="off" spellcheck="false" '
        'autocapitalize="off" required autofocus></p>'
    )
    body = (
        frame.intro(chrome, f"enter <strong>{esc(what)}</strong>")
        + (f'<p class="warn">{esc(problem)}</p>' if problem else "")
        + paragraphs(
            "It is stored encrypted for the account shown above and used by the server only; "
            "the app never sees it. Decline ends the request here: nothing is stored, and the "
            "app is told you declined."
        )
        + frame.form(inner, "Save")
    )
    return _page(chrome, 400 if problem else 200, f"Enter {what}", body)


def declined_here(chrome: Chrome, what: str, kept: str) -> Page:
    """The answer to Decline: ``what`` was declined ("connecting your GitHub account"), nothing
    was ``kept`` ("connected", "stored")."""
    return message(
        chrome,
        200,
        "Declined",
        f"You declined {what}. Nothing was {kept}.",
        "You can close this tab and return to your app: it is told you declined.",
    )


def was_declined(chrome: Chrome) -> Page:
    """A declined flow opened or posted to again (Continue after Decline, a replayed Decline)."""
    return message(
        chrome,
        409,
        "Request declined",
        "This request was declined; nothing was connected or stored.",
        "Go back to your app: run the tool again if you change your mind.",
    )


def in_use(chrome: Chrome) -> Page:
    """A flow being finished right now: a secret being saved, a connection's callback running."""
    return message(
        chrome,
        409,
        "Already in progress",
        "This link is being finished right now in another tab or window.",
        "Wait a few seconds, then reload this page to see how it ended.",
    )


def superseded(chrome: Chrome) -> Page:
    """The callback of a connection attempt that Continue, pressed again, replaced."""
    return message(
        chrome,
        409,
        "This page has expired",
        "Continue was pressed again on this link since this attempt began, so this attempt no "
        "longer counts. Nothing was connected from this page.",
        "Finish in the tab where you pressed Continue last, or open the link from your app again "
        "and press Continue.",
    )


def ended_unfinished(chrome: Chrome) -> Page:
    """A flow that failed (dismissed in the client, a provider error, a secret not stored) opened
    or posted to again: nothing was connected, and "already used" would say it was."""
    return message(
        chrome,
        409,
        "Request closed",
        "This request was closed before anything was connected or stored.",
        "Go back to your app and run the tool again for a new link.",
    )


def already_used(chrome: Chrome) -> Page:
    return message(
        chrome,
        409,
        "Link already used",
        "This link has already been used.",
        "You can close this tab. If something is missing, go back to your app for a new link.",
    )


def done(chrome: Chrome) -> Page:
    return message(
        chrome,
        200,
        "All set",
        "You can close this tab and return to your app.",
        f"Your app will continue with {chrome.server_name} from there.",
    )


def declined(chrome: Chrome, provider_name: str) -> Page:
    return message(
        chrome,
        200,
        "Not connected",
        f"You declined the request at {provider_name}; nothing was connected.",
        "You can close this tab and return to your app.",
    )


def failed(chrome: Chrome, public_message: str, provider_error: str | None) -> Page:
    texts = [public_message]
    if provider_error:
        texts.append(f"The provider said: {provider_error[:200]}")
    texts.append("Go back to your app and try again.")
    return message(chrome, 502, "Something went wrong", *texts)


def earlier_not_revoked(chrome: Chrome, provider_name: str) -> Page:
    return message(
        chrome,
        502,
        "Not connected",
        f"Your earlier {provider_name} connection has to be revoked at {provider_name} before a new "
        f"one is made, and {provider_name} could not be reached to revoke it.",
        "Nothing new was stored. Try again later from your app.",
    )


def earlier_unreadable(chrome: Chrome, provider_name: str) -> Page:
    return message(
        chrome,
        500,
        "Not connected",
        f"Your earlier {provider_name} connection is stored on {chrome.server_name} in a form it "
        "cannot read, so it could not be revoked and replaced.",
        "Nothing new was stored. Tell the people who run this service.",
    )


def not_stored(chrome: Chrome, provider_name: str, *, withdrawn: bool) -> Page:
    after = (
        f"The access {provider_name} had just granted was withdrawn again."
        if withdrawn
        else f"You may want to remove this service's access in your {provider_name} account settings."
    )
    return message(
        chrome,
        503,
        "Not connected",
        f"Your {provider_name} account could not be saved on {chrome.server_name}. {after}",
        "Go back to your app and try again in a minute.",
    )


def stale_callback(chrome: Chrome) -> Page:
    return message(
        chrome,
        400,
        "This page has expired",
        "This response is not recognised: it was already used, it took too long, or it was "
        "started in another browser.",
        "Nothing was changed. Go back to your app and start again.",
    )
