"""PendingAuthorization: round trip, hidden secrets, strict from_dict (only AuthorizationFailed)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oauth_support import REDIRECT_URI

from mcp_elicit.connect.oauth import (
    AuthorizationCodeGrant,
    AuthorizationFailed,
    OAuthProvider,
    PendingAuthorization,
)

PROVIDER = OAuthProvider(
    id="github",
    authorize_url="https://github.example/authorize",
    token_url="https://github.example/token",
    client_id="client-1",
    client_secret="secret",
    issuer="https://github.example",
    openid=True,
    jwks_url="https://github.example/jwks",
)


def _pending() -> PendingAuthorization:
    return AuthorizationCodeGrant(PROVIDER, REDIRECT_URI).begin()[1]


def test_round_trip_through_json() -> None:
    pending = _pending()
    again = PendingAuthorization.from_dict(json.loads(json.dumps(pending.to_dict())))
    assert again == pending
    assert again.nonce is not None


def test_repr_hides_the_transaction_secrets() -> None:
    pending = _pending()
    text = repr(pending) + str(pending)
    assert pending.state not in text
    assert pending.code_verifier not in text
    assert pending.nonce is not None
    assert pending.nonce not in text
    assert "github" in text


@pytest.mark.parametrize(
    "change",
    [
        {"v": 2},
        {"v": True},
        {"v": 1.0},
        {"provider_id": "GitHub"},
        {"provider_id": "../x"},
        {"state": "short"},
        {"state": "a" * 129},
        {"state": 12345},
        {"code_verifier": "x" * 42},
        {"code_verifier": "x" * 43 + " "},
        {"nonce": ""},
        {"nonce": ["a" * 30]},
        {"redirect_uri": "javascript:alert(1)"},
        {"redirect_uri": "http://evil.example/cb"},
        {"redirect_uri": "https://mcp.example.test/cb#frag"},
        {"created": "now"},
        {"created": float("nan")},
        {"created": float("inf")},
        {"created": True},
        {"created": -1},
        {"extra": 1},
    ],
)
def test_from_dict_refuses_anything_off(change: dict[str, Any]) -> None:
    data = _pending().to_dict() | change
    with pytest.raises(AuthorizationFailed) as info:
        PendingAuthorization.from_dict(data)
    assert info.value.reason == "bad-pending"


@pytest.mark.parametrize("missing", ["v", "state", "code_verifier", "nonce", "redirect_uri", "created"])
def test_from_dict_refuses_missing_keys(missing: str) -> None:
    data = _pending().to_dict()
    del data[missing]
    with pytest.raises(AuthorizationFailed):
        PendingAuthorization.from_dict(data)


@pytest.mark.parametrize("value", [None, [], "x", 1, b"{}", {1: 2}])
def test_from_dict_refuses_non_dicts(value: Any) -> None:
    with pytest.raises(AuthorizationFailed):
        PendingAuthorization.from_dict(value)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=200),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=10,
)
_VALID = _pending().to_dict()


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        _json,
        st.dictionaries(st.sampled_from(sorted(_VALID)) | st.text(max_size=12), _json, max_size=9),
        st.builds(
            lambda key, value: _VALID | {key: value},
            st.sampled_from(sorted(_VALID)),
            _json,
        ),
    )
)
def test_from_dict_raises_only_authorization_failed(data: Any) -> None:
    reason = "bad-pending"  # accepted input is fine too: it was a valid pending authorization
    try:
        PendingAuthorization.from_dict(data)
    except AuthorizationFailed as exc:
        reason = exc.reason
    assert reason == "bad-pending"
