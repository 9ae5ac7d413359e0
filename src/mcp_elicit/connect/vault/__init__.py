"""The token vault of the URL-mode kit: third-party tokens and secrets, bound to their owner.

What an MCP server obtains through a URL-mode flow (an OAuth grant with a third-party provider, an
API key typed on a secure page) is stored here, bound to the user's identity (the ``"issuer|subject"``
principal of the validated MCP access token), and never sent to the MCP client.

.. code-block:: python

    vault = Vault.sqlite("vault.db", keys=[secret])          # one process
    vault = Vault.postgres(dsn, keys=[secret])                # several instances

    await vault.put_connection(principal, "github", access_token=..., refresh_token=...,
                               expires_in=3600, scopes=["repo"])
    connection = await vault.fresh_connection(principal, "github", refresher)   # single-flight
    await vault.disconnect(principal, "github", revoker)      # RFC 7009 upstream, then delete

* **Encryption** (:mod:`.crypto`): AES-256-GCM envelope encryption per record, a random data key
  per write wrapped by a key-encryption key derived with HKDF from a
  :class:`~mcp_elicit.state.KeyRing` key; the associated data binds version, kind, owner, provider
  (or secret name) and record id, so a ciphertext copied to another row fails with
  :class:`VaultCorrupt`. :meth:`Vault.rotate` re-wraps every data key under a new key.
* **Storage**: SQLite (WAL; default) or PostgreSQL (psycopg 3, imported lazily), through
  :mod:`mcp_elicit.storage`; tables created on first use; the same behaviour on both.
* **Refresh** (:meth:`Vault.fresh_connection`): single-flight per connection within a process
  (one shared task) and across processes (PostgreSQL advisory lock; SQLite lease row), re-reading
  after the lock; ``invalid_grant`` marks the connection ``needs_reauthorization`` and raises
  :class:`NeedsReauthorization`; transient failures raise a retryable :class:`RefreshFailed` and
  change nothing; a rotated refresh token is stored atomically with its access token.
* **Disconnect** (:meth:`Vault.disconnect`): revoke upstream, then delete; a failed revocation
  keeps the row as ``revocation_failed`` and raises :class:`RevocationFailed`.
* **No leaks**: ``repr()``/``str()`` of records and of the vault show ``***``; no error message
  or log record contains a token, a secret, a DSN or a password.

Errors: :class:`VaultError` (base), :class:`VaultCorrupt`, :class:`VaultUnavailable`,
:class:`NotConnected`, :class:`NeedsReauthorization`, :class:`RefreshFailed`,
:class:`RevocationFailed`.
"""

from __future__ import annotations

from .crypto import FORMAT_VERSION, VAULT_KEK_INFO, VaultKeys
from .errors import (
    NeedsReauthorization,
    NotConnected,
    RefreshFailed,
    RevocationFailed,
    VaultCorrupt,
    VaultError,
    VaultUnavailable,
)
from .records import (
    Connection,
    ConnectionStatus,
    Refresher,
    RefreshResult,
    Revoker,
    RotationReport,
    Secret,
)
from .vault import DEFAULT_TABLE_PREFIX, VAULT_KEYS_ENV, Vault

__all__ = [
    "DEFAULT_TABLE_PREFIX",
    "FORMAT_VERSION",
    "VAULT_KEK_INFO",
    "VAULT_KEYS_ENV",
    "Connection",
    "ConnectionStatus",
    "NeedsReauthorization",
    "NotConnected",
    "RefreshFailed",
    "RefreshResult",
    "Refresher",
    "RevocationFailed",
    "Revoker",
    "RotationReport",
    "Secret",
    "Vault",
    "VaultCorrupt",
    "VaultError",
    "VaultKeys",
    "VaultUnavailable",
]
