"""A tiny local web page standing in for a third-party service in the demo's URL-mode step.

GET ``/connect/<id>`` shows a page with a button and changes nothing (link previewers and
scanners fetch links); POST ``/connect/<id>`` marks the link as connected. It listens on
127.0.0.1 only, on a port of its own, in a daemon thread of the demo server process.

Demo only: it has no sign-in and no same-user check. The URL-mode kit is where those live.
"""

from __future__ import annotations

import html
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Demo CI service</title>
<style>body{{font-family:sans-serif;max-width:32rem;margin:3rem auto}}
button{{font-size:1.1rem;padding:.5rem 1rem}}</style></head>
<body><h1>Demo CI service</h1>
<p><strong>Demo only</strong>: this local page stands in for a real third-party service.</p>
<p>{body}</p></body></html>
"""


_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"


class LinkPages:
    """Pending links and the page server that completes them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._links: dict[str, bool] = {}
        self._server: ThreadingHTTPServer | None = None

    @property
    def port(self) -> int:
        if self._server is None:
            self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
            thread = threading.Thread(target=self._server.serve_forever, name="demo-pages", daemon=True)
            thread.start()
        return int(self._server.server_address[1])

    def new_link(self) -> str:
        link = secrets.token_urlsafe(16)
        with self._lock:
            self._links[link] = False
        return link

    def url(self, link: str) -> str:
        return f"http://127.0.0.1:{self.port}/connect/{link}"

    def done(self, link: str) -> bool:
        with self._lock:
            return self._links.get(link, False)

    def _complete(self, link: str) -> bool:
        with self._lock:
            if link not in self._links:
                return False
            self._links[link] = True
            return True

    def _known(self, link: str) -> bool:
        with self._lock:
            return link in self._links

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        pages = self

        class Handler(BaseHTTPRequestHandler):
            def _link(self) -> str | None:
                prefix = "/connect/"
                return self.path[len(prefix) :] if self.path.startswith(prefix) else None

            def _send(self, status: int, body: str) -> None:
                data = _PAGE.format(body=body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("X-Frame-Options", "DENY")
                self.send_header("Content-Security-Policy", _CSP)
                self.send_header("Referrer-Policy", "no-referrer")
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                link = self._link()
                if link is None or not pages._known(link):
                    self._send(404, "This link is unknown or has expired.")
                elif pages.done(link):
                    self._send(200, "Already connected. You can close this tab.")
                else:
                    action = html.escape(f"/connect/{link}", quote=True)
                    self._send(
                        200,
                        "The demo issue tracker asks to watch builds for your new issue.</p>"
                        f'<form method="post" action="{action}"><button>Connect</button></form><p>',
                    )

            def do_POST(self) -> None:
                link = self._link()
                if link is None or not pages._complete(link):
                    self._send(404, "This link is unknown or has expired.")
                else:
                    self._send(200, "Connected. You can close this tab and go back to your terminal.")

            def log_message(self, format: str, *args: object) -> None:
                return  # stdout belongs to the MCP protocol; keep the page quiet

        return Handler
