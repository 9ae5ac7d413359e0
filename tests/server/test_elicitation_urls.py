"""The server's check of a URL before a URL-mode elicitation sends it: valid as browsers read it,
https, and no credentials, session or personal data in it (the spec's MUST NOTs)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.server.urls import check_elicitation_url


@pytest.mark.parametrize(
    "url",
    [
        "https://mcp.example.com/connect/3f9a2c7e1b",
        "https://mcp.example.com/connect?flow=3f9a2c7e1b&next=%2Fdone",
        "https://github.com/login/oauth/authorize?client_id=abc&response_type=code&state=xyz",
        "https://www.npmjs.com/package/@scope/name",
        "https://medium.com/@someone/a-post",
        "http://127.0.0.1:8000/connect/1",
        "https://bücher.example/kaufen",
        "https://app.example.com/docs;v=2/page",  # a path parameter that is not a credential
        "https://example.com/search?q=signature+design&sort=new",
    ],
)
def test_ordinary_urls_go_out(url: str) -> None:
    assert check_elicitation_url(url) == url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://ex^ample.com/", "is not a valid URL"),
        ("https://exa|mple.com/", "is not a valid URL"),
        ("https://ex<a>mple.com/", "is not a valid URL"),
        ("https://exa%zzmple.com/", "percent-encoded host"),
        ("https://%00.com/", "percent-encoded host"),
        ("https://ex%20ample.com/", "percent-encoded host"),
        ("https://user:pw@example.com/", "must not carry credentials"),
        ("https://example.com/connect?access_token=eyJ.x.y", "carries 'access_token' in its query"),
        ("https://example.com/magic-login?Session=3f9a", "carries 'Session' in its query"),
        ("https://example.com/x?api-key=k", "carries 'api-key' in its query"),
        ("https://example.com/reset#password=hunter2", "carries 'password' in its fragment"),
        ("https://example.com/u/alice@example.com/", "contains an email address"),
        ("https://example.com/invite?to=alice%40example.com", "contains an email address"),
        (
            "https://b.s3.amazonaws.com/q.pdf?X-Amz-Credential=AKIA%2Fx&X-Amz-Signature=9f",
            "'X-Amz-Credential'",
        ),
        (
            "https://storage.googleapis.com/b/q.pdf?X-Goog-Signature=9f",
            "carries 'X-Goog-Signature' in its query",
        ),
        ("https://d1.cloudfront.net/q.pdf?Expires=1&Signature=nit&Key-Pair-Id=K2", "carries 'Signature'"),
        ("https://a.blob.core.windows.net/r/q.pdf?sv=2022-11-02&sr=b&sig=Zm9v", "carries 'sig' in its query"),
        ("https://app.example.com/account;jsessionid=0F3A9C", "carries 'jsessionid' in its path"),
        ("https://app.example.com/a;v=1;JSESSIONID=0F/b", "carries 'JSESSIONID' in its path"),
        ("https://app.example.com/index.php?PHPSESSID=0F3A9C", "carries 'PHPSESSID' in its query"),
        ("http://example.com/x", "must use https"),
        ("https://example.com:99999/", "invalid port"),
    ],
)
def test_unsafe_urls_are_refused_with_the_reason(url: str, reason: str) -> None:
    with pytest.raises(ValueError, match="the elicitation URL") as info:
        check_elicitation_url(url)
    assert reason in str(info.value)


@given(st.text(max_size=80))
def test_any_text_is_a_url_or_a_value_error(text: str) -> None:
    url = "https://example.com/" + text
    try:
        outcome = check_elicitation_url(url)
    except ValueError as exc:
        outcome = str(exc)
        assert outcome.startswith("the elicitation URL")
    else:
        assert outcome == url
