"""A 404 while connecting, once the era detection has tried both handshakes: nothing serves MCP
at that URL, and the error says which URL to try (issue 20, point 7; the real server case is in
tests/cli/test_http_diagnoses.py)."""

from __future__ import annotations

import pytest

from mcp_elicit.client.era import not_found, suggested_url
from mcp_elicit.client.errors import EndpointNotFoundError, HttpStatusError, SessionExpiredError


@pytest.mark.parametrize(
    ("url", "suggestion"),
    [
        ("http://127.0.0.1:8011/", "http://127.0.0.1:8011/mcp"),
        ("http://127.0.0.1:8011", "http://127.0.0.1:8011/mcp"),
        ("https://mcp.example.com/api?x=1#top", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com/v1/mcp/", "https://mcp.example.com/v1/mcp"),
        ("http://[::1]:8000/", "http://[::1]:8000/mcp"),
        ("http://127.0.0.1:8011/mcp", None),
        ("http://127.0.0.1:8011/v1/mcp", None),
    ],
)
def test_the_suggested_url(url: str, suggestion: str | None) -> None:
    assert suggested_url(url) == suggestion


def test_a_404_becomes_not_found_with_the_url_to_try() -> None:
    error = not_found(
        HttpStatusError(404, "initialize to http://127.0.0.1:8011/: Not Found"), "http://127.0.0.1:8011/"
    )
    assert isinstance(error, EndpointNotFoundError)
    assert isinstance(error, HttpStatusError)  # still what code catching HTTP errors expects
    assert (error.status, error.url, error.suggestion) == (
        404,
        "http://127.0.0.1:8011/",
        "http://127.0.0.1:8011/mcp",
    )
    assert str(error) == (
        "http://127.0.0.1:8011/ was not found (HTTP 404): no MCP server answers there; "
        "MCP servers usually serve at http://127.0.0.1:8011/mcp"
    )


def test_other_errors_are_left_as_they_are() -> None:
    assert not_found(HttpStatusError(502, "Bad Gateway"), "http://h/") is None
    assert not_found(SessionExpiredError("gone"), "http://h/mcp") is None
    assert not_found(ValueError("x"), "http://h/") is None
    done = EndpointNotFoundError("http://h/", "http://h/mcp", "Not Found")
    assert not_found(done, "http://h/") is None


def test_the_url_shown_is_cleaned() -> None:
    error = not_found(HttpStatusError(404, "Not Found"), "http://h/\x1b[2Jx")
    assert error is not None
    assert "\x1b" not in str(error)
