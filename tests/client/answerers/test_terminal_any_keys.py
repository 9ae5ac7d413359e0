"""The terminal answerer driven like a person drives it, any keys into any form of the subset.

A hypothesis property: a form of 1-4 fields of random kinds, constraints, defaults and
(sometimes hostile) titles, and a sequence of keystrokes; the keys are typed, then the input
ends (the pipe is closed: the answerer must see the end of the input and cancel, never hang).
The oracle is the documented contract: the question ends in time with accept, decline or
cancel (nothing raised, nothing logged as an error); an accept holds only the form's fields,
passes the strict ``validate_answer`` and came from a review screen; no control, bidi or
zero-width character from the server reaches the screen; and a known-good fill is accepted with
exactly the values typed (defaults for the fields left empty).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from dataclasses import astuple, dataclass, field
from typing import Any

from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from prompt_toolkit.input import create_pipe_input

from mcp_elicit.client.questions import Answer, ServerIdentity
from mcp_elicit.schema import check_schema, validate_answer

from ._harness import (
    BACKSPACE,
    CTRL_C,
    CTRL_U,
    DOWN,
    ENTER,
    ESC,
    FORBIDDEN,
    SPACE,
    UP,
    Harness,
    Pause,
    form,
)

TAB = "\t"
LIMIT = 10.0  # seconds, as the harness's form()

# -- text ----------------------------------------------------------------------------------------
# What a person types: printable, non-ASCII (accents, CJK, a wide emoji, a combining mark).
TYPED_ALPHABET = "abcxyzABZ019 -.@_/:[]éßñø日本語😀\u0301"
typed_text = st.text(alphabet=TYPED_ALPHABET, max_size=6)

# Text with stacked combining marks (Vietnamese, Hebrew with points and cantillation, Zalgo).
MARKED = ["Vi\u1ec7\u0323t", "\u05e9\u05c1\u05b8\u0591\u05a3\u05bd\u05dc", "e\u0301\u0302\u0303\u0304\u0305"]

# Titles and descriptions a strict schema may still hold, hostile to a terminal all the same:
# markup, emoji codes, links, invisible and zero-width characters, line separators, long text.
HOSTILE_PARTS = [
    "[bold]markup[/bold]",
    ":smile:",
    "https://evil.example/x",
    "[link=https://evil.example]x[/link]",
    "zero\u200bwidth",
    "word\u2060joiner",
    "\ufeffbom",
    "line\u2028sep",
    "para\u2029sep",
    "tab\there",
    "new\nline",
    "\u00ad",  # soft hyphen (Cf)
    "\u200d\u200c",
    "W" * 250,
    "日本語のタイトル",
    "   ",
    "[/]",
    *MARKED,
]
# The message is not part of the schema: a server can put anything there.
HOSTILE_MESSAGE = [
    "Hi\x1b[2J\x1b[1A there",
    "\x1b]0;owned\x07",
    "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "\x9b31mred\x9d8;;x\x9c",
    "\u202egnp.exe\u202c",
    "\u2066iso\u2069",
    "cr\roverwrite",
    "bell\x07\x08\x7f",
    "\x00nul",
    "zero\u200bwidth\ufeff",
]


def plain_text(min_size: int = 1, max_size: int = 12) -> st.SearchStrategy[str]:
    return st.text(alphabet="abcdefghij KLMNO-_.éß日本", min_size=min_size, max_size=max_size)


def title_text() -> st.SearchStrategy[str]:
    return st.one_of(
        plain_text(),
        st.lists(st.sampled_from(HOSTILE_PARTS) | plain_text(), min_size=1, max_size=3).map(" ".join),
    )


message_text = st.one_of(
    plain_text(0, 40),
    st.lists(st.sampled_from(HOSTILE_MESSAGE) | plain_text(), min_size=1, max_size=4).map(" ".join),
)

SERVERS = [
    ServerIdentity(
        name="files", reached_via="https://mcp.example.com/mcp", title="Example Files", version="1.2"
    ),
    ServerIdentity(name="evil\x1b[31m\u202e", reached_via="stdio: ./server", title="Bank\x1b]8;;x\x07 ok"),
]

# -- schemas -------------------------------------------------------------------------------------
# Valid samples of each format (what a known-good fill types; defaults come from them too).
FORMAT_SAMPLES = {
    "email": ["ada@example.com", "a.b-c@mail.example.org", "x@y.co"],
    "uri": ["https://example.com/page", "mailto:ada@example.com", "urn:isbn:0451450523"],
    "date": ["2026-01-31", "2000-02-29", "1999-12-01"],
    "date-time": ["2026-01-31T09:30:00Z", "2024-02-29T23:59:59+02:00", "2001-01-01T00:00:00.5Z"],
}
NAMES = [
    "name",
    "email",
    "age",
    "ok",
    "a",
    "b_c",
    "numGuests",
    "年齢",
    "x-y",
    "api key",
    "Full name",
    "z",
    "[/]",
]
OPTION_VALUES = ["a", "b", "c", "Red", "Green", "日本", "x y", "", " ", "Jr.", "-", "s", "[/]", ":smile:"]

KINDS = [
    "text",
    "email",
    "uri",
    "date",
    "date-time",
    "number",
    "integer",
    "boolean",
    "enum",
    "oneOf",
    "enumNames",
    "multi",
    "multi_titled",
]


@st.composite
def field_schema(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    prop: dict[str, Any] = {}
    if kind in ("text", "email", "uri", "date", "date-time"):
        prop["type"] = "string"
        if kind == "text":
            lo = draw(st.none() | st.integers(0, 4))
            hi = draw(st.none() | st.integers(max(lo or 0, 1), (lo or 0) + 12))
            if lo is not None:
                prop["minLength"] = lo
            if hi is not None:
                prop["maxLength"] = hi
            if draw(st.booleans()):
                size = draw(st.integers(lo or 0, hi if hi is not None else (lo or 0) + 8))
                default = draw(
                    st.text(alphabet="abc日é[/]", min_size=size, max_size=size) | st.sampled_from(MARKED)
                )
                if (lo is not None and len(default) < lo) or (hi is not None and len(default) > hi):
                    default = "é" * (lo or 0)
                prop["default"] = default
        else:
            prop["format"] = kind
            samples = FORMAT_SAMPLES[kind]
            if draw(st.booleans()):
                prop["minLength"] = min(len(s) for s in samples)
                prop["maxLength"] = max(len(s) for s in samples)
            if draw(st.booleans()):
                prop["default"] = draw(st.sampled_from(samples))
    elif kind in ("number", "integer"):
        prop["type"] = kind
        if kind == "integer":
            bound = st.integers(-1000, 1000)
        else:
            bound = st.integers(-1000, 1000) | st.floats(-1000, 1000, allow_nan=False).map(
                lambda x: round(x, 3) + 0.0  # + 0.0: never -0.0
            )
        lo = draw(st.none() | bound)
        hi = draw(st.none() | bound)
        if lo is not None and hi is not None and lo > hi:
            lo, hi = hi, lo
        if lo is not None:
            prop["minimum"] = lo
        if hi is not None:
            prop["maximum"] = hi
        if draw(st.booleans()):
            prop["default"] = draw(number_in(kind, lo, hi))
    elif kind == "boolean":
        prop["type"] = "boolean"
        if draw(st.booleans()):
            prop["default"] = draw(st.booleans())
    else:
        values = draw(st.lists(st.sampled_from(OPTION_VALUES), min_size=1, max_size=5, unique=True))
        titles = draw(
            st.lists(
                title_text().filter(str.strip),  # an option's title may not be blank
                min_size=len(values),
                max_size=len(values),
                unique=True,
            )
        )
        if kind == "enum":
            prop.update(type="string", enum=values)
        elif kind == "enumNames":
            prop.update(type="string", enum=values, enumNames=titles)
        elif kind == "oneOf":
            prop.update(
                type="string", oneOf=[{"const": v, "title": t} for v, t in zip(values, titles, strict=True)]
            )
        else:
            prop["type"] = "array"
            if kind == "multi":
                prop["items"] = {"type": "string", "enum": values}
            else:
                prop["items"] = {
                    "anyOf": [{"const": v, "title": t} for v, t in zip(values, titles, strict=True)]
                }
            lo = draw(st.none() | st.integers(0, len(values)))
            hi = draw(st.none() | st.integers(lo or 0, len(values)))
            if lo is not None:
                prop["minItems"] = lo
            if hi is not None:
                prop["maxItems"] = hi
            if draw(st.booleans()):
                size = draw(st.integers(lo or 0, hi if hi is not None else len(values)))
                prop["default"] = draw(st.permutations(values))[:size]
        if kind in ("enum", "enumNames", "oneOf") and draw(st.booleans()):
            prop["default"] = draw(st.sampled_from(values))
    if draw(st.integers(0, 2)) == 0:
        prop["title"] = draw(title_text())
    if draw(st.integers(0, 3)) == 0:
        prop["description"] = draw(title_text())
    return prop


def number_in(kind: str, lo: float | None, hi: float | None) -> st.SearchStrategy[int | float]:
    """A number a field with these bounds holds (an int for an integer field)."""
    if kind == "integer":
        return st.integers(
            int(lo) if lo is not None else -10_000,
            int(hi) if hi is not None else 10_000,
        )
    low = lo if lo is not None else -10_000
    high = hi if hi is not None else 10_000
    whole = (
        st.integers(int(-(-low // 1)), int(high // 1))
        if int(-(-low // 1)) <= int(high // 1)
        else st.nothing()
    )
    decimal = (
        st.floats(low, high, allow_nan=False).map(lambda x: round(x, 2)).filter(lambda x: low <= x <= high)
        if low < high
        else st.nothing()
    )
    bounds = (
        st.sampled_from([b for b in (lo, hi) if b is not None])
        if lo is not None or hi is not None
        else st.nothing()
    )
    return whole | decimal | bounds


@st.composite
def schemas(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    props = {name: draw(field_schema(draw(st.sampled_from(KINDS)))) for name in names}
    required = [name for name in names if draw(st.booleans())]
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required or draw(st.booleans()):
        schema["required"] = required
    problems = check_schema(schema)
    assert problems == [], (schema, problems)  # the generator makes forms of the subset only
    return schema


# -- a known-good fill ---------------------------------------------------------------------------
class _Omitted:
    def __repr__(self) -> str:
        return "LEFT_EMPTY"


LEFT_EMPTY = _Omitted()


def kind_of(prop: dict[str, Any]) -> str:
    if prop["type"] == "array":
        return "multi"
    if "enum" in prop or "oneOf" in prop:
        return "select"
    return prop["type"]


def options_of(prop: dict[str, Any]) -> list[str]:
    if prop["type"] == "array":
        items = prop["items"]
        return list(items["enum"]) if "enum" in items else [o["const"] for o in items["anyOf"]]
    return list(prop["enum"]) if "enum" in prop else [o["const"] for o in prop["oneOf"]]


def number_text(value: int | float) -> str:
    return str(value) if isinstance(value, int) else repr(value)


@st.composite
def fill_field(draw: st.DrawFn, prop: dict[str, Any], required: bool) -> tuple[list[str], Any]:
    """The keys that give one field a valid value, and that value (LEFT_EMPTY: not sent)."""
    kind = kind_of(prop)
    has_default = "default" in prop
    empty_ok = not required  # an optional field may be left out
    if kind in ("string", "number", "integer") and has_default and draw(st.integers(0, 2)) == 0:
        return [ENTER], prop["default"]  # Enter keeps the pre-filled default
    if kind == "string":
        fmt = prop.get("format")
        if fmt is not None:
            candidates = [s for s in FORMAT_SAMPLES[fmt]]
            value = draw(st.sampled_from(candidates))
        else:
            lo = prop.get("minLength", 0)
            hi = prop.get("maxLength", lo + 8)
            value = draw(st.text(alphabet=TYPED_ALPHABET.replace("\u0301", ""), min_size=lo, max_size=hi))
        if value == "" and empty_ok:
            value = LEFT_EMPTY  # an empty entry leaves an optional field out
        if empty_ok and draw(st.integers(0, 4)) == 0:
            return [CTRL_U, ENTER], LEFT_EMPTY
        return [CTRL_U, *([] if value is LEFT_EMPTY else [value]), ENTER], value
    if kind in ("number", "integer"):
        if empty_ok and draw(st.integers(0, 4)) == 0:
            return [CTRL_U, ENTER], LEFT_EMPTY
        value = draw(number_in(kind, prop.get("minimum"), prop.get("maximum")))
        return [CTRL_U, number_text(value), ENTER], value
    if kind == "boolean":
        marked = prop.get("default", LEFT_EMPTY if empty_ok else None)
        choices: list[tuple[list[str], Any]] = [(["y"], True), (["Y"], True), (["n"], False), (["N"], False)]
        if empty_ok and not has_default:
            choices.append((["-"], LEFT_EMPTY))
        if marked is not None:
            choices.append(([ENTER], marked))
        return draw(st.sampled_from(choices))
    options = options_of(prop)
    if kind == "select":
        listed = len(options) + (1 if empty_ok and not has_default else 0)  # "(leave empty)" last
        index = draw(st.integers(0, listed - 1))
        keys = [UP] * (listed + 1) + [DOWN] * index + [ENTER]
        return keys, options[index] if index < len(options) else LEFT_EMPTY
    # multi-select: the cursor starts on the first option, the default ones are ticked.
    lo = prop.get("minItems", 0)
    hi = prop.get("maxItems", len(options))
    wanted = set(draw(st.sets(st.integers(0, len(options) - 1), min_size=lo, max_size=hi)))
    ticked = {options.index(v) for v in prop.get("default", [])}
    keys = []
    for i in range(len(options)):
        if (i in wanted) != (i in ticked):
            keys.append(draw(st.sampled_from([SPACE, "x"])))
        keys.append(DOWN)
    keys.append(ENTER)
    value: Any = [options[i] for i in sorted(wanted)]
    if not value and lo > 0:
        value = LEFT_EMPTY  # nothing ticked where [] is refused: the field is left out
    return keys, value


@st.composite
def good_fills(draw: st.DrawFn) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
    """A form, the keys of a valid fill (start, each field, send), and the answer it must give."""
    schema = draw(schemas())
    props = schema["properties"]
    required = set(schema.get("required", []))
    confirm = len(props) == 1 and kind_of(next(iter(props.values()))) == "boolean"
    keys: list[str] = [] if confirm else [draw(st.sampled_from([ENTER, "f"]))]
    expected: dict[str, Any] = {}
    for name, prop in props.items():
        field_keys, value = draw(fill_field(prop, name in required))
        keys += field_keys
        if value is not LEFT_EMPTY:
            expected[name] = value
        elif "default" in prop:
            expected[name] = prop["default"]
    keys.append(draw(st.sampled_from([ENTER, "s"])))
    validate_answer(schema, expected)  # the generator's fill is valid (else it is its bug)
    return schema, keys, expected


# -- any keys ------------------------------------------------------------------------------------
ONE_KEY = st.sampled_from(
    [
        ENTER,
        ENTER,
        ENTER,
        UP,
        DOWN,
        DOWN,
        SPACE,
        BACKSPACE,
        CTRL_U,
        TAB,
        "y",
        "n",
        "-",
        "s",
        "e",
        "x",
        "f",
        "1",
    ]
)
RARE_KEY = st.sampled_from([ESC, CTRL_C, "d", "c", Pause(0.05)])
# Stray keys are common, the keys that end a question (Esc, Ctrl-C, d, c) rarer: else hardly a
# random sequence would ever reach the review.
any_key = st.one_of(
    *[ONE_KEY] * 12,
    typed_text,
    typed_text,
    st.sampled_from(["-5", "3.25", "ada@example.com", "[/]", ":smile:"]),
    RARE_KEY,
)
# Random keys, sometimes followed by Enter on every field and "s" on the review.
any_keys = st.tuples(st.lists(any_key, max_size=30), st.sampled_from([[], [ENTER] * 8 + ["s"]])).map(
    lambda parts: parts[0] + parts[1]
)


@st.composite
def noisy_fills(draw: st.DrawFn) -> tuple[dict[str, Any], list[str]]:
    """A good fill with random keys slipped in: mostly valid, sometimes not."""
    schema, keys, _ = draw(good_fills())
    for _ in range(draw(st.integers(1, 4))):
        keys.insert(draw(st.integers(0, len(keys))), draw(any_key))
    if draw(st.booleans()):
        keys += draw(st.lists(any_key, max_size=4))
    return schema, keys


# -- running -------------------------------------------------------------------------------------
@dataclass
class Run:
    answer: Answer | None = None
    raised: BaseException | None = None
    transcript: str = ""
    screen: str = ""
    seen: list[str] = field(default_factory=list)  # the terminal's rows, scrollback included
    logged: list[logging.LogRecord] = field(default_factory=list)
    loop_errors: list[dict[str, Any]] = field(default_factory=list)


class _Catch(logging.Handler):
    def __init__(self, into: list[logging.LogRecord]) -> None:
        super().__init__(logging.ERROR)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record)


def ask(
    schema: dict[str, Any],
    keys: list[str],
    message: str = "Please fill in the form.",
    server: ServerIdentity = SERVERS[0],
    width: int = 120,
) -> Run:
    """Type ``keys`` into the form, then end the input; what came of it."""
    run = Run()
    catch = _Catch(run.logged)
    logging.getLogger().addHandler(catch)

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: run.loop_errors.append(ctx))
        with create_pipe_input() as pipe:
            term = Harness(pipe, width=width)

            async def typing() -> None:
                await term._type(tuple(keys))
                pipe.close()  # the end of the input

            typist = asyncio.ensure_future(typing())
            try:
                run.answer = await asyncio.wait_for(
                    term.answerer().answer_form(form(schema, message, server=server)), LIMIT
                )
            except BaseException as exc:  # the oracle looks at it
                run.raised = exc
            finally:
                typist.cancel()
            run.transcript = term.transcript
            run.screen = term.screen
            run.seen = term.vt.history()

    try:
        asyncio.run(main())
    finally:
        logging.getLogger().removeHandler(catch)
    return run


# What prompt_toolkit writes to draw (cursor moves, erases, colours, modes), the line ends, and
# the bell it rings on a refused key, the backspace it moves back with.
_DRAWING = re.compile(r"\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b[78=>]|[\r\n\x07\x08]")

_LAST_LINE = {
    "accept": "Sent: the server gets this answer.",
    "decline": "Declined: the server is told that you said no",
    "cancel": "Cancelled: the server is told that you cancelled",
}


def check_run(schema: dict[str, Any], run: Run, server_text: tuple[str, ...] = ()) -> None:
    note(f"transcript:\n{run.transcript}")
    assert run.raised is None, f"answer_form raised {run.raised!r}"
    assert run.logged == [], [r.getMessage() for r in run.logged]
    assert run.loop_errors == [], run.loop_errors
    answer = run.answer
    assert answer is not None
    event(f"action: {answer.action}")
    assert answer.action in ("accept", "decline", "cancel")
    out = run.transcript
    said = " ".join(out.split())  # words, however the lines were wrapped
    # The last line says what goes back to the server.
    last = max(_LAST_LINE.values(), key=said.rfind)
    assert last == _LAST_LINE[answer.action], said[-200:]
    if answer.action == "accept":
        content = answer.content
        assert isinstance(content, dict)
        assert set(content) <= set(schema["properties"])
        assert validate_answer(schema, content) == content
        # A form answer is reviewed before it is sent.
        assert "Review your answer before it is sent" in said[: said.rindex(_LAST_LINE["accept"])]
    else:
        assert not answer.content
    # Nothing of the server's text reaches the screen unclean (the typed text has none of them).
    for where, text in (
        ("transcript", out),
        ("drawn", _DRAWING.sub("", run.screen)),
        ("seen", "\n".join(run.seen)),
    ):
        bad = FORBIDDEN.search(text)
        assert bad is None, f"{where}: {bad.group()!r} at {text[max(0, bad.start() - 40) : bad.end() + 40]!r}"
    # The drawing's own escapes are stripped above: an escape of the server's must not be among
    # them (its few characters around the ESC are not in what was written).
    for text in server_text:
        for esc in re.finditer("\x1b", text):
            around = text[max(0, esc.start() - 3) : esc.end() + 2]
            assert around not in run.screen, around
            assert around not in run.transcript, around


WIDTHS = st.sampled_from([120, 120, 80, 40, 20])
SETTINGS = settings(
    deadline=None,
    max_examples=int(os.environ.get("ANY_KEYS_EXAMPLES", "120")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=False,
)


@SETTINGS
@given(schema=schemas(), keys=any_keys, message=message_text, server=st.sampled_from(SERVERS), width=WIDTHS)
def test_any_keys_into_any_form(
    schema: dict[str, Any], keys: list[str], message: str, server: ServerIdentity, width: int
) -> None:
    note(f"schema={schema!r}\nkeys={keys!r}")
    check_run(
        schema,
        ask(schema, keys, message, server, width),
        (message, *[t for t in astuple(server) if isinstance(t, str)]),
    )


@SETTINGS
@given(case=noisy_fills(), message=message_text, server=st.sampled_from(SERVERS), width=WIDTHS)
def test_a_good_fill_with_stray_keys(
    case: tuple[dict[str, Any], list[str]], message: str, server: ServerIdentity, width: int
) -> None:
    schema, keys = case
    note(f"schema={schema!r}\nkeys={keys!r}")
    check_run(
        schema,
        ask(schema, keys, message, server, width),
        (message, *[t for t in astuple(server) if isinstance(t, str)]),
    )


@settings(
    deadline=None,
    max_examples=int(os.environ.get("ANY_KEYS_FILLS", "100")),
    suppress_health_check=[HealthCheck.too_slow],
)
@given(case=good_fills())
def test_a_known_good_fill_is_sent_as_typed(
    case: tuple[dict[str, Any], list[str], dict[str, Any]],
) -> None:
    schema, keys, expected = case
    note(f"schema={schema!r}\nkeys={keys!r}")
    run = ask(schema, keys)
    check_run(schema, run)
    assert run.answer == Answer("accept", expected)


# -- bugs found, now regression tests ---------------------------------------------------------
HEBREW = "\u05e9\u05c1\u05b8\u0591\u05a3\u05bd\u05dc"  # shin, shin dot, qamats, etnahta, munah, meteg, lamed


def test_enter_on_a_prefilled_default_with_many_combining_marks_sends_the_default() -> None:
    """Docs (the form's key hint): "Enter confirms each field (pre-filled values are kept)"; the
    default is a valid value of the strict subset (check_schema accepts it). The pre-filled line
    is the default through ``clean()``, which cuts a run of combining marks to 4: Enter sent
    that shorter text, not the default."""
    schema = {
        "type": "object",
        "properties": {"word": {"type": "string", "default": HEBREW}},
        "required": ["word"],
    }
    assert check_schema(schema) == []
    run = ask(schema, [ENTER, ENTER, ENTER])
    assert run.answer == Answer("accept", {"word": HEBREW})


def test_a_prefilled_default_with_many_combining_marks_can_be_kept_under_min_length() -> None:
    """The cut text was then refused by minLength: the person could not keep a valid default."""
    schema = {
        "type": "object",
        "properties": {"word": {"type": "string", "default": HEBREW, "minLength": len(HEBREW)}},
        "required": ["word"],
    }
    assert check_schema(schema) == []
    run = ask(schema, [ENTER, ENTER, Pause(0.2), ENTER])
    assert run.answer == Answer("accept", {"word": HEBREW})


def test_a_multi_line_default_and_a_choice_with_a_tab_are_sent_back_unchanged() -> None:
    """Official-SDK servers send them (a pydantic field ``str = "a\\nb"``): the client reads the
    form, shows the text cleaned on one line, and Enter keeps the value itself."""
    schema = {
        "type": "object",
        "properties": {
            "note": {"type": "string", "default": "line one\nline two\ttabbed"},
            "pick": {"type": "string", "enum": ["a b", "c\td"], "default": "c\td"},
        },
        "required": ["note", "pick"],
    }
    assert check_schema(schema) != []  # outside the strict subset: our own servers never send it
    run = ask(schema, [ENTER, ENTER, ENTER, ENTER])
    assert run.raised is None
    assert run.answer == Answer("accept", {"note": "line one\nline two\ttabbed", "pick": "c\td"})
    assert "line one line two" in " ".join(run.transcript.split())
