"""The values the URL safety module hands to a client UI."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

UrlVerdict = Literal["ok", "warn", "refuse"]


@dataclass(frozen=True, slots=True)
class UrlAssessment:
    """What :func:`~mcp_elicit.client.urls.assess_url` found out about one URL.

    ``href`` is the WHATWG-canonical form (what a browser navigates to). It is the only string a
    UI may show as "the address" and the only string :func:`open_in_browser` opens. ``original``
    is kept for diagnostics; never open it, and escape it before showing it.

    ``reasons`` holds one human-readable sentence per refusal or warning, refusals first. A
    ``"warn"`` verdict means: show the reasons prominently and ask for an extra confirmation.
    A ``"refuse"`` verdict means: do not offer to open the URL (it may still be shown, escaped,
    with the reasons).
    """

    verdict: UrlVerdict
    original: str
    href: str | None
    scheme: str | None
    host: str | None
    unicode_host: str | None
    registrable_domain: str | None
    parts: tuple[tuple[str, str], ...]
    reasons: tuple[str, ...]

    @property
    def is_idn(self) -> bool:
        """True if the host is an internationalised name (some label is ``xn--``)."""
        return self.host is not None and any(label.startswith("xn--") for label in self.host.split("."))


@dataclass(frozen=True, slots=True)
class OpenResult:
    """The outcome of :func:`~mcp_elicit.client.urls.open_in_browser`.

    ``print_url`` is True when the URL itself is fine but this client did not (or could not)
    open it, e.g. in an SSH session, without a desktop, in CI, or when the only browser would
    run inside this terminal: the caller should then print ``assessment.href`` so that the person
    can open it themselves (and offer to copy it). It is False when the URL was opened, and
    when it was refused (a refused URL must not be offered for opening by hand either).
    """

    opened: bool
    reason: str
    print_url: bool = False
