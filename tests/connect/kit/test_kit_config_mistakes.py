"""Mistakes a newcomer makes setting up the kit, each refused or reported in words that say what
to change: a base_url that is the MCP endpoint, a forgotten development=True, a provider's
missing setting, the kit served over stdio, and the URL run_http() says it serves."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from kit_sites import VAULT_KEY
from tests.helpers import Script, free_port
from tests.server_process import running_server

from mcp_elicit.client import Client
from mcp_elicit.connect.identity import DevelopmentIdentity, JWTIdentity
from mcp_elicit.connect.kit import ConnectKit
from mcp_elicit.connect.vault import Vault


@pytest.fixture
def vault() -> Vault:
    return Vault.sqlite(":memory:", keys=[VAULT_KEY])


@pytest.fixture
def dev() -> DevelopmentIdentity:
    return DevelopmentIdentity(i_understand_this_is_not_secure=True)


# ------------------------------------------------------------------------------ base_url


def test_a_base_url_ending_with_the_mcp_path_is_refused(vault: Vault, dev: DevelopmentIdentity) -> None:
    with pytest.raises(ValueError, match="root") as info:
        ConnectKit(base_url="http://127.0.0.1:8785/mcp", identity=dev, vault=vault, development=True)
    message = str(info.value)
    assert message.startswith("base_url is the server's root, not its MCP endpoint")
    assert "base_url='http://127.0.0.1:8785'" in message
    assert "'http://127.0.0.1:8785/mcp/mcp'" in message  # where it would have served MCP
    # A trailing slash, a deeper root, and another mcp_path: the same rule.
    for base_url, mcp_path, root in (
        ("http://127.0.0.1:8785/mcp/", "/mcp", "http://127.0.0.1:8785"),
        ("http://127.0.0.1:8785/app/mcp", "/mcp", "http://127.0.0.1:8785/app"),
        ("http://127.0.0.1:8785/api/v1", "/v1/", "http://127.0.0.1:8785/api"),
    ):
        with pytest.raises(ValueError, match=f"give base_url='{root}'"):
            ConnectKit(base_url=base_url, identity=dev, vault=vault, development=True, mcp_path=mcp_path)


def test_roots_that_only_look_alike_are_accepted(vault: Vault, dev: DevelopmentIdentity) -> None:
    for base_url in ("http://127.0.0.1:8785", "http://127.0.0.1:8785/app", "http://127.0.0.1:8785/my-mcp"):
        kit = ConnectKit(base_url=base_url, identity=dev, vault=vault, development=True)
        assert kit.resource == base_url + "/mcp"


def test_run_http_prints_the_url_it_really_serves(tmp_path: Path) -> None:
    # base_url with a path: MCP is served under it (/app/mcp), and the start-up line says so
    # (it said /mcp, which answered 404). The URL printed answers: 401, asking for a token.
    port = free_port()
    script = tmp_path / "served.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from mcp_elicit import Server
            from mcp_elicit.connect.identity import JWTIdentity
            from mcp_elicit.connect.kit import ConnectKit
            from mcp_elicit.connect.vault import Vault

            kit = ConnectKit(
                base_url="http://127.0.0.1:{port}/app",
                identity=JWTIdentity(
                    issuer="http://127.0.0.1:9/issuer",
                    jwks_url="http://127.0.0.1:9/jwks",
                    audience="http://127.0.0.1:{port}/app/mcp",
                ),
                vault=Vault.sqlite(":memory:", keys=[{VAULT_KEY!r}]),
                development=True,
            )
            Server("served", state_keys=[{VAULT_KEY!r}], connect=kit).run_http(port={port})
            """
        )
    )
    with running_server([sys.executable, str(script)], log=tmp_path / "served.log", port=port) as server:
        url = f"http://127.0.0.1:{port}/app/mcp"
        assert f"served 0.1.0: MCP over Streamable HTTP at {url}\n" in _banner(server.log_text)
        answer = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert answer.status_code == 401


def _banner(read: Callable[[], str]) -> str:
    """What the server printed, once its start-up line is there (printed just after it listens)."""
    deadline = time.monotonic() + 10
    while "Streamable HTTP at" not in (printed := read()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return printed


# ------------------------------------------------------------------------------ development


def test_loopback_http_without_development_says_to_pass_it(tmp_path: Path) -> None:
    identity = JWTIdentity(
        issuer="https://auth.example.com", jwks_url="https://auth.example.com/jwks", audience="x"
    )
    vault = Vault.sqlite(":memory:", keys=[VAULT_KEY])
    for base_url in ("http://127.0.0.1:8780", "http://localhost:8780", "http://[::1]:8780"):
        with pytest.raises(ValueError, match="base_url must use https, or pass development=True"):
            ConnectKit(base_url=base_url, identity=identity, vault=vault)
    # Elsewhere development=True would not help (it is refused off this machine): https it is.
    with pytest.raises(ValueError, match="https") as info:
        ConnectKit(base_url="http://mcp.example.com", identity=identity, vault=vault)
    assert str(info.value).startswith("base_url must use https (http is allowed only on a loopback host")
    assert "development=True" not in str(info.value)


# ------------------------------------------------------------------------------ providers


def test_a_providers_missing_settings_are_named(vault: Vault, dev: DevelopmentIdentity) -> None:
    kit = ConnectKit(base_url="http://127.0.0.1:9", identity=dev, vault=vault, development=True)
    given = {"authorize_url": "https://ci.example/authorize", "token_url": "https://ci.example/token"}
    with pytest.raises(TypeError, match=r"^oauth_provider\('ci'\): client_id missing"):
        kit.oauth_provider("ci", **given)
    with pytest.raises(TypeError, match=r"^oauth_provider\('ci'\): token_url and client_id missing"):
        kit.oauth_provider("ci", authorize_url="https://ci.example/authorize")
    assert kit.providers == {}


# ------------------------------------------------------------------------------ stdio

_STDIO_SERVER = """
from mcp_elicit import Context, Server
from mcp_elicit.connect.identity import DevelopmentIdentity
from mcp_elicit.connect.kit import ConnectKit
from mcp_elicit.connect.vault import Vault

kit = ConnectKit(
    base_url="http://127.0.0.1:9",
    identity=DevelopmentIdentity(i_understand_this_is_not_secure=True),
    vault=Vault.sqlite(":memory:", keys=[{key!r}]),
    development=True,
)
app = Server("over-stdio", state_keys=[{key!r}], connect=kit)


@app.tool()
async def summarize(ctx: Context) -> str:
    return await ctx.secret("model_api_key", "Your model provider's API key")


app.run()
"""


@pytest.fixture
def stdio_server(tmp_path: Path) -> Path:
    script = tmp_path / "over_stdio.py"
    script.write_text(_STDIO_SERVER.format(key=VAULT_KEY))
    return script


def test_a_kit_over_stdio_warns_at_start(stdio_server: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(stdio_server)], stdin=subprocess.DEVNULL, capture_output=True, timeout=30
    )
    assert done.returncode == 0, done.stderr.decode()
    stderr = done.stderr.decode()
    assert stderr.count("the URL-mode kit needs HTTP (app.run_http() or app.asgi())") == 1
    assert "ctx.connection and ctx.secret refuse" in stderr


async def test_over_stdio_the_tool_error_names_the_transport(stdio_server: Path) -> None:
    async with Client.connect(
        [sys.executable, str(stdio_server)], stderr="devnull", answerer=Script()
    ) as client:
        result = await client.call_tool("summarize")
    assert result.is_error is True
    assert "this server runs over stdio" in result.text
    assert "app.run_http()" in result.text
    assert "configure identity" not in result.text  # identity is configured: stdio is the reason


# ------------------------------------------------------------------------- where run_http listens


def test_development_mode_refuses_to_listen_beyond_this_machine(
    vault: Vault, dev: DevelopmentIdentity, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo identity and sign-in trust anyone: base_url on loopback was checked, but
    run_http(host="0.0.0.0") served them to the whole network."""
    from mcp_elicit import Server
    from mcp_elicit.transport import uvicorn_runner

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("run_http went on to listen")

    monkeypatch.setattr(uvicorn_runner, "serve", never)  # tests listen on 127.0.0.1 only, whatever

    kit = ConnectKit(base_url="http://127.0.0.1:8786", identity=dev, vault=vault, development=True)
    app = Server("dev", state_keys=[VAULT_KEY], connect=kit)
    for host in ("0.0.0.0", "192.168.1.20", "::", "example.com"):
        with pytest.raises(ValueError, match=r"serves this machine only: run_http\(host=") as refused:
            app.run_http(host=host, port=8786)  # refused before anything listens
        assert "listen on 127.0.0.1, localhost or ::1" in str(refused.value)
    for host in ("127.0.0.1", "localhost", "::1", "[::1]"):
        kit.serving_over_http(host, 8786, tls=False)  # accepted


def test_a_production_kit_may_listen_anywhere_behind_its_proxy(
    vault: Vault, caplog: pytest.LogCaptureFixture
) -> None:
    identity = JWTIdentity(
        issuer="https://id.example.com",
        jwks_url="https://id.example.com/jwks",
        audience="https://mcp.example.com/mcp",
    )
    kit = ConnectKit(base_url="https://mcp.example.com", identity=identity, vault=vault)
    with caplog.at_level("WARNING", logger="mcp_elicit.connect"):
        kit.serving_over_http("0.0.0.0", 8000, tls=False)
    assert caplog.records == []


@pytest.mark.parametrize(
    ("base_url", "port", "tls", "said"),
    [
        (
            "https://127.0.0.1:8787",
            8787,
            False,
            "is https, but run_http serves plain http at http://127.0.0.1:8787",
        ),
        (
            "http://127.0.0.1:8788",
            8789,
            False,
            "names another port than run_http listens on (http://127.0.0.1:8789)",
        ),
        ("http://localhost", 8790, False, "names another port than run_http listens on"),
    ],
)
def test_development_links_that_cannot_reach_the_server_are_named(
    vault: Vault,
    dev: DevelopmentIdentity,
    caplog: pytest.LogCaptureFixture,
    base_url: str,
    port: int,
    tls: bool,
    said: str,
) -> None:
    """Nothing stands between in development: a base_url on another port, or https for a plain
    http server, made every link the kit sent fail in the browser, with no word at start-up."""
    kit = ConnectKit(base_url=base_url, identity=dev, vault=vault, development=True)
    with caplog.at_level("WARNING", logger="mcp_elicit.connect"):
        kit.serving_over_http("127.0.0.1", port, tls=tls)
    (record,) = caplog.records
    assert said in record.getMessage()
    assert base_url in record.getMessage()
    caplog.clear()
    matching = ConnectKit(base_url="http://127.0.0.1:8791", identity=dev, vault=vault, development=True)
    with caplog.at_level("WARNING", logger="mcp_elicit.connect"):
        matching.serving_over_http("127.0.0.1", 8791, tls=False)
        matching.serving_over_http("127.0.0.1", 0, tls=False)  # a port the system picks: unknown here
    assert caplog.records == []


async def test_the_kits_clock_dates_its_default_flow_store_too(
    vault: Vault, dev: DevelopmentIdentity
) -> None:
    """ConnectKit(clock=...) was said to be the flow store's clock, but the default store kept
    the system's: with any other clock the kit said a link had expired while its page still
    offered Continue (and the other way round)."""
    now = [1_000_000.0]
    kit = ConnectKit(
        base_url="http://127.0.0.1:8792", identity=dev, vault=vault, development=True, clock=lambda: now[0]
    )
    flow = await kit.flows.create("urn:test|alice", "secret", "api-key")
    assert flow.expires == now[0] + 600  # dated by the kit's clock
    now[0] += 601  # past the link's life, by the kit's clock only
    assert (await kit.flows.get(flow.id)).status == "expired"
    await kit.aclose()
