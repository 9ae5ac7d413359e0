"""``ParamHeader``: a tool argument mirrored in an ``Mcp-Param-<Name>`` HTTP header (SEP-2243)."""

from __future__ import annotations

from typing import Any

__all__ = ["ParamHeader"]


class ParamHeader:
    """Put inside ``typing.Annotated`` on a tool argument (a str, int or bool) to have clients send
    it as the ``Mcp-Param-<name>`` header too, so that gateways and load balancers can route on it
    without reading the body. The server checks the header against the argument on every call.

    >>> from typing import Annotated
    >>> region: Annotated[str, ParamHeader("Region")]

    ``name`` must be an HTTP token, used once per tool; the tool's registration says otherwise.
    Works on plain signatures and on pydantic ones alike.
    """

    __slots__ = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"ParamHeader needs a header name (a non-empty str), not {name!r}")
        object.__setattr__(self, "name", name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ParamHeader is immutable")

    def __repr__(self) -> str:
        return f"ParamHeader({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ParamHeader) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("ParamHeader", self.name))

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> Any:
        """Pydantic calls this for ``Annotated`` metadata: the annotation joins the property."""
        schema = handler(core_schema)
        schema["x-mcp-header"] = self.name
        return schema
