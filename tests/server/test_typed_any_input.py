"""Typed handlers against any input: what a server author writes (Python annotations) against
what a client sends (any JSON), through the real client and server in this process.

Hypothesis draws both sides:

* tools whose signatures use the argument types a tool takes (str, int, float, bool, Literal,
  Enum, ``X | None``, ``Any``, defaults, lists and dicts of those, ``Annotated`` descriptions and
  constraints, nested dataclasses and TypedDicts), called with arguments that fit or not. A call
  either runs the handler with values of exactly the annotated types, equal to what was sent, or
  is refused with a tool error that names every argument that does not fit; never an internal
  error, never a traceback in the log, never a handler run with a value of another type.
* ``ctx.elicit(message, T)`` with ``T`` a dataclass, TypedDict or pydantic model of the form
  field kinds (text with lengths and formats, bounded numbers, booleans, single and multi
  selects, dates, optional fields, defaults), answered with any content. An answer that fits
  gives the handler ``T``'s data equal to it, defaults applied (also on the later round that reads
  it from the sealed state); one that does not is asked again naming the field, and the call ends
  with a tool error after ``max_answer_attempts``; a broken ``ElicitResult`` is -32602.
* annotations a tool cannot take are refused when it is registered, naming the parameter, and a
  form field the subset cannot express is named by ``form_spec`` before any call.

What each input should give is worked out here from the documentation (docs/server-guide.md,
docs/deployment.md), not from the code: whole floats are integers up to 2**53, ``null`` for an
optional form field counts as leaving it out, and so on.

No ``from __future__ import annotations``: the annotations below are objects built at run time.
"""

import copy
import dataclasses
import datetime
import enum
import inspect
import math
import re
import socket
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import annotated_types as at
import pydantic
import pytest
import typing_extensions
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mcp_elicit import Choices, Context, Description, Email, Server, Url
from mcp_elicit.client import Answer, Client, FormQuestion
from mcp_elicit.client.errors import McpClientError
from mcp_elicit.schema import SchemaBuildError, form_spec
from mcp_elicit.wire.errors import INVALID_PARAMS, McpError
from tests.helpers import RawCall, Script, no_errors_logged, post
from tests.typed_values import Loose, same, unloose

KEYS = ["typed-any-input-tests-secret-0123456789abcdef"]
# Generic aliases and TypedDicts made from types drawn at run time (which mypy cannot follow).
LIST: Any = list
DICT: Any = dict
make_typeddict: Any = typing_extensions.TypedDict
MAX_SAFE = 2**53 - 1  # docs/deployment.md: the largest whole number a form answer may hold
EXACT = 2**53  # a whole float taken as an argument's integer while a float holds it exactly

# Sized for CI: the whole file runs in well under 25 s on two cores.
SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FORM_SETTINGS = settings(SETTINGS, max_examples=120)


class NoFit(Exception):
    """The value does not fit the annotation: the call or the answer must be refused."""


class Unsure(Exception):
    """Free text against a format (an e-mail address, a URI): only the checker can tell."""


# -- JSON a client may send ----------------------------------------------------------------------

# What the client can encode: integers of at most 64 bits (it refuses to send others), no NaN.
ints64 = st.integers(-(2**63), 2**64 - 1)
tricky: st.SearchStrategy[Any] = st.sampled_from(
    [
        True, False, None, 0, 1, -1, 1.0, -0.0, 0.5, 2**53, 2**53 + 1, float(2**53), 2.0**60, 1e16,
        2**63 - 1, 2**64 - 1, -(2**63), 1e308, -1e308, 5e-324, "", "1", "1.0", "true", "NaN",
        "Infinity", "null", "\x00", " ", [], {}, [1], [[[]]], {"a": 1}, {"": None},
    ]
)  # fmt: skip
any_json = st.recursive(
    tricky | ints64 | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


# -- argument types and how a JSON argument reads -------------------------------------------------


@dataclass(frozen=True)
class Arg:
    """An argument type: its annotation, JSON values that fit it, and what a JSON value gives the
    handler (``read`` raises NoFit for one that does not fit)."""

    annotation: Any
    fitting: st.SearchStrategy[Any]
    read: Callable[[Any], Any]
    nullable: bool = False
    label: str = ""


def read_str(value: Any) -> str:
    if type(value) is not str:
        raise NoFit
    return value


def read_int(value: Any) -> int:
    if type(value) is int:
        return value
    # A whole float is an integer (JavaScript writes 5 as 5.0) while a float holds it exactly.
    if type(value) is float and value.is_integer() and abs(value) <= EXACT:
        return int(value)
    raise NoFit


def read_float(value: Any) -> float:
    if type(value) not in (int, float):
        raise NoFit
    return float(value)


def read_bool(value: Any) -> bool:
    if type(value) is not bool:
        raise NoFit
    return value


def read_any(value: Any) -> Loose:
    return Loose(value)


STR = Arg(str, st.text(max_size=12), read_str, label="str")
INT = Arg(int, ints64 | st.integers(-EXACT, EXACT).map(float), read_int, label="int")
FLOAT = Arg(float, st.floats(allow_nan=False, allow_infinity=False) | ints64, read_float, label="float")
BOOL = Arg(bool, st.booleans(), read_bool, label="bool")
ANY = Arg(Any, any_json, read_any, nullable=True, label="Any")

choice_values = st.lists(st.text(max_size=6), min_size=1, max_size=4, unique=True)


def literal_arg(values: list[str]) -> Arg:
    def read(value: Any) -> str:
        if type(value) is not str or value not in values:
            raise NoFit
        return value

    return Arg(Literal[tuple(values)], st.sampled_from(values), read, label="Literal")


def enum_arg(values: list[str], text_mixin: bool) -> Arg:
    members = [(f"M{i}", value) for i, value in enumerate(values)]
    cls: Any = enum.Enum("Picked", members, type=str) if text_mixin else enum.Enum("Picked", members)

    def read(value: Any) -> Any:
        if type(value) is not str or value not in values:
            raise NoFit
        return cls(value)

    return Arg(cls, st.sampled_from(values), read, label="Enum")


def bounded(
    arg: Arg,
    bounds: tuple[Any, Any],
    make: Callable[[Any, Any], Any],
    measure: Callable[[Any], Any],
    inside: Callable[[Any, Any], st.SearchStrategy[Any]],
) -> Arg:
    """``arg`` with a constraint (``make(lo, hi)``, an Annotated metadata) on ``measure`` of its
    value; ``inside(lo, hi)`` draws JSON values within it."""
    lo, hi = bounds

    def read(value: Any) -> Any:
        got = arg.read(value)
        size = measure(got)
        if (lo is not None and size < lo) or (hi is not None and size > hi):
            raise NoFit
        return got

    return Arg(Annotated[arg.annotation, make(lo, hi)], inside(lo, hi), read, label=f"{arg.label}+bounds")


def ints_inside(lo: int | None, hi: int | None) -> st.SearchStrategy[Any]:
    whole = st.integers(-(2**63) if lo is None else lo, 2**64 - 1 if hi is None else hi)
    return whole | whole.filter(lambda v: abs(v) <= EXACT).map(float)


def floats_inside(lo: float | None, hi: float | None) -> st.SearchStrategy[Any]:
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def text_inside(lo: int | None, hi: int | None) -> st.SearchStrategy[Any]:
    return st.text(min_size=lo or 0, max_size=hi if hi is not None else 12)


def _constraint(kind: str) -> Callable[[Any, Any], Any]:
    def make(lo: Any, hi: Any) -> Any:
        if kind == "field":
            return pydantic.Field(ge=lo, le=hi)
        if kind == "length":
            return pydantic.Field(min_length=lo, max_length=hi)
        if kind == "len":
            return at.Len(lo or 0, hi)
        return at.Interval(ge=lo, le=hi)

    return make


def number_bounds(values: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[Any, Any]]:
    return st.tuples(st.none() | values, st.none() | values).map(
        lambda b: b if None in b or b[0] <= b[1] else (b[1], b[0])
    )


scalar_args = st.one_of(
    st.sampled_from([STR, INT, FLOAT, BOOL, ANY]),
    choice_values.map(literal_arg),
    st.builds(enum_arg, choice_values, st.booleans()),
    # Constraints take the whole signature through pydantic.
    st.builds(
        bounded,
        st.just(INT),
        number_bounds(st.integers(-1000, 1000)),
        st.sampled_from(["field", "interval"]).map(_constraint),
        st.just(lambda v: v),
        st.just(ints_inside),
    ),
    st.builds(
        bounded,
        st.just(FLOAT),
        number_bounds(st.floats(-1e6, 1e6)),
        st.sampled_from(["field", "interval"]).map(_constraint),
        st.just(lambda v: v),
        st.just(floats_inside),
    ),
    st.builds(
        bounded,
        st.just(STR),
        number_bounds(st.integers(0, 6)),
        st.sampled_from(["length", "len"]).map(_constraint),
        st.just(len),
        st.just(text_inside),
    ),
)


def optional_arg(arg: Arg) -> Arg:
    if arg.nullable:
        return arg

    def read(value: Any) -> Any:
        return None if value is None else arg.read(value)

    return Arg(arg.annotation | None, st.none() | arg.fitting, read, nullable=True, label=f"{arg.label}|None")


def list_arg(arg: Arg) -> Arg:
    def read(value: Any) -> list[Any]:
        if type(value) is not list:
            raise NoFit
        return [arg.read(item) for item in value]

    return Arg(LIST[arg.annotation], st.lists(arg.fitting, max_size=3), read, label=f"list[{arg.label}]")


def dict_arg(arg: Arg) -> Arg:
    def read(value: Any) -> dict[str, Any]:
        if type(value) is not dict:
            raise NoFit
        return {key: arg.read(item) for key, item in value.items()}

    fitting = st.dictionaries(st.text(max_size=5), arg.fitting, max_size=3)
    return Arg(DICT[str, arg.annotation], fitting, read, label=f"dict[str, {arg.label}]")


def described_arg(arg: Arg, plain_text: bool) -> Arg:
    marker: Any = "a plain text description" if plain_text else Description("What it is")
    return Arg(
        Annotated[arg.annotation, marker], arg.fitting, arg.read, arg.nullable, f"Annotated[{arg.label}]"
    )


_MISSING = object()


@dataclass(frozen=True)
class Member:
    """A field of a nested dataclass or TypedDict argument: ``default`` is _MISSING for none."""

    name: str
    arg: Arg
    default: Any = _MISSING


def _mutable(value: Any) -> bool:
    return not isinstance(value, str | int | float | bool | type(None) | enum.Enum)


def dataclass_arg(members: list[Member]) -> Arg:
    fields: list[tuple[Any, ...]] = []
    for m in members:
        if m.default is _MISSING:
            fields.append((m.name, m.arg.annotation))
        elif _mutable(m.default):
            fields.append((m.name, m.arg.annotation, dataclasses.field(default_factory=_copier(m.default))))
        else:
            fields.append((m.name, m.arg.annotation, dataclasses.field(default=m.default)))
    cls = dataclasses.make_dataclass("Nested", fields, kw_only=True)
    names = {m.name for m in members}

    def read(value: Any) -> Any:
        if type(value) is not dict or not value.keys() <= names:
            raise NoFit
        kwargs = {}
        for m in members:
            if m.name in value:
                kwargs[m.name] = m.arg.read(value[m.name])  # Loose values too: a dataclass takes them
            elif m.default is _MISSING:
                raise NoFit
        return cls(**kwargs)

    fitting = st.fixed_dictionaries(
        {m.name: m.arg.fitting for m in members if m.default is _MISSING},
        optional={m.name: m.arg.fitting for m in members if m.default is not _MISSING},
    )
    return Arg(cls, fitting, read, label="dataclass")


def typeddict_arg(members: list[Member]) -> Arg:
    annotations = {
        m.name: m.arg.annotation if m.default is _MISSING else typing_extensions.NotRequired[m.arg.annotation]
        for m in members
    }
    cls = make_typeddict("NestedDict", annotations)
    names = {m.name for m in members}

    def read(value: Any) -> dict[str, Any]:
        if type(value) is not dict or not value.keys() <= names:
            raise NoFit
        if any(m.name not in value for m in members if m.default is _MISSING):
            raise NoFit
        return {name: arg_of[name].read(item) for name, item in value.items()}

    arg_of = {m.name: m.arg for m in members}
    fitting = st.fixed_dictionaries(
        {m.name: m.arg.fitting for m in members if m.default is _MISSING},
        optional={m.name: m.arg.fitting for m in members if m.default is not _MISSING},
    )
    return Arg(cls, fitting, read, label="TypedDict")


def _copier(value: Any) -> Callable[[], Any]:
    return lambda: copy.deepcopy(value)


@st.composite
def members(draw: st.DrawFn, inner: st.SearchStrategy[Arg]) -> list[Member]:
    args = draw(st.lists(inner, min_size=1, max_size=3))
    out = []
    for i, arg in enumerate(args):
        default = _MISSING
        if draw(st.booleans()):
            default = unloose(arg.read(draw(arg.fitting)))
        out.append(Member(f"m{i}", arg, default))
    return out


def _nest(inner: st.SearchStrategy[Arg]) -> st.SearchStrategy[Arg]:
    return st.one_of(
        inner.map(optional_arg),
        inner.map(list_arg),
        inner.map(dict_arg),
        st.builds(described_arg, inner, st.booleans()),
        members(inner).map(dataclass_arg),
        members(inner).map(typeddict_arg),
    )


arg_types = st.recursive(scalar_args, _nest, max_leaves=3)
# Types the server reads without pydantic: one other argument type takes the whole signature
# through pydantic, so half the signatures are drawn from these alone.
plain_scalar_args = st.one_of(
    st.sampled_from([STR, INT, FLOAT, BOOL, ANY]),
    choice_values.map(literal_arg),
    st.builds(enum_arg, choice_values, st.booleans()),
)
plain_arg_types = st.recursive(
    plain_scalar_args,
    lambda inner: st.one_of(inner.map(optional_arg), inner.map(list_arg), inner.map(dict_arg)),
    max_leaves=2,
).flatmap(lambda arg: st.sampled_from([arg, described_arg(arg, True), described_arg(arg, False)]))


@dataclass(frozen=True)
class Param:
    name: str
    arg: Arg
    default: Any = _MISSING


@st.composite
def signatures(draw: st.DrawFn) -> tuple[list[Param], bool]:
    """Up to four parameters (named a0.. so that a message naming one is easy to find), and
    whether the handler also takes the Context."""
    out = []
    kinds = draw(st.sampled_from([plain_arg_types, arg_types]))
    for i, arg in enumerate(draw(st.lists(kinds, max_size=4))):
        if draw(st.integers(0, 3)) == 0:
            arg = optional_arg(arg)
        default: Any = _MISSING
        pick = draw(st.sampled_from(["none", "none", "value", "None"]))
        if pick == "value":
            default = unloose(arg.read(draw(arg.fitting)))
        elif pick == "None":  # `x: str = None`, as people write it
            default = None
        out.append(Param(f"a{i}", arg, default))
    return out, draw(st.booleans())


def handler_for(
    params: list[Param], with_context: bool, received: list[dict[str, Any]]
) -> Callable[..., Any]:
    """A handler with exactly this signature: Python applies its defaults, and refuses a call that
    leaves out an argument without one, as it would for one written out with ``async def``."""
    parameters = [
        inspect.Parameter(
            p.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if p.default is _MISSING else p.default,
            annotation=p.arg.annotation,
        )
        for p in params
    ]
    if with_context:
        parameters.insert(0, inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context))
    signature = inspect.Signature(parameters, return_annotation=str)

    async def typed(**kwargs: Any) -> str:
        bound = signature.bind(**kwargs)  # TypeError for a missing argument, as a real def raises
        bound.apply_defaults()
        values = dict(bound.arguments)
        if with_context:
            assert isinstance(values.pop("ctx"), Context)
        received.append(values)
        return "ran"

    typed.__signature__ = signature  # type: ignore[attr-defined]
    typed.__annotations__ = {name: p.annotation for name, p in signature.parameters.items()}
    typed.__annotations__["return"] = str
    return typed


@st.composite
def arguments_for(draw: st.DrawFn, params: list[Param]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in params:
        how = draw(st.sampled_from(["fit", "fit", "fit", "fit", "absent", "absent", "any", "null"]))
        if how == "fit":
            out[p.name] = draw(p.arg.fitting)
        elif how == "any":
            out[p.name] = draw(any_json)
        elif how == "null":
            out[p.name] = None
    if draw(st.integers(0, 9)) == 0:
        out[draw(st.sampled_from(["extra", "a9"]) | st.text(max_size=4))] = draw(any_json)
    return out


def expect(
    params: list[Param], arguments: dict[str, Any], required: set[str]
) -> tuple[dict[str, Any], list[str]]:
    """What the handler should receive, and the arguments a refusal must name (none: it runs)."""
    names = {p.name for p in params}
    wrong = [name for name in arguments if name not in names]
    values: dict[str, Any] = {}
    for p in params:
        if p.name in arguments:
            try:
                values[p.name] = p.arg.read(arguments[p.name])
            except NoFit:
                wrong.append(p.name)
        elif p.default is not _MISSING:
            values[p.name] = p.default
        elif p.name in required:
            wrong.append(p.name)
        else:  # the input schema says it may be left out: the handler gets None
            event("left out an optional argument without a default")
            values[p.name] = None
    return values, wrong


def check_input_schema(params: list[Param], schema: dict[str, Any]) -> set[str]:
    required = set(schema.get("required", ()))
    assert set(schema["properties"]) == {p.name for p in params}
    for p in params:
        if p.default is not _MISSING:
            assert p.name not in required, (p, schema)
        elif not p.arg.nullable:
            assert p.name in required, (p, schema)
    return required


@SETTINGS
@given(st.data())
async def test_a_typed_tool_runs_with_what_was_sent_or_refuses_it(data: st.DataObject) -> None:
    params, with_context = data.draw(signatures(), label="signature")
    received: list[dict[str, Any]] = []
    app = Server("typed", version="1", state_keys=KEYS)
    app.tool(name="typed")(handler_for(params, with_context, received))
    for p in params:
        event(f"argument type {p.arg.label}")
    with no_errors_logged():
        async with Client.connect(app) as client:
            (tool,) = await client.list_tools()
            required = check_input_schema(params, tool["inputSchema"])
            for _ in range(data.draw(st.integers(1, 4), label="calls")):
                arguments = data.draw(arguments_for(params), label="arguments")
                expected, wrong = expect(params, arguments, required)
                received.clear()
                result = await client.call_tool("typed", arguments)
                if not wrong:
                    event("ran")
                    assert not result.is_error, (arguments, result.text)
                    assert len(received) == 1
                    assert received[0].keys() == expected.keys()
                    for name, value in expected.items():
                        assert same(value, received[0][name]), (name, value, received[0][name])
                else:
                    event("refused")
                    assert result.is_error, (arguments, expected, received)
                    assert not received, (arguments, received)
                    assert result.text.startswith("Invalid arguments for tool 'typed': "), result.text
                    for name in wrong:
                        if re.fullmatch(r"[a-z][a-z0-9]*", name):
                            assert name in result.text, (name, result.text)


# -- the form side: ctx.elicit(message, T) ----------------------------------------------------------


@dataclass(frozen=True)
class FieldKind:
    """A form field type: its annotation, JSON answers that fit and ones that surely do not, what
    an answer gives the handler (``read``: NoFit, or Unsure for free text against a format), and
    Python defaults that fit."""

    annotation: Any
    fitting: st.SearchStrategy[Any]
    wrong: st.SearchStrategy[Any]
    read: Callable[[Any], Any]
    defaults: st.SearchStrategy[Any]
    nullable: bool = False
    label: str = ""


# Text a form shows as it is (choices, titles, defaults): no control or invisible characters.
shown_text = st.text(st.sampled_from("abcdefghijXYZ0123456789 -_.é"), min_size=1, max_size=8).filter(
    lambda s: s.strip() == s and s.strip()
)
not_text = st.sampled_from([0, 1, 2.5, True, False, [], {}, ["a"], {"a": "b"}])


def no_nul(text: str) -> bool:
    return "\x00" not in text


def text_field(bounds: tuple[int | None, int | None], how: str) -> FieldKind:
    lo, hi = bounds
    annotation: Any = str
    if how == "annotated" and bounds != (None, None):
        annotation = Annotated[str, at.Len(lo or 0, hi)]
    elif how == "pydantic" and bounds != (None, None):
        annotation = Annotated[str, pydantic.Field(min_length=lo, max_length=hi)]
    else:
        lo = hi = None

    def read(value: Any) -> str:
        if type(value) is not str or "\x00" in value:  # NUL breaks many stores: refused
            raise NoFit
        if (lo is not None and len(value) < lo) or (hi is not None and len(value) > hi):
            raise NoFit
        return value

    fitting = st.text(min_size=lo or 0, max_size=hi if hi is not None else 12).filter(no_nul)
    wrong = not_text | st.just("a\x00b")
    if lo:
        wrong |= st.text(max_size=lo - 1)
    if hi is not None:
        wrong |= st.text(min_size=hi + 1, max_size=hi + 3)
    defaults = st.text(st.sampled_from("abcXYZ09"), min_size=lo or 0, max_size=hi if hi is not None else 8)
    return FieldKind(
        annotation, fitting, wrong.filter(lambda v: _reads_not(read, v)), read, defaults, label="text"
    )


def _reads_not(read: Callable[[Any], Any], value: Any) -> bool:
    try:
        read(value)
    except NoFit:
        return True
    except Unsure:
        return False
    return False


GOOD_EMAILS = ["ada@example.com", "a.b+c@mail.example.org", "x_y-z@sub.domain.io", "o'neil@example.ie"]
BAD_EMAILS = ["", "ada", "ada@", "@example.com", "a b@example.com", "ada@@example.com", "<a@b.com>", "a@b,c"]
GOOD_URIS = [
    "https://example.com/",
    "https://example.com/a?b=c#d",
    "mailto:ada@example.com",
    "urn:isbn:0451450523",
]
BAD_URIS = ["", "no scheme here", "://example.com", "https://exa mple.com", "1http://x"]


def pooled_field(annotation: Any, good: list[str], bad: list[str], label: str) -> FieldKind:
    def read(value: Any) -> str:
        if type(value) is not str or value in bad:
            raise NoFit
        if value in good:
            return value
        raise Unsure

    return FieldKind(
        annotation,
        st.sampled_from(good),
        st.sampled_from(bad) | not_text,
        read,
        st.sampled_from(good),
        label=label,
    )


_FULL_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATE_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,6})?([Zz]|[+-]([0-9]{2}):([0-9]{2}))"
)


def read_date(value: Any) -> datetime.date:
    """RFC 3339 full-date: YYYY-MM-DD, a day that exists."""
    if type(value) is not str or not _FULL_DATE.fullmatch(value):
        raise NoFit
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise NoFit from None


def read_datetime(value: Any) -> datetime.datetime:
    """RFC 3339 date-time, with a time zone (fractions of at most microseconds here)."""
    if type(value) is not str:
        raise NoFit
    found = _DATE_TIME.fullmatch(value)
    if found is None:
        if "T" in value.upper() and value[-1:] in "Zz0123456789" and "." in value:
            raise Unsure  # longer fractions: RFC 3339 allows them
        raise NoFit
    if int(found[3]) > 59 or (found[6] is not None and (int(found[6]) > 23 or int(found[7]) > 59)):
        raise Unsure if found[3] == "60" else NoFit  # a leap second is the checker's call
    try:
        parsed = datetime.datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
        parsed.astimezone(datetime.UTC)  # an instant outside the years 1 to 9999 is refused
    except (ValueError, OverflowError):
        raise NoFit from None
    return parsed


offsets = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(
    lambda m: datetime.timezone(datetime.timedelta(minutes=m))
)
aware = st.datetimes(datetime.datetime(2, 1, 1), datetime.datetime(9998, 12, 31), timezones=offsets)
BAD_DATES = [
    "",
    "2024-02-30",
    "2023-02-29",
    "2024-1-1",
    "20240101",
    "2024-13-01",
    "tomorrow",
    "2024-01-01T00:00:00Z",
]
BAD_DATETIMES = ["", "2024-01-01", "2024-01-01T00:00:00", "2024-01-01 00:00", "2024-02-30T00:00:00Z", "now"]

DATE = FieldKind(
    datetime.date,
    st.dates().map(datetime.date.isoformat),
    st.sampled_from(BAD_DATES) | not_text,
    read_date,
    st.dates(),
    label="date",
)
DATETIME = FieldKind(
    datetime.datetime,
    aware.map(lambda d: d.isoformat()) | aware.map(lambda d: d.isoformat().replace("+00:00", "Z")),
    st.sampled_from(BAD_DATETIMES) | not_text,
    read_datetime,
    aware,
    label="datetime",
)


def number_field(whole: bool, bounds: tuple[Any, Any], how: str) -> FieldKind:
    lo, hi = bounds
    base: Any = int if whole else float
    annotation: Any = base
    if bounds != (None, None):
        metadata = pydantic.Field(ge=lo, le=hi) if how == "pydantic" else at.Interval(ge=lo, le=hi)
        annotation = Annotated[base, metadata]

    def read(value: Any) -> Any:
        if type(value) not in (int, float):
            raise NoFit
        if type(value) is int and abs(value) > MAX_SAFE:
            raise NoFit  # docs/deployment.md: beyond what JSON carries exactly everywhere
        if whole:
            if not value.is_integer() if type(value) is float else False:
                raise NoFit
            value = int(value)
            if abs(value) > MAX_SAFE:
                raise NoFit
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise NoFit
        return value if whole else float(value)

    low = lo if lo is not None else -MAX_SAFE
    high = hi if hi is not None else MAX_SAFE
    fitting: st.SearchStrategy[Any]
    defaults: st.SearchStrategy[Any]
    if whole:
        fitting = st.integers(low, high) | st.integers(low, high).map(float)
        defaults = st.integers(low, high)
        wrong = not_text.filter(lambda v: type(v) not in (int, float)) | st.sampled_from(
            ["1", 0.5, MAX_SAFE + 1, -MAX_SAFE - 1, 2.0**60, 2**63]
        )
    else:
        fitting = st.floats(low, high, allow_nan=False, allow_infinity=False)
        if math.ceil(low) <= math.floor(high):  # whole numbers within the bounds, sent as integers
            fitting |= st.integers(max(math.ceil(low), -MAX_SAFE), min(math.floor(high), MAX_SAFE))
        defaults = st.floats(low, high, allow_nan=False, allow_infinity=False)
        wrong = not_text.filter(lambda v: type(v) not in (int, float)) | st.sampled_from(["1.5", 2**60])
    if lo is not None:
        wrong |= st.just(lo - 1)
    if hi is not None:
        wrong |= st.just(hi + 1)
    return FieldKind(
        annotation,
        fitting.filter(lambda v: not _reads_not(read, v)),
        wrong.filter(lambda v: _reads_not(read, v)),
        read,
        defaults,
        label="integer" if whole else "number",
    )


BOOLEAN = FieldKind(
    bool,
    st.booleans(),
    st.sampled_from([0, 1, "true", "yes", [], {}]),
    read_bool,
    st.booleans(),
    label="boolean",
)

select_values = st.lists(shown_text, min_size=1, max_size=5, unique=True)


def select_field(
    values: list[str], how: str, multi: bool, counts: tuple[int | None, int | None]
) -> FieldKind:
    choice: Any
    convert: Callable[[str], Any]
    if how == "enum":
        cls = enum.Enum("Option", [(f"O{i}", value) for i, value in enumerate(values)])  # type: ignore[misc]
        choice, convert = cls, cls
    elif how == "literal":
        choice, convert = Literal[tuple(values)], str
    else:  # str with titled Choices
        choice, convert = Annotated[str, Choices({value: f"Option {value}" for value in values})], str
    if not multi:

        def read_one(value: Any) -> Any:
            if type(value) is not str or value not in values:
                raise NoFit
            return convert(value)

        wrong = st.text(max_size=4).filter(lambda v: v not in values) | not_text
        return FieldKind(
            choice,
            st.sampled_from(values),
            wrong,
            read_one,
            st.sampled_from(values).map(convert),
            label=f"select:{how}",
        )
    lo, hi = counts
    hi = None if hi is None else min(hi, len(values))
    lo = None if lo is None else min(lo, hi if hi is not None else len(values))
    annotation: Any = list[choice]
    if (lo, hi) != (None, None):
        annotation = Annotated[list[choice], at.Len(lo or 0, hi)]

    def read_many(value: Any) -> list[Any]:
        if type(value) is not list or any(type(v) is not str or v not in values for v in value):
            raise NoFit
        if len(set(value)) != len(value):
            raise NoFit
        if (lo is not None and len(value) < lo) or (hi is not None and len(value) > hi):
            raise NoFit
        return [convert(v) for v in value]

    picks = st.lists(
        st.sampled_from(values), unique=True, min_size=lo or 0, max_size=hi if hi is not None else len(values)
    )
    wrong = (
        st.sampled_from(values)  # one choice, not a list of them
        | st.just([values[0], values[0]])
        | st.lists(st.text(max_size=3).filter(lambda v: v not in values), min_size=1, max_size=2)
        | st.just([1])
    )
    return FieldKind(
        annotation,
        picks,
        wrong.filter(lambda v: _reads_not(read_many, v)),
        read_many,
        picks.map(lambda chosen: [convert(v) for v in chosen]),
        label=f"multiselect:{how}",
    )


def optional_field(kind: FieldKind) -> FieldKind:
    return dataclasses.replace(
        kind,
        annotation=kind.annotation | None,
        defaults=st.none() | kind.defaults,
        nullable=True,
        label=f"{kind.label}?",
    )


lengths = number_bounds(st.integers(0, 6))
field_kinds_base = st.one_of(
    st.builds(text_field, lengths, st.sampled_from(["plain", "annotated", "pydantic"])),
    st.just(pooled_field(Email, GOOD_EMAILS, BAD_EMAILS, "email")),
    st.just(pooled_field(Url, GOOD_URIS, BAD_URIS, "uri")),
    st.just(DATE),
    st.just(DATETIME),
    st.builds(
        number_field,
        st.just(True),
        number_bounds(st.integers(-1000, 1000)),
        st.sampled_from(["at", "pydantic"]),
    ),
    st.builds(
        number_field,
        st.just(False),
        number_bounds(st.floats(-1e6, 1e6, allow_nan=False)),
        st.sampled_from(["at", "pydantic"]),
    ),
    st.just(BOOLEAN),
    st.builds(
        select_field, select_values, st.sampled_from(["enum", "literal", "choices"]), st.just(False), lengths
    ),
    st.builds(
        select_field, select_values, st.sampled_from(["enum", "literal", "choices"]), st.just(True), lengths
    ),
)
field_kinds = st.one_of(field_kinds_base, field_kinds_base.map(optional_field))


def encode(value: Any) -> Any:
    """A Python default as the form carries it (docs/server-guide.md: pre-filled)."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, list):
        return [encode(v) for v in value]
    return value


@dataclass(frozen=True)
class FormField:
    name: str
    kind: FieldKind
    default: Any = _MISSING  # the Python default (None, when the field is optional without one)

    @property
    def optional(self) -> bool:
        """The form may leave it out: a default, or ``T | None``."""
        return self.default is not _MISSING or self.kind.nullable


@dataclass(frozen=True)
class Form:
    cls: Any
    fields: list[FormField]
    source: str

    def expect(self, content: Any) -> Any:
        """The data the handler should get for accepted ``content``; NoFit or Unsure otherwise."""
        if type(content) is not dict:
            raise NoFit
        unsure = False
        values: dict[str, Any] = {}
        names = {f.name for f in self.fields}
        if not content.keys() <= names:
            raise NoFit
        for f in self.fields:
            value = content.get(f.name)
            if value is None and f.name in content and not f.optional:
                raise NoFit  # null is no value for a required field
            if value is None:  # left out (null counts as left out for an optional field)
                if not f.optional:
                    raise NoFit
                if f.default is not _MISSING and f.default is not None:
                    values[f.name] = f.kind.read(encode(f.default))
                elif self.source != "typeddict" or (f.kind.nullable and f.default is _MISSING):
                    values[f.name] = None
                continue
            try:
                values[f.name] = f.kind.read(value)
            except Unsure:
                unsure = True
        if unsure:
            raise Unsure
        if self.source == "typeddict":
            return values
        if self.source == "pydantic":
            return self.cls.model_validate(values)
        return self.cls(**values)

    def content(self) -> st.SearchStrategy[dict[str, Any]]:
        """Answers that fit, optional fields sometimes left out or null."""
        left_out = st.sampled_from(["absent", "null"])
        return st.fixed_dictionaries(
            {f.name: f.kind.fitting for f in self.fields if not f.optional},
            optional={
                f.name: f.kind.fitting | left_out.map(lambda _: None) for f in self.fields if f.optional
            },
        )


@st.composite
def forms(draw: st.DrawFn) -> Form:
    source = draw(st.sampled_from(["dataclass", "typeddict", "pydantic"]))
    fields = []
    for i, kind in enumerate(draw(st.lists(field_kinds, min_size=1, max_size=5))):
        default: Any = _MISSING
        if source == "typeddict":
            if draw(st.booleans()):
                default = None  # NotRequired: may be left out, no default
        elif draw(st.booleans()):
            default = draw(kind.defaults)
        fields.append(FormField(f"f{i}", kind, default))
    return Form(build_class(source, fields), fields, source)


def build_class(source: str, fields: list[FormField]) -> Any:
    if source == "typeddict":
        return make_typeddict(
            "Asked",
            {
                f.name: typing.NotRequired[f.kind.annotation]
                if f.default is not _MISSING
                else f.kind.annotation
                for f in fields
            },
        )
    if source == "pydantic":
        spec: dict[str, Any] = {}
        for f in fields:
            if f.default is _MISSING:
                spec[f.name] = (f.kind.annotation, ...)
            elif isinstance(f.default, list):
                spec[f.name] = (f.kind.annotation, pydantic.Field(default_factory=_copier(f.default)))
            else:
                spec[f.name] = (f.kind.annotation, f.default)
        return pydantic.create_model("Asked", **spec)
    specs: list[Any] = []
    for f in fields:
        if f.default is _MISSING:
            specs.append((f.name, f.kind.annotation))
        elif isinstance(f.default, list):
            specs.append((f.name, f.kind.annotation, dataclasses.field(default_factory=_copier(f.default))))
        else:
            specs.append((f.name, f.kind.annotation, dataclasses.field(default=f.default)))
    return dataclasses.make_dataclass("Asked", specs, kw_only=True)


@dataclass
class Asking:
    """A server whose tool asks ``form`` (key "form") then a yes/no (key "done"), and what its
    handler saw each time it ran."""

    app: Server
    seen: list[tuple[str, Any]]


def asking(form: Form) -> Asking:
    app = Server("forms", version="1", state_keys=KEYS)
    seen: list[tuple[str, Any]] = []

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Fill in the form", form.cls, key="form")
        if not answer.accepted:
            with pytest.raises(AttributeError):
                answer.data  # noqa: B018
            seen.append((answer.action, None))
            return str(answer.action)
        seen.append(("accept", answer.data))
        await ctx.elicit("Done?", key="done")
        return "done"

    return Asking(app, seen)


def a_content(form: Form) -> st.SearchStrategy[Any]:
    """Any content: fitting, one field wrong, one left out or null, an unknown field, or any JSON."""

    @st.composite
    def mutated(draw: st.DrawFn) -> dict[str, Any]:
        content = dict(draw(form.content()))
        f = draw(st.sampled_from(form.fields))
        how = draw(st.sampled_from(["wrong", "wrong", "drop", "null", "extra", "any", "text"]))
        if how == "wrong":
            content[f.name] = draw(f.kind.wrong)
        elif how == "text":
            content[f.name] = draw(st.text(max_size=24))
        elif how == "drop":
            content.pop(f.name, None)
        elif how == "null":
            content[f.name] = None
        elif how == "extra":
            content[draw(st.sampled_from(["extra", "f9"]) | st.text(max_size=4))] = draw(any_json)
        else:
            content[f.name] = draw(any_json)
        return content

    return st.one_of(
        form.content(), mutated(), mutated(), st.dictionaries(st.text(max_size=4), any_json, max_size=3)
    )


@FORM_SETTINGS
@given(st.data())
async def test_a_form_answer_reaches_the_handler_as_its_type_or_is_asked_again(data: st.DataObject) -> None:
    form = data.draw(forms(), label="form")
    event(f"form from a {form.source}")
    for f in form.fields:
        event(f"field {f.kind.label}")
    server = asking(form)
    with no_errors_logged():
        call = RawCall(server.app, "ask")
        first = await call.send()
        assert first["inputRequests"]["form"]["params"]["requestedSchema"] == form_spec(form.cls).schema
        answered = 0
        while True:
            content = data.draw(a_content(form), label="content")
            action = data.draw(st.sampled_from(["accept"] * 6 + ["decline", "cancel"]), label="action")
            if action != "accept":  # whatever content comes with it is ignored
                event(f"answer {action}")
                result = await call.send({"form": {"action": action, "content": content}})
                assert result["isError"] is False, result
                assert result["content"][0]["text"] == action
                assert server.seen == [(action, None)]
                return
            try:
                expected = form.expect(content)
                outcome = "fits"
            except NoFit:
                outcome = "refused"
            except Unsure:
                outcome = "unsure"
            event(f"answer {outcome}")
            result = await call.send({"form": {"action": "accept", "content": content}})
            answered += 1
            if outcome == "unsure":  # the checker decided: accepted (then "done" is asked) or not
                outcome = "fits" if "done" in result.get("inputRequests", {}) else "refused"
                if outcome == "fits":
                    expected = server.seen[-1][1]  # checked for its type below
            if outcome == "refused":
                if answered == 3:  # max_answer_attempts
                    assert result["isError"] is True, result
                    assert "was invalid 3 times" in result["content"][0]["text"], result
                    assert not server.seen
                    return
                question = result["inputRequests"]["form"]["params"]
                assert "The previous answer was not accepted" in question["message"], question
                wrong_field = [
                    f.name for f in form.fields if f.name in content and _field_is_wrong(form, f, content)
                ]
                assert all(name in question["message"] for name in wrong_field), (wrong_field, question)
                assert not server.seen
                continue
            break
        # Fitting: the handler got the data (fresh), asked "done"; answering that replays it and it
        # reads the same data back from the sealed state.
        assert set(result["inputRequests"]) == {"done"}, result
        final = await call.send({"done": {"action": "accept"}})
        assert final.get("isError") is False, final
        assert [action for action, _ in server.seen] == ["accept", "accept"]
        for _, got in server.seen:
            assert same(expected, got), (content, expected, got)
            _check_types(form, got)


def _field_is_wrong(form: Form, f: FormField, content: dict[str, Any]) -> bool:
    value = content[f.name]
    if value is None:
        return not f.optional
    try:
        f.kind.read(value)
    except NoFit:
        return True
    except Unsure:
        return False
    return False


def _check_types(form: Form, data: Any) -> None:
    """Every value is of its field's Python type, whatever the answer held."""
    for f in form.fields:
        if form.source == "typeddict":
            if f.name not in data:
                continue
            value = data[f.name]
        else:
            value = getattr(data, f.name)
        core = f.kind.label.rstrip("?")
        if value is None:
            assert f.kind.nullable or f.default is None, (f, value)
            continue
        wanted = {
            "text": str, "email": str, "uri": str, "date": datetime.date, "datetime": datetime.datetime,
            "integer": int, "number": float, "boolean": bool,
        }.get(core)  # fmt: skip
        if wanted is not None:
            assert type(value) is wanted, (f, value)


@FORM_SETTINGS
@given(st.data())
async def test_an_honest_client_answer_reaches_the_handler_as_its_type(data: st.DataObject) -> None:
    """The same through ``Client.connect`` and an answerer: the client checks the answer and fills
    in the defaults before it sends it; decline and cancel reach the handler as they are."""
    form = data.draw(forms(), label="form")
    action: Literal["accept", "decline", "cancel"] = data.draw(
        st.sampled_from(["accept", "accept", "accept", "decline", "cancel"]), label="action"
    )
    content = data.draw(form.content(), label="content")
    expected = form.expect(content) if action == "accept" else None
    event(f"{action} a form from a {form.source}")
    server = asking(form)

    def answer(question: FormQuestion) -> Answer:
        if question.key == "done":
            return Answer("accept")
        assert question.schema == form_spec(form.cls).schema
        return Answer(action, content if action == "accept" else None)

    with no_errors_logged():
        async with Client.connect(server.app, answerer=Script(form=answer, mode_names=["form"])) as client:
            result = await client.call_tool("ask")
    assert not result.is_error, result.text
    if action != "accept":
        assert result.text == action
        assert server.seen == [(action, None)]
        return
    assert result.text == "done"
    assert len(server.seen) == 2
    for _, got in server.seen:
        assert same(expected, got), (content, expected, got)
        _check_types(form, got)


@pytest.mark.parametrize(
    ("response", "complaint"),
    [
        ({"action": "maybe"}, "action must be one of accept, decline, cancel"),
        ({"action": ["accept"]}, "action must be one of accept, decline, cancel"),
        ({}, "action must be one of accept, decline, cancel"),
        ({"action": "accept", "content": ["a"]}, "content must be an object"),
        ({"action": "accept", "content": "f0"}, "content must be an object"),
    ],
)
async def test_a_broken_elicit_result_is_invalid_params(response: dict[str, Any], complaint: str) -> None:
    """docs/protocol.md: an ElicitResult that is not one ends the call with -32602."""
    form = Form(build_class("dataclass", [FormField("f0", BOOLEAN)]), [FormField("f0", BOOLEAN)], "dataclass")
    server = asking(form)
    with no_errors_logged():
        call = RawCall(server.app, "ask")
        await call.send()
        error = await call.error({"form": response})
    assert error.code == INVALID_PARAMS
    assert complaint in error.message
    assert not server.seen


# -- regressions the properties found ---------------------------------------------------------------


async def test_an_optional_argument_without_a_default_left_out_is_none() -> None:
    """``x: int | None`` (no default) is optional in the input schema, so a client may leave it out:
    the handler gets None. It used to be called without it and fail on its TypeError (logged
    with a traceback, "failed with an unexpected error"). (``x: Any`` without a default is
    required: test_an_argument_of_any_type_without_a_default_is_required.)"""
    app = Server("optional", version="1", state_keys=KEYS)

    @app.tool()
    async def maybe(count: int | None, label: Annotated[str | None, Description("x")]) -> str:
        return repr((count, label))

    @app.prompt()
    async def maybe_prompt(count: int | None) -> str:
        return repr(count)

    with no_errors_logged():
        async with Client.connect(app) as client:
            (tool,) = await client.list_tools()
            assert "required" not in tool["inputSchema"]
            result = await client.call_tool("maybe", {})
            assert not result.is_error, result.text
            assert result.text == "(None, None)"
            assert (await client.call_tool("maybe", {"count": 3})).text == "(3, None)"
            prompt = await client.get_prompt("maybe_prompt")
            assert prompt.messages[0]["content"]["text"] == "None"


def test_an_argument_type_pydantic_cannot_read_is_refused_naming_the_argument() -> None:
    """A type pydantic has no schema for used to escape registration as pydantic's own error
    (a RuntimeError naming neither the tool nor the argument)."""
    app = Server("opaque", version="1", state_keys=KEYS)

    async def connect(host: str, sock: socket.socket) -> str:
        return host

    with pytest.raises(TypeError, match=r"connect: argument 'sock' is annotated socket\.socket"):
        app.tool()(connect)


# -- arguments no property draws: nested deep, integers past 64 bits ---------------------------------


@dataclass
class Inner:
    x: int


def nested(levels: int) -> Any:
    """A value ``levels`` deep, the arguments object that holds it counted."""
    value: Any = 1
    for _ in range(levels - 1):
        value = [value]
    return value


async def call_deep(app: Server, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | McpError:
    """The result of a call, or its JSON-RPC error; by the client up to the 255 levels it encodes,
    by hand beyond."""
    try:
        if max(depth(value) for value in arguments.values()) < 250:
            async with Client.connect(app) as client:
                return (await client.call_tool(tool, arguments)).raw
        return await post(app, "tools/call", {"name": tool, "arguments": arguments})
    except McpClientError as exc:
        return McpError(exc.code, exc.message)
    except McpError as exc:
        return exc


def depth(value: Any) -> int:
    inner = value[0] if isinstance(value, list) and value else None
    return 1 + depth(inner) if inner is not None else 1


@pytest.mark.parametrize("levels", [1, 150, 200, 201, 250, 400, 401])
@pytest.mark.parametrize("typed", [False, True])
async def test_deep_arguments_run_or_are_refused_never_an_internal_error(levels: int, typed: bool) -> None:
    """docs/deployment.md: arguments nest at most 400 levels (-32602), 200 for a tool that pydantic
    reads (a tool error naming the limit); a typed argument that is not so deep is refused naming
    it, an ``Any`` one runs."""
    app = Server("deep", version="1", state_keys=KEYS)
    received: list[Any] = []

    @app.tool()
    async def take(anything: Any = None, numbers: list[list[int]] | None = None) -> str:
        received.append((anything, numbers))
        return "ran"

    @app.tool()
    async def take_typed(anything: Any = None, inner: Inner | None = None) -> str:
        received.append((anything, inner))
        return "ran"

    tool = "take_typed" if typed else "take"
    with no_errors_logged():
        for name in ("anything", "inner" if typed else "numbers"):
            received.clear()
            outcome = await call_deep(app, tool, {name: nested(levels)})
            if isinstance(outcome, McpError):
                assert levels > 400, outcome
                assert outcome.code == INVALID_PARAMS
                assert "nested at most 400 levels" in outcome.message
                continue
            text = outcome["content"][0]["text"]
            if typed and levels > 200:
                assert "nested at most 200 levels deep" in text, text
            elif name == "anything":
                assert outcome["isError"] is False, text
                assert received == [(nested(levels), None)]
            else:
                assert text.startswith(f"Invalid arguments for tool {tool!r}: argument "), text
                assert name in text
                assert not received


async def test_integers_past_64_bits_are_refused_whatever_the_parameter() -> None:
    """JSON integers the client cannot send (it refuses past 64 bits), sent by hand: the request
    is refused (-32602 naming where the integer is), for an ``int`` argument and a ``float`` one
    alike. orjson read them as floats, rounded: a ``float`` parameter took 10**30 as 1e30, and the
    same number one past 2**64 could reach a handler as another number."""
    app = Server("huge", version="1", state_keys=KEYS)
    received: list[Any] = []

    @app.tool()
    async def count(n: int, ratio: float = 0.0) -> str:
        received.append((n, ratio))
        return "ran"

    @app.tool()
    async def count_typed(n: Annotated[int, at.Ge(0)], ratio: float = 0.0) -> str:
        received.append((n, ratio))
        return "ran"

    with no_errors_logged():
        for tool in ("count", "count_typed"):
            for arguments, where in [({"n": 10**30}, "n"), ({"n": 1, "ratio": -(10**30)}, "ratio")]:
                with pytest.raises(McpError) as refused:
                    await post(app, "tools/call", {"name": tool, "arguments": arguments})
                assert refused.value.code == INVALID_PARAMS
                assert f" at params.arguments.{where} is outside -2**63 .. 2**64 - 1" in refused.value.message
            done = await post(app, "tools/call", {"name": tool, "arguments": {"n": 1, "ratio": -(2**63)}})
            assert done["isError"] is False, done
            assert received == [(1, -(2.0**63))], received  # never run with the refused ones
            assert type(received[0][1]) is float
            received.clear()


# -- annotations a tool cannot take --------------------------------------------------------------


class Opaque:
    """A class pydantic has no schema for."""


UNSUPPORTED: list[Any] = [
    socket.socket,
    Opaque,
    Callable[[int], int],
    Iterator[int],
    type,
    list[Opaque],
    dict[str, Callable[[], None]],
    Opaque | None,
    Annotated[Opaque, Description("an opaque thing")],
]


@SETTINGS
@given(st.lists(arg_types, max_size=3), st.sampled_from(UNSUPPORTED), st.data())
def test_an_argument_type_a_tool_cannot_take_is_refused_at_registration_naming_it(
    others: list[Arg], bad: Any, data: st.DataObject
) -> None:
    position = data.draw(st.integers(0, len(others)), label="position")
    params = [Param(f"a{i}", arg) for i, arg in enumerate(others)]
    params.insert(position, Param("odd_one", Arg(bad, st.nothing(), read_any)))
    handler = handler_for(params, False, [])
    app = Server("unsupported", version="1", state_keys=KEYS)
    with pytest.raises((TypeError, ValueError)) as info:
        app.tool(name="typed")(handler)
    assert "odd_one" in str(info.value), str(info.value)
    assert "typed" in str(info.value), str(info.value)


class IntLevel(enum.IntEnum):
    LOW = 1


OUTSIDE_THE_SUBSET: list[Any] = [
    Inner,
    dict[str, str],
    list[str],
    list[int],
    list[Inner],
    tuple[str, str],
    set[str],
    bytes,
    Any,
    int | str,
    datetime.time,
    IntLevel,
    Literal[1, 2],
    list[Literal["a"] | None],
    Annotated[int, at.Gt(0)],
    Annotated[str, pydantic.Field(pattern="^a")],
    Annotated[int, at.MinLen(1)],
    Annotated[bool, at.Ge(0)],
]


@SETTINGS
@given(
    st.lists(field_kinds, max_size=3),
    st.sampled_from(OUTSIDE_THE_SUBSET),
    st.sampled_from(["dataclass", "typeddict", "pydantic"]),
)
def test_a_form_field_outside_the_subset_is_named_before_the_first_call(
    others: list[FieldKind], bad: Any, source: str
) -> None:
    """docs/server-guide.md: a form is built when ctx.elicit runs; ``form_spec`` (what
    ``mcp-elicit check`` runs) names the field that does not fit beforehand."""
    fields = [FormField(f"f{i}", kind) for i, kind in enumerate(others)]
    fields.append(FormField("odd_one", FieldKind(bad, st.nothing(), st.nothing(), read_any, st.nothing())))
    cls = build_class(source, fields)
    with pytest.raises(SchemaBuildError) as info:
        form_spec(cls)
    assert info.value.field == "odd_one", info.value
    assert "odd_one" in str(info.value)
