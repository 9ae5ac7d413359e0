"""Client-side URL safety for URL-mode elicitation: assess, display, and open a server's URL.

::

    from mcp_elicit.client.urls import assess_url, describe_for_terminal, open_in_browser

    assessment = assess_url(question.url)           # offline, never raises
    show(describe_for_terminal(assessment))         # full canonical URL, site highlighted, reasons
    if assessment.verdict != "refuse" and person_consents():   # "warn": ask for an extra confirmation
        result = open_in_browser(assessment)
        if result.print_url:
            show(assessment.href)                   # SSH, no desktop, CI, console-only browser

``ada-url`` and ``publicsuffixlist`` are imported on the first call of :func:`assess_url`, not on
import of this package.
"""

from __future__ import annotations

from ._assess import DEFAULT_MAX_LENGTH, assess_url
from ._display import describe_for_terminal, printable
from ._model import OpenResult, UrlAssessment, UrlVerdict
from ._open import open_in_browser

__all__ = [
    "DEFAULT_MAX_LENGTH",
    "OpenResult",
    "UrlAssessment",
    "UrlVerdict",
    "assess_url",
    "describe_for_terminal",
    "open_in_browser",
    "printable",
]
