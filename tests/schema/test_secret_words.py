"""``is_credential_name``: the lint's recogniser of secret names, as the server's URL check asks it
about parameter names. The lint and the URL check must read every name the same way."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.schema import lint_form
from mcp_elicit.schema.secret_words import is_credential_name, name_words


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("access_token", "an access token"),
        ("accessToken", "an access token"),
        ("AccessToken", "an access token"),
        ("access-token", "an access token"),
        ("access.token", "an access token"),
        ("refresh_token[]", "an access token"),
        ("id_token", "an access token"),
        ("__token__", "an access token"),
        ("token", "an access token"),
        ("X-Amz-Security-Token", "an access token"),
        ("clientSecret", "a secret"),
        ("client_secret", "a secret"),
        ("X-Api-Key", "an API key"),
        ("apikey", "an API key"),
        ("api_key[0]", "an API key"),
        ("auth_key", "a secret or private key"),
        ("password", "a password"),
        ("pwd", "a password"),
        ("X-Amz-Credential", "credentials"),
        ("otp", "a one-time or verification code"),
    ],
)
def test_credential_spellings(name: str, what: str) -> None:
    assert is_credential_name(name) == what


@pytest.mark.parametrize(
    "name",
    [
        "state",
        "code",
        "code_challenge",
        "code_challenge_method",
        "client_id",
        "redirect_uri",
        "scope",
        "response_type",
        "nonce",
        "page",
        "sort",
        "session_name",
        "max_tokens",
        "token_count",
        "api_key_id",  # about a key, not the key
        "key",
        "v",
        "t",
        "q",
        "",
    ],
)
def test_names_that_are_not_credentials(name: str) -> None:
    assert is_credential_name(name) is None


def test_words_as_the_recogniser_reads_them() -> None:
    assert name_words("X-Amz-Signature") == ("x", "amz", "signature")
    assert name_words("sessionId[]") == ("session", "id")
    assert name_words("refresh.token") == ("refresh", "token")


_NAME_PARTS = st.sampled_from(
    [
        "access",
        "Token",
        "token",
        "api",
        "Key",
        "key",
        "client",
        "secret",
        "Secret",
        "max",
        "id",
        "name",
        "session",
        "pass",
        "word",
        "code",
        "x",
        "amz",
        "page",
        "sort",
        "refresh",
        "auth",
        "pin",
        "card",
        "number",
    ]
)
_SEPARATORS = st.sampled_from(["", "_", "-", ".", "[]"])


@given(st.lists(st.tuples(_NAME_PARTS, _SEPARATORS), min_size=1, max_size=4))
def test_the_lint_and_is_credential_name_agree(parts: list[tuple[str, str]]) -> None:
    name = "".join(word + sep for word, sep in parts)
    findings = lint_form("m", {"type": "object", "properties": {name: {"type": "string"}}}).secret_fields
    by_name = [f for f in findings if f.where == "name"]
    assert bool(by_name) == (is_credential_name(name) is not None), name
