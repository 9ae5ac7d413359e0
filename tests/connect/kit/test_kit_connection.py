"""ctx.connection / ctx.secret end to end: real HTTP on 127.0.0.1, real JWT access tokens checked
against a local JWKS, SQLite stores shared with the test (which plays the pages' part)."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from pathlib import Path

import httpx
import pytest
from kit_sites import SiteFactory, fp, sqlite_storage
from kit_support import (
    ACCEPT,
    FORM_CAPS,
    browser_connects,
    browser_enters_secret,
    flow_id_of,
    text_of,
    url_request,
)

from mcp_elicit.connect.client_label import ClientLabel, read_client_label
from mcp_elicit.connect.flows import FlowNotFound, is_flow_id
from mcp_elicit.connect.vault import Vault
from mcp_elicit.server.record import CallRecord as FlowRecord
from mcp_elicit.state import KeyRing, RequestBinding, args_digest
from mcp_elicit.state.binding import bound_principal

ID_RE = re.compile(r"[A-Za-z0-9_-]{43}")


async def test_not_connected_sends_a_connect_url_without_personal_data(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site()
    alice = site.caller(http, "alice")
    first = await alice.call("list_repos")
    key, url, message = url_request(first)
    assert key == "connect-github-0"
    assert message == "Connect your GitHub account to list your repositories."
    flow_id = flow_id_of(url)
    assert url == f"{site.base}/connect/{flow_id}"
    assert ID_RE.fullmatch(flow_id)
    assert is_flow_id(flow_id)
    for personal in ("alice", site.auth.issuer, "kit-client", "@", "?", "#"):
        assert personal not in url.removeprefix(site.base)
    assert "requestState" in first
    assert flow_id not in first["requestState"]  # the state is sealed, not a carrier of readable ids

    flow = await site.flows.get(flow_id)
    assert flow.owner == site.auth.principal("alice")
    assert (flow.kind, flow.provider, flow.scopes, flow.status) == ("connect", "github", ("repo",), "pending")
    # the client id from the token, then the self-reported name (cleaned of bidi and control
    # characters), kept apart so the page can tell which one is checked
    assert flow.client == "oauth:kit-client self:Kit Tests Client"
    assert read_client_label(flow.client) == ClientLabel("Kit Tests Client", "kit-client")
    assert flow.description == message


async def test_retry_before_completion_holds_then_reissues_the_same_url(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site(hold=0.6)
    alice = site.caller(http, "alice")
    first = await alice.call("list_repos")
    key0, url, message = url_request(first)

    started = time.monotonic()
    second = await alice.call("list_repos", state=first["requestState"], responses={key0: ACCEPT})
    held = time.monotonic() - started
    assert held >= 0.5, "the retry should be held while the browser step is pending"
    key1, url1, message1 = url_request(second)
    assert (url1, message1) == (url, message)
    assert key1 == "connect-github-1" != key0

    third = await alice.call("list_repos", state=second["requestState"], responses={key1: ACCEPT})
    key2, url2, _ = url_request(third)
    assert url2 == url
    assert key2 == "connect-github-2"

    await browser_connects(
        site.flows, site.vault, flow_id_of(url), site.auth.principal("alice"), "gho_alice_1"
    )
    done = await alice.call("list_repos", state=third["requestState"], responses={key2: ACCEPT})
    assert done["structuredContent"] == {"repos": ["alpha", "beta"], "token_fingerprint": fp("gho_alice_1")}


async def test_completion_during_the_hold_finishes_the_held_request(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site(hold=8.0)
    alice = site.caller(http, "alice")
    first = await alice.call("list_repos")
    key, url, _ = url_request(first)

    started = time.monotonic()
    retry = asyncio.ensure_future(
        alice.call("list_repos", state=first["requestState"], responses={key: ACCEPT})
    )
    await asyncio.sleep(0.4)
    assert not retry.done(), "the retry is held while the flow is pending"
    token = "gho_secret_token_value_123"
    await browser_connects(site.flows, site.vault, flow_id_of(url), site.auth.principal("alice"), token)
    result = await retry
    assert time.monotonic() - started < 3.0, "the held request should finish soon after completion"
    text = text_of(result)
    assert fp(token) in text
    assert token not in text
    assert token not in str(result)

    # A tool that deliberately returns the token is the only way it reaches the client.
    echoed = await alice.call("echo_token")
    assert text_of(echoed) == token


async def test_already_connected_needs_no_elicitation(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site()
    owner = site.auth.principal("alice")
    await site.vault.put_connection(owner, "github", access_token="gho_ready", expires_in=3600)
    result = await site.caller(http, "alice").call("list_repos")
    assert result["structuredContent"]["token_fingerprint"] == fp("gho_ready")
    # Bob has no connection of his own: alice's is never used for him.
    bob = await site.caller(http, "bob").call("list_repos")
    assert bob["resultType"] == "input_required"


async def test_expired_flow_is_a_clear_tool_error(
    make_site: SiteFactory, http: httpx.AsyncClient, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    site = await make_site(storage=sqlite_storage(tmp_path, ttl=1.0))
    alice = site.caller(http, "alice")
    first = await alice.call("list_repos")
    key, url, _ = url_request(first)
    await asyncio.sleep(1.1)
    result = await alice.call("list_repos", state=first["requestState"], responses={key: ACCEPT})
    assert result["isError"] is True
    assert "expired" in text_of(result)
    assert "Run the tool again" in text_of(result)
    assert (await site.flows.get(flow_id_of(url))).status == "expired"


@pytest.mark.parametrize(
    ("action", "says", "status"),
    [
        ("decline", "Connecting your GitHub account was declined in the client.", "declined"),
        ("cancel", "You dismissed the request for connecting your GitHub account.", "failed"),
    ],
)
async def test_decline_or_cancel_ends_with_a_tool_error_and_closes_the_flow(
    make_site: SiteFactory, http: httpx.AsyncClient, action: str, says: str, status: str
) -> None:
    site = await make_site()
    alice = site.caller(http, "alice")
    first = await alice.call("list_repos")
    key, url, _ = url_request(first)
    result = await alice.call("list_repos", state=first["requestState"], responses={key: {"action": action}})
    assert result["isError"] is True
    assert text_of(result).startswith(says)
    assert (await site.flows.get(flow_id_of(url))).status == status


async def test_state_replayed_by_another_principal_is_refused(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site()
    first = await site.caller(http, "alice").call("list_repos")
    key, url, _ = url_request(first)
    await browser_connects(site.flows, site.vault, flow_id_of(url), site.auth.principal("alice"), "gho_alice")
    stolen = await site.caller(http, "bob").rpc(
        "list_repos", state=first["requestState"], responses={key: ACCEPT}
    )
    assert stolen["error"]["code"] == -32602
    assert "gho_alice" not in str(stolen)


async def test_a_flow_id_presented_by_another_principal_is_not_owner(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    """Defence in depth: even a state sealed for bob that names alice's flow gets nothing."""
    site = await make_site()
    first = await site.caller(http, "alice").call("list_repos")
    key, url, _ = url_request(first)
    alice = site.auth.principal("alice")
    await browser_connects(site.flows, site.vault, flow_id_of(url), alice, "gho_alice")

    bob = site.auth.principal("bob")
    record = FlowRecord(steps={"mcp_elicit.connect-github": [flow_id_of(url), url]})
    bound = bound_principal(bob, "kit-client")  # what the server binds bob's requests to
    forged = site.server.sealer.seal(
        record.to_payload(), RequestBinding("tools/call", "list_repos", args_digest({}), bound)
    )
    result = await site.caller(http, "bob").call("list_repos", state=forged, responses={key: ACCEPT})
    assert result["isError"] is True
    assert "cannot be completed for the signed-in account" in text_of(result)
    assert "gho_alice" not in str(result)


async def test_invalid_grant_on_refresh_starts_a_new_url_flow(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site()
    owner = site.auth.principal("alice")
    await site.vault.put_connection(
        owner, "github", access_token="gho_old", refresh_token="ghr_revoked", expires_at=time.time() - 5
    )
    site.auth.token_status, site.auth.token_body = 400, {"error": "invalid_grant"}
    result = await site.caller(http, "alice").call("list_repos")
    _, url, _ = url_request(result)
    assert url.startswith(f"{site.base}/connect/")
    assert site.auth.token_requests == 1  # the real refresh-token grant ran against our endpoint
    stored = await site.vault.get_connection(owner, "github")
    assert stored is not None
    assert stored.status == "needs_reauthorization"
    assert "gho_old" not in str(result)
    assert "ghr_revoked" not in str(result)


async def test_transient_refresh_failure_is_a_clear_tool_error(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site()
    owner = site.auth.principal("alice")
    await site.vault.put_connection(
        owner, "github", access_token="gho_old", refresh_token="ghr_ok", expires_at=time.time() - 5
    )
    site.auth.token_status, site.auth.token_body = 503, {"error": "temporarily_unavailable"}
    result = await site.caller(http, "alice").call("list_repos")
    assert result["isError"] is True
    assert "could not be refreshed right now" in text_of(result)
    assert "gho_old" not in str(result)


async def test_existing_connection_without_the_requested_scopes_connects_again(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site()
    owner = site.auth.principal("alice")
    await site.vault.put_connection(
        owner, "github", access_token="gho_narrow", scopes=["repo"], expires_in=3600
    )
    first = await site.caller(http, "alice").call("scoped")
    key, url, _ = url_request(first)
    assert key.startswith("connect-github-")
    assert key.endswith("-0")
    assert (await site.flows.get(flow_id_of(url))).scopes == ("repo", "gist")


async def test_secret_happy_path(make_site: SiteFactory, http: httpx.AsyncClient) -> None:
    site = await make_site()
    alice = site.caller(http, "alice")
    first = await alice.call("summarize", {"text": "hello world"})
    key, url, message = url_request(first)
    assert key == "secret-openai_api_key-0"
    assert url == f"{site.base}/secret/{flow_id_of(url)}"
    assert "Your OpenAI API key" in message
    flow = await site.flows.get(flow_id_of(url))
    assert (flow.kind, flow.provider, flow.description) == ("secret", "openai_api_key", "Your OpenAI API key")

    value = "sk-test-very-secret-value"
    owner = site.auth.principal("alice")
    await browser_enters_secret(site.flows, site.vault, flow_id_of(url), owner, "openai_api_key", value)
    done = await alice.call(
        "summarize", {"text": "hello world"}, state=first["requestState"], responses={key: ACCEPT}
    )
    assert text_of(done) == f"summary of 11 characters with key {fp(value)}"
    assert value not in str(done)

    again = await alice.call("summarize", {"text": "hi"})
    assert text_of(again) == f"summary of 2 characters with key {fp(value)}"


async def test_client_without_url_elicitation_gets_required_capabilities(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site()
    alice = site.caller(http, "alice")
    answer = await alice.rpc("list_repos", capabilities=FORM_CAPS)
    assert answer["error"]["code"] == -32021
    assert answer["error"]["data"]["requiredCapabilities"] == {"elicitation": {"url": {}}}
    # No flow was created for a client that could never open it: the cap is untouched.
    for _ in range(3):
        assert (await alice.call("list_repos"))["resultType"] == "input_required"


async def test_too_many_pending_flows_is_a_tool_error(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site()
    alice = site.caller(http, "alice")
    for _ in range(3):  # the store's default cap
        assert (await alice.call("list_repos"))["resultType"] == "input_required"
    result = await alice.call("list_repos")
    assert result["isError"] is True
    assert "Too many unfinished links" in text_of(result)
    # Another user is not affected.
    assert (await site.caller(http, "bob").call("list_repos"))["resultType"] == "input_required"


async def test_unknown_provider_is_a_clear_error(make_site: SiteFactory, http: httpx.AsyncClient) -> None:
    site = await make_site()
    result = await site.caller(http, "alice").call("gitlab")
    assert result["isError"] is True
    assert "'gitlab'" in text_of(result)


async def test_a_form_question_before_the_connection(make_site: SiteFactory, http: httpx.AsyncClient) -> None:
    site = await make_site(hold=0.3)
    alice = site.caller(http, "alice")
    first = await alice.call("form_then_connect")
    ((form_key, _),) = first["inputRequests"].items()
    second = await alice.call(
        "form_then_connect",
        state=first["requestState"],
        responses={form_key: {"action": "accept", "content": {"org": "acme"}}},
    )
    key, url, _ = url_request(second)
    third = await alice.call("form_then_connect", state=second["requestState"], responses={key: ACCEPT})
    key2, url2, _ = url_request(third)
    assert url2 == url
    await browser_connects(site.flows, site.vault, flow_id_of(url), site.auth.principal("alice"), "gho_org")
    done = await alice.call("form_then_connect", state=third["requestState"], responses={key2: ACCEPT})
    assert text_of(done) == f"acme: {fp('gho_org')}"


async def test_questions_after_a_completed_connection(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site(hold=0.3)
    alice = site.caller(http, "alice")
    first = await alice.call("connect_then_form")
    key, url, _ = url_request(first)
    await browser_connects(site.flows, site.vault, flow_id_of(url), site.auth.principal("alice"), "gho_then")
    second = await alice.call("connect_then_form", state=first["requestState"], responses={key: ACCEPT})
    ((form_key, form),) = second["inputRequests"].items()
    assert form["params"]["message"] == "Which repository?"
    # The flow record may be purged by now: the completed step is in the sealed state.
    await site.flows.expire_old(now=time.time() + 10 * 3600)
    with pytest.raises(FlowNotFound):
        await site.flows.get(flow_id_of(url))
    done = await alice.call(
        "connect_then_form",
        state=second["requestState"],
        responses={form_key: {"action": "accept", "content": {"repo": "alpha"}}},
    )
    assert text_of(done) == f"alpha: {fp('gho_then')}"


async def test_a_reduced_grant_ends_the_call_clearly_and_does_not_loop(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site(hold=0.3)
    owner = site.auth.principal("alice")
    alice = site.caller(http, "alice")
    first = await alice.call("scoped")
    key, url, _ = url_request(first)
    flow_id = flow_id_of(url)
    assert (await site.flows.get(flow_id)).scopes == ("repo", "gist")
    # The user unticked "gist" at the provider: the callback stores what was granted.
    await site.flows.begin(flow_id, owner)
    await site.vault.put_connection(
        owner, "github", access_token="gho_narrow", scopes=["repo"], expires_in=3600
    )
    await site.flows.complete(flow_id, owner=owner)

    done = await alice.call("scoped", state=first["requestState"], responses={key: ACCEPT})
    assert done["resultType"] == "complete"  # an outcome, not another link
    assert done["isError"] is True
    assert text_of(done) == (
        "Your GitHub account was connected, but GitHub did not grant gist, which this needs. "
        "Run the tool again and allow it on GitHub's page."
    )
    assert "gho_narrow" not in str(done)
    # Stored as granted: a tool that needs no particular scope uses it.
    listed = await alice.call("list_repos")
    assert listed["structuredContent"]["token_fingerprint"] == fp("gho_narrow")
    # Calling again gives the user one new chance to grant it (and asks for what is held too).
    again = await alice.call("scoped")
    _, url2, _ = url_request(again)
    assert url2 != url
    assert (await site.flows.get(flow_id_of(url2))).scopes == ("repo", "gist")


async def test_a_scope_upgrade_keeps_asking_for_what_was_granted(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site()
    owner = site.auth.principal("alice")
    await site.vault.put_connection(
        owner, "github", access_token="gho_wide", scopes=["repo", "read:user"], expires_in=3600
    )
    first = await site.caller(http, "alice").call("scoped")
    _, url, _ = url_request(first)
    # The new grant replaces the old one: asking only for the missing scope would lose read:user.
    assert (await site.flows.get(flow_id_of(url))).scopes == ("repo", "gist", "read:user")


async def test_a_stored_connection_the_vault_cannot_open_is_a_clear_tool_error(
    make_site: SiteFactory, http: httpx.AsyncClient, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The row was sealed under a key this server no longer has (a key removed from the ring too
    # early, or a row copied from another deployment): the vault refuses it as corrupt.
    storage = sqlite_storage(tmp_path)
    retired = KeyRing.generate_secret()
    storage.test_vault = lambda: Vault.sqlite(tmp_path / "vault.db", keys=[retired])
    site = await make_site(storage=storage)
    owner = site.auth.principal("alice")
    await site.vault.put_connection(owner, "github", access_token="gho_sealed_elsewhere", expires_in=3600)
    with caplog.at_level(logging.ERROR, logger="mcp_elicit.connect"):
        result = await site.caller(http, "alice").call("list_repos")
    assert result["isError"] is True
    text = text_of(result)
    assert "Your stored GitHub connection could not be read" in text
    assert "operator" in text
    assert "gho_sealed_elsewhere" not in str(result)
    assert any("cannot be opened" in r.getMessage() for r in caplog.records)
