"""The bundled demo: every field kind, a confirmation, and the URL-mode step through the real kit
(DEMO ONLY identity and sign-in, the demo CI provider), served on 127.0.0.1 in this event loop."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit.cli.demo import ScriptedWalkThrough
from mcp_elicit.client import AuthorizationRequiredError, Client
from mcp_elicit.client.questions import Answer, FormQuestion, UrlQuestion
from mcp_elicit.connect.oauth.revoke import token_revoker
from mcp_elicit.connect.vault import Connection, RevocationFailed
from mcp_elicit.demo.site import DemoSite
from tests.helpers import Script

DETAILS = {"reporter": "ada@example.com", "severity": "high", "labels": ["bug", "ux"], "due": "2027-01-15"}
CONNECTED = "CI service connected as demo-user; last build #812 passed."


@pytest.fixture
async def built() -> AsyncIterator[DemoSite]:
    """The site, not served (the client reaches it in process)."""
    site = DemoSite.create()
    yield site
    await site.kit.aclose()
    site.close()


@pytest.fixture
async def served() -> AsyncIterator[DemoSite]:
    site = DemoSite.create()
    async with site.running():
        yield site


def _headers(site: DemoSite) -> dict[str, str]:
    return {"Authorization": f"Bearer {site.bearer}"}


class _Counting(ScriptedWalkThrough):
    def __init__(self, url_action: str | None = None) -> None:
        super().__init__()
        self.urls: list[str] = []
        self._url_action = url_action

    async def answer_url(self, question: UrlQuestion) -> Answer:
        self.urls.append(question.url)
        if self._url_action is not None:
            return Answer(self._url_action)
        return await super().answer_url(question)


async def _file(site: DemoSite, answerer: Any) -> Any:
    async with Client.connect(site.mcp_url, answerer=answerer, headers=_headers(site)) as client:
        return await client.call_tool("file_issue", {"title": "Login button"})


def _filling_in(*, modes: tuple[str, ...] = ("form", "url")) -> Script:
    """A person who gives DETAILS, confirms, and declines the link."""
    answers = iter([Answer("accept", DETAILS), Answer("accept", {"ok": True})])
    return Script(
        form=lambda question: next(answers), url=lambda question: Answer("decline"), mode_names=modes
    )


async def _file_in_process(site: DemoSite, person: Script, title: str) -> Any:
    """``file_issue`` through the site's own ASGI app (its DEMO ONLY identity checks the token)."""
    async with Client.connect(site.server, answerer=person, headers=_headers(site)) as client:
        return await client.call_tool("file_issue", {"title": title})


async def test_form_fields_cover_every_kind(built: DemoSite) -> None:
    person = _filling_in()
    await _file_in_process(built, person, "Login button")
    details, confirm, *_ = person.asked
    assert isinstance(details, FormQuestion)
    props = details.schema["properties"]
    assert props["reporter"] == {"type": "string", "title": "Your e-mail", "format": "email"}
    assert [o["const"] for o in props["severity"]["oneOf"]] == ["low", "medium", "high"]
    assert props["labels"]["items"]["enum"] == ["bug", "ux", "docs", "performance"]
    assert props["due"]["format"] == "date"
    assert "high severity, labels: bug, ux, 2027-01-15" in confirm.message


async def test_the_url_step_is_the_kits_connect_page(built: DemoSite) -> None:
    person = _filling_in()
    await _file_in_process(built, person, "x")
    _, _, link = person.asked
    assert isinstance(link, UrlQuestion)
    assert link.url.startswith(f"{built.base_url}/connect/")
    assert link.message == (
        "Connect your Demo CI service (demo only) account to let it watch builds for this issue."
    )


async def test_form_only_client_skips_the_url_step(built: DemoSite) -> None:
    person = _filling_in(modes=("form",))
    result = await _file_in_process(built, person, "x")
    assert "cannot open links" in result.text
    assert [type(question) for question in person.asked] == [FormQuestion, FormQuestion]


async def test_connects_end_to_end_and_the_token_stays_on_the_server(served: DemoSite) -> None:
    answerer = _Counting()
    result = await _file(served, answerer)
    assert not result.is_error
    assert result.text.startswith("Filed issue #101: Login button")
    assert result.text.endswith(CONNECTED)
    assert len(answerer.urls) == 1
    assert not answerer.failed
    connection = await served.kit.vault.get_connection(served.identity.principal.key, "ci")
    assert connection is not None
    assert connection.access_token not in orjson.dumps(result.raw).decode()
    assert connection.refresh_token is None or connection.refresh_token not in result.text

    # Connected now: the next issue uses the stored connection, no link is sent.
    again = _Counting()
    second = await _file(served, again)
    assert second.text.startswith("Filed issue #102")
    assert second.text.endswith(CONNECTED)
    assert again.urls == []


async def test_declining_the_link_files_the_issue_without_ci(served: DemoSite) -> None:
    result = await _file(served, _Counting(url_action="decline"))
    assert not result.is_error
    assert "Filed issue #101" in result.text
    declined = "Connecting your Demo CI service (demo only) account was declined in the client."
    assert f"CI service not connected: {declined}" in result.text
    assert await served.kit.vault.get_connection(served.identity.principal.key, "ci") is None


async def test_mcp_wants_this_runs_bearer_token(served: DemoSite) -> None:
    wrong = {"Authorization": "Bearer not-this-runs-token"}
    with pytest.raises(AuthorizationRequiredError) as info:
        async with Client.connect(served.mcp_url, headers=wrong) as client:
            await client.list_tools()
    assert info.value.status == 401
    assert "Unauthorized: the access token is invalid" in str(info.value)
    assert "invalid_token" in (info.value.www_authenticate or "")
    # Leaving the header out is refused too: the per-run token is the only way in.
    with pytest.raises(AuthorizationRequiredError) as missing:
        async with Client.connect(served.mcp_url) as client:
            await client.call_tool("file_issue", {"title": "no token"})
    assert missing.value.status == 401
    assert "requires a bearer access token" in str(missing.value)
    assert served.base_url.startswith("http://127.0.0.1:")
    assert served.ci_url.startswith("http://127.0.0.1:")
    assert served.ci_url != served.base_url  # the third party is another origin


# ------------------------------------------------------------------ reconnecting, revocation


async def _ci_refresh(site: DemoSite, refresh_token: str) -> int:
    """The CI service's answer to a refresh with ``refresh_token`` (200: the grant is live)."""
    ci = site.kit.provider("ci")
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
    async with httpx.AsyncClient(timeout=10, trust_env=False) as http:
        response = await http.post(
            f"{site.ci_url}/token", data=form, auth=(ci.client_id, ci.client_secret or "")
        )
    return response.status_code


async def _ci_builds(site: DemoSite, access_token: str) -> int:
    async with httpx.AsyncClient(timeout=10, trust_env=False) as http:
        response = await http.get(
            f"{site.ci_url}/api/builds", headers={"Authorization": f"Bearer {access_token}"}
        )
    return response.status_code


async def _connected(site: DemoSite) -> Connection:
    result = await _file(site, _Counting())
    assert result.text.endswith(CONNECTED)
    connection = await site.kit.vault.get_connection(site.identity.principal.key, "ci")
    assert connection is not None
    assert connection.refresh_token
    return connection


async def test_a_reconnect_revokes_the_old_grant_at_the_ci_service(served: DemoSite) -> None:
    owner = served.identity.principal.key
    old = await _connected(served)
    # The tool's API call was refused, say: the next call connects again over the old row.
    assert await served.kit.vault.mark_needs_reauthorization(owner, "ci")
    answerer = _Counting()
    again = await _file(served, answerer)
    assert again.text.endswith(CONNECTED)
    assert len(answerer.urls) == 1
    new = await served.kit.vault.get_connection(owner, "ci")
    assert new is not None
    assert new.id != old.id
    assert new.refresh_token
    # The replaced grant is dead at the CI service, not just gone from the vault.
    assert await _ci_builds(served, old.access_token) == 401
    assert old.refresh_token
    assert await _ci_refresh(served, old.refresh_token) == 400
    assert await _ci_builds(served, new.access_token) == 200


async def test_a_connection_awaiting_revocation_is_revoked_before_a_new_link(served: DemoSite) -> None:
    owner = served.identity.principal.key
    old = await _connected(served)
    # A disconnect while the CI service was unreachable: the row is kept, flagged.
    unreachable = replace(served.kit.provider("ci"), revocation_url="http://127.0.0.1:9/revoke")
    with pytest.raises(RevocationFailed):
        await served.kit.vault.disconnect(owner, "ci", token_revoker(unreachable, timeout=5))
    flagged = await served.kit.vault.get_connection(owner, "ci")
    assert flagged is not None
    assert flagged.status == "revocation_failed"

    # The CI service is reachable again: the next call revokes the old grant, then connects.
    answerer = _Counting()
    result = await _file(served, answerer)
    assert result.text.endswith(CONNECTED)
    assert len(answerer.urls) == 1
    assert old.refresh_token
    assert await _ci_refresh(served, old.refresh_token) == 400
    assert await _ci_builds(served, old.access_token) == 401
    new = await served.kit.vault.get_connection(owner, "ci")
    assert new is not None
    assert new.status == "active"


async def test_an_unrevocable_connection_is_a_clear_error_and_no_link(built: DemoSite) -> None:
    # ``built`` does not serve the CI service: revoking there fails (connection refused).
    owner = built.identity.principal.key
    await built.kit.vault.put_connection(owner, "ci", access_token="old-access", refresh_token="old-refresh")
    with pytest.raises(RevocationFailed):
        await built.kit.disconnect(owner, "ci")
    person = _filling_in()
    final = (await _file_in_process(built, person, "x")).text
    assert [type(question) for question in person.asked] == [FormQuestion, FormQuestion]  # no link
    assert (
        "CI service not connected: Your earlier Demo CI service (demo only) connection has to be revoked"
        in (final)
    )
    assert "try again later" in final
    kept = await built.kit.vault.get_connection(owner, "ci")
    assert kept is not None
    assert (kept.status, kept.refresh_token) == ("revocation_failed", "old-refresh")
