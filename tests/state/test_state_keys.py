"""KeyRing: parsing secrets, refusing weak ones, environment, ephemeral keys, rotation."""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os

import pytest

from mcp_elicit.state import KeyRing, RequestBinding, StateRejected, StateSealer
from mcp_elicit.state.key_file import parse_key_file
from mcp_elicit.state.keys import HKDF_INFO, KID_LABEL

AUDIENCE = "https://mcp.example.test/mcp"
PASSPHRASE = "correct horse battery staple, but longer: 8c1f"  # 47 chars, many distinct


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def hkdf_sha256(ikm: bytes, info: bytes, length: int = 32) -> bytes:
    """RFC 5869 written out independently of the implementation under test."""
    prk = hmac.new(b"\x00" * 32, ikm, hashlib.sha256).digest()  # salt=None -> HashLen zeros
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
        counter += 1
    return out[:length]


def kid_of(raw: bytes) -> str:
    return hashlib.sha256(KID_LABEL + raw).digest()[:4].hex()


def token_kid(token: str) -> str:
    body = token[3:]
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))[:4].hex()


BINDING = RequestBinding("tools/call", "t", "d" * 64, None)


def round_trips(sealing: KeyRing, opening: KeyRing) -> bool:
    token = StateSealer(sealing, audience=AUDIENCE).seal({"x": 1}, BINDING)
    try:
        StateSealer(opening, audience=AUDIENCE).unseal(token, BINDING)
    except StateRejected as exc:
        reason = exc.reason
    else:
        return True
    assert reason == "unknown-key"
    return False


# ------------------------------------------------------------------------------ accepted forms


def test_raw_bytes_used_as_is() -> None:
    raw = os.urandom(32)
    ring = KeyRing.from_secrets([raw])
    assert ring.kids == (kid_of(raw),)
    assert ring.sealing_kid == kid_of(raw)


def test_b64_prefix_bare_and_padded_forms_give_the_same_key() -> None:
    raw = os.urandom(32)
    forms: list[str | bytes] = [
        raw,
        "b64:" + b64url(raw),
        b64url(raw),
        b64url(raw) + "=",
        f"  {b64url(raw)}\n",
    ]
    kids = {KeyRing.from_secrets([form]).sealing_kid for form in forms}
    assert kids == {kid_of(raw)}


def test_b64_prefix_accepts_standard_alphabet() -> None:
    raw = bytes(range(200, 232))  # encodes with '+' or '/' somewhere
    std = base64.b64encode(raw).decode()
    assert "+" in std or "/" in std
    assert KeyRing.from_secrets(["b64:" + std]).sealing_kid == kid_of(raw)


def test_passphrase_is_hkdf_sha256_with_the_documented_label() -> None:
    ring = KeyRing.from_secrets([PASSPHRASE])
    expected = hkdf_sha256(PASSPHRASE.encode(), HKDF_INFO)
    assert ring.sealing_kid == kid_of(expected)
    assert HKDF_INFO == b"mcp-elicit/v1 requestState AES-256-GCM key from passphrase"
    # The same passphrase elsewhere opens the tokens; surrounding whitespace does not matter.
    assert round_trips(ring, KeyRing.from_secrets([f"  {PASSPHRASE}\n"]))
    assert not round_trips(ring, KeyRing.from_secrets([PASSPHRASE + "!"]))


def test_kid_is_eight_hex_digits_of_labelled_sha256() -> None:
    raw = os.urandom(32)
    kid = KeyRing([raw]).sealing_kid
    assert len(kid) == 8
    assert int(kid, 16) >= 0
    assert kid == hashlib.sha256(KID_LABEL + raw).hexdigest()[:8]


def test_generate_secret() -> None:
    secrets = {KeyRing.generate_secret() for _ in range(20)}
    assert len(secrets) == 20
    for secret in secrets:
        assert len(secret) == 43
        assert set(secret) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        raw = base64.urlsafe_b64decode(secret + "=")
        assert KeyRing.from_secrets([secret]).sealing_kid == kid_of(raw)


def test_repr_never_shows_key_material() -> None:
    raw = os.urandom(32)
    text = repr(KeyRing.from_secrets([raw, PASSPHRASE]))
    assert text.startswith("KeyRing(kids=[")
    assert b64url(raw) not in text
    assert raw.hex() not in text
    assert PASSPHRASE not in text


# ------------------------------------------------------------------------------ refusals


@pytest.mark.parametrize(
    ("secrets", "message"),
    [
        ([], "at least one secret"),
        ([""], "empty"),
        (["   \n"], "empty"),
        (["short passphrase 123"], "at least 32 characters"),
        (["x" * 31], "at least 32 characters"),
        (["a" * 40], "distinct characters"),
        (["abababababababababababababababababab"], "distinct characters"),
        ([b"\x01" * 31], "exactly 32 bytes"),
        ([b"\x01" * 33], "exactly 32 bytes"),
        ([b"\x00" * 32], "distinct byte values"),
        ([bytes(range(4)) * 8], "distinct byte values"),
        (["b64:" + b64url(os.urandom(16))], "exactly 32 bytes"),
        (["b64:" + b64url(os.urandom(33))], "exactly 32 bytes"),
        (["b64:not base64 at all!"], "not valid base64url"),
        (["b64:"], "not valid base64url"),
        (["b64:" + "A" * 42 + "E"], "distinct byte values"),
    ],
)
def test_weak_or_malformed_secrets_are_refused(secrets: list[str | bytes], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        KeyRing.from_secrets(secrets)


def test_refusal_messages_do_not_echo_the_secret() -> None:
    secret = "hunter2-is-not-long-enough"
    with pytest.raises(ValueError, match="at least 32 characters") as info:
        KeyRing.from_secrets([secret])
    assert secret not in str(info.value)


def test_duplicate_keys_are_refused_even_in_different_encodings() -> None:
    raw = os.urandom(32)
    with pytest.raises(ValueError, match="duplicate"):
        KeyRing.from_secrets([raw, raw])
    with pytest.raises(ValueError, match="duplicate"):
        KeyRing.from_secrets([raw, "b64:" + b64url(raw)])
    with pytest.raises(ValueError, match="duplicate"):
        KeyRing.from_secrets([PASSPHRASE, f" {PASSPHRASE} "])


def test_wrong_types_are_refused() -> None:
    with pytest.raises(TypeError, match="sequence"):
        KeyRing.from_secrets(KeyRing.generate_secret())  # a str is a Sequence[str]: refused
    with pytest.raises(TypeError, match="str or bytes"):
        KeyRing.from_secrets([12345])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="at least one key"):
        KeyRing([])


# ------------------------------------------------------------------------------ environment


def test_from_env_unset_or_blank_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_ELICIT_STATE_KEYS", raising=False)
    assert KeyRing.from_env() is None
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS", "   ")
    assert KeyRing.from_env() is None


def test_from_env_comma_separated_first_seals(monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = os.urandom(32), os.urandom(32)
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS", f" {b64url(first)} , b64:{b64url(second)} ,")
    ring = KeyRing.from_env()
    assert ring is not None
    assert ring.kids == (kid_of(first), kid_of(second))


def test_from_env_custom_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = os.urandom(32)
    monkeypatch.setenv("MY_KEYS", b64url(raw))
    ring = KeyRing.from_env("MY_KEYS")
    assert ring is not None
    assert ring.kids == (kid_of(raw),)


def test_from_env_invalid_names_the_variable_not_the_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS", "tooshort-secret-value")
    with pytest.raises(ValueError, match="MCP_ELICIT_STATE_KEYS") as info:
        KeyRing.from_env()
    assert "tooshort-secret-value" not in str(info.value)


@pytest.mark.parametrize(
    ("value", "complaint"),
    [
        ("garbage", "state key #0: a passphrase must be at least 32 characters, got 7"),
        ("x" * 40, "state key #0: the passphrase uses fewer than 8 distinct characters"),
        ("A" * 43, "state key #0: the key uses fewer than 8 distinct byte values, which no random key does"),
    ],
)
def test_a_weak_key_in_the_variable_points_to_the_keygen_command(
    monkeypatch: pytest.MonkeyPatch, value: str, complaint: str
) -> None:
    """Whoever set the variable fixes it from a shell: the message names `mcp-elicit keygen`, as
    the other key messages do, not KeyRing.generate_secret() (which code still reads)."""
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS", value)
    with pytest.raises(ValueError, match="keygen") as info:
        KeyRing.from_env()
    assert str(info.value) == f"MCP_ELICIT_STATE_KEYS: {complaint}; run `mcp-elicit keygen` for a proper key"
    with pytest.raises(ValueError, match="generate_secret") as in_code:
        KeyRing.from_secrets([value])
    assert str(in_code.value) == f"{complaint}; use KeyRing.generate_secret() for a proper key"
    # A key file is an operator's too.
    with pytest.raises(ValueError, match="keygen") as in_file:
        parse_key_file(value + "\n", origin="keys.txt")
    assert str(in_file.value) == f"keys.txt: {complaint}; run `mcp-elicit keygen` for a proper key"


def test_ephemeral_warns_and_is_process_local(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.state"):
        first = KeyRing.ephemeral()
    records = [r for r in caplog.records if r.name == "mcp_elicit.state"]
    assert len(records) == 1
    assert records[0].levelno == logging.WARNING
    message = records[0].getMessage()
    assert "MCP_ELICIT_STATE_KEYS" in message
    assert "another instance" in message
    assert "restart" in message
    second = KeyRing.ephemeral()
    assert len(first) == 1
    assert first.sealing_kid != second.sealing_kid
    assert not round_trips(first, second)


def test_from_config_precedence(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    explicit, env = os.urandom(32), os.urandom(32)
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS", b64url(env))
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.state"):
        assert KeyRing.from_config([explicit]).kids == (kid_of(explicit),)
        assert KeyRing.from_config().kids == (kid_of(env),)
    assert not caplog.records  # neither explicit nor env keys warn

    monkeypatch.delenv("MCP_ELICIT_STATE_KEYS")
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.state"):
        ring = KeyRing.from_config()
    assert len(ring) == 1
    assert [r.name for r in caplog.records] == ["mcp_elicit.state"]

    with pytest.raises(ValueError, match="at least one secret"):
        KeyRing.from_config([])  # explicitly empty is an error, not a fallback


# ------------------------------------------------------------------------------ rotation


def test_rotation_old_tokens_open_until_the_old_key_is_removed() -> None:
    old_raw, new_raw = os.urandom(32), os.urandom(32)
    old_ring = KeyRing.from_secrets([old_raw])
    old_token = StateSealer(old_ring, audience=AUDIENCE).seal({"step": "old"}, BINDING)

    rotated = old_ring.rotated(new_raw)
    assert rotated.kids == (kid_of(new_raw), kid_of(old_raw))
    sealer = StateSealer(rotated, audience=AUDIENCE)
    assert sealer.unseal(old_token, BINDING).payload == {"step": "old"}

    new_token = sealer.seal({"step": "new"}, BINDING)
    assert token_kid(new_token) == kid_of(new_raw)
    assert token_kid(old_token) == kid_of(old_raw)

    trimmed = rotated.without(kid_of(old_raw))
    assert trimmed.kids == (kid_of(new_raw),)
    trimmed_sealer = StateSealer(trimmed, audience=AUDIENCE)
    with pytest.raises(StateRejected) as info:
        trimmed_sealer.unseal(old_token, BINDING)
    assert info.value.reason == "unknown-key"
    assert trimmed_sealer.unseal(new_token, BINDING).payload == {"step": "new"}
    # The original rings are unchanged (immutable).
    assert old_ring.kids == (kid_of(old_raw),)


def test_rotated_promotes_an_existing_key_without_duplicating_it() -> None:
    a, b = os.urandom(32), os.urandom(32)
    ring = KeyRing.from_secrets([a, b])
    promoted = ring.rotated(b64url(b))
    assert promoted.kids == (kid_of(b), kid_of(a))
    assert kid_of(a) in promoted
    assert "00000000" not in promoted


def test_without_refuses_unknown_and_last_key() -> None:
    raw = os.urandom(32)
    ring = KeyRing.from_secrets([raw])
    with pytest.raises(ValueError, match="no key with id"):
        ring.without("deadbeef")
    with pytest.raises(ValueError, match="last key"):
        ring.without(kid_of(raw))
