"""Sealing and unsealing ``requestState`` (AES-256-GCM, bound to the request and the principal).

Token format (ASCII)::

    "v1." + base64url_nopad( kid[4] || nonce[12] || AES-256-GCM(ciphertext || tag[16]) )

* The bytes are those of the shared sealer (:mod:`mcp_elicit.state.aead`), the text the canonical
  base64url of :func:`mcp_elicit.wire.codec.b64url_encode`: one spelling per token, any other is
  refused.
* The associated data is ``AD_PREFIX || kid``: the version and the key id are authenticated, so
  neither can be swapped without failing decryption.
* The plaintext is the compact JSON (orjson) of the claims, as an array in this fixed order
  (positional: smaller and faster to check than an object)::

      [1,                       # claims version
       <issued at>,             # seconds since the epoch (a number; written in whole ms)
       <expires at>,            # seconds since the epoch (a number; written in whole ms)
       <audience>,              # the sealer's audience
       <method>, <target>,      # RequestBinding.method / .target
       <args digest>,           # RequestBinding.args_digest
       <principal or null>,     # RequestBinding.principal
       <token id>,              # 128 random bits, base64url (the single-use key)
       <caller payload>]        # a JSON object

* The plaintext is NOT compressed before encryption, on purpose: the payload mixes answers the
  client controls with server data, and compressing that before encrypting would let the ciphertext
  length act as a compression oracle on the server data (the CRIME/BREACH family).
* Nonces are random (96 bits). Rotate the sealing key well before 2**32 seals per key.

:meth:`StateSealer.unseal` does pure checks and raises :class:`StateRejected` with a reason for
logs; :meth:`StateSealer.open` also enforces single use when a store is configured, and
:meth:`StateSealer.claim` / :meth:`StateSealer.commit` do the same in redelivery mode (see
:mod:`mcp_elicit.state.single_use` for why and how).

Keys come from a :class:`KeyRing` (fixed; :meth:`StateSealer.replace_keys` swaps it) or a
:class:`~mcp_elicit.state.key_file.KeyFile` (re-read while running). Either way each seal and each
unseal reads the ring exactly once, so a swap is atomic for them. With a key file, seal and unseal
may ``stat`` it (once per its ``check_interval``); that is the only I/O here.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from hmac import compare_digest
from typing import Any, Final

import orjson

from mcp_elicit.wire.codec import b64url_decode, b64url_encode

from .aead import OVERHEAD, AeadSealer, OpenRefused
from .binding import RequestBinding
from .errors import StateRejected, StateTooLarge
from .key_file import KeyFile
from .keys import KeyRing
from .single_use import RedeliveryStore, SingleUseStore

__all__ = [
    "AD_PREFIX",
    "DEFAULT_CLOCK_SKEW",
    "DEFAULT_MAX_TOKEN_BYTES",
    "DEFAULT_TTL",
    "TOKEN_PREFIX",
    "Claimed",
    "StateSealer",
    "Unsealed",
]

TOKEN_PREFIX: Final = "v1."  # noqa: S105 - a format prefix, not a password
AD_PREFIX: Final = b"mcp-elicit requestState v1\x00"
DEFAULT_TTL: Final = 600.0
DEFAULT_MAX_TOKEN_BYTES: Final = 256 * 1024
DEFAULT_CLOCK_SKEW: Final = 60.0
"""Seconds an ``iat`` may lie in the future (another instance's clock running ahead). It is never
applied to the expiry: a token is refused as soon as ``now > exp``."""
CLAIM_WAIT = 3.0
"""Seconds after an attempt claimed a request's token during which another attempt of the same
request (a double click, a client that sent again) waits for its answer instead of running the
round too. Past that the first attempt counts as gone (crashed, failed, or slower than that):
waiting is bounded from its start, however many attempts come, and stays well under the
timeout after which a client sends again."""

_TOKEN_ID_BYTES: Final = 16
_MIN_RAW: Final = OVERHEAD + 1  # the claims are never empty
_PREFIX_LEN: Final = len(TOKEN_PREFIX)
_CLAIMS_VERSION: Final = 1
_CLAIM_COUNT: Final = 10
_SEALER: Final = AeadSealer(kid_in_associated_data=True)


def _same(left: str, right: str) -> bool:
    # Constant-time on the UTF-8 bytes (compare_digest on str only accepts ASCII).
    return compare_digest(left.encode("utf-8", "surrogatepass"), right.encode("utf-8", "surrogatepass"))


def _utf8(text: str) -> bool:
    """Whether ``text`` is Unicode text orjson can write (no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _unsealable(binding: RequestBinding, exc: Exception) -> str:
    """Why a seal failed: a binding field that is not Unicode text, named (the binding comes from
    the request, not from the payload), or else the payload."""
    for name in ("method", "target", "principal"):
        value = getattr(binding, name)
        if value is not None and not _utf8(value):
            return f"RequestBinding.{name} cannot be sealed: it holds a lone surrogate"
    return f"the requestState payload is not JSON-serialisable: {exc}"


def _is_number(value: object) -> bool:
    return type(value) is float or type(value) is int


# Not frozen: one per opened requestState, and a frozen dataclass's __init__ sets each field through
# object.__setattr__ (~1.3k instructions a field; bench/README.md). Never modified.
@dataclass(slots=True)
class Unsealed:
    """An opened ``requestState``: the caller's payload and the token's metadata."""

    payload: dict[str, Any]
    token_id: str
    issued_at: float
    expires_at: float
    # The expiry written in the token, which ``expires_at`` may shorten (this sealer's ttl): an
    # instance with a longer ttl still accepts the token until then, so a single-use record must
    # be kept that long.
    sealed_expires_at: float = 0.0


@dataclass(frozen=True, slots=True)
class Claimed:
    """A ``requestState`` claimed for one request (:meth:`StateSealer.claim`).

    ``response``: the answer committed earlier for this same request (send it again, run
    nothing), or ``None`` (run the round, then :meth:`StateSealer.commit` its answer).
    """

    unsealed: Unsealed
    request_digest: str
    response: bytes | None


class StateSealer:
    """Seal and open ``requestState`` tokens for one server audience.

    ``ttl`` bounds the life of every token; lowering it also shortens tokens already issued
    (the effective expiry is ``min(exp, iat + ttl)``). ``clock_skew`` only tolerates an ``iat`` in
    the future. ``single_use`` makes :meth:`open` refuse a token whose id was already consumed.
    """

    __slots__ = (
        "_audience",
        "_clock",
        "_clock_skew",
        "_key_file",
        "_keys",
        "_max_token_bytes",
        "_single_use",
        "_ttl",
    )

    def __init__(
        self,
        keys: KeyRing | KeyFile,
        *,
        audience: str,
        ttl: float = DEFAULT_TTL,
        clock: Callable[[], float] = time.time,
        single_use: SingleUseStore | None = None,
        max_token_bytes: int = DEFAULT_MAX_TOKEN_BYTES,
        clock_skew: float = DEFAULT_CLOCK_SKEW,
    ) -> None:
        key_file: KeyFile | None = None
        if isinstance(keys, KeyFile):
            key_file, keys = keys, keys.ring
        if not isinstance(keys, KeyRing):
            raise TypeError("keys must be a KeyRing or a KeyFile")
        if not isinstance(audience, str) or not audience:
            raise ValueError("audience must be a non-empty str (for example the server's URL)")
        if not _utf8(audience):
            # Sealed into every token: each seal would fail, far from the cause.
            raise ValueError("audience must be Unicode text (it holds a lone surrogate)")
        if isinstance(ttl, bool) or not _is_number(ttl) or not math.isfinite(ttl) or ttl <= 0:
            raise ValueError("ttl must be a positive, finite number of seconds")
        if isinstance(max_token_bytes, bool) or not isinstance(max_token_bytes, int):
            raise TypeError("max_token_bytes must be an int")
        if max_token_bytes < 64:
            raise ValueError("max_token_bytes must be at least 64")
        if (
            isinstance(clock_skew, bool)
            or not _is_number(clock_skew)
            or not math.isfinite(clock_skew)
            or clock_skew < 0
        ):
            raise ValueError("clock_skew must be a non-negative, finite number of seconds")
        self._keys = keys
        self._key_file = key_file
        self._audience = audience
        self._ttl = float(ttl)
        self._clock = clock
        self._single_use = single_use
        self._max_token_bytes = max_token_bytes
        self._clock_skew = float(clock_skew)

    @property
    def keys(self) -> KeyRing:
        """The ring in use now."""
        return self._keys if self._key_file is None else self._key_file.ring

    def _current_keys(self) -> KeyRing:
        """The ring for one seal or unseal, read once: a fixed ring, or the key file's (which
        re-reads the file when its check is due)."""
        return self._keys if self._key_file is None else self._key_file.poll()

    @property
    def key_file(self) -> KeyFile | None:
        """The key file the keys are read from, or None with a fixed :class:`KeyRing`."""
        return self._key_file

    def replace_keys(self, keys: KeyRing) -> None:
        """Swap the key ring (atomic for concurrent seals and unseals). Not with a key file:
        edit the file instead."""
        if not isinstance(keys, KeyRing):
            raise TypeError("keys must be a KeyRing")
        if self._key_file is not None:
            raise ValueError("this sealer's keys come from a KeyFile: change the file instead")
        self._keys = keys

    @property
    def audience(self) -> str:
        """Sealed into every token (for example the server's URL); a token for another audience
        is refused."""
        return self._audience

    @property
    def ttl(self) -> float:
        """Seconds a token stays valid after it was sealed."""
        return self._ttl

    @property
    def single_use(self) -> SingleUseStore | None:
        """The store that records consumed token ids, or None when tokens may be replayed."""
        return self._single_use

    @property
    def max_token_bytes(self) -> int:
        """The longest token this sealer seals or opens."""
        return self._max_token_bytes

    # ------------------------------------------------------------------------------------ seal

    def seal(self, payload: Mapping[str, Any], binding: RequestBinding) -> str:
        """Encrypt ``payload`` (JSON data) bound to ``binding``; returns the ``requestState``.

        Raises ``TypeError`` if the payload is not JSON-serialisable and :class:`StateTooLarge` (a
        ``ValueError``) if the token would exceed ``max_token_bytes`` (it would be refused on the
        way back anyway).
        """
        if not isinstance(binding, RequestBinding):
            raise TypeError("binding must be a RequestBinding")
        if type(payload) is not dict and not isinstance(payload, Mapping):  # dict: skip the ABC check
            raise TypeError("the requestState payload must be a mapping")
        now = float(self._clock())
        # Both times rounded down to whole milliseconds (14 digits instead of 17 in the token):
        # never later than the exact values, so a token still lives at most ``ttl``.
        issued_at = now * 1000.0 // 1.0 / 1000.0
        expires_at = (now + self._ttl) * 1000.0 // 1.0 / 1000.0
        claims = (
            _CLAIMS_VERSION,
            issued_at,
            expires_at,
            self._audience,
            binding.method,
            binding.target,
            binding.args_digest,
            binding.principal,
            b64url_encode(os.urandom(_TOKEN_ID_BYTES)),
            payload if type(payload) is dict else dict(payload),  # orjson writes dicts only
        )
        try:
            plaintext = orjson.dumps(claims)
        except orjson.JSONEncodeError as exc:
            raise TypeError(_unsealable(binding, exc)) from None
        # No compression here, deliberately: see the module docstring (compression oracle).
        token = TOKEN_PREFIX + b64url_encode(_SEALER.seal(self._current_keys(), plaintext, AD_PREFIX))
        if len(token) > self._max_token_bytes:
            raise StateTooLarge(len(token), self._max_token_bytes)
        return token

    # ---------------------------------------------------------------------------------- unseal

    def _decode(self, token: object) -> bytes:
        if not isinstance(token, str):
            raise StateRejected("not-a-string")
        if len(token) > self._max_token_bytes:
            raise StateRejected("too-large")
        if not token:
            raise StateRejected("bad-encoding")
        if not token.startswith(TOKEN_PREFIX):
            raise StateRejected("bad-version")
        try:
            raw = b64url_decode(token[_PREFIX_LEN:])  # canonical only: one spelling per token
        except ValueError:
            raise StateRejected("bad-encoding") from None
        if len(raw) < _MIN_RAW:
            raise StateRejected("truncated")
        return raw

    def unseal(self, token: object, binding: RequestBinding) -> Unsealed:
        """Decrypt and check a ``requestState``. Raises :class:`StateRejected` (``.reason``).

        No I/O and no single-use check: use :meth:`open` for that.
        """
        raw = self._decode(token)
        try:
            plaintext = _SEALER.open(self._current_keys(), raw, AD_PREFIX)
        except OpenRefused as exc:
            # "malformed" cannot happen here: _decode refused anything shorter than _MIN_RAW.
            raise StateRejected("truncated" if exc.reason == "malformed" else exc.reason) from None
        try:
            claims = orjson.loads(plaintext)
        except orjson.JSONDecodeError:
            raise StateRejected("bad-claims") from None
        if type(claims) is not list or len(claims) != _CLAIM_COUNT:
            raise StateRejected("bad-claims")
        (version, issued_at, expires_at, audience, method, target, digest, principal, token_id,
         payload) = claims  # fmt: skip
        if (
            version != _CLAIMS_VERSION
            or not _is_number(issued_at)
            or not _is_number(expires_at)
            or type(audience) is not str
            or type(method) is not str
            or type(target) is not str
            or type(digest) is not str
            or (principal is not None and type(principal) is not str)
            or type(token_id) is not str
            or not token_id
            or type(payload) is not dict
        ):
            raise StateRejected("bad-claims")
        sealed_expires_at = float(expires_at)
        expires_at = min(expires_at, issued_at + self._ttl)
        now = self._clock()
        if now > expires_at:
            raise StateRejected("expired")
        if issued_at > now + self._clock_skew:
            raise StateRejected("issued-in-future")
        # Plain comparisons for values the caller already knows (audience, method, target, args
        # digest); a constant-time one for the principal, the only value worth hiding.
        if audience != self._audience:
            raise StateRejected("audience")
        if method != binding.method:
            raise StateRejected("binding-method")
        if target != binding.target:
            raise StateRejected("binding-target")
        if digest != binding.args_digest:
            raise StateRejected("binding-args")
        expected = binding.principal
        if principal is None or expected is None:
            if principal is not expected:
                raise StateRejected("principal", principal)
        elif not _same(principal, expected):
            raise StateRejected("principal", principal)
        return Unsealed(payload, token_id, float(issued_at), float(expires_at), sealed_expires_at)

    async def open(self, token: object, binding: RequestBinding) -> Unsealed:
        """:meth:`unseal`, then consume the token id in the single-use store if one is configured.

        A second :meth:`open` of the same token raises ``StateRejected("replayed")``. If the store
        cannot answer, :class:`StateStoreUnavailable` propagates: fail closed.
        """
        unsealed = self.unseal(token, binding)
        store = self._single_use
        if store is not None:
            # Keep the record until no instance accepts the token: the expiry written in it (one
            # with a longer ttl honours it all), plus clock_skew for an instance whose clock lags.
            keep_until = max(unsealed.sealed_expires_at, unsealed.expires_at) + self._clock_skew
            if not await store.consume(unsealed.token_id, keep_until):
                raise StateRejected("replayed")
        return unsealed

    async def claim(self, token: object, binding: RequestBinding, request_digest: str) -> Claimed:
        """:meth:`unseal`, then claim the token for the request whose digest is given
        (:func:`~mcp_elicit.state.binding.request_digest`); redelivery mode.

        Raises ``StateRejected("replayed")`` when the token was used for another request (or
        consumed in strict mode). A token this same request claimed less than
        :data:`CLAIM_WAIT` ago, still unanswered, waits for that attempt's answer. Without a
        store, nothing is tracked (``response`` is ``None``).
        The store must be a :class:`RedeliveryStore`. :class:`StateStoreUnavailable` propagates.
        """
        unsealed = self.unseal(token, binding)
        store = self._single_use
        if store is None:
            return Claimed(unsealed, request_digest, None)
        if not isinstance(store, RedeliveryStore):
            raise TypeError(f"{type(store).__name__} does not support redelivery (claim/commit)")
        keep_until = max(unsealed.sealed_expires_at, unsealed.expires_at) + self._clock_skew
        found = await store.claim(unsealed.token_id, request_digest, keep_until)
        if not found.same_request:
            raise StateRejected("replayed")
        # Claimed before by this very request, with no answer yet: another attempt is running it
        # now (two copies at once), or crashed or failed before it answered. While that claim is
        # recent its answer is awaited, so that a double click does not run the round twice.
        limit, waited, pause = self._claim_wait(found.claimed_at), 0.0, 0.02
        while not found.first and found.response is None and waited < limit:
            import asyncio  # (here: importing this package loads no event loop machinery)

            await asyncio.sleep(pause)
            waited += pause
            pause = min(pause * 2, 0.25)
            found = await store.claim(unsealed.token_id, request_digest, keep_until)
        return Claimed(unsealed, request_digest, found.response)

    def _claim_wait(self, claimed_at: float | None) -> float:
        """How long, from now, a claim made at ``claimed_at`` is still awaited (never more than
        :data:`CLAIM_WAIT`, whatever the clocks say)."""
        if claimed_at is None:
            return 0.0
        return max(0.0, min(CLAIM_WAIT, claimed_at + CLAIM_WAIT - self._clock()))

    async def commit(self, claimed: Claimed, response: bytes) -> bytes:
        """Store the answer to a claimed request; returns the answer to send (the first one
        committed for this token, which is ``response`` unless another attempt won).

        Raises ``StateRejected("expired")`` when the claim is gone (expired and purged).
        """
        store = self._single_use
        if store is None:
            return response
        if not isinstance(store, RedeliveryStore):
            raise TypeError(f"{type(store).__name__} does not support redelivery (claim/commit)")
        stored = await store.commit(claimed.unsealed.token_id, claimed.request_digest, response)
        if stored is None:
            raise StateRejected("expired")
        return stored
