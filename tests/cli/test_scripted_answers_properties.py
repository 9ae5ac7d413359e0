"""Property tests of the file given to ``call --answers``: whatever it holds, loading it is either
a :class:`ScriptFileError` naming the file and the place in it (the CLI prints it as its one error
line), or an answerer that answers exactly what the file says, each answer shown on the way
(:class:`ShowScriptedAnswers`, as the CLI wraps it)."""

from __future__ import annotations

import asyncio
import io
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from mcp_elicit.cli.scripted_answers import ShowScriptedAnswers
from mcp_elicit.client.answerers import AnswererError, ScriptedAnswerer
from mcp_elicit.client.answerers.errors import ScriptedAnswerMissing, ScriptExhausted, ScriptFileError
from mcp_elicit.client.answerers.scripted import MAX_SCRIPT_BYTES
from mcp_elicit.client.questions import Action, Answer, FormQuestion, ServerIdentity, UrlQuestion
from tests.cli.cli_support import cli, one_clear_line
from tests.strategies import json_values

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ACTIONS: tuple[Action, ...] = ("accept", "decline", "cancel")
SERVER = ServerIdentity("property server", "a test")
SAFE_URL = "https://example.com/connect?step=1"
T = TypeVar("T")


# ------------------------------------------------------------------------------------ strategies

field_names = st.from_regex(r"[A-Za-z_é][A-Za-z0-9_é-]{0,7}", fullmatch=True)  # what a form can name
# Field values: any text but NUL, which no form accepts (the answer check refuses it, and says so).
contents = st.dictionaries(
    field_names, st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=20), max_size=3
)
answers = st.one_of(
    st.sampled_from(ACTIONS).map(lambda action: {"action": action}),
    contents.map(lambda content: {"action": "accept", "content": content}),
)
# Keys as a server may send them: any text, lone surrogates included (JSON can escape them).
question_keys = st.text(st.characters(codec=None), max_size=12)
keyed_scripts = st.dictionaries(
    question_keys, st.one_of(answers, st.lists(answers, min_size=1, max_size=3)), max_size=4
)
listed_scripts = st.lists(answers, max_size=5)


@st.composite
def script_files(draw: st.DrawFn, scripts: st.SearchStrategy[Any]) -> tuple[Any, bytes]:
    """A script and the bytes of a file holding it: any JSON layout, maybe a BOM or CRLF."""
    script = draw(scripts)
    indent = draw(st.sampled_from([None, 0, 2, "\t"]))
    try:
        text = json.dumps(script, indent=indent, ensure_ascii=draw(st.booleans()))
        content = text.encode()
    except UnicodeEncodeError:  # a lone surrogate: only escaped JSON can hold it
        text = json.dumps(script, indent=indent)
        content = text.encode()
    if draw(st.booleans()):
        content = content.replace(b"\n", b"\r\n")  # only layout: JSON escapes newlines in strings
    if draw(st.booleans()):
        content = b"\xef\xbb\xbf" + content
    return script, content


def _spliced(content: bytes, noise: bytes, at: int) -> bytes:
    return content[:at] + noise + content[at:]


any_contents = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda value: json.dumps(value).encode()),
    script_files(st.one_of(keyed_scripts, listed_scripts)).map(lambda written: written[1]),
    st.builds(
        _spliced,
        script_files(keyed_scripts).map(lambda written: written[1]),
        st.binary(min_size=1, max_size=4),
        st.integers(0, 300),
    ),
)


# ------------------------------------------------------------------------------------ helpers


@contextmanager
def script_file(content: bytes) -> Iterator[str]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "answers.json"
        path.write_bytes(content)
        yield str(path)


def attempt(make: Callable[[], T]) -> T | ScriptFileError:
    """What ``make()`` returns, or the ScriptFileError it raises (anything else is not caught)."""
    try:
        return make()
    except ScriptFileError as exc:
        return exc


def load(path: str, out: io.StringIO) -> ShowScriptedAnswers | ScriptFileError:
    """The answerer ``call --answers PATH`` uses, or the error it reports."""
    return attempt(lambda: ShowScriptedAnswers(ScriptedAnswerer.from_file(path), out=out))


# What a refusal can say, one phrase per kind of problem the loader documents.
PROBLEMS = (
    "the script file is not UTF-8 text",
    "the script file is larger than",
    "not valid JSON",
    "the script is nested too deeply to read",
    "the script file holds",
    "an empty list of answers",
    "an answer must be an object",
    "unknown keys",
    "the answer has no 'action'",
    "action must be one of accept, decline, cancel",
    "only an accept carries content",
    "content must be an object",
)


def kind_of(problem: str) -> str:
    return next((phrase for phrase in PROBLEMS if phrase in problem), "something else")


def first_bad_byte(content: bytes) -> int | None:
    try:
        content.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return None


def string_form(content: dict[str, Any] | None) -> dict[str, Any]:
    """A form with an optional text field for each field of ``content``."""
    fields = content or {}
    return {"type": "object", "properties": {name: {"type": "string"} for name in fields}}


async def ask(answerer: ShowScriptedAnswers, key: str, entry: dict[str, Any], as_url: bool) -> Answer:
    """Asks ``key`` the way ``entry`` can be answered: a form for an accept with content, else a
    URL question or a form."""
    if "content" not in entry and as_url:
        return await answerer.answer_url(UrlQuestion(SERVER, key, "Open this page?", SAFE_URL))
    question = FormQuestion(SERVER, key, "Fill this in?", string_form(entry.get("content")))
    return await answerer.answer_form(question)


def expected(entry: dict[str, Any], as_url: bool) -> Answer:
    if entry["action"] != "accept" or ("content" not in entry and as_url):
        return Answer(entry["action"])
    return Answer("accept", entry.get("content", {}))


def shown_last(out: io.StringIO) -> str:
    return out.getvalue().rstrip("\n").rsplit("\n", 1)[-1]


# ------------------------------------------------------------------------------------ any content


@SETTINGS
@given(any_contents)
@example(b"")
@example(b"\xef\xbb\xbf")
@example(b"[" * 100_000)
@example(b'{"k": {"action": "accept"}, "k": {"action": "decline"}}')
@example(b"[NaN]")
@example(b"[1e400]")
@example(b"[" + b"9" * 5000 + b"]")
@example('[{"action": "accept"}]'.encode("utf-16"))
def test_any_content_loads_as_a_script_or_a_script_file_error_naming_the_file(content: bytes) -> None:
    with script_file(content) as path:
        loaded = load(path, io.StringIO())
    if isinstance(loaded, ScriptFileError):
        event(f"refused: {kind_of(loaded.problem)}")
        assert kind_of(loaded.problem) != "something else", loaded.problem
        assert isinstance(loaded, AnswererError)  # what the CLI turns into its error line
        assert loaded.source == path
        assert str(loaded) == f"{path}: {loaded.problem}"
        assert loaded.problem.strip()
        bad = first_bad_byte(content)
        if bad is not None:
            assert loaded.problem == f"the script file is not UTF-8 text (byte {bad})"
        return
    event(f"loaded: {type(json.loads(content.decode('utf-8-sig'))).__name__}")
    assert isinstance(json.loads(content.decode("utf-8-sig")), dict | list)
    assert loaded.modes == frozenset({"form", "url"})


def test_the_bad_byte_named_is_counted_from_the_start_of_the_file_even_after_a_bom() -> None:
    content = b'\xef\xbb\xbf{"k": "\xff"}'
    bad = content.index(b"\xff")  # 10
    with script_file(content) as path:
        loaded = load(path, io.StringIO())
    assert isinstance(loaded, ScriptFileError)
    assert loaded.problem == f"the script file is not UTF-8 text (byte {bad})"


def test_an_integer_too_long_to_read_is_named_without_python_advice() -> None:
    with script_file(b'{"k": {"action": "accept", "content": {"n": -' + b"9" * 5000 + b"}}}") as path:
        loaded = load(path, io.StringIO())
    assert isinstance(loaded, ScriptFileError)
    assert loaded.problem == "not valid JSON: an integer of 5000 digits is too long to read"


# ------------------------------------------------------------------------------------ good scripts


@SETTINGS
@given(script_files(keyed_scripts), st.data())
def test_a_keyed_script_answers_exactly_what_it_says(written: tuple[Any, bytes], data: st.DataObject) -> None:
    script, content = written
    out = io.StringIO()
    with script_file(content) as path:
        answerer = load(path, out)
    assert not isinstance(answerer, ScriptFileError), str(answerer)
    event(f"keys: {len(script)}")

    async def questions() -> None:
        for key, value in script.items():
            entries = value if isinstance(value, list) else [value, value]  # one answer: every time
            for entry in entries:
                as_url = data.draw(st.booleans())
                answer = await ask(answerer, key, entry, as_url)
                assert answer == expected(entry, as_url)
                fields = f" ({', '.join(answer.content)})" if answer.content else ""
                assert shown_last(out) == f"  answered from the script: {answer.action}{fields}"
            if isinstance(value, list):
                event("a list of answers, then exhausted")
                with pytest.raises(ScriptExhausted):
                    await ask(answerer, key, entries[0], as_url=False)
        missing = "not in the script"
        while missing in script:
            missing += "!"
        with pytest.raises(ScriptedAnswerMissing):
            await ask(answerer, missing, {"action": "cancel"}, as_url=True)

    asyncio.run(questions())


@SETTINGS
@given(script_files(listed_scripts), st.data())
def test_a_list_script_answers_exactly_what_it_says_in_order(
    written: tuple[Any, bytes], data: st.DataObject
) -> None:
    script, content = written
    out = io.StringIO()
    with script_file(content) as path:
        answerer = load(path, out)
    assert not isinstance(answerer, ScriptFileError), str(answerer)
    event(f"answers: {len(script)}")

    async def questions() -> None:
        for number, entry in enumerate(script):
            as_url = data.draw(st.booleans())
            key = data.draw(question_keys)
            assert await ask(answerer, key, entry, as_url) == expected(entry, as_url), number
        with pytest.raises(ScriptExhausted):
            await ask(answerer, "one more", {"action": "decline"}, as_url=True)

    asyncio.run(questions())


@SETTINGS
@given(
    st.sampled_from(ACTIONS),
    st.sampled_from(["javascript:alert(1)", "http://example.com/", "file:///etc/passwd"]),
)
def test_a_scripted_accept_of_an_address_that_must_not_be_opened_is_declined(
    action: Action, url: str
) -> None:
    out = io.StringIO()
    with script_file(json.dumps({"connect": {"action": action}}).encode()) as path:
        answerer = load(path, out)
    assert not isinstance(answerer, ScriptFileError)
    answer = asyncio.run(answerer.answer_url(UrlQuestion(SERVER, "connect", "Open?", url)))
    assert answer == Answer("decline" if action == "accept" else action)
    assert "refused: " in out.getvalue()


# ------------------------------------------------------------------------------------ bad answers


def _malformed_answers() -> st.SearchStrategy[tuple[object, str]]:
    """An answer the docs refuse, and what the refusal says."""
    return st.one_of(
        json_values.filter(lambda value: value not in ACTIONS).map(
            lambda action: ({"action": action}, "action must be one of accept, decline, cancel, got ")
        ),
        st.tuples(st.sampled_from(["decline", "cancel"]), contents).map(
            lambda pair: ({"action": pair[0], "content": pair[1]}, "only an accept carries content")
        ),
        json_values.filter(lambda value: not isinstance(value, dict)).map(
            lambda content: ({"action": "accept", "content": content}, "content must be an object")
        ),
        st.text(min_size=1, max_size=8)
        .filter(lambda name: name not in ("action", "content"))
        .map(lambda name: ({"action": "accept", name: 1}, "unknown keys")),
        st.just(({}, "the answer has no 'action'")),
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(),
            st.floats(allow_nan=False, allow_infinity=False),
            st.text(),
        ).map(lambda value: (value, "an answer must be an object")),
        st.just(([], "an empty list of answers")),
    )


@SETTINGS
@given(keyed_scripts, question_keys, _malformed_answers(), st.booleans())
def test_a_malformed_answer_is_refused_naming_where_it_is(
    script: dict[str, Any], key: str, malformed: tuple[object, str], in_a_list: bool
) -> None:
    bad, says = malformed
    where = json.dumps(key)
    if in_a_list and bad != []:
        bad, where = [{"action": "decline"}, bad], f"{where}[1]"
    script = {**{k: v for k, v in script.items() if k != key}, key: bad}
    event(says)
    with script_file(json.dumps(script).encode()) as path:
        refused = load(path, io.StringIO())
    assert isinstance(refused, ScriptFileError), "a malformed answer was loaded"
    assert refused.problem.startswith(f"{where}: {says}"), refused.problem


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (
            b'{"k": {"action": "accept"}, "k": {"action": "decline"}}',
            'not valid JSON: the key "k" appears twice',
        ),
        (b'[{"action": "accept", "content": {"n": NaN}}]', "not valid JSON: NaN is not a JSON number"),
        (b"[" * 100_000, "the script is nested too deeply to read"),
        (b'"accept"', "the script file holds a string; a script is a JSON object"),
        (b"", "not valid JSON: Expecting value at line 1 column 1"),
        ('{"k": {"action": "accept"}}'.encode("utf-16"), "the script file is not UTF-8 text (byte 0)"),
    ],
)
def test_what_each_kind_of_bad_file_is_told(content: bytes, problem: str) -> None:
    with script_file(content) as path:
        refused = load(path, io.StringIO())
    assert isinstance(refused, ScriptFileError)
    assert refused.problem.startswith(problem), refused.problem


# ------------------------------------------------------------------------------------ big, odd files


@pytest.mark.parametrize("extra", [0, 1])
def test_a_script_up_to_the_limit_is_read_and_a_larger_one_is_refused(tmp_path: Path, extra: int) -> None:
    script = b'{"k": {"action": "decline"}}'
    path = tmp_path / "answers.json"
    path.write_bytes(script + b" " * (MAX_SCRIPT_BYTES - len(script) + extra))
    loaded = load(str(path), io.StringIO())
    if extra:
        assert isinstance(loaded, ScriptFileError)
        assert loaded.problem == f"the script file is larger than {MAX_SCRIPT_BYTES} bytes"
        return
    assert not isinstance(loaded, ScriptFileError), str(loaded)
    answer = asyncio.run(loaded.answer_url(UrlQuestion(SERVER, "k", "Open?", SAFE_URL)))
    assert answer == Answer("decline")


@pytest.mark.parametrize("place", ["missing", "a directory", "under a file"])
def test_a_script_that_cannot_be_read_is_a_clear_error(tmp_path: Path, place: str) -> None:
    path = tmp_path / "answers.json"
    if place == "a directory":
        path.mkdir()
    elif place == "under a file":
        (tmp_path / "file").write_text("{}")
        path = tmp_path / "file" / "answers.json"
    refused = load(str(path), io.StringIO())
    assert isinstance(refused, ScriptFileError)
    reason = {"missing": "No such file or directory", "a directory": "Is a directory"}
    assert refused.problem == f"cannot read the script file: {reason.get(place, 'Not a directory')}"


@pytest.mark.parametrize(
    "content",
    [b'{"k": {"action": "maybe"}}', b"\xff\xfe{}", b"[" * 100_000, b"not json", b'{"k": []}'],
)
def test_the_command_says_what_is_wrong_with_the_file_in_one_line(tmp_path: Path, content: bytes) -> None:
    """The file is read before the server is started: a bad one is one line, exit status 2."""
    path = tmp_path / "answers.json"
    path.write_bytes(content)
    done = cli("call", f"{sys.executable} -c pass", "some_tool", "--answers", str(path))
    assert done.returncode == 2
    line = one_clear_line(done)
    with script_file(content) as again:
        refused = load(again, io.StringIO())
    assert isinstance(refused, ScriptFileError)
    assert line == f"mcp-elicit: {path}: {refused.problem}"
