"""open_in_browser: consent is the caller's; here, only what is opened and when it is not.

No test launches a browser: ``webbrowser.get`` is replaced for every test in this module by one
that fails the test unless the test installs its own fake controller.
"""

from __future__ import annotations

import dataclasses
import sys
import webbrowser
from typing import Any

import pytest

from mcp_elicit.client.urls import OpenResult, UrlAssessment, assess_url, open_in_browser
from mcp_elicit.client.urls._open import browser_name, desktop_problem, is_console_browser

DESKTOP_VARS = (
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "SSH_CONNECTION",
    "SSH_CLIENT",
    "SSH_TTY",
    "CI",
    "BROWSER",
)


class FakeBrowser(webbrowser.BaseBrowser):
    def __init__(self, name: str = "firefox", result: bool = True) -> None:
        super().__init__(name)
        self.result = result
        self.calls: list[tuple[str, int, bool]] = []

    def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
        self.calls.append((url, new, autoraise))
        return self.result


@pytest.fixture(autouse=True)
def _never_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(using: str | None = None) -> Any:
        raise AssertionError("webbrowser.get was called although no browser may be opened")

    monkeypatch.setattr(webbrowser, "get", forbidden)
    monkeypatch.setattr(webbrowser, "open", forbidden)
    for name in DESKTOP_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def desktop(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Linux desktop session: DISPLAY set, no SSH, not CI."""
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("DISPLAY", ":0")


def _install(monkeypatch: pytest.MonkeyPatch, controller: webbrowser.BaseBrowser) -> None:
    monkeypatch.setattr(webbrowser, "get", lambda using=None: controller)


@pytest.mark.usefixtures("desktop")
def test_opens_exactly_the_displayed_href(monkeypatch: pytest.MonkeyPatch) -> None:
    browser = FakeBrowser()
    _install(monkeypatch, browser)
    assessment = assess_url("HTTPS://Mcp.Example.COM/connect/a%20b?x=1#y")
    assert assessment.verdict == "ok"
    result = open_in_browser(assessment)
    assert result == OpenResult(opened=True, reason="opened in the browser (firefox)", print_url=False)
    displayed = "".join(text for _, text in assessment.parts)
    assert browser.calls == [(displayed, 2, True)]
    assert browser.calls[0][0] == assessment.href == "https://mcp.example.com/connect/a%20b?x=1#y"


@pytest.mark.usefixtures("desktop")
def test_warned_url_opens_after_consent(monkeypatch: pytest.MonkeyPatch) -> None:
    browser = FakeBrowser()
    _install(monkeypatch, browser)
    assessment = assess_url("https://xn--mnchen-3ya.de:8443/")
    assert assessment.verdict == "warn"
    assert open_in_browser(assessment).opened
    assert browser.calls[0][0] == "https://xn--mnchen-3ya.de:8443/"


@pytest.mark.usefixtures("desktop")
def test_loopback_http_in_development_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    browser = FakeBrowser()
    _install(monkeypatch, browser)
    assessment = assess_url("http://localhost:3000/cb", allow_loopback_http=True)
    assert open_in_browser(assessment).opened
    assert browser.calls[0][0] == "http://localhost:3000/cb"


@pytest.mark.usefixtures("desktop")
@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "-https://example.com",
        "--remote-debugging-port=9222",
        "https://paypal.com@evil.com/",
        "http://example.com/",
        "https://10.0.0.1/",
        "https://xn--80ak6aa92e.com/",
        "file:///etc/passwd",
    ],
)
def test_refused_urls_are_never_opened(url: str) -> None:
    result = open_in_browser(assess_url(url))
    assert not result.opened
    assert not result.print_url
    assert "refused" in result.reason


@pytest.mark.usefixtures("desktop")
@pytest.mark.parametrize(
    "href",
    [
        "-https://example.com/",  # CVE-2026-4519 option injection
        "--new-window=https://example.com/",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https://10.0.0.1/",
        "http://example.com/",
        "https://exa mple.com/",
        "https://example.com/\n",
        "HTTPS://EXAMPLE.COM/",  # not canonical: what opens must be what was shown
        "",
    ],
)
def test_forged_assessments_are_not_opened(href: str) -> None:
    genuine = assess_url("https://example.com/")
    forged = dataclasses.replace(genuine, href=href, verdict="ok", reasons=())
    result = open_in_browser(forged)
    assert not result.opened
    assert not result.print_url


@pytest.mark.usefixtures("desktop")
def test_http_loopback_needs_an_http_assessment() -> None:
    genuine = assess_url("https://example.com/")
    forged = dataclasses.replace(genuine, href="http://127.0.0.1/")
    assert not open_in_browser(forged).opened


def test_not_an_assessment() -> None:
    result = open_in_browser("https://example.com/")  # type: ignore[arg-type]
    assert not result.opened
    assert not result.print_url


@pytest.mark.usefixtures("desktop")
def test_action_placeholder_is_not_handed_to_webbrowser() -> None:
    # webbrowser replaces "%action" inside the URL for some Unix browsers.
    assessment = assess_url("https://example.com/%action")
    assert assessment.verdict == "ok"
    result = open_in_browser(assessment)
    assert not result.opened
    assert result.print_url


def test_no_display_on_linux_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    result = open_in_browser(assess_url("https://example.com/"))
    assert not result.opened
    assert result.print_url
    assert "no graphical desktop" in result.reason


@pytest.mark.usefixtures("desktop")
def test_ssh_session_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSH_CONNECTION", "10.0.0.2 50000 10.0.0.3 22")
    result = open_in_browser(assess_url("https://example.com/"))
    assert (result.opened, result.print_url) == (False, True)
    assert "SSH" in result.reason


@pytest.mark.usefixtures("desktop")
def test_ci_prints_even_with_browser_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("BROWSER", "firefox")
    result = open_in_browser(assess_url("https://example.com/"))
    assert (result.opened, result.print_url) == (False, True)
    assert "CI" in result.reason


def test_browser_variable_is_respected_over_ssh(monkeypatch: pytest.MonkeyPatch) -> None:
    # e.g. an editor's remote helper that opens the URL on the person's own machine
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("SSH_TTY", "/dev/pts/1")
    monkeypatch.setenv("BROWSER", "/home/me/.editor-server/bin/helpers/browser.sh")
    browser = FakeBrowser(name="/home/me/.editor-server/bin/helpers/browser.sh")
    _install(monkeypatch, browser)
    assert open_in_browser(assess_url("https://example.com/")).opened
    assert browser.calls == [("https://example.com/", 2, True)]


@pytest.mark.usefixtures("desktop")
@pytest.mark.parametrize("name", ["lynx", "w3m", "/usr/bin/links", "www-browser", "elinks -remote", "browsh"])
def test_console_browsers_are_not_launched(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    browser = FakeBrowser(name=name)
    _install(monkeypatch, browser)
    result = open_in_browser(assess_url("https://example.com/"))
    assert (result.opened, result.print_url) == (False, True)
    assert "inside this terminal" in result.reason
    assert browser.calls == []


@pytest.mark.usefixtures("desktop")
def test_console_browser_from_browser_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSH_TTY", "/dev/pts/1")
    monkeypatch.setenv("BROWSER", "lynx")
    browser = FakeBrowser(name="lynx")
    _install(monkeypatch, browser)
    result = open_in_browser(assess_url("https://example.com/"))
    assert (result.opened, result.print_url) == (False, True)
    assert browser.calls == []


def test_elinks_controller_is_a_console_browser() -> None:
    assert is_console_browser(webbrowser.Elinks("elinks"))
    assert is_console_browser(webbrowser.GenericBrowser(["w3m", "%s"]))
    assert not is_console_browser(webbrowser.BackgroundBrowser("xdg-open"))
    assert browser_name(webbrowser.GenericBrowser("C:\\Programs\\Lynx.EXE")) == "lynx"


@pytest.mark.usefixtures("desktop")
def test_browser_that_fails_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    _install(monkeypatch, FakeBrowser(result=False))
    result = open_in_browser(assess_url("https://example.com/"))
    assert (result.opened, result.print_url) == (False, True)


@pytest.mark.usefixtures("desktop")
def test_no_browser_at_all(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(using: str | None = None) -> Any:
        raise webbrowser.Error("could not locate runnable browser")

    monkeypatch.setattr(webbrowser, "get", missing)
    result = open_in_browser(assess_url("https://example.com/"))
    assert (result.opened, result.print_url) == (False, True)


@pytest.mark.usefixtures("desktop")
def test_browser_raising_oserror(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken(FakeBrowser):
        def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
            raise OSError("exec format error")

    _install(monkeypatch, Broken())
    result = open_in_browser(assess_url("https://example.com/"))
    assert (result.opened, result.print_url) == (False, True)


@pytest.mark.parametrize(
    ("environ", "platform", "problem"),
    [
        ({}, "linux", "no graphical desktop"),
        ({"DISPLAY": ":0"}, "linux", None),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "freebsd14", None),
        ({}, "darwin", None),
        ({}, "win32", None),
        ({"SSH_CLIENT": "1 2 3"}, "darwin", "SSH"),
        ({"DISPLAY": ":0", "SSH_CONNECTION": "x"}, "linux", "SSH"),
        ({"CI": "true"}, "darwin", "CI"),
        ({"CI": "1", "BROWSER": "firefox"}, "win32", "CI"),
        ({"CI": "false", "DISPLAY": ":0"}, "linux", None),
        ({"BROWSER": "firefox"}, "linux", None),
    ],
)
def test_desktop_problem(environ: dict[str, str], platform: str, problem: str | None) -> None:
    found = desktop_problem(environ, platform)
    if problem is None:
        assert found is None
    else:
        assert found is not None
        assert problem in found


def test_open_result_shape() -> None:
    result = OpenResult(opened=False, reason="x")
    assert result.print_url is False
    assert isinstance(assess_url("https://example.com/"), UrlAssessment)
