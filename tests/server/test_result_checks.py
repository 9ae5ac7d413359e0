"""What a handler returns as the protocol's own objects is checked as the spec types it: a tool's
content blocks, a prompt's messages, a resource's contents (``server/result_checks.py``). A wrong
one fails the request with ``-32603`` naming the handler, the item's index (in the list the
handler returned, from 0) and what is wrong, instead of reaching a client that refuses the result.

Every case runs through a client in both eras (2026-07-28 in process, 2025-11-25 over HTTP on
127.0.0.1), with the handlers and helpers of ``test_any_handler_output``; the property also runs
the 2025-11-25 stdio connection. What the spec (schema.ts of 2025-11-25 and 2026-07-28, the same
in both) requires, per content block:

* text: ``text`` a str;
* image and audio: ``data`` a base64 str (``@format byte``), ``mimeType`` a str;
* resource_link: ``uri`` and ``name`` str; optional ``title``, ``description``, ``mimeType`` str,
  ``size`` a number, ``icons`` a list of icons (``src`` str; optional ``mimeType`` str, ``sizes``
  list of str, ``theme`` "light" or "dark");
* resource: ``resource`` an object with ``uri`` a str, one of ``text`` (a str) and ``blob`` (a
  base64 str), optional ``mimeType`` str and ``_meta`` object;
* on every block, optional ``annotations`` (``audience`` a list of "user"/"assistant",
  ``priority`` a number from 0 to 1, ``lastModified`` a str) and ``_meta``, an object.

A prompt message is a ``role`` ("user" or "assistant") and one content block; a resource's
contents are each a ``uri`` and one of ``text`` and ``blob``, as in the ``resource`` block.

Members the spec does not name pass (its types allow them). A list counts as content blocks when
every item is a dict with a str ``type`` (as before); an unknown ``type`` there is a wrong block.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any

import mcp_types
import pydantic
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from tests.server.test_any_handler_output import (
    INTERNAL,
    Error,
    Protocol,
    make_server,
    outcome_in_process,
    resource_uri,
    running,
)
from tests.strategies import fuzz_settings

EXAMPLES = int(os.environ.get("TOOL_CONTENT_BLOCK_EXAMPLES", "100"))
NO_RESULT = "Internal error: the handler of tools/call 'act' returned a value that is no result: "
NO_JSON = "Internal error: the handler of tools/call 'act' returned a value that cannot be sent as JSON"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
TEXT = {"type": "text", "text": "hi"}
IMAGE = {"type": "image", "data": PNG, "mimeType": "image/png"}

PROTOCOLS = pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])


async def returned(protocol: Protocol, value: Any) -> dict[str, Any] | Error:
    """What the client gets from the tool ``act`` returning ``value``."""
    return await outcome_in_process(make_server(), protocol, "tool", {"outcome": {"return": value}})


def link(**members: Any) -> dict[str, Any]:
    return {"type": "resource_link", "uri": "file:///notes.md", "name": "notes.md", **members}


def embedded(resource: Any, **members: Any) -> dict[str, Any]:
    return {"type": "resource", "resource": resource, **members}


# -- each rule: a wrong block, and its control that passes ----------------------------------------

WRONG = [
    ("text missing", [{"type": "text"}], "content block 0 (type 'text') needs text, a str"),
    (
        "text a number",
        [{"type": "text", "text": 5}],
        "content block 0 (type 'text') needs text to be a str, not 5",
    ),
    (
        "image without mimeType",
        [{"type": "image", "data": PNG}],
        "content block 0 (type 'image') needs mimeType, a str",
    ),
    (
        "image data not base64",
        [{"type": "image", "data": "not base64!", "mimeType": "image/png"}],
        "content block 0 (type 'image') needs data to be a base64 str, not 'not base64!'",
    ),
    (
        "image data badly padded",
        [{"type": "image", "data": "QQ=", "mimeType": "image/png"}],
        "content block 0 (type 'image') needs data to be a base64 str, not 'QQ='",
    ),
    (
        "audio without data",
        [{"type": "audio", "mimeType": "audio/wav"}],
        "content block 0 (type 'audio') needs data, a base64 str",
    ),
    (
        "audio mimeType None",
        [{"type": "audio", "data": PNG, "mimeType": None}],
        "content block 0 (type 'audio') needs mimeType to be a str, not None",
    ),
    ("link empty", [{"type": "resource_link"}], "content block 0 (type 'resource_link') needs uri, a str"),
    (
        "link without name",
        [{"type": "resource_link", "uri": "file:///a"}],
        "content block 0 (type 'resource_link') needs name, a str",
    ),
    (
        "link title a list",
        [link(title=["a"])],
        "content block 0 (type 'resource_link') needs title to be a str, not list",
    ),
    (
        "link size as text",
        [link(size="12")],
        "content block 0 (type 'resource_link') needs size to be a number, not '12'",
    ),
    (
        "link size NaN (JSON writes null)",
        [link(size={"$": "nan"})],  # the tool builds float("nan") from this
        "content block 0 (type 'resource_link') needs size to be a number, not nan",
    ),
    (
        "link icon without src",
        [link(icons=[{}])],
        "content block 0 (type 'resource_link') needs icons[0].src, a str",
    ),
    (
        "link icon theme",
        [link(icons=[{"src": "https://example.com/i.png", "theme": "blue"}])],
        "content block 0 (type 'resource_link') needs icons[0].theme to be 'light' or 'dark', not 'blue'",
    ),
    (
        "resource not an object",
        [embedded("file:///a")],
        "content block 0 (type 'resource') needs resource to be an object, not 'file:///a'",
    ),
    (
        "resource uri a number",
        [embedded({"uri": 1})],
        "content block 0 (type 'resource') needs resource.uri to be a str, not 1",
    ),
    (
        "resource without text or blob",
        [embedded({"uri": "file:///a"})],
        "content block 0 (type 'resource') needs resource.text (a str) or resource.blob (a base64 str)",
    ),
    (
        "resource with text and blob",
        [embedded({"uri": "file:///a", "text": "a", "blob": PNG})],
        "content block 0 (type 'resource') has both resource.text and resource.blob; it needs exactly one "
        "of them",
    ),
    (
        "resource blob not base64",
        [embedded({"uri": "file:///a", "blob": "%%%"})],
        "content block 0 (type 'resource') needs resource.blob to be a base64 str, not '%%%'",
    ),
    (
        "annotations not an object",
        [{**TEXT, "annotations": "important"}],
        "content block 0 (type 'text') needs annotations to be an object, not 'important'",
    ),
    (
        "annotations priority past 1",
        [{**TEXT, "annotations": {"priority": 2}}],
        "content block 0 (type 'text') needs annotations.priority to be a number from 0 to 1, not 2",
    ),
    (
        "annotations audience",
        [{**TEXT, "annotations": {"audience": ["system"]}}],
        "content block 0 (type 'text') needs annotations.audience[0] to be 'user' or 'assistant', "
        "not 'system'",
    ),
    (
        "_meta a list",
        [{**IMAGE, "_meta": []}],
        "content block 0 (type 'image') needs _meta to be an object, not list",
    ),
    (
        "unknown type",
        [{"type": "bogus"}],
        "content block 0 (type 'bogus') has an unknown type; a content block is text, image, audio, "
        "resource_link or resource",
    ),
    (
        "the first wrong block is named",
        [TEXT, IMAGE, {"type": "image", "data": PNG}, {"type": "bogus"}],
        "content block 2 (type 'image') needs mimeType, a str",
    ),
]

RIGHT = [
    ("text", [TEXT]),
    ("text with members the spec does not name", [{**TEXT, "com.example/extra": 1}]),
    ("image", [IMAGE]),
    ("image with no data", [{"type": "image", "data": "", "mimeType": "image/png"}]),
    ("audio", [{"type": "audio", "data": PNG, "mimeType": "audio/wav"}]),
    ("link", [link()]),
    (
        "link with every member",
        [
            link(
                title="Notes",
                description="my notes",
                mimeType="text/markdown",
                size=1.5,  # the spec types size as a number
                icons=[{"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}],
            )
        ],
    ),
    ("resource with text", [embedded({"uri": "file:///a", "text": "a", "mimeType": "text/plain"})]),
    ("resource with blob", [embedded({"uri": "file:///a", "blob": PNG, "_meta": {"k": 1}})]),
    (
        "annotations",
        [{**TEXT, "annotations": {"audience": ["user", "assistant"], "priority": 0.5, "lastModified": "x"}}],
    ),
    ("_meta", [{**IMAGE, "_meta": {"com.example/trace": "t-1"}}]),
    ("one of each", [TEXT, IMAGE, link(), embedded({"uri": "file:///a", "text": "a"})]),
]

# Not content blocks (as before): sent as their JSON, in one text block.
NOT_BLOCKS = [
    ("empty", []),
    ("numbers", [1, 2]),
    ("records without type", [{"a": 1}]),
    ("type not a str", [{"type": 5}]),
    ("a block among other values", [TEXT, 3]),
]


@PROTOCOLS
@pytest.mark.parametrize(("blocks", "says"), [case[1:] for case in WRONG], ids=[case[0] for case in WRONG])
async def test_a_wrong_block_fails_the_call_naming_it(protocol: Protocol, blocks: Any, says: str) -> None:
    got = await returned(protocol, blocks)
    assert got == Error(INTERNAL, NO_RESULT + says), got


@PROTOCOLS
@pytest.mark.parametrize("blocks", [case[1] for case in RIGHT], ids=[case[0] for case in RIGHT])
async def test_well_formed_blocks_reach_the_client_as_they_are(protocol: Protocol, blocks: Any) -> None:
    got = await returned(protocol, blocks)
    assert got == {"content": blocks, "isError": False}, got


@PROTOCOLS
@pytest.mark.parametrize("size", [2**70, 2**1100], ids=["2**70", "2**1100"])
async def test_a_size_past_64_bits_is_refused_as_a_value_with_no_json_form(
    protocol: Protocol, size: int
) -> None:
    """A number to the spec, but JSON here carries none past 64 bits: the usual -32603 for a
    value with no JSON form (the check itself must not fail on it: float() of 2**1100 overflows)."""
    got = await returned(protocol, [link(size=size)])
    assert got == Error(INTERNAL, NO_JSON), got


@PROTOCOLS
@pytest.mark.parametrize("value", [case[1] for case in NOT_BLOCKS], ids=[case[0] for case in NOT_BLOCKS])
async def test_a_list_that_is_not_blocks_is_still_sent_as_json_text(protocol: Protocol, value: Any) -> None:
    got = await returned(protocol, value)
    assert isinstance(got, dict), got
    assert got["isError"] is False, got
    [block] = got["content"]
    assert block["type"] == "text", got
    assert json.loads(block["text"]) == value, got


# -- a prompt's messages and a resource's contents, returned as the protocol's own objects ----------

PROMPT_NO_RESULT = (
    "Internal error: the handler of prompts/get 'act_prompt' returned a value that is no result: "
)
USER_TEXT = {"role": "user", "content": TEXT}

WRONG_MESSAGES = [
    ("messages not a list", {"messages": "hi"}, "a prompt's messages must be a list, not 'hi'"),
    (
        "a message not an object",
        {"messages": [5]},
        "prompt message 0 must be an object with role and content",
    ),
    (
        "role system",
        {"messages": [USER_TEXT, {"role": "system", "content": TEXT}]},
        "prompt message 1 needs role to be 'user' or 'assistant', not 'system'",
    ),
    (
        "role missing",
        [{"role": None, "content": "hi"}],
        "prompt message 0 needs role to be 'user' or 'assistant', not None",
    ),
    (
        "content not a block",
        {"messages": [{"role": "user", "content": "hi"}]},
        "prompt message 0 needs content to be a content block, not 'hi'",
    ),
    (
        "content a wrong block",
        [{"role": "assistant", "content": {"type": "image", "data": PNG}}],
        "prompt message 0 content (type 'image') needs mimeType, a str",
    ),
]
RIGHT_MESSAGES = [
    ("as the protocol's own", {"messages": [USER_TEXT, {"role": "assistant", "content": IMAGE}]}),
    ("with members the spec does not name", {"messages": [{**USER_TEXT, "x": 1}], "description": "d"}),
]

WRONG_CONTENTS = [
    ("contents not a list", {"contents": {}}, "a resource's contents must be a list, not dict"),
    (
        "an item not an object",
        {"contents": ["a"]},
        "resource contents 0 must be an object with uri and text or blob",
    ),
    ("no uri", {"contents": [{"text": "a"}]}, "resource contents 0 needs uri, a str"),
    (
        "text a number",
        {"contents": [{"uri": "a://b", "text": 1}]},
        "resource contents 0 needs text to be a str, not 1",
    ),
    (
        "neither text nor blob",
        {"contents": [{"uri": "a://b"}]},
        "resource contents 0 needs text (a str) or blob (a base64 str)",
    ),
    (
        "blob not base64",
        {"contents": [{"uri": "a://b", "text": "a"}, {"uri": "a://b", "blob": "%"}]},
        "resource contents 1 needs blob to be a base64 str, not '%'",
    ),
]
RIGHT_CONTENTS = [
    (
        "text and blob items",
        {"contents": [{"uri": "a://b", "text": "a"}, {"uri": "a://c", "blob": PNG, "mimeType": "image/png"}]},
    ),
    ("no item", {"contents": []}),
]


@PROTOCOLS
@pytest.mark.parametrize(
    ("value", "says"), [case[1:] for case in WRONG_MESSAGES], ids=[case[0] for case in WRONG_MESSAGES]
)
async def test_a_wrong_prompt_message_fails_the_get_naming_it(
    protocol: Protocol, value: Any, says: str
) -> None:
    got = await outcome_in_process(make_server(), protocol, "prompt", {"outcome": {"return": value}})
    assert got == Error(INTERNAL, PROMPT_NO_RESULT + says), got


@PROTOCOLS
@pytest.mark.parametrize(
    "value", [case[1] for case in RIGHT_MESSAGES], ids=[case[0] for case in RIGHT_MESSAGES]
)
async def test_well_formed_prompt_messages_reach_the_client_as_they_are(
    protocol: Protocol, value: Any
) -> None:
    got = await outcome_in_process(make_server(), protocol, "prompt", {"outcome": {"return": value}})
    assert got == value, got


def _resource_no_result(spec: dict[str, Any]) -> str:
    target = f"resources/read {resource_uri(json.dumps(spec))!r}"
    return f"Internal error: the handler of {target} returned a value that is no result: "


@PROTOCOLS
@pytest.mark.parametrize(
    ("value", "says"), [case[1:] for case in WRONG_CONTENTS], ids=[case[0] for case in WRONG_CONTENTS]
)
async def test_wrong_resource_contents_fail_the_read_naming_them(
    protocol: Protocol, value: Any, says: str
) -> None:
    spec = {"outcome": {"return": value}}
    got = await outcome_in_process(make_server(), protocol, "resource", spec)
    assert got == Error(INTERNAL, _resource_no_result(spec) + says), got


@PROTOCOLS
@pytest.mark.parametrize(
    "value", [case[1] for case in RIGHT_CONTENTS], ids=[case[0] for case in RIGHT_CONTENTS]
)
async def test_well_formed_resource_contents_reach_the_client_as_they_are(
    protocol: Protocol, value: Any
) -> None:
    got = await outcome_in_process(make_server(), protocol, "resource", {"outcome": {"return": value}})
    assert got == value, got


# -- the property ---------------------------------------------------------------------------------

texts = st.text(max_size=8)
base64s = st.binary(max_size=9).map(lambda data: base64.b64encode(data).decode())
metas = st.dictionaries(
    texts.filter(lambda key: key != "$"),  # "$" keys mean something to the tool's spec (build)
    st.none() | st.booleans() | st.integers(-1000, 1000) | texts,
    max_size=2,
)
annotation_values: st.SearchStrategy[Any] = st.fixed_dictionaries(
    {},
    optional={
        "audience": st.lists(st.sampled_from(["user", "assistant"]), max_size=2),
        "priority": st.floats(0, 1) | st.sampled_from([0, 1]),
        "lastModified": texts,
    },
)
common: dict[str, st.SearchStrategy[Any]] = {"annotations": annotation_values, "_meta": metas}
icons: st.SearchStrategy[Any] = st.fixed_dictionaries(
    {"src": texts},
    optional={
        "mimeType": texts,
        "sizes": st.lists(texts, max_size=2),
        "theme": st.sampled_from(["light", "dark"]),
    },
)
contents: st.SearchStrategy[Any] = st.fixed_dictionaries(
    {"uri": texts}, optional={"text": texts, "blob": base64s, "mimeType": texts, "_meta": metas}
).filter(lambda resource: ("text" in resource) != ("blob" in resource))
good_blocks: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": texts}, optional=common),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["image", "audio"]), "data": base64s, "mimeType": texts}, optional=common
    ),
    st.fixed_dictionaries(
        {"type": st.just("resource_link"), "uri": texts, "name": texts},
        optional={
            "title": texts,
            "description": texts,
            "mimeType": texts,
            "size": st.integers(0, 2**53),  # a number, as the spec says; the Python SDK takes integers only
            "icons": st.lists(icons, max_size=2),
            **common,
        },
    ),
    st.fixed_dictionaries({"type": st.just("resource"), "resource": contents}, optional=common),
)

REQUIRED = {
    "text": ["text"],
    "image": ["data", "mimeType"],
    "audio": ["data", "mimeType"],
    "resource_link": ["uri", "name"],
    "resource": ["resource"],
}
STR_MEMBERS = {
    "text": ["text"],
    "image": ["mimeType"],
    "audio": ["mimeType"],
    "resource_link": ["uri", "name", "title", "description", "mimeType"],
    "resource": [],
}
not_str: st.SearchStrategy[Any] = (
    st.none() | st.booleans() | st.integers() | st.lists(st.integers(), max_size=1) | st.just({})
)
not_base64: st.SearchStrategy[Any] = not_str | st.sampled_from(
    ["not base64!", "abc", "QQ=", "é", "QQ==\n", "===="]
)
not_object: st.SearchStrategy[Any] = (
    st.none() | st.booleans() | st.integers() | texts | st.lists(st.integers(), max_size=1)
)


@st.composite
def broken(draw: st.DrawFn, block: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``block`` made wrong in one way, and the member (or the type) a message about it names."""
    block = dict(block)
    kind = block["type"]
    strs = ["str"] if STR_MEMBERS[kind] else []
    how = draw(st.sampled_from([*_special(kind), *strs, "drop", "annotations", "_meta", "type"]))
    if how == "drop":
        member = draw(st.sampled_from(REQUIRED[kind]))
        del block[member]
        return block, member
    if how == "str":
        member = draw(st.sampled_from(STR_MEMBERS[kind]))
        block[member] = draw(not_str)
        return block, member
    if how == "data":
        block["data"] = draw(not_base64)
        return block, "data"
    if how == "size":
        block["size"] = draw(texts | st.none() | st.booleans() | st.just([1]))
        return block, "size"
    if how == "icons":
        block["icons"] = draw(st.sampled_from([[{}], [{"src": "s", "theme": "dim"}], "icon", [3]]))
        return block, "icons"
    if how == "resource":
        resource = block["resource"]
        block["resource"] = draw(
            not_object
            | st.just({"uri": resource["uri"]})
            | st.just({**resource, "text": "t", "blob": "QQ=="})
            | st.builds(lambda uri: {**resource, "uri": uri}, not_str)
            | st.builds(lambda blob: {"uri": "u", "blob": blob}, not_base64)
        )
        return block, "resource"
    if how == "annotations":
        block["annotations"] = draw(
            not_object
            | st.builds(lambda p: {"priority": p}, st.sampled_from([1.5, -0.5, "1", True, None]))
            | st.builds(lambda a: {"audience": a}, st.sampled_from([["system"], "user", [None]]))
            | st.builds(lambda m: {"lastModified": m}, not_str)
        )
        return block, "annotations"
    if how == "_meta":
        block["_meta"] = draw(not_object)
        return block, "_meta"
    block["type"] = draw(st.sampled_from(["bogus", "Text", "", "tool_use", "tool_result", "resource-link"]))
    return block, repr(block["type"])


def _special(kind: str) -> list[str]:
    return {
        "image": ["data"],
        "audio": ["data"],
        "resource_link": ["size", "icons"],
        "resource": ["resource"],
    }.get(kind, [])


@st.composite
def block_lists(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int | None, str | None]:
    """A list of blocks; the index of the first wrong one and what its message names (None, None:
    all well formed)."""
    blocks: list[dict[str, Any]] = []
    first: int | None = None
    names: str | None = None
    for index in range(draw(st.integers(1, 4))):
        block = draw(good_blocks)
        if draw(st.integers(0, 3)) == 0:
            block, named = draw(broken(block))
            if first is None:
                first, names = index, named
        blocks.append(block)
    return blocks, first, names


def test_any_list_of_blocks_reaches_the_client_as_is_or_fails_naming_the_first_wrong_block() -> None:
    """On all three connections: well-formed blocks come back as they were sent, and the result
    is one the Python SDK's types (mcp_types.CallToolResult) accept; a list with a wrong block is
    -32603 naming the handler, that block's index and what is wrong. Never a traceback, and the
    connection goes on working."""
    with running(make_server()) as (_, _answers, connections, run):

        @fuzz_settings(EXAMPLES)
        @given(drawn=block_lists())
        def check(drawn: tuple[list[dict[str, Any]], int | None, str | None]) -> None:
            blocks, first, names = drawn
            event("well formed" if first is None else "a wrong block")
            spec_text = json.dumps({"outcome": {"return": blocks}})
            for connection in connections:
                got = run(connection.outcome("tool", spec_text))
                if first is None:
                    assert got == {"content": blocks, "isError": False}, (connection.name, got)
                    try:
                        mcp_types.CallToolResult.model_validate(got)
                    except pydantic.ValidationError as exc:
                        pytest.fail(f"{connection.name}: the SDK refuses {got}: {exc}")
                else:
                    assert isinstance(got, Error), (connection.name, blocks, got)
                    assert got.code == INTERNAL, (connection.name, got)
                    message = got.message or ""
                    assert message.startswith(NO_RESULT + f"content block {first} "), (
                        connection.name,
                        message,
                    )
                    assert names is not None
                    assert names in message, (connection.name, names, message)
                    assert "Traceback" not in message, (connection.name, message)
                run(connection.still_works())

        check()
