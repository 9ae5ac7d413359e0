"""The demo's stand-in OAuth server, over real HTTP on 127.0.0.1: what the kit relies on holds."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from mcp_elicit.demo.ci_provider import DemoCIProvider, DemoClient
from tests.helpers import InProcessServer

REDIRECT = "http://127.0.0.1:9/oauth/ci/callback"


@pytest.fixture(scope="module")
def provider() -> DemoCIProvider:
    return DemoCIProvider("http://placeholder")


@pytest.fixture(scope="module")
def served(provider: DemoCIProvider) -> Iterator[tuple[str, DemoClient]]:
    with InProcessServer(provider) as server:
        provider.issuer = server.base
        yield server.base, provider.register(REDIRECT)


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def _authorize_form(client: DemoClient, challenge: str, state: str = "s-1") -> dict[str, str]:
    return {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": REDIRECT,
        "scope": "builds:read",
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }


def _code(base: str, client: DemoClient, challenge: str, decision: str = "allow") -> dict[str, list[str]]:
    form = {**_authorize_form(client, challenge), "decision": decision}
    response = httpx.post(f"{base}/authorize", data=form)
    assert response.status_code == 303
    location = response.headers["location"]
    assert location.startswith(REDIRECT + "?")
    return parse_qs(urlsplit(location).query)


def _token(base: str, client: DemoClient, **form: str) -> httpx.Response:
    return httpx.post(f"{base}/token", data=form, auth=(client.client_id, client.client_secret))


def test_metadata_advertises_pkce_and_iss(served: tuple[str, DemoClient]) -> None:
    base, _ = served
    metadata = httpx.get(f"{base}/.well-known/oauth-authorization-server").json()
    assert metadata["issuer"] == base
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["authorization_response_iss_parameter_supported"] is True


def test_code_flow_with_pkce_refresh_and_revocation(served: tuple[str, DemoClient]) -> None:
    base, client = served
    verifier, challenge = _pkce()
    page = httpx.get(f"{base}/authorize", params=_authorize_form(client, challenge))
    assert page.status_code == 200
    assert "DEMO ONLY" in page.text
    assert "form-action 'self' http://127.0.0.1:9;" in page.headers["content-security-policy"]
    answer = _code(base, client, challenge)
    assert answer["state"] == ["s-1"]
    assert answer["iss"] == [base]
    grant = {"grant_type": "authorization_code", "code": answer["code"][0], "redirect_uri": REDIRECT}
    tokens = _token(base, client, **grant, code_verifier=verifier).json()
    assert tokens["token_type"] == "Bearer"
    assert tokens["refresh_token"]
    api = f"{base}/api/builds"
    assert httpx.get(api, headers={"authorization": f"Bearer {tokens['access_token']}"}).status_code == 200
    # The code is single use.
    assert _token(base, client, **grant, code_verifier=verifier).json() == {"error": "invalid_grant"}
    # Refresh rotates: the old refresh and access tokens stop working.
    fresh = _token(base, client, grant_type="refresh_token", refresh_token=tokens["refresh_token"]).json()
    assert fresh["access_token"] != tokens["access_token"]
    assert (
        _token(base, client, grant_type="refresh_token", refresh_token=tokens["refresh_token"]).status_code
        == 400
    )
    assert httpx.get(api, headers={"authorization": f"Bearer {tokens['access_token']}"}).status_code == 401
    # RFC 7009 revocation ends the grant.
    revoked = httpx.post(
        f"{base}/revoke",
        data={"token": fresh["refresh_token"]},
        auth=(client.client_id, client.client_secret),
    )
    assert revoked.status_code == 200
    assert httpx.get(api, headers={"authorization": f"Bearer {fresh['access_token']}"}).status_code == 401


def test_pkce_is_enforced(served: tuple[str, DemoClient]) -> None:
    base, client = served
    _, challenge = _pkce()
    answer = _code(base, client, challenge)
    grant = {"grant_type": "authorization_code", "code": answer["code"][0], "redirect_uri": REDIRECT}
    assert _token(base, client, **grant, code_verifier=secrets.token_urlsafe(48)).status_code == 400
    no_pkce = {k: v for k, v in _authorize_form(client, challenge).items() if not k.startswith("code_")}
    assert httpx.get(f"{base}/authorize", params=no_pkce).status_code == 400


def test_deny_answers_access_denied_with_iss(served: tuple[str, DemoClient]) -> None:
    base, client = served
    answer = _code(base, client, _pkce()[1], decision="deny")
    assert answer["error"] == ["access_denied"]
    assert answer["iss"] == [base]
    assert "code" not in answer


def test_unregistered_redirect_uri_is_never_redirected_to(served: tuple[str, DemoClient]) -> None:
    base, client = served
    form = {
        **_authorize_form(client, _pkce()[1]),
        "redirect_uri": "https://evil.example/cb",
        "decision": "allow",
    }
    for response in (httpx.get(f"{base}/authorize", params=form), httpx.post(f"{base}/authorize", data=form)):
        assert response.status_code == 400
        assert "location" not in response.headers
        assert "evil.example" not in response.text


def test_wrong_client_secret_and_hostile_input(served: tuple[str, DemoClient]) -> None:
    base, client = served
    bad = httpx.post(
        f"{base}/token", data={"grant_type": "authorization_code"}, auth=(client.client_id, "nope")
    )
    assert bad.status_code == 401
    assert httpx.post(f"{base}/token", content=b"x" * 20000).status_code == 413
    assert httpx.delete(f"{base}/token").status_code == 405
    page = httpx.get(f"{base}/authorize", params={"client_id": "<script>"})
    assert page.status_code == 400
    assert not re.search("<script>", page.text)


def test_the_consent_pages_own_form_completes_the_request(served: tuple[str, DemoClient]) -> None:
    """What a browser posts is what the page's form holds (hidden fields plus the button)."""
    from mcp_elicit.cli.html_page import parse_page

    base, client = served
    page = parse_page(httpx.get(f"{base}/authorize", params=_authorize_form(client, _pkce()[1])).text)
    found = page.button("Allow")
    assert found is not None
    form, allow = found
    response = httpx.post(f"{base}{form.action}", data=form.data(allow))
    assert response.status_code == 303
    assert "code" in parse_qs(urlsplit(response.headers["location"]).query)


def test_the_consent_page_names_the_application_it_was_registered_as(
    served: tuple[str, DemoClient], provider: DemoCIProvider
) -> None:
    base, _ = served
    named, unnamed, hostile = (
        DemoClient("named", "s", (REDIRECT,), "Demo issue tracker (mcp-elicit)"),
        DemoClient("unnamed", "s", (REDIRECT,)),
        DemoClient("hostile", "s", (REDIRECT,), "<script>alert(1)</script>\u202eppa " + "x" * 300),
    )
    for client in (named, unnamed, hostile):
        provider.add_client(client)
    _, challenge = _pkce()

    def consent(client: DemoClient) -> str:
        page = httpx.get(f"{base}/authorize", params=_authorize_form(client, challenge))
        assert page.status_code == 200
        assert "<title>DEMO ONLY · Demo CI service</title>" in page.text
        assert "An application" not in page.text
        return page.text

    assert (
        "The application <strong><bdi>Demo issue tracker (mcp-elicit)</bdi></strong> "
        '<span class="small">(client <code>named</code>)</span> asks for <strong>builds:read</strong>'
    ) in consent(named)
    assert "The application registered without a name" in consent(unnamed)
    shown = consent(hostile)
    assert "<script>alert" not in shown
    assert "\u202e" not in shown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;ppa " in shown
    assert "x" * 80 not in shown  # cut short
    assert "…</bdi>" in shown
