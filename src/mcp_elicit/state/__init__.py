"""Sealed ``requestState`` for MCP 2026-07-28 Multi Round-Trip Requests.

* :class:`KeyRing`: AES-256-GCM keys (the first seals, all unseal) from secrets, the environment
  (``MCP_ELICIT_STATE_KEYS``) or an ephemeral process-local key.
* :class:`StateSealer`: seals a payload bound to a :class:`RequestBinding` (method, target,
  :func:`args_digest`, principal) plus audience and expiry; unseals with every check, raising
  :class:`StateRejected` whose ``str()`` is always :data:`INVALID_STATE_MESSAGE`.
* :mod:`.aead`: the one AES-256-GCM sealer (``kid ‖ nonce ‖ ciphertext``, key found by kid) that
  seals ``requestState`` here and, in the connect kit, the pages' cookies and the vault's records.
* :class:`KeyFile`: a key ring read from a file and re-read while running (rotation without a
  restart; ``MCP_ELICIT_STATE_KEYS_FILE``).
* :class:`SingleUseStore`: optional "first use wins" store that makes a token single-use:
  :class:`SQLiteSingleUseStore` and :class:`PostgresSingleUseStore`. Both are also a
  :class:`RedeliveryStore`: a re-issued request gets its committed answer again instead of a
  refusal (see :mod:`mcp_elicit.state.single_use`).

The two store classes are loaded on first access so that importing this package costs little
more than orjson (no asyncio, sqlite3 or psycopg until needed; ``cryptography`` loads with a
key's first seal or unseal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .binding import RequestBinding, args_digest
from .binding import request_digest as request_digest
from .errors import INVALID_STATE_MESSAGE, RejectReason, StateRejected, StateStoreUnavailable, StateTooLarge
from .key_file import KeyFile as KeyFile
from .keys import KeyRing
from .seal import Claimed as Claimed
from .seal import StateSealer, Unsealed
from .single_use import Claim as Claim
from .single_use import RedeliveryStore as RedeliveryStore
from .single_use import SingleUseStore

if TYPE_CHECKING:
    from .postgres_store import PostgresSingleUseStore
    from .sqlite_store import SQLiteSingleUseStore

__all__ = [
    "INVALID_STATE_MESSAGE",
    "KeyRing",
    "PostgresSingleUseStore",
    "RejectReason",
    "RequestBinding",
    "SQLiteSingleUseStore",
    "SingleUseStore",
    "StateRejected",
    "StateSealer",
    "StateStoreUnavailable",
    "StateTooLarge",
    "Unsealed",
    "args_digest",
]
# Also re-exported here, outside __all__ (which tests pin): KeyFile, Claim, Claimed,
# RedeliveryStore, request_digest (homes: .key_file, .single_use, .seal, .binding).


def __getattr__(name: str) -> Any:
    if name == "SQLiteSingleUseStore":
        from .sqlite_store import SQLiteSingleUseStore

        return SQLiteSingleUseStore
    if name == "PostgresSingleUseStore":
        from .postgres_store import PostgresSingleUseStore

        return PostgresSingleUseStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
