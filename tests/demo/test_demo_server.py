"""The bundled demo server: every field kind, a confirmation, a URL step with a local page."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request

import pytest

from mcp_elicit.demo.server import app
from tests.helpers import Flow, accept, only_key, text

DETAILS = {"reporter": "ada@example.com", "severity": "high", "labels": ["bug", "ux"], "due": "2027-01-15"}


def post(url: str) -> int:
    request = urllib.request.Request(url, data=b"", method="POST")
    with urllib.request.urlopen(request, timeout=5) as response:
        return int(response.status)


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode())


async def test_form_fields_cover_every_kind() -> None:
    first = await Flow(app, "file_issue", {"title": "Login button"}).send()
    key = only_key(first)
    props = first["inputRequests"][key]["params"]["requestedSchema"]["properties"]
    assert props["reporter"] == {"type": "string", "title": "Your e-mail", "format": "email"}
    assert [o["const"] for o in props["severity"]["oneOf"]] == ["low", "medium", "high"]
    assert props["labels"]["items"]["enum"] == ["bug", "ux", "docs", "performance"]
    assert props["due"]["format"] == "date"


async def test_whole_walk_through_with_the_url_step() -> None:
    flow = Flow(app, "file_issue", {"title": "Login button"})
    key = only_key(await flow.send())
    confirm = await flow.send({key: accept(DETAILS)})
    confirm_key = only_key(confirm)
    assert (
        "high severity, labels: bug, ux, 2027-01-15"
        in confirm["inputRequests"][confirm_key]["params"]["message"]
    )
    url_round = await flow.send({confirm_key: accept({"ok": True})})
    url_key = only_key(url_round)
    url = url_round["inputRequests"][url_key]["params"]["url"]
    assert url.startswith("http://127.0.0.1:")

    page = await asyncio.to_thread(get, url)
    assert '<form method="post"' in page
    assert "Demo only" in page
    again = await flow.send({url_key: {"action": "accept"}})  # accepted, but the page was not used
    again_key = only_key(again)
    assert again["inputRequests"][again_key]["params"]["url"] == url
    assert "not connected yet" in again["inputRequests"][again_key]["params"]["message"]

    assert await asyncio.to_thread(post, url) == 200
    done = text(await flow.send({again_key: {"action": "accept"}}))
    assert done.startswith("Filed issue #")
    assert done.endswith("CI service connected: builds are watched.")


async def test_form_only_client_skips_the_url_step() -> None:
    flow = Flow(app, "file_issue", {"title": "x"}, capabilities={"elicitation": {}})
    key = only_key(await flow.send())
    confirm_key = only_key(await flow.send({key: accept(DETAILS)}))
    assert "cannot open links" in text(await flow.send({confirm_key: accept({"ok": True})}))


async def test_unknown_links_are_404_and_get_changes_nothing() -> None:
    link = app_pages_link()
    url = link.replace(link.rsplit("/", 1)[1], "not-a-link")
    with pytest.raises(urllib.error.HTTPError) as info:
        await asyncio.to_thread(get, url)
    assert info.value.code == 404
    from mcp_elicit.demo.server import pages

    known = link.rsplit("/", 1)[1]
    await asyncio.to_thread(get, link)
    assert not pages.done(known)


def app_pages_link() -> str:
    from mcp_elicit.demo.server import pages

    return pages.url(pages.new_link())
