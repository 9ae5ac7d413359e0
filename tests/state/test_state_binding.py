"""args_digest and RequestBinding."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest

from mcp_elicit.state import RequestBinding, args_digest


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_digest_is_sha256_of_sorted_compact_json() -> None:
    assert args_digest({"b": [1, 2], "a": "x"}) == sha('{"a":"x","b":[1,2]}')
    assert args_digest({"z": {"y": 1, "x": None}}) == sha('{"z":{"x":null,"y":1}}')
    assert args_digest({"name": "Zoë"}) == hashlib.sha256('{"name":"Zoë"}'.encode()).hexdigest()
    assert len(args_digest({})) == 64


def test_none_and_empty_object_are_equal() -> None:
    assert args_digest(None) == args_digest({}) == sha("{}")


def test_key_order_does_not_matter() -> None:
    assert args_digest({"a": 1, "b": {"c": 2, "d": 3}}) == args_digest({"b": {"d": 3, "c": 2}, "a": 1})


def test_numbers_compare_by_value() -> None:
    assert args_digest({"n": 1.0}) == args_digest({"n": 1}) == sha('{"n":1}')
    assert args_digest({"n": -0.0}) == args_digest({"n": 0})
    assert args_digest({"n": 1.5}) != args_digest({"n": 1})
    assert args_digest({"n": True}) != args_digest({"n": 1})
    assert args_digest({"n": 2.0**60}) != args_digest({"n": 2**60 + 1})


def test_values_that_must_not_collide() -> None:
    digests = {
        args_digest(value)
        for value in (
            {"x": None},
            {"x": float("nan")},
            {"x": float("inf")},
            {"x": "NaN"},
            {"x": 10**30},
            {"x": "1000000000000000000000000000000"},
            {"x": [1, 2]},
            {"x": "[1,2]"},
            {"x": ""},
            {},
            {"x": "\ud800"},  # lone surrogate (stdlib json.loads accepts it)
            {"x": "\ud801"},
        )
    }
    assert len(digests) == 12


def test_lists_and_tuples_are_the_same_json() -> None:
    assert args_digest({"a": (1, 2)}) == args_digest({"a": [1, 2]})


def test_non_json_values_are_refused() -> None:
    with pytest.raises(TypeError, match="not a str"):
        args_digest({1: "x"})
    with pytest.raises(TypeError, match="JSON data"):
        args_digest({"x": {1, 2}})
    with pytest.raises(TypeError, match="JSON data"):
        args_digest({"x": b"bytes"})


def test_request_binding_is_frozen_and_checked() -> None:
    binding = RequestBinding("tools/call", "t", args_digest({}), None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        binding.method = "prompts/get"  # type: ignore[misc]
    assert binding == RequestBinding("tools/call", "t", args_digest(None), None)
    with pytest.raises(TypeError, match="method"):
        RequestBinding("", "t", "d", None)
    with pytest.raises(TypeError, match="args_digest"):
        RequestBinding("m", "t", "", None)
    with pytest.raises(TypeError, match="principal"):
        RequestBinding("m", "t", "d", 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="target"):
        RequestBinding("m", None, "d", None)  # type: ignore[arg-type]
