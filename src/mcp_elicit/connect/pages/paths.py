"""The pages' URL space under ``base_url`` and the one redirect target a request may choose.

Routes (relative to the base path): ``/connect/<id>``, ``/secret/<id>``, ``/login``,
``/login/callback``, ``/logout``, ``/oauth/<provider>/callback``, ``/done``.

``next`` (where to go after signing in or out) is accepted only when it is exactly our own
``<base path>/connect/<id>`` or ``<base path>/secret/<id>``: a path, never a URL, so there is no
open redirect (no ``//evil``, no ``https://``, no backslash or encoded tricks can pass).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from mcp_elicit.connect.flows import is_flow_id

from .headers import origin_of

__all__ = ["PagePaths"]

_FLOW_PATH = re.compile(r"/(connect|secret)/([A-Za-z0-9_-]{43})")


@dataclass(frozen=True, slots=True)
class PagePaths:
    """``base_url`` split into what the pages need."""

    base_url: str  # without a trailing slash
    origin: str  # scheme://host[:port]
    base_path: str  # "" or "/prefix"

    @classmethod
    def from_base_url(cls, base_url: str) -> PagePaths:
        base = base_url.rstrip("/")
        return cls(base, origin_of(base), urlsplit(base).path.rstrip("/"))

    def path(self, relative: str) -> str:
        """The absolute path of a route (what goes in ``href``, ``action`` and ``Location``)."""
        return self.base_path + relative

    def url(self, relative: str) -> str:
        return self.base_url + relative

    def relative(self, path: str, root_path: str) -> str | None:
        """The route part of a request path, or ``None`` when it is not under the base path.

        Accepts both the full path and one already stripped by a mount (``root_path`` equal to
        the base path)."""
        if not self.base_path:
            return path
        if path.startswith(self.base_path + "/"):
            return path[len(self.base_path) :]
        if root_path.rstrip("/") == self.base_path and path.startswith("/"):
            return path
        return None

    def flow_path(self, kind: str, flow_id: str) -> str:
        return self.path(f"/{kind}/{flow_id}")

    def checked_next(self, value: str | None) -> str | None:
        """``value`` if it is one of our flow pages' paths, else ``None``."""
        if not value or not value.startswith(self.base_path + "/"):
            return None
        match = _FLOW_PATH.fullmatch(value[len(self.base_path) :])
        if match is None or not is_flow_id(match.group(2)):
            return None
        return value
