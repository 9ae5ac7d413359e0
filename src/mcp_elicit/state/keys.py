"""The AES-256-GCM key ring used to seal ``requestState``.

``keys[0]`` seals; every key in the ring unseals, which is how keys are rotated without breaking
flows that are in progress:

1. deploy ``[old]`` everywhere (the starting point);
2. deploy ``[old, new]`` everywhere: every instance can now open tokens sealed by ``new``;
3. deploy ``[new, old]`` everywhere: ``new`` seals from now on, ``old`` tokens still open;
4. after the state TTL has passed, deploy ``[new]`` (or ``ring.without(old_kid)``).

Accepted secrets (:meth:`KeyRing.from_secrets`):

* ``bytes`` of exactly 32 bytes: used as the AES-256 key as-is;
* ``"b64:<base64url>"``: a base64url (or standard base64) encoding of exactly 32 bytes;
* a bare base64url string of a 32-byte key (43 characters, optionally one ``=``), which is what
  :meth:`KeyRing.generate_secret` returns;
* any other string of at least 32 characters is a passphrase: the key is
  ``HKDF-SHA256(ikm=utf8(passphrase), salt=None, info=HKDF_INFO, length=32)``. HKDF is not a
  password hash, so a passphrase must carry real entropy (a long random string, not a word).

String secrets are stripped of surrounding whitespace first (a trailing newline from a secrets
file must not change the key). Empty secrets, short passphrases, passphrases that are not UTF-8
text (an environment variable's bytes that are not UTF-8 arrive as lone surrogates), keys made of
fewer than eight distinct byte values (all zeros, a repeated short pattern) and duplicate keys are
refused with ``ValueError``.

Each key has a key id (kid): the first four bytes of ``SHA-256(KID_LABEL || key)``, written as eight
hex digits. It travels in clear in every token so that unsealing picks the key directly instead of
trying each one. It reveals nothing useful about the key.

This module does no I/O (the one exception is the warning logged by :meth:`KeyRing.ephemeral`).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

from mcp_elicit.wire.codec import b64url_encode

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = [
    "ENV_VAR",
    "HKDF_INFO",
    "KEY_BYTES",
    "KID_BYTES",
    "PASSPHRASE_MIN_CHARS",
    "KeyRing",
    "for_operators",
    "set_but_blank",
]

KEY_BYTES: Final = 32
"""AES-256 key length."""

KID_BYTES: Final = 4
"""Length of the key id written in clear at the start of every token."""

PASSPHRASE_MIN_CHARS: Final = 32
"""Shortest passphrase accepted (after stripping surrounding whitespace)."""

HKDF_INFO: Final = b"mcp-elicit/v1 requestState AES-256-GCM key from passphrase"
"""HKDF-SHA256 ``info`` label for passphrase secrets. Changing it changes every derived key."""

KID_LABEL: Final = b"mcp-elicit/v1 requestState key id\x00"
"""Domain-separation prefix hashed in front of the key to compute its key id."""

ENV_VAR: Final = "MCP_ELICIT_STATE_KEYS"
"""Environment variable read by :meth:`KeyRing.from_env` (comma-separated, the first one seals)."""

_MIN_DISTINCT_BYTES: Final = 8
_MIN_DISTINCT_CHARS: Final = 8
_B64_PREFIX: Final = "b64:"
_BARE_KEY_RE: Final = re.compile(r"[A-Za-z0-9_-]{43}=?")
_B64_ANY_RE: Final = re.compile(r"[A-Za-z0-9_+/-]+={0,2}")

# How a weak secret is fixed: in code, and by an operator who set the environment variable.
_FIX_IN_CODE: Final = "use KeyRing.generate_secret() for a proper key"
_FIX_IN_ENV: Final = "run `mcp-elicit keygen` for a proper key"

_EPHEMERAL_WARNING: Final = (
    "requestState is sealed with an ephemeral, process-local key: state sealed by this process "
    "cannot be opened by another instance or after a restart, so multi-round requests will fail "
    "across instances and restarts. For multi-instance deployments set "
    f"{ENV_VAR} (comma-separated secrets, the first one seals) to the same value on every instance."
)


def for_operators(exc: Exception) -> str:
    """``exc``'s message for whoever set a key variable or wrote a key file: the fix is a shell
    command there, not a Python call."""
    return str(exc).replace(_FIX_IN_CODE, _FIX_IN_ENV)


def set_but_blank(*names: str) -> str | None:
    """The first of the environment variables ``names`` that is set to nothing but whitespace.

    Such a variable counts as unset (as every variable of this package does), so a warning that
    would tell the operator to set it says it is empty instead."""
    return next((name for name in names if os.environ.get(name, "x").strip() == ""), None)


class _Key:
    """One key of the ring. Its AESGCM object is made at first use, then kept: creating one costs
    more than a seal, and importing ``cryptography`` costs a stdio server a good part of its
    start-up, before its first answer, which needs no key."""

    __slots__ = ("aead", "kid", "kid_text", "material")

    def __init__(self, material: bytes) -> None:
        self.material = material
        self.kid = hashlib.sha256(KID_LABEL + material).digest()[:KID_BYTES]
        self.kid_text = self.kid.hex()
        self.aead: AESGCM | None = None

    def cipher(self) -> AESGCM:
        aead = self.aead
        if aead is None:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            aead = self.aead = AESGCM(self.material)
        return aead


def _decode_b64_key(text: str, *, origin: str) -> bytes:
    # Not wire.codec.b64url_decode: this is an operator's configuration, not a token, and padding
    # or the standard alphabet are accepted on purpose (see the module docstring).
    if not _B64_ANY_RE.fullmatch(text):
        raise ValueError(f"{origin}: not valid base64url (allowed: A-Z a-z 0-9 - _ and '=')")
    body = text.rstrip("=").replace("+", "-").replace("/", "_")
    if len(body) % 4 == 1:
        raise ValueError(f"{origin}: not valid base64url (impossible length)")
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    if len(raw) != KEY_BYTES:
        raise ValueError(
            f"{origin}: a base64url key must decode to exactly {KEY_BYTES} bytes, got {len(raw)}"
        )
    return raw


def _secret_to_key(secret: str | bytes, index: int) -> bytes:
    origin = f"state key #{index}"
    if isinstance(secret, bytes | bytearray | memoryview):
        raw = bytes(secret)
        if len(raw) != KEY_BYTES:
            raise ValueError(
                f"{origin}: raw key bytes must be exactly {KEY_BYTES} bytes, got {len(raw)} "
                "(pass a str for a base64url key or a passphrase)"
            )
        return raw
    if not isinstance(secret, str):
        raise TypeError(f"{origin}: a secret must be str or bytes, not {type(secret).__name__}")
    text = secret.strip()
    if not text:
        raise ValueError(f"{origin}: the secret is empty")
    if text.startswith(_B64_PREFIX):
        return _decode_b64_key(text[len(_B64_PREFIX) :], origin=origin)
    if _BARE_KEY_RE.fullmatch(text):
        return _decode_b64_key(text, origin=origin)
    if len(text) < PASSPHRASE_MIN_CHARS:
        raise ValueError(
            f"{origin}: a passphrase must be at least {PASSPHRASE_MIN_CHARS} characters, got "
            f"{len(text)}; {_FIX_IN_CODE}"
        )
    if len(set(text)) < _MIN_DISTINCT_CHARS:
        raise ValueError(
            f"{origin}: the passphrase uses fewer than {_MIN_DISTINCT_CHARS} distinct characters; "
            + _FIX_IN_CODE
        )
    try:
        ikm = text.encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8 in a variable arrive as lone surrogates
        raise ValueError(f"{origin}: the passphrase is not UTF-8 text") from None
    # Imported here: only passphrase secrets need HKDF, so plain imports stay cheap.
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None, info=HKDF_INFO).derive(ikm)


class KeyRing:
    """An ordered, immutable set of AES-256-GCM keys: the first seals, every key unseals.

    Build one with :meth:`from_config` (explicit secrets, else the environment, else an ephemeral
    key), :meth:`from_secrets`, :meth:`from_env` or :meth:`ephemeral`. ``KeyRing(raw_keys)`` takes
    raw 32-byte keys directly.
    """

    __slots__ = ("_by_kid", "_keys")

    def __init__(self, keys: Iterable[bytes]) -> None:
        built: list[_Key] = []
        by_kid: dict[bytes, _Key] = {}
        seen: set[bytes] = set()
        for index, material in enumerate(keys):
            if not isinstance(material, bytes) or len(material) != KEY_BYTES:
                raise ValueError(f"state key #{index}: must be exactly {KEY_BYTES} raw bytes")
            if len(set(material)) < _MIN_DISTINCT_BYTES:
                raise ValueError(
                    f"state key #{index}: the key uses fewer than {_MIN_DISTINCT_BYTES} distinct "
                    f"byte values, which no random key does; {_FIX_IN_CODE}"
                )
            if material in seen:
                raise ValueError(f"state key #{index}: duplicate key (each key may appear once)")
            seen.add(material)
            key = _Key(material)
            if key.kid in by_kid:  # 2**-32 per pair: practically never, but refuse, never guess
                raise ValueError(
                    f"state key #{index}: key id {key.kid_text} collides with another key; "
                    "generate a different key"
                )
            by_kid[key.kid] = key
            built.append(key)
        if not built:
            raise ValueError("a key ring needs at least one key")
        self._keys: tuple[_Key, ...] = tuple(built)
        self._by_kid: dict[bytes, _Key] = by_kid

    # ----------------------------------------------------------------------------- constructors

    @classmethod
    def from_secrets(cls, secrets: Sequence[str | bytes]) -> KeyRing:
        """Build a ring from operator secrets; ``secrets[0]`` seals. See the module docstring."""
        if isinstance(secrets, str | bytes):
            raise TypeError("secrets must be a sequence of secrets, not a single str or bytes")
        if len(secrets) == 0:
            raise ValueError("no state keys given: at least one secret is required")
        return cls(_secret_to_key(secret, index) for index, secret in enumerate(secrets))

    @classmethod
    def from_env(cls, var: str = ENV_VAR) -> KeyRing | None:
        """Build a ring from a comma-separated environment variable, or ``None`` if it is unset.

        An unset or blank variable gives ``None``. Empty items (a trailing comma) are ignored.
        Invalid secrets raise ``ValueError`` naming the variable, never its value.
        """
        value = os.environ.get(var)
        if value is None or not value.strip():
            return None
        items = [item.strip() for item in value.split(",")]
        secrets = [item for item in items if item]
        try:
            return cls.from_secrets(secrets)
        except ValueError as exc:
            raise ValueError(f"{var}: {for_operators(exc)}") from None

    @classmethod
    def ephemeral(cls) -> KeyRing:
        """A random, process-local key. Logs a WARNING on logger ``mcp_elicit.state``."""
        import logging

        logging.getLogger("mcp_elicit.state").warning(_EPHEMERAL_WARNING)
        while True:
            material = os.urandom(KEY_BYTES)
            if len(set(material)) >= _MIN_DISTINCT_BYTES:  # always true in practice
                return cls((material,))

    @classmethod
    def from_config(cls, secrets: Sequence[str | bytes] | None = None) -> KeyRing:
        """Explicit secrets if given, else :data:`ENV_VAR`, else an ephemeral key (warns)."""
        if secrets is not None:
            return cls.from_secrets(secrets)
        ring = cls.from_env()
        if ring is not None:
            return ring
        return cls.ephemeral()

    @staticmethod
    def generate_secret() -> str:
        """A new random key as a bare base64url string (43 characters) for operators."""
        return b64url_encode(os.urandom(KEY_BYTES))

    # ----------------------------------------------------------------------------- rotation

    def rotated(self, new_first: str | bytes) -> KeyRing:
        """A new ring where ``new_first`` seals and every current key still unseals.

        If ``new_first`` is already in the ring it is moved to the front (promotion: step 3 of the
        rotation recipe above).
        """
        material = _secret_to_key(new_first, 0)
        rest = [key.material for key in self._keys if key.material != material]
        return KeyRing([material, *rest])

    def without(self, kid: str) -> KeyRing:
        """A new ring without the key whose id is ``kid``. Removing the last key is refused."""
        remaining = [key.material for key in self._keys if key.kid_text != kid]
        if len(remaining) == len(self._keys):
            raise ValueError(f"no key with id {kid!r} in this ring (ids: {', '.join(self.kids)})")
        if not remaining:
            raise ValueError("cannot remove the last key of a ring")
        return KeyRing(remaining)

    # ----------------------------------------------------------------------------- inspection

    @property
    def kids(self) -> tuple[str, ...]:
        """Key ids in ring order; ``kids[0]`` is the sealing key."""
        return tuple(key.kid_text for key in self._keys)

    @property
    def sealing_kid(self) -> str:
        """The id of the key that seals new tokens."""
        return self._keys[0].kid_text

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, kid: object) -> bool:
        return any(key.kid_text == kid for key in self._keys)

    def __repr__(self) -> str:  # never shows key material
        return f"KeyRing(kids={list(self.kids)!r})"

    def derive(self, info: bytes) -> tuple[tuple[bytes, bytes], ...]:
        """``((kid, subkey), ...)`` in ring order: ``HKDF-SHA256(key, info)`` of every key.

        For other purposes than sealing ``requestState`` (the vault's key-encryption keys, the
        connect pages' cookies): each purpose passes its own ``info`` label, so no key ever serves
        two purposes, and the kids stay the ring's own (rotation speaks one language).
        """
        if not isinstance(info, bytes) or not info:
            raise ValueError("KeyRing.derive needs a non-empty bytes label")
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        return tuple(
            (key.kid, HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(key.material))
            for key in self._keys
        )

    # ------------------------------------------------------------- for the sealer (state.aead)

    def sealing_key(self) -> tuple[bytes, AESGCM]:
        """``(kid bytes, AESGCM)`` of the sealing key (:class:`~mcp_elicit.state.aead.SealingKeys`)."""
        key = self._keys[0]
        return key.kid, key.cipher()

    def key_for(self, kid: bytes) -> AESGCM | None:
        """The AESGCM of a raw key id, or ``None`` (:class:`~mcp_elicit.state.aead.SealingKeys`)."""
        key = self._by_kid.get(kid)
        return None if key is None else key.cipher()
