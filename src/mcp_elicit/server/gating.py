"""Capability gating: never send an input request the client did not declare it can answer.

Every kind of input request needs something of the client's declared capabilities (a
:class:`Need`): a form needs ``elicitation.form`` (a bare ``elicitation: {}`` counts as form), a
URL ``elicitation.url``, sampling ``sampling`` (and ``sampling.tools`` when it offers the model
tools, ``sampling.context`` when it asks for context), ``roots/list`` ``roots``. A request that
needs what its client lacks ends with one ``-32021`` error whose ``requiredCapabilities`` names
everything missing and whose message says it in one format (:func:`describe`). The check comes
before anything is sent, so a refusal has no side effects.

``ctx.elicit`` and friends check their own need as they ask (:meth:`Need.met_by`); a low-level
handler's ``InputRequired`` and a stored answer redelivered to a re-issued request are checked
as a whole (:func:`gate`), and the elicitations a low-level handler wrote are vetted as
``ctx.elicit`` and ``ctx.elicit_url`` vet theirs (:func:`vet_elicitation`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_elicit.schema.errors import SchemaError
from mcp_elicit.wire import mrtr
from mcp_elicit.wire.errors import McpError, internal_error, missing_capability
from mcp_elicit.wire.meta import (
    ClientCapabilities,
    merge_required,
    required_for_elicitation,
    required_for_sampling,
    sampling_needs,
)

if TYPE_CHECKING:
    from mcp_elicit.schema.spec import FormSpec

logger = logging.getLogger("mcp_elicit.server")


@dataclass(frozen=True, slots=True)
class Need:
    """What one kind of input request needs of the client's capabilities."""

    what: str  # said to the person reading the error: "form elicitation", "roots"...
    required: dict[str, Any] = field(compare=False)  # its requiredCapabilities object
    kind: str = "form"  # "form", "url", "sampling", "roots"
    tools: bool = False  # sampling only: offers the model tools
    context: bool = False  # sampling only: asks the client to include context

    def met_by(self, caps: ClientCapabilities) -> bool:
        if self.kind == "sampling":
            return caps.can_sample(tools=self.tools, context=self.context)
        if self.kind == "roots":
            return caps.can_list_roots()
        return self.kind in caps.modes


FORM = Need("form elicitation", required_for_elicitation("form"), "form")
URL = Need("URL-mode elicitation", required_for_elicitation("url"), "url")
ROOTS = Need("roots", {"roots": {}}, "roots")


def sampling(params: Mapping[str, Any]) -> Need:
    """The need of a ``sampling/createMessage`` request with these ``params``."""
    tools, context = sampling_needs(params)
    extras = [name for name, wanted in (("tools", tools), ("context", context)) if wanted]
    what = "sampling" + (" with " + " and ".join(extras) if extras else "")
    return Need(what, required_for_sampling(tools, context), "sampling", tools, context)


def describe(needs: Iterable[Need]) -> str:
    """The one message of a -32021 error for these needs."""
    parts = []
    for need in dict.fromkeys(needs):
        paths = ", ".join(_paths(need.required))
        parts.append(need.what if paths == need.what else f"{need.what} ({paths})")
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"This request needs {listed}, which the client's capabilities do not declare"


def refusal(needs: Iterable[Need], required: dict[str, Any] | None = None) -> McpError:
    """The -32021 error for these needs (their capabilities merged into ``required``, when
    given, so that errors raised earlier for the same round share the one object)."""
    needs = list(dict.fromkeys(needs))
    required = {} if required is None else required
    for need in needs:
        merge_required(required, need.required)
    return missing_capability(required, describe(needs))


def _paths(required: Mapping[str, Any], prefix: str = "") -> list[str]:
    """``{"sampling": {"tools": {}}}`` -> ``["sampling.tools"]``; an empty object is a leaf."""
    paths: list[str] = []
    for name, value in required.items():
        path = f"{prefix}{name}"
        if isinstance(value, Mapping) and value:
            paths.extend(_paths(value, path + "."))
        else:
            paths.append(path)
    return paths


def need_of(key: str, entry: object) -> Need:
    """The need of one ``{"method": ..., "params": ...}`` input request; an entry that is no
    input request of a kind this server can send is a defect in the handler (-32603)."""
    method = entry.get("method") if isinstance(entry, dict) else None
    params = entry.get("params") if isinstance(entry, dict) else None
    if params is None:
        params = {}
    elif not isinstance(params, dict):  # the wire's params are an object, in either era
        raise internal_error(f"input request {key!r} has params that are not an object")
    if method == mrtr.ELICIT:
        mode = params.get("mode", "form")
        if mode == "form":
            return FORM
        if mode == "url":
            return URL
        raise internal_error(f"input request {key!r} has an unknown elicitation mode {mode!r}")
    if method == mrtr.SAMPLE:
        return sampling(params)
    if method == mrtr.LIST_ROOTS:
        return ROOTS
    raise internal_error(f"input request {key!r} has an unsupported method {method!r}")


def gate(
    requests: Mapping[str, Any],
    caps: ClientCapabilities,
    *,
    vet: bool = True,
    allow_secrets: tuple[str, ...] = (),
) -> None:
    """Refuse (-32021, naming everything missing) input requests the client cannot answer, and
    (``vet``) check the elicitations among them as ``ctx.elicit`` and ``ctx.elicit_url`` do."""
    missing: list[Need] = []
    for key, entry in requests.items():
        need = need_of(key, entry)
        if not need.met_by(caps):
            missing.append(need)
        elif vet and need.kind in ("form", "url"):
            vet_elicitation(key, need.kind, entry.get("params") or {}, allow_secrets)
    if missing:
        raise refusal(missing)


def vet_elicitation(key: str, mode: str, params: Mapping[str, Any], allow_secrets: tuple[str, ...]) -> None:
    """Check an elicitation a low-level handler wrote itself, as ``ctx.elicit`` (the schema
    subset, no secret fields, a warning for links) and ``ctx.elicit_url`` (a URL safe to send)
    check theirs. A failure is a defect in the handler: -32603 saying what is wrong."""
    message = params.get("message")
    if not isinstance(message, str):
        raise internal_error(f"input request {key!r} has no message (a string)")
    if mode == "url":
        url = params.get("url")
        try:
            check_url(url if isinstance(url, str) else "")
        except ValueError as exc:
            raise internal_error(f"input request {key!r}: {exc}") from None
        return
    schema = params.get("requestedSchema")
    if not isinstance(schema, dict):
        raise internal_error(f"input request {key!r} has no requestedSchema (an object)")
    try:
        spec = form_spec(schema, allow_secrets)
    except SchemaError as exc:
        raise internal_error(f"input request {key!r}: {exc}") from None
    warn_about_links(message, spec)


def check_url(url: str) -> None:
    """A URL safe to send in a URL-mode elicitation, or ValueError saying why not."""
    from mcp_elicit.server.urls import check_elicitation_url  # ipaddress, ada_url: on first use

    check_elicitation_url(url)


# Forms of types (and the empty confirm-only form) by type, for ctx.elicit without
# allow_secrets: form_spec's own cache (bounded, most recently used) costs about as much to look
# up as the rest of asking. Bounded too, and emptied when full: a server that builds a type per
# request must neither keep them all nor shut the types it always asks with out of this one.
_SPECS: dict[type | None, FormSpec] = {}
_MAX_SPECS = 128
_EMPTY_FORM: dict[str, Any] = {"type": "object", "properties": {}}


def form_spec(schema: Any, allow_secrets: Iterable[str]) -> FormSpec:
    """The form for ``schema`` (a type, a ``requestedSchema`` dict, or None for confirm-only):
    :class:`~mcp_elicit.schema.errors.SchemaError` when it leaves the subset or asks for secrets."""
    cacheable = (
        (schema is None or isinstance(schema, type)) and type(allow_secrets) is tuple and not allow_secrets
    )
    if cacheable:
        try:
            spec = _SPECS.get(schema)
        except TypeError:  # a metaclass whose instances do not hash
            cacheable = False
        else:
            if spec is not None:
                return spec
    # The form machinery (schema compiler, validator, lint) loads at the first form, not at
    # start-up: a stdio server answers its first requests sooner.
    from mcp_elicit.schema.spec import form_spec as build

    spec = build(_EMPTY_FORM if schema is None else schema, allow_secrets=allow_secrets)
    if cacheable:
        if len(_SPECS) >= _MAX_SPECS:
            _SPECS.clear()
        _SPECS[schema] = spec
    return spec


_LINK_HINT = re.compile(r"://|www\.|\]\(|<a |mailto:|javascript:|data:|tel:", re.IGNORECASE)
# Each pattern of _LINK_HINT holds one of these; a message with none of them (most) is not
# searched. The search costs ~13k instructions and runs twice per 2026-07-28 HTTP flow: 2.4%.
_LINK_MARKS = frozenset(":.](<")
_linted_schemas: set[str] = set()


def warn_about_links(message: str, spec: FormSpec) -> None:
    """The spec says servers should not put clickable URLs in form requests (URL mode exists
    for that). Warn once per schema, and for a message only when it could hold a link."""
    check_message = not _LINK_MARKS.isdisjoint(message) and _LINK_HINT.search(message) is not None
    check_schema = spec.digest not in _linted_schemas
    if not (check_message or check_schema):
        return
    if check_schema and len(_linted_schemas) < 10_000:
        _linted_schemas.add(spec.digest)
    from mcp_elicit.schema.lint import lint_form

    findings = lint_form(
        message if check_message else "", spec.schema, allow_secrets=spec.schema["properties"]
    )
    for warning in findings.url_warnings:
        logger.warning("form elicitation: %s (use ctx.elicit_url for links the user should open)", warning)
