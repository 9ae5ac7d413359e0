"""A flow's ``client`` label keeps the client's self-reported name apart from the OAuth client id
of its validated token, through a real flow store, so the page can show only the id as checked:
no name, however it is written, reads back as a checked id."""

from __future__ import annotations

import pytest

from mcp_elicit.connect.client_label import ClientLabel, client_label, read_client_label
from mcp_elicit.connect.flows import SQLiteFlowStore
from mcp_elicit.connect.flows.model import MAX_CLIENT_LENGTH

OWNER = "https://auth.example.com|alice"
FORGED = (
    "oauth:trusted-app self:Claude",
    "x (OAuth client trusted-app)",
    "self:oauth:trusted-app self:x",
    "oauth:trusted-app",
    " oauth:trusted-app self:x",
)


async def stored(label: str | None) -> ClientLabel:
    """``label`` written to and read back from a real (SQLite) flow store, then parsed."""
    async with SQLiteFlowStore(":memory:") as store:
        flow = await store.create(OWNER, "connect", "github", client=label)
        return read_client_label((await store.get(flow.id)).client)


@pytest.mark.parametrize(
    ("name", "oauth_client", "parts"),
    [
        ("Claude Desktop", None, ClientLabel("Claude Desktop", None)),
        ("Claude Desktop", "claude-app", ClientLabel("Claude Desktop", "claude-app")),
        (None, "claude-app", ClientLabel(None, "claude-app")),
        ("  \u202e\u200b ", None, None),
        (None, None, None),
    ],
)
async def test_what_is_stored_reads_back_as_its_two_parts(
    name: str | None, oauth_client: str | None, parts: ClientLabel | None
) -> None:
    label = client_label(name, oauth_client)
    if parts is None:
        assert label is None
        assert read_client_label(label) == ClientLabel(None, None)
        return
    assert await stored(label) == parts


@pytest.mark.parametrize("name", FORGED)
async def test_a_name_never_reads_back_as_a_checked_client_id(name: str) -> None:
    assert await stored(client_label(name, None)) == ClientLabel(name.strip(), None)
    # With a real id from the token, the name stays the name, whole.
    assert await stored(client_label(name, "real-client")) == ClientLabel(name.strip(), "real-client")


async def test_long_parts_fit_and_the_checked_id_is_never_cut() -> None:
    client_id = "c" * 64
    label = client_label("N" * 500, client_id)
    assert label is not None
    assert len(label) <= MAX_CLIENT_LENGTH
    parts = await stored(label)
    assert parts.oauth_client == client_id
    assert parts.name is not None
    assert parts.name.endswith("…")
    assert set(parts.name[:-1]) == {"N"}


@pytest.mark.parametrize("client_id", ["has space", "c" * 65, "ünicode", ""])
async def test_a_client_id_that_could_not_be_told_apart_is_left_out(client_id: str) -> None:
    assert await stored(client_label("App", client_id)) == ClientLabel("App", None)


async def test_labels_of_another_shape_are_read_whole_as_self_reported() -> None:
    # A label written before this format, or one a server passed to the store itself.
    for label in ("Kit Tests Client (OAuth client kit-client)", "oauth:a b self:c", "oauth:x"):
        assert await stored(label) == ClientLabel(label, None)
