"""Reading the ``inputRequests`` of an ``InputRequiredResult`` into typed, checked requests.

Everything is checked before anything is shown to a person: the map and each entry are
objects, each method is one of the three the spec allows, each needs only what this request
declared (a URL question to a form-only client is refused, not ignored), and every form's
``requestedSchema`` is inside the subset. One bad entry refuses the whole round, so a person
never answers half a round that cannot be sent.

A 2025-11-25 server sends the same questions as requests of its own (``elicitation/create``,
``sampling/createMessage``): :func:`parse_elicitation` and :func:`parse_sampling` check their
params the same way, keyed by the request's id. There a URL question must also carry its
``elicitationId`` (that revision requires it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_elicit.client.capabilities import Declared
from mcp_elicit.client.errors import InvalidSchemaError, MalformedMessageError, UndeclaredRequestError
from mcp_elicit.schema.check import compile_schema
from mcp_elicit.schema.rules import CompiledForm
from mcp_elicit.schema.text import quote, short
from mcp_elicit.wire.mrtr import ELICIT, LIST_ROOTS, SAMPLE

# A round that asks a person more than this many things at once is not a form, it is a flood.
MAX_INPUT_REQUESTS = 100


@dataclass(frozen=True, slots=True)
class FormInput:
    key: str
    message: str
    schema: dict[str, Any]
    form: CompiledForm  # the schema, compiled once, for validating answers before they are sent


@dataclass(frozen=True, slots=True)
class UrlInput:
    key: str
    message: str
    url: str
    elicitation_id: str | None = None  # 2025-11-25 only: completion notices name it


@dataclass(frozen=True, slots=True)
class SamplingInput:
    key: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RootsInput:
    key: str


InputRequest = FormInput | UrlInput | SamplingInput | RootsInput


def parse_input_requests(raw: object, declared: Declared) -> tuple[InputRequest, ...]:
    """Check and type every entry of ``inputRequests``; raise a :class:`ProtocolViolation`."""
    if not isinstance(raw, dict):
        raise MalformedMessageError("inputRequests must be an object keyed by request ids")
    if len(raw) > MAX_INPUT_REQUESTS:
        raise MalformedMessageError(
            f"inputRequests has {len(raw)} entries, over this client's limit of {MAX_INPUT_REQUESTS}"
        )
    return tuple(_entry(key, value, declared) for key, value in raw.items())


def _entry(key: str, entry: object, declared: Declared) -> InputRequest:
    if not isinstance(entry, dict):
        raise MalformedMessageError(
            f"inputRequests[{quote(key)}] must be an object ({{method, params}}), got {type(entry).__name__}"
        )
    method = entry.get("method")
    params = entry.get("params")
    if params is None and method == LIST_ROOTS:
        params = {}  # roots/list may omit params
    if not isinstance(params, dict):
        raise MalformedMessageError(f"inputRequests[{quote(key)}].params must be an object")
    if method == ELICIT:
        return parse_elicitation(key, params, declared)
    if method == SAMPLE:
        return parse_sampling(key, params, declared)
    if method == LIST_ROOTS:
        if not declared.roots:
            raise UndeclaredRequestError(key, LIST_ROOTS, "the roots capability")
        return RootsInput(key)
    raise MalformedMessageError(
        f"inputRequests[{quote(key)}].method must be elicitation/create, sampling/createMessage or "
        f"roots/list, got {short(method)}"
    )


def parse_elicitation(
    key: str, params: Mapping[str, Any], declared: Declared, *, legacy: bool = False
) -> FormInput | UrlInput:
    """One ``elicitation/create``'s params, checked; ``legacy``: a 2025-11-25 request (a URL
    question needs its ``elicitationId``)."""
    mode = params.get("mode", "form")  # an absent mode is form mode
    if mode not in ("form", "url"):
        raise MalformedMessageError(f"inputRequests[{quote(key)}]: unknown elicitation mode {short(mode)}")
    if mode not in declared.modes:
        raise UndeclaredRequestError(key, ELICIT, f"elicitation.{mode}")
    message = params.get("message")
    if not isinstance(message, str):
        raise MalformedMessageError(f"inputRequests[{quote(key)}].params.message must be a string")
    if mode == "url":
        url = params.get("url")
        if not isinstance(url, str) or not url:
            raise MalformedMessageError(f"inputRequests[{quote(key)}].params.url must be a non-empty string")
        elicitation_id = params.get("elicitationId")
        if legacy and (not isinstance(elicitation_id, str) or not elicitation_id):
            raise MalformedMessageError(f"{quote(key)}: a URL elicitation must carry an elicitationId string")
        return UrlInput(key, message, url, elicitation_id if isinstance(elicitation_id, str) else None)
    schema = params.get("requestedSchema")
    form, problems = compile_schema(schema, tolerant=True)  # forms from any server: see compile_schema
    if form is None or not isinstance(schema, dict):
        raise InvalidSchemaError(key, problems)
    return FormInput(key, message, schema, form)


def parse_sampling(key: str, params: Mapping[str, Any], declared: Declared) -> SamplingInput:
    """One ``sampling/createMessage``'s params, checked against what this client declared."""
    if not declared.sampling:
        raise UndeclaredRequestError(key, SAMPLE, "the sampling capability")
    # This client declares plain sampling only: tool use and context inclusion are sub-capabilities.
    if params.get("tools") is not None or params.get("toolChoice") is not None:
        raise UndeclaredRequestError(key, SAMPLE, "sampling.tools")
    if params.get("includeContext") not in (None, "none"):
        raise UndeclaredRequestError(key, SAMPLE, "sampling.context")
    if not isinstance(params.get("messages"), list):
        raise MalformedMessageError(f"inputRequests[{quote(key)}].params.messages must be an array")
    max_tokens = params.get("maxTokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        raise MalformedMessageError(f"inputRequests[{quote(key)}].params.maxTokens must be an integer")
    return SamplingInput(key, dict(params))
