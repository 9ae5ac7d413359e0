"""Multi Round-Trip Request shapes: input requests, InputRequiredResult, and reading
``inputResponses`` off a retried request.

Only ``tools/call``, ``prompts/get`` and ``resources/read`` may answer ``input_required``.
An input request is ``{"method", "params"}`` with no ``jsonrpc`` and no ``id``.
"""

from __future__ import annotations

from typing import Any, Literal

from mcp_elicit.wire.errors import invalid_params

INPUT_REQUIRED_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})

ELICIT = "elicitation/create"
SAMPLE = "sampling/createMessage"
LIST_ROOTS = "roots/list"

ElicitAction = Literal["accept", "decline", "cancel"]
ELICIT_ACTIONS: dict[str, ElicitAction] = {"accept": "accept", "decline": "decline", "cancel": "cancel"}


def elicit_form(message: str, requested_schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "method": ELICIT,
        "params": {"mode": "form", "message": message, "requestedSchema": requested_schema},
    }


def elicit_url(message: str, url: str) -> dict[str, Any]:
    return {"method": ELICIT, "params": {"mode": "url", "message": message, "url": url}}


def sample(params: dict[str, Any]) -> dict[str, Any]:
    return {"method": SAMPLE, "params": params}


def list_roots() -> dict[str, Any]:
    return {"method": LIST_ROOTS, "params": {}}


def as_input_request(entry: dict[str, Any]) -> dict[str, Any]:
    """A low-level handler's entry as the 2026-07-28 wire carries it: only ``method`` and
    ``params``. Entries written the 2025-11-25 way lose their ``jsonrpc``/``id`` envelope and a URL
    elicitation's ``elicitationId``, which that revision removed (a strict client may refuse them)."""
    request: dict[str, Any] = {"method": entry.get("method")}
    params = entry.get("params")
    if isinstance(params, dict) and "elicitationId" in params and request["method"] == ELICIT:
        params = {name: value for name, value in params.items() if name != "elicitationId"}
    if params is not None:
        request["params"] = params
    return request


def input_required_result(
    input_requests: dict[str, dict[str, Any]] | None, request_state: str | None
) -> dict[str, Any]:
    """An ``InputRequiredResult``. Never an empty ``inputRequests`` map; at least one part."""
    result: dict[str, Any] = {"resultType": "input_required"}
    if input_requests:
        result["inputRequests"] = input_requests
    if request_state is not None:
        result["requestState"] = request_state
    if len(result) == 1:
        raise ValueError("an InputRequiredResult needs inputRequests or requestState")
    return result


def read_input_responses(params: dict[str, Any]) -> dict[str, Any]:
    """``params.inputResponses`` as a dict (``{}`` when absent or null); -32602 when it is not an
    object. Its values are checked where they are used (:func:`check_input_response`): keys the
    server did not ask are ignored, whatever they hold."""
    responses = params.get("inputResponses")
    if responses is None:
        return {}
    if not isinstance(responses, dict):
        raise invalid_params("inputResponses must be an object keyed by the inputRequests keys")
    return responses


def check_input_response(key: str, value: object) -> dict[str, Any]:
    """The answer to the question ``key``; -32602 when it is not an object."""
    if type(value) is not dict:
        raise invalid_params(
            f"inputResponses[{key!r}] must be an object "
            "(an ElicitResult, CreateMessageResult or ListRootsResult)"
        )
    return value


def check_elicit_result(
    key: str, value: dict[str, Any], *, where: str | None = None
) -> tuple[ElicitAction, dict[str, Any] | None]:
    """Read an ``ElicitResult``: its action, and its content when the action is accept.

    Content on decline or cancel is ignored, not validated. ``where`` names the answer in the
    -32602 message (default ``inputResponses[key]``; the 2025-11-25 wire names the request).
    """
    where = f"inputResponses[{key!r}]" if where is None else where
    raw = value.get("action")
    action = ELICIT_ACTIONS.get(raw) if isinstance(raw, str) else None  # (a list is unhashable)
    if action is None:
        raise invalid_params(f"{where}.action must be one of accept, decline, cancel")
    if action != "accept":
        return action, None
    content = value.get("content")
    if content is not None and not isinstance(content, dict):
        raise invalid_params(f"{where}.content must be an object")
    return action, content
