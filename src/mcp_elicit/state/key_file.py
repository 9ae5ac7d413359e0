"""A key ring read from a file and re-read while the server runs (key rotation without restarts).

File format: UTF-8 text, one secret per line (any form :meth:`KeyRing.from_secrets` accepts), the
first one seals; lines end at ``\n``, ``\r\n`` or ``\r`` (and nowhere else: a form feed or a
U+2028 stays inside its line, as in the environment variable); blank lines and lines starting
with ``#`` are ignored (a comment after a key, on its line, is refused: it would be read as part
of the key), and so is a leading byte-order mark. It must be a regular file (a symbolic link to
one is fine) of at most :data:`MAX_KEY_FILE_BYTES`. Write it atomically (write a temporary file
in the same directory, then rename it over the old one).

How a change reaches the sealer:

* :meth:`KeyFile.poll` is called by :class:`~mcp_elicit.state.seal.StateSealer` before each seal and
  unseal. It costs one clock read, except once every ``check_interval`` seconds, when it also
  ``stat``\\s the file; when the file's identity (device, inode, size, mtime) changed, or
  :meth:`request_reload` was called (from a SIGHUP handler, say), the file is read and parsed and
  the new ring replaces the old one in a single attribute assignment. Every seal or unseal reads
  the ring once, so each one uses either the old ring or the new one, never a mix.
* :meth:`reload` reads the file at once (for tests and admin hooks, not for signal handlers).
* :meth:`install_sighup` makes SIGHUP request a reload (POSIX; main thread only). The handler only
  sets a flag: no I/O or logging in signal context. The reload happens on the next seal/unseal.

A file that cannot be read or parsed (missing, empty, a bad secret, a FIFO or a device, too large)
never replaces a working ring: the current keys stay in use and an ERROR is logged once per bad
version of the file. At start-up, a bad file is a ``ValueError`` (fail fast). Removing a key
therefore needs a valid file without it.

Rotation without refusing any flow across several instances (each re-reads on its own schedule):
``[old]`` -> ``[old, new]`` (wait until every instance has it: ``check_interval`` or a SIGHUP to
each) -> ``[new, old]`` -> wait the state TTL -> ``[new]``. Putting ``new`` in front in one step
would let an instance seal with ``new`` while another cannot open it yet.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from .keys import ENV_VAR, KeyRing, for_operators

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["ENV_FILE_VAR", "MAX_KEY_FILE_BYTES", "KeyFile", "parse_key_file"]

ENV_FILE_VAR: Final = "MCP_ELICIT_STATE_KEYS_FILE"
"""Environment variable naming a key file (read by ``Server`` when no keys are given)."""

DEFAULT_CHECK_INTERVAL: Final = 5.0

MAX_KEY_FILE_BYTES: Final = 1 << 20
"""Largest key file read; a larger one is refused (reading a part could cut a key short)."""

_log = logging.getLogger("mcp_elicit.state")

_NEWLINE: Final = re.compile(r"\r\n|\r|\n")
_Signature = tuple[int, int, int, int]
_MISSING: Final[_Signature] = (-1, -1, -1, -1)  # the "version" of a file that cannot be stat'ed


def parse_key_file(text: str, *, origin: str = "key file") -> KeyRing:
    """A :class:`KeyRing` from the text of a key file; ``ValueError`` (never showing a secret)."""
    text = text.removeprefix("\ufeff")  # a byte-order mark (Notepad's) is not part of the first key
    lines = _NEWLINE.split(text)  # not str.splitlines(), which would also split a key at \x0c or U+2028
    secrets = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    for number, secret in enumerate(secrets, 1):
        if " #" in secret or "\t#" in secret:
            # Read as part of the secret, a trailing comment would silently make another key.
            raise ValueError(
                f"{origin}: key {number} is followed by a comment; put comments on lines of their own"
            )
        # The environment variable's spellings, which would silently make one other key (a
        # passphrase) and leave this instance unable to open the others' states.
        if secret.startswith(f"{ENV_VAR}="):
            raise ValueError(f"{origin}: key {number} starts with '{ENV_VAR}=': write the keys alone")
        if "," in secret:
            raise ValueError(
                f"{origin}: key {number} holds a comma; a key file has one key per line (commas "
                f"separate keys in {ENV_VAR} only)"
            )
    if not secrets:
        raise ValueError(f"{origin}: no keys (one secret per line; a line starting with '#' is a comment)")
    try:
        return KeyRing.from_secrets(secrets)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{origin}: {for_operators(exc)}") from None


def _signature(st: os.stat_result) -> _Signature:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class KeyFile:
    """A key ring kept in sync with a file. Give it to ``Server(state_keys=...)``.

    ``check_interval``: seconds between two ``stat`` calls (``0`` checks on every use; the file
    is only read when it changed). ``clock``: a monotonic clock, for tests.
    """

    __slots__ = (
        "_bad",
        "_check_interval",
        "_clock",
        "_lock",
        "_next_check",
        "_path",
        "_reload_requested",
        "_ring",
        "_signature",
        "reloads",
    )

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        check_interval: float = DEFAULT_CHECK_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not (isinstance(check_interval, int | float) and check_interval >= 0):
            raise ValueError("check_interval must be a number of seconds >= 0")
        from pathlib import Path  # only when a key file is used: pathlib costs start-up time

        self._path = Path(path)
        self._check_interval = float(check_interval)
        self._clock = clock
        self._lock = threading.Lock()
        self._reload_requested = False
        self._bad: _Signature | None = None
        self.reloads = 0
        """How many times a changed ring was installed after start-up (for tests and metrics)."""
        try:
            ring, signature = self._read()  # ValueError at start-up: fail fast
        except OSError as exc:
            raise ValueError(
                f"cannot read the state key file {str(self._path)!r}: {exc.strerror or exc}"
            ) from None
        self._ring = ring
        self._signature: _Signature | None = signature
        self._next_check = clock() + self._check_interval

    @classmethod
    def from_env(cls, var: str = ENV_FILE_VAR, **options: Any) -> KeyFile | None:
        """A :class:`KeyFile` for the path in ``var``, or ``None`` when it is unset or blank."""
        value = os.environ.get(var, "").strip()
        if not value:
            return None
        try:
            return cls(value, **options)
        except ValueError as exc:
            raise ValueError(f"{var}: {exc}") from None

    @property
    def path(self) -> Path:
        return self._path

    @property
    def ring(self) -> KeyRing:
        """The ring in use now."""
        return self._ring

    def __repr__(self) -> str:
        return f"KeyFile({str(self._path)!r}, kids={list(self._ring.kids)!r})"

    # ------------------------------------------------------------------------------ reloading

    def request_reload(self) -> None:
        """Re-read the file at the next :meth:`poll`, changed or not. Safe in a signal handler."""
        self._reload_requested = True
        self._next_check = 0.0

    def install_sighup(self) -> None:
        """Make SIGHUP call :meth:`request_reload` (keeps a previous Python-level handler)."""
        import signal

        previous = signal.getsignal(signal.SIGHUP)

        def handler(signum: int, frame: Any) -> None:
            self.request_reload()
            if callable(previous):
                previous(signum, frame)

        signal.signal(signal.SIGHUP, handler)

    def poll(self) -> KeyRing:
        """The current ring, after re-reading the file if a check is due and it changed."""
        if self._clock() >= self._next_check:
            self._check()
        return self._ring

    def reload(self) -> bool:
        """Re-read the file now; ``True`` when a different ring was installed."""
        self._reload_requested = True
        return self._check()

    def _check(self) -> bool:
        if not self._lock.acquire(blocking=False):
            return False  # another thread is checking right now
        try:
            self._next_check = self._clock() + self._check_interval
            forced = self._reload_requested
            self._reload_requested = False
            try:
                st = os.stat(self._path)
            except OSError as exc:
                message = f"cannot stat the state key file {str(self._path)!r}: {exc}"
                self._complain(_MISSING, f"{message}; keeping the current keys {list(self._ring.kids)}")
                return False
            signature = _signature(st)
            if self._bad == _MISSING:
                self._bad = None  # back: if it goes missing again, that is reported again
            if not forced and signature == self._signature:
                return False
            if not forced and signature == self._bad:
                return False  # already reported
            try:
                ring, signature = self._read()
            except (OSError, ValueError) as exc:
                self._complain(signature, f"{exc}; keeping the current keys {list(self._ring.kids)}")
                return False
            self._signature = signature
            self._bad = None
            if ring.kids == self._ring.kids:
                return False
            self._install(ring)
            return True
        finally:
            self._lock.release()

    def _install(self, ring: KeyRing) -> None:
        old = self._ring.kids
        self._ring = ring
        self.reloads += 1
        _log.info("state keys reloaded from %s: key ids %s (were %s)", self._path, list(ring.kids), list(old))

    def _complain(self, signature: _Signature, message: str) -> None:
        if signature != self._bad:  # once per bad version of the file, "missing" included
            _log.error("state key file: %s", message)
        self._bad = signature

    def _read(self) -> tuple[KeyRing, _Signature]:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused just below).
        with open(os.open(self._path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            st = os.fstat(handle.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise ValueError(f"cannot read the state key file {str(self._path)!r}: not a regular file")
            if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
                _log.warning(
                    "the state key file %s is readable by other users (mode %o); chmod 600 it",
                    self._path,
                    stat.S_IMODE(st.st_mode),
                )
            raw = handle.read(MAX_KEY_FILE_BYTES + 1)
        if len(raw) > MAX_KEY_FILE_BYTES:
            raise ValueError(
                f"{str(self._path)!r}: larger than {MAX_KEY_FILE_BYTES} bytes, which no key file is"
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{str(self._path)!r}: not UTF-8 text") from None
        return parse_key_file(text, origin=repr(str(self._path))), _signature(st)
