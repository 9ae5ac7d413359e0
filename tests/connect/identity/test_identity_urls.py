"""``check_service_url``: http only on a loopback host, by the package's one loopback rule
(``wire.hosts.is_loopback_host``, re-exported from ``connect.identity.urls``)."""

from __future__ import annotations

import pytest

from mcp_elicit.connect.identity import urls
from mcp_elicit.wire import hosts


def test_the_rule_is_the_wire_one() -> None:
    assert urls.is_loopback_host is hosts.is_loopback_host


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8000/x", "http://127.0.0.2:8000/x", "http://localhost:8000/x", "http://[::1]:8000/x"],
)
def test_loopback_http_in_development(url: str) -> None:
    assert urls.check_service_url(url, "jwks_url", allow_loopback_http=True).geturl() == url
    with pytest.raises(ValueError, match="jwks_url must use https"):
        urls.check_service_url(url, "jwks_url", allow_loopback_http=False)


@pytest.mark.parametrize(
    "url",
    [
        "http://[::1%25lo]:8000/x",  # a zone id: the old rule stripped it and said loopback
        "http://[::ffff:127.0.0.1]:8000/x",
        "http://localhost.:8000/x",
        "http://app.localhost:8000/x",
        "http://127.0.0.1.nip.io/x",
        "http://0177.0.0.1/x",
    ],
)
def test_other_spellings_are_not_loopback(url: str) -> None:
    with pytest.raises(ValueError, match="jwks_url must use https"):
        urls.check_service_url(url, "jwks_url", allow_loopback_http=True)
