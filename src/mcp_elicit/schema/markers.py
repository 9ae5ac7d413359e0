"""Markers that go inside ``typing.Annotated`` to shape a generated form field.

>>> from typing import Annotated
>>> Priority = Annotated[str, Choices({"lo": "Low", "hi": "High"}), Title("Priority")]

Markers are small immutable values; they do nothing on their own. The builder reads
them. Pydantic keeps unknown ``Annotated`` metadata on its fields, so they work on
pydantic models, dataclasses and TypedDicts alike.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, ClassVar

from .formats import FORMATS

__all__ = [
    "Choices",
    "Description",
    "Email",
    "Format",
    "NotSecret",
    "Title",
    "Url",
]


def _need_text(what: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    return value


class _Marker:
    """An immutable one-string value (hand-written: dataclasses cost import time)."""

    __slots__ = ()
    _attr: ClassVar[str]

    def __init__(self, value: str) -> None:
        object.__setattr__(self, self._attr, _need_text(type(self).__name__, value))
        self._check()

    def _check(self) -> None:
        """Extra validation of a subclass."""

    def _value(self) -> str:
        value: str = getattr(self, self._attr)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._value()!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, _Marker)
        return self._value() == other._value()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._value()))


class Title(_Marker):
    """The field's label (``title``).

    >>> Title("Your age").text
    'Your age'
    """

    __slots__ = ("text",)
    _attr = "text"
    text: str


class Description(_Marker):
    """Help text shown with the field (``description``)."""

    __slots__ = ("text",)
    _attr = "text"
    text: str


class NotSecret(_Marker):
    """Overrides the secret lint for one field; the reason is required so it is reviewed.

    >>> NotSecret("max_tokens counts tokens, it is not a credential").reason[:10]
    'max_tokens'
    """

    __slots__ = ("reason",)
    _attr = "reason"
    reason: str

    def _check(self) -> None:
        if not self.reason.strip():
            raise ValueError("NotSecret needs a reason saying why the field is not a secret")


class Format(_Marker):
    """A string ``format``: one of ``email``, ``uri``, ``date``, ``date-time``.

    The Python value stays a ``str``; use ``datetime.date`` / ``datetime.datetime`` fields
    to get those objects back.

    >>> Format("email").name
    'email'
    """

    __slots__ = ("name",)
    _attr = "name"
    name: str

    def _check(self) -> None:
        if self.name not in FORMATS:
            raise ValueError(f"unknown format {self.name!r}; use one of {sorted(FORMATS)}")


class Choices:
    """Fixed choices with display titles for a text field or a multi-select.

    On ``str`` it makes a titled single-select (``oneOf`` of ``{const, title}``); on
    ``list[str]`` a titled multi-select (``items.anyOf``). With ``legacy=True`` a single
    select is written the deprecated way (``enum`` + ``enumNames``) for old clients. On a
    ``Literal`` or ``Enum`` field the keys must be exactly its values.

    >>> Choices({"lo": "Low", "hi": "High"}).options
    (('lo', 'Low'), ('hi', 'High'))
    """

    __slots__ = ("legacy", "options")
    options: tuple[tuple[str, str], ...]
    legacy: bool

    def __init__(
        self,
        options: Mapping[str, str] | Iterable[tuple[str, str]],
        *,
        legacy: bool = False,
    ) -> None:
        pairs = list(options.items()) if isinstance(options, Mapping) else list(options)
        seen: set[str] = set()
        for pair in pairs:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise TypeError("Choices takes a mapping or (value, title) pairs")
            value, title = pair
            _need_text("a choice value", value)
            _need_text(f"the title of choice {value!r}", title)
            if value in seen:
                raise ValueError(f"choice {value!r} is given twice")
            seen.add(value)
        object.__setattr__(self, "options", tuple(pairs))
        object.__setattr__(self, "legacy", bool(legacy))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Choices is immutable")

    def __repr__(self) -> str:
        legacy = ", legacy=True" if self.legacy else ""
        return f"Choices({dict(self.options)!r}{legacy})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Choices):
            return NotImplemented
        return self.options == other.options and self.legacy == other.legacy

    def __hash__(self) -> int:
        return hash((self.options, self.legacy))

    @classmethod
    def from_enum(
        cls,
        enum_type: type[enum.Enum],
        titles: Mapping[enum.Enum | str, str] | None = None,
        *,
        legacy: bool = False,
    ) -> Choices:
        """Choices for every member of a string-valued enum, in definition order.

        ``titles`` is keyed by member or value; a member without a title shows its value.

        >>> class Size(enum.Enum):
        ...     S = "s"
        ...     L = "l"
        >>> Choices.from_enum(Size, {Size.S: "Small", "l": "Large"}).options
        (('s', 'Small'), ('l', 'Large'))
        """
        remaining = dict(titles or {})
        pairs: list[tuple[str, str]] = []
        for member in enum_type:
            value = member.value
            if not isinstance(value, str):
                raise TypeError(f"{enum_type.__name__}.{member.name} has a non-str value")
            by_member = remaining.pop(member, None)
            by_value = remaining.pop(value, None)
            pairs.append((value, by_member or by_value or value))
        if remaining:
            raise ValueError(f"titles for unknown members: {sorted(map(str, remaining))}")
        return cls(pairs, legacy=legacy)


#: A text field that must hold an email address.
Email = Annotated[str, Format("email")]
#: A text field that must hold an absolute URI.
Url = Annotated[str, Format("uri")]
