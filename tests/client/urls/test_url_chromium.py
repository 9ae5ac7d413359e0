"""What is shown is what the browser navigates to: every non-refused assessment checked against
Debian's Chromium (its own URL parser, GURL, independent of the ada parser used by assess_url).

For each case Chromium really navigates to ``href`` (requests are intercepted and answered
locally; nothing leaves the machine) and the request it makes must be for exactly that address;
and Chromium's ``new URL(original)`` must read the same address from the server's raw text, so
that the host shown (even in a refusal) is the browser's. Known GURL deviation from WHATWG:
it also percent-encodes ``|`` in paths, which does not change the host or the resource.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from url_cases import CHROMIUM, DIFFERENTIALS, TABLE

from mcp_elicit.client.urls import assess_url

if TYPE_CHECKING:
    from playwright.async_api import Browser, Route

# Pieces that parsers disagree about (percent-encoded dots and '@', backslashes, dot segments,
# IDNA-mapped characters, numeric hosts, ports in odd spellings...), for a seeded random sample.
_HOST_PIECES = [*"abcxyz019-_", "xn--", "xn--80ak6aa92e", "xn--mnchen-3ya", "com", "co", "uk", "github",
                "0x7f", "127", "1", "é", "ß", "ü", "а", "ς", "\u0130", "\u212a", "\uff41", "\uff0e", "\u3002",
                "\u00aa", "\u2163", "\ufb01", "%41", "%2e", "A", "."]  # fmt: skip
_TAIL_PIECES = [*"abc019-._~:/?#[]@!$&'()*+,;=%", "%2e", "%2E", "%40", "%2f", "%5c", "/..", "/.",
                "%2e%2e", ".%2e", "%ZZ", "{", "}", "|", "^", "`", '"', "<", ">", "é", "例", "\\",
                "@evil.com"]  # fmt: skip
_SUFFIXES = [".com", ".co.uk", ".github.io", ".de", ".com.", ".xn--p1ai", ".jp"]


def _sample(count: int) -> list[str]:
    rng = random.Random(20260728)
    urls = []
    for _ in range(count):
        host = "".join(rng.choice(_HOST_PIECES) for _ in range(rng.randint(1, 5))) + rng.choice(_SUFFIXES)
        port = rng.choice(["", "", ":443", ":8443", ":0443", ":"])
        tail = "".join(rng.choice(_TAIL_PIECES) for _ in range(rng.randint(0, 10)))
        scheme = rng.choice(["https://", "HTTPS://", "https://www."])
        urls.append(scheme + host + port + rng.choice(["", "/", "?", "#"]) + tail)
    return urls


def _cases() -> list[tuple[str, bool]]:
    rows = [(row.url, row.dev) for row in TABLE.values() if isinstance(row.url, str)]
    rows += [(f"https://{host}/", False) for host, _, _ in CHROMIUM]
    rows += [(url, False) for url, _, _ in DIFFERENTIALS]
    rows += [(url, False) for url in _sample(3000)]
    return [(url, dev) for url, dev in rows if len(url) <= 4096]


_PLAIN_HOST = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-._[]:")


def _gurl(href: str) -> str:
    return href.replace("|", "%7C")


_READ_ALL = """urls => urls.map(u => {
    try { const p = new URL(u); return [p.href, p.hostname] } catch (e) { return null }
})"""


async def test_chromium_reads_and_navigates_to_the_address_that_is_shown(browser: Browser) -> None:
    cases = [(url, assess_url(url, allow_loopback_http=dev)) for url, dev in _cases()]
    # other schemes are refused whatever the browser makes of them
    cases = [(url, a) for url, a in cases if a.href is not None and a.scheme in ("http", "https")]
    context = await browser.new_context()
    page = await context.new_page()
    requested: list[str] = []

    async def answer(route: Route) -> None:
        requested.append(route.request.url)
        await route.fulfill(status=200, body="ok", content_type="text/plain")

    await context.route("**/*", answer)
    await page.goto("https://example.com/start")

    # 1. Chromium reads the server's raw text as the address shown; for a refused URL at least
    #    the host, when it is a plausible one (odd characters in a host are refused anyway).
    reads = await page.evaluate(_READ_ALL, [url for url, _ in cases])
    mismatches = []
    for (url, assessment), read in zip(cases, reads, strict=True):
        assert assessment.href is not None
        if assessment.verdict != "refuse":
            if read is None or _gurl(read[0]) != _gurl(assessment.href):
                mismatches.append((url, assessment.href, read))
        elif set(assessment.host or "") <= _PLAIN_HOST and (read is None or read[1] != assessment.host):
            mismatches.append((url, assessment.host, read))
    assert mismatches == []

    # 2. Navigating to the href requests exactly that address (fragment aside).
    accepted = [a for _, a in cases if a.verdict != "refuse"]
    assert len(accepted) > 100  # the sample really reached the browser
    for assessment in accepted[:20] + accepted[-20:]:  # the table's first, then the sample's
        assert assessment.href is not None
        requested.clear()
        await page.goto(assessment.href)
        assert requested, assessment.href
        assert _gurl(requested[0]) == _gurl(assessment.href.split("#")[0]), (assessment.href, requested)
        assert urlsplit(requested[0]).hostname == (assessment.host or "").strip("[]")
    await context.close()
