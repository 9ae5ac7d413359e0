"""The letters instances write each other to relay the messages of 2025-11-25 sessions: sealed,
so that only instances that hold the deployment's state keys can write one or read one.

A letter is a small JSON header (its kind, its sender, the relay it belongs to and what that
kind carries) and, after a newline, data (an HTTP body). It is sealed with AES-256-GCM
(:mod:`mcp_elicit.state.aead`) under a key derived from the server's state keys for this one
purpose (``KeyRing.derive``; a key file is followed as it changes), with the recipient's name in
the associated data: the database that carries it (:mod:`mcp_elicit.storage.session_router`) sees
ciphertext, and a letter cannot be redirected to another instance.

Each letter also carries a stamp: the sender's clock in microseconds, made strictly increasing.
A recipient opens a letter only when its stamp is within :data:`MAX_SKEW` seconds of its own
clock and greater than the last stamp it took from that sender, so a letter copied from the
database and sent again is refused (letters from one sender arrive in the order they were sent).
Whatever fails, :meth:`LetterSealer.open` answers None and logs why; it never raises on bad
input. No I/O here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import orjson

from mcp_elicit.state.aead import AeadSealer, OpenRefused, Subkeys

if TYPE_CHECKING:
    from mcp_elicit.state import KeyRing, StateSealer

__all__ = ["MAX_SKEW", "Letter", "LetterSealer"]

LETTER_KEY_INFO: Final = b"mcp-elicit session relay letters"
MAX_SKEW: Final = 60.0
"""Seconds a letter's stamp may be from the recipient's clock (keep the instances' clocks in
step with NTP)."""
_AD_PREFIX: Final = b"mcp-elicit/v1 session relay\x00"
_SEALER: Final = AeadSealer(kid_in_associated_data=True)
_FORGET_AFTER: Final = 600.0  # a sender unheard of for this long is forgotten (its stamps are stale)
_MAX_SENDERS: Final = 10_000

_log = logging.getLogger("mcp_elicit.transport.relay")


@dataclass(frozen=True, slots=True)
class Letter:
    """One opened letter: ``kind``, ``sender`` (an instance), ``relay`` (the relay's number, as
    its asker counts them), what the kind carries (``fields``) and ``data``."""

    kind: str
    sender: str
    relay: int
    fields: Mapping[str, Any] = field(default_factory=dict)
    data: bytes = b""


class LetterSealer:
    """Seals the letters of the instance ``name`` and opens those written to it."""

    def __init__(self, sealer: StateSealer, name: str, *, clock: Callable[[], float] = time.time) -> None:
        self._sealer = sealer
        self.name = name
        self._clock = clock
        self._ring: KeyRing | None = None
        self._subkeys: Subkeys | None = None
        self._last_stamp = 0
        self._senders: dict[str, tuple[int, float]] = {}  # sender -> (last stamp, when heard)
        self._unopened = 0  # letters dropped since the last warning
        self._warn_after = 0.0

    def _keys(self) -> Subkeys:
        """The subkeys of the ring in use (a key file is re-read when its check is due)."""
        key_file = self._sealer.key_file
        ring = key_file.poll() if key_file is not None else self._sealer.keys
        if ring is not self._ring or self._subkeys is None:
            self._subkeys = Subkeys.derive(ring, LETTER_KEY_INFO)
            self._ring = ring
        return self._subkeys

    def seal(
        self, to: str, kind: str, relay: int, fields: Mapping[str, Any] | None = None, data: bytes = b""
    ) -> bytes:
        """A letter for the instance ``to``. Seal and send in one step, in order: the recipient
        refuses a letter whose stamp is not above the last it took from this sender."""
        stamp = max(self._last_stamp + 1, int(self._clock() * 1_000_000))
        self._last_stamp = stamp
        header = orjson.dumps({**(fields or {}), "k": kind, "f": self.name, "r": relay, "s": stamp})
        return _SEALER.seal(self._keys(), header + b"\n" + data, _AD_PREFIX + to.encode("ascii"))

    def open(self, sealed: bytes) -> Letter | None:
        """The letter, or None (logged) when it was not sealed for this instance with these keys,
        is malformed, too old or new, or was taken already."""
        try:
            plain = _SEALER.open(self._keys(), sealed, _AD_PREFIX + self.name.encode("ascii"))
        except OpenRefused as exc:
            self._unopened += 1
            now = self._clock()
            if now >= self._warn_after:  # once a minute at most: a wrong key fails every letter
                self._warn_after = now + 60.0
                _log.warning(
                    "%d letter(s) that do not open were dropped (%s): is every instance given the "
                    "same state keys?",
                    self._unopened,
                    exc.reason,
                )
                self._unopened = 0
            return None
        head, _, data = plain.partition(b"\n")
        try:
            header = orjson.loads(head)
        except orjson.JSONDecodeError:
            header = None
        if not isinstance(header, dict):
            _log.warning("a letter with a malformed header was dropped")
            return None
        kind, sender, relay, stamp = (
            header.pop("k", None),
            header.pop("f", None),
            header.pop("r", None),
            header.pop("s", None),
        )
        if not (
            isinstance(kind, str)
            and isinstance(sender, str)
            and isinstance(relay, int)
            and isinstance(stamp, int)
            and not isinstance(relay, bool)
            and not isinstance(stamp, bool)
        ):
            _log.warning("a letter with a malformed header was dropped")
            return None
        now = self._clock()
        if abs(stamp / 1_000_000 - now) > MAX_SKEW:
            _log.warning(
                "a letter from %s stamped %.0f s away from this clock was dropped",
                sender,
                stamp / 1_000_000 - now,
            )
            return None
        last = self._senders.get(sender)
        if last is not None and stamp <= last[0]:
            _log.warning("a letter from %s came again (a replay) and was dropped", sender)
            return None
        self._remember(sender, stamp, now)
        return Letter(kind, sender, relay, header, data)

    def _remember(self, sender: str, stamp: int, now: float) -> None:
        self._senders[sender] = (stamp, now)
        if len(self._senders) > _MAX_SENDERS:
            for name in [s for s, (_, heard) in self._senders.items() if now - heard > _FORGET_AFTER]:
                del self._senders[name]
