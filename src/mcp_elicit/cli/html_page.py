"""What a simple HTML page says and offers, read with :mod:`html.parser`: its heading,
paragraphs, list items, links and forms (hidden fields and submit buttons).

For the demo's scripted browser, which reads the kit's pages and the demo CI service's consent
page the way a person would: no scripts, no CSS, nothing fetched. Text is whitespace-collapsed;
it still comes from a server, so print it through :func:`mcp_elicit.client.text.clean`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Final

__all__ = ["Button", "Form", "HtmlPage", "Link", "parse_page"]

_TEXT_TAGS: Final = frozenset({"h1", "p", "li", "a", "button"})
_MAX_HTML: Final = 512 * 1024


@dataclass(frozen=True, slots=True)
class Link:
    href: str
    text: str


@dataclass(frozen=True, slots=True)
class Button:
    name: str | None
    value: str
    text: str


@dataclass(slots=True)
class Form:
    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)  # hidden inputs
    buttons: list[Button] = field(default_factory=list)

    def data(self, button: Button) -> dict[str, str]:
        """What submitting the form with ``button`` sends."""
        sent = dict(self.fields)
        if button.name:
            sent[button.name] = button.value
        return sent


@dataclass(slots=True)
class HtmlPage:
    title: str = ""
    paragraphs: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    forms: list[Form] = field(default_factory=list)

    def button(self, text: str) -> tuple[Form, Button] | None:
        """The form whose submit button reads ``text`` (or starts with it), and that button."""
        for form in self.forms:
            for button in form.buttons:
                if button.text == text or button.text.startswith(text):
                    return form, button
        return None

    def link(self, text: str) -> Link | None:
        return next((link for link in self.links if link.text == text), None)

    def says(self, text: str) -> bool:
        return any(text in part for part in (self.title, *self.paragraphs))


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = HtmlPage()
        self._open: list[tuple[str, dict[str, str], list[str]]] = []  # tag, attributes, text
        self._form: Form | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "form":
            method = attributes.get("method", "get").lower()
            self._form = Form(attributes.get("action", ""), method)
        elif tag == "input" and self._form is not None and attributes.get("type") == "hidden":
            if attributes.get("name"):
                self._form.fields[attributes["name"]] = attributes.get("value", "")
        elif tag in _TEXT_TAGS:
            self._open.append((tag, attributes, []))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            if self._form is not None:
                self.page.forms.append(self._form)
            self._form = None
            return
        if tag not in _TEXT_TAGS or not any(open_tag == tag for open_tag, _, _ in self._open):
            return
        while self._open:  # close up to the matching tag (tolerates unclosed inner tags)
            open_tag, attributes, parts = self._open.pop()
            if open_tag == tag:
                self._store(tag, attributes, " ".join("".join(parts).split()))
                return

    def handle_data(self, data: str) -> None:
        for _, _, parts in self._open:  # text counts for every enclosing element
            parts.append(data)

    def _store(self, tag: str, attributes: dict[str, str], text: str) -> None:
        page = self.page
        if tag == "h1":
            page.title = page.title or text
        elif tag == "p" and text:
            page.paragraphs.append(text)
        elif tag == "li" and text:
            page.items.append(text)
        elif tag == "a" and "href" in attributes:
            page.links.append(Link(attributes["href"], text))
        elif tag == "button" and self._form is not None and attributes.get("type", "submit") == "submit":
            self._form.buttons.append(Button(attributes.get("name"), attributes.get("value", ""), text))


def parse_page(html: str) -> HtmlPage:
    """Read ``html`` (the first 512 KiB); never raises on malformed markup."""
    reader = _Reader()
    reader.feed(html[:_MAX_HTML])
    reader.close()
    return reader.page
