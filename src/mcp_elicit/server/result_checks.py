"""What a handler returns, checked as the spec types it before it is sent.

A tool may return its content blocks, a prompt its messages, a resource its contents, as the
protocol's own objects; the server sends them on, so each is checked here first: a wrong one
would make the client refuse the whole result, far from the handler that made it. The shapes
are those of the spec's schema.ts, the same at 2025-11-25 and 2026-07-28:

* ``ContentBlock``: ``text``, ``image``, ``audio``, ``resource_link`` and ``resource``;
* ``PromptMessage``: ``role`` (``"user"`` or ``"assistant"``) and one content block;
* ``TextResourceContents | BlobResourceContents``: ``uri`` and one of ``text`` and ``blob``.

Each member the spec names is checked as it types it (base64 too: clients decode it); members
it does not name pass, as its types allow. A problem is a ``TypeError`` saying which item and
what is wrong: the engine answers it with -32603 naming the handler.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["check_content_blocks", "check_prompt_messages", "check_resource_contents"]


@dataclass(frozen=True)
class _Kind:
    """What a value must be: ``what`` names it in messages, ``ok`` checks it; then an object's
    ``members``, or each item of a list (``each``)."""

    what: str
    ok: Callable[[Any], bool]
    members: tuple[_Member, ...] = ()
    each: _Kind | None = None


@dataclass(frozen=True)
class _Member:
    name: str
    kind: _Kind
    required: bool = False


def _is_number(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)  # NaN and infinities go out as null
    return isinstance(value, int) and not isinstance(value, bool)  # past 64 bits: the codec refuses it


def _is_priority(value: Any) -> bool:
    return _is_number(value) and 0 <= value <= 1


def _is_base64(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        base64.b64decode(value, validate=True)
    except ValueError:  # binascii.Error, or text that is not ASCII
        return False
    return True


def _object(*members: _Member) -> _Kind:
    return _Kind("an object", lambda value: isinstance(value, dict), members=members)


def _list(what: str, each: _Kind) -> _Kind:
    return _Kind(what, lambda value: isinstance(value, list), each=each)


def _one_of(*names: str) -> _Kind:
    return _Kind(" or ".join(map(repr, names)), lambda value: isinstance(value, str) and value in names)


_STR = _Kind("a str", lambda value: isinstance(value, str))
_BASE64 = _Kind("a base64 str", _is_base64)
_META = _object()
_ANNOTATIONS = _object(
    _Member("audience", _list("a list of 'user' or 'assistant'", _one_of("user", "assistant"))),
    _Member("priority", _Kind("a number from 0 to 1", _is_priority)),
    _Member("lastModified", _STR),
)
_ON_EVERY_BLOCK = (_Member("annotations", _ANNOTATIONS), _Member("_meta", _META))
_ICON = _object(
    _Member("src", _STR, required=True),
    _Member("mimeType", _STR),
    _Member("sizes", _list("a list of str", _STR)),
    _Member("theme", _one_of("light", "dark")),
)
_RESOURCE_CONTENTS = _object(
    _Member("uri", _STR, required=True),
    _Member("mimeType", _STR),
    _Member("text", _STR),
    _Member("blob", _BASE64),
    _Member("_meta", _META),
)
_MEDIA = (_Member("data", _BASE64, required=True), _Member("mimeType", _STR, required=True))
_BLOCKS: dict[str, tuple[_Member, ...]] = {
    "text": (_Member("text", _STR, required=True), *_ON_EVERY_BLOCK),
    "image": (*_MEDIA, *_ON_EVERY_BLOCK),
    "audio": (*_MEDIA, *_ON_EVERY_BLOCK),
    "resource_link": (
        _Member("uri", _STR, required=True),
        _Member("name", _STR, required=True),
        _Member("title", _STR),
        _Member("description", _STR),
        _Member("mimeType", _STR),
        _Member("size", _Kind("a number", _is_number)),
        _Member("icons", _list("a list of icons", _ICON)),
        *_ON_EVERY_BLOCK,
    ),
    "resource": (_Member("resource", _RESOURCE_CONTENTS, required=True), *_ON_EVERY_BLOCK),
}


def check_content_blocks(blocks: list[dict[str, Any]]) -> None:
    """A tool result's ``content``: every item a dict with a str ``type`` (so meant as blocks)."""
    for index, block in enumerate(blocks):
        problem = _block_problem(block)
        if problem is not None:
            raise TypeError(f"content block {index} (type {_shown(block['type'])}) {problem}")


def check_prompt_messages(messages: Any) -> None:
    """A prompt result's ``messages``."""
    if not isinstance(messages, list):
        raise TypeError(f"a prompt's messages must be a list, not {_shown(messages)}")
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise TypeError(f"prompt message {index} must be an object with role and content")
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise TypeError(
                f"prompt message {index} needs role to be 'user' or 'assistant', not {_shown(role)}"
            )
        content = message.get("content")
        if not (isinstance(content, dict) and isinstance(content.get("type"), str)):
            raise TypeError(
                f"prompt message {index} needs content to be a content block, not {_shown(content)}"
            )
        problem = _block_problem(content)
        if problem is not None:
            raise TypeError(f"prompt message {index} content (type {_shown(content['type'])}) {problem}")


def check_resource_contents(contents: Any) -> None:
    """A resource result's ``contents``."""
    if not isinstance(contents, list):
        raise TypeError(f"a resource's contents must be a list, not {_shown(contents)}")
    for index, item in enumerate(contents):
        if not isinstance(item, dict):
            raise TypeError(f"resource contents {index} must be an object with uri and text or blob")
        problem = _members_problem(item, _RESOURCE_CONTENTS.members, "") or _text_or_blob(item, "")
        if problem is not None:
            raise TypeError(f"resource contents {index} {problem}")


def _block_problem(block: dict[str, Any]) -> str | None:
    members = _BLOCKS.get(block["type"])
    if members is None:
        return "has an unknown type; a content block is text, image, audio, resource_link or resource"
    problem = _members_problem(block, members, "")
    if problem is None and block["type"] == "resource":
        problem = _text_or_blob(block["resource"], "resource.")
    return problem


def _text_or_blob(contents: dict[str, Any], path: str) -> str | None:
    """TextResourceContents | BlobResourceContents: which one it is must be plain."""
    if "text" in contents and "blob" in contents:
        return f"has both {path}text and {path}blob; it needs exactly one of them"
    if "text" not in contents and "blob" not in contents:
        return f"needs {path}text (a str) or {path}blob (a base64 str)"
    return None


def _members_problem(value: dict[str, Any], members: tuple[_Member, ...], path: str) -> str | None:
    for member in members:
        where = path + member.name
        if member.name in value:
            problem = _value_problem(value[member.name], member.kind, where)
            if problem is not None:
                return problem
        elif member.required:
            return f"needs {where}, {member.kind.what}"
    return None


def _value_problem(value: Any, kind: _Kind, where: str) -> str | None:
    if not kind.ok(value):
        return f"needs {where} to be {kind.what}, not {_shown(value)}"
    if kind.members:
        return _members_problem(value, kind.members, where + ".")
    if kind.each is not None:
        for index, item in enumerate(value):
            problem = _value_problem(item, kind.each, f"{where}[{index}]")
            if problem is not None:
                return problem
    return None


def _shown(value: Any) -> str:
    """``value`` in a message: short, and never a repr the handler wrote (it could fail); repr
    escapes a lone surrogate, so the message stays JSON."""
    if type(value) is str:
        return repr(value[:30]) + ("\u2026" if len(value) > 30 else "")
    if value is None or type(value) in (bool, float) or (type(value) is int and abs(value) < 10**18):
        return repr(value)
    return type(value).__name__
