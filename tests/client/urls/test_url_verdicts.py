"""The hostile-URL verdict table (cases in ``url_cases.py``) and related checks."""

from __future__ import annotations

import pytest
from url_cases import CHROMIUM, DIFFERENTIALS, TABLE, Row

from mcp_elicit.client.urls import assess_url


@pytest.mark.parametrize("row", TABLE.values(), ids=TABLE.keys())
def test_verdict_table(row: Row) -> None:
    assessment = assess_url(row.url, allow_loopback_http=row.dev)
    assert assessment.verdict == row.verdict, assessment.reasons
    if row.reason is not None:
        assert any(row.reason in reason for reason in assessment.reasons), assessment.reasons
    if row.verdict == "ok":
        assert assessment.reasons == ()
    else:
        assert assessment.reasons


@pytest.mark.parametrize(("host", "chromium", "verdict"), CHROMIUM, ids=[h for h, _, _ in CHROMIUM])
def test_chromium_idn_vectors(host: str, chromium: str, verdict: str) -> None:
    assessment = assess_url(f"https://{host}/")
    assert assessment.verdict == verdict, assessment.reasons
    assert assessment.verdict != "ok"  # every IDN is at least a warning
    assert any("Punycode" in reason for reason in assessment.reasons)


def test_table_is_large_enough() -> None:
    assert len(TABLE) >= 60
    assert len(TABLE) + len(CHROMIUM) >= 150


@pytest.mark.parametrize(("url", "host", "href"), DIFFERENTIALS)
def test_parser_differentials_are_shown_as_the_browser_sees_them(
    url: str, host: str | None, href: str
) -> None:
    assessment = assess_url(url)
    assert assessment.verdict == "refuse"
    assert assessment.host == host
    assert assessment.href == href


def test_private_suffix_hosts_are_different_sites() -> None:
    victim = assess_url("https://victim.github.io/")
    attacker = assess_url("https://attacker.github.io/login")
    assert victim.registrable_domain == "victim.github.io"
    assert attacker.registrable_domain == "attacker.github.io"
    assert ("domain", "attacker.github.io") in attacker.parts


def test_subdomain_spoof_highlights_the_real_domain() -> None:
    assessment = assess_url("https://accounts.google.com.evil.co.uk/signin")
    assert assessment.registrable_domain == "evil.co.uk"
    assert assessment.parts[1:3] == (("subdomain", "accounts.google.com."), ("domain", "evil.co.uk"))


def test_idn_shows_the_ascii_form_and_both_in_the_reason() -> None:
    assessment = assess_url("https://xn--80ak6aa92e.com/")
    assert assessment.host == "xn--80ak6aa92e.com"
    assert assessment.unicode_host == "аррӏе.com"
    assert assessment.is_idn
    assert any(
        "the host is written in Punycode (xn--80ak6aa92e.com): it may imitate another domain" in reason
        and "аррӏе.com" in reason
        for reason in assessment.reasons
    )


def test_max_length_is_configurable() -> None:
    url = "https://example.com/" + "a" * 100
    assert assess_url(url, max_length=50).verdict == "refuse"
    assert assess_url(url, max_length=200).verdict == "ok"


def test_refusals_come_before_warnings() -> None:
    assessment = assess_url("https://xn--80ak6aa92e.com:8443/")
    assert assessment.verdict == "refuse"
    assert "imitate the plain ASCII" in assessment.reasons[0]
    assert "unusual port" in assessment.reasons[-1]


def test_a_url_over_the_parse_limit_is_refused_with_a_reason_even_under_a_higher_max_length() -> None:
    url = "https://example.com/?" + "a" * 70000
    assessment = assess_url(url, max_length=100_000)
    assert assessment.verdict == "refuse"
    assert assessment.href is None
    assert assessment.reasons == (
        f"the URL is {len(url)} characters long, too long to be examined (at most 65536)",
    )
    # Under the default limit the length reason is given once, not twice.
    assert len(assess_url(url).reasons) == 1
