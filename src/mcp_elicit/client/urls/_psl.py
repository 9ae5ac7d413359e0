"""The Public Suffix List, loaded once on first use (offline: the package ships its snapshot).

``accept_unknown=False`` so that single labels, ``.local``, ``.internal``, unknown TLDs and bare
public suffixes have no registrable domain (``None``); the private section is included, so
``victim.github.io`` and ``attacker.github.io`` are different sites.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from publicsuffixlist import PublicSuffixList


@functools.cache
def _list() -> PublicSuffixList:
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList(accept_unknown=False)


def registrable_domain(host: str) -> str | None:
    """eTLD+1 of a lower-case ASCII host without a trailing dot, or None."""
    result = _list().privatesuffix(host)
    return result if isinstance(result, str) else None


def is_public_suffix(host: str) -> bool:
    return _list().publicsuffix(host) == host
