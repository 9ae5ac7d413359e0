"""OAuthProvider endpoints: https, or plain http to a provider on this computer under the package's
one loopback rule (``wire.hosts.is_loopback_host``)."""

from __future__ import annotations

import pytest

from mcp_elicit.connect.oauth import OAuthProvider


def _provider(token_url: str) -> OAuthProvider:
    return OAuthProvider(
        id="local",
        authorize_url="https://idp.example/authorize",
        token_url=token_url,
        client_id="c1",
    )


@pytest.mark.parametrize(
    "url",
    [
        "https://idp.example/token",
        "http://127.0.0.1:8080/token",
        "http://127.0.0.2:8080/token",  # all of 127.0.0.0/8 (the old set knew 127.0.0.1 only)
        "http://localhost:8080/token",
        "http://LOCALHOST:8080/token",
        "http://[::1]:8080/token",
        "http://[0:0:0:0:0:0:0:1]:8080/token",
    ],
)
def test_https_or_http_on_this_computer(url: str) -> None:
    assert _provider(url).token_url == url


@pytest.mark.parametrize(
    "url",
    [
        "http://idp.example/token",
        "http://localhost./token",
        "http://foo.localhost/token",
        "http://127.0.0.1.nip.io/token",
        "http://[::ffff:127.0.0.1]/token",
        "http://0177.0.0.1/token",
        "http://2130706433/token",
        "http://127.1/token",
        "ftp://127.0.0.1/token",
    ],
)
def test_plain_http_elsewhere_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match=r"token_url must be an https URL \(http only on loopback\)"):
        _provider(url)
