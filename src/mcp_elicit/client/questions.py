"""What the client engine hands to an answerer, and what it expects back.

The engine (``mcp_elicit.client.Client``) turns each ``elicitation/create`` entry of an
``InputRequiredResult`` into a :class:`FormQuestion` or :class:`UrlQuestion` and asks the
configured :class:`Answerer`. Answers to forms are validated against the requested schema before
they are sent; an invalid one comes back to the answerer as the same question with ``errors``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from mcp_elicit.wire.legacy import is_legacy_version

Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True, slots=True)
class ServerIdentity:
    """Which server asks: shown to the person with every question (the spec requires it).

    ``name``/``title``/``version`` come from the server (``serverInfo``, self-reported);
    ``reached_via`` is how this client reached it (the command line or the URL), which the
    server cannot fake; ``protocol_version`` is the MCP revision the connection speaks
    (``"2026-07-28"``, or ``"2025-11-25"`` for an ``initialize``-era server), to show with it.
    """

    name: str
    reached_via: str
    title: str | None = None
    version: str | None = None
    protocol_version: str | None = None

    @classmethod
    def of(
        cls, server_info: Mapping[str, Any], reached_via: str, protocol_version: str | None
    ) -> ServerIdentity:
        """The identity a ``serverInfo`` object claims (its strings only: a missing or non-string
        ``name`` reads as "(unnamed server)")."""

        def text(key: str) -> str | None:
            value = server_info.get(key)
            return value if isinstance(value, str) and value else None

        return cls(
            name=text("name") or "(unnamed server)",
            reached_via=reached_via,
            title=text("title"),
            version=text("version"),
            protocol_version=protocol_version,
        )

    @property
    def era(self) -> str | None:
        """``protocol_version`` in words: ``"MCP 2025-11-25 (initialize handshake)"`` or
        ``"MCP 2026-07-28"``; None when unknown."""
        if self.protocol_version is None:
            return None
        if is_legacy_version(self.protocol_version):
            return f"MCP {self.protocol_version} (initialize handshake)"
        return f"MCP {self.protocol_version}"


@dataclass(frozen=True, slots=True)
class FormQuestion:
    """A form to fill in: ``message`` and the ``schema`` (``requestedSchema``) the answer must fit.

    ``key`` is the entry's key in ``inputRequests``. When the previous answer failed validation,
    the same question comes back with ``errors`` (field name to message, ``""`` for the answer as
    a whole) and that answer in ``previous``. When the server asks again under the same key in
    the next round of the same call (it refused the answer, say; its message says why),
    ``previous`` is the answer given in the round before, and ``errors`` is empty.
    """

    server: ServerIdentity
    key: str
    message: str
    schema: dict[str, Any]  # a requestedSchema already checked against the subset
    errors: dict[str, str] = field(default_factory=dict)  # from the previous attempt, if any
    previous: dict[str, Any] | None = None  # the previous answer (invalid, or asked again), to pre-fill


@dataclass(frozen=True, slots=True)
class UrlQuestion:
    """A request to open ``url`` (out of band: what the person enters there never reaches the
    client). ``key`` is the entry's key in ``inputRequests``; check the URL with
    :func:`~mcp_elicit.client.urls.assess_url` before showing or opening it."""

    server: ServerIdentity
    key: str
    message: str
    url: str  # exactly as the server sent it; the answerer must check it before showing it


@dataclass(frozen=True, slots=True)
class Answer:
    """An answerer's reply: ``accept`` (with the form's ``content``), ``decline`` (an explicit
    no) or ``cancel`` (dismissed). ``content`` is ignored for anything but an accepted form."""

    action: Action
    content: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        """The ``ElicitResult``: ``action``, and ``content`` when accepted with content."""
        wire: dict[str, Any] = {"action": self.action}
        if self.action == "accept" and self.content is not None:
            wire["content"] = self.content
        return wire


@runtime_checkable
class Answerer(Protocol):
    """Puts questions in front of a person (or a script).

    ``modes`` says what it can really do; the client declares exactly that, never more.
    """

    @property
    def modes(self) -> frozenset[str]:
        """The elicitation modes it can answer (``"form"``, ``"url"``): the client declares these."""
        ...

    async def answer_form(self, question: FormQuestion) -> Answer:
        """The person's answer to a form. The engine validates an accepted answer and, if it is
        invalid, asks again with ``question.errors`` set. Raise (an
        :class:`~mcp_elicit.client.AnswererError`) rather than guess an answer."""
        ...

    async def answer_url(self, question: UrlQuestion) -> Answer:
        """The person's answer to a URL question (``accept`` once they agreed to open it)."""
        ...
