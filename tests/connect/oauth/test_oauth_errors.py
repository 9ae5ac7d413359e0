"""AuthorizationFailed: fixed public messages, cleaned provider text, declined, no leaks."""

from __future__ import annotations

import pickle

import pytest

from mcp_elicit.connect.oauth import AuthorizationFailed
from mcp_elicit.connect.oauth.errors import PROVIDER_TEXT_LIMIT, clean_error_code, clean_provider_text


def test_provider_text_is_cleaned_not_escaped() -> None:
    hostile = "<script>alert(1)</script>\x1b[2J\x00line\r\nnext\u202egnp.exe\u200b\x9b"
    cleaned = clean_provider_text(hostile)
    assert cleaned == "<script>alert(1)</script>[2Jline nextgnp.exe"
    assert all(ch.isprintable() for ch in cleaned)


def test_provider_text_is_capped_and_empty_is_none() -> None:
    assert len(clean_provider_text("x" * 10_000) or "") == PROVIDER_TEXT_LIMIT
    assert clean_provider_text("\x00\x01 \u200b") is None
    assert clean_provider_text(42) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [("access_denied", "access_denied"), ("<b>", None), ("a b", None), ("x" * 65, None), (None, None)],
)
def test_error_codes_must_look_like_codes(value: object, expected: str | None) -> None:
    assert clean_error_code(value) == expected


def test_declined_has_its_own_fixed_message() -> None:
    exc = AuthorizationFailed("provider-error", error="access_denied", provider_error="<script>x</script>")
    assert exc.declined
    assert str(exc) == exc.public_message
    assert "script" not in exc.public_message
    assert exc.provider_error == "<script>x</script>"
    other = AuthorizationFailed("provider-error", error="server_error")
    assert not other.declined
    assert other.public_message != exc.public_message


def test_the_same_error_code_elsewhere_is_not_a_decline() -> None:
    assert not AuthorizationFailed("token-endpoint", error="access_denied").declined


def test_repr_and_pickle() -> None:
    exc = AuthorizationFailed("id-token", detail="nonce")
    assert repr(exc) == "AuthorizationFailed(reason='id-token', error=None, detail='nonce')"
    again = pickle.loads(pickle.dumps(exc))
    assert (again.reason, again.detail, again.public_message) == ("id-token", "nonce", exc.public_message)


def test_secrets_the_request_carried_are_withheld_before_the_text_is_cut() -> None:
    secret = "S" * 30
    text = "x " * 95 + secret  # the secret straddles the 200-character limit
    cleaned = clean_provider_text(text, withhold=[secret, None, ""])
    assert cleaned is not None
    assert "SSSS" not in cleaned
    assert clean_provider_text(f"bad {secret}", withhold=[secret]) == "bad [withheld]"
    # Too short to be a secret: the provider's words stay readable.
    assert clean_provider_text("an error", withhold=["e", "an"]) == "an error"
    assert clean_error_code(secret, withhold=[secret]) is None
    assert clean_error_code("invalid_grant", withhold=[secret]) == "invalid_grant"
