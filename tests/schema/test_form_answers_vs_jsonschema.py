"""Form answers against the official JSON Schema validator: a bug hunt whose oracle is
``jsonschema`` (Draft 2020-12, format checking on) applied to the ``requestedSchema`` we publish.

Hypothesis builds form types at run time (dataclasses, pydantic models and dataclasses,
TypedDicts) with fields of every kind the subset has: text with minLength/maxLength and the four
formats, bounded integers and numbers (annotated_types or pydantic ``Field``), booleans, single
selects (``Literal``, ``Enum``, titled ``Choices``, legacy ``enumNames``), multi-selects with
minItems/maxItems, optional fields and defaults. It publishes each with ``form_spec(T).schema`` and
draws answers from that schema alone: ones built to fit, and values at and past every bound
(lengths counted in code points with astral characters and combining marks, integral floats,
booleans for numbers, titles in place of choices, duplicates, unknown keys, nulls...).

For each (schema, answer), jsonschema's verdict must be the verdict of

* the server (a real ``Server`` whose tool does ``await ctx.elicit("...", T)``, sent exactly the
  drawn ``content`` as hand-written JSON-RPC): accepted, with the handler's data equal to what was
  sent (dates as ``datetime.date``, enum members, floats for ``float``, defaults applied), or asked
  again naming every field at fault;
* our client (``Client.connect(app)`` with an answerer that returns exactly the drawn content):
  it checks an answer before sending it, and must neither refuse what the schema allows nor send
  what it forbids;

never an internal error, a traceback in the log or a hang.

Where the library departs from jsonschema on purpose, the departure is named here (a predicate
each), with the place that says so:

* documented (docs/server-guide.md, docs/deployment.md, ``mcp_elicit.schema`` docstrings):
  ``null`` for an optional field counts as leaving it out; whole numbers past ±(2**53 - 1) are
  refused; the ``email`` check is "practical rather than exhaustive" (jsonschema's is ``"@" in
  value``); ``uri`` refuses the javascript:, vbscript: and data: schemes and, for http(s), ws(s)
  and ftp, a missing host or a port past 65535, and tolerates more ``#`` in the fragment,
  ``[``/``]`` in the path, query and fragment, and a port that is not a number on other schemes;
  ``date-time`` refuses a leap second and instants outside the years 1 to 9999 in UTC; an
  unknown field, the same choice twice in a multi-select, a NUL in text and a date-time of more
  than 64 characters are refused, though the published schema allows them (the subset has no
  ``additionalProperties`` nor ``uniqueItems`` to say so); a message holding an integer past 64
  bits is refused whole (-32602), where orjson alone would read it rounded.

jsonschema checks ``uri`` and ``date-time`` only with ``rfc3987`` and ``rfc3339-validator``
installed, which the project's venv does not have: where they are missing, this file gives its
FormatChecker the grammars they check (RFC 3986's ``URI``, RFC 3339's ``date-time``), written out
below. (Compared with those packages on 50,000 drawn strings each, they differ only on the year
0000, which RFC 3339 has and rfc3339-validator refuses.)

Bugs found were regression tests marked ``xfail(strict=True)`` at the end of the file, until
fixed; the properties left out exactly those cases (``known_bug_*`` predicates, none now).

No ``from __future__ import annotations``: the annotations below are objects built at run time.
"""

import asyncio
import copy
import dataclasses
import datetime
import enum
import ipaddress
import json
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import annotated_types as at
import jsonschema
import pydantic
import pydantic.dataclasses
import pytest
import typing_extensions
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st

from mcp_elicit import Choices, Context, Format, Server
from mcp_elicit.client import Answer, Client, FormQuestion
from mcp_elicit.schema import SchemaBuildError, SecretFieldError, form_spec, validate_answer
from mcp_elicit.schema.check import compile_schema
from mcp_elicit.schema.errors import AnswerInvalid
from mcp_elicit.schema.validate import validate_compiled
from mcp_elicit.wire.errors import INVALID_PARAMS, McpError
from tests.helpers import RawCall, Script, no_errors_logged
from tests.strategies import past_64_bits

KEYS = ["form-answers-vs-jsonschema-secret-0123456789abcdef"]
MAX_SAFE = 2**53 - 1  # docs/deployment.md: the largest whole number an answer may hold
#: jsonschema's own format checks (a copy: checks added below stay in this file).
FORMAT_CHECKER = jsonschema.FormatChecker()
#: The subset's formats jsonschema checks by itself here (``uri`` and ``date-time`` need extras).
NATIVE_FORMATS = frozenset({"email", "uri", "date", "date-time"} & set(FORMAT_CHECKER.checkers))
make_typeddict: Any = typing_extensions.TypedDict
NotRequired: Any = typing_extensions.NotRequired
LIST: Any = list
RETRY = "The previous answer was not accepted: "
SETTINGS = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


# -- the RFC grammars jsonschema checks uri and date-time by, where its extras are missing ------------

_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = "!$&'()*+,;="
_PCT = "%[0-9A-Fa-f]{2}"
_PCHAR = f"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_RFC3986_URI = re.compile(
    rf"[A-Za-z][A-Za-z0-9+.\-]*:"  # scheme
    rf"(?://(?:(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*@)?"  # "//" [userinfo "@"]
    rf"(\[[^\]]*\]|(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*)"  # host: IP-literal or reg-name
    rf"(?::[0-9]*)?(?:/{_PCHAR}*)*"  # [":" port] path-abempty
    rf"|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?"  # path-absolute
    rf"|{_PCHAR}+(?:/{_PCHAR}*)*"  # path-rootless
    rf"|)"  # path-empty
    rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?"  # ["?" query] ["#" fragment]
)
_IP_FUTURE = re.compile(r"[Vv][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+")


def rfc3986_uri(value: object) -> bool:
    """RFC 3986's ``URI`` (section 3, appendix A): what jsonschema checks ``uri`` by with rfc3987."""
    if not isinstance(value, str):
        return True
    m = _RFC3986_URI.fullmatch(value)
    if m is None:
        return False
    host = m[1] or ""
    if not host.startswith("["):
        return True
    inside = host[1:-1]
    if _IP_FUTURE.fullmatch(inside):
        return True
    try:
        ipaddress.IPv6Address(inside)
    except ValueError:
        return False
    return "%" not in inside  # a zone id is RFC 6874's, not RFC 3986's


_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))"
)


def rfc3339_date_time(value: object) -> bool:
    """RFC 3339's ``date-time`` (section 5.6, with 5.7's day and leap-second limits): what
    jsonschema checks ``date-time`` by with rfc3339-validator."""
    if not isinstance(value, str):
        return True
    m = _RFC3339.fullmatch(value)
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(m[i]) for i in range(1, 7))
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    if not (1 <= month <= 12 and 1 <= day <= days[month - 1]) or hour > 23 or minute > 59 or second > 60:
        return False
    return not m[9] or (int(m[10]) <= 23 and int(m[11]) <= 59)


if "uri" not in NATIVE_FORMATS:
    FORMAT_CHECKER.checks("uri")(rfc3986_uri)
if "date-time" not in NATIVE_FORMATS:
    FORMAT_CHECKER.checks("date-time")(rfc3339_date_time)


# -- the fields of a form, as Python declares them -------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """A field type: its annotation, how the handler's value is made from a JSON value (``conv``),
    and Python defaults that fit it."""

    annotation: Any
    conv: str  # text, date, datetime, int, float, bool, choice, enum, multi, multi_enum
    defaults: st.SearchStrategy[Any]
    enum_cls: Any = None
    nullable: bool = False
    label: str = ""
    pydantic_ok: bool = True  # pydantic refuses fractional bounds on an int


# Code points that make lengths interesting: astral (one code point, two UTF-16 units, four UTF-8
# bytes), combining marks and joiners (one code point each, no glyph of their own), and others
# a validator could trip on. NUL is drawn apart (refused by design: see the module docstring).
UNITS = [
    "a",
    "Z",
    "0",
    " ",
    "é",
    "名",
    "😀",
    "𝔸",
    "\U0010fffd",
    "\u0301",
    "\u200d",
    "\u202e",
    "\t",
    "\n",
    "\ufeff",
]
code_points = st.sampled_from(UNITS)
plain_text = st.text(st.sampled_from("abcXYZ09é😀"), max_size=6)

GOOD = {
    "email": ["ada@example.com", "a.b+c@mail.example.org", "o'neil@example.ie", "é@ü.de",
              "x@xn--bcher-kva.example"],
    "uri": ["https://example.com/", "https://a.example/p?q=1#f", "mailto:ada@example.com",
            "urn:isbn:0451450523", "a:"],
    "date": ["2024-02-29", "0001-01-01", "9999-12-31", "2026-07-28"],
    "date-time": ["2026-07-28T09:30:00Z", "2024-02-29T23:59:59.123456+02:00", "2026-01-01t00:00:00z"],
}  # fmt: skip
BAD = {
    "email": ["", "ada", "ada@", "@example.com", "a b@example.com", "ada@@example.com", "a@b", "a@b.123",
              "a.@b.co", '"a b"@b.co', "a@[127.0.0.1]", "x@a_b.example", "<a@b.co>", "a@b.co\n"],
    "uri": ["", "no scheme", "://a", "1a:x", "https://exa mple.com", "http:foo", "http://", "http://a:99999",
            "javascript:alert(1)", "data:,x", "http://a%2Gb", "http://ü.de", "a:b#c#d", "http://a/[x]",
            "http://a/b?c=[1]", "foo://a:b", "git+ssh://git@host:owner/repo", "http://[::1%25eth0]/",
            "foo://h:[x]", "foo://u@h:[::1]", "http://user@:80", "HTTP://A", "http://[::1]"],
    "date": ["", "2024-02-30", "2023-02-29", "0000-01-01", "2024-1-01", "20240101", "2024-13-01",
             "2024-01-01T00:00:00Z", "\uff12\uff10\uff12\uff14-01-01", "2024-01-01\n", " 2024-01-01",
             "tomorrow"],
    "date-time": ["", "2024-01-01", "2024-01-01T00:00:00", "2024-01-01 00:00:00Z", "2024-01-01T24:00:00Z",
                  "2024-01-01T23:59:60Z", "2024-02-30T00:00:00Z", "2024-01-01T00:00Z",
                  "2024-01-01T00:00:00.Z",
                  "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "2024-01-01T00:00:00Z\n",
                  "2024-01-01T00:00:00+24:00", "2024-01-01T00:00:00+0100", "2024-01-01T00:00:00.1234567890Z"],
}  # fmt: skip

offsets = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(
    lambda m: datetime.timezone(datetime.timedelta(minutes=m))
)
aware = st.datetimes(datetime.datetime(2, 1, 1), datetime.datetime(9998, 12, 31), timezones=offsets)


def rfc3339(value: datetime.datetime, how: str) -> str:
    text = value.isoformat()
    if how == "Z" and value.utcoffset() == datetime.timedelta(0):
        text = text.removesuffix("+00:00") + "Z"
    elif how == "lower":
        text = text.replace("T", "t").replace("+00:00", "z")
    elif how == "nanos" and "." not in text[19:]:
        text = text[:19] + ".000000001" + text[19:]
    return text


date_times = st.builds(rfc3339, aware, st.sampled_from(["iso", "Z", "lower", "nanos"]))
two_digits = st.integers(0, 99).map(lambda i: f"{i:02d}")


@st.composite
def date_time_like(draw: st.DrawFn) -> str:
    """Near RFC 3339: every part at and past its limits, other separators, fractions, offsets."""
    year = draw(st.sampled_from(["0000", "0001", "2024", "2023", "1900", "2000", "9999"]))
    date = f"{year}-{draw(two_digits)}-{draw(two_digits)}"
    time = f"{draw(two_digits)}:{draw(two_digits)}:{draw(two_digits)}"
    fraction = draw(st.sampled_from(["", ".5", ".", ".123456789", ",5"]))
    offset = draw(st.sampled_from(["Z", "z", "+00:00", "-00:00", "-23:59", "+24:00", "+01:60", "+0100", ""]))
    return date + draw(st.sampled_from(["T", "t", " "])) + time + fraction + offset


uri_like = st.lists(
    st.sampled_from(
        [*"abAZ09-._~:/?#[]@!$&'()*+,;=% é", "%20", "%zz", "//", "://", "::1", "[::1]", "[v1.x]", "http",
         "https", "ftp", "foo", "urn", "mailto", "[::1%25x]", "[1.2.3.4]", ":65536", ":80"]
    ),
    max_size=12,
).map("".join)  # fmt: skip
email_like = st.lists(
    st.sampled_from([*"ab.-_+@é'\" ", "@", "..", "example", ".com", "xn--", "[1.2.3.4]", "ü", "1"]),
    max_size=8,
).map("".join)
date_like = st.builds(
    "{}-{}-{}".format,
    st.sampled_from(["0000", "0001", "2024", "2023", "1900", "9999", "20x4"]),
    two_digits,
    two_digits,
)
LIKE_FORMAT = {"email": email_like, "uri": uri_like, "date": date_like, "date-time": date_time_like()}
FITTING_FORMAT: dict[str, st.SearchStrategy[str]] = {
    "email": st.sampled_from(GOOD["email"]),
    "uri": st.sampled_from(GOOD["uri"]),
    "date": st.dates().map(datetime.date.isoformat) | st.sampled_from(GOOD["date"]),
    "date-time": date_times | st.sampled_from(GOOD["date-time"]),
}


def length_bounds(top: int) -> st.SearchStrategy[tuple[int | None, int | None]]:
    def ordered(pair: tuple[int | None, int | None]) -> tuple[int | None, int | None]:
        lo, hi = pair
        if lo is not None and hi is not None and lo > hi:
            return hi, lo
        return lo, hi

    side = st.none() | st.integers(0, top)
    return st.tuples(side, side).map(ordered)


def with_lengths(base: Any, lo: int | None, hi: int | None, how: str, extra: tuple[Any, ...] = ()) -> Any:
    """``base`` annotated with ``extra`` and the length bounds, spelled ``how``."""
    meta: list[Any] = list(extra)
    if (lo, hi) != (None, None):
        if how == "len":
            meta.append(at.Len(lo or 0, hi))
        elif how == "minmax":
            meta += [at.MinLen(lo)] if lo is not None else []
            meta += [at.MaxLen(hi)] if hi is not None else []
        elif how == "field":
            meta.append(pydantic.Field(min_length=lo, max_length=hi))
        else:
            meta.append(pydantic.StringConstraints(min_length=lo, max_length=hi))
    return Annotated[(base, *meta)] if meta else base


@st.composite
def text_kinds(draw: st.DrawFn) -> Kind:
    fmt = draw(st.sampled_from([None, None, None, "email", "uri", "date", "date-time"]))
    lo, hi = draw(length_bounds(6))
    if fmt is not None and hi is not None:
        hi = draw(st.sampled_from([max(lo or 0, 9), 10, 11, 20, 21, 26, 40]))
    how = draw(st.sampled_from(["len", "minmax", "field", "constraints"]))
    annotation = with_lengths(str, lo, hi, how, (Format(fmt),) if fmt else ())

    def fits(text: str) -> bool:
        return (lo is None or len(text) >= lo) and (hi is None or len(text) <= hi)

    if fmt is None:
        defaults = st.text(
            st.sampled_from("abcXYZ09é😀"), min_size=lo or 0, max_size=hi if hi is not None else 6
        )
    else:
        good = [g for g in GOOD[fmt] if fits(g)]
        defaults = st.sampled_from(good) if good else st.nothing()
    return Kind(annotation, "text", defaults, label=f"text:{fmt or 'plain'}")


DATE = Kind(datetime.date, "date", st.dates(), label="date")
DATETIME = Kind(datetime.datetime, "datetime", aware, label="datetime")
BOOL = Kind(bool, "bool", st.booleans(), label="boolean")


@st.composite
def number_kinds(draw: st.DrawFn) -> Kind:
    whole = draw(st.booleans())
    if whole:
        side: st.SearchStrategy[Any] = st.none() | st.integers(-20, 20) | st.sampled_from([-2.5, 0.5, 7.5])
    else:
        side = st.none() | st.sampled_from(
            [-2.5, -1, 0, 0.1, 1e-7, 1, 3.75, 100, 1e15, 1.8446744073709552e19]
        )
    lo, hi = draw(st.tuples(side, side))
    if lo is not None and hi is not None and lo > hi:
        lo, hi = hi, lo
    if whole and lo is not None and hi is not None and math.ceil(lo) > math.floor(hi):
        hi = None  # no whole number between them: a form that is refused when built
    base: Any = int if whole else float
    how = draw(st.sampled_from(["ge_le", "interval", "field"]))
    annotation = base
    if (lo, hi) != (None, None):
        meta: list[Any]
        if how == "ge_le":
            meta = [at.Ge(lo)] if lo is not None else []
            meta += [at.Le(hi)] if hi is not None else []
        elif how == "interval":
            meta = [at.Interval(ge=lo, le=hi)]
        else:
            meta = [pydantic.Field(ge=lo, le=hi)]
        annotation = Annotated[(base, *meta)]
    low = lo if lo is not None else min(-1000, (hi or 0) - 1000)
    high = hi if hi is not None else max(1000, (lo or 0) + 1000)
    if whole:
        defaults: st.SearchStrategy[Any] = st.integers(math.ceil(low), math.floor(high))
    else:
        defaults = st.floats(float(low), float(high), allow_nan=False)
    fractional = whole and any(isinstance(b, float) for b in (lo, hi))
    return Kind(
        annotation,
        "int" if whole else "float",
        defaults,
        label="integer" if whole else "number",
        pydantic_ok=not fractional,
    )


# Choice values: a few a client could confuse with numbers, booleans or another normalization.
OPTIONS = ["low", "normal", "High", "é", "😀", "a b", "1", "true", "null", "Zürich"]
choice_sets = st.lists(st.sampled_from(OPTIONS), min_size=1, max_size=5, unique=True)


def titles_for(values: list[str]) -> dict[str, str]:
    return {value: f"Option {i}: {value}" for i, value in enumerate(values)}


def make_enum(values: list[str], text_mixin: bool) -> Any:
    members = [(f"M{i}", value) for i, value in enumerate(values)]
    return enum.Enum("Choice", members, type=str) if text_mixin else enum.Enum("Choice", members)


@st.composite
def select_kinds(draw: st.DrawFn) -> Kind:
    values = draw(choice_sets)
    how = draw(
        st.sampled_from(
            ["literal", "enum", "str_enum", "choices", "legacy", "literal_choices", "enum_choices"]
        )
    )
    enum_cls = None
    if how in ("enum", "str_enum", "enum_choices"):
        enum_cls = make_enum(values, how == "str_enum")
    if how == "literal":
        annotation: Any = Literal[tuple(values)]
    elif how in ("enum", "str_enum"):
        annotation = enum_cls
    elif how == "choices":
        annotation = Annotated[str, Choices(titles_for(values))]
    elif how == "legacy":
        annotation = Annotated[str, Choices(titles_for(values), legacy=True)]
    elif how == "literal_choices":
        annotation = Annotated[Literal[tuple(values)], Choices(titles_for(values))]
    else:
        annotation = Annotated[enum_cls, Choices(titles_for(values))]
    defaults = st.sampled_from(values).map(enum_cls) if enum_cls is not None else st.sampled_from(values)
    return Kind(
        annotation, "enum" if enum_cls is not None else "choice", defaults, enum_cls, label=f"select:{how}"
    )


@st.composite
def multi_kinds(draw: st.DrawFn) -> Kind:
    values = draw(choice_sets)
    how = draw(st.sampled_from(["literal", "enum", "choices", "enum_choices"]))
    enum_cls = make_enum(values, draw(st.booleans())) if how in ("enum", "enum_choices") else None
    if how == "literal":
        item: Any = Literal[tuple(values)]
    elif how == "enum":
        item = enum_cls
    elif how == "choices":
        item = Annotated[str, Choices(titles_for(values))]
    else:
        item = Annotated[enum_cls, Choices(titles_for(values))]
    lo, hi = draw(length_bounds(len(values)))
    spelled = draw(st.sampled_from(["len", "minmax", "field"]))
    annotation = with_lengths(LIST[item], lo, hi, spelled)
    picks = st.lists(
        st.sampled_from(values), unique=True, min_size=lo or 0, max_size=hi if hi is not None else len(values)
    )
    defaults = picks.map(lambda chosen: [enum_cls(v) for v in chosen]) if enum_cls is not None else picks
    return Kind(
        annotation,
        "multi_enum" if enum_cls is not None else "multi",
        defaults,
        enum_cls,
        label=f"multiselect:{how}",
    )


def optional(kind: Kind) -> Kind:
    return dataclasses.replace(
        kind,
        annotation=kind.annotation | None,
        defaults=st.none() | kind.defaults,
        nullable=True,
        label=kind.label + "?",
    )


base_kinds = st.one_of(
    text_kinds(),
    st.just(DATE),
    st.just(DATETIME),
    number_kinds(),
    st.just(BOOL),
    select_kinds(),
    multi_kinds(),
)
kinds = st.one_of(base_kinds, base_kinds.map(optional))

# Wire names a TypedDict may have (any text): spaces, other scripts, JSON pointer escapes.
ODD_NAMES = ["first name", "ünïcode", "名前", "a-b", "x.y", "a/b", "~0", "$ref", "Zürich"]


@dataclass(frozen=True)
class FormField:
    name: str
    kind: Kind
    default: Any = MISSING  # Python default; for a TypedDict: NotRequired when not MISSING

    @property
    def leavable(self) -> bool:
        return self.default is not MISSING or self.kind.nullable


@dataclass(frozen=True)
class Form:
    cls: Any
    source: str
    fields: tuple[FormField, ...]
    schema: dict[str, Any]


def _factory(value: Any) -> Callable[[], Any]:
    return lambda: copy.copy(value)


def build_class(source: str, fields: list[FormField]) -> Any:
    if source == "typeddict":
        return make_typeddict(
            "Asked",
            {
                f.name: NotRequired[f.kind.annotation] if f.default is not MISSING else f.kind.annotation
                for f in fields
            },
        )
    if source == "pydantic":
        spec: dict[str, Any] = {}
        for f in fields:
            if f.default is MISSING:
                spec[f.name] = (f.kind.annotation, ...)
            elif isinstance(f.default, list):
                spec[f.name] = (f.kind.annotation, pydantic.Field(default_factory=_factory(f.default)))
            else:
                spec[f.name] = (f.kind.annotation, f.default)
        return pydantic.create_model("Asked", **spec)
    specs: list[Any] = []
    for f in fields:
        if f.default is MISSING:
            specs.append((f.name, f.kind.annotation))
        elif isinstance(f.default, list):
            specs.append((f.name, f.kind.annotation, dataclasses.field(default_factory=_factory(f.default))))
        else:
            specs.append((f.name, f.kind.annotation, dataclasses.field(default=f.default)))
    cls = dataclasses.make_dataclass("Asked", specs, kw_only=True)
    return pydantic.dataclasses.dataclass(cls) if source == "pydantic_dataclass" else cls


@st.composite
def forms(draw: st.DrawFn) -> Form:
    source = draw(st.sampled_from(["dataclass", "pydantic", "pydantic_dataclass", "typeddict", "dict"]))
    fields: list[FormField] = []
    used: set[str] = set()
    for i, kind in enumerate(draw(st.lists(kinds, min_size=1, max_size=5))):
        name = f"f{i}"
        if source == "typeddict" and draw(st.integers(0, 3)) == 0:
            name = draw(st.sampled_from([n for n in ODD_NAMES if n not in used]))
        used.add(name)
        assume(kind.pydantic_ok or not source.startswith("pydantic"))
        default: Any = MISSING
        if source == "typeddict":
            default = None if draw(st.booleans()) else MISSING  # None here: NotRequired
        elif draw(st.booleans()):
            default = draw(kind.defaults)
        fields.append(FormField(name, kind, default))
    cls = build_class("dataclass" if source == "dict" else source, fields)
    try:
        schema = form_spec(cls).schema
    except SecretFieldError:  # a name or title the secret lint reads as a secret: not this test's matter
        assume(False)
        raise
    if source == "dict":  # the same form as a hand-written requestedSchema: the handler gets a dict
        cls = copy.deepcopy(schema)
    return Form(cls, source, tuple(fields), schema)


# -- answers, drawn from the published schema alone ------------------------------------------------


def _options(prop: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(values, titles) of a single or multi select."""
    source = prop.get("items", prop)
    if "enum" in source:
        return list(source["enum"]), list(prop.get("enumNames", []))
    branches = source.get("oneOf") or source.get("anyOf") or []
    return [b["const"] for b in branches], [b["title"] for b in branches]


def near_misses(values: list[str], titles: list[str]) -> list[Any]:
    """What a client may send instead of a choice: its title, another normalization or case, a
    number or boolean that reads like it."""
    out: list[Any] = [*titles, "", "LOW", "e\u0301", "low ", 1, 1.0, True, None]
    for value in values:
        out += [value.upper(), value + " ", unicodedata.normalize("NFD", value)]
    return [v for v in out if v not in values]


def text_of(units: list[str]) -> str:
    return "".join(units)


@st.composite
def text_values(draw: st.DrawFn, prop: dict[str, Any]) -> Any:
    lo, hi, fmt = prop.get("minLength"), prop.get("maxLength"), prop.get("format")
    sizes = {0, 1, 2, 7}
    for bound in (lo, hi):
        if bound is not None:
            sizes |= {max(bound - 1, 0), bound, bound + 1}
    size = draw(st.sampled_from(sorted(sizes)))
    how = draw(st.sampled_from(["units", "units", "format", "format", "wrong", "nul"]))
    if how == "units" or (how == "format" and fmt is None):
        return text_of(draw(st.lists(code_points, min_size=size, max_size=size)))
    if how == "format":
        assert fmt is not None
        return draw(st.sampled_from(GOOD[fmt] + BAD[fmt]) | FITTING_FORMAT[fmt] | LIKE_FORMAT[fmt])
    if how == "nul":
        return (
            text_of(draw(st.lists(code_points, min_size=max(size - 1, 0), max_size=max(size - 1, 0))))
            + "\x00"
        )
    return draw(st.sampled_from([0, 1, 2.5, True, False, None, [], {}, ["a"], {"a": "b"}]))


def fitting_text(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    lo, hi, fmt = prop.get("minLength"), prop.get("maxLength"), prop.get("format")

    def fits(text: str) -> bool:
        return (lo is None or len(text) >= lo) and (hi is None or len(text) <= hi)

    if fmt is not None:  # None when it does not fit the lengths: see contents()
        return FITTING_FORMAT[fmt].map(lambda text: text if fits(text) else None)
    return st.lists(code_points, min_size=lo or 0, max_size=hi if hi is not None else 8).map(text_of)


def number_values(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    whole = prop["type"] == "integer"
    lo, hi = prop.get("minimum"), prop.get("maximum")
    picks: list[Any] = [0, -0.0, 1, 1.0, 0.5, -1, True, False, "1", "1.0", None, [], {}, [1]]
    picks += [
        MAX_SAFE,
        MAX_SAFE + 1,
        -MAX_SAFE,
        -MAX_SAFE - 1,
        float(2**53),
        2**63 - 1,
        1e16,
        1e300,
        -1e300,
        5e-324,
    ]
    picks += [
        2**64 - 1,
        2**64,
        2**64 + 1,
        -(2**63),
        -(2**63) - 1,
        10**20,
        10**30,
    ]  # past 64 bits: sent by hand
    for bound in (lo, hi):
        if bound is not None:
            picks += [bound, float(bound), bound - 1, bound + 1, bound - 0.5, bound + 0.5]
            picks += [math.nextafter(float(bound), -math.inf), math.nextafter(float(bound), math.inf)]
            if isinstance(bound, float) and bound.is_integer():
                picks.append(int(bound))
    low = (lo if lo is not None else min(-50, (hi or 0) - 50)) - 3
    high = (hi if hi is not None else max(50, (lo or 0) + 50)) + 3
    near = st.integers(math.floor(low), math.ceil(high))
    return st.one_of(
        st.sampled_from(picks),
        near,
        near.map(float),
        st.floats(float(low), float(high), allow_nan=False) if not whole else near.map(lambda i: i + 0.25),
    )


def fitting_number(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    lo, hi = prop.get("minimum"), prop.get("maximum")
    low = lo if lo is not None else min(-1000, (hi or 0) - 1000)
    high = hi if hi is not None else max(1000, (lo or 0) + 1000)
    whole_numbers = st.integers(math.ceil(low), math.floor(high))
    if prop["type"] == "integer":
        return whole_numbers | whole_numbers.map(float)
    floats = st.floats(float(low), float(high), allow_nan=False)
    return floats | whole_numbers if math.ceil(low) <= math.floor(high) else floats


@st.composite
def multi_values(draw: st.DrawFn, prop: dict[str, Any]) -> Any:
    values, titles = _options(prop)
    lo, hi = prop.get("minItems"), prop.get("maxItems")
    how = draw(st.sampled_from(["pick", "pick", "sized", "duplicate", "stranger", "wrong"]))
    if how == "pick":
        return draw(st.lists(st.sampled_from(values), unique=True, max_size=len(values)))
    if how == "sized":
        sizes = sorted({max(b + d, 0) for b in (lo, hi) if b is not None for d in (-1, 0, 1)} | {0})
        size = draw(st.sampled_from(sizes))
        return draw(st.lists(st.sampled_from(values), min_size=size, max_size=size))  # may repeat
    if how == "duplicate":
        chosen = draw(st.lists(st.sampled_from(values), min_size=1, unique=True, max_size=len(values)))
        return [*chosen, draw(st.sampled_from(chosen))]
    if how == "stranger":
        chosen = draw(st.lists(st.sampled_from(values), unique=True, max_size=len(values)))
        odd = draw(st.sampled_from([*near_misses(values, titles), [values[0]]]))
        return [*chosen, odd]
    return draw(st.sampled_from([values[0], "", None, 1, True, {}, [[values[0]]]]))


def fitting_multi(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    values, _ = _options(prop)
    lo, hi = prop.get("minItems"), prop.get("maxItems")
    return st.lists(
        st.sampled_from(values), unique=True, min_size=lo or 0, max_size=hi if hi is not None else len(values)
    )


def any_value(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    t = prop["type"]
    if t == "array":
        return multi_values(prop)
    if t == "string" and ("enum" in prop or "oneOf" in prop):
        values, titles = _options(prop)
        return st.sampled_from(values) | st.sampled_from(near_misses(values, titles))
    if t == "string":
        return text_values(prop)
    if t == "boolean":
        return st.sampled_from([True, False, 0, 1, 1.0, "true", "false", "", None, [True]])
    return number_values(prop)


def fitting_value(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    t = prop["type"]
    if t == "array":
        return fitting_multi(prop)
    if t == "string" and ("enum" in prop or "oneOf" in prop):
        return st.sampled_from(_options(prop)[0])
    if t == "string":
        return fitting_text(prop)
    if t == "boolean":
        return st.booleans()
    return fitting_number(prop)


@st.composite
def contents(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    required = set(schema.get("required", []))
    content: dict[str, Any] = {}
    for name, prop in schema["properties"].items():
        modes = ["fit", "fit", "fit", "any"] + (["absent", "null"] if name not in required else [])
        mode = draw(st.sampled_from(modes))
        if mode == "fit":
            content[name] = draw(fitting_value(prop))
            if content[name] is None:  # no fitting value of this format has the lengths
                mode = "any"
        if mode == "any":
            content[name] = draw(any_value(prop))
        elif mode == "null":
            content[name] = None
    twist = draw(st.sampled_from(["none"] * 6 + ["drop", "null", "extra", "extra-like"]))
    if twist == "drop" and content:
        content.pop(draw(st.sampled_from(sorted(content))))
    elif twist == "null" and schema["properties"]:
        content[draw(st.sampled_from(sorted(schema["properties"])))] = None
    elif twist == "extra":
        content[draw(st.sampled_from(["extra", "f9", "", "F0", "_meta"]))] = draw(
            st.sampled_from([1, "x", None, True, []])
        )
    elif twist == "extra-like" and schema["properties"]:
        name = draw(st.sampled_from(sorted(schema["properties"])))
        content[draw(st.sampled_from([name.upper(), name + " ", unicodedata.normalize("NFD", name)]))] = (
            content.get(name)
        )
    return content


# -- the oracle: jsonschema, and the departures named in the module docstring ---------------------


@dataclass
class Verdict:
    """What the server and the client must do with an answer."""

    must_refuse: dict[str, str] = field(default_factory=dict)  # field (or unknown key) -> why
    may_refuse: dict[str, str] = field(default_factory=dict)  # a documented stricter check may refuse

    @property
    def allowed(self) -> bool:
        return not self.must_refuse


_VALIDATORS: dict[str, Any] = {}


def validator(schema: dict[str, Any]) -> Any:
    key = json.dumps(schema, sort_keys=True)
    found = _VALIDATORS.get(key)
    if found is None:
        jsonschema.Draft202012Validator.check_schema(schema)
        found = _VALIDATORS[key] = jsonschema.Draft202012Validator(schema, format_checker=FORMAT_CHECKER)
    return found


def documented_unsafe_integer(prop: dict[str, Any], value: Any) -> bool:
    """docs/deployment.md: a whole number in an answer past ±(2**53 - 1) makes it invalid (a JSON
    integer anywhere; an integral float where the field is an integer)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) > MAX_SAFE
    return (
        prop["type"] == "integer"
        and isinstance(value, float)
        and value.is_integer()
        and abs(value) > MAX_SAFE
    )


def by_design_nul(prop: dict[str, Any], value: Any) -> bool:
    """src/mcp_elicit/schema/rules.py (_check_text): NUL "breaks many stores", refused. Not in docs/."""
    return prop["type"] == "string" and isinstance(value, str) and "\x00" in value


def by_design_duplicate_choice(prop: dict[str, Any], value: Any) -> bool:
    """src/mcp_elicit/schema/rules.py (_check_multi): a choice "selected more than once" is refused;
    the subset has no uniqueItems to say so in the schema. Not in docs/."""
    if prop["type"] != "array" or not isinstance(value, list):
        return False
    texts = [v for v in value if isinstance(v, str)]
    return len(set(texts)) != len(texts)


_URI_PARTS = re.compile(
    r"^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?$", re.S
)  # RFC 3986 App. B
_WEB_SCHEMES = {"http", "https", "ws", "wss", "ftp"}


def documented_past_64_bits(value: Any) -> bool:
    """docs/deployment.md: a message holding an integer outside -2**63 .. 2**64 - 1 is refused
    whole (-32602), not read rounded (see test_an_integer_past_64_bits_is_refused_not_rounded)."""
    return past_64_bits(value)


PAST_64_BITS = "documented: past 64 bits, the message is refused"


def documented_uri_repair(value: str) -> str:
    """``value`` with what check_uri's docstring tolerates on purpose written the RFC 3986 way:
    more ``#`` in the fragment (%23), ``[``/``]`` in the path, query and fragment (%5B/%5D), and a
    port that is not a number on schemes other than http(s), ws(s) and ftp (dropped)."""
    m = _URI_PARTS.match(value)
    if m is None:
        return value

    def brackets(part: str) -> str:
        return part.replace("[", "%5B").replace("]", "%5D")

    out = f"{m[2]}:" if m[1] else ""
    if m[3] is not None:
        authority = m[4]
        userinfo, at_sign, hostport = authority.rpartition("@")
        if not hostport.startswith("[") and (m[2] or "").lower() not in _WEB_SCHEMES:
            host, colon, port = hostport.partition(":")
            if colon and not port.isdigit():
                hostport = host
        out += "//" + userinfo + at_sign + hostport
    out += brackets(m[5])
    if m[6] is not None:
        out += "?" + brackets(m[7])
    if m[8] is not None:
        out += "#" + brackets(m[9]).replace("#", "%23")
    return out


def documented_uri_tolerance(prop: dict[str, Any], value: Any) -> bool:
    return (
        prop.get("format") == "uri"
        and isinstance(value, str)
        and documented_uri_repair(value) != value
        and validator(prop).is_valid(documented_uri_repair(value))
    )


def documented_uri_strictness(value: str) -> bool:
    """What check_uri's docstring refuses in an RFC 3986 URI: the javascript:, vbscript: and data:
    schemes; for http(s), ws(s) and ftp, no ``//host``, or a port that is not 0 to 65535; and
    (limits.MAX_URI) more than 8192 characters."""
    m = _URI_PARTS.match(value)
    if m is None or len(value) > 8192:
        return True
    scheme = (m[2] or "").lower()
    if scheme in ("javascript", "vbscript", "data"):
        return True
    if scheme not in _WEB_SCHEMES:
        return False
    if m[4] is None:
        return True
    hostport = m[4].rpartition("@")[2]
    if hostport.startswith("["):
        host, port = hostport[: hostport.find("]") + 1], hostport[hostport.find("]") + 1 :].removeprefix(":")
    else:
        host, _, port = hostport.partition(":")
    return not host or (port != "" and not (port.isdigit() and int(port) <= 65535))


def by_design_long_date_time(value: str) -> bool:
    """src/mcp_elicit/schema/limits.py: MAX_DATETIME, 64 characters ("RFC 3339 allows long
    fractions; nobody needs them"). Not in docs/."""
    return len(value) > 64


def documented_format_strictness(prop: dict[str, Any], value: Any) -> bool:
    """A format value jsonschema takes that our check may refuse, as documented.

    ``email`` and ``uri``: formats.py's checks are "practical rather than exhaustive" and refuse
    what would surprise the server (jsonschema's ``email`` check is ``"@" in value``); only the
    plain addresses of ``GOOD`` must pass. ``date-time``: the package docstring and
    parse_datetime refuse a leap second and an instant outside the years 1 to 9999 in UTC (RFC
    3339 has year 0000 and :60); every other RFC 3339 date-time must pass. ``date``: both sides
    check RFC 3339's full-date, no leeway."""
    fmt = prop.get("format")
    if not isinstance(value, str) or fmt not in ("email", "uri", "date-time"):
        return False
    if fmt == "uri":
        return documented_uri_strictness(value)
    if fmt == "email":
        return value not in GOOD[fmt]
    m = _RFC3339.fullmatch(value)
    if m is None or by_design_long_date_time(value):
        return True  # not RFC 3339 (the jsonschema in use does not check date-time), or too long
    if m[6] == "60" or m[1] == "0000":
        return True
    try:
        read_datetime(value).astimezone(datetime.UTC)
    except (ValueError, OverflowError):
        return True
    return False


def judge(schema: dict[str, Any], content: dict[str, Any]) -> Verdict:
    """jsonschema's verdict on ``content`` against the published ``schema``, field by field, with
    the departures named in the module docstring."""
    props: dict[str, Any] = schema["properties"]
    required = set(schema.get("required", []))
    verdict = Verdict()
    # docs/server-guide.md "Invalid answers": null for an optional field counts as leaving it out.
    seen = {k: v for k, v in content.items() if not (v is None and k in props and k not in required)}
    js_bad = required - seen.keys()
    for name in js_bad:
        verdict.must_refuse[name] = "required"
    for name, value in seen.items():
        if name not in props:  # jsonschema takes it: the subset has no additionalProperties
            verdict.must_refuse[name] = "by design: unknown field"
            continue
        prop = props[name]
        errors = list(validator(prop).iter_errors(value))
        if errors:
            js_bad.add(name)
        if documented_past_64_bits(value):
            verdict.must_refuse[name] = PAST_64_BITS
        elif errors:
            if documented_uri_tolerance(prop, value):
                verdict.may_refuse[name] = "documented uri tolerance"
            else:
                verdict.must_refuse[name] = errors[0].message
        elif documented_unsafe_integer(prop, value):
            verdict.must_refuse[name] = "documented: past 2**53 - 1"
        elif by_design_nul(prop, value):
            verdict.must_refuse[name] = "by design: NUL"
        elif by_design_duplicate_choice(prop, value):
            verdict.must_refuse[name] = "by design: duplicate choice"
        elif documented_format_strictness(prop, value):
            verdict.may_refuse[name] = "documented: practical format check"
    # The field-by-field reading must be jsonschema's reading of the whole answer.
    assert validator(schema).is_valid(seen) == (not js_bad), (schema, content, js_bad)
    return verdict


# -- what the handler must get ---------------------------------------------------------------------


def read_datetime(text: str) -> datetime.datetime:
    """RFC 3339 date-time as the docs promise it: aware, fractions past microseconds cut."""
    m = _RFC3339.fullmatch(text)
    assert m is not None, text
    micro = int(((m[7] or "") + "000000")[:6])
    if m[8]:
        tz = datetime.UTC
    else:
        delta = datetime.timedelta(hours=int(m[10]), minutes=int(m[11]))
        tz = datetime.timezone(-delta if m[9] == "-" else delta)
    year, month, day, hour, minute, second = (int(m[i]) for i in range(1, 7))
    return datetime.datetime(year, month, day, hour, minute, second, micro, tz)


def read(kind: Kind, value: Any) -> Any:
    conv = kind.conv
    if conv == "date":
        return datetime.date.fromisoformat(value)
    if conv == "datetime":
        return read_datetime(value)
    if conv == "int":
        return int(value)
    if conv == "float":
        return float(value)
    if conv == "enum":
        return kind.enum_cls(value)
    if conv == "multi_enum":
        return [kind.enum_cls(v) for v in value]
    if conv == "multi":
        return list(value)
    return value


def expected_data(form: Form, content: dict[str, Any]) -> dict[str, Any]:
    """Attribute -> value the handler's data must hold; a TypedDict's absent keys are absent."""
    out: dict[str, Any] = {}
    if form.source == "dict":  # JSON values as sent (an integral float an integer), defaults applied
        for name, prop in form.schema["properties"].items():
            value = content.get(name)
            if value is not None:
                out[name] = int(value) if prop["type"] == "integer" else value
            elif "default" in prop:
                out[name] = prop["default"]
        return out
    for f in form.fields:
        value = content.get(f.name)
        if value is not None:
            out[f.name] = read(f.kind, value)
        elif form.source == "typeddict":
            if f.kind.nullable and f.default is MISSING:
                out[f.name] = None  # X | None without NotRequired: absent means None
        elif f.default is not MISSING:
            out[f.name] = f.default
        else:
            out[f.name] = None  # X | None without a default
    return out


def as_dict(form: Form, data: Any) -> dict[str, Any]:
    if form.source in ("typeddict", "dict"):
        assert type(data) is dict, data
        return data
    assert type(data) is form.cls, (type(data), form.cls)
    return {f.name: getattr(data, f.name) for f in form.fields}


def same(expected: Any, got: Any) -> bool:
    if isinstance(expected, enum.Enum):
        return got is expected
    if isinstance(expected, list):
        return type(got) is list and len(got) == len(expected) and all(map(same, expected, got))
    if isinstance(expected, datetime.datetime):
        return type(got) is datetime.datetime and got == expected and got.utcoffset() == expected.utcoffset()
    return type(got) is type(expected) and bool(got == expected)


def check_data(form: Form, content: dict[str, Any], data: Any) -> None:
    """The handler's data is what ``content`` says."""
    expected = expected_data(form, content)
    got = as_dict(form, data)
    assert expected.keys() == got.keys(), (expected, got)
    for name, value in expected.items():
        assert same(value, got[name]), (name, content, value, got[name])


# -- driving the server and the client -------------------------------------------------------------


@dataclass
class Asking:
    app: Server
    seen: list[Any]


def asking(form: Form) -> Asking:
    app = Server("oracle", version="1", state_keys=KEYS)
    seen: list[Any] = []

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Fill in the form", form.cls, key="form")
        if answer.accepted:
            seen.append(answer.data)
        return str(answer.action)

    return Asking(app, seen)


@dataclass
class Outcome:
    accepted: bool
    message: str = ""  # the retry's message when refused
    errors: dict[str, str] = field(default_factory=dict)  # the client's, when it refused
    data: Any = None


async def server_outcome(server: Asking, content: dict[str, Any]) -> Outcome:
    """Exactly ``content`` sent as the answer, by hand-written JSON-RPC."""
    call = RawCall(server.app, "ask")
    first = await call.send()
    assert first["resultType"] == "input_required", first
    before = len(server.seen)
    try:
        result = await asyncio.wait_for(call.send({"form": {"action": "accept", "content": content}}), 10)
    except McpError as exc:
        if exc.code != INVALID_PARAMS or not documented_past_64_bits(content):
            raise
        assert len(server.seen) == before
        return Outcome(False, message=str(exc))
    if result["resultType"] == "complete":
        assert result["isError"] is False, result
        assert result["content"][0]["text"] == "accept", result
        assert len(server.seen) == before + 1
        return Outcome(True, data=server.seen[-1])
    assert result["resultType"] == "input_required", result
    assert set(result["inputRequests"]) == {"form"}, result
    message = result["inputRequests"]["form"]["params"]["message"]
    assert RETRY in message, message
    assert len(server.seen) == before
    return Outcome(False, message=message)


async def client_outcome(server: Asking, content: dict[str, Any]) -> Outcome:
    """``Client.connect`` with an answerer that returns exactly ``content``: the client checks it
    before sending; a refusal comes back to the answerer as the question with ``errors``."""
    state: dict[str, Any] = {}

    def answer(question: FormQuestion) -> Answer:
        if question.errors:
            state["errors"] = dict(question.errors)
            return Answer("cancel")
        if RETRY in question.message:
            state["server_refused"] = question.message
            return Answer("cancel")
        return Answer("accept", copy.deepcopy(content))

    before = len(server.seen)
    script = Script(form=answer, mode_names=["form"])
    async with Client.connect(server.app, answerer=script) as client:
        result = await asyncio.wait_for(client.call_tool("ask"), 10)
    assert not result.is_error, result.text
    assert "server_refused" not in state, ("the client sent what the server refused", content, state)
    if "errors" in state:
        assert result.text == "cancel"
        return Outcome(False, errors=state["errors"])
    assert result.text == "accept", result.text
    assert len(server.seen) == before + 1
    return Outcome(True, data=server.seen[-1])


def named(message: str, name: str) -> bool:
    return f"{name}: " in message or f"'{name}'" in message


def check_outcome(form: Form, content: dict[str, Any], verdict: Verdict, outcome: Outcome, who: str) -> None:
    note(f"{who}: {outcome}")
    if outcome.accepted:
        assert verdict.allowed, f"the {who} took what the schema forbids: {verdict.must_refuse}"
        check_data(form, content, outcome.data)
        return
    assert verdict.must_refuse or verdict.may_refuse, f"the {who} refused what the schema allows: {outcome}"
    if who == "server" and PAST_64_BITS in verdict.must_refuse.values():
        # -32602 for the whole message, naming the integer and where it is.
        assert "is outside -2**63 .. 2**64 - 1" in outcome.message, outcome.message
        return
    for name in verdict.must_refuse:
        if who == "client":
            assert any(name == key or name in key for key in outcome.errors), (name, outcome.errors)
        elif re.fullmatch(r"[A-Za-z0-9_]+", name):  # an unknown key is shown escaped and cut short
            assert named(outcome.message, name), (name, outcome.message)


@SETTINGS
@given(st.data())
async def test_server_and_client_agree_with_jsonschema_on_the_published_schema(data: st.DataObject) -> None:
    form = data.draw(forms(), label="form")
    event(f"form from a {form.source}")
    for f in form.fields:
        event(f"field {f.kind.label}")
    jsonschema.Draft202012Validator.check_schema(form.schema)
    server = asking(form)
    with no_errors_logged():
        for _ in range(3):
            content = data.draw(contents(form.schema), label="content")
            verdict = judge(form.schema, content)
            event("allowed" if verdict.allowed else "forbidden")
            for why in {*verdict.must_refuse.values(), *verdict.may_refuse.values()}:
                event(
                    why
                    if why.startswith(("by design", "documented", "known", "required"))
                    else "jsonschema error"
                )
            try:
                check_outcome(form, content, verdict, await server_outcome(server, content), "server")
            except McpError as exc:  # never an error for an answer that is an object of JSON values
                raise AssertionError(f"JSON-RPC error {exc.code} for {content!r}: {exc}") from exc
        check_outcome(form, content, verdict, await client_outcome(server, content), "client")


# -- the four formats, one field at a time ---------------------------------------------------------

long_fraction = st.integers(50, 70).map(lambda n: "2026-07-28T09:30:00." + "1" * n + "Z")
format_answers: dict[str, st.SearchStrategy[Any]] = {
    fmt: st.sampled_from(GOOD[fmt] + BAD[fmt])
    | FITTING_FORMAT[fmt]
    | LIKE_FORMAT[fmt]
    | st.sampled_from([None, 1, True, []])
    for fmt in GOOD
}
format_answers["date-time"] |= long_fraction
format_answers["email"] |= st.integers(60, 70).map(lambda n: "a" * n + "@example.com")  # local part past 64
format_answers["email"] |= st.integers(230, 260).map(lambda n: "a@" + "b" * (n - 10) + ".example")


@st.composite
def format_forms(draw: st.DrawFn) -> tuple[str, Form]:
    fmt = draw(st.sampled_from(sorted(GOOD)))
    typed = {"date": datetime.date, "date-time": datetime.datetime}
    if fmt in typed and draw(st.booleans()):
        kind = DATE if fmt == "date" else DATETIME
    else:
        kind = Kind(Annotated[str, Format(fmt)], "text", st.nothing(), label=f"text:{fmt}")
    if draw(st.booleans()):
        kind = optional(kind)
    fields = [FormField("value", kind)]
    cls = build_class("dataclass", fields)
    return fmt, Form(cls, "dataclass", tuple(fields), form_spec(cls).schema)


@SETTINGS
@given(format_forms(), st.data())
async def test_format_answers_agree_with_jsonschema(made: tuple[str, Form], data: st.DataObject) -> None:
    """The formats get few answers of their own in the property above: here each answer is one
    format's, from the pools, the generators near each grammar and values past the length caps of
    formats.py (date-time 64, e-mail 254 and a local part of 64: documented there)."""
    fmt, form = made
    server = asking(form)
    with no_errors_logged():
        for _ in range(4):
            value = data.draw(format_answers[fmt], label="value")
            content = {"value": value}
            verdict = judge(form.schema, content)
            event(
                f"{fmt}: {'allowed' if verdict.allowed else 'forbidden'}, "
                f"may refuse: {bool(verdict.may_refuse)}"
            )
            check_outcome(form, content, verdict, await server_outcome(server, content), "server")
            try:
                validate_answer(form.schema, content, tolerant=True)
                client = Outcome(True, data=form_spec(form.cls).parse(content))
            except AnswerInvalid as exc:
                client = Outcome(False, errors=dict(exc.errors))
            check_outcome(form, content, verdict, client, "client")


# -- exclusive bounds: refused when building, checked by the client's tolerant reading -------------


@SETTINGS
@given(
    st.sampled_from([int, float]),
    st.sampled_from(["gt", "lt"]),
    st.integers(-5, 5),
    st.sampled_from(["annotated_types", "pydantic"]),
)
def test_an_exclusive_bound_is_refused_when_the_form_is_built(
    base: Any, key: str, bound: int, how: str
) -> None:
    """typemap.py: the subset has only inclusive minimum/maximum, so gt/lt are refused, naming the
    field, rather than published as bounds a client cannot see (which jsonschema would then not
    apply either)."""
    if how == "annotated_types":
        meta: Any = at.Gt(bound) if key == "gt" else at.Lt(bound)
    else:
        meta = pydantic.Field(gt=bound) if key == "gt" else pydantic.Field(lt=bound)
    cls = dataclasses.make_dataclass("Bounded", [("amount", Annotated[base, meta])])
    with pytest.raises(SchemaBuildError) as info:
        form_spec(cls)
    assert "amount" in str(info.value)
    assert "exclusive" in str(info.value)


numbers_near = st.one_of(
    st.integers(-12, 12),
    st.integers(-12, 12).map(float),
    st.sampled_from([0.5, -0.5, 2.5, 1e-9, -0.0, 5e-324, MAX_SAFE, MAX_SAFE + 1, True, "3", "2.5", None]),
    st.floats(-12, 12, allow_nan=False),
)


@st.composite
def tolerant_number_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """Number fields as other servers write them (the official SDK writes pydantic's gt, lt,
    multiple_of and Literal[1, 2] as they are)."""
    prop: dict[str, Any] = {"type": draw(st.sampled_from(["number", "integer"]))}
    if draw(st.integers(0, 3)) == 0:
        choices = st.integers(-5, 5) | (
            st.sampled_from([0.5, 2.5, -1.25]) if prop["type"] == "number" else st.nothing()
        )
        prop["enum"] = draw(st.lists(choices, min_size=1, max_size=4, unique=True))
        return {"type": "object", "properties": {"n": prop}, "required": ["n"]}
    bounds = st.integers(-10, 10) | st.sampled_from([-2.5, 0.5, 3.25, 1e-9])
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if draw(st.booleans()):
            prop[key] = draw(bounds)
    if draw(st.integers(0, 3)) == 0:
        prop["multipleOf"] = draw(st.integers(1, 4))  # whole steps: jsonschema's float division is no oracle
    return {"type": "object", "properties": {"n": prop}, "required": ["n"]}


@SETTINGS
@given(tolerant_number_schemas(), numbers_near)
def test_the_clients_tolerant_reading_of_number_fields_agrees_with_jsonschema(
    schema: dict[str, Any], value: Any
) -> None:
    """docs/client.md: a client reads a server's form tolerantly: exclusiveMinimum,
    exclusiveMaximum and multipleOf "are checked", and "a numeric enum is a choice sent back as
    the number". What the client's engine runs before sending (client/answering.py: the form of
    inputs.parse_elicit, validate_compiled, then to_wire) must neither refuse an answer jsonschema
    allows nor send one it forbids, apart from the documented cap on whole numbers."""
    prop = schema["properties"]["n"]
    if "minimum" in prop and "maximum" in prop and prop["minimum"] > prop["maximum"]:
        prop["maximum"] = prop["minimum"]
    if prop["type"] == "integer" and "enum" not in prop:
        low = max(prop.get("minimum", -1e9), prop.get("exclusiveMinimum", -1e9))
        high = min(prop.get("maximum", 1e9), prop.get("exclusiveMaximum", 1e9))
        assume(math.floor(high) >= math.ceil(low))  # the checker refuses an integer field with no answer
    form, problems = compile_schema(schema, tolerant=True)
    assert form is not None, problems
    allowed = validator(schema).is_valid({"n": value}) and not documented_unsafe_integer(prop, value)
    refused: dict[str, str] | None
    try:
        sent = form.to_wire(validate_compiled(form, {"n": value}))
    except AnswerInvalid as exc:
        refused = exc.errors
    else:
        refused = None
    if refused is not None:
        assert set(refused) == {"n"}, refused
        assert not allowed, f"the client refuses what the schema allows: {value!r}"
        return
    assert validator(schema).is_valid(sent), f"the client sends what the schema forbids: {sent!r}"
    assert not documented_unsafe_integer(prop, sent["n"]), sent
    if "enum" not in prop:  # an enum's choice may come as its text ("3"): the number goes out
        assert allowed, (value, sent)
        assert sent["n"] == value, sent
        assert type(sent["n"]) in (int, float), sent


# -- the departures kept by design ------------------------------------------------------------------


class Tag(enum.Enum):
    BUG = "bug"
    UX = "ux"


@dataclass
class Note:
    text: str
    tags: list[Tag] = field(default_factory=list)
    when: Annotated[str, Format("date-time")] | None = None


@pytest.mark.parametrize(
    ("content", "named_field"),
    [
        ({"text": "hi", "extra": 1}, "extra"),  # no additionalProperties in the subset
        ({"text": "hi", "tags": ["bug", "bug"]}, "tags"),  # no uniqueItems in the subset
        ({"text": "a\x00b"}, "text"),
        ({"text": "hi", "when": "2026-07-28T09:30:00." + "0" * 45 + "Z"}, "when"),  # 65 characters
    ],
)
async def test_by_design_a_server_refuses_answers_its_schema_allows(
    content: dict[str, Any], named_field: str
) -> None:
    """Answers jsonschema takes against the published form, which the server refuses (asking again,
    naming the field) on purpose, by src/ (validate.py, rules.py, limits.py) but not by docs/: the
    properties above hold them to that; this shows each once."""
    schema = form_spec(Note).schema
    assert validator(schema).is_valid(content)
    server = asking(Form(Note, "dataclass", (), schema))
    with no_errors_logged():
        outcome = await server_outcome(server, content)
    assert not outcome.accepted
    assert named(outcome.message, named_field), outcome.message


# -- regressions: what the hunt found ----------------------------------------------------------------


@dataclass
class Link:
    link: Annotated[str, Format("uri")]


async def _server_takes(cls: Any, content: dict[str, Any]) -> bool:
    server = asking(Form(cls, "dataclass", (), form_spec(cls).schema))
    with no_errors_logged():
        return (await server_outcome(server, content)).accepted


@pytest.mark.parametrize("uri", ["foo://h:[x]", "foo://u@h:[::1]", "ssh://host:]", "a://c:[["])
async def test_a_uri_with_a_bracket_after_the_host_is_refused(uri: str) -> None:
    """With rfc3987 installed, jsonschema's ``uri`` check refuses these (RFC 3986: ``port =
    *DIGIT``, and ``[``/``]`` are gen-delims allowed in an authority only around an IP literal).
    check_uri's docstring promises "[ and ] only around an IPv6 host in the authority" because a
    stray one can "change what the URI points at": urllib.parse.urlsplit reads
    ``foo://u@h:[::1]``'s host as ``::1`` (check_uri as ``h``) and raises ValueError on the others.
    The server took each as a ``uri`` answer, and the client sent it: check_uri looked for
    brackets in the user and the host, not in the port of a scheme it does not hold to a number."""
    with pytest.raises(AnswerInvalid):  # the client's check (ScriptedAnswerer, the engine) too
        validate_answer(form_spec(Link).schema, {"link": uri}, tolerant=True)
    assert not await _server_takes(Link, {"link": uri})


@pytest.mark.parametrize(
    "uri",
    [
        "http://[::1%25[]/",
        "http://[::1%25]/",
        "http://[::1%25:]:80/",
        "http://[::1%25;=]/",
        "http://[fe80::1%25eth0]/",
    ],
)
async def test_a_uri_with_a_zone_id_is_refused(uri: str) -> None:
    """RFC 3986's IP-literal is an IPv6 address or IPvFuture, without a zone; jsonschema's ``uri``
    (rfc3987) refuses every zone id. RFC 6874 later allows ``%25`` and a zone of unreserved or
    percent-encoded characters, at least one: even by it ``[::1%25]`` (empty zone), ``[::1%25:]``
    and ``[::1%25;=]`` (sub-delims in the zone) are wrong, and
    ``[::1%25[]`` puts a ``[`` inside the host. check_uri read the host with ipaddress, which takes
    any text after ``%``: it now refuses a zone, as RFC 3986 does (``[fe80::1%25eth0]`` too: a
    link-local address names no place a person could open)."""
    assert not rfc3986_uri(uri)
    with pytest.raises(AnswerInvalid):
        validate_answer(form_spec(Link).schema, {"link": uri}, tolerant=True)
    assert not await _server_takes(Link, {"link": uri})


@dataclass
class Amount:
    amount: Annotated[float, at.Le(1.8446744073709552e19)]  # the float 2**64


@pytest.mark.parametrize("sent", [2**64 + 1, 2**64, -(2**63) - 1, 10**40])
async def test_an_integer_past_64_bits_is_refused_not_rounded(sent: int) -> None:
    """docs/deployment.md: "a whole number in an answer" past ±(2**53 - 1) makes "the answer
    invalid (asked again)", and 2**64 - 1 is refused so. orjson read one past 64 bits as a float:
    2**64 + 1 reached rules._check_number as 2**64.0, inside this form's maximum (jsonschema
    refuses it), and the handler got another number than was sent. The message is refused whole
    now (-32602, naming the integer and where it is): it is never read rounded. Our client never sends such a
    number (it refuses it first); any other may."""
    schema = form_spec(Amount).schema
    assert not validator(schema).is_valid({"amount": 2**64 + 1})
    assert not await _server_takes(Amount, {"amount": 2**64 - 1})  # the cap, as documented
    server = asking(Form(Amount, "dataclass", (), schema))
    outcome = await server_outcome(server, {"amount": sent})
    assert not outcome.accepted
    shown = str(sent) if len(str(sent)) <= 40 else f"{str(sent)[:20]}...({len(str(sent))} digits)"
    assert outcome.message == (
        f"Invalid params: the integer {shown} at params.inputResponses.form.content.amount "
        "is outside -2**63 .. 2**64 - 1"
    )
    assert server.seen == []


@pytest.mark.parametrize(
    ("step", "value"),
    [(1, 123456789012.5), (1, 3.0000000001), (1, 1e-10), (5, 1e-9), (2, 5e-324), (3, -1e-320)],
)
def test_near_misses_of_a_whole_multiple_of_are_refused(step: int, value: float) -> None:
    """docs/client.md: the client's tolerant reading checks ``multipleOf``. JSON Schema: valid
    only if the division by it "results in an integer"; with a whole step a float division is
    exact for every true multiple, so no tolerance is needed. rules._is_multiple took anything
    within 1e-9 of a multiple (123456789012.5 of 1), and the client sent what the server's schema
    forbids; then it divided, and 5e-324 / 2 underflows to the whole 0.0: the remainder is exact."""
    schema = {
        "type": "object",
        "properties": {"n": {"type": "number", "multipleOf": step}},
        "required": ["n"],
    }
    assert not validator(schema).is_valid({"n": value})
    with pytest.raises(AnswerInvalid):
        validate_answer(schema, {"n": value}, tolerant=True)
