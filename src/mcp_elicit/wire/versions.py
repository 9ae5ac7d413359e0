"""Protocol versions this implementation speaks."""

from __future__ import annotations

LATEST_VERSION = "2026-07-28"
SUPPORTED_VERSIONS: tuple[str, ...] = (LATEST_VERSION,)

# Handshake-era revisions: a request naming one of these came from a legacy client.
LEGACY_VERSIONS: frozenset[str] = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
