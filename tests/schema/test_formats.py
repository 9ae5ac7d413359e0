"""The four string formats: practical email, RFC 3986 URI, calendar date, RFC 3339 date-time."""

import datetime as dt

import pytest

from mcp_elicit.schema.formats import (
    check_date,
    check_datetime,
    check_email,
    check_uri,
    parse_date,
    parse_datetime,
)


@pytest.mark.parametrize(
    "value",
    [
        "a@b.example",
        "first.last+tag@sub.example.co.uk",
        "o'brien@example.ie",
        "用户@例子.广告",
        "x@xn--80ak6aa92e.com",
        "x@bücher.example",
        "x@münchen.de",
        "x@a\u0301b.example",  # a combining mark in an internationalized label
        "x@my-host2.example",
    ],
)
def test_good_emails(value: str) -> None:
    assert check_email(value) is None


@pytest.mark.parametrize(
    "value",
    [
        "",
        "@",
        "a@",
        "@b.com",
        "a@b",
        "a@@b.com",
        "a@b@c.com",
        "a b@c.com",
        "a@b .com",
        "a\t@b.com",
        "a\u200b@b.com",
        ".a@b.com",
        "a.@b.com",
        "a..b@c.com",
        "a@b..com",
        "a@.b.com",
        "a@b.com.",
        "a@-b.com",
        "a@b-.com",
        "a@1.2.3.4",
        "<a@b.com>",
        "Name <a@b.com>",
        '"a"@b.com',
        "a@[127.0.0.1]",
        "x" * 65 + "@b.com",
        "a@" + "b" * 64 + ".com",
        "a@" + ("b" * 60 + ".") * 5 + "com",
    ],
)
def test_bad_emails(value: str) -> None:
    assert check_email(value) is not None


@pytest.mark.parametrize(
    ("value", "char"),
    [
        ("x@!.$", "!"),
        ("x@evil.example/path?q#frag", "/"),
        ("x@a.com|id", "|"),
        ("x@a.com'or'1'='1", "'"),
        ("x@a.com%0abcc", "%"),
        ("x@a.b{c}", "{"),
        ("x@a.*", "*"),
        ("x@a_b.example", "_"),
        ("x@a.com\u3002evil", "\u3002"),  # an ideographic full stop is a dot to IDNA, not a letter
        ("x@例子\uff0e测试.example", "\uff0e"),
    ],
)
def test_email_domains_hold_only_letters_digits_and_hyphens(value: str, char: str) -> None:
    assert check_email(value) == (
        "must be an email address such as name@example.com (the domain may hold only letters, "
        f"digits, hyphens and dots, not {char!r})"
    )


@pytest.mark.parametrize(
    "value",
    [
        "https://example.com",
        "https://example.com/a/b?c=d&e=%20#frag",
        "http://127.0.0.1:8080/",
        "https://[::1]/x",
        "mailto:a@b.example",
        "urn:isbn:0451450523",
        "file:///etc/hosts",
        "tel:+1-201-555-0123",
        "custom+scheme.v1:thing",
        "HTTPS://EXAMPLE.COM",
        "http://[::1]:8080/",
        "http://[::ffff:192.0.2.1]/",
        "http://[v1.fe80::a+en1]/",
        "ldap://[2001:db8::7]/c=GB?objectClass?one",
        "https://user:pw@example.com:443/p?q=1#frag",
        "http://example.com:/",  # RFC 3986 allows an empty port
        "foo://a@b",
        "urn:example:a%5Bb%5D",
        "https://shop.example/list?ids[]=1&ids[]=2",  # not RFC 3986, but what browsers send
        "https://a.example/p]",
        "https://example.com/#/docs#install",  # hash routing, then an anchor: as browsers copy it
        "git+ssh://git@github.com:npm/cli.git#v1.0.27",  # the scp-like form npm documents
        "urn:example:a[1]",
    ],
)
def test_good_uris(value: str) -> None:
    assert check_uri(value) is None


@pytest.mark.parametrize(
    "value",
    [
        "",
        "example.com",
        "/relative/path",
        "//example.com",
        "1http://x.com",
        ":x",
        "https://exa mple.com",
        " https://example.com",
        "https://example.com\n",
        "https://exa\tmple.com",
        "https://example.com/%zz",
        "https://example.com/<script>",
        'https://example.com/"',
        "https://example.com/\\x",
        "https://例え.jp",
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "vbscript:msgbox",
        "data:text/html,<b>x</b>",
        "https:evil.com",
        "https://",
        "https:///path",
        "http://:80/",
    ],
)
def test_bad_uris(value: str) -> None:
    assert check_uri(value) is not None


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("http://[", "a host in [ ] must be an IPv6 address, such as [::1]"),
        ("http://[zz]/", "a host in [ ] must be an IPv6 address, such as [::1]"),
        ("http://]", "[ and ] may only enclose an IP address as the host; percent-encode them elsewhere"),
        (
            "http://exa[mple].com/",
            "[ and ] may only enclose an IP address as the host; percent-encode them elsewhere",
        ),
        ("http://[::1]x/", "only :port may follow the host"),
        ("https://a.example:abc/", "the port after the host must be a number"),
        ("http://[::1]:8o/", "the port after the host must be a number"),
        ("http://a@b@c/", "only one @ may separate the user from the host; percent-encode the others as %40"),
    ],
)
def test_uri_structure(value: str, reason: str) -> None:
    # Each of these could point somewhere else than it seems, depending on the parser.
    hint = "must be an absolute URI with a scheme, such as https://example.com/page"
    assert check_uri(value) == f"{hint} ({reason})"


def test_uri_messages() -> None:
    assert check_uri("javascript:alert(1)") == "must not use the javascript: scheme"
    assert check_uri("example.com") == (
        "must be an absolute URI with a scheme, such as https://example.com/page"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-02-29", dt.date(2024, 2, 29)),
        ("2026-12-31", dt.date(2026, 12, 31)),
        ("0001-01-01", dt.date(1, 1, 1)),
    ],
)
def test_good_dates(value: str, expected: dt.date) -> None:
    assert check_date(value) is None
    assert parse_date(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "2024-02-30",
        "2023-02-29",
        "2024-13-01",
        "2024-00-10",
        "0000-01-01",
        "2024-1-01",
        "24-01-01",
        "2024/01/01",
        "2024-01-01T00:00:00Z",
        "٢٠٢٤-٠١-٠١",
        "yesterday",
        "",
    ],
)
def test_bad_dates(value: str) -> None:
    assert check_date(value) is not None
    assert parse_date(value) is None


def test_date_messages() -> None:
    assert check_date("2024-02-30") == "must be a real calendar date (2024-02-30 does not exist)"
    assert check_date("01/02/2024") == "must be a calendar date written YYYY-MM-DD, such as 2026-01-31"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-01-02T03:04:05Z", dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)),
        ("2026-01-02t03:04:05z", dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)),
        (
            "2026-01-02T03:04:05.123456789+05:30",
            dt.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
        ),
        (
            "2026-01-02T03:04:05.5-08:00",
            dt.datetime(2026, 1, 2, 3, 4, 5, 500000, tzinfo=dt.timezone(dt.timedelta(hours=-8))),
        ),
        ("2024-02-29T23:59:59+00:00", dt.datetime(2024, 2, 29, 23, 59, 59, tzinfo=dt.UTC)),
        # RFC 3339 puts no bound on the digits of the fraction (microseconds are kept)
        ("2024-01-01T00:00:00.1234567891Z", dt.datetime(2024, 1, 1, 0, 0, 0, 123456, tzinfo=dt.UTC)),
    ],
)
def test_good_datetimes(value: str, expected: dt.datetime) -> None:
    assert check_datetime(value) is None
    parsed = parse_datetime(value)
    assert parsed == expected
    assert parsed is not None
    assert parsed.utcoffset() == expected.utcoffset()


@pytest.mark.parametrize(
    "value",
    [
        "2026-01-02T03:04:05",
        "2026-01-02 03:04:05Z",
        "2026-01-02T24:00:00Z",
        "2026-01-02T03:60:00Z",
        "2026-01-02T23:59:60Z",
        "2026-02-30T03:04:05Z",
        "2026-01-02T03:04Z",
        "2026-01-02T03:04:05+24:00",
        "2026-01-02T03:04:05+05:60",
        "2026-01-02T03:04:05+0530",
        "2026-01-02T03:04:05.Z",
        "2026-01-02",
        "yesterday",
        "2026-01-02T03:04:05Z" + " " * 100,
    ],
)
def test_bad_datetimes(value: str) -> None:
    assert check_datetime(value) is not None
    assert parse_datetime(value) is None


def test_a_leap_second_is_refused_with_its_reason() -> None:
    message = check_datetime("2016-12-31T23:59:60Z")
    assert message is not None
    assert message.startswith("must not be a leap second (:60)")


def test_uri_length_cap() -> None:
    from mcp_elicit.schema.limits import MAX_URI

    assert check_uri("https://a.example/" + "x" * (MAX_URI - 18)) is None
    assert check_uri("https://a.example/" + "x" * MAX_URI) == f"must be a URI of at most {MAX_URI} characters"
