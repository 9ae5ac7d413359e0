"""``Server(session_router=...)``: what it takes, and what it refuses with a message that says
what to change (no database needed: nothing connects before the first request)."""

from __future__ import annotations

import pytest

from mcp_elicit import Server
from mcp_elicit.storage import PostgresSessionRouter
from mcp_elicit.transport.http_app import HttpApp

DSN = "host=127.0.0.1 port=5432 dbname=test user=postgres"
KEYS = ["routing-config-tests-only-secret-abcdefghijklmnop"]


def test_a_router_makes_every_app_of_the_server_relay() -> None:
    router = PostgresSessionRouter(DSN)
    app = Server("routed", state_keys=KEYS, session_router=router)
    assert app.session_router is router
    mcp = HttpApp(app, sessions={"instance": "a1"})
    assert mcp.relay is not None
    assert mcp.relay.name == "a1"
    assert HttpApp(Server("alone", state_keys=KEYS)).relay is None  # one instance: as before


def test_something_else_than_a_router_is_refused() -> None:
    with pytest.raises(
        TypeError, match="session_router must be a session router such as PostgresSessionRouter"
    ):
        Server("routed", state_keys=KEYS, session_router=DSN)  # type: ignore[arg-type]


def test_a_router_needs_keys_shared_by_every_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_ELICIT_STATE_KEYS", raising=False)
    monkeypatch.delenv("MCP_ELICIT_STATE_KEYS_FILE", raising=False)
    with pytest.raises(ValueError, match="give every instance the same state_keys"):
        Server("routed", session_router=PostgresSessionRouter(DSN))
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS", KEYS[0])
    assert Server("routed", session_router=PostgresSessionRouter(DSN)).session_router is not None


def test_an_instance_name_must_fit_in_a_session_id() -> None:
    app = Server("routed", state_keys=KEYS, session_router=PostgresSessionRouter(DSN))
    with pytest.raises(ValueError, match="instance must be 1 to 20 letters and digits"):
        HttpApp(app, sessions={"instance": "x" * 21})
    with pytest.raises(ValueError, match="instance must be 1 to 20 letters and digits"):
        HttpApp(app, sessions={"instance": "a.b"})
