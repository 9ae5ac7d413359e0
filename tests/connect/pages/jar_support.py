"""A cookie jar that behaves like a browser's for the pages' cookies, for tests that follow what
the browser keeps across many requests: ``Set-Cookie`` adds or replaces, ``Max-Age=0`` deletes,
and the ``Cookie`` header lists the oldest first (RFC 6265 §5.4, all our cookies being
``Path=/``)."""

from __future__ import annotations

from http.cookiejar import CookieJar, DefaultCookiePolicy

import httpx


class BrowserJar:
    @staticmethod
    def no_jar() -> CookieJar:
        """For an ``httpx.AsyncClient`` that must keep no cookies of its own."""
        return CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))

    def __init__(self, *pairs: str) -> None:
        self.cookies: dict[str, str] = {}  # insertion order = creation order
        for pair in pairs:
            name, _, value = pair.partition("=")
            self.cookies[name] = value

    def keep(self, response: httpx.Response) -> list[str]:
        """Apply the response's ``Set-Cookie`` lines; the names it set (not those it deleted)."""
        added = []
        for line in response.headers.get_list("set-cookie"):
            pair, *attributes = [part.strip() for part in line.split(";")]
            name, _, value = pair.partition("=")
            if "Max-Age=0" in attributes:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value  # a replaced cookie keeps its place, as in a browser
                added.append(name)
        return added

    def header(self) -> dict[str, str]:
        return {"cookie": "; ".join(f"{name}={value}" for name, value in self.cookies.items())}

    def named(self, prefix: str) -> list[str]:
        return [name for name in self.cookies if name.startswith(prefix)]
