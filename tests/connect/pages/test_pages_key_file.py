"""The pages' cookies follow a key file as ``requestState`` does: a key added in front seals new
cookies, a key removed from the file stops opening the cookies it sealed (a leaked key must not
keep signing anyone in). Real uvicorn on 127.0.0.1, real key file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
from pages_support import CI, running_pages
from tests.oidc_provider import OidcProvider

from mcp_elicit import Server
from mcp_elicit.connect.identity import DevelopmentIdentity
from mcp_elicit.connect.kit import ConnectKit
from mcp_elicit.connect.pages import DevelopmentLogin
from mcp_elicit.connect.pages.cookies import CookiePolicy
from mcp_elicit.connect.pages.sealing import CookieSealer
from mcp_elicit.connect.pages.session import SessionCookies
from mcp_elicit.connect.vault import Vault
from mcp_elicit.state import KeyRing
from mcp_elicit.state.key_file import KeyFile


def write_keys(path: Path, *secrets: str) -> None:
    path.write_text("".join(f"{secret}\n" for secret in secrets))
    os.chmod(path, 0o600)
    stamp = path.stat().st_mtime + 1 + len(secrets)  # a new mtime, whatever the clock's resolution
    os.utime(path, (stamp, stamp))


def session_cookie(secret: str, principal: object, clock: object) -> str:
    """A session cookie for ``principal`` sealed under ``secret`` alone (what a holder of that key
    can forge)."""
    cookies = SessionCookies(
        CookieSealer(KeyRing.from_secrets([secret]), clock=clock),  # type: ignore[arg-type]
        CookiePolicy(False),
        3600,
        clock,  # type: ignore[arg-type]
    )
    session = cookies.new(principal, "Alice Example", "alice@example.test")  # type: ignore[arg-type]
    return cookies.set_cookie(session)[1].decode().split(";", 1)[0]


async def test_a_key_removed_from_the_file_stops_opening_cookies(
    tmp_path: Path, idp: OidcProvider, third_party: OidcProvider
) -> None:
    old, new = KeyRing.generate_secret(), KeyRing.generate_secret()
    path = tmp_path / "state-keys"
    write_keys(path, old)
    keys = KeyFile(path, check_interval=0)
    async with running_pages(tmp_path, idp, third_party, keys=keys) as pages:
        flow = await pages.connect_flow("alice")
        alice = pages.principal("alice")
        under_old = {"cookie": session_cookie(old, alice, pages.clock)}
        under_new = {"cookie": session_cookie(new, alice, pages.clock)}
        async with httpx.AsyncClient(base_url=pages.base, follow_redirects=False, timeout=15) as http:

            async def signed_in(headers: dict[str, str]) -> bool:
                response = await http.get(f"/connect/{flow.id}", headers=headers)
                assert response.status_code == 200, response.text
                return "Signed in as" in response.text

            assert await signed_in(under_old)
            assert not await signed_in(under_new)

            write_keys(path, new, old)  # rotation, step one: the new key seals, the old one opens
            assert await signed_in(under_old)
            assert await signed_in(under_new)
            started = await http.get(f"/login?next=/connect/{flow.id}")
            sealed = [v for k, v in started.cookies.items() if k.startswith("mcp-elicit-login")]
            assert sealed, started.headers
            name = next(k for k in started.cookies if k.startswith("mcp-elicit-login"))
            assert CookieSealer(KeyRing.from_secrets([new]), clock=pages.clock).open(name, sealed[0])

            write_keys(path, new)  # the old key leaves the file (leaked, say)
            assert not await signed_in(under_old)
            assert await signed_in(under_new)


async def test_the_kit_gives_the_pages_the_servers_key_file(tmp_path: Path) -> None:
    path = tmp_path / "state-keys"
    write_keys(path, KeyRing.generate_secret())
    identity = DevelopmentIdentity(i_understand_this_is_not_secure=True)
    kit = ConnectKit(
        base_url="http://127.0.0.1:9",
        identity=identity,
        vault=Vault.sqlite(tmp_path / "vault.db", keys=[KeyRing.generate_secret()]),
        login=DevelopmentLogin(identity),
        development=True,
    )
    kit.oauth_provider(CI)
    server = Server("key-file-kit", state_keys=KeyFile(path, check_interval=0), connect=kit)
    app: Any = server.asgi()  # the kit's ConnectApp: /mcp and the pages
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9") as http:
            flow = await kit.flows.create(identity.principal, "connect", "ci", ["builds:read"])
            new = KeyRing.generate_secret()
            write_keys(path, new)  # the server's state key file changes while it runs
            page = await http.get("/login", params={"next": f"/connect/{flow.id}"})
            assert page.status_code == 200, page.text
            ((name, value),) = page.cookies.items()
            assert CookieSealer(KeyRing.from_secrets([new])).open(name, value) is not None
    finally:
        await kit.aclose()
