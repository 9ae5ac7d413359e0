"""Envelope encryption of vault records (no I/O).

Scheme (format version 1)
-------------------------
Every write of a record draws a fresh random 256-bit **data key** (DEK). The record's payload (the
tokens, the expiry, the granted scopes... serialised as JSON) is encrypted with AES-256-GCM under
that DEK; the DEK itself is encrypted ("wrapped") with AES-256-GCM under the **key-encryption key**
(KEK) of the ring's first key. Both use a fresh random 96-bit nonce. The stored value is one blob::

    version (1 byte = 0x01) | kid (4) | wrap nonce (12) | wrapped DEK (32 + 16 tag)
                            | data nonce (12) | payload ciphertext + tag (>= 16)

``kid | wrap nonce | wrapped DEK`` is the shared sealer's ``kid ‖ nonce ‖ ciphertext``
(:class:`mcp_elicit.state.aead.AeadSealer`, the kid in the associated data); ``data nonce |
payload`` is the same minus the kid (:func:`mcp_elicit.state.aead.encrypt`), the DEK being used once.

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

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mcp_elicit.state import KeyRing
from mcp_elicit.state.aead import NONCE_BYTES, OVERHEAD, TAG_BYTES, AeadSealer, OpenRefused, Subkeys
from mcp_elicit.state.aead import decrypt as aead_decrypt
from mcp_elicit.state.aead import encrypt as aead_encrypt
from mcp_elicit.state.keys import KID_BYTES

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
_DEK_BYTES: Final = 32
_HEADER_BYTES: Final = 1 + OVERHEAD + _DEK_BYTES  # version and the wrapped DEK: up to the data nonce
_MIN_BLOB_BYTES: Final = _HEADER_BYTES + NONCE_BYTES + TAG_BYTES
_KID_LENGTH: Final = KID_BYTES.to_bytes(4, "big")
_WRAPPER: Final = AeadSealer(kid_in_associated_data=True)

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
        return self._wrap_aad_without_kid() + kid

    def _wrap_aad_without_kid(self) -> bytes:
        """:meth:`wrap_aad` but the kid, which the sealer appends: the kid is the last
        length-prefixed part, so this ends with its length."""
        return _encode(_AAD_LABEL, b"dek", *self._parts()) + _KID_LENGTH

    def corrupt(
        self,
        reason: Literal["malformed", "unknown-key", "decrypt-failed", "bad-payload"],
        key_id: str | None = None,
    ) -> VaultCorrupt:
        return VaultCorrupt(reason, kind=self.kind, label=self.label, record_id=self.record_id, key_id=key_id)


class VaultKeys:
    """The vault's KEKs, derived from a :class:`KeyRing`: the first wraps, every one unwraps."""

    __slots__ = ("_keks",)

    def __init__(self, ring: KeyRing, *, also: Iterable[VaultKeys] = ()) -> None:
        if not isinstance(ring, KeyRing):
            raise TypeError("VaultKeys needs a mcp_elicit.state.KeyRing")
        own = Subkeys.derive(ring, VAULT_KEK_INFO).ciphers
        extra = [cipher for keys in also for cipher in keys._keks.ciphers]  # unwrap only (rotation)
        self._keks: Subkeys = Subkeys([*own, *extra])  # the ring's first wraps; a repeated kid keeps its own

    @property
    def kids(self) -> tuple[str, ...]:
        """Key ids, the wrapping key first."""
        return tuple(kid.hex() for kid, _ in self._keks.ciphers)

    @property
    def sealing_kid(self) -> str:
        """Id (hex) of the key that wraps new records' data keys: the ring's first."""
        return self._keks.sealing_key()[0].hex()

    def __repr__(self) -> str:  # never shows key material
        return f"VaultKeys(kids={list(self.kids)!r})"

    # ----------------------------------------------------------------------------- seal / open

    def seal(self, context: RecordContext, plaintext: bytes) -> bytes:
        """Encrypt ``plaintext`` for the row ``context`` under a fresh DEK."""
        dek = os.urandom(_DEK_BYTES)
        return self._wrap(context, dek) + aead_encrypt(AESGCM(dek), plaintext, context.data_aad())

    def _wrap(self, context: RecordContext, dek: bytes) -> bytes:
        return bytes([FORMAT_VERSION]) + _WRAPPER.seal(self._keks, dek, context._wrap_aad_without_kid())

    def _unwrap(self, context: RecordContext, blob: object) -> tuple[bytes, bytes]:
        """``(dek, rest)`` where rest is ``data nonce | ciphertext``; raises VaultCorrupt."""
        if isinstance(blob, bytearray | memoryview):
            blob = bytes(blob)
        if not isinstance(blob, bytes) or len(blob) < _MIN_BLOB_BYTES or blob[0] != FORMAT_VERSION:
            raise context.corrupt("malformed")
        wrapped = blob[1:_HEADER_BYTES]
        try:
            dek = _WRAPPER.open(self._keks, wrapped, context._wrap_aad_without_kid())
        except OpenRefused as exc:
            raise context.corrupt(exc.reason, wrapped[:KID_BYTES].hex()) from None
        return dek, blob[_HEADER_BYTES:]

    def _open_payload(self, context: RecordContext, blob: object, dek: bytes, rest: bytes) -> bytes:
        """The payload of ``rest`` (``data nonce | ciphertext``) under its DEK; raises VaultCorrupt."""
        try:
            return aead_decrypt(AESGCM(dek), rest, context.data_aad())
        except OpenRefused:  # rest is long enough (_MIN_BLOB_BYTES): only authentication fails
            raise context.corrupt("decrypt-failed", self.kid_of(blob)) from None

    def open(self, context: RecordContext, blob: object) -> bytes:
        """Decrypt a blob read from the row ``context``. Any failure is :class:`VaultCorrupt`."""
        dek, rest = self._unwrap(context, blob)
        return self._open_payload(context, blob, dek, rest)

    def rewrap(self, context: RecordContext, blob: object) -> bytes | None:
        """The blob with its DEK re-wrapped under the first key, or ``None`` if it already is.

        The payload ciphertext is kept as it is, but it is authenticated first (a blob whose
        payload was tampered with is reported, not blessed with a fresh wrap).
        """
        if self.kid_of(blob) == self.sealing_kid:
            self.open(context, blob)
            return None
        dek, rest = self._unwrap(context, blob)
        self._open_payload(context, blob, dek, rest)
        return self._wrap(context, dek) + rest

    @staticmethod
    def kid_of(blob: object) -> str | None:
        """The key id written in a blob, or ``None`` if it is not a blob of this format."""
        if isinstance(blob, bytearray | memoryview):
            blob = bytes(blob)
        if not isinstance(blob, bytes) or len(blob) < 1 + KID_BYTES or blob[0] != FORMAT_VERSION:
            return None
        return blob[1 : 1 + KID_BYTES].hex()


def ring_from(keys: KeyRing | Sequence[str | bytes]) -> KeyRing:
    """A :class:`KeyRing` from a ring or from secrets (``KeyRing.from_secrets`` rules)."""
    if isinstance(keys, KeyRing):
        return keys
    if isinstance(keys, str | bytes):
        raise TypeError("keys must be a KeyRing or a sequence of secrets, not a single str or bytes")
    try:
        return KeyRing.from_secrets(list(keys))
    except TypeError as exc:
        raise TypeError(vault_key_wording(str(exc))) from None
    except ValueError as exc:
        raise ValueError(vault_key_wording(str(exc))) from None


def ring_from_env(var: str) -> KeyRing | None:
    """The ring in the environment variable ``var`` of vault keys (``KeyRing.from_env`` rules),
    ``None`` when it is unset or blank."""
    try:
        return KeyRing.from_env(var)
    except ValueError as exc:
        raise ValueError(vault_key_wording(str(exc))) from None


def vault_key_wording(message: str) -> str:
    """A :class:`KeyRing` error about the vault's keys, worded for them: KeyRing calls each secret
    a "state key" (its first use is ``requestState``), and an operator who set
    ``MCP_ELICIT_VAULT_KEYS`` would look for a state key that is not the culprit."""
    return message.replace("state key #", "vault key #").replace("no state keys given", "no vault keys given")
