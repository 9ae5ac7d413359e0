"""Protocol versions this implementation speaks."""

from __future__ import annotations

LATEST_VERSION = "2026-07-28"
SUPPORTED_VERSIONS: tuple[str, ...] = (LATEST_VERSION,)
