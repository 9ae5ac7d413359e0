"""assess_url never touches the network, and the package imports its parsers lazily."""

from __future__ import annotations

import socket
import subprocess
import sys
from typing import Any

import pytest
from url_cases import DIFFERENTIALS, TABLE

from mcp_elicit.client.urls import _psl, assess_url, describe_for_terminal


class NetworkUsed(AssertionError):
    pass


def _no_network(*args: Any, **kwargs: Any) -> Any:
    raise NetworkUsed(f"network access during URL assessment: {args!r}")


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr", "create_connection"):
        monkeypatch.setattr(socket, name, _no_network)
    monkeypatch.setattr(socket.socket, "connect", _no_network)
    monkeypatch.setattr(socket.socket, "connect_ex", _no_network)
    monkeypatch.setattr(socket.socket, "sendto", _no_network)


@pytest.mark.usefixtures("no_network")
def test_assessment_uses_no_network() -> None:
    # Reload the Public Suffix List too, so that its loading happens under the guard.
    _psl._list.cache_clear()
    urls = [row.url for row in TABLE.values()] + [url for url, _, _ in DIFFERENTIALS]
    for url in urls:
        assessment = assess_url(url, allow_loopback_http=True)
        describe_for_terminal(assessment)
    assert socket.getaddrinfo is _no_network  # the guard was in place throughout


@pytest.mark.usefixtures("no_network")
def test_the_guard_works() -> None:
    with pytest.raises(NetworkUsed):
        socket.getaddrinfo("example.com", 443)


def test_parsers_are_imported_lazily() -> None:
    code = (
        "import sys\n"
        "import mcp_elicit.client.urls as urls\n"
        "heavy = ('ada_url', 'publicsuffixlist', 'webbrowser')\n"
        "assert not [m for m in heavy if m in sys.modules], [m for m in heavy if m in sys.modules]\n"
        "assert urls.assess_url('https://example.com/').verdict == 'ok'\n"
        "assert 'ada_url' in sys.modules and 'publicsuffixlist' in sys.modules\n"
        "assert 'webbrowser' not in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
