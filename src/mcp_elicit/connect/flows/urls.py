"""The URL sent to the client for a flow: ``<base>/connect/<id>`` or ``<base>/secret/<id>``.

What the spec asks of such a URL, and how this holds it:

* no personal or sensitive data: the URL is the configured base plus the kind plus the random id,
  nothing else (no email, no ``sub``, no provider authorize URL, no token). A base with a query,
  a fragment or userinfo is refused, so nothing can ride along there;
* not pre-authenticated: the id only names a server-side record; the page behind it must still
  establish who the visitor is and compare with the record's owner. Treat the URL as public: it
  passes through the model, the client, logs, and maybe other people;
* https outside development: ``http`` is accepted only with ``development=True`` and only for a
  loopback host (``localhost``, ``127.0.0.0/8``, ``::1``).
"""

from __future__ import annotations

from mcp_elicit.connect.identity.urls import check_service_url

from .model import PendingFlow, is_flow_id

__all__ = ["check_base_url", "flow_id_in", "flow_url"]


def check_base_url(base_url: str, *, development: bool = False) -> str:
    """``base_url`` without its trailing ``/`` if it may prefix flow URLs; ``ValueError`` if not."""
    parts = check_service_url(base_url, "base_url", allow_loopback_http=development)
    if parts.query or "?" in base_url:
        raise ValueError(f"base_url must not contain a query: {base_url!r}")
    return base_url.rstrip("/")


def flow_url(base_url: str, flow: PendingFlow, *, development: bool = False) -> str:
    """The URL for ``flow`` under ``base_url`` (e.g. ``https://mcp.example.com``)."""
    if not isinstance(flow, PendingFlow):
        raise TypeError("flow must be a PendingFlow")
    if not is_flow_id(flow.id):
        raise ValueError("flow has no valid id")
    if flow.kind not in ("connect", "secret"):
        raise ValueError(f"unknown flow kind {flow.kind!r}")
    return f"{check_base_url(base_url, development=development)}/{flow.kind}/{flow.id}"


def flow_id_in(base_url: str, url: str) -> str | None:
    """The flow id of ``url`` if it is a flow URL under ``base_url`` (as :func:`flow_url` makes
    them, ``base_url`` already checked), else ``None``."""
    for kind in ("connect", "secret"):
        prefix = f"{base_url}/{kind}/"
        if url.startswith(prefix) and is_flow_id(url[len(prefix) :]):
            return url[len(prefix) :]
    return None
