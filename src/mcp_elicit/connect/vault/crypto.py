"""Envelope encryption of vault records (no I/O).

Scheme (format version 1)
-------------------------
Every write of a record draws a fresh random 256-bit **data key** (DEK). The record's payload (the
tokens, the expiry, the granted scopes... serialised as JSON) is encrypted with AES-256-GCM under
that DEK; the DEK itself is encrypted ("wrapped") with AES-256-GCM under the **key-encryption key**
(KEK) of the ring's first key. Both use a fresh random 96-bit nonce. The stored value is one blob::

    version (1 byte = 0x01) | kid (4) | wrap nonce (12) | wrapped DEK (32 + 16 tag)
                            | data nonce (12) | payload ciphertext + tag (>= 16)

Why envelope encryption rather than AES-GCM directly under the ring key:

* rotation re-wraps 48 bytes per row and never touches (or even decrypts into memory for long) the
  token ciphertexts; a rotated row keeps its payload ciphertext byte for byte;
* the KEK only ever encrypts 32 random bytes, one per write, so its 2**32 random-nonce budget is
  counted in writes, not in records times refreshes of large payloads, and each DEK encrypts
  exactly one message;
* the KEK can later move into a KMS / HSM that wraps and unwraps DEKs without seeing a token.

Associated data
---------------
Both encryptions authenticate a canonical, length-prefixed encoding of::

    "mcp-elicit/vault" | purpose ("data" or "dek") | version | kind ("connection" | "secret")
                       | owner | provider id or secret name | record id   [| kid, for "dek"]

read from the row's *own* columns when it is opened. A ciphertext copied into another user's row,
into another provider's row, or under another record id fails authentication
(:class:`~mcp_elicit.connect.vault.errors.VaultCorrupt`), as does a wrapped DEK moved between rows.
The ``purpose`` label keeps a wrapped DEK and a payload from ever being interchangeable.

Key ring and subkeys
--------------------
The vault reuses :class:`mcp_elicit.state.KeyRing` for parsing, validation, ordering (the first key
seals, every key opens) and key ids. It never uses a ring key directly: each ring key ``K`` yields
the vault KEK ``HKDF-SHA256(ikm=K, salt=None, info=VAULT_KEK_INFO, length=32)``. The same ring can
therefore be given to the ``requestState`` sealer and to the vault without a key ever serving both
purposes (the sealer uses ``K`` itself; the vault only ``HKDF(K, "...vault KEK")``). The kid stored in
a vault row is the ring's kid of ``K`` (so ``ring.without(kid)`` and :meth:`Vault.key_usage` speak
the same language); it reveals nothing about either key.

"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mcp_elicit.state import KeyRing

from .errors import VaultCorrupt

__all__ = [
    "FORMAT_VERSION",
    "VAULT_KEK_INFO",
    "RecordContext",
    "RecordKind",
    "VaultKeys",
]

FORMAT_VERSION: Final = 1
VAULT_KEK_INFO: Final = b"mcp-elicit/v1 vault key-encryption key"
"""HKDF ``info`` label that turns a ring key into a vault KEK. Changing it orphans every row."""

_AAD_LABEL: Final = b"mcp-elicit/vault"
_KID_BYTES: Final = 4
_NONCE_BYTES: Final = 12
_DEK_BYTES: Final = 32
_TAG_BYTES: Final = 16
_WRAPPED_BYTES: Final = _DEK_BYTES + _TAG_BYTES
_HEADER_BYTES: Final = 1 + _KID_BYTES + _NONCE_BYTES + _WRAPPED_BYTES  # up to the data nonce
_MIN_BLOB_BYTES: Final = _HEADER_BYTES + _NONCE_BYTES + _TAG_BYTES

RecordKind = Literal["connection", "secret"]


def _encode(*parts: bytes) -> bytes:
    """Length-prefixed concatenation: no two different tuples encode to the same bytes."""
    return b"".join(len(part).to_bytes(4, "big") + part for part in parts)


@dataclass(frozen=True, slots=True)
class RecordContext:
    """The row a ciphertext belongs to; everything here is bound into the associated data."""

    kind: RecordKind
    owner: str
    label: str  # provider id (connections) or secret name (secrets)
    record_id: str

    def _parts(self) -> tuple[bytes, ...]:
        return (
            bytes([FORMAT_VERSION]),
            self.kind.encode(),
            self.owner.encode("utf-8", "surrogatepass"),
            self.label.encode("utf-8", "surrogatepass"),
            self.record_id.encode("utf-8", "surrogatepass"),
        )

    def data_aad(self) -> bytes:
        return _encode(_AAD_LABEL, b"data", *self._parts())

    def wrap_aad(self, kid: bytes) -> bytes:
        return _encode(_AAD_LABEL, b"dek", *self._parts(), kid)

    def corrupt(
        self,
        reason: Literal["malformed", "unknown-key", "decrypt-failed", "bad-payload"],
        key_id: str | None = None,
    ) -> VaultCorrupt:
        return VaultCorrupt(reason, kind=self.kind, label=self.label, record_id=self.record_id, key_id=key_id)


class VaultKeys:
    """The vault's KEKs, derived from a :class:`KeyRing`: the first wraps, every one unwraps."""

    __slots__ = ("_by_kid", "_first", "_kids")

    def __init__(self, ring: KeyRing, *, also: Iterable[VaultKeys] = ()) -> None:
        if not isinstance(ring, KeyRing):
            raise TypeError("VaultKeys needs a mcp_elicit.state.KeyRing")
        by_kid: dict[bytes, AESGCM] = {}
        kids: list[str] = []
        derived = ring.derive(VAULT_KEK_INFO)
        for kid, subkey in derived:
            by_kid[kid] = AESGCM(subkey)
            kids.append(kid.hex())
        first = derived[0][0]
        for extra in also:  # extra unwrapping keys (used while rotating)
            extra_keys: dict[bytes, AESGCM] = extra._by_kid
            for kid, kek in extra_keys.items():
                if kid not in by_kid:
                    by_kid[kid] = kek
                    kids.append(kid.hex())
        self._first: bytes = first
        self._by_kid: dict[bytes, AESGCM] = by_kid
        self._kids: tuple[str, ...] = tuple(kids)

    @property
    def kids(self) -> tuple[str, ...]:
        """Key ids, the wrapping key first."""
        return self._kids

    @property
    def sealing_kid(self) -> str:
        """Id (hex) of the key that wraps new records' data keys: the ring's first."""
        return self._first.hex()

    def __repr__(self) -> str:  # never shows key material
        return f"VaultKeys(kids={list(self._kids)!r})"

    # ----------------------------------------------------------------------------- seal / open

    def seal(self, context: RecordContext, plaintext: bytes) -> bytes:
        """Encrypt ``plaintext`` for the row ``context`` under a fresh DEK."""
        dek = os.urandom(_DEK_BYTES)
        data_nonce = os.urandom(_NONCE_BYTES)
        ciphertext = AESGCM(dek).encrypt(data_nonce, plaintext, context.data_aad())
        return self._wrap(context, dek) + data_nonce + ciphertext

    def _wrap(self, context: RecordContext, dek: bytes) -> bytes:
        kid = self._first
        wrap_nonce = os.urandom(_NONCE_BYTES)
        wrapped = self._by_kid[kid].encrypt(wrap_nonce, dek, context.wrap_aad(kid))
        return bytes([FORMAT_VERSION]) + kid + wrap_nonce + wrapped

    def _unwrap(self, context: RecordContext, blob: object) -> tuple[bytes, bytes]:
        """``(dek, rest)`` where rest is ``data nonce | ciphertext``; raises VaultCorrupt."""
        if isinstance(blob, bytearray | memoryview):
            blob = bytes(blob)
        if not isinstance(blob, bytes) or len(blob) < _MIN_BLOB_BYTES or blob[0] != FORMAT_VERSION:
            raise context.corrupt("malformed")
        kid = blob[1 : 1 + _KID_BYTES]
        kek = self._by_kid.get(kid)
        if kek is None:
            raise context.corrupt("unknown-key", kid.hex())
        nonce_at = 1 + _KID_BYTES
        wrapped_at = nonce_at + _NONCE_BYTES
        try:
            dek = kek.decrypt(
                blob[nonce_at:wrapped_at], blob[wrapped_at:_HEADER_BYTES], context.wrap_aad(kid)
            )
        except InvalidTag:
            raise context.corrupt("decrypt-failed", kid.hex()) from None
        return dek, blob[_HEADER_BYTES:]

    def open(self, context: RecordContext, blob: object) -> bytes:
        """Decrypt a blob read from the row ``context``. Any failure is :class:`VaultCorrupt`."""
        dek, rest = self._unwrap(context, blob)
        try:
            return AESGCM(dek).decrypt(rest[:_NONCE_BYTES], rest[_NONCE_BYTES:], context.data_aad())
        except InvalidTag:
            raise context.corrupt("decrypt-failed", self.kid_of(blob)) from None

    def rewrap(self, context: RecordContext, blob: object) -> bytes | None:
        """The blob with its DEK re-wrapped under the first key, or ``None`` if it already is.

        The payload ciphertext is kept as it is, but it is authenticated first (a blob whose
        payload was tampered with is reported, not blessed with a fresh wrap).
        """
        if self.kid_of(blob) == self.sealing_kid:
            self.open(context, blob)
            return None
        dek, rest = self._unwrap(context, blob)
        try:
            AESGCM(dek).decrypt(rest[:_NONCE_BYTES], rest[_NONCE_BYTES:], context.data_aad())
        except InvalidTag:
            raise context.corrupt("decrypt-failed", self.kid_of(blob)) from None
        return self._wrap(context, dek) + rest

    @staticmethod
    def kid_of(blob: object) -> str | None:
        """The key id written in a blob, or ``None`` if it is not a blob of this format."""
        if isinstance(blob, bytearray | memoryview):
            blob = bytes(blob)
        if not isinstance(blob, bytes) or len(blob) < 1 + _KID_BYTES or blob[0] != FORMAT_VERSION:
            return None
        return blob[1 : 1 + _KID_BYTES].hex()


def ring_from(keys: KeyRing | Sequence[str | bytes]) -> KeyRing:
    """A :class:`KeyRing` from a ring or from secrets (``KeyRing.from_secrets`` rules)."""
    if isinstance(keys, KeyRing):
        return keys
    if isinstance(keys, str | bytes):
        raise TypeError("keys must be a KeyRing or a sequence of secrets, not a single str or bytes")
    return KeyRing.from_secrets(list(keys))
