"""Every response carries the security headers; methods, paths and bad input get clear 4xx pages,
never a traceback."""

from __future__ import annotations

import httpx
import pytest
from pages_support import SECURITY_HEADERS, Harness


def assert_secure(response: httpx.Response) -> None:
    for name, value in SECURITY_HEADERS.items():
        assert response.headers.get(name) == value, (name, response.status_code, response.request.url)
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert "frame-ancestors 'none'" in csp
    assert "base-uri 'none'" in csp
    assert "unsafe-inline" not in csp
    assert "script-src" not in csp
    assert "form-action 'self'" in csp
    if response.status_code != 303:
        assert response.headers["content-type"] == "text/html; charset=utf-8"
        assert "Traceback" not in response.text


async def test_every_response_has_the_security_headers(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow()
    cookie = {"cookie": pages.cookie("alice")}
    responses = [
        await http.get(f"/connect/{flow.id}"),
        await http.get(f"/connect/{flow.id}", headers=cookie),
        await http.get(f"/secret/{'x' * 43}"),
        await http.get("/done"),
        await http.get("/nowhere"),
        await http.put(f"/connect/{flow.id}"),
        await http.get(f"/login?next=/connect/{flow.id}"),
        await http.get("/login?next=https://evil.example/"),
        await http.get("/login/callback?state=abc&code=x"),
        await http.get("/oauth/github/callback?state=abc&code=x"),
        await http.post(f"/connect/{flow.id}", data={"csrf": "nope"}, headers=cookie),
    ]
    for response in responses:
        assert_secure(response)
    # The confirmation page's form-action also allows the provider, for the 303 that follows
    # "Continue" (see the browser tests); the other pages' forms stay on this site.
    assert pages.third_party.issuer in responses[1].headers["content-security-policy"]
    assert pages.third_party.issuer not in responses[0].headers["content-security-policy"]


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"])
async def test_other_methods_are_405_with_allow(pages: Harness, http: httpx.AsyncClient, method: str) -> None:
    flow = await pages.connect_flow()
    response = await http.request(method, f"/connect/{flow.id}")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST"
    assert (await http.request(method, "/done")).headers["allow"] == "GET"
    assert (await http.get("/logout")).headers["allow"] == "POST"
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_unknown_paths_and_malformed_ids_are_the_generic_404(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    unknown = await http.get(f"/connect/{'A' * 43}")
    assert unknown.status_code == 404
    for path in (
        "/connect/short",
        "/connect/" + "A" * 44,
        "/secret/%00",
        "/connect/",
        "/oauth/nope/callback",
        "/",
    ):
        response = await http.get(path)
        assert response.status_code == 404, path
    assert (await http.get("/connect/short")).text == unknown.text


async def test_bad_input_gets_clear_4xx(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow()
    assert (await http.get(f"/connect/{flow.id}?" + "a=1&" * 5000)).status_code == 414
    assert (await http.get(f"/login?next=/connect/{flow.id}&next=/connect/{flow.id}")).status_code == 400
    assert (await http.get("/login/callback?" + "&".join(f"p{i}=1" for i in range(40)))).status_code == 400
    assert (await http.get("/" + "a" * 3000)).status_code == 414
    # Garbage cookies are "not signed in", not an error.
    for junk in ("mcp-elicit-session=%%%", "mcp-elicit-session=" + "A" * 5000, "a" * 20000, "=;=;;"):
        response = await http.get(f"/connect/{flow.id}", headers={"cookie": junk})
        assert response.status_code == 200
        assert "Sign in" in response.text
