"""href, parts and terminal fragments for ordinary and hostile URLs."""

from __future__ import annotations

import unicodedata

import pytest

from mcp_elicit.client.urls import UrlAssessment, assess_url, describe_for_terminal, printable

NORMAL = [
    (
        "https://accounts.example.co.uk:8443/path?q",
        "https://accounts.example.co.uk:8443/path?q",
        (
            ("scheme", "https://"),
            ("subdomain", "accounts."),
            ("domain", "example.co.uk"),
            ("port", ":8443"),
            ("rest", "/path?q"),
        ),
    ),
    (
        "https://example.com",
        "https://example.com/",
        (("scheme", "https://"), ("domain", "example.com"), ("rest", "/")),
    ),
    (
        "HTTPS://Mcp.Example.COM/connect/3q2?state=x#frag",
        "https://mcp.example.com/connect/3q2?state=x#frag",
        (
            ("scheme", "https://"),
            ("subdomain", "mcp."),
            ("domain", "example.com"),
            ("rest", "/connect/3q2?state=x#frag"),
        ),
    ),
    (
        "https://example.com:443/a",
        "https://example.com/a",
        (("scheme", "https://"), ("domain", "example.com"), ("rest", "/a")),
    ),
    (
        "https://a.b.victim.github.io/",
        "https://a.b.victim.github.io/",
        (("scheme", "https://"), ("subdomain", "a.b."), ("domain", "victim.github.io"), ("rest", "/")),
    ),
    (
        "https://example.com./x",
        "https://example.com./x",
        (("scheme", "https://"), ("domain", "example.com."), ("rest", "/x")),
    ),
    (
        "https://münchen.de/karte",
        "https://xn--mnchen-3ya.de/karte",
        (("scheme", "https://"), ("domain", "xn--mnchen-3ya.de"), ("rest", "/karte")),
    ),
]


@pytest.mark.parametrize(("url", "href", "parts"), NORMAL)
def test_href_and_parts(url: str, href: str, parts: tuple[tuple[str, str], ...]) -> None:
    assessment = assess_url(url)
    assert assessment.verdict != "refuse", assessment.reasons
    assert assessment.href == href
    assert assessment.parts == parts
    assert "".join(text for _, text in assessment.parts) == assessment.href


def test_fields_of_a_plain_url() -> None:
    assessment = assess_url("https://mcp.example.com/connect/abc")
    assert assessment == UrlAssessment(
        verdict="ok",
        original="https://mcp.example.com/connect/abc",
        href="https://mcp.example.com/connect/abc",
        scheme="https",
        host="mcp.example.com",
        unicode_host="mcp.example.com",
        registrable_domain="example.com",
        parts=(
            ("scheme", "https://"),
            ("subdomain", "mcp."),
            ("domain", "example.com"),
            ("rest", "/connect/abc"),
        ),
        reasons=(),
    )
    assert not assessment.is_idn


def test_idn_fields() -> None:
    assessment = assess_url("https://münchen.de/")
    assert assessment.host == "xn--mnchen-3ya.de"
    assert assessment.unicode_host == "münchen.de"
    assert assessment.registrable_domain == "xn--mnchen-3ya.de"
    assert assessment.is_idn


@pytest.mark.parametrize(
    ("url", "dev", "parts"),
    [
        (
            "http://127.0.0.1:8080/cb",
            True,
            (("scheme", "http://"), ("host", "127.0.0.1"), ("port", ":8080"), ("rest", "/cb")),
        ),
        ("https://[::1]/", True, (("scheme", "https://"), ("host", "[::1]"), ("rest", "/"))),
        (
            "https://a:b@example.com/",
            False,
            (("scheme", "https://"), ("userinfo", "a:b@"), ("domain", "example.com"), ("rest", "/")),
        ),
        ("javascript:alert(1)", False, (("scheme", "javascript:"), ("rest", "alert(1)"))),
        ("https://intranet/x", False, (("scheme", "https://"), ("host", "intranet"), ("rest", "/x"))),
        ("https://[fe80::1%25eth0]/", False, ()),
    ],
)
def test_parts_of_unusual_urls(url: str, dev: bool, parts: tuple[tuple[str, str], ...]) -> None:
    assessment = assess_url(url, allow_loopback_http=dev)
    assert assessment.parts == parts
    if assessment.href is not None:
        assert "".join(text for _, text in assessment.parts) == assessment.href


def _text(fragments: list[tuple[str, str]]) -> str:
    return "".join(text for _, text in fragments)


def _assert_terminal_safe(fragments: list[tuple[str, str]]) -> None:
    for _, text in fragments:
        for ch in text:
            assert ch == "\n" or unicodedata.category(ch)[0] not in "CZ" or ch == " ", repr(ch)


def test_describe_highlights_the_registrable_domain() -> None:
    fragments = describe_for_terminal(assess_url("https://accounts.google.com.evil.co.uk/signin"))
    _assert_terminal_safe(fragments)
    first_line = _text(fragments).split("\n")[0]
    assert first_line == "https://accounts.google.com.evil.co.uk/signin"
    bold = [text for style, text in fragments if "bold" in style and "url.domain" in style]
    assert bold == ["evil.co.uk", "evil.co.uk"]  # in the URL and on the "Site:" line
    assert "Site: evil.co.uk" in _text(fragments)
    assert "the site is evil.co.uk" in _text(fragments)
    assert "Check carefully before opening:" in _text(fragments)


def test_describe_idn_shows_the_unicode_form_as_information_only() -> None:
    text = _text(describe_for_terminal(assess_url("https://xn--80ak6aa92e.com/")))
    assert text.startswith("https://xn--80ak6aa92e.com/\n")
    assert "Displays as: аррӏе.com (information only" in text
    assert "This link will not be opened:" in text


def test_describe_escapes_a_hostile_original() -> None:
    fragments = describe_for_terminal(assess_url("https://good.com\x1b[2J\x1b]8;;https://evil\x07\u202e"))
    _assert_terminal_safe(fragments)
    text = _text(fragments)
    assert "<U+001B>" in text
    assert "\x1b" not in text
    assert "\u202e" not in text


def test_describe_unparseable() -> None:
    fragments = describe_for_terminal(assess_url("https://[fe80::1%25eth0]/\x07"))
    _assert_terminal_safe(fragments)
    assert _text(fragments).startswith("Unusable URL as received: https://[fe80::1%25eth0]/<U+0007>\n")


def test_describe_ok_url_has_no_reason_block() -> None:
    text = _text(describe_for_terminal(assess_url("https://example.com/x")))
    assert text == "https://example.com/x\nSite: example.com\n"


def test_printable_caps_length() -> None:
    assert printable("a" * 10, limit=4) == "aaaa... (10 characters in all)"
    assert printable("a\tb\u200bc") == "a<U+0009>b<U+200B>c"


@pytest.mark.parametrize(
    "url",
    [
        "data:text/html," + "a" * 60000,
        "javascript:" + "x" * 60000,
        "https://a" + ".a" * 30000 + ".com/",  # a huge host: in the URL and on the "Site:" line
    ],
)
def test_describe_caps_a_huge_refused_url(url: str) -> None:
    assessment = assess_url(url)
    assert assessment.verdict == "refuse"
    assert assessment.href is not None
    fragments = describe_for_terminal(assessment)
    _assert_terminal_safe(fragments)
    text = _text(fragments)
    assert len(text) < 2000, len(text)
    assert text.startswith(assessment.href[:300] + f"... ({len(assessment.href)} characters in all)\n")
    assert "This link will not be opened:" in text
    assert "over the limit of 2048" in text


def test_describe_caps_reasons_that_quote_a_huge_host() -> None:
    host = "a" * 20000 + "_x.com"
    assessment = assess_url(f"https://{host}./", max_length=30000)
    assert any(len(reason) > 20000 for reason in assessment.reasons)
    text = _text(describe_for_terminal(assessment))
    assert len(text) < 3000, len(text)
    assert "characters in all)" in text
