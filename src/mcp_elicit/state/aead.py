"""One AEAD sealer: AES-256-GCM written as ``kid ‖ nonce ‖ ciphertext``, under keys found by key id.

Three formats use it; each keeps its own bytes, and what differs between them is said by the
caller, not written again:

=============================  ==========================================  ================================
format                         associated data                             around the sealed bytes
=============================  ==========================================  ================================
``requestState`` (state.seal)  ``"mcp-elicit requestState v1\\0" ‖ kid``     ``"v1."`` + base64url
page cookies (pages.sealing)   ``"mcp-elicit/v1 pages cookie\\0" ‖ name``    base64url
vault data-key wrap (crypto)   length-prefixed row fields ‖ kid            a version byte before, the
                                                                           record's payload after
=============================  ==========================================  ================================

* ``kid`` is the ring's key id, :data:`~mcp_elicit.state.keys.KID_BYTES` raw bytes in clear, so
  opening picks the key directly instead of trying each one. Whether it is also authenticated (part
  of the associated data) is the one parameter of :class:`AeadSealer`,
  ``kid_in_associated_data``: the cookies do not add it, the two others do. Either way a kid
  changed to name another key of the ring fails decryption, since that key did not seal.
* The nonce is 96 random bits per seal (AES-GCM's own size; rotate a key well before 2**32 seals).
* Opening fails closed with one error, :class:`OpenRefused`, whatever went wrong; its ``reason``
  is for logs only.

:func:`encrypt` and :func:`decrypt` are the same minus the kid, for a key used once (the vault's
data key of one record). No I/O here, and no ``cryptography`` import: the keys bring it (a
:class:`~mcp_elicit.state.keys.KeyRing` at its first use, :class:`Subkeys` when derived).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final, Literal, Protocol

from .keys import KID_BYTES, KeyRing

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = [
    "NONCE_BYTES",
    "OVERHEAD",
    "TAG_BYTES",
    "AeadSealer",
    "OpenRefusal",
    "OpenRefused",
    "SealingKeys",
    "Subkeys",
    "decrypt",
    "encrypt",
]

NONCE_BYTES: Final = 12
TAG_BYTES: Final = 16
OVERHEAD: Final = KID_BYTES + NONCE_BYTES + TAG_BYTES
"""What :meth:`AeadSealer.seal` adds to the plaintext: the shortest value :meth:`~AeadSealer.open`
can accept."""

OpenRefusal = Literal[
    "malformed",  # too short to hold a kid, a nonce and a tag
    "unknown-key",  # the kid names no key
    "decrypt-failed",  # authentication failed: tampered, wrong key, other associated data
]


class OpenRefused(Exception):
    """A sealed value that does not open. ``reason`` says why, for logs."""

    def __init__(self, reason: OpenRefusal) -> None:
        super().__init__(reason)
        self.reason: OpenRefusal = reason


class SealingKeys(Protocol):
    """Keys named by kid, one of which seals (a :class:`KeyRing`, or :class:`Subkeys`)."""

    def sealing_key(self) -> tuple[bytes, AESGCM]:
        """``(kid, cipher)`` of the key that seals."""
        ...

    def key_for(self, kid: bytes) -> AESGCM | None:
        """The cipher of the key named ``kid``, or ``None``."""
        ...


class Subkeys:
    """Ciphers by kid, the first one seals: a ring's keys passed through HKDF for one purpose
    (:meth:`derive`), so that no key serves two purposes while the kids stay the ring's own."""

    __slots__ = ("_by_kid", "_sealing")

    def __init__(self, ciphers: Iterable[tuple[bytes, AESGCM]]) -> None:
        by_kid: dict[bytes, AESGCM] = {}
        for kid, cipher in ciphers:
            by_kid.setdefault(kid, cipher)  # a kid given twice keeps its first cipher
        if not by_kid:
            raise ValueError("Subkeys needs at least one key")
        self._by_kid = by_kid
        self._sealing = next(iter(by_kid.items()))

    @classmethod
    def derive(cls, ring: KeyRing, info: bytes) -> Subkeys:
        """The subkeys ``HKDF-SHA256(key, info)`` of every key of ``ring`` (:meth:`KeyRing.derive`)."""
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        return cls((kid, AESGCM(subkey)) for kid, subkey in ring.derive(info))

    @property
    def ciphers(self) -> tuple[tuple[bytes, AESGCM], ...]:
        """``(kid, cipher)`` pairs, the sealing one first."""
        return tuple(self._by_kid.items())

    def sealing_key(self) -> tuple[bytes, AESGCM]:
        return self._sealing

    def key_for(self, kid: bytes) -> AESGCM | None:
        return self._by_kid.get(kid)

    def __repr__(self) -> str:  # never shows key material
        return f"Subkeys(kids={[kid.hex() for kid in self._by_kid]!r})"


def encrypt(cipher: AESGCM, plaintext: bytes, associated_data: bytes) -> bytes:
    """``nonce ‖ ciphertext`` under a fresh random nonce."""
    nonce = os.urandom(NONCE_BYTES)
    return nonce + cipher.encrypt(nonce, plaintext, associated_data)


def decrypt(cipher: AESGCM, sealed: bytes, associated_data: bytes) -> bytes:
    """The plaintext of ``nonce ‖ ciphertext``; :class:`OpenRefused` if it does not authenticate."""
    if len(sealed) < NONCE_BYTES + TAG_BYTES:
        raise OpenRefused("malformed")
    try:
        return cipher.decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], associated_data)
    except Exception:
        # InvalidTag, the one failure of a well-formed value (not imported here: cryptography
        # comes with the keys); any other failure refuses the value too.
        raise OpenRefused("decrypt-failed") from None


class AeadSealer:
    """Seal as ``kid ‖ nonce ‖ ciphertext`` under the sealing key of the keys given; open under the
    key the kid names. ``kid_in_associated_data``: the kid is appended to the associated data."""

    __slots__ = ("_kid_in_associated_data",)

    def __init__(self, *, kid_in_associated_data: bool) -> None:
        self._kid_in_associated_data = kid_in_associated_data

    def _associated_data(self, associated_data: bytes, kid: bytes) -> bytes:
        return associated_data + kid if self._kid_in_associated_data else associated_data

    def seal(self, keys: SealingKeys, plaintext: bytes, associated_data: bytes) -> bytes:
        kid, cipher = keys.sealing_key()
        return kid + encrypt(cipher, plaintext, self._associated_data(associated_data, kid))

    def open(self, keys: SealingKeys, sealed: bytes, associated_data: bytes) -> bytes:
        """The plaintext; :class:`OpenRefused` for anything that was not sealed so, with these
        keys and this associated data."""
        if len(sealed) < OVERHEAD:
            raise OpenRefused("malformed")
        kid = sealed[:KID_BYTES]
        cipher = keys.key_for(kid)
        if cipher is None:
            raise OpenRefused("unknown-key")
        return decrypt(cipher, sealed[KID_BYTES:], self._associated_data(associated_data, kid))
