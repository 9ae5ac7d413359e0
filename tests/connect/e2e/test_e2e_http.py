"""Attacks on the running full stack, at the HTTP level: flows created by real MCP calls on the
kit server process, sessions from a real sign-in at the idp, authorizations at the real third
party. Each refused request must leave the flow record and the vault as they were.

Covered: missing / wrong / cross-origin CSRF; a replayed callback and a reused record id; a
``state`` (and its transaction cookie) reused against a newer code; a callback under another
provider's path (two providers on the same issuer); expired record ids and ``state``s (an
instance whose clock is moved 601 s ahead); open-redirect attempts on ``next``."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from e2e_support import (
    Deployment,
    KitServer,
    Storage,
    TokenFor,
    flow_id_of,
    flow_status,
    form_csrf,
    http_continue,
    http_sign_in,
    mcp_call,
    mcp_rpc,
    path_of,
    result_text,
    set_cookies,
    url_question,
)
from tests.oidc_provider import OidcProvider, login_over_http

from mcp_elicit.connect.flows import FlowStore
from mcp_elicit.connect.vault import Vault


async def start_flow(
    http: httpx.AsyncClient, server: KitServer, token: str, tool: str = "whoami_on_github"
) -> tuple[dict[str, Any], str, str]:
    """The first round of ``tool``: (result, question key, flow id)."""
    result = await mcp_call(http, server.mcp_url, token, tool)
    key, url = url_question(result)
    assert url.startswith(server.base_url + "/")
    return result, key, flow_id_of(url)


async def retry(
    http: httpx.AsyncClient, server: KitServer, token: str, first: dict[str, Any], key: str
) -> dict[str, Any]:
    return await mcp_call(
        http,
        server.mcp_url,
        token,
        "whoami_on_github",
        state=first["requestState"],
        responses={key: {"action": "accept"}},
    )


async def test_missing_and_wrong_csrf_change_nothing(
    deployment: Deployment,
    kit_server: KitServer,
    http: httpx.AsyncClient,
    flows: FlowStore,
    vault: Vault,
    token_for: TokenFor,
) -> None:
    token = await token_for("alice")
    _, _, flow_id = await start_flow(http, kit_server, token)
    _, _, secret_id = await start_flow(http, kit_server, token, "store_key")
    session = await http_sign_in(http, kit_server, "alice", f"/connect/{flow_id}")
    page = await http.get(f"{kit_server.own_url}/connect/{flow_id}", headers={"cookie": session})
    good = form_csrf(page.text, f"/connect/{flow_id}")
    secret_page = await http.get(f"{kit_server.own_url}/secret/{secret_id}", headers={"cookie": session})
    other_route = form_csrf(secret_page.text, f"/secret/{secret_id}")  # valid, for another form
    bobs_session = await http_sign_in(http, kit_server, "bob", f"/connect/{flow_id}")

    attempts: list[tuple[dict[str, str], dict[str, str]]] = [
        ({"other": "1"}, {"cookie": session, "origin": kit_server.base_url}),  # no token
        ({"csrf": ""}, {"cookie": session, "origin": kit_server.base_url}),
        ({"csrf": secrets.token_urlsafe(32)}, {"cookie": session, "origin": kit_server.base_url}),
        ({"csrf": other_route}, {"cookie": session, "origin": kit_server.base_url}),
        ({"csrf": good}, {"cookie": bobs_session, "origin": kit_server.base_url}),  # another session
        ({"csrf": good}, {"cookie": session, "origin": "http://127.0.0.1:9"}),  # cross-origin
        ({"csrf": good}, {"cookie": session, "sec-fetch-site": "cross-site"}),
        ({"csrf": good}, {"origin": kit_server.base_url}),  # no session at all
    ]
    for form, headers in attempts:
        response = await http.post(f"{kit_server.own_url}/connect/{flow_id}", data=form, headers=headers)
        assert response.status_code == 403, (form, headers, response.status_code)
        assert "location" not in response.headers
        assert not [n for n in set_cookies(response) if n.startswith("mcp-elicit-tx-")]
        assert await flow_status(flows, flow_id) == "pending"
    assert await flow_status(flows, secret_id) == "pending"
    assert "missing or wrong CSRF token" in deployment.logs()

    # The same session with the right token proceeds: the refusals were about the token.
    authorize, _ = await http_continue(http, kit_server, session, flow_id)
    assert authorize.startswith(deployment.third_party.endpoint("authorization"))
    assert await flow_status(flows, flow_id) == "in_progress"
    assert await vault.get_connection(deployment.principal("alice"), "github") is None


async def test_replayed_callback_and_reused_record_id_change_nothing(
    deployment: Deployment,
    kit_server: KitServer,
    http: httpx.AsyncClient,
    flows: FlowStore,
    vault: Vault,
    token_for: TokenFor,
) -> None:
    token = await token_for("alice")
    alice = deployment.principal("alice")
    first, key, flow_id = await start_flow(http, kit_server, token)
    session = await http_sign_in(http, kit_server, "alice", f"/connect/{flow_id}")
    page = await http.get(f"{kit_server.own_url}/connect/{flow_id}", headers={"cookie": session})
    stale_csrf = form_csrf(page.text, f"/connect/{flow_id}")
    authorize, tx = await http_continue(http, kit_server, session, flow_id)
    callback = path_of(await login_over_http(authorize, "alice"))
    done = await http.get(kit_server.own_url + callback, headers={"cookie": f"{session}; {tx}"})
    assert done.status_code == 303
    assert done.headers["location"] == "/done"
    stored = await vault.get_connection(alice, "github")
    assert stored is not None
    assert await flow_status(flows, flow_id) == "completed"

    # The callback again: with the (cleared, but kept by an attacker) transaction cookie, and without.
    for cookies in (f"{session}; {tx}", session, tx, ""):
        replay = await http.get(kit_server.own_url + callback, headers={"cookie": cookies})
        assert replay.status_code != 303, (cookies, replay.text)
        assert "location" not in replay.headers
    # The used record id: shown as used; its form cannot be posted again, nor under another kind.
    again = await http.get(f"{kit_server.own_url}/connect/{flow_id}", headers={"cookie": session})
    assert again.status_code == 409
    assert "already been used" in again.text
    repost = await http.post(
        f"{kit_server.own_url}/connect/{flow_id}",
        data={"csrf": stale_csrf},
        headers={"cookie": session, "origin": kit_server.base_url},
    )
    assert repost.status_code == 409
    assert not [n for n in set_cookies(repost) if n.startswith("mcp-elicit-tx-")]
    other_kind = await http.get(f"{kit_server.own_url}/secret/{flow_id}", headers={"cookie": session})
    assert other_kind.status_code == 404

    after = await vault.get_connection(alice, "github")
    assert after is not None
    assert (after.access_token, after.refresh_token) == (stored.access_token, stored.refresh_token)
    assert await flow_status(flows, flow_id) == "completed"

    # And the MCP client's retry finishes the tool with the connection made once.
    finished = await retry(http, kit_server, token, first, key)
    assert finished["resultType"] == "complete", finished
    assert result_text(finished) == "GitHub (test) account: alice"
    assert stored.access_token not in deployment.logs()
    assert stored.access_token not in str(finished)


async def test_state_reused_against_a_newer_code_changes_nothing(
    deployment: Deployment,
    kit_server: KitServer,
    http: httpx.AsyncClient,
    flows: FlowStore,
    vault: Vault,
    token_for: TokenFor,
) -> None:
    """An old transaction (state + its sealed cookie, already used) with the code of a newer
    authorization: the PKCE verifier is the old one, so the code is refused at the provider."""
    token = await token_for("alice")
    alice = deployment.principal("alice")
    _, _, old_id = await start_flow(http, kit_server, token)
    session = await http_sign_in(http, kit_server, "alice", f"/connect/{old_id}")
    authorize, old_tx = await http_continue(http, kit_server, session, old_id)
    old_callback = await login_over_http(authorize, "alice")
    old_state = dict(httpx.URL(old_callback).params)["state"]
    used = await http.get(
        kit_server.own_url + path_of(old_callback), headers={"cookie": f"{session}; {old_tx}"}
    )
    assert used.status_code == 303
    await vault.delete_connection(alice, "github")  # alice disconnects; a new flow starts

    _, _, new_id = await start_flow(http, kit_server, token)
    new_authorize, _new_tx = await http_continue(http, kit_server, session, new_id)
    new_params = dict(httpx.URL(await login_over_http(new_authorize, "alice")).params)
    forged = {**new_params, "state": old_state}
    response = await http.get(
        f"{kit_server.own_url}/oauth/github/callback?{urlencode(forged)}",
        headers={"cookie": f"{session}; {old_tx}"},
    )
    assert response.status_code != 303, response.text
    assert await vault.get_connection(alice, "github") is None
    assert await flow_status(flows, new_id) == "in_progress"
    assert await flow_status(flows, old_id) == "completed"


async def test_callback_under_another_providers_path_is_refused(
    deployment: Deployment,
    kit_server: KitServer,
    http: httpx.AsyncClient,
    flows: FlowStore,
    vault: Vault,
    token_for: TokenFor,
) -> None:
    """github and gitlab are both configured (both at the same issuer, so ``iss`` cannot tell
    them apart): github's real callback requested under gitlab's path is a mix-up, refused."""
    token = await token_for("alice")
    alice = deployment.principal("alice")
    first, key, flow_id = await start_flow(http, kit_server, token)
    session = await http_sign_in(http, kit_server, "alice", f"/connect/{flow_id}")
    authorize, tx = await http_continue(http, kit_server, session, flow_id)
    callback = path_of(await login_over_http(authorize, "alice"))
    assert callback.startswith("/oauth/github/callback?")
    mixed = callback.replace("/oauth/github/", "/oauth/gitlab/", 1)
    response = await http.get(kit_server.own_url + mixed, headers={"cookie": f"{session}; {tx}"})
    assert response.status_code == 502, response.text
    assert "location" not in response.headers
    for provider in ("github", "gitlab"):
        assert await vault.get_connection(alice, provider) is None
    assert await flow_status(flows, flow_id) == "failed"  # fails closed: the flow is over
    assert "wrong-provider" in deployment.logs()
    # The real callback afterwards cannot resurrect it (the transaction cookie was for one use,
    # and the flow is failed).
    late = await http.get(kit_server.own_url + callback, headers={"cookie": f"{session}; {tx}"})
    assert late.status_code != 303
    assert await vault.get_connection(alice, "github") is None
    ended = await retry(http, kit_server, token, first, key)
    assert ended["resultType"] == "complete"
    assert ended.get("isError") is True, ended


@pytest.mark.parametrize(
    "next_value",
    [
        "https://evil.example/connect/" + "A" * 43,
        "//evil.example/connect/" + "A" * 43,
        "/\\evil.example/connect/" + "A" * 43,
        "http://127.0.0.1:9/connect/" + "A" * 43,
        "/connect/" + "A" * 43 + "/../../../evil",
        "/done",
    ],
)
async def test_open_redirect_attempts_are_refused(
    kit_server: KitServer, http: httpx.AsyncClient, next_value: str
) -> None:
    login = await http.get(f"{kit_server.own_url}/login?{urlencode({'next': next_value})}")
    assert login.status_code == 400
    assert "location" not in login.headers
    assert "set-cookie" not in login.headers
    logout = await http.post(
        f"{kit_server.own_url}/logout", data={"next": next_value}, headers={"origin": kit_server.base_url}
    )
    assert logout.status_code == 200
    assert "location" not in logout.headers


# ------------------------------------------------------------------------------ expiry


@pytest.fixture
def expiring(
    idp: OidcProvider, third_party: OidcProvider, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    """An instance of its own, whose clock the test moves ahead."""
    folder = tmp_path_factory.mktemp("kit-e2e-expiry")
    made, port = Deployment.create(idp, third_party, Storage("sqlite", dir=str(folder)), folder)
    made.start(port, hold=0.5)
    yield made
    made.stop()


async def test_expired_record_ids_and_state_change_nothing(
    expiring: Deployment, http: httpx.AsyncClient
) -> None:
    (server,) = expiring.servers
    token = await expiring.token("alice")
    alice = expiring.principal("alice")
    pending_first, pending_key, pending_id = await start_flow(http, server, token)
    _, _, started_id = await start_flow(http, server, token)
    session = await http_sign_in(http, server, "alice", f"/connect/{pending_id}")
    page = await http.get(f"{server.own_url}/connect/{pending_id}", headers={"cookie": session})
    csrf = form_csrf(page.text, f"/connect/{pending_id}")
    authorize, tx = await http_continue(http, server, session, started_id)
    callback = path_of(await login_over_http(authorize, "alice"))

    server.advance_clock()  # 601 s later: past every flow's and transaction's lifetime

    shown = await http.get(f"{server.own_url}/connect/{pending_id}", headers={"cookie": session})
    assert shown.status_code == 404
    assert "invalid or has expired" in shown.text
    posted = await http.post(
        f"{server.own_url}/connect/{pending_id}",
        data={"csrf": csrf},
        headers={"cookie": session, "origin": server.base_url},
    )
    assert posted.status_code in (403, 404, 409), posted.text
    assert not [n for n in set_cookies(posted) if n.startswith("mcp-elicit-tx-")]
    late = await http.get(server.own_url + callback, headers={"cookie": f"{session}; {tx}"})
    assert late.status_code == 400  # the transaction (its state) expired with its cookie
    assert "Nothing was changed" in late.text

    opened_flows, opened_vault = expiring.flows(), expiring.vault()
    try:
        assert await opened_vault.get_connection(alice, "github") is None
        statuses = [await opened_flows.get(flow_id) for flow_id in (pending_id, started_id)]
        assert [flow.status for flow in statuses] == ["pending", "in_progress"]  # by our clock...
        assert all(flow.expires < time.time() + 601 for flow in statuses)  # ...but past due there
    finally:
        await opened_flows.close()
        await opened_vault.close()

    # The MCP client's retry of the expired flow is refused: its sealed requestState has the
    # same lifetime as the flow (600 s), so the server says so before looking at the flow.
    ended = await mcp_rpc(
        http,
        server.mcp_url,
        token,
        "whoami_on_github",
        state=pending_first["requestState"],
        responses={pending_key: {"action": "accept"}},
    )
    assert ended.get("error", {}).get("data", {}).get("reason") == "invalid_request_state", ended
    # A fresh call starts a fresh flow (a new record id), which is not the expired one.
    fresh = await mcp_call(http, server.mcp_url, token, "whoami_on_github")
    assert flow_id_of(url_question(fresh)[1]) not in (pending_id, started_id)
