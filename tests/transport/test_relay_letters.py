"""The letters instances write each other to relay session messages (no network): only an
instance with the same state keys can open one, only the instance it was written to, only
once, and only while its stamp is fresh; a key file is followed as it changes."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mcp_elicit.state import KeyRing, StateSealer
from mcp_elicit.state.key_file import KeyFile
from mcp_elicit.transport.relay_letters import MAX_SKEW, LetterSealer
from tests.helpers import FakeClock

SECRET = KeyRing.generate_secret()


def sealer(*secrets: str) -> StateSealer:
    return StateSealer(KeyRing.from_secrets(list(secrets or [SECRET])), audience="test")


def pair(clock: FakeClock) -> tuple[LetterSealer, LetterSealer]:
    return LetterSealer(sealer(), "a1", clock=clock), LetterSealer(sealer(), "b2", clock=clock)


def test_a_letter_opens_at_its_recipient_with_what_it_carries() -> None:
    a, b = pair(FakeClock())
    letter = b.open(
        a.seal("b2", "open", 7, {"m": "POST", "c": ["test|alice", None]}, b'{"jsonrpc":"2.0"}\n2')
    )
    assert letter is not None
    assert (letter.kind, letter.sender, letter.relay) == ("open", "a1", 7)
    assert letter.fields == {"m": "POST", "c": ["test|alice", None]}
    assert letter.data == b'{"jsonrpc":"2.0"}\n2'  # the data may hold newlines


def test_what_the_database_sees_is_ciphertext() -> None:
    a, _ = pair(FakeClock())
    sealed = a.seal("b2", "open", 1, {"c": ["test|alice", None]}, b"the answer is 42")
    assert b"alice" not in sealed
    assert b"42" not in sealed


def test_refused_letters(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="mcp_elicit.transport.relay")
    clock = FakeClock()
    a, b = pair(clock)
    # Written to another instance: the recipient's name is sealed in.
    assert b.open(a.seal("c3", "open", 1)) is None
    # Other keys (an instance of another deployment, or without the shared keys).
    stranger = LetterSealer(sealer(KeyRing.generate_secret()), "a1", clock=clock)
    assert b.open(stranger.seal("b2", "open", 1)) is None
    assert "same state keys" in caplog.text
    # Tampered, or not a letter at all.
    sealed = bytearray(a.seal("b2", "open", 1))
    sealed[-1] ^= 1
    assert b.open(bytes(sealed)) is None
    assert b.open(b"") is None
    # Taken once: the same letter again is a replay.
    letter = a.seal("b2", "gone", 3)
    assert b.open(letter) is not None
    assert b.open(letter) is None
    assert "came again" in caplog.text
    # Stale: stamped more than MAX_SKEW away from the recipient's clock.
    old = a.seal("b2", "gone", 4)
    clock.advance(MAX_SKEW + 1)
    assert b.open(old) is None
    assert "away from this clock" in caplog.text


def test_stamps_rise_even_when_the_clock_does_not() -> None:
    clock = FakeClock()
    a, b = pair(clock)
    letters = [a.seal("b2", "alive", 0) for _ in range(5)]  # the same microsecond, five times
    assert all(b.open(letter) is not None for letter in letters)
    # A restarted sender (same name, its stamps from its clock again) is heard once time moved on.
    clock.advance(1)
    again = LetterSealer(sealer(), "a1", clock=clock)
    assert b.open(again.seal("b2", "alive", 0)) is not None


def test_a_key_file_is_followed_as_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    first, second = KeyRing.generate_secret(), KeyRing.generate_secret()
    path.write_text(first + "\n")
    clock = FakeClock()
    from_file = StateSealer(KeyFile(path, check_interval=0), audience="test")
    reader = LetterSealer(from_file, "b2", clock=clock)
    assert reader.open(LetterSealer(sealer(first), "a1", clock=clock).seal("b2", "gone", 1)) is not None
    path.write_text(second + "\n" + first + "\n")  # rotated: the new key seals, the old one opens
    writer = LetterSealer(sealer(second, first), "a1", clock=clock)
    clock.advance(0.001)
    assert reader.open(writer.seal("b2", "gone", 2)) is not None


def test_letters_that_do_not_open_are_reported_once_a_minute(caplog: pytest.LogCaptureFixture) -> None:
    """A wrong key fails every letter: one warning a minute, with the count, not one each."""
    caplog.set_level(logging.WARNING, logger="mcp_elicit.transport.relay")
    clock = FakeClock()
    _, b = pair(clock)
    stranger = LetterSealer(sealer(KeyRing.generate_secret()), "a1", clock=clock)
    for _ in range(5):
        assert b.open(stranger.seal("b2", "alive", 0)) is None
    clock.advance(61)
    for _ in range(3):
        assert b.open(stranger.seal("b2", "alive", 0)) is None
    warnings = [r.getMessage() for r in caplog.records if "do not open" in r.getMessage()]
    # The first at once; the next minute, the four held back and the first of that minute.
    hint = (
        "letter(s) that do not open were dropped (unknown-key): is every instance given the same state keys?"
    )
    assert warnings == [f"1 {hint}", f"5 {hint}"]
