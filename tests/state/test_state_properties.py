"""Property-based tests: unseal never fails with anything but StateRejected, and round trips."""

from __future__ import annotations

import base64
import binascii
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from mcp_elicit.state import KeyRing, RequestBinding, StateRejected, StateSealer, args_digest

RING = KeyRing([os.urandom(32)])
SEALER = StateSealer(RING, audience="https://mcp.example.test/mcp")
BINDING = RequestBinding("tools/call", "book", args_digest({"n": 1}), "iss|alice")
TOKEN = SEALER.seal({"answers": {"q": {"action": "accept", "content": {"ok": True}}}}, BINDING)
URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=30,
)
json_objects = st.dictionaries(st.text(max_size=10), json_values, max_size=8)

anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.binary(max_size=64),
    st.text(max_size=200),
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
    st.text(alphabet=URL_ALPHABET, max_size=300).map(lambda body: "v1." + body),
    st.binary(min_size=0, max_size=300).map(
        lambda raw: "v1." + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    ),
    st.binary(min_size=0, max_size=300).map(
        lambda raw: "v1." + base64.urlsafe_b64encode(RING.sealing_key()[0] + raw).rstrip(b"=").decode()
    ),
)


def _refused(value: object) -> str:
    with pytest.raises(StateRejected) as info:
        SEALER.unseal(value, BINDING)
    return info.value.reason


@SETTINGS
@given(anything)
@example("v1.")
@example("v1." + "A" * 43)
def test_unseal_of_arbitrary_input_raises_only_state_rejected(value: object) -> None:
    _refused(value)


mutation = st.one_of(
    st.tuples(st.just("replace"), st.integers(min_value=0), st.characters()),
    st.tuples(st.just("insert"), st.integers(min_value=0), st.characters()),
    st.tuples(st.just("delete"), st.integers(min_value=0), st.just("")),
    st.tuples(st.just("truncate"), st.integers(min_value=0), st.just("")),
    st.tuples(st.just("append"), st.just(0), st.text(min_size=1, max_size=5)),
    st.tuples(st.just("swap"), st.integers(min_value=0), st.just("")),
)


def _mutate(token: str, steps: list[tuple[str, int, str]]) -> str:
    for kind, index, text in steps:
        position = index % (len(token) + 1)
        if kind == "replace" and token:
            position %= len(token)
            token = token[:position] + text + token[position + 1 :]
        elif kind == "insert":
            token = token[:position] + text + token[position:]
        elif kind == "delete" and token:
            position %= len(token)
            token = token[:position] + token[position + 1 :]
        elif kind == "truncate":
            token = token[:position]
        elif kind == "append":
            token = token + text
        elif kind == "swap" and len(token) > 1:
            position %= len(token) - 1
            token = token[:position] + token[position + 1] + token[position] + token[position + 2 :]
    return token


@SETTINGS
@given(st.lists(mutation, min_size=1, max_size=4))
def test_any_mutation_of_a_valid_token_is_refused(steps: list[tuple[str, int, str]]) -> None:
    mutated = _mutate(TOKEN, steps)
    assume(mutated != TOKEN)
    # Canonical encoding + authentication: no other string opens, not even an equivalent one.
    _refused(mutated)


@SETTINGS
@given(json_objects)
def test_round_trip_of_arbitrary_json_payloads(payload: dict[str, Any]) -> None:
    token = SEALER.seal(payload, BINDING)
    assert SEALER.unseal(token, BINDING).payload == payload


@SETTINGS
@given(json_objects, st.text(max_size=20), st.text(max_size=40), st.none() | st.text(max_size=20))
def test_round_trip_with_arbitrary_bindings(
    arguments: dict[str, Any], method: str, target: str, principal: str | None
) -> None:
    assume(method)
    binding = RequestBinding(method, target, args_digest(arguments), principal)
    assert SEALER.unseal(SEALER.seal({"a": arguments}, binding), binding).payload == {"a": arguments}


def _canonical_by_reencoding(body: str) -> bool:
    """The reference definition: decode leniently, re-encode, compare."""
    if any(c not in URL_ALPHABET for c in body):
        return False
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except binascii.Error:
        return False
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode() == body


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=URL_ALPHABET + "+/= \n.", max_size=12))
def test_decoder_accepts_exactly_the_reencoding_fixed_points(body: str) -> None:
    # Short bodies decode to fewer bytes than a token needs, so "accepted" shows up as "truncated".
    with pytest.raises(StateRejected) as info:
        SEALER.unseal("v1." + body, BINDING)
    accepted = info.value.reason == "truncated"
    assert info.value.reason in {"truncated", "bad-encoding"}
    assert accepted == _canonical_by_reencoding(body)
