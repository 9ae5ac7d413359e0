"""An answerer that declines every question: for runs where nobody can answer."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from mcp_elicit.client.questions import Answer, FormQuestion, UrlQuestion

__all__ = ["MODES", "AutoDecline", "check_modes"]

#: The elicitation modes there are.
MODES = frozenset({"form", "url"})


def check_modes(modes: Iterable[str]) -> frozenset[str]:
    """``modes`` as a frozenset, or ``ValueError`` if it names an unknown mode."""
    if isinstance(modes, str):  # "form" would otherwise become {"f", "o", "r", "m"}
        raise TypeError("modes must be a collection of mode names, such as {'form', 'url'}, not a string")
    result = frozenset(modes)
    unknown = sorted(result - MODES)
    if unknown:
        raise ValueError(f"unknown elicitation modes {unknown}; the modes are 'form' and 'url'")
    return result


class AutoDecline:
    """Declines every form and URL question, at once, without showing anything.

    By default it declares both modes (``modes == {"form", "url"}``). That is deliberate:
    a server that gates an action behind a confirmation then gets an explicit
    ``decline`` and takes its "the user said no" path. A client that declares no
    elicitation at all makes servers take their "cannot ask" path instead, and some
    servers treat that as permission to go ahead (qgis-mcp PR #41 ran destructive tools
    unconfirmed that way). A decline is a real answer this answerer really gives, so the
    declaration is honest. Pass ``modes=frozenset()`` to declare nothing, or
    ``{"form"}`` to decline forms only and let servers know URL questions cannot be sent.

    ``notify`` (optional) is called with each question before it is declined, so a CLI
    can say on stderr what it declined instead of declining silently.
    """

    def __init__(
        self,
        *,
        modes: Iterable[str] = MODES,
        notify: Callable[[FormQuestion | UrlQuestion], None] | None = None,
    ) -> None:
        self._modes = check_modes(modes)
        self._notify = notify

    @property
    def modes(self) -> frozenset[str]:
        """The modes given to the constructor (both by default)."""
        return self._modes

    async def answer_form(self, question: FormQuestion) -> Answer:
        """``decline``, after calling ``notify`` (if given) with the question."""
        if self._notify is not None:
            self._notify(question)
        return Answer("decline")

    async def answer_url(self, question: UrlQuestion) -> Answer:
        """``decline``, after calling ``notify`` (if given) with the question."""
        if self._notify is not None:
            self._notify(question)
        return Answer("decline")

    def __repr__(self) -> str:
        return f"AutoDecline(modes={sorted(self._modes)!r})"
