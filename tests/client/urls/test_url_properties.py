"""Property tests: assess_url never raises, and nothing non-ASCII or odd is ever "ok"."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_elicit.client.urls import UrlAssessment, assess_url, describe_for_terminal

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Characters that matter to URL parsing and spoofing, mixed with arbitrary text.
TRICKY = st.sampled_from(
    [
        *"abcxyz019-._~:/?#[]@!$&'()*+,;=%\\ \t\n\r\x00\x7f",
        *["\u00a0", "\u00ad", "\u200b", "\u200d", "\u202e", "\u2028", "\ufeff", "\u3002", "\uff0e", "\uff47"],
        *[
            "а",
            "о",
            "е",
            "ɡ",
            "ı",
            "α",
            "ο",
            "ü",
            "ß",
            "\u0301",
            "\u0307",
            "例",
            "コ",
            "한",
            "\u2044",
            "\u212a",
        ],
        *["xn--", "xn--80ak6aa92e", "0x7f", "2130706433", "%2e", "%40", "%00", "%action", "\ud800"],
    ]
)
HOSTISH = st.lists(st.one_of(TRICKY, st.characters()), max_size=30).map("".join)
SCHEMES = st.sampled_from(["https://", "http://", "HTTPS://", "https:", "https:/", "javascript:", "", "-"])
URLS = st.builds(lambda s, h, p: s + h + p, SCHEMES, HOSTISH, st.one_of(st.just("/"), HOSTISH))


def _check_invariants(assessment: UrlAssessment, *, dev: bool) -> None:
    assert isinstance(assessment, UrlAssessment)
    assert assessment.verdict in ("ok", "warn", "refuse")
    assert (assessment.verdict == "ok") == (assessment.reasons == ())
    if assessment.href is not None and assessment.parts and assessment.scheme in ("http", "https"):
        assert "".join(text for _, text in assessment.parts) == assessment.href
    if assessment.verdict != "refuse":
        href = assessment.href
        assert href is not None
        assert href.isascii()
        assert not href.startswith("-")
        assert all(0x20 < ord(ch) < 0x7F for ch in href)
        assert href.startswith("https://") or (dev and href.startswith("http://"))
        assert assessment.registrable_domain is not None or dev
        # canonical and stable: assessing what is shown gives the same href, still openable
        again = assess_url(href, allow_loopback_http=dev)
        assert again.href == href
        assert again.verdict != "refuse"
    if not assessment.original.isascii():
        assert assessment.verdict != "ok"
    describe_for_terminal(assessment)


@SETTINGS
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    _check_invariants(assess_url(text), dev=False)


@SETTINGS
@given(URLS, st.booleans())
def test_url_like_text_never_raises(url: str, dev: bool) -> None:
    _check_invariants(assess_url(url, allow_loopback_http=dev), dev=dev)


@SETTINGS
@given(HOSTISH)
def test_non_ascii_hosts_are_never_ok(label: str) -> None:
    assessment = assess_url(f"https://{label}.com/")
    _check_invariants(assessment, dev=False)
    if not label.isascii():
        assert assessment.verdict != "ok"
    if assessment.verdict == "ok":
        assert assessment.host is not None
        assert assessment.host.isascii()
        # Punycode is a label that starts with xn--; "axn--" is an ordinary ASCII label.
        assert not any(part.startswith("xn--") for part in assessment.host.split("."))


@SETTINGS
@given(st.text(alphabet=st.characters(min_codepoint=0x80), min_size=1, max_size=12))
def test_unicode_labels_get_at_least_a_warning(label: str) -> None:
    for url in (
        f"https://{label}.com/",
        f"https://www.{label}.example.org/x",
        f"https://example.com/{label}",
    ):
        assert assess_url(url).verdict != "ok"


@SETTINGS
@given(
    st.one_of(
        st.none(), st.integers(), st.binary(), st.lists(st.text()), st.dictionaries(st.text(), st.text())
    )
)
def test_non_strings_are_refused(value: object) -> None:
    assessment = assess_url(value)
    assert assessment.verdict == "refuse"
    assert assessment.href is None
    assert assessment.original == ""


@SETTINGS
@given(st.integers(min_value=0, max_value=5000), st.text(max_size=50))
def test_length_limit(max_length: int, tail: str) -> None:
    url = "https://example.com/" + tail
    assessment = assess_url(url, max_length=max_length)
    if len(url) > max_length:
        assert assessment.verdict == "refuse"


# Pieces that URL parsers disagree about: backslashes, tabs and newlines, '@' in userinfo,
# percent-encoded dots and '@', numeric hosts (decimal, octal, hex), trailing dots, IDNA-mapped
# full-width letters and dots, dot segments.
_DIFFERENTIAL = st.sampled_from(
    [
        *"abcxyz0179-._~:/?#[]@!$&'()*+,;=%\\ \t\n",
        *["%2e", "%2E", "%40", "%2f", "%5c", "%3a", "%2e%2e", ".%2e", "/..", "/.", "//", "@"],
        *["0x", "0x7f", "0177", "127", "2130706433", "com", "co.uk", "github.io", "example.com"],
        *["evil.com", "xn--", "xn--80ak6aa92e", ":443", ":8443", ":0443", "\uff0e", "\u3002", "\uff41", "é"],
    ]
)
_DIFFERENTIAL_URLS = st.builds(
    lambda s, h: s + h,
    st.sampled_from(["https://", "HTTPS://", "https:", "https:/", "https:///", "https://www.", "http://"]),
    st.lists(_DIFFERENTIAL, max_size=14).map("".join),
)


@SETTINGS
@given(_DIFFERENTIAL_URLS, st.booleans())
def test_an_accepted_url_names_one_host_for_every_parser(url: str, dev: bool) -> None:
    """The host shown is the one an RFC 3986 parser (urllib, GLib, ShellExecute...) reads from
    the href that is opened, and the one it reads from the server's own text."""
    from urllib.parse import urlsplit

    assessment = assess_url(url, allow_loopback_http=dev)
    if assessment.verdict == "refuse":
        return
    assert assessment.href is not None
    assert assessment.host is not None
    opened = urlsplit(assessment.href)
    assert (opened.username, opened.password) == (None, None)
    assert opened.hostname == assessment.host.strip("[]")
    shown = "".join(text for kind, text in assessment.parts if kind in ("subdomain", "domain", "host"))
    assert shown == assessment.host
    if url.isascii():
        assert urlsplit(url).hostname == assessment.host.strip("[]")
