"""Development mode opens plain http only to this computer, by the package's one loopback rule
(``wire.hosts.is_loopback_host``); the client is stricter still where a browser would rewrite
the host (``[0:0:0:0:0:0:0:1]``, ``0x7f.1``), which it refuses as a disguised form."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.client.urls import assess_url
from mcp_elicit.wire.hosts import is_loopback_host

HOSTS = [
    "localhost", "LOCALHOST", "localhost.", "127.0.0.1", "127.0.0.2", "127.255.255.255", "[::1]",
    "[0:0:0:0:0:0:0:1]", "[::ffff:127.0.0.1]", "0177.0.0.1", "2130706433", "127.1", "0x7f.1",
    "foo.localhost", "127.0.0.1.nip.io", "10.0.0.1", "example.com",
]  # fmt: skip


@pytest.mark.parametrize("host", HOSTS)
def test_http_in_development_only_for_loopback(host: str) -> None:
    assessment = assess_url(f"http://{host}:8000/cb", allow_loopback_http=True)
    if assessment.verdict != "refuse":
        assert is_loopback_host(assessment.host)
        assert is_loopback_host(host)
        assert "loopback links are allowed" in " ".join(assessment.reasons)


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "127.0.0.2", "[::1]"])
def test_loopback_still_warns_in_development_and_is_refused_outside_it(host: str) -> None:
    assert assess_url(f"http://{host}:8000/cb", allow_loopback_http=True).verdict == "warn"
    refused = assess_url(f"http://{host}:8000/cb")
    assert refused.verdict == "refuse"
    # The refusal names the switch both ways: the option of the library, the flag of the CLI
    # (a CLI user was told of allow_loopback_http, a name the command line does not take).
    said = " ".join(refused.reasons)
    assert "allow_loopback_http=True" in said
    assert "mcp-elicit call --allow-loopback-http" in said


@given(st.text(alphabet="0123456789abcdefx.:[]lochstLOCAHST", min_size=1, max_size=20))
def test_no_host_the_rule_refuses_is_opened_over_http(host: str) -> None:
    assessment = assess_url(f"http://{host}/cb", allow_loopback_http=True)
    if assessment.verdict != "refuse":
        assert is_loopback_host(host), host
