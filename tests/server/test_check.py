"""``Server.check()``: the forms a server's handlers ask with, built before anyone calls them.

Each problem it reports is the one ``ctx.elicit`` fails with on a real call (checked here by
making that call); the lines are found by the ``# at:`` markers in this file.
"""

from __future__ import annotations

import asyncio
import functools
import json
import types
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Generic, TypedDict, TypeVar

import pydantic

from mcp_elicit import Context, Server
from mcp_elicit.schema import NotSecret
from mcp_elicit.server.check import CheckResult, Problem, Unchecked
from tests.helpers import request

KEYS = ["server-check-tests-secret-0123456789abcdef"]
HERE = str(Path(__file__).resolve())
SOURCE = Path(__file__).read_text().splitlines()


def at(marker: str) -> int:
    """The line of this file that ends with ``# at: marker``."""
    (line,) = [i for i, text in enumerate(SOURCE, 1) if text.rstrip().endswith(f"# at: {marker}")]
    return line


@dataclass
class Address:
    city: str


@dataclass
class Trip:
    destination: str
    address: Address  # at: Trip.address
    nights: int = "two"  # type: ignore[assignment]  # at: Trip.nights


@dataclass
class Login:
    user: str
    password: str  # at: Login.password


class Outer:
    @dataclass
    class Inner:
        token: str  # at: Inner.token


class Aliased(pydantic.BaseModel):
    pin: str = pydantic.Field(alias="pinCode")  # at: Aliased.pin


class Fine(TypedDict):
    name: str


class Labelled(TypedDict):
    api_key_label: Annotated[str, NotSecret("a label, not the key")]


T = TypeVar("T")


class Box(pydantic.BaseModel, Generic[T]):
    item: T


CARD = {"type": "object", "properties": {"card": {"type": "string", "format": "credit-card"}}}


def server() -> Server:
    return Server("check", state_keys=KEYS)


def test_a_clean_server_has_no_problems() -> None:
    app = server()

    @app.tool()
    async def sign_up(ctx: Context) -> str:
        await ctx.elicit("Your name?", Fine)
        await ctx.elicit("Sure?")
        await ctx.elicit("Sure?", None)
        await ctx.elicit("Label?", schema=Labelled)
        await ctx.elicit("PIN?", Login, allow_secrets=["password"])
        await ctx.elicit("Count?", {"type": "object", "properties": {"n": {"type": "integer", "default": 1}}})
        await ctx.elicit("Boxed?", Box[int])
        return "ok"

    @app.tool()
    async def no_context(name: str) -> str:
        return name

    result = app.check()
    assert not result
    assert isinstance(result, CheckResult)
    assert result == []
    assert result.forms == 7
    assert result.unchecked == []
    assert result.handlers == {"tool": 2, "prompt": 0, "resource": 0}


def test_every_problem_of_every_handler_with_its_line() -> None:
    app = server()

    @app.tool()
    async def book(ctx: Context, city: str) -> str:
        await ctx.elicit("Where to?", Trip)  # at: book.trip
        await ctx.elicit("Card", CARD)  # at: book.card
        return city

    @app.prompt()
    async def sign_in(ctx: Context) -> str:
        await ctx.elicit("Sign in", schema=Login)  # at: sign_in.login
        return "x"

    @app.resource("tokens://{name}")
    async def token(name: str, ctx: Context) -> str:
        await ctx.elicit(
            "Token",
            Outer.Inner,
        )  # at: token.inner (the call's line is its first)
        await ctx.elicit("PIN", Aliased)  # at: token.aliased
        return name

    problems = app.check()
    assert [(p.line, p.kind, p.name, p.field) for p in problems] == [
        (at("book.trip"), "tool", "book", "address"),
        (at("book.trip"), "tool", "book", "nights"),
        (at("book.card"), "tool", "book", "card"),
        (at("sign_in.login"), "prompt", "sign_in", "password"),
        (at("token.inner (the call's line is its first)") - 3, "resource", "tokens://{name}", "token"),
        (at("token.aliased"), "resource", "tokens://{name}", "pinCode"),
    ]
    assert all(isinstance(p, Problem) and p.file == HERE for p in problems)
    assert [(p.field_file, p.field_line) for p in problems] == [
        (HERE, at("Trip.address")),
        (HERE, at("Trip.nights")),
        (None, None),  # a module-level dict: no literal in the call to read lines from
        (HERE, at("Login.password")),
        (HERE, at("Inner.token")),
        (HERE, at("Aliased.pin")),
    ]
    assert problems[0].message.startswith("field 'address': nested models are outside")
    assert problems[1].message == (
        "field 'nights': default 'two' does not fit the field: must be a whole number, got the text 'two'"
    )
    assert problems[2].message.startswith("/properties/card/format: unknown format 'credit-card'")
    assert problems[3].message.startswith("the form asks for secrets (field 'password'")
    assert str(problems[1]) == (
        f"{HERE}:{at('book.trip')}: tool 'book': {problems[1].message} (declared at line {at('Trip.nights')})"
    )


async def test_each_problem_is_what_the_call_fails_with() -> None:
    app = server()

    @app.tool()
    async def sign_in(ctx: Context) -> str:
        await ctx.elicit("Sign in", Login)
        return "x"

    (problem,) = app.check()
    call = request("tools/call", {"name": "sign_in", "arguments": {}})
    _, response = await app.respond(call)
    assert json.loads(response)["error"] == {"code": -32603, "message": f"Internal error: {problem.message}"}


def test_a_dict_literal_s_fields_have_their_lines() -> None:
    app = server()

    @app.tool()
    async def pay(ctx: Context) -> str:
        await ctx.elicit(
            "Pay",
            {
                "type": "object",
                "properties": {
                    "card_number": {"type": "string"},  # at: pay.card_number
                    "n": {"type": "integer", "default": "x"},  # at: pay.n
                },
            },
        )
        return "x"

    problems = app.check()
    assert [(p.field, p.field_line) for p in problems] == [
        ("n", at("pay.n")),
        ("card_number", at("pay.card_number")),
    ]
    assert problems[0].message == (
        "/properties/n/default: default 'x' does not fit the field: must be a whole number, got the text 'x'"
    )


def test_names_from_the_module_from_a_closure_and_behind_a_decorator() -> None:
    app = server()

    def logged(fn: Any) -> Any:
        @functools.wraps(fn)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            return await fn(*args, **kwargs)

        return wrapper

    @dataclass
    class LocalForm:  # a class of the enclosing function, which the handler closes over
        secret: str  # at: LocalForm.secret

    @app.tool()
    @logged
    async def wrapped(ctx: Context) -> str:
        await ctx.elicit("Login", Login)
        await ctx.elicit("Local", LocalForm)
        return "x"

    problems = app.check()
    assert [(p.name, p.field, p.field_line) for p in problems] == [
        ("wrapped", "password", at("Login.password")),
        ("wrapped", "secret", at("LocalForm.secret")),
    ]


def _refuse(name: str) -> Any:
    raise RuntimeError(f"no {name} here")


lazy = types.ModuleType("lazy")
lazy.__getattr__ = _refuse  # type: ignore[attr-defined]  # a module whose names are made on access


def test_code_of_the_server_that_fails_during_the_check_is_a_note() -> None:
    app = server()

    @app.tool()
    async def from_lazy(ctx: Context) -> str:
        await ctx.elicit("Lazy", lazy.Form)  # at: lazy
        await ctx.elicit("Then", Login)  # at: after lazy
        return "x"

    @app.tool()
    async def sign_in(ctx: Context) -> str:
        await ctx.elicit("Sign in", Login)  # at: sign_in
        return "x"

    result = app.check()
    # The other forms are still checked.
    assert [(p.name, p.line) for p in result] == [("from_lazy", at("after lazy")), ("sign_in", at("sign_in"))]
    (unchecked,) = result.unchecked
    assert (unchecked.name, unchecked.line) == ("from_lazy", at("lazy"))
    assert unchecked.reason == "the check failed on it (RuntimeError: no Form here)"


def test_what_cannot_be_built_without_running_is_reported_as_not_checked() -> None:
    app = server()
    names = ["password"]

    @app.tool()
    async def dynamic(ctx: Context, pick: bool) -> str:
        form = Trip if pick else Login
        await ctx.elicit("Local", form)  # at: dynamic.local
        await ctx.elicit("Built", pydantic.create_model("Made", x=(int, ...)))  # at: dynamic.call
        await ctx.elicit("Allowed", Login, allow_secrets=names)  # at: dynamic.allow
        await ctx.elicit("Dict", {"type": "object", "properties": {pick: {}}})  # at: dynamic.dict
        await ctx.elicit(*("Spread", Login))  # at: dynamic.star
        await ctx.elicit("Missing", Nowhere)  # type: ignore[name-defined]  # noqa: F821  # at: dynamic.missing
        return "x"

    result = app.check()
    assert result == []
    assert result.forms == 0
    assert [(u.line, u.reason) for u in result.unchecked] == [
        (at("dynamic.local"), "the form is 'form', a name the handler sets itself"),
        (
            at("dynamic.call"),
            "the form (pydantic.create_model('Made', x=(int, .…) is made when the handler runs",
        ),
        (at("dynamic.allow"), "allow_secrets is not a literal list of names"),
        (at("dynamic.dict"), "the schema dict is built from names, not constants only"),
        (at("dynamic.star"), "the arguments are passed with * or **"),
        (at("dynamic.missing"), "the form is 'Nowhere', which the module does not define"),
    ]
    assert all(
        isinstance(u, Unchecked) and u.kind == "tool" and u.name == "dynamic" for u in result.unchecked
    )
    assert str(result.unchecked[0]) == (
        f"{HERE}:{at('dynamic.local')}: tool 'dynamic': not checked: the form is 'form', a name the "
        "handler sets itself"
    )


def test_a_local_name_that_shadows_a_module_one_is_not_taken_for_it() -> None:
    app = server()

    @app.tool()
    async def shadow(ctx: Context) -> str:
        Login = Fine
        await ctx.elicit("Fine in fact", Login)
        return "x"

    result = app.check()
    assert result == []
    assert [u.reason for u in result.unchecked] == ["the form is 'Login', a name the handler sets itself"]


def test_a_handler_without_source_is_a_problem_not_a_note() -> None:
    """Nothing of it was read, so ``assert not app.check()`` must not pass: it used to return []
    with a note in ``unchecked`` only. (A handler without a Context asks nothing: no problem.)"""
    app = server()
    namespace: dict[str, Any] = {"Context": Context, "Login": Login}
    exec(  # handlers whose source no file holds
        "async def generated(ctx: Context) -> str:\n    await ctx.elicit('x', Login)\n    return 'x'\n"
        "async def plain(name: str) -> str:\n    return name\n",
        namespace,
    )
    app.tool()(namespace["generated"])
    app.tool()(namespace["plain"])
    result = app.check()
    assert result
    assert [(p.file, p.line, p.kind, p.name) for p in result] == [("<string>", 1, "tool", "generated")]
    assert result[0].message == (
        "not checked: the source of generated is not available (defined in a REPL or by exec?): "
        "define it in a file to have it checked"
    )
    assert result.unchecked == []


def test_a_coroutine_method_of_the_context_not_awaited_is_a_problem() -> None:
    """``answer = ctx.elicit(...)`` without ``await`` failed at the call (the coroutine has no
    ``accepted``), and one whose result is ignored asked nobody; the check said "no problems".
    Named with the handler's own parameter name; a coroutine awaited later, or handed to
    ``asyncio.gather`` or ``create_task``, is fine."""
    app = server()

    @app.tool()
    async def book_trip(trip: Context) -> str:
        await trip.elicit("Your name?", Fine)
        answer = trip.elicit("Sure?", Fine)  # at: unawaited.kept
        trip.log("info", "booking")  # type: ignore[unused-coroutine]  # at: unawaited.dropped
        key = trip.secret("api_key", "Your key").upper()  # type: ignore[attr-defined]  # at: unawaited.used
        await asyncio.gather(trip.elicit("a"), trip.elicit("b"))
        task = asyncio.create_task(trip.elicit("c"))
        later = trip.elicit("d")
        await later
        await asyncio.gather(*[trip.elicit(q) for q in "xy"], task)
        ask: Callable[[], Awaitable[Any]] = lambda: trip.elicit("e")  # noqa: E731

        def ask_again() -> Awaitable[Any]:
            return trip.elicit("f")  # a helper hands it back to be awaited

        await ask()
        await ask_again()
        return f"{answer.accepted} {key}"  # type: ignore[attr-defined]

    result = app.check()
    assert [(p.line, p.name, p.message) for p in result] == [
        (
            at("unawaited.kept"),
            "book_trip",
            "trip.elicit(...) is not awaited: write `await trip.elicit(...)`",
        ),
        (at("unawaited.dropped"), "book_trip", "trip.log(...) is not awaited: write `await trip.log(...)`"),
        (
            at("unawaited.used"),
            "book_trip",
            "trip.secret(...) is not awaited: write `await trip.secret(...)`",
        ),
    ]
    assert str(result[0]) == (
        f"{HERE}:{at('unawaited.kept')}: tool 'book_trip': trip.elicit(...) is not awaited: write "
        "`await trip.elicit(...)`"
    )
    assert result.forms == 9  # the forms are checked all the same


async def test_a_subscripted_form_is_built_too_and_a_list_of_forms_is_refused() -> None:
    app = server()

    @app.tool()
    async def many(ctx: Context) -> str:
        await ctx.elicit("Boxed", Box[Login])  # at: many.box
        await ctx.elicit("Several", list[Fine])  # at: many.list
        return "x"

    problems = app.check()
    assert [(p.line, p.field) for p in problems] == [(at("many.box"), "item"), (at("many.list"), "")]
    assert problems[0].message.startswith("field 'item': nested models are outside")
    assert problems[1].message.startswith(
        "form: a form is built from a pydantic model, a dataclass, a TypedDict or a dict "
        "requestedSchema, not GenericAlias list["
    )
    _, response = await app.respond(request("tools/call", {"name": "many", "arguments": {}}))
    assert json.loads(response)["error"]["message"] == f"Internal error: {problems[0].message}"


async def test_a_constant_given_as_the_form_is_a_problem_not_a_note() -> None:
    """A str in the form's place is a constant: the check sees it fails every call."""
    app = server()

    @app.tool()
    async def named(ctx: Context) -> str:
        await ctx.elicit("Your name?", "name")  # at: named.str
        return "x"

    problems = app.check()
    assert [(p.line, p.field) for p in problems] == [(at("named.str"), "")]
    assert problems[0].message.startswith(
        "form: a form is built from a pydantic model, a dataclass, a TypedDict or a dict "
        "requestedSchema, not str 'name'"
    )
    assert app.check().unchecked == []
    _, response = await app.respond(request("tools/call", {"name": "named", "arguments": {}}))
    assert json.loads(response)["error"]["message"] == f"Internal error: {problems[0].message}"
