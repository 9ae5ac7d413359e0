"""StateSealer: round trip and every refusal, with the exact reason and the fixed wire message."""

from __future__ import annotations

import base64
import binascii
import pickle
from typing import Any

import orjson
import pytest
from state_support import AUDIENCE, FakeClock

from mcp_elicit.state import (
    INVALID_STATE_MESSAGE,
    KeyRing,
    RequestBinding,
    StateRejected,
    StateSealer,
    Unsealed,
    args_digest,
)
from mcp_elicit.state.seal import AD_PREFIX

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def decode(token: str) -> bytes:
    body = token[3:]
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))


def encode(raw: bytes) -> str:
    return "v1." + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def reason_of(sealer: StateSealer, token: object, binding: RequestBinding) -> str:
    with pytest.raises(StateRejected) as info:
        sealer.unseal(token, binding)
    exc = info.value
    # Whatever the reason, nothing about it can reach the wire through str() or args.
    assert str(exc) == INVALID_STATE_MESSAGE
    assert exc.args == (INVALID_STATE_MESSAGE,)
    assert exc.reason in repr(exc)  # the reason is only in repr() and .reason, for logs
    return exc.reason


# ------------------------------------------------------------------------------ round trip


def test_round_trip(sealer: StateSealer, binding: RequestBinding, clock: FakeClock) -> None:
    payload = {"answers": {"confirm": {"action": "accept", "content": {"ok": True}}}, "n": [1, 2.5]}
    token = sealer.seal(payload, binding)
    assert token.startswith("v1.")
    assert token.isascii()
    opened = sealer.unseal(token, binding)
    assert isinstance(opened, Unsealed)
    assert opened.payload == payload
    assert opened.issued_at == clock.now
    assert opened.expires_at == clock.now + 600.0
    assert len(opened.token_id) == 22  # 128 bits, base64url
    # Every seal gets a fresh nonce and token id.
    again = sealer.seal(payload, binding)
    assert again != token
    assert sealer.unseal(again, binding).token_id != opened.token_id


def test_token_layout_and_associated_data(ring: KeyRing, binding: RequestBinding) -> None:
    sealer = StateSealer(ring, audience=AUDIENCE)
    token = sealer.seal({"k": "v"}, binding)
    raw = decode(token)
    kid, aead = ring.sealing_key()
    assert raw[:4] == kid
    assert raw[:4].hex() == ring.sealing_kid
    plaintext = aead.decrypt(raw[4:16], raw[16:], AD_PREFIX + kid)
    claims = orjson.loads(plaintext)
    assert claims[0] == 1
    assert claims[3:8] == [AUDIENCE, binding.method, binding.target, binding.args_digest, binding.principal]
    assert claims[9] == {"k": "v"}
    # Not compressed: the ciphertext is exactly plaintext + 16-byte tag.
    assert len(raw) == 4 + 12 + len(plaintext) + 16


def test_payload_is_not_compressed(sealer: StateSealer, binding: RequestBinding) -> None:
    small = sealer.seal({"a": "x" * 10}, binding)
    large = sealer.seal({"a": "x" * 10_010}, binding)
    assert len(decode(large)) - len(decode(small)) == 10_000


def test_mapping_payload_and_unicode(sealer: StateSealer) -> None:
    from types import MappingProxyType

    binding = RequestBinding("resources/read", "file:///tmp/ü.txt", args_digest({}), "iss|zoë")
    token = sealer.seal(MappingProxyType({"name": "Zoë 🦊"}), binding)
    assert sealer.unseal(token, binding).payload == {"name": "Zoë 🦊"}


def test_anonymous_principal_round_trip(sealer: StateSealer, make_binding: Any) -> None:
    binding = make_binding(principal=None)
    assert sealer.unseal(sealer.seal({}, binding), binding).payload == {}


def test_seal_refuses_bad_input(sealer: StateSealer, binding: RequestBinding) -> None:
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        sealer.seal({"x": object()}, binding)
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        sealer.seal({1: "non-str key"}, binding)  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="mapping"):
        sealer.seal(["not", "a", "mapping"], binding)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="RequestBinding"):
        sealer.seal({}, ("tools/call", "x", "d", None))  # type: ignore[arg-type]


def test_constructor_validation(ring: KeyRing) -> None:
    with pytest.raises(ValueError, match="audience"):
        StateSealer(ring, audience="")
    with pytest.raises(ValueError, match="ttl"):
        StateSealer(ring, audience=AUDIENCE, ttl=0)
    with pytest.raises(ValueError, match="ttl"):
        StateSealer(ring, audience=AUDIENCE, ttl=float("inf"))
    with pytest.raises(ValueError, match="max_token_bytes"):
        StateSealer(ring, audience=AUDIENCE, max_token_bytes=10)
    with pytest.raises(TypeError, match="KeyRing"):
        StateSealer([b"k" * 32], audience=AUDIENCE)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ the exception


def test_state_rejected_carries_reason_but_prints_the_fixed_message() -> None:
    exc = StateRejected("decrypt-failed")
    assert exc.reason == "decrypt-failed"
    assert str(exc) == INVALID_STATE_MESSAGE == "Invalid or expired requestState"
    assert exc.args == (INVALID_STATE_MESSAGE,)
    assert f"{exc}" == INVALID_STATE_MESSAGE
    assert repr(exc) == "StateRejected(reason='decrypt-failed')"  # for logs only
    clone = pickle.loads(pickle.dumps(exc))
    assert isinstance(clone, StateRejected)
    assert clone.reason == "decrypt-failed"
    assert str(clone) == INVALID_STATE_MESSAGE
    other = pickle.loads(pickle.dumps(StateRejected("principal", "iss|alice")))
    assert (other.reason, other.sealed_for) == ("principal", "iss|alice")


# ------------------------------------------------------------------------------ input shape


@pytest.mark.parametrize("value", [None, 123, 1.5, b"v1.AAAA", ["v1.AAAA"], {"v": 1}, True])
def test_not_a_string(sealer: StateSealer, binding: RequestBinding, value: object) -> None:
    assert reason_of(sealer, value, binding) == "not-a-string"


def test_empty_string(sealer: StateSealer, binding: RequestBinding) -> None:
    assert reason_of(sealer, "", binding) == "bad-encoding"


def test_too_large_input_and_seal_limit(ring: KeyRing, binding: RequestBinding) -> None:
    sealer = StateSealer(ring, audience=AUDIENCE, max_token_bytes=1000)
    assert reason_of(sealer, "v1." + "A" * 998, binding) == "too-large"
    assert reason_of(sealer, "x" * 5000, binding) == "too-large"
    assert reason_of(sealer, "v1." + "A" * 997, binding) != "too-large"
    with pytest.raises(ValueError, match="over max_token_bytes=1000"):
        sealer.seal({"blob": "x" * 2000}, binding)
    default = StateSealer(ring, audience=AUDIENCE)
    assert reason_of(default, "v1." + "A" * (256 * 1024), binding) == "too-large"


@pytest.mark.parametrize(
    "prefix", ["v2.", "v0.", "V1.", "v1", "v1-", "v11.", "", " v1.", "v1\u2024", "v1\uff0e"]
)
def test_wrong_or_missing_version_prefix(sealer: StateSealer, binding: RequestBinding, prefix: str) -> None:
    token = sealer.seal({"a": 1}, binding)
    assert reason_of(sealer, prefix + token[3:], binding) == "bad-version"


def test_prefix_only_and_tiny_bodies(sealer: StateSealer, binding: RequestBinding) -> None:
    assert reason_of(sealer, "v1.", binding) == "truncated"
    assert reason_of(sealer, "v1.AA", binding) == "truncated"
    assert reason_of(sealer, "v1.A", binding) == "bad-encoding"  # impossible length


# ------------------------------------------------------------------------------ encoding


def _token_with(sealer: StateSealer, binding: RequestBinding, predicate: Any) -> str:
    for size in range(500):
        token = sealer.seal({"pad": "p" * size}, binding)
        if predicate(token):
            return token
    raise AssertionError("no token with the wanted shape")  # pragma: no cover


def test_padding_variants_are_refused(sealer: StateSealer, binding: RequestBinding) -> None:
    token = _token_with(sealer, binding, lambda t: len(t[3:]) % 4 == 2)
    assert reason_of(sealer, token + "==", binding) == "bad-encoding"  # properly padded
    assert reason_of(sealer, token + "=", binding) == "bad-encoding"
    token3 = _token_with(sealer, binding, lambda t: len(t[3:]) % 4 == 3)
    assert reason_of(sealer, token3 + "=", binding) == "bad-encoding"  # properly padded
    token0 = _token_with(sealer, binding, lambda t: len(t[3:]) % 4 == 0)
    assert reason_of(sealer, token0 + "====", binding) == "bad-encoding"
    for good in (token, token3, token0):
        assert sealer.unseal(good, binding).token_id


def test_standard_alphabet_variants_are_refused(sealer: StateSealer, binding: RequestBinding) -> None:
    token = _token_with(sealer, binding, lambda t: "-" in t[3:] and "_" in t[3:])
    plus = token[:3] + token[3:].replace("-", "+")
    slash = token[:3] + token[3:].replace("_", "/")
    both = token[:3] + token[3:].replace("-", "+").replace("_", "/")
    # A lenient base64url decoder reads them as the same bytes: they are real variants.
    for variant in (plus, slash, both):
        assert variant != token
        assert decode(variant) == decode(token)
        assert reason_of(sealer, variant, binding) == "bad-encoding"
    assert sealer.unseal(token, binding).token_id


def test_non_canonical_trailing_bits_are_refused(sealer: StateSealer, binding: RequestBinding) -> None:
    for tail, unused in ((2, 0x0F), (3, 0x03)):
        token = _token_with(sealer, binding, lambda t, tail=tail: len(t[3:]) % 4 == tail)
        last = ALPHABET.index(token[-1])
        assert last & unused == 0  # the encoder wrote zero bits
        for bit in range(unused.bit_length()):
            variant = token[:-1] + ALPHABET[last | (1 << bit)]
            # A lenient decoder gives exactly the same bytes ...
            body = variant[3:]
            assert binascii.a2b_base64(
                body.replace("-", "+").replace("_", "/") + "=" * (-len(body) % 4)
            ) == decode(token)
            # ... but it is not the canonical form, so it is refused.
            assert reason_of(sealer, variant, binding) == "bad-encoding"
        assert sealer.unseal(token, binding).token_id


@pytest.mark.parametrize(
    "change",
    [
        lambda t: t + "\n",
        lambda t: t + " ",
        lambda t: t[:10] + " " + t[10:],
        lambda t: t[:10] + "\n" + t[10:],
        lambda t: t[:10] + "." + t[10:],
        lambda t: t[:10] + "Ａ" + t[11:],  # fullwidth A, non-ASCII
        lambda t: t[:10] + "\x00" + t[11:],
        lambda t: t[:10] + "!" + t[11:],
    ],
)
def test_foreign_characters_are_refused(sealer: StateSealer, binding: RequestBinding, change: Any) -> None:
    token = sealer.seal({"a": 1}, binding)
    assert reason_of(sealer, change(token), binding) == "bad-encoding"


# ------------------------------------------------------------------------------ tampering


def test_bit_flip_at_every_byte_and_bit_of_the_raw_token(ring: KeyRing, clock: FakeClock) -> None:
    sealer = StateSealer(ring, audience="a", clock=clock)
    binding = RequestBinding("tools/call", "t", "d", None)
    token = sealer.seal({}, binding)
    raw = decode(token)
    assert len(raw) < 120  # a short token
    seen: dict[str, int] = {}
    for position in range(len(raw)):
        for bit in range(8):
            mutated = bytearray(raw)
            mutated[position] ^= 1 << bit
            reason = reason_of(sealer, encode(bytes(mutated)), binding)
            expected = "unknown-key" if position < 4 else "decrypt-failed"
            assert reason == expected, (position, bit, reason)
            seen[reason] = seen.get(reason, 0) + 1
    assert seen == {"unknown-key": 32, "decrypt-failed": (len(raw) - 4) * 8}


def test_bit_flip_at_every_character_of_the_token_text(ring: KeyRing, clock: FakeClock) -> None:
    sealer = StateSealer(ring, audience="a", clock=clock)
    binding = RequestBinding("tools/call", "t", "d", None)
    token = sealer.seal({}, binding)
    for position in range(len(token)):
        for bit in range(8):
            flipped = chr(ord(token[position]) ^ (1 << bit))
            mutated = token[:position] + flipped + token[position + 1 :]
            reason = reason_of(sealer, mutated, binding)
            if position < 3:
                assert reason == "bad-version"
            else:
                assert reason in {"bad-encoding", "unknown-key", "decrypt-failed"}, reason


def test_truncation_at_every_length(ring: KeyRing, clock: FakeClock) -> None:
    sealer = StateSealer(ring, audience="a", clock=clock)
    binding = RequestBinding("tools/call", "t", "d", None)
    token = sealer.seal({"k": "v"}, binding)
    raw = decode(token)
    for length in range(len(raw)):
        reason = reason_of(sealer, encode(raw[:length]), binding)
        assert reason == ("truncated" if length < 4 + 12 + 16 + 1 else "decrypt-failed"), length
    for length in range(len(token)):
        reason = reason_of(sealer, token[:length], binding)
        if length < 3:
            assert reason in {"bad-version", "bad-encoding"}
        else:
            assert reason in {"bad-encoding", "truncated", "decrypt-failed"}, (length, reason)
    # Extra bytes at the end are tampering too.
    assert reason_of(sealer, encode(raw + b"\x00"), binding) == "decrypt-failed"


def test_token_from_another_key_ring(sealer: StateSealer, binding: RequestBinding) -> None:
    other = StateSealer(KeyRing.from_secrets([KeyRing.generate_secret()]), audience=AUDIENCE)
    token = other.seal({"a": 1}, binding)
    assert reason_of(sealer, token, binding) == "unknown-key"


def test_kid_swapped_to_a_known_key_fails_authentication(ring: KeyRing, binding: RequestBinding) -> None:
    other_ring = KeyRing.from_secrets([KeyRing.generate_secret()])
    both = StateSealer(KeyRing([*_materials(ring), *_materials(other_ring)]), audience=AUDIENCE)
    token = StateSealer(other_ring, audience=AUDIENCE).seal({"a": 1}, binding)
    raw = decode(token)
    relabelled = ring.sealing_key()[0] + raw[4:]
    assert reason_of(both, encode(relabelled), binding) == "decrypt-failed"
    assert both.unseal(token, binding).payload == {"a": 1}


def _materials(ring: KeyRing) -> list[bytes]:
    return [key.material for key in ring._keys]


def _forge(ring: KeyRing, plaintext: bytes) -> str:
    kid, aead = ring.sealing_key()
    nonce = b"\x01" * 12
    return encode(kid + nonce + aead.encrypt(nonce, plaintext, AD_PREFIX + kid))


@pytest.mark.parametrize(
    "plaintext",
    [
        b"not json",
        b'{"v":1}',
        b"[]",
        b'[2,1,2,"a","m","t","d",null,"id",{}]',  # unknown claims version
        b'[1,"1",2,"a","m","t","d",null,"id",{}]',  # iat not a number
        b'[1,true,2,"a","m","t","d",null,"id",{}]',  # bool is not a number
        b'[1,1,2,"a","m","t","d",5,"id",{}]',  # principal not str/null
        b'[1,1,2,"a","m","t","d",null,"",{}]',  # empty token id
        b'[1,1,2,"a","m","t","d",null,"id",[]]',  # payload not an object
        b'[1,1,2,"a","m","t","d",null,"id",{},"extra"]',
    ],
)
def test_authenticated_but_malformed_claims(ring: KeyRing, clock: FakeClock, plaintext: bytes) -> None:
    sealer = StateSealer(ring, audience="a", clock=clock)
    binding = RequestBinding("m", "t", "d", None)
    assert reason_of(sealer, _forge(ring, plaintext), binding) == "bad-claims"


def test_forged_well_formed_claims_open(ring: KeyRing, clock: FakeClock) -> None:
    # Sanity check of _forge: the same layout with valid claims is accepted.
    sealer = StateSealer(ring, audience="a", clock=clock)
    binding = RequestBinding("m", "t", "d", None)
    now = clock.now
    plaintext = orjson.dumps([1, now, now + 5, "a", "m", "t", "d", None, "id", {"x": 1}])
    assert sealer.unseal(_forge(ring, plaintext), binding).payload == {"x": 1}


# ------------------------------------------------------------------------------ time


def test_expiry_uses_the_injected_clock(
    sealer: StateSealer, binding: RequestBinding, clock: FakeClock
) -> None:
    token = sealer.seal({"a": 1}, binding)
    clock.advance(600.0)
    assert sealer.unseal(token, binding).payload == {"a": 1}  # now == exp is still valid
    clock.advance(0.001)
    assert reason_of(sealer, token, binding) == "expired"
    clock.advance(10_000)
    assert reason_of(sealer, token, binding) == "expired"


def test_custom_ttl(ring: KeyRing, binding: RequestBinding, clock: FakeClock) -> None:
    sealer = StateSealer(ring, audience=AUDIENCE, ttl=30, clock=clock)
    token = sealer.seal({}, binding)
    assert sealer.unseal(token, binding).expires_at == clock.now + 30
    clock.advance(30.5)
    assert reason_of(sealer, token, binding) == "expired"


def test_lowering_ttl_shortens_tokens_already_issued(
    ring: KeyRing, binding: RequestBinding, clock: FakeClock
) -> None:
    issued = clock.now
    token = StateSealer(ring, audience=AUDIENCE, ttl=600, clock=clock).seal({}, binding)
    strict = StateSealer(ring, audience=AUDIENCE, ttl=60, clock=clock)
    clock.advance(59)
    assert strict.unseal(token, binding).expires_at == issued + 60
    clock.advance(2)
    assert reason_of(strict, token, binding) == "expired"


def test_issued_in_the_future_beyond_the_clock_skew(
    ring: KeyRing, binding: RequestBinding, clock: FakeClock
) -> None:
    ahead = FakeClock(clock.now + 60)  # another instance whose clock runs 60 s ahead
    token = StateSealer(ring, audience=AUDIENCE, clock=ahead).seal({}, binding)
    sealer = StateSealer(ring, audience=AUDIENCE, clock=clock)
    assert sealer.unseal(token, binding).issued_at == clock.now + 60  # within the 60 s skew
    far_ahead = FakeClock(clock.now + 61)
    token2 = StateSealer(ring, audience=AUDIENCE, clock=far_ahead).seal({}, binding)
    assert reason_of(sealer, token2, binding) == "issued-in-future"
    no_skew = StateSealer(ring, audience=AUDIENCE, clock=clock, clock_skew=0)
    assert reason_of(no_skew, token, binding) == "issued-in-future"


# ------------------------------------------------------------------------------ binding


def test_cross_audience(ring: KeyRing, binding: RequestBinding, clock: FakeClock) -> None:
    token = StateSealer(ring, audience="https://other.example/mcp", clock=clock).seal({}, binding)
    assert reason_of(StateSealer(ring, audience=AUDIENCE, clock=clock), token, binding) == "audience"


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("method", "prompts/get", "binding-method"),
        ("target", "cancel_table", "binding-target"),
        ("target", "Book_table", "binding-target"),
        ("args_digest", args_digest({"date": "2026-08-01", "party": 5}), "binding-args"),
        ("args_digest", args_digest(None), "binding-args"),
        ("principal", "https://issuer.example|mallory", "principal"),
        ("principal", "https://other-issuer.example|alice", "principal"),
        ("principal", None, "principal"),
    ],
)
def test_cross_request_and_principal(
    sealer: StateSealer, binding: RequestBinding, field: str, value: Any, reason: str
) -> None:
    token = sealer.seal({"a": 1}, binding)
    other = RequestBinding(**{**_as_dict(binding), field: value})
    assert reason_of(sealer, token, other) == reason
    assert sealer.unseal(token, binding).payload == {"a": 1}
    if reason == "principal":  # whom it was sealed for, for the engine's security log line
        with pytest.raises(StateRejected) as refused:
            sealer.unseal(token, other)
        assert refused.value.sealed_for == binding.principal


def test_anonymous_token_refused_for_an_authenticated_principal(
    sealer: StateSealer, make_binding: Any
) -> None:
    anonymous = make_binding(principal=None)
    token = sealer.seal({}, anonymous)
    assert reason_of(sealer, token, make_binding(principal="iss|alice")) == "principal"
    assert reason_of(sealer, token, make_binding(principal="")) == "principal"
    empty = make_binding(principal="")
    assert reason_of(sealer, sealer.seal({}, empty), anonymous) == "principal"


def test_args_digest_binding_is_order_and_number_insensitive(sealer: StateSealer, make_binding: Any) -> None:
    token = sealer.seal({}, make_binding(arguments={"a": 1, "b": [1.0, {"c": None}]}))
    assert sealer.unseal(token, make_binding(arguments={"b": [1, {"c": None}], "a": 1.0})).payload == {}
    assert reason_of(sealer, token, make_binding(arguments={"a": 1, "b": [1.5, {"c": None}]})) == (
        "binding-args"
    )


def _as_dict(binding: RequestBinding) -> dict[str, Any]:
    return {
        "method": binding.method,
        "target": binding.target,
        "args_digest": binding.args_digest,
        "principal": binding.principal,
    }
