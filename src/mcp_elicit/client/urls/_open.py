"""``open_in_browser``: hand an assessed, consented-to URL to the system browser, or say why not.

The caller asks for consent first; this function only opens. It:

* re-checks the assessment (verdict not ``refuse``; the ``href`` re-assessed to itself; only
  ``https://`` or loopback ``http://``; never a string starting with ``-``, CVE-2026-4519);
* does not open in CI, in an SSH session, or on Linux/BSD without ``DISPLAY``/``WAYLAND_DISPLAY``
  (there is no browser the person can see) -- unless the person set ``BROWSER`` themselves
  (e.g. an editor's remote helper that opens the URL on their own machine), which is respected
  except in CI;
* asks ``webbrowser.get()`` for the first controller only (not ``webbrowser.open``, which falls
  back through every registered browser) and refuses console browsers (lynx, w3m, links, elinks,
  www-browser...) that would take over this terminal;
* passes exactly ``assessment.href`` as one argument (``webbrowser`` launches without a shell).

When it does not open an acceptable URL, ``OpenResult.print_url`` tells the caller to print the
URL for the person to open by hand. ``BROWSER`` commands are run by ``webbrowser`` in the
foreground, so a UI should call this from a worker thread.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ._assess import assess_url
from ._model import OpenResult, UrlAssessment

if TYPE_CHECKING:
    import webbrowser

CONSOLE_BROWSERS = frozenset(
    {
        "www-browser",
        "links",
        "links2",
        "elinks",
        "lynx",
        "w3m",
        "browsh",
        "carbonyl",
        "netrik",
        "edbrowse",
        "retawq",
        "cha",
        "chawan",
    }
)
_FALSEY = ("", "0", "false", "no", "off")


def open_in_browser(assessment: UrlAssessment) -> OpenResult:
    """Open ``assessment.href`` in the system browser (call only after explicit consent)."""
    problem = _unopenable(assessment)
    if problem is not None:
        return OpenResult(opened=False, reason=problem, print_url=False)
    href = assessment.href
    assert href is not None  # checked by _unopenable

    if "%action" in href:
        # webbrowser substitutes "%action" inside the URL for some Unix browsers: what opened
        # would differ from what was shown.
        return OpenResult(
            opened=False,
            reason="this URL cannot be passed safely to the browser launcher; open it by hand",
            print_url=True,
        )

    no_desktop = desktop_problem(os.environ, sys.platform)
    if no_desktop is not None:
        return OpenResult(opened=False, reason=f"{no_desktop}: open the URL by hand", print_url=True)

    import webbrowser

    try:
        controller = webbrowser.get()
    except webbrowser.Error:
        return OpenResult(
            opened=False, reason="no web browser was found: open the URL by hand", print_url=True
        )
    name = browser_name(controller)
    if is_console_browser(controller):
        return OpenResult(
            opened=False,
            reason=f"the only browser found ({name}) would run inside this terminal: open the URL by hand",
            print_url=True,
        )
    try:
        opened = bool(controller.open(href, new=2, autoraise=True))
    except (webbrowser.Error, OSError, ValueError):
        opened = False
    if not opened:
        return OpenResult(
            opened=False, reason=f"the browser ({name or 'default'}) could not be started", print_url=True
        )
    return OpenResult(opened=True, reason=f"opened in the browser ({name or 'default'})")


def _unopenable(assessment: UrlAssessment) -> str | None:
    if not isinstance(assessment, UrlAssessment):
        return "not an assessment from assess_url"
    if assessment.verdict == "refuse":
        why = assessment.reasons[0] if assessment.reasons else "it was refused"
        return f"this URL was refused and must not be opened: {why}"
    href = assessment.href
    if not isinstance(href, str) or not href:
        return "there is no URL to open"
    if href.startswith("-") or not href.isascii() or any(ord(ch) <= 0x20 or ord(ch) == 0x7F for ch in href):
        return "the URL is not in a form that can be passed safely to a browser"
    # Re-assess: the assessment object could have been built or altered by hand. Development mode
    # is assumed here only to accept loopback URLs it may have allowed; it never widens anything else.
    again = assess_url(href, allow_loopback_http=True)
    if again.verdict == "refuse" or again.href != href:
        return "the URL does not pass the checks again in its canonical form"
    if href.startswith("https://"):
        return None
    if href.startswith("http://") and assessment.scheme == "http" and again.scheme == "http":
        return None  # assess_url allows http only for loopback hosts in development mode
    return "only https links (or loopback http, when loopback links are allowed) can be opened"


def desktop_problem(environ: Mapping[str, str], platform: str) -> str | None:
    """Why a browser opened from here would not be seen by the person, or None."""
    if environ.get("CI", "").strip().lower() not in _FALSEY:
        return "this is a CI run, with nobody to see a browser"
    if environ.get("BROWSER", "").strip():
        return None  # the person's own choice (checked for console browsers afterwards)
    if environ.get("SSH_CONNECTION") or environ.get("SSH_CLIENT") or environ.get("SSH_TTY"):
        return "this is an SSH session: a browser would open on the remote machine, not in front of you"
    unix_like = not (platform.startswith(("win", "cygwin", "msys")) or platform == "darwin")
    if unix_like and not (environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY")):
        return "there is no graphical desktop here (DISPLAY and WAYLAND_DISPLAY are not set)"
    return None


def browser_name(controller: webbrowser.BaseBrowser) -> str:
    """The program name behind a ``webbrowser`` controller ('' if unknown)."""
    name = getattr(controller, "name", "")
    if not isinstance(name, str) or not name.strip():
        return ""
    first = name.strip().split()[0]
    base = os.path.basename(first.replace("\\", "/")).lower()
    return base.removesuffix(".exe")


def is_console_browser(controller: webbrowser.BaseBrowser) -> bool:
    import webbrowser

    return isinstance(controller, webbrowser.Elinks) or browser_name(controller) in CONSOLE_BROWSERS
