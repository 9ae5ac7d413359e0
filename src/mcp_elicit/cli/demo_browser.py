"""The demo's scripted browser: completes a URL-mode link over HTTP, the way a person would click
through it, and narrates every step.

It keeps cookies (an httpx cookie jar), follows redirects one at a time, and only ever opens
``http://127.0.0.1:<port>`` addresses: any other address ends the walk before it is requested.
Addresses are narrated without their query strings (they carry the OAuth ``state`` and ``code``).
The path it expects: the link → the kit's sign-in page → "Continue as …" (the DEMO ONLY sign-in)
→ the confirmation page (who is signed in, who asks, which provider and permissions, where
Continue goes) → "Continue" → the demo CI service's consent page → "Allow" → the kit's OAuth
callback → ``/done``. Every page on the way must say DEMO ONLY first (they all belong to the demo),
and Continue must end where the confirmation page said it would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final
from urllib.parse import urljoin, urlsplit

from mcp_elicit.cli.html_page import Button, Form, HtmlPage, parse_page
from mcp_elicit.client.text import clean

if TYPE_CHECKING:
    import httpx

__all__ = ["BrowserStepFailed", "ScriptedBrowser"]

_TIMEOUT: Final = 15.0
_MAX_REDIRECTS: Final = 5
_DEMO_ONLY: Final = "DEMO ONLY"
_GOES_TO: Final = "Continue takes you to "


class BrowserStepFailed(Exception):
    """The pages did not go the way the walk-through expects (the message says where)."""


def _where(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def _checked(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname != "127.0.0.1" or parts.port is None:
        raise BrowserStepFailed(f"refusing to open {_where(url)!r}: the demo only opens http://127.0.0.1")
    return url


def _text(value: str, limit: int = 300) -> str:
    return clean(value, single_line=True, max_length=limit)


def _labelled(page: HtmlPage) -> bool:
    """Whether ``page`` says DEMO ONLY before anything else (its title or first paragraph)."""
    first = page.paragraphs[0] if page.paragraphs else ""
    return page.title.startswith(_DEMO_ONLY) or first.startswith(_DEMO_ONLY)


def _destination(page: HtmlPage) -> str:
    """The host the confirmation page says Continue goes to."""
    for paragraph in page.paragraphs:
        if paragraph.startswith(_GOES_TO):
            return paragraph[len(_GOES_TO) :].split(",", 1)[0].strip()
    raise BrowserStepFailed("the confirmation page does not say where Continue goes")


class ScriptedBrowser:
    """One browser session (one cookie jar); :meth:`complete` walks one link."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say

    async def complete(self, url: str) -> None:
        """Walk ``url`` to the kit's ``/done`` page; :class:`BrowserStepFailed` if it goes elsewhere."""
        import httpx

        # trust_env=False: every address is on 127.0.0.1, so no proxy from the environment applies.
        async with httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=_TIMEOUT) as http:
            page_url, page = await self._open(http, url)
            self._show(page, _DEMO_ONLY)  # the label, said once; every page is checked for it
            sign_in = page.link("Sign in")
            if sign_in is not None:
                page_url, page = await self._open(http, urljoin(page_url, sign_in.href))
                self._show(page, "no real sign-in")
                page_url, page = await self._press(http, page_url, page, "Continue as")
            if not page.title.startswith("Connect "):
                raise BrowserStepFailed(f"expected the confirmation page, got {page.title!r}")
            self._show(page, "Signed in as", "asks you", _GOES_TO)
            if page.items:
                self._say(f"      permissions: {_text(', '.join(page.items))}")
            if page.button("Decline") is None:
                raise BrowserStepFailed("the confirmation page offers no Decline")
            promised = _destination(page)
            page_url, page = await self._press(http, page_url, page, "Continue")
            if urlsplit(page_url).netloc != promised:
                raise BrowserStepFailed(f"Continue was to go to {promised!r} but went to {_where(page_url)}")
            self._show(page, "Signed in as", "asks for")
            page_url, page = await self._press(http, page_url, page, "Allow")
            if urlsplit(page_url).path.rstrip("/").rsplit("/", 1)[-1] != "done":
                raise BrowserStepFailed(f"expected the /done page, ended on {_where(page_url)}")
            self._show(page, "close this tab")

    def _show(self, page: HtmlPage, *parts: str) -> None:
        """The paragraphs of ``page`` that contain one of ``parts``."""
        for paragraph in page.paragraphs:
            if any(part in paragraph for part in parts):
                self._say(f"      page: {_text(paragraph)}")

    async def _open(self, http: httpx.AsyncClient, url: str) -> tuple[str, HtmlPage]:
        response = await http.get(_checked(url))
        return await self._arrive(http, url, "GET", response)

    async def _press(
        self, http: httpx.AsyncClient, page_url: str, page: HtmlPage, label: str
    ) -> tuple[str, HtmlPage]:
        found = page.button(label)
        if found is None:
            raise BrowserStepFailed(f"no {label!r} button on {_where(page_url)}")
        form, button = found
        return await self._submit(http, page_url, form, button)

    async def _submit(
        self, http: httpx.AsyncClient, page_url: str, form: Form, button: Button
    ) -> tuple[str, HtmlPage]:
        if form.method != "post":
            raise BrowserStepFailed(f"the {button.text!r} form is not a POST form")
        action = _checked(urljoin(page_url, form.action or page_url))
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(page_url))
        # A browser says where a form comes from; the kit's pages check it (with the CSRF token).
        response = await http.post(action, data=form.data(button), headers={"Origin": origin})
        return await self._arrive(http, action, "POST", response, f" [{_text(button.text, 60)}]")

    async def _arrive(
        self, http: httpx.AsyncClient, url: str, how: str, response: httpx.Response, pressed: str = ""
    ) -> tuple[str, HtmlPage]:
        """Follow redirects (one at a time, each address checked) to a page, narrating each hop."""
        for _ in range(_MAX_REDIRECTS):
            if response.status_code not in (301, 302, 303, 307, 308):
                break
            target = urljoin(url, response.headers.get("location", ""))
            status = response.status_code
            self._say(f"    browser: {how} {_where(url)}{pressed} -> {status}, to {_where(target)}")
            url, how, pressed = _checked(target), "GET", ""
            response = await http.get(url)
        else:
            raise BrowserStepFailed("too many redirects")
        page = parse_page(response.text)
        title = _text(page.title, 120)
        label = f" [{_DEMO_ONLY}]" if _labelled(page) else ""
        self._say(f"    browser: {how} {_where(url)}{pressed} -> {response.status_code} {title!r}{label}")
        if response.status_code != 200:
            detail = " ".join(page.paragraphs[:2]) or "no explanation"
            raise BrowserStepFailed(f"{_where(url)} answered {response.status_code}: {_text(detail)}")
        if not label:  # everything this walk opens is the demo's, so it must say so
            raise BrowserStepFailed(f"{_where(url)} is not labelled {_DEMO_ONLY}")
        return url, page
