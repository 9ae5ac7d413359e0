"""Exceptions raised by :mod:`mcp_elicit.connect.vault`.

Every message is written by this package from values that are never secret: the provider id or
secret name, the record id, a key id, an exception *type* name. No message, ``repr()`` or attribute
holds a token, a secret value, a DSN or a password. The owner principal is kept as an attribute
(``owner``) for logs and audits but is left out of the messages, so an error that travels further
than intended (into a tool result) names no user.

Exceptions raised by an injected refresher or revoker are not chained (``raise ... from None``):
their text is not ours and may contain the very token that was being sent. Only their type name is
reported.
"""

from __future__ import annotations

from typing import Any, Final, Literal

__all__ = [
    "CorruptReason",
    "NeedsReauthorization",
    "NotConnected",
    "RefreshFailed",
    "RevocationFailed",
    "VaultCorrupt",
    "VaultError",
    "VaultUnavailable",
]

CorruptReason = Literal[
    "malformed",  # too short, unknown format version: not something this vault wrote
    "unknown-key",  # sealed under a key id that is not in the key ring
    "decrypt-failed",  # AES-GCM authentication failed: tampered, moved to another row, wrong key
    "bad-payload",  # authenticated, but the plaintext is not what this vault writes
]

_CORRUPT_TEXT: Final[dict[str, str]] = {
    "malformed": "the stored ciphertext is malformed (not written by this vault version)",
    "unknown-key": "it was sealed under a key that is not in the vault's key ring",
    "decrypt-failed": (
        "authentication failed (the ciphertext was altered, copied from another row, or sealed "
        "under a different key)"
    ),
    "bad-payload": "the decrypted payload is not a vault record",
}


def _rebuild(cls: type[VaultError], args: tuple[Any, ...], state: dict[str, Any]) -> VaultError:
    exc = cls.__new__(cls)
    Exception.__init__(exc, *args)
    exc.__dict__.update(state)
    return exc


class VaultError(Exception):
    """Base class of every error raised by the vault."""

    def __reduce__(self) -> tuple[Any, ...]:  # picklable although __init__ takes keywords
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


class VaultCorrupt(VaultError):
    """A stored record cannot be opened: tampering, a ciphertext moved between rows, a missing key.

    ``reason`` says which (see :data:`CorruptReason`); ``kind`` is ``"connection"`` or
    ``"secret"``; ``label`` the provider id or secret name; ``record_id`` the row id; ``key_id``
    the key id read from the ciphertext, when it could be read.
    """

    reason: CorruptReason
    kind: str
    label: str
    record_id: str
    key_id: str | None

    def __init__(
        self,
        reason: CorruptReason,
        *,
        kind: str,
        label: str,
        record_id: str,
        key_id: str | None = None,
    ) -> None:
        detail = _CORRUPT_TEXT[reason]
        if reason == "unknown-key" and key_id is not None:
            detail = f"it was sealed under key id {key_id}, which is not in the vault's key ring"
        super().__init__(f"vault {kind} {label!r} (record {record_id}) cannot be opened: {detail}")
        self.reason = reason
        self.kind = kind
        self.label = label
        self.record_id = record_id
        self.key_id = key_id


class VaultUnavailable(VaultError):
    """The database could not answer (down, timed out, locked, closed). Retryable.

    The message names the backend and the failure, never the DSN or a password.
    """

    retryable: Final = True


class NotConnected(VaultError):
    """There is no usable connection for ``(owner, provider)``: start a new URL flow.

    ``status`` is ``None`` when there is no row at all, otherwise the row's status
    (``"revocation_failed"``: the user disconnected but upstream revocation has not succeeded yet;
    retry :meth:`Vault.disconnect` before connecting again).
    """

    owner: str
    provider: str
    status: str | None

    def __init__(self, message: str, *, owner: str, provider: str, status: str | None = None) -> None:
        super().__init__(message)
        self.owner = owner
        self.provider = provider
        self.status = status


class NeedsReauthorization(NotConnected):
    """The provider refused the grant (``invalid_grant``) or the connection was marked so earlier.

    The connection's status is ``needs_reauthorization``; the next ``ctx.connection(...)`` starts a
    new URL flow. ``description`` is the authorization server's ``error_description`` if the
    refresher passed one (not part of the message: it is the provider's text, not ours).
    """

    description: str | None

    def __init__(self, *, owner: str, provider: str, description: str | None = None) -> None:
        super().__init__(
            f"the connection to {provider!r} needs re-authorization: the user must connect again",
            owner=owner,
            provider=provider,
            status="needs_reauthorization",
        )
        self.description = description


class RefreshFailed(VaultError):
    """Refreshing the access token failed without revoking the grant; the status is unchanged.

    ``retryable`` is true for transient failures (the authorization server answered 5xx, the
    network failed, the refresher timed out or raised); ``retry_after`` is the server's hint in
    seconds, if any. ``reason`` is a short text from the refresher's result (an OAuth error code,
    ``"timeout"``, an exception type name), never a token.
    """

    owner: str
    provider: str
    retryable: bool
    retry_after: float | None
    reason: str

    def __init__(
        self,
        *,
        owner: str,
        provider: str,
        retryable: bool,
        reason: str,
        retry_after: float | None = None,
    ) -> None:
        kind = "transient failure" if retryable else "failure"
        super().__init__(f"refreshing the connection to {provider!r} failed ({kind}: {reason})")
        self.owner = owner
        self.provider = provider
        self.retryable = retryable
        self.retry_after = retry_after
        self.reason = reason


class RevocationFailed(VaultError):
    """Upstream revocation failed (or a refused overwrite of an unrevoked grant).

    The row is kept with status ``revocation_failed``; retry :meth:`Vault.disconnect` later.
    """

    owner: str
    provider: str
    reason: str

    def __init__(self, message: str, *, owner: str, provider: str, reason: str) -> None:
        super().__init__(message)
        self.owner = owner
        self.provider = provider
        self.reason = reason
