"""Property tests of the key configuration an operator writes: ``MCP_ELICIT_STATE_KEYS``, the key
file of ``MCP_ELICIT_STATE_KEYS_FILE`` (read at start-up, then re-read), and the vault's
``MCP_ELICIT_VAULT_KEYS``.

Whatever was written, the outcome is either a ring whose keys are exactly the secrets written
(compared by key id: a kid is a hash of the key itself) or a ``ValueError`` that names the
variable or the file and says what is wrong, with no secret in it. A key file that turns bad while
the server runs never replaces the working keys, and the log says why, once.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import re
import string
import tempfile
import threading
import time
import unittest
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import AnyStr, TypeVar
from unittest import mock

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from tests.helpers import FakeClock, no_errors_logged

from mcp_elicit.connect.vault import VAULT_KEYS_ENV, Vault, VaultKeys
from mcp_elicit.connect.vault.crypto import ring_from, vault_key_wording
from mcp_elicit.state import KeyRing
from mcp_elicit.state.key_file import ENV_FILE_VAR, MAX_KEY_FILE_BYTES, KeyFile, parse_key_file
from mcp_elicit.state.keys import ENV_VAR
from mcp_elicit.wire.codec import b64url_encode

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KEY_VARIABLES = (ENV_VAR, ENV_FILE_VAR, VAULT_KEYS_ENV)
T = TypeVar("T")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]{43}=?")


# ------------------------------------------------------------------------------------ strategies

# 32 bytes with at least 8 distinct values (the rare draw with fewer is replaced by its hash).
raw_keys = st.binary(min_size=32, max_size=32).map(
    lambda raw: raw if len(set(raw)) >= 8 else hashlib.sha256(raw).digest()
)


def key_forms(raw: bytes) -> st.SearchStrategy[str]:
    """Every way the docs allow to write a 32-byte key as text."""
    url = b64url_encode(raw)
    std = base64.b64encode(raw).decode()
    return st.sampled_from([url, url + "=", f"b64:{url}", f"b64:{url}=", f"b64:{std}", f"b64:{std[:-1]}"])


def _is_passphrase(text: str) -> bool:
    """A line the docs read as a passphrase, whole (not a key, a comment, nor a refused one)."""
    body = text.strip()
    return (
        len(body) >= 32
        and len(set(body)) >= 8
        and not body.startswith(("#", "b64:"))
        and not _BARE_KEY.fullmatch(body)
        and " #" not in body
        and "\t#" not in body
    )


# Any character a text editor keeps inside one line: no \n or \r, no NUL (an environment variable
# cannot hold one), no comma (the variable's separator). Everything else, U+0085 and U+2028 too.
_in_a_line = st.characters(codec="utf-8", exclude_characters="\n\r\x00,")
passphrases = st.text(_in_a_line, min_size=32, max_size=64).filter(_is_passphrase)
padding = st.text(" \t", max_size=3)


@st.composite
def valid_secrets(draw: st.DrawFn) -> list[str]:
    """Distinct keys, each as one of the accepted spellings, some passphrases."""
    raws = draw(st.lists(raw_keys, max_size=4, unique=True))
    secrets = [draw(key_forms(raw)) for raw in raws]
    secrets += draw(st.lists(passphrases, max_size=2, unique_by=str.strip))
    if not secrets:
        secrets = [draw(key_forms(draw(raw_keys)))]
    return draw(st.permutations(secrets))


invalid_secrets = st.one_of(
    st.text(_in_a_line, min_size=1, max_size=31).filter(
        lambda s: s.strip() and s.strip()[0] != "#" and " #" not in s and "\t#" not in s
    ),
    st.binary(max_size=48).filter(lambda raw: len(raw) != 32).map(lambda raw: "b64:" + b64url_encode(raw)),
    st.text("ab", min_size=32, max_size=40),  # fewer than 8 distinct characters
    st.binary(min_size=1, max_size=7).map(lambda pattern: b64url_encode((pattern * 32)[:32])),
    st.text(string.punctuation + "é", min_size=1, max_size=30).map(lambda s: "b64:" + s),
)


@st.composite
def secret_lists(draw: st.DrawFn) -> list[str]:
    """Valid secrets, sometimes with an invalid one or a duplicate (in another spelling) among them."""
    secrets = draw(valid_secrets())
    trouble = draw(st.sampled_from(["none", "none", "invalid", "duplicate"]))
    if trouble == "invalid":
        secrets.insert(draw(st.integers(0, len(secrets))), draw(invalid_secrets))
    elif trouble == "duplicate":
        secrets.insert(draw(st.integers(0, len(secrets))), " " + draw(st.sampled_from(secrets)) + "\t")
    event(f"secrets: {trouble}")
    return [draw(padding) + secret + draw(padding) for secret in secrets]


@st.composite
def key_file_texts(draw: st.DrawFn) -> tuple[str, list[str]]:
    """The text of a key file (comments, blank lines, any newline convention, maybe a BOM) and the
    secrets written in it, in order."""
    secrets = draw(secret_lists())
    lines: list[str] = []
    for secret in secrets:
        for _ in range(draw(st.integers(0, 2))):
            lines.append(draw(st.one_of(padding, st.text(_in_a_line, max_size=20).map(lambda s: "#" + s))))
        lines.append(secret)
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    text = newline.join(lines) + draw(st.sampled_from(["", newline]))
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text, secrets


def _spliced(text: AnyStr, noise: AnyStr, at: int) -> AnyStr:
    return text[:at] + noise + text[at:]


def attempt(make: Callable[[], T]) -> T | ValueError:
    """What ``make()`` returns, or the ValueError it raises (anything else is not caught)."""
    try:
        return make()
    except ValueError as exc:
        return exc


def expected_ring(secrets: list[str]) -> KeyRing | ValueError:
    """What the docs say the secrets make: KeyRing.from_secrets is the reference."""
    return attempt(lambda: KeyRing.from_secrets(secrets))


def expected_from_file(secrets: list[str]) -> KeyRing | ValueError:
    """What a key file holding ``secrets`` (one a line) makes: :func:`expected_ring`, but a line
    written in the variable's format (a comma, the variable's name) is refused first."""
    for number, secret in enumerate(secrets, 1):
        line = secret.strip()
        if line.startswith(f"{ENV_VAR}="):
            return ValueError(f"key {number} starts with '{ENV_VAR}=': write the keys alone")
        if "," in line:
            return ValueError(
                f"key {number} holds a comma; a key file has one key per line (commas separate keys "
                f"in {ENV_VAR} only)"
            )
    return expected_ring(secrets)


def exactly(message: str) -> str:
    """A ``pytest.raises(match=...)`` pattern for exactly ``message``."""
    return f"^{re.escape(message)}$"


# ------------------------------------------------------------------------------------ helpers


def assert_no_secret(text: str, secrets: list[str]) -> None:
    for secret in secrets:
        body = secret.strip()
        if len(body) >= 8:
            assert body not in text, "a secret is shown"


@contextmanager
def key_variables(**values: str | bytes) -> Iterator[None]:
    """The key variables unset except ``values`` (bytes: exactly those bytes, as the process gets
    them from an operator's shell); restored afterwards."""
    with mock.patch.dict(os.environ):
        for name in KEY_VARIABLES:
            os.environ.pop(name, None)
        for name, value in values.items():
            os.environb[name.encode()] = value if isinstance(value, bytes) else os.fsencode(value)
        yield


@contextmanager
def a_key_file(content: bytes, mode: int = 0o600) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "state-keys"
        path.write_bytes(content)
        path.chmod(mode)
        yield path


def write_atomically(path: Path, content: bytes) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(content)
    tmp.chmod(0o600)
    os.replace(tmp, path)


@contextmanager
def errors_logged() -> Iterator[list[logging.LogRecord]]:
    """The ERROR records of ``mcp_elicit.state``; at least one must be logged."""
    with unittest.TestCase().assertLogs("mcp_elicit.state", logging.ERROR) as logged:
        yield logged.records


# ------------------------------------------------------------------------------------ the variable


def _env_items(value: str) -> list[str]:
    """The documented reading of the variable: comma-separated, empty items ignored."""
    return [item.strip() for item in value.split(",") if item.strip()]


@SETTINGS
@given(
    st.one_of(
        st.binary(max_size=120),
        secret_lists().map(lambda secrets: ",".join(secrets).encode()),
        st.builds(
            _spliced,
            secret_lists().map(lambda secrets: ",".join(secrets).encode()),
            st.binary(min_size=1, max_size=4),
            st.integers(0, 200),
        ),
    ).map(lambda raw: raw.replace(b"\x00", b""))  # a variable cannot hold a NUL
)
@example(b"correct horse battery staple \xff and a long tail")  # not UTF-8: the shell gave bytes
@example(b"b64:\xff\xfe")
@example(b",, ,")
def test_any_bytes_in_the_variable_make_a_ring_or_an_error_naming_the_variable(raw: bytes) -> None:
    value = os.fsdecode(raw)
    with key_variables(**{ENV_VAR: raw}):
        ring = attempt(KeyRing.from_env)
    if isinstance(ring, ValueError):
        event("refused")
        message = str(ring)
        assert type(ring) is ValueError
        # Which item is wrong, as the variable's (0-based) position, or that there is none.
        assert re.match(rf"{ENV_VAR}: (state key #\d+: |no state keys given)", message), message
        assert_no_secret(message + repr(ring), _env_items(value))
        assert "codec" not in message
        return
    if ring is None:
        event("unset (blank)")
        assert not value.strip()
        return
    event("a ring")
    assert ring.kids == KeyRing.from_secrets(_env_items(value)).kids


IN_CODE = "use KeyRing.generate_secret() for a proper key"


def to_operators(expected: ValueError) -> str:
    """The words of ``expected`` for whoever set the variable or wrote the key file: the same,
    with the fix they run from a shell (mcp-elicit keygen)."""
    return str(expected).replace(IN_CODE, "run `mcp-elicit keygen` for a proper key")


@SETTINGS
@given(secret_lists(), st.sampled_from([",", ", ", " ,", ",\t"]), st.booleans())
def test_the_variable_gives_exactly_the_keys_written(secrets: list[str], comma: str, trailing: bool) -> None:
    value = comma.join(secrets) + ("," if trailing else "")
    expected = expected_ring(secrets)
    with key_variables(**{ENV_VAR: value}):
        if isinstance(expected, ValueError):
            with pytest.raises(ValueError, match=exactly(f"{ENV_VAR}: {to_operators(expected)}")) as info:
                KeyRing.from_env()
            assert_no_secret(str(info.value) + repr(info.value), secrets)
            return
        ring = KeyRing.from_env()
    assert ring is not None
    assert ring.kids == expected.kids
    assert_no_secret(repr(ring), secrets)


@SETTINGS
@given(passphrases, st.sampled_from(["\udcff", "\udc80", "\udce9"]), st.integers(0, 31))
def test_a_passphrase_that_is_not_text_is_refused_with_a_clear_message(
    passphrase: str, undecodable: str, at: int
) -> None:
    """Not UTF-8 bytes reach Python as lone surrogates (os.environ's surrogateescape)."""
    secret = passphrase[:at] + undecodable + passphrase[at:]
    event(f"undecodable {undecodable!r}")
    with pytest.raises(ValueError, match=exactly("state key #0: the passphrase is not UTF-8 text")) as info:
        KeyRing.from_secrets([secret])
    assert type(info.value) is ValueError  # not a UnicodeEncodeError about one of its characters
    assert_no_secret(repr(info.value), [secret, passphrase])


# ------------------------------------------------------------------------------------ the file


@SETTINGS
@given(key_file_texts(), st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-16", "cp1252"]))
def test_a_key_file_gives_exactly_the_keys_written(written: tuple[str, list[str]], encoding: str) -> None:
    text, secrets = written
    try:
        content = text.encode(encoding)
    except UnicodeEncodeError:
        encoding, content = "utf-8", text.encode()
    try:
        read_back: str | None = content.decode("utf-8")
    except UnicodeDecodeError:
        read_back = None
    event(f"encoding: {encoding}, {'is' if read_back is not None else 'not'} UTF-8")
    expected = expected_from_file(secrets)
    with a_key_file(content) as path:
        key_file = attempt(lambda: KeyFile(path))
    if isinstance(key_file, ValueError):
        message = str(key_file)
        assert_no_secret(message + repr(key_file), secrets)
        assert message.startswith(repr(str(path)) + ": "), message
        if read_back is None:
            event("refused: not UTF-8")
            assert message.endswith("not UTF-8 text")
        elif read_back == text:
            event("refused: a bad secret")
            assert isinstance(expected, ValueError), message
            assert message == f"{str(path)!r}: {to_operators(expected)}"
        return
    assert read_back is not None, "a file that is not UTF-8 was read"
    if read_back != text:  # another encoding that happens to be valid UTF-8 (é -> Ã©): other keys
        event("read: mojibake")
        return
    event(f"read: {len(key_file.ring)} keys")
    assert not isinstance(expected, ValueError), str(expected)
    assert key_file.ring.kids == expected.kids
    assert_no_secret(repr(key_file.ring) + repr(key_file), secrets)


# A key file's text, any text at all, or a key file's text with any text put somewhere in it.
any_texts = st.one_of(
    st.text(st.characters(codec=None), max_size=200),
    key_file_texts().map(lambda written: written[0]),
    st.builds(
        _spliced,
        key_file_texts().map(lambda written: written[0]),
        st.text(st.characters(codec=None), min_size=1, max_size=5),
        st.integers(0, 400),
    ),
)


@SETTINGS
@given(any_texts)
@example("\ufeff")
@example("# only a comment\r\n\r\n")
@example("correct horse battery staple\x85and the rest of it, long")  # NEL: inside one line
@example("correct horse battery staple\u2028and the rest of it, long")
@example("correct horse battery staple\x0cand the rest of it, long")
def test_parse_key_file_of_any_text_is_a_ring_or_a_value_error(text: str) -> None:
    lines = re.split(r"\r\n|\r|\n", text.removeprefix("\ufeff"))
    ring = attempt(lambda: parse_key_file(text))
    if isinstance(ring, ValueError):
        event("refused")
        assert type(ring) is ValueError
        assert str(ring).startswith("key file: ")
        assert_no_secret(str(ring) + repr(ring), lines)
        return
    event("a ring")
    # One key per line: a line separator that is no newline (U+2028, NEL, FF...) splits nothing.
    secrets = [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
    assert ring.kids == KeyRing.from_secrets(secrets).kids


@SETTINGS
@given(passphrases, st.sampled_from(["\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]))
def test_a_passphrase_with_an_odd_line_separator_is_the_same_key_in_the_file_and_the_variable(
    passphrase: str, separator: str
) -> None:
    """A key file is split at newlines only (\\n, \\r\\n, \\r), as a text editor shows its lines:
    the same passphrase keys the same ring wherever it is written."""
    middle = len(passphrase) // 2
    secret = passphrase[:middle] + separator + passphrase[middle:]
    event(f"separator {separator!r}")
    with key_variables(**{ENV_VAR: secret}):
        from_variable = KeyRing.from_env()
    assert from_variable is not None
    assert parse_key_file(f"# the key\n{secret}\n").kids == from_variable.kids


@SETTINGS
@given(
    st.one_of(
        st.binary(max_size=300),
        any_texts.map(lambda text: text.encode("utf-8", "surrogatepass")),
        st.builds(
            lambda text, noise, at: _spliced(text.encode(), noise, at),
            key_file_texts().map(lambda written: written[0]),
            st.binary(min_size=1, max_size=4),
            st.integers(0, 400),
        ),
    )
)
@example(b"\xef\xbb\xbf")
@example(b"\xff\xfe" + "a passphrase of more than 32 characters!".encode("utf-16-le"))
@example(b"\x00" * 40)
def test_any_bytes_in_the_key_file_are_a_ring_or_a_value_error_naming_the_file(content: bytes) -> None:
    with a_key_file(content) as path, key_variables(**{ENV_FILE_VAR: str(path)}):
        key_file = attempt(KeyFile.from_env)
    if isinstance(key_file, ValueError):
        event("refused")
        assert type(key_file) is ValueError
        assert str(key_file).startswith(f"{ENV_FILE_VAR}: {str(path)!r}: "), str(key_file)
        assert_no_secret(str(key_file), content.decode("utf-8", "replace").splitlines())
        return
    event("a ring")
    assert key_file is not None
    assert key_file.ring.kids == parse_key_file(content.decode("utf-8")).kids


@SETTINGS
@given(valid_secrets(), st.text(_in_a_line, max_size=10), st.sampled_from([" #", "\t#", "  # "]))
def test_a_comment_after_a_key_is_refused_without_showing_the_key(
    secrets: list[str], note: str, hash_mark: str
) -> None:
    at = len(secrets) - 1
    secrets[at] = secrets[at] + hash_mark + note
    with pytest.raises(ValueError, match=f"key {at + 1} is followed by a comment") as info:
        parse_key_file("\n".join(secrets))
    assert_no_secret(str(info.value), [s.split("#")[0] for s in secrets])


@SETTINGS
@given(key_file_texts())
def test_a_reload_installs_a_good_file_and_keeps_the_keys_over_a_bad_one(
    written: tuple[str, list[str]],
) -> None:
    text, secrets = written
    first = KeyRing.generate_secret()
    expected = expected_from_file(secrets)
    with a_key_file(f"{first}\n".encode()) as path:
        clock = FakeClock()
        key_file = KeyFile(path, check_interval=10.0, clock=clock)
        before = key_file.ring
        write_atomically(path, text.encode())
        if isinstance(expected, ValueError):
            event("reload: refused")
            with errors_logged() as records:
                clock.advance(10.0)
                assert key_file.poll() is before  # the working keys stay
            assert len(records) == 1
            message = records[0].getMessage()
            assert str(path) in message
            assert to_operators(expected) in message
            assert f"keeping the current keys {list(before.kids)}" in message
            assert_no_secret(message, [*secrets, first])
            with no_errors_logged("mcp_elicit.state"):  # the same bad file: said once
                clock.advance(10.0)
                assert key_file.poll() is before
                assert key_file.reload() is False
            assert key_file.reloads == 0
            return
        event("reload: installed")
        with no_errors_logged("mcp_elicit.state"):
            key_file.request_reload()  # what SIGHUP does
            assert key_file.poll().kids == expected.kids
        assert key_file.reloads == 1
        assert key_file.reload() is False  # nothing changed since


# ------------------------------------------------------------------------------------ odd files


def _unblock_after(path: Path, seconds: float) -> threading.Timer:
    """Opens the FIFO for writing after ``seconds``, so that a reader stuck on it returns."""

    def open_and_close() -> None:
        with suppress(OSError):  # no reader left: nothing to unblock
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    timer = threading.Timer(seconds, open_and_close)
    timer.start()
    return timer


def test_a_fifo_in_place_of_the_key_file_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "state-keys"
    os.mkfifo(path)
    timer = _unblock_after(path, 5.0)
    started = time.monotonic()
    expected = f"cannot read the state key file {str(path)!r}: not a regular file"
    try:
        with pytest.raises(ValueError, match=exactly(expected)):
            KeyFile(path)
    finally:
        timer.cancel()
        timer.join()
    assert time.monotonic() - started < 4.0, "reading the key file waited for a writer"


def test_a_fifo_replacing_a_working_key_file_keeps_the_keys_and_does_not_block(tmp_path: Path) -> None:
    path = tmp_path / "state-keys"
    path.write_text(KeyRing.generate_secret() + "\n")
    key_file = KeyFile(path, check_interval=0.0)
    before = key_file.ring
    path.unlink()
    os.mkfifo(path)
    timer = _unblock_after(path, 5.0)
    started = time.monotonic()
    try:
        with errors_logged() as records:
            assert key_file.poll() is before
    finally:
        timer.cancel()
        timer.join()
    assert time.monotonic() - started < 4.0, "a seal waited for a writer to the key file"
    assert "not a regular file; keeping the current keys" in records[0].getMessage()


@pytest.mark.parametrize(
    "place",
    ["missing", "a directory", "a dangling link", "a link loop", "under a file", "a device", "mode 000"],
)
def test_whatever_is_in_place_of_the_key_file_is_a_clear_error(tmp_path: Path, place: str) -> None:
    path = tmp_path / "state-keys"
    if place == "a directory":
        path.mkdir()
    elif place == "a dangling link":
        path.symlink_to(tmp_path / "nowhere")
    elif place == "a link loop":
        path.symlink_to(path)
    elif place == "under a file":
        (tmp_path / "file").write_text("x")
        path = tmp_path / "file" / "state-keys"
    elif place == "a device":
        path.symlink_to("/dev/zero")  # endless: must not be read to the end
    elif place == "mode 000":
        path.write_text(KeyRing.generate_secret() + "\n")
        path.chmod(0)
    with key_variables(**{ENV_FILE_VAR: str(path)}):
        if place == "mode 000" and os.geteuid() == 0:  # root reads it anyway
            assert KeyFile.from_env() is not None
            return
        prefix = f"{ENV_FILE_VAR}: cannot read the state key file {str(path)!r}: "
        with pytest.raises(ValueError, match=f"^{re.escape(prefix)}") as info:
            KeyFile.from_env()
    message = str(info.value)
    reason = {"a device": "not a regular file", "mode 000": "Permission denied"}.get(place)
    assert reason is None or message.endswith(reason), message


def _file_of(size: int, last_line: str) -> bytes:
    """``size`` bytes: comment lines, then ``last_line`` and a newline."""
    tail = f"{last_line}\n".encode()
    whole, rest = divmod(size - len(tail), 1024)
    comments = b"#" * 1023 + b"\n"
    return comments * whole + (b"#" * (rest - 1) + b"\n" if rest else b"") + tail


@pytest.mark.parametrize("size", [MAX_KEY_FILE_BYTES - 1, MAX_KEY_FILE_BYTES])
def test_a_key_file_up_to_the_limit_is_read_whole(tmp_path: Path, size: int) -> None:
    secret = KeyRing.generate_secret()
    content = _file_of(size, secret)
    assert len(content) == size
    path = tmp_path / "state-keys"
    path.write_bytes(content)
    path.chmod(0o600)
    assert KeyFile(path).ring.kids == KeyRing.from_secrets([secret]).kids


@pytest.mark.parametrize("last_line", ["a key after the limit", "a passphrase across the limit"])
def test_a_key_file_over_the_limit_is_refused_not_cut(tmp_path: Path, last_line: str) -> None:
    """Read up to the limit, the last key would be missing, or worse, a passphrase cut short would
    silently be another key."""
    if last_line == "a key after the limit":
        content = _file_of(MAX_KEY_FILE_BYTES + 50, KeyRing.generate_secret())
    else:
        content = (string.ascii_letters * (MAX_KEY_FILE_BYTES // 52 + 2)).encode() + b"\n"
    path = tmp_path / "state-keys"
    path.write_bytes(content)
    path.chmod(0o600)
    expected = f"{str(path)!r}: larger than {MAX_KEY_FILE_BYTES} bytes, which no key file is"
    with pytest.raises(ValueError, match=exactly(expected)):
        KeyFile(path)
    # Over a working file, while running: the keys stay and the log says why.
    path.write_text(KeyRing.generate_secret() + "\n")
    key_file = KeyFile(path, check_interval=0.0)
    before = key_file.ring
    write_atomically(path, content)
    with errors_logged() as records:
        assert key_file.poll() is before
    assert expected in records[0].getMessage()


@pytest.mark.parametrize(("mode", "warned"), [(0o600, False), (0o400, False), (0o640, True), (0o644, True)])
def test_a_key_file_readable_by_others_works_with_a_warning(mode: int, warned: bool) -> None:
    secret = KeyRing.generate_secret()
    with (
        a_key_file(f"{secret}\n".encode(), mode) as path,
        mock.patch.object(logging.getLogger("mcp_elicit.state"), "warning") as warning,
    ):
        assert KeyFile(path).ring.kids == KeyRing.from_secrets([secret]).kids
    assert warning.called is warned
    if warned:
        assert "chmod 600" in warning.call_args.args[0]


# ------------------------------------------------------------------------------------ the vault


def _vault_key_ids(folder: str) -> tuple[str, ...]:
    """The key ids of a vault made without ``keys=`` (it reads the environment)."""
    vault = Vault.sqlite(Path(folder) / "vault.db")  # connects on first use: no I/O here
    return vault.key_ids


@SETTINGS
@given(st.one_of(secret_lists().map(lambda secrets: ",".join(secrets).encode()), st.binary(max_size=80)))
def test_the_vault_variable_gives_exactly_the_keys_written_or_an_error_naming_it(raw: bytes) -> None:
    raw = raw.replace(b"\x00", b"")
    value = os.fsdecode(raw)
    items = _env_items(value)
    with key_variables(**{VAULT_KEYS_ENV: raw}), tempfile.TemporaryDirectory() as folder:
        if not value.strip():
            event("vault: blank, so an ephemeral key")
            with mock.patch.object(logging.getLogger("mcp_elicit.connect.vault"), "warning") as warning:
                assert len(_vault_key_ids(folder)) == 1
            assert VAULT_KEYS_ENV in warning.call_args.args[0]
            return
        key_ids = attempt(lambda: _vault_key_ids(folder))
    if isinstance(key_ids, ValueError):
        event("vault: refused")
        assert type(key_ids) is ValueError
        message = str(key_ids)
        # Vault keys are called vault keys (KeyRing's own words say "state key").
        assert re.match(rf"{VAULT_KEYS_ENV}: (vault key #\d+: |no vault keys given)", message), message
        assert_no_secret(message + repr(key_ids), items)
        return
    event("vault: a ring")
    ring = KeyRing.from_secrets(items)
    assert key_ids == ring.kids
    assert VaultKeys(ring).kids == ring.kids
    assert_no_secret(repr(VaultKeys(ring)), items)


@SETTINGS
@given(key_file_texts())
def test_the_vault_reads_the_state_key_file_like_the_server(written: tuple[str, list[str]]) -> None:
    text, secrets = written
    expected = expected_from_file(secrets)
    with (
        a_key_file(text.encode()) as path,
        key_variables(**{ENV_FILE_VAR: str(path)}),
        tempfile.TemporaryDirectory() as folder,
    ):
        if isinstance(expected, ValueError):
            event("vault file: refused")
            message = f"{ENV_FILE_VAR}: {str(path)!r}: {to_operators(expected)}"
            with pytest.raises(ValueError, match=exactly(message)):
                _vault_key_ids(folder)
            assert_no_secret(message, secrets)
            return
        event("vault file: a ring")
        assert _vault_key_ids(folder) == expected.kids


@SETTINGS
@given(secret_lists())
def test_vault_keys_from_secrets_are_the_rings(secrets: list[str]) -> None:
    expected = expected_ring(secrets)
    if isinstance(expected, ValueError):
        with pytest.raises(ValueError, match=exactly(vault_key_wording(str(expected)))):
            ring_from(secrets)
        assert_no_secret(str(expected), secrets)
        return
    keys = VaultKeys(ring_from(secrets))
    assert keys.kids == expected.kids
    assert keys.sealing_kid == expected.sealing_kid
    assert_no_secret(repr(keys), secrets)
