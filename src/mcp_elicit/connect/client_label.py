"""Who asks, as a flow records it for its page: the MCP client's own name for itself and, when
the request came with a validated token, the OAuth client that token was issued to.

A flow keeps one short text for this (``PendingFlow.client``). The two parts are not worth the
same: the name comes from ``clientInfo``, which the client fills in as it likes (an attacker's
client can call itself "Claude", or "x (OAuth client trusted-app)"); the OAuth client id comes
from a token the server checked. The page shows the first as self-reported and only the second
as checked, so the text keeps them apart in a shape the name cannot imitate, because the name
always comes last, after a marker, and the checked part always comes first::

    self:<name>                          no validated OAuth client
    oauth:<client id> self:<name>        the token names a client id (no spaces in it)

Anything else (a label from before this format, one a server passed to ``FlowStore.create``
itself) is read whole as a self-reported name: never shown as checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from mcp_elicit.connect.flows.model import MAX_CLIENT_LENGTH, clean_label

__all__ = ["ClientLabel", "client_label", "read_client_label"]

_NAME: Final = "self:"
_OAUTH: Final = "oauth:"
# RFC 6749 client ids are printable ASCII; one with a space could not be told apart from the name.
_CLIENT_ID: Final = re.compile(r"[\x21-\x7e]{1,64}")


@dataclass(frozen=True, slots=True)
class ClientLabel:
    """The two parts of a flow's ``client`` text. ``name``: what the client calls itself
    (self-reported, may be absent). ``oauth_client``: the client id of the validated token."""

    name: str | None
    oauth_client: str | None


def client_label(name: str | None, oauth_client: str | None) -> str | None:
    """The text to store for a flow (at most ``MAX_CLIENT_LENGTH`` characters, so the store's own
    cut never reaches the checked part), or ``None`` when there is neither part. The name is
    cleaned and cut to what is left; a client id that is not 1-64 printable ASCII characters
    without spaces is left out (it could not be read back apart from the name)."""
    checked = oauth_client if oauth_client is not None and _CLIENT_ID.fullmatch(oauth_client) else None
    prefix = f"{_OAUTH}{checked} {_NAME}" if checked else _NAME
    shown = clean_label(name, MAX_CLIENT_LENGTH - len(prefix)) if name is not None else None
    if checked is None and shown is None:
        return None
    return prefix + (shown or "")


def read_client_label(label: str | None) -> ClientLabel:
    """The parts of a stored ``client`` text (see the module docstring for the shapes)."""
    if not label:
        return ClientLabel(None, None)
    if label.startswith(_NAME):
        return ClientLabel(label[len(_NAME) :] or None, None)
    if label.startswith(_OAUTH):
        checked, space, rest = label[len(_OAUTH) :].partition(" ")
        if space and rest.startswith(_NAME) and _CLIENT_ID.fullmatch(checked):
            return ClientLabel(rest[len(_NAME) :] or None, checked)
    return ClientLabel(label, None)
