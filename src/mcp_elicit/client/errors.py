"""Every error the client engine raises, in three families that cannot be confused.

* :class:`McpClientError` -- the **server** answered with a JSON-RPC error; ``code``,
  ``message`` and ``data`` are exactly what it sent.
* :class:`ProtocolViolation` -- the server sent something the protocol forbids (an input request
  the client did not declare, a form outside the schema subset, a malformed message). The
  client refuses it instead of guessing.
* :class:`LocalError` -- something went wrong on this side: a limit was reached, the transport
  died, the answerer kept giving invalid answers. These carry no JSON-RPC code, on purpose
  (codes purely local to an implementation must not look like the peer's).

All of them derive from :class:`ClientError`.
"""

from __future__ import annotations

import signal
from collections.abc import Mapping, Sequence
from typing import Any

from mcp_elicit.client.text import clean
from mcp_elicit.schema.text import quote
from mcp_elicit.wire.jsonrpc import RequestId


class ClientError(Exception):
    """Base class of every error raised by :mod:`mcp_elicit.client`."""


# -- the server said no ------------------------------------------------------------------------
class McpClientError(ClientError):
    """A JSON-RPC error the server returned (``code``, ``message`` and ``data`` as received)."""

    def __init__(self, code: int, message: str, data: Any = None, *, method: str | None = None) -> None:
        self.code = code
        self.message = message
        self.data = data
        self.method = method
        where = f" to {method}" if method else ""
        super().__init__(f"server error {code}{where}: {_said(message)}")


class MissingCapabilityError(McpClientError):
    """-32021: the request needs a client capability this client did not declare.

    ``required`` is the server's ``data.requiredCapabilities``; ``missing`` names each
    capability in dotted form (``"elicitation.url"``, ``"sampling"``).
    """

    def __init__(self, code: int, message: str, data: Any = None, *, method: str | None = None) -> None:
        super().__init__(code, message, data, method=method)
        required = data.get("requiredCapabilities") if isinstance(data, dict) else None
        self.required: dict[str, Any] = required if isinstance(required, dict) else {}
        self.missing: tuple[str, ...] = _dotted(self.required)
        names = _listed(self.missing) or "(the server did not say which)"
        self.args = (
            f"the server needs client capabilities this client does not declare: {names} ({_said(message)})",
        )


# What an error quotes of the server, kept as received in its attributes: one clean line of
# bounded size (a message printed or logged must not carry a server's escape sequences, nor be
# as long as it likes).
_SAID_CHARS = 500
_NAME_CHARS = 60
_NAMES_SHOWN = 10


def _said(text: str) -> str:
    return clean(text, single_line=True, max_length=_SAID_CHARS)


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(clean(name, single_line=True, max_length=_NAME_CHARS) for name in names[:_NAMES_SHOWN])
    more = len(names) - _NAMES_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def _dotted(required: Mapping[str, Any]) -> tuple[str, ...]:
    names: list[str] = []
    for key, value in required.items():
        if isinstance(value, dict) and value:
            names.extend(f"{key}.{sub}" for sub in value)
        else:
            names.append(str(key))
    return tuple(names)


class UnsupportedVersionError(McpClientError):
    """-32022 with no protocol version this client speaks in ``data.supported`` (or, ``sent``,
    refusing the very version it lists)."""

    def __init__(
        self,
        code: int,
        message: str,
        data: Any = None,
        *,
        method: str | None = None,
        ours: Sequence[str] = (),
        sent: str | None = None,
    ) -> None:
        super().__init__(code, message, data, method=method)
        supported = data.get("supported") if isinstance(data, dict) else None
        # An array of versions; anything else (a lone string, say) lists none.
        listed = supported if isinstance(supported, list) else []
        self.supported: tuple[str, ...] = tuple(v for v in listed if isinstance(v, str))
        if sent is not None and sent in self.supported:
            self.args = (f"the server refused protocol version {sent}, which it lists as supported",)
            return
        self.args = (
            "no protocol version in common: the server supports "
            f"{_listed(self.supported) or '(none listed)'}; this client speaks {', '.join(ours)}",
        )


class UrlElicitationRequiredError(McpClientError):
    """-32042 (2025-11-25): the request needs the person to open each URL in ``elicitations``
    first. The client shows them, asks consent and retries once; this is raised when the person
    did not agree to all of them, or the retry failed the same way. ``elicitations`` holds the
    server's entries (``{"mode": "url", "elicitationId", "url", "message"}``) as received."""

    def __init__(self, code: int, message: str, data: Any = None, *, method: str | None = None) -> None:
        super().__init__(code, message, data, method=method)
        entries = data.get("elicitations") if isinstance(data, dict) else None
        self.elicitations: list[dict[str, Any]] = (
            [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
        )


# -- the server broke the protocol -------------------------------------------------------------
class ProtocolViolation(ClientError):
    """The server sent something the protocol does not allow; the client refused it."""


class UndeclaredRequestError(ProtocolViolation):
    """An input request needs a capability this request did not declare (for example a URL
    question sent to a form-only client). The spec forbids servers to send these."""

    def __init__(self, key: str, method: str, needed: str) -> None:
        self.key = key
        self.method = method
        self.needed = needed
        super().__init__(
            f"the server sent input request {quote(key)} ({method}) that needs {needed}, which this "
            "client did not declare; refusing it"
        )


class InvalidSchemaError(ProtocolViolation):
    """A form's ``requestedSchema`` is outside the elicitation schema subset."""

    def __init__(self, key: str, problems: Sequence[Any]) -> None:
        self.key = key
        self.problems = list(problems)
        shown = "; ".join(str(p) for p in self.problems[:5])
        more = f"; and {len(self.problems) - 5} more" if len(self.problems) > 5 else ""
        super().__init__(
            f"input request {quote(key)}: requestedSchema is outside the elicitation schema subset: "
            f"{shown}{more}"
        )


class MalformedMessageError(ProtocolViolation):
    """A message, result or input request that does not have the shape the spec gives it.

    ``request_id``: the message was a request of the server's own (it names a method) whose id
    could be read; a 2025-11-25 session answers it with -32600 and ``reason`` (what is wrong with
    it), as JSON-RPC asks, rather than leave the server waiting for an answer."""

    def __init__(self, message: str, *, request_id: RequestId | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.request_id = request_id
        self.reason = reason


class UnspokenVersionError(ProtocolViolation):
    """The server answered ``initialize`` with a protocol version this client does not speak in
    the handshake (only 2025-11-25 and 2025-06-18 may come back there, never 2026-07-28): the
    client disconnects, as the spec has it."""

    def __init__(self, version: object, ours: Sequence[str]) -> None:
        self.version = version
        shown = clean(str(version), single_line=True, max_length=80)
        super().__init__(
            f"the server answered initialize with protocol version {shown!r}; this client speaks "
            f"{', '.join(ours)} there; disconnected"
        )


# -- this side ---------------------------------------------------------------------------------
class LocalError(ClientError):
    """A failure on the client's side; never an error the server sent."""


class RoundLimitError(LocalError):
    """The server kept answering ``input_required`` past ``max_rounds`` retries."""

    def __init__(self, method: str, max_rounds: int) -> None:
        self.method = method
        self.max_rounds = max_rounds
        super().__init__(
            f"{method}: the server still wanted input after {max_rounds} rounds; giving up "
            "(raise max_rounds if the flow is legitimately that long)"
        )


class TimeLimitError(LocalError):
    """The whole call (all rounds, answers included) took longer than ``max_total_seconds``."""

    def __init__(self, method: str, seconds: float) -> None:
        self.method = method
        self.seconds = seconds
        super().__init__(f"{method}: not finished after {seconds:g} s (max_total_seconds); giving up")


class RequestTimeoutError(LocalError):
    """One request got no answer within ``request_timeout`` (or whichever limit ``setting``
    names: ``connect_timeout`` while connecting, ``probe_timeout`` for the era probe)."""

    def __init__(self, method: str, seconds: float, setting: str = "request_timeout") -> None:
        self.method = method
        self.seconds = seconds
        self.setting = setting
        super().__init__(f"{method}: no answer within {seconds:g} s ({setting})")


class InvalidAnswerError(LocalError):
    """The answerer kept giving answers that fail the form's schema; nothing was sent."""

    def __init__(self, key: str, errors: Mapping[str, str], attempts: int) -> None:
        self.key = key
        self.errors = dict(errors)
        self.attempts = attempts
        reasons = "; ".join(f"{k}: {v}" if k else v for k, v in self.errors.items())
        super().__init__(
            f"the answer to {quote(key)} was invalid {attempts} times (last: {reasons}); giving up"
        )


class TransportError(LocalError):
    """The connection to the server failed or was lost."""


class ServerExitedError(TransportError):
    """The stdio server process ended; requests in flight are lost."""

    def __init__(self, detail: str, returncode: int | None = None, stderr_tail: str = "") -> None:
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        message = detail + exit_status(returncode)
        self.summary = message  # without the stderr lines, for a display that shows them itself
        if stderr_tail:
            # The server wrote these: nothing in them may reach a terminal as a control (a program
            # printing the exception shows them as they are; ``stderr_tail`` keeps the raw text).
            message += f"; last stderr lines:\n{clean(stderr_tail)}"
        super().__init__(message)


class NotMcpServerError(TransportError):
    """What a stdio server wrote on its stdout before it ended, or went quiet, was not JSON-RPC:
    a program that is no MCP server (``python`` waiting for a script, a web server, ``yes``), or
    one that logs to stdout. ``first_line`` is its first line, as received; ``ended`` says how
    the attempt ended (the process exited, a deadline passed, too many such lines)."""

    def __init__(self, display: str, first_line: bytes, ended: str) -> None:
        self.first_line = first_line
        self.ended = ended
        text = first_line.decode("utf-8", "replace").rstrip("\r\n")
        # The program wrote it: nothing in it may reach a terminal as a control.
        shown = clean(text, single_line=True, max_length=200)
        super().__init__(
            f"{display!r} is not an MCP server: its output is not JSON-RPC (first line: {shown!r}); {ended}"
        )


def exit_status(returncode: int | None) -> str:
    """How a process ended, as said after "exited": `` (exit code 1)``, `` (killed by signal
    SIGKILL)`` (asyncio's negative code), or nothing when it is not known."""
    if returncode is None:
        return ""
    if returncode < 0:
        return f" (killed by signal {_signal_name(-returncode)})"
    return f" (exit code {returncode})"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


class SessionExpiredError(TransportError):
    """HTTP 404 to a request that carried a 2025-11-25 session's ``Mcp-Session-Id``: the server
    ended the session. The client starts a new one and sends the request again once."""


class HttpStatusError(TransportError):
    """An HTTP reply that carries no JSON-RPC message (a proxy's 502, a 404 page, ...)."""

    def __init__(self, status: int, detail: str) -> None:
        self.status = status
        # The detail quotes the server's body: nothing in it may reach a terminal as a control.
        super().__init__(f"HTTP {status}: {clean(detail, single_line=True)}")


class EndpointNotFoundError(HttpStatusError):
    """HTTP 404 while connecting, to the era probe and the handshake alike: nothing serves MCP at
    ``url`` (its path is most often wrong, such as ``/`` for ``/mcp``). ``suggestion`` is the URL
    to try instead, or None when the path already is the usual one."""

    def __init__(self, url: str, suggestion: str | None, detail: str) -> None:
        super().__init__(404, detail)
        self.url = url
        self.suggestion = suggestion
        shown = clean(url, single_line=True, max_length=300)
        hint = (
            f"MCP servers usually serve at {clean(suggestion, single_line=True, max_length=300)}"
            if suggestion
            else "check the path the server serves MCP at"
        )
        self.args = (f"{shown} was not found (HTTP 404): no MCP server answers there; {hint}",)


class AuthorizationRequiredError(HttpStatusError):
    """HTTP 401 or 403 from the server: the request needs (other) credentials.

    ``www_authenticate`` is the server's challenge, if it sent one; for an MCP server it names the
    protected-resource metadata (``resource_metadata="..."``) that says which authorization server
    issues tokens for it (RFC 9728).
    """

    def __init__(self, status: int, detail: str, www_authenticate: str | None) -> None:
        self.www_authenticate = www_authenticate  # as received
        shown = clean(www_authenticate, single_line=True, max_length=500).strip() if www_authenticate else ""
        hint = f"; the server asks for: {shown}" if shown else ""
        # Without the advice on how to pass a token, which differs for the command line.
        self.reason = clean(f"{detail}{hint}", single_line=True)
        super().__init__(status, f"{detail}{hint} (pass headers={{'Authorization': 'Bearer ...'}})")
