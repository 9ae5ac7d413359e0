"""Lone surrogates (``"\\ud800"``) meet the sealer and the digests.

The wire parser refuses them (-32700), but ``Server.dispatch`` and the sealer are public: a
transport built on the standard ``json`` module hands them through. orjson cannot write them, so
the sealer must say which part is at fault, and the digests must stay total and unambiguous.
"""

from __future__ import annotations

from typing import Any

import pytest
from state_support import AUDIENCE, FakeClock

from mcp_elicit.state import (
    KeyRing,
    RequestBinding,
    StateRejected,
    StateSealer,
    args_digest,
)
from mcp_elicit.state.binding import request_digest

LONE = ["\ud800", "\udbff", "\udc00", "\udfff", "a\udc00\ud800b"]


@pytest.mark.parametrize("lone", LONE)
def test_a_payload_holding_one_is_a_type_error_naming_the_payload(
    sealer: StateSealer, binding: RequestBinding, lone: str
) -> None:
    for payload in ({"answer": lone}, {lone: 1}, {"nested": [{"x": lone}]}):
        with pytest.raises(TypeError, match="the requestState payload is not JSON-serialisable"):
            sealer.seal(payload, binding)


@pytest.mark.parametrize("field", ["target", "principal", "method"])
def test_a_binding_holding_one_is_a_type_error_naming_that_field(
    sealer: StateSealer, binding: RequestBinding, field: str
) -> None:
    """The binding comes from the request (a resource URI, the caller): blaming the payload
    sent whoever read the log to the wrong place."""
    values: dict[str, Any] = {
        "method": binding.method,
        "target": binding.target,
        "args_digest": binding.args_digest,
        "principal": binding.principal,
    }
    values[field] = f"x\ud800{field}"
    with pytest.raises(
        TypeError, match=rf"^RequestBinding\.{field} cannot be sealed: it holds a lone surrogate$"
    ):
        sealer.seal({"a": 1}, RequestBinding(**values))


def test_an_audience_holding_one_is_refused_when_the_sealer_is_made(ring: KeyRing) -> None:
    """Every seal would fail otherwise, each with a message about the payload."""
    with pytest.raises(ValueError, match="audience must be Unicode text"):
        StateSealer(ring, audience="https://srv.example/\udfff")
    assert StateSealer(ring, audience="https://srv.example/\U0001f600").audience.endswith("\U0001f600")


@pytest.mark.parametrize("field", ["target", "principal"])
def test_unsealing_against_a_binding_holding_one_is_a_plain_refusal(
    sealer: StateSealer, binding: RequestBinding, field: str
) -> None:
    token = sealer.seal({"a": 1}, binding)
    values: dict[str, Any] = {
        "method": binding.method,
        "target": binding.target,
        "args_digest": binding.args_digest,
        "principal": binding.principal,
    }
    values[field] = str(values[field]) + "\ud800"
    with pytest.raises(StateRejected) as info:
        sealer.unseal(token, RequestBinding(**values))
    assert info.value.reason == ("binding-target" if field == "target" else "principal")


def test_a_token_holding_one_is_refused_as_bad_encoding(sealer: StateSealer, binding: RequestBinding) -> None:
    token = sealer.seal({}, binding)
    for bad in (token + "\ud800", token[:10] + "\udc00" + token[11:], "v1.\ud800"):
        with pytest.raises(StateRejected) as info:
            sealer.unseal(bad, binding)
        assert info.value.reason == "bad-encoding"


def test_the_argument_digest_takes_them_and_keeps_them_apart() -> None:
    digests = {
        args_digest({"q": "\ud800"}),
        args_digest({"q": "\udc00"}),
        args_digest({"q": "\ud800\udc00"}),  # the pair written as two lone halves
        args_digest({"q": "\U00010000"}),  # the character that pair would form
        args_digest({"q": "\ufffd"}),  # what a lenient decoder would put in its place
        args_digest({"q": "\\ud800"}),  # the escape as text
        args_digest({"\ud800": "q"}),
        args_digest({"q": ["\ud800"]}),
    }
    assert len(digests) == 8
    assert args_digest({"q": "\ud800", "n": [1.0]}) == args_digest({"n": [1], "q": "\ud800"})


def test_the_request_digest_takes_them_in_answers(binding: RequestBinding) -> None:
    one = request_digest(binding, {"k": {"action": "accept", "content": {"name": "\ud800"}}})
    other = request_digest(binding, {"k": {"action": "accept", "content": {"name": "\udc00"}}})
    assert one != other
    assert one == request_digest(binding, {"k": {"content": {"name": "\ud800"}, "action": "accept"}})


def test_a_sealer_with_a_clock_keeps_working_after_a_refused_seal(
    ring: KeyRing, binding: RequestBinding
) -> None:
    sealer = StateSealer(ring, audience=AUDIENCE, clock=FakeClock())
    with pytest.raises(TypeError):
        sealer.seal({"x": "\ud800"}, binding)
    assert sealer.unseal(sealer.seal({"x": "ok"}, binding), binding).payload == {"x": "ok"}
