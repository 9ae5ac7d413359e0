"""``async with store:``: one mixin for everything that has an async ``close()``."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class ClosesOnExit:
    """``async with`` returns the object and calls its ``close()`` on the way out."""

    async def close(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
