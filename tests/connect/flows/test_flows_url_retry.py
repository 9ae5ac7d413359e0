"""flow_url rules and check_for_retry outcomes (no I/O)."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest
from flows_support import ALICE, BOB, NOW

from mcp_elicit.connect.flows import (
    Failed,
    PendingFlow,
    Ready,
    Waiting,
    check_for_retry,
    flow_url,
    new_flow_id,
    step_words,
)
from mcp_elicit.connect.identity import Principal


def flow(status: str = "pending", *, kind: str = "connect", detail: str | None = None) -> PendingFlow:
    return PendingFlow(
        id=new_flow_id(),
        owner=ALICE,
        kind=kind,  # type: ignore[arg-type]
        provider="github",
        scopes=("repo",),
        created=NOW,
        expires=NOW + 600,
        status=status,  # type: ignore[arg-type]
        detail=detail,
    )


# ------------------------------------------------------------------------------ flow_url


def test_flow_url_shapes() -> None:
    f = flow()
    assert flow_url("https://mcp.example.com", f) == f"https://mcp.example.com/connect/{f.id}"
    assert flow_url("https://mcp.example.com/", f) == f"https://mcp.example.com/connect/{f.id}"
    assert flow_url("https://mcp.example.com/app", f) == f"https://mcp.example.com/app/connect/{f.id}"
    s = flow(kind="secret")
    assert flow_url("https://mcp.example.com:8443", s) == f"https://mcp.example.com:8443/secret/{s.id}"
    url = flow_url("https://mcp.example.com", f)
    for personal in ("alice", "github", "repo", "auth.example"):  # nothing but base, kind and id
        assert personal not in url


@pytest.mark.parametrize(
    "base",
    [
        "http://mcp.example.com",
        "http://127.0.0.1:8000",  # loopback, but no development flag
        "https://mcp.example.com?user=alice",
        "https://mcp.example.com/#frag",
        "https://alice@mcp.example.com",
        "https://alice:pw@mcp.example.com",
        "javascript:alert(1)",
        "ftp://mcp.example.com",
        "//mcp.example.com",
        "https://",
        "https://mcp.example.com/a b",
        "https://mcp.example.com\\@evil.example",
        "",
    ],
)
def test_flow_url_refuses_unsafe_bases(base: str) -> None:
    with pytest.raises(ValueError, match="base_url"):
        flow_url(base, flow())


def test_http_only_on_loopback_in_development() -> None:
    f = flow()
    for base in ("http://127.0.0.1:8765", "http://localhost:8765", "http://[::1]:8765", "http://127.5.6.7"):
        assert flow_url(base, f, development=True) == f"{base}/connect/{f.id}"
    for base in ("http://10.0.0.1", "http://mcp.example.com", "http://localhost.evil.example"):
        with pytest.raises(ValueError, match="https"):
            flow_url(base, f, development=True)


def test_flow_url_refuses_a_bad_id() -> None:
    bad = PendingFlow("not-an-id/../x", ALICE, "connect", "github", (), NOW, NOW + 600, "pending")
    with pytest.raises(ValueError, match="id"):
        flow_url("https://mcp.example.com", bad)


# ------------------------------------------------------------------------------ check_for_retry


def test_completed_is_ready() -> None:
    f = flow("completed")
    assert check_for_retry(f, ALICE, NOW + 10) == Ready(f)
    assert check_for_retry(f, Principal("https://auth.example.test", "alice"), NOW + 10) == Ready(f)


@pytest.mark.parametrize("status", ["pending", "in_progress"])
def test_open_is_waiting_with_a_bounded_hold(status: str) -> None:
    f = flow(status)
    outcome = check_for_retry(f, ALICE, NOW + 100)
    assert outcome == Waiting(f)
    assert isinstance(outcome, Waiting)
    assert outcome.hold_for(30, NOW + 100) == 30
    assert outcome.hold_for(30, NOW + 590) == 10  # never past the expiry
    assert outcome.hold_for(30, NOW + 700) == 0


@pytest.mark.parametrize("status", ["pending", "in_progress", "expired"])
def test_expired_is_failed(status: str) -> None:
    outcome = check_for_retry(flow(status), ALICE, NOW + 600)
    assert isinstance(outcome, Failed)
    assert outcome.reason == "expired"
    assert "expired" in outcome.message
    assert "github" in outcome.message


def test_failed_and_declined() -> None:
    failed = check_for_retry(flow("failed", detail="GitHub said no"), ALICE, NOW)
    assert isinstance(failed, Failed)
    assert failed.reason == "failed"
    assert "GitHub said no" in failed.message
    declined = check_for_retry(flow("declined"), ALICE, NOW)
    assert isinstance(declined, Failed)
    assert declined.reason == "declined"
    assert "declined" in declined.message
    assert Failed("unknown").message  # for FlowNotFound on the engine's side


def test_a_secret_step_is_named_as_the_engine_names_it() -> None:
    # One wording in every message about a step: a replayed state reads the flow's failure here,
    # a live one gets the engine's words (hypothesis met both in one run of test_kit_any_client).
    failed = check_for_retry(replace(flow("failed", kind="secret"), provider="openai_api_key"), ALICE, NOW)
    assert isinstance(failed, Failed)
    assert failed.message.startswith("Entering the secret 'openai_api_key' did not complete.")
    assert step_words("secret", "openai_api_key") == "entering the secret 'openai_api_key'"
    assert step_words("connect", "GitHub") == "connecting your GitHub account"


@pytest.mark.parametrize("status", ["pending", "in_progress", "completed", "failed", "expired"])
def test_another_principal_is_the_phishing_alarm(status: str, caplog: pytest.LogCaptureFixture) -> None:
    f = flow(status)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.connect.flows"):
        outcome = check_for_retry(f, BOB, NOW + 10)
    assert outcome == Failed("not-owner", f)
    assert isinstance(outcome, Failed)
    assert "github" not in outcome.message  # says nothing about the other user's flow
    (record,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    message = record.getMessage()
    assert ALICE in message
    assert BOB in message
    assert f.id not in message
    # Same subject at another issuer is another principal.
    assert isinstance(check_for_retry(f, "https://other-issuer.example|alice", NOW), Failed)


def test_an_anonymous_retry_is_not_the_owner(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.connect.flows"):
        outcome = check_for_retry(flow("completed"), None, NOW)
    assert isinstance(outcome, Failed)
    assert outcome.reason == "not-owner"
    assert caplog.records
