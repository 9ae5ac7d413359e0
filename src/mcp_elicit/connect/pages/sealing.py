"""Sealed cookie values: AES-256-GCM under a subkey of the server's :class:`KeyRing`.

A value is ``base64url(kid ‖ nonce ‖ ciphertext)``. The key is
``KeyRing.derive(b"mcp-elicit connect pages cookies")``, so these cookies never share a key with
``requestState`` or the vault. The cookie's *name* is the associated data: a value sealed for the
login cookie cannot be replayed as a session cookie. The payload is JSON carrying its own expiry
(``exp``), checked here, because a browser's ``Max-Age`` is only a hint to the browser.

The first key of the ring seals; any key opens (rotation works as for ``requestState``). Given a
:class:`~mcp_elicit.state.key_file.KeyFile`, the subkeys follow the file as ``requestState`` does:
a key removed from the file stops opening cookies at the file's next check.
"""

from __future__ import annotations

import base64
import binascii
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mcp_elicit.state.key_file import KeyFile
from mcp_elicit.state.keys import KID_BYTES, KeyRing

__all__ = ["COOKIE_KEY_INFO", "MAX_SEALED_CHARS", "CookieSealer"]

COOKIE_KEY_INFO: Final = b"mcp-elicit connect pages cookies"
MAX_SEALED_CHARS: Final = 3800
"""Longest sealed value accepted (browsers keep about 4 KiB per cookie)."""

_NONCE_BYTES: Final = 12
_AD_PREFIX: Final = b"mcp-elicit/v1 pages cookie\x00"


class CookieSealer:
    """Seal and open small JSON payloads bound to a cookie name."""

    def __init__(self, keys: KeyRing | KeyFile, *, clock: Callable[[], float] = time.time) -> None:
        self._key_file = keys if isinstance(keys, KeyFile) else None
        self._clock = clock
        self._ring: KeyRing | None = None
        self._sealing: tuple[bytes, AESGCM] = (b"", AESGCM(bytes(32)))
        self._by_kid: dict[bytes, AESGCM] = {}
        self._use(keys.ring if isinstance(keys, KeyFile) else keys)

    def _use(self, ring: KeyRing) -> None:
        derived = ring.derive(COOKIE_KEY_INFO)
        # One assignment each, the ring last: a concurrent reader sees the old keys or the new.
        self._sealing = (derived[0][0], AESGCM(derived[0][1]))
        self._by_kid = {kid: AESGCM(material) for kid, material in derived}
        self._ring = ring

    def _current(self) -> None:
        """Follow the key file (a ``stat`` at most once per its ``check_interval``)."""
        if self._key_file is not None:
            ring = self._key_file.poll()
            if ring is not self._ring:
                self._use(ring)

    def seal(self, name: str, payload: Mapping[str, Any], ttl: float) -> str:
        """``payload`` plus an ``exp`` ``ttl`` seconds from now, sealed for cookie ``name``."""
        body = orjson.dumps({**payload, "exp": self._clock() + ttl})
        self._current()
        kid, aead = self._sealing
        nonce = os.urandom(_NONCE_BYTES)
        sealed = kid + nonce + aead.encrypt(nonce, body, _AD_PREFIX + name.encode("ascii"))
        text = base64.urlsafe_b64encode(sealed).rstrip(b"=").decode("ascii")
        if len(text) > MAX_SEALED_CHARS:  # a programming error, not user input
            raise ValueError(f"sealed cookie {name!r} is too large ({len(text)} characters)")
        return text

    def open(self, name: str, value: str) -> dict[str, Any] | None:
        """The payload, or ``None`` when ``value`` is malformed, tampered, sealed for another
        cookie, under an unknown key, or expired. Never raises on bad input."""
        if not value or len(value) > MAX_SEALED_CHARS:
            return None
        try:
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        except (binascii.Error, ValueError):
            return None
        if len(raw) < KID_BYTES + _NONCE_BYTES + 16:
            return None
        self._current()
        aead = self._by_kid.get(raw[:KID_BYTES])
        if aead is None:
            return None
        nonce = raw[KID_BYTES : KID_BYTES + _NONCE_BYTES]
        try:
            body = aead.decrypt(nonce, raw[KID_BYTES + _NONCE_BYTES :], _AD_PREFIX + name.encode("ascii"))
            payload = orjson.loads(body)
        except (InvalidTag, orjson.JSONDecodeError):
            return None
        if not isinstance(payload, dict):
            return None
        expires = payload.get("exp")
        if not isinstance(expires, int | float) or self._clock() >= expires:
            return None
        return payload
