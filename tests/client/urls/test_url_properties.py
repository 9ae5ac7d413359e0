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
