"""Sealed cookie values: AES-256-GCM under a subkey of the server's :class:`KeyRing`.

A value is ``base64url(kid ‖ nonce ‖ ciphertext)``, sealed by the shared sealer
(:mod:`mcp_elicit.state.aead`) and written in canonical unpadded base64url: any other spelling of
a value is refused. The key is ``KeyRing.derive(b"mcp-elicit connect pages cookies")``, so these
cookies never share a key with ``requestState`` or the vault. The cookie's *name* is the
associated data (the kid is not part of it: that is this format's bytes): a value sealed for the
login cookie cannot be replayed as a session cookie. The payload is JSON carrying its own expiry
(``exp``), checked here, because a browser's ``Max-Age`` is only a hint to the browser.

The first key of the ring seals; any key opens (rotation works as for ``requestState``). Given a
:class:`~mcp_elicit.state.key_file.KeyFile`, the subkeys follow the file as ``requestState`` does:
a key removed from the file stops opening cookies at the file's next check.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Final

import orjson

from mcp_elicit.state.aead import AeadSealer, OpenRefused, Subkeys
from mcp_elicit.state.key_file import KeyFile
from mcp_elicit.state.keys import KeyRing
from mcp_elicit.wire.codec import b64url_decode, b64url_encode

__all__ = ["COOKIE_KEY_INFO", "MAX_SEALED_CHARS", "CookieSealer"]

COOKIE_KEY_INFO: Final = b"mcp-elicit connect pages cookies"
MAX_SEALED_CHARS: Final = 3800
"""Longest sealed value accepted (browsers keep about 4 KiB per cookie)."""

_AD_PREFIX: Final = b"mcp-elicit/v1 pages cookie\x00"
_SEALER: Final = AeadSealer(kid_in_associated_data=False)


class CookieSealer:
    """Seal and open small JSON payloads bound to a cookie name."""

    def __init__(self, keys: KeyRing | KeyFile, *, clock: Callable[[], float] = time.time) -> None:
        self._key_file = keys if isinstance(keys, KeyFile) else None
        self._clock = clock
        ring = keys.ring if isinstance(keys, KeyFile) else keys
        self._subkeys = Subkeys.derive(ring, COOKIE_KEY_INFO)
        self._ring = ring

    def _current(self) -> Subkeys:
        """The subkeys of the ring in use, following the key file (a ``stat`` at most once per
        its ``check_interval``)."""
        if self._key_file is not None:
            ring = self._key_file.poll()
            if ring is not self._ring:
                # The subkeys first, the ring last: a concurrent reader sees old keys or new ones.
                self._subkeys = Subkeys.derive(ring, COOKIE_KEY_INFO)
                self._ring = ring
        return self._subkeys

    def seal(self, name: str, payload: Mapping[str, Any], ttl: float) -> str:
        """``payload`` plus an ``exp`` ``ttl`` seconds from now, sealed for cookie ``name``."""
        body = orjson.dumps({**payload, "exp": self._clock() + ttl})
        text = b64url_encode(_SEALER.seal(self._current(), body, _AD_PREFIX + name.encode("ascii")))
        if len(text) > MAX_SEALED_CHARS:  # a programming error, not user input
            raise ValueError(f"sealed cookie {name!r} is too large ({len(text)} characters)")
        return text

    def open(self, name: str, value: str) -> dict[str, Any] | None:
        """The payload, or ``None`` when ``value`` is malformed (not canonical base64url included),
        tampered, sealed for another cookie, under an unknown key, or expired. Never raises on bad
        input."""
        if not value or len(value) > MAX_SEALED_CHARS:
            return None
        associated_data = _AD_PREFIX + name.encode("ascii")
        keys = self._current()
        try:
            payload = orjson.loads(_SEALER.open(keys, b64url_decode(value), associated_data))
        except (ValueError, OpenRefused):  # orjson.JSONDecodeError is a ValueError
            return None
        if not isinstance(payload, dict):
            return None
        expires = payload.get("exp")
        if not isinstance(expires, int | float) or self._clock() >= expires:
            return None
        return payload
