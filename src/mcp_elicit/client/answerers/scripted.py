"""Answers given in advance, for headless runs and CI.

A script is either

* an object keyed by the ``inputRequests`` key of each question, whose values are an
  answer (used every time that key is asked) or a list of answers (used in order, one
  per time the key is asked), or
* a list of answers, used in order whatever the keys.

Each answer is ``{"action": "accept", "content": {...}}``, ``{"action": "decline"}`` or
``{"action": "cancel"}`` (a URL accept has no ``content``; a form accept without
``content`` means ``{}``). The same shapes load from a JSON file with
:meth:`ScriptedAnswerer.from_file`::

    {
      "contact": {"action": "accept", "content": {"name": "Ada", "email": "ada@example.com"}},
      "connect": {"action": "decline"}
    }

The keys are those the server gives its questions (``ctx.elicit(..., key="contact")``); a
question asked without one gets a key made from its text, such as ``elicit-0939815311cd``.
A script that misses a key says which keys the round asked, each with its message.

A scripted answerer never waits and never guesses: a missing answer raises
:class:`~mcp_elicit.client.answerers.errors.ScriptedAnswerMissing`, an accept whose
content does not fit the form raises
:class:`~mcp_elicit.client.answerers.errors.ScriptedAnswerInvalid` with one message per
field, and a malformed script raises
:class:`~mcp_elicit.client.answerers.errors.ScriptFileError` when it is loaded, naming the
file and the place in it. URL questions are answered from the script too; nothing is
ever opened.
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple, cast

from mcp_elicit.client.answerers.auto import MODES, check_modes
from mcp_elicit.client.answerers.errors import (
    ScriptedAnswerInvalid,
    ScriptedAnswerMissing,
    ScriptError,
    ScriptExhausted,
    ScriptFileError,
)
from mcp_elicit.client.questions import Action, Answer, FormQuestion, ServerIdentity, UrlQuestion
from mcp_elicit.client.text import clean
from mcp_elicit.wire.legacy import LEGACY_VERSIONS

__all__ = ["MAX_SCRIPT_BYTES", "ScriptedAnswerer"]

#: Largest script file :meth:`ScriptedAnswerer.from_file` reads.
MAX_SCRIPT_BYTES = 16 * 1024 * 1024

_ACTIONS = ("accept", "decline", "cancel")
_SHAPE_HINT = (
    "a script is a JSON object keyed by input request key (each value an answer or a list "
    "of answers) or a JSON array of answers; an answer is "
    '{"action": "accept", "content": {...}}, {"action": "decline"} or {"action": "cancel"}'
)


_MESSAGE_SHOWN = 80  # characters of a question's message in an error


class _Entry(NamedTuple):
    action: Action
    content: dict[str, Any] | None
    where: str  # where the entry is in the script, for messages


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return type(value).__name__


def _parse_entry(source: str, value: object, where: str) -> _Entry:
    if isinstance(value, Answer):
        given = value.content
        if value.action not in _ACTIONS:
            raise ScriptFileError(
                source, f"{where}: action must be one of {', '.join(_ACTIONS)}, got {value.action!r}"
            )
        if given is not None and not isinstance(given, dict):
            raise ScriptFileError(source, f"{where}: content must be an object, got {_kind(given)}")
        if given is not None and value.action != "accept":
            raise ScriptFileError(source, f"{where}: only an accept carries content")
        return _Entry(value.action, dict(given) if given is not None else None, where)
    if not isinstance(value, Mapping):
        raise ScriptFileError(
            source, f"{where}: an answer must be an object, got {_kind(value)}; {_SHAPE_HINT}"
        )
    unknown = sorted(str(k) for k in value if k not in ("action", "content"))
    if unknown:
        raise ScriptFileError(
            source,
            f"{where}: unknown keys {unknown} in an answer (only 'action' and 'content'); {_SHAPE_HINT}",
        )
    if "action" not in value:
        raise ScriptFileError(source, f"{where}: the answer has no 'action'; {_SHAPE_HINT}")
    action = value["action"]
    if action not in _ACTIONS:
        shown = repr(action) if isinstance(action, str) else _kind(action)
        raise ScriptFileError(source, f"{where}: action must be one of {', '.join(_ACTIONS)}, got {shown}")
    content: dict[str, Any] | None = None
    if "content" in value:
        raw = value["content"]
        if action != "accept":
            raise ScriptFileError(source, f"{where}: only an accept carries content (this is a {action})")
        if not isinstance(raw, Mapping):
            raise ScriptFileError(
                source, f"{where}: content must be an object of field values, got {_kind(raw)}"
            )
        bad = [k for k in raw if not isinstance(k, str)]
        if bad:
            raise ScriptFileError(source, f"{where}: content keys must be field names (text), got {bad[0]!r}")
        content = dict(raw)
    return _Entry(cast(Action, action), content, where)


def _parse_list(source: str, values: Sequence[object], where: str) -> list[_Entry]:
    return [_parse_entry(source, v, f"{where}[{i}]") for i, v in enumerate(values)]


class ScriptedAnswerer:
    """Answers questions from a script: no person, no terminal, no waiting.

    ``script`` is a mapping keyed by ``inputRequests`` key (values: an answer, or a list
    of answers used in order) or a sequence of answers used in order; answers are dicts
    as in the module docstring or :class:`~mcp_elicit.client.questions.Answer` objects.
    ``modes`` is what the client declares (default both). ``source`` names the script
    in error messages.

    A form accept is checked with :func:`mcp_elicit.schema.validate_answer` and sent with
    the form's defaults applied. If the engine still re-asks a question (its ``errors``
    is set), that is reported as :class:`ScriptedAnswerInvalid` instead of answering
    again, so a run can never loop.
    """

    def __init__(
        self,
        script: Mapping[str, object] | Sequence[object],
        *,
        modes: Iterable[str] = MODES,
        source: str = "<script>",
    ) -> None:
        self._modes = check_modes(modes)
        self._source = source
        self._keyed: dict[str, list[_Entry]] | None = None
        self._repeat: set[str] = set()  # keys whose single answer is used every time
        self._ordered: list[_Entry] | None = None
        self._used: dict[str, int] = {}
        self._next = 0
        self._round: list[tuple[str, str]] = []  # the questions of the round being answered
        self._answering = 0  # how many of them are not answered yet
        if isinstance(script, Mapping):
            keyed: dict[str, list[_Entry]] = {}
            for key, value in script.items():
                if not isinstance(key, str):
                    raise ScriptFileError(source, f"keys must be input request keys (text), got {key!r}")
                where = json.dumps(key, ensure_ascii=True)
                if isinstance(value, list | tuple):
                    if not value:
                        raise ScriptFileError(source, f"{where}: an empty list of answers")
                    keyed[key] = _parse_list(source, value, where)
                else:
                    keyed[key] = [_parse_entry(source, value, where)]
                    self._repeat.add(key)
            self._keyed = keyed
        elif isinstance(script, Sequence) and not isinstance(script, str | bytes):
            self._ordered = _parse_list(source, script, "")
        else:
            raise ScriptFileError(source, f"the script is {_kind(script)}; {_SHAPE_HINT}")

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, modes: Iterable[str] = MODES) -> ScriptedAnswerer:
        """Load a JSON script; any problem raises :class:`ScriptFileError` naming ``path``."""
        source = os.fspath(path)
        try:
            with open(source, "rb") as f:
                data = f.read(MAX_SCRIPT_BYTES + 1)
        except OSError as exc:
            raise ScriptFileError(source, f"cannot read the script file: {exc.strerror or exc}") from exc
        if len(data) > MAX_SCRIPT_BYTES:
            raise ScriptFileError(source, f"the script file is larger than {MAX_SCRIPT_BYTES} bytes")
        body = data.removeprefix(codecs.BOM_UTF8)  # a byte-order mark (Notepad's) is not JSON
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            at = exc.start + len(data) - len(body)  # counted from the start of the file
            raise ScriptFileError(source, f"the script file is not UTF-8 text (byte {at})") from exc
        try:
            parsed = json.loads(
                text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants, parse_int=_integer
            )
        except json.JSONDecodeError as exc:
            raise ScriptFileError(
                source, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            ) from exc
        except ValueError as exc:
            raise ScriptFileError(source, f"not valid JSON: {exc}") from exc
        except RecursionError as exc:  # the decoder recurses once per level
            raise ScriptFileError(source, "the script is nested too deeply to read") from exc
        if not isinstance(parsed, dict | list):
            raise ScriptFileError(source, f"the script file holds {_kind(parsed)}; {_SHAPE_HINT}")
        return cls(parsed, modes=modes, source=source)

    @property
    def modes(self) -> frozenset[str]:
        """The modes given to the constructor (both by default)."""
        return self._modes

    @property
    def source(self) -> str:
        """What names the script in error messages (the file path for :meth:`from_file`)."""
        return self._source

    def unused(self) -> list[str]:
        """Keys (keyed script) or positions (``"[3]"``, list script) never used yet."""
        if self._keyed is not None:
            return [key for key in self._keyed if key not in self._used]
        assert self._ordered is not None
        return [entry.where for entry in self._ordered[self._next :]]

    def _take(self, key: str, *, keyless: bool = False) -> _Entry:
        if self._ordered is not None:
            if self._next >= len(self._ordered):
                raise ScriptExhausted(
                    self._source, key, f"all {len(self._ordered)} answers of the list were used"
                )
            entry = self._ordered[self._next]
            self._next += 1
            return entry
        assert self._keyed is not None
        entries = self._keyed.get(key)
        if entries is None:
            known = ", ".join(json.dumps(k) for k in list(self._keyed)[:10]) or "none"
            detail = f"the script has answers for: {known}"
            if keyless:
                detail += (
                    "; a 2025-11-25 server's questions carry no keys (each is named by its request "
                    "id): answer them with a list, in the order they are asked"
                )
            raise ScriptedAnswerMissing(self._source, key, detail, asked=self._round)
        used = self._used.get(key, 0)
        self._used[key] = used + 1
        if key in self._repeat:
            return entries[0]
        if used >= len(entries):
            raise ScriptExhausted(
                self._source, key, f"it was asked {used + 1} times and the script has {len(entries)} answers"
            )
        return entries[used]

    async def _take_asked(self, key: str, mode: str, message: str, server: ServerIdentity) -> _Entry:
        """:meth:`_take`, once the other questions of the round have been seen.

        The engine starts all the questions of a round together; after one turn of the event
        loop each of them has arrived here, so that an error for a key the script lacks can
        list every key the round asked (a round is the questions being answered at once)."""
        import asyncio  # already loaded: an answerer is only ever called from a running loop

        if not self._answering:
            self._round = []
        self._answering += 1
        shown = clean(message, single_line=True, max_length=_MESSAGE_SHOWN)
        self._round.append((key, f"{mode}: “{shown}”"))
        try:
            await asyncio.sleep(0)
            return self._take(key, keyless=server.protocol_version in LEGACY_VERSIONS)
        finally:
            self._answering -= 1

    def _check_mode(self, mode: str, key: str) -> None:
        if mode not in self._modes:
            raise ScriptError(
                self._source, f"input request {key!r} is a {mode} question, but {mode} mode is not enabled"
            )

    async def answer_form(self, question: FormQuestion) -> Answer:
        """The script's next answer for ``question.key``, an accept checked against the form.

        Raises :class:`ScriptedAnswerMissing` (no answer left), :class:`ScriptedAnswerInvalid`
        (the content does not fit, or the engine re-asks the question) or :class:`ScriptError`
        (form mode not enabled, or the schema cannot be checked)."""
        self._check_mode("form", question.key)
        if question.errors:
            raise ScriptedAnswerInvalid(self._source, question.key, question.errors)
        entry = await self._take_asked(question.key, "form", question.message, question.server)
        if entry.action != "accept":
            return Answer(entry.action)
        from mcp_elicit.schema import AnswerInvalid, SchemaError, validate_answer

        try:
            given = entry.content if entry.content is not None else {}
            content = validate_answer(question.schema, given, tolerant=True)
        except AnswerInvalid as exc:
            raise ScriptedAnswerInvalid(self._source, question.key, exc.errors, where=entry.where) from exc
        except SchemaError as exc:
            raise ScriptError(
                self._source, f"input request {question.key!r}: cannot check the answer: {exc}"
            ) from exc
        return Answer("accept", content)

    async def answer_url(self, question: UrlQuestion) -> Answer:
        """The script's next answer for ``question.key``; nothing is opened.

        Raises :class:`ScriptedAnswerMissing` (no answer left), :class:`ScriptedAnswerInvalid`
        (the answer has content) or :class:`ScriptError` (URL mode not enabled)."""
        self._check_mode("url", question.key)
        entry = await self._take_asked(question.key, "link", question.message, question.server)
        if entry.content is not None:
            raise ScriptedAnswerInvalid(
                self._source,
                question.key,
                {"": "a URL question is answered without content (just the action)"},
                where=entry.where,
            )
        return Answer(entry.action)

    def __repr__(self) -> str:
        return f"ScriptedAnswerer(source={self._source!r}, modes={sorted(self._modes)!r})"


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the key {json.dumps(key)} appears twice in one object")
        result[key] = value
    return result


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _integer(digits: str) -> int:
    """An integer of the script; one too long for ``int`` is named in the words of a script
    (Python's own message advises a call to ``sys.set_int_max_str_digits()``)."""
    try:
        return int(digits)
    except ValueError:
        raise ValueError(f"an integer of {len(digits.lstrip('-'))} digits is too long to read") from None
