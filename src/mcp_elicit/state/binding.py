"""What a sealed ``requestState`` is bound to: the originating request and the principal.

No I/O here.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Final

import orjson

__all__ = ["MAX_NESTING", "RequestBinding", "args_digest", "bound_principal", "request_digest"]

_EXACT_INT_LIMIT: Final = 2**53  # floats with an integral value below this are exact integers

MAX_NESTING: Final = 400
"""Deepest nesting of arrays and objects :func:`args_digest` accepts (``TypeError`` beyond). JSON
parsers stop near 1000 levels, Python's recursion limit is 1000 frames: without this bound a
deeply nested argument would surface as a ``RecursionError`` from the middle of the engine."""


@dataclass(frozen=True, slots=True)
class RequestBinding:
    """The request a ``requestState`` belongs to; every field must match when it comes back.

    * ``method``: the JSON-RPC method (``"tools/call"``, ``"prompts/get"``, ``"resources/read"``).
    * ``target``: the tool or prompt name, or the resource URI.
    * ``args_digest``: :func:`args_digest` of the request's arguments.
    * ``principal``: the authenticated principal (``"issuer|subject"``), ``None`` when the
      transport is unauthenticated. ``None`` and a principal never match each other.
    """

    method: str
    target: str
    args_digest: str
    principal: str | None

    def __post_init__(self) -> None:
        _check_binding(self.method, self.target, self.args_digest, self.principal)


def bound_principal(principal: str | None, client: str | None) -> str | None:
    """The ``RequestBinding.principal`` of a request: the authenticated principal and, when its
    token names one, the OAuth client it was issued to (the spec: servers MUST bind elicitation
    requests to the client and the user). ``None`` for an anonymous request."""
    if client is None or principal is None:
        return principal
    return f"{principal}\x00{client}"  # NUL: in neither a principal key nor a client id


def _check_binding(method: object, target: object, args_digest: object, principal: object) -> None:
    """The type checks of :class:`RequestBinding` (str subclasses pass them too)."""
    if not isinstance(method, str) or not method:
        raise TypeError("RequestBinding.method must be a non-empty str")
    if not isinstance(target, str):
        raise TypeError("RequestBinding.target must be a str")
    if not isinstance(args_digest, str) or not args_digest:
        raise TypeError("RequestBinding.args_digest must be a non-empty str (use args_digest())")
    if principal is not None and not isinstance(principal, str):
        raise TypeError("RequestBinding.principal must be a str or None")


def _normalise(value: object, non_finite: list[bool], depth: int = 0) -> object:
    """Copy JSON data with numbers compared by value: ``1.0`` and ``1`` are the same number.

    Clients (JavaScript ones in particular) may re-serialise ``1.0`` as ``1`` on the retry; the
    digest must not change because of that. Non-finite floats are flagged (orjson would turn them
    into ``null`` and so collide with a real ``null``).
    """
    if isinstance(value, str) or value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            non_finite[0] = True
            return value
        if value.is_integer() and abs(value) < _EXACT_INT_LIMIT:
            return int(value)
        return value
    if depth >= MAX_NESTING:
        raise TypeError(f"arguments must be JSON data nested at most {MAX_NESTING} levels deep")
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"arguments must be JSON data: object key {key!r} is not a str")
            out[key] = _normalise(item, non_finite, depth + 1)
        return out
    if isinstance(value, list | tuple):
        return [_normalise(item, non_finite, depth + 1) for item in value]
    raise TypeError(f"arguments must be JSON data, got {type(value).__name__}")


def args_digest(arguments: object) -> str:
    """SHA-256 (lower-case hex) of the canonical JSON form of a request's arguments.

    Canonical form: object keys sorted, no whitespace, UTF-8, numbers by value (``1.0 == 1``).
    ``None`` (arguments absent) and ``{}`` give the same digest. Raises ``TypeError`` for values
    that are not JSON data or are nested deeper than :data:`MAX_NESTING`.
    """
    if arguments is None:
        arguments = {}
    if type(arguments) is dict:
        # The usual arguments: a flat object of strings, integers, booleans and nulls, which
        # _normalise would copy unchanged. Anything else (or an integer orjson cannot write)
        # takes the general path.
        for key, value in arguments.items():
            kind = type(value)
            if type(key) is not str or not (kind is str or kind is int or kind is bool or value is None):
                break
        else:
            try:
                return hashlib.sha256(orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)).hexdigest()
            except orjson.JSONEncodeError:
                pass
    non_finite = [False]
    canonical = _normalise(arguments, non_finite)
    try:
        encoded = None if non_finite[0] else orjson.dumps(canonical, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # e.g. integers beyond 64 bits
        encoded = None
    if encoded is None:
        # Rare path (NaN/Infinity, huge integers): the standard library writes them unambiguously
        # (``NaN``, ``Infinity``, exact big integers). The same value always takes the same path.
        import json

        try:
            text = json.dumps(
                canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True
            )
        except RecursionError:  # deep nesting on a stack already in use: refuse, never crash
            raise TypeError("arguments are nested too deeply to be digested") from None
        encoded = text.encode("utf-8", "surrogatepass")
    return hashlib.sha256(encoded).hexdigest()


def request_digest(binding: RequestBinding, input_responses: object) -> str:
    """What makes two requests "the same request" for single-use redelivery: the binding (method,
    target, arguments, principal) and the canonical ``inputResponses`` (``None`` = ``{}``).

    The JSON-RPC id, ``_meta`` and the headers are not part of it: a client that re-issues a
    request after a broken connection sends a new id, and may send it to another instance.
    Raises ``TypeError`` like :func:`args_digest`.
    """
    return args_digest(
        [
            binding.method,
            binding.target,
            binding.args_digest,
            binding.principal,
            {} if input_responses is None else input_responses,
        ]
    )
