"""ScriptedAnswerer: answers from a dict, a list or a JSON file; clear errors, never a hang."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit.client.answerers import (
    AnswererError,
    ScriptedAnswerer,
    ScriptedAnswerInvalid,
    ScriptedAnswerMissing,
    ScriptError,
    ScriptExhausted,
    ScriptFileError,
)
from mcp_elicit.client.errors import LocalError
from mcp_elicit.client.questions import Answer, Answerer, ServerIdentity

from ._harness import form, url_question

CONTACT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 18},
        "news": {"type": "boolean", "default": False},
    },
    "required": ["name", "email"],
}
GOOD = {"action": "accept", "content": {"name": "Ada", "email": "ada@example.com"}}


def test_is_an_answerer() -> None:
    scripted = ScriptedAnswerer({})
    assert isinstance(scripted, Answerer)
    assert scripted.modes == frozenset({"form", "url"})
    assert ScriptedAnswerer({}, modes={"form"}).modes == frozenset({"form"})
    assert ScriptedAnswerer([], modes=()).modes == frozenset()


def test_unknown_modes_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown elicitation modes"):
        ScriptedAnswerer({}, modes={"form", "sampling"})
    with pytest.raises(TypeError, match="not a string"):
        ScriptedAnswerer({}, modes="form")


async def test_keyed_answers_validated_with_defaults_applied() -> None:
    scripted = ScriptedAnswerer(
        {"contact": GOOD, "later": {"action": "decline"}, "nope": {"action": "cancel"}}
    )
    answer = await scripted.answer_form(form(CONTACT, key="contact"))
    assert answer == Answer("accept", {"name": "Ada", "email": "ada@example.com", "news": False})
    assert await scripted.answer_form(form(CONTACT, key="later")) == Answer("decline")
    assert await scripted.answer_form(form(CONTACT, key="nope")) == Answer("cancel")
    # A single keyed answer is used every time that key is asked.
    assert (await scripted.answer_form(form(CONTACT, key="contact"))).action == "accept"
    assert scripted.unused() == []


async def test_keyed_list_is_used_in_order_then_runs_out() -> None:
    scripted = ScriptedAnswerer({"c": [{"action": "decline"}, GOOD]})
    assert await scripted.answer_form(form(CONTACT, key="c")) == Answer("decline")
    assert (await scripted.answer_form(form(CONTACT, key="c"))).action == "accept"
    with pytest.raises(ScriptExhausted, match="asked 3 times and the script has 2 answers"):
        await scripted.answer_form(form(CONTACT, key="c"))


async def test_list_is_used_in_order_whatever_the_keys() -> None:
    scripted = ScriptedAnswerer([GOOD, {"action": "accept"}, {"action": "decline"}])
    assert (await scripted.answer_form(form(CONTACT, key="a"))).action == "accept"
    assert scripted.unused() == ["[1]", "[2]"]
    assert await scripted.answer_url(url_question("https://example.com/x", key="b")) == Answer("accept")
    assert await scripted.answer_url(url_question("https://example.com/y", key="c")) == Answer("decline")
    with pytest.raises(ScriptExhausted, match="all 3 answers of the list were used"):
        await scripted.answer_form(form(CONTACT, key="d"))


async def test_answer_objects_are_accepted_too() -> None:
    scripted = ScriptedAnswerer({"c": Answer("accept", {"name": "Ada", "email": "ada@example.com"})})
    assert (await scripted.answer_form(form(CONTACT, key="c"))).action == "accept"


async def test_missing_answer_names_the_key_and_what_exists() -> None:
    scripted = ScriptedAnswerer({"contact": GOOD})
    with pytest.raises(ScriptedAnswerMissing) as caught:
        await scripted.answer_form(form(CONTACT, key="billing"))
    assert caught.value.key == "billing"
    assert str(caught.value) == (
        "<script>: no scripted answer for input request 'billing' (the script has answers for: \"contact\"); "
        'the round asked for "billing" (form: “Please fill in the form.”)'
    )
    assert caught.value.asked == [("billing", "form: “Please fill in the form.”")]
    assert isinstance(caught.value, ScriptError | AnswererError | LocalError)


async def test_a_keyed_script_for_a_2025_11_25_server_is_told_to_be_a_list() -> None:
    """A 2025-11-25 question has no key (the client names it by its request id): a keyed
    script cannot match it, and the error says what works instead."""
    legacy = ServerIdentity(name="files", reached_via="python server.py", protocol_version="2025-11-25")
    scripted = ScriptedAnswerer({"contact": GOOD})
    with pytest.raises(ScriptedAnswerMissing) as caught:
        await scripted.answer_form(form(CONTACT, key="1", server=legacy))
    assert "a 2025-11-25 server's questions carry no keys (each is named by its request id): " in str(
        caught.value
    )
    assert "answer them with a list, in the order they are asked" in str(caught.value)
    answered = await ScriptedAnswerer([GOOD]).answer_form(form(CONTACT, key="1", server=legacy))
    assert answered.action == "accept"


async def test_a_missing_key_lists_every_key_the_round_asked_with_its_message() -> None:
    """The engine asks a round's questions together: the error names all of them, so that a file
    keyed by guesses can be fixed (generated keys cannot be guessed)."""
    scripted = ScriptedAnswerer({"details": GOOD, "elicit-5be1c0ffee42": {"action": "decline"}})
    long = "Confirm\x1b[31m the \u202etrip\n" + "and everything else " * 10
    with pytest.raises(ScriptedAnswerMissing) as caught:
        await asyncio.gather(
            scripted.answer_form(form(CONTACT, "Who are you?", key="elicit-5be1c0ffee42")),
            scripted.answer_form(form(CONTACT, long, key="elicit-0939815311cd")),
            scripted.answer_url(url_question("https://example.com/x", "Sign in.", key="url-00aa11bb22cc")),
        )
    assert caught.value.key == "elicit-0939815311cd"
    assert [key for key, _ in caught.value.asked] == [
        "elicit-5be1c0ffee42",
        "elicit-0939815311cd",
        "url-00aa11bb22cc",
    ]
    cut = "Confirm the trip and everything else and everything else and everything else an…"  # 80
    assert str(caught.value) == (
        "<script>: no scripted answer for input request 'elicit-0939815311cd' (the script has answers for: "
        '"details", "elicit-5be1c0ffee42"); the round asked for '
        '"elicit-5be1c0ffee42" (form: “Who are you?”), '
        f'"elicit-0939815311cd" (form: “{cut}”), "url-00aa11bb22cc" (link: “Sign in.”); a key like '
        "elicit-5be1c0ffee42 is made from the question itself and changes when its text does: a server sets "
        'a stable one with ctx.elicit(..., key="...")'
    )


async def test_the_round_listed_is_the_one_being_answered() -> None:
    scripted = ScriptedAnswerer({"first": GOOD})
    await scripted.answer_form(form(CONTACT, "First?", key="first"))
    with pytest.raises(ScriptedAnswerMissing) as caught:
        await scripted.answer_form(form(CONTACT, "Second?", key="second"))
    assert caught.value.asked == [("second", "form: “Second?”")]
    assert "generated" not in str(caught.value)
    assert "ctx.elicit" not in str(caught.value)  # no generated key here: no word about them


async def test_invalid_content_reports_every_field() -> None:
    scripted = ScriptedAnswerer({"c": {"action": "accept", "content": {"email": "nope", "age": 12, "x": 1}}})
    with pytest.raises(ScriptedAnswerInvalid) as caught:
        await scripted.answer_form(form(CONTACT, key="c"))
    errors = caught.value.errors
    assert set(errors) == {"name", "email", "age", "x"}
    assert errors["name"] == "this field is required"
    assert errors["age"] == "must be at least 18 (got 12)"
    assert "must be an email address" in errors["email"]
    message = str(caught.value)
    assert message.startswith(
        "<script>: the scripted answer for input request 'c' (at \"c\" in the script) is invalid:"
    )
    assert "age: must be at least 18 (got 12)" in message


async def test_accept_without_content_is_an_empty_answer() -> None:
    scripted = ScriptedAnswerer({"c": {"action": "accept"}, "ok": {"action": "accept"}})
    with pytest.raises(ScriptedAnswerInvalid, match="name: this field is required"):
        await scripted.answer_form(form(CONTACT, key="c"))
    empty = {"type": "object", "properties": {}}
    assert await scripted.answer_form(form(empty, key="ok")) == Answer("accept", {})


async def test_a_reasked_question_is_an_error_not_a_loop() -> None:
    scripted = ScriptedAnswerer({"c": GOOD})
    with pytest.raises(ScriptedAnswerInvalid, match="email: rejected by the server"):
        await scripted.answer_form(form(CONTACT, key="c", errors={"email": "rejected by the server"}))


async def test_url_questions_are_answered_without_opening_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    import webbrowser

    def never(*args: Any, **kwargs: Any) -> bool:
        raise AssertionError("a scripted answerer opened a browser")

    monkeypatch.setattr(webbrowser, "open", never)
    scripted = ScriptedAnswerer({"u": {"action": "accept"}, "v": {"action": "decline"}})
    assert await scripted.answer_url(url_question("javascript:alert(1)", key="u")) == Answer("accept")
    assert await scripted.answer_url(url_question("https://example.com/", key="v")) == Answer("decline")


async def test_url_accept_with_content_is_invalid() -> None:
    scripted = ScriptedAnswerer({"u": GOOD})
    with pytest.raises(ScriptedAnswerInvalid, match="answered without content"):
        await scripted.answer_url(url_question("https://example.com/", key="u"))


async def test_modes_not_enabled_are_errors() -> None:
    scripted = ScriptedAnswerer({"u": {"action": "accept"}}, modes={"form"})
    with pytest.raises(ScriptError, match="url mode is not enabled"):
        await scripted.answer_url(url_question("https://example.com/", key="u"))


def write(tmp_path: Path, text: str | bytes, name: str = "answers.json") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


async def test_from_file(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps({"contact": GOOD, "connect": {"action": "decline"}}))
    scripted = ScriptedAnswerer.from_file(path)
    assert scripted.source == str(path)
    assert (await scripted.answer_form(form(CONTACT, key="contact"))).action == "accept"
    assert await scripted.answer_url(url_question("https://example.com/", key="connect")) == Answer("decline")
    with pytest.raises(ScriptedAnswerMissing, match=str(path)):
        await scripted.answer_form(form(CONTACT, key="other"))


async def test_from_file_list_with_bom(tmp_path: Path) -> None:
    path = write(tmp_path, b"\xef\xbb\xbf" + json.dumps([{"action": "cancel"}]).encode())
    scripted = ScriptedAnswerer.from_file(path, modes={"form"})
    assert scripted.modes == frozenset({"form"})
    assert await scripted.answer_form(form(CONTACT)) == Answer("cancel")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
        ("", "not valid JSON: Expecting value at line 1 column 1"),
        ('"accept"', "the script file holds a string; a script is a JSON object keyed by input request key"),
        ("42", "the script file holds a number"),
        ('{"action": "decline"}', '"action": an answer must be an object, got a string'),
        ('{"k": {"action": "yes"}}', "\"k\": action must be one of accept, decline, cancel, got 'yes'"),
        ('{"k": {"content": {}}}', "\"k\": the answer has no 'action'"),
        ('{"k": {"action": "accept", "contents": {}}}', "\"k\": unknown keys ['contents'] in an answer"),
        (
            '{"k": {"action": "decline", "content": {}}}',
            '"k": only an accept carries content (this is a decline)',
        ),
        (
            '{"k": {"action": "accept", "content": [1]}}',
            '"k": content must be an object of field values, got an array',
        ),
        ('{"k": []}', '"k": an empty list of answers'),
        ('{"k": [{"action": "accept"}, 3]}', '"k"[1]: an answer must be an object, got a number'),
        ('[{"action": "accept"}, null]', "[1]: an answer must be an object, got null"),
        (
            '{"k": {"action": "decline"}, "k": {"action": "accept"}}',
            'the key "k" appears twice in one object',
        ),
        ('[{"action": "accept", "content": {"n": NaN}}]', "NaN is not a JSON number"),
    ],
)
def test_bad_files_name_the_file_and_the_problem(tmp_path: Path, text: str, problem: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScriptFileError) as caught:
        ScriptedAnswerer.from_file(path)
    assert caught.value.source == str(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert problem in str(caught.value)


def test_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, b'{"k": "\xff"}')
    with pytest.raises(ScriptFileError, match=r"not UTF-8 text \(byte 7\)"):
        ScriptedAnswerer.from_file(path)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(
        ScriptFileError, match="cannot read the script file: No such file or directory"
    ) as caught:
        ScriptedAnswerer.from_file(path)
    assert str(path) in str(caught.value)


def test_directory_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(ScriptFileError, match="cannot read the script file"):
        ScriptedAnswerer.from_file(tmp_path)


def test_bad_scripts_given_directly() -> None:
    with pytest.raises(ScriptFileError, match="<script>: the script is a string"):
        ScriptedAnswerer("accept")  # type: ignore[arg-type]
    with pytest.raises(ScriptFileError, match="keys must be input request keys"):
        ScriptedAnswerer({1: GOOD})  # type: ignore[dict-item]
    with pytest.raises(ScriptFileError, match=r"<script>: \[0\]: action must be one of"):
        ScriptedAnswerer([Answer("maybe")])  # type: ignore[arg-type]
    with pytest.raises(ScriptFileError, match="only an accept carries content"):
        ScriptedAnswerer([Answer("decline", {"a": 1})])
