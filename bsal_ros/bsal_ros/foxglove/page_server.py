# Copyright 2026 The bsal_ros authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# SPDX-License-Identifier: Apache-2.0

"""Brak's page over HTTP: the static files of the package's ``web/`` folder.

The Foxglove gateway's process serves the page (docs/PAGE.md); the page then
speaks the Foxglove protocol to the gateway's WebSocket server. This server
only hands out files, and only these:

* ``/`` (``index.html``) and the other files directly in ``web/`` whose type
  a page needs (``.html``, ``.css``, ``.svg``, ``.png``, ``.ico``): never
  ``package.json``, ``node_modules/`` or the sources;
* ``dist/<name>`` (``.js``, ``.map``, ``.css``): what esbuild bundled;
* ``/config.json``, made here: the gateway's port, scheme and subprotocol,
  so the page finds the WebSocket on the host it came from.

GET and HEAD only; no directory listing; a path with ``..``, a hidden name,
a backslash or a NUL is refused before the disk is looked at; a file over
``MAX_FILE_BYTES`` is not served; at most ``MAX_CONNECTIONS`` requests at
once (the next is answered 503 at once; with TLS it is closed at once) and
``REQUEST_TIMEOUT_S`` per connection. Each kind of refusal is logged once, not once per request.
With ``tls`` (the gateway's certificate and key) it serves HTTPS only.
No ROS here.
"""

from __future__ import annotations

from dataclasses import dataclass
import http.server
import json
from pathlib import Path
import socket
import ssl
import threading
from typing import Callable
from urllib.parse import unquote, urlsplit

#: content type of every suffix that is served (anything else is not)
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".map": "application/json; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}
#: suffixes served from web/ itself, and from web/dist/
TOP_SUFFIXES = (".html", ".css", ".svg", ".png", ".ico")
BUNDLE_FOLDER = "dist"
BUNDLE_SUFFIXES = (".js", ".map", ".css")
INDEX = "index.html"
#: the bundle index.html loads; without it the page is "not built"
BUNDLE = f"{BUNDLE_FOLDER}/page.js"
CONFIG = "config.json"
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_CONNECTIONS = 32
REQUEST_TIMEOUT_S = 10.0
#: what the browser may do with the page: its own files, a WebSocket to the gateway
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": ("default-src 'self'; connect-src 'self' ws: wss:; "
                                "img-src 'self' data:; style-src 'self'; "
                                "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
}
NOT_BUILT = ("Brak's page is not built: {root} has index.html but not {bundle}. Build it "
             "with `make setup`, or `npm ci && npm run build` in bsal_ros/web before "
             "`colcon build` (docs/PAGE.md).")


@dataclass(frozen=True)
class Refused(Exception):
    """A request that is not served: its HTTP status and the kind logged once."""

    status: int
    kind: str
    detail: str = ""


def served_path(root: Path, url_path: str) -> Path:
    """The file of ``web/`` (``root``) that ``url_path`` names (``/`` : index.html);
    Refused when it is not one the page serves. Only the name's shape is checked
    here, before the disk is touched; the path never leaves ``root`` because no
    part of it may be ``..``, empty or hidden."""
    path = unquote(url_path)
    if not path.startswith("/") or "\\" in path or "\x00" in path:
        raise Refused(400, "a malformed path", repr(url_path))
    relative = path[1:] or INDEX
    parts = relative.split("/")
    if any(p in ("", ".", "..") or p.startswith(".") for p in parts):
        raise Refused(404, "a path outside the page's files", repr(url_path))
    suffix = Path(parts[-1]).suffix.lower()
    top = len(parts) == 1 and suffix in TOP_SUFFIXES
    bundled = len(parts) == 2 and parts[0] == BUNDLE_FOLDER and suffix in BUNDLE_SUFFIXES
    if not (top or bundled):
        raise Refused(404, "a file that is not one of the page's", repr(url_path))
    return root.joinpath(*parts)


def page_state(root: Path) -> str:
    """The page's state: ``built``, ``not built`` (index.html without its bundle) or
    ``missing`` (no index.html)."""
    if not (root / INDEX).is_file():
        return "missing"
    return "built" if (root / BUNDLE).is_file() else "not built"


class _Handler(http.server.BaseHTTPRequestHandler):
    """One request: a file of the page, config.json, or a refusal."""

    server_version = "bsal_ros-page"
    sys_version = ""
    protocol_version = "HTTP/1.0"     # one request per connection: no idle keep-alive
    default_request_version = "HTTP/1.0"   # no HTTP/0.9: every answer has a status line
    timeout = REQUEST_TIMEOUT_S

    def do_GET(self):   # noqa: N802 - BaseHTTPRequestHandler's naming
        """Answer a GET with the file's bytes."""
        self._answer(body=True)

    def do_HEAD(self):   # noqa: N802 - BaseHTTPRequestHandler's naming
        """Answer a HEAD with the file's headers only."""
        self._answer(body=False)

    def _other(self):
        self.server.page.refused("a method other than GET and HEAD", self.command)
        self._send(405, b"only GET and HEAD\n", "text/plain; charset=utf-8", True,
                   {"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_CONNECT = do_TRACE = _other

    def _answer(self, body: bool) -> None:
        page = self.server.page
        try:
            status, data, ctype = page.content(urlsplit(self.path).path)
        except Refused as refusal:
            page.refused(refusal.kind, refusal.detail)
            self._send(refusal.status, f"{refusal.status} {refusal.kind}\n".encode(),
                       "text/plain; charset=utf-8", body)
            return
        self._send(status, data, ctype, body)

    def _send(self, status: int, data: bytes, ctype: str, body: bool, extra=None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for name, value in {**HEADERS, **(extra or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def send_error(self, code, message=None, explain=None):
        """The base class's errors (a malformed request line, headers too long):
        a short text answer, the kind logged once."""
        self.server.page.refused("a malformed request", f"{code} {message or ''}".strip())
        self.close_connection = True
        try:
            self._send(code, f"{code} {message or 'bad request'}\n".encode(),
                       "text/plain; charset=utf-8", self.command != "HEAD")
        except OSError:
            pass

    def log_message(self, format, *args):   # noqa: A002 - the base class's signature
        """No line per request (refusals are logged once per kind by the server)."""


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 16

    def __init__(self, address, page: "PageServer", family: int, tls: ssl.SSLContext | None):
        self.address_family = family
        self.page = page
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(address, _Handler, bind_and_activate=True)
        if tls is not None:
            # the handshake happens in the request's thread (first read), never in the
            # accepting one: a client that stalls its handshake holds one slot only
            self.socket = tls.wrap_socket(self.socket, server_side=True,
                                          do_handshake_on_connect=False)

    def process_request(self, request, client_address):
        """A thread per request while fewer than MAX_CONNECTIONS run; else 503 now."""
        if not self._slots.acquire(blocking=False):
            self.page.refused("a request beyond the connection limit",
                              f"{MAX_CONNECTIONS} at once")
            if not isinstance(request, ssl.SSLSocket):
                # with TLS the 503 would need a handshake here, in the accepting
                # thread, which a stalling client holds: the connection is just closed
                try:
                    request.settimeout(1.0)
                    request.sendall(b"HTTP/1.0 503 Service Unavailable\r\n"
                                    b"Content-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address):
        """Serve one request and give its slot back."""
        try:
            request.settimeout(REQUEST_TIMEOUT_S)
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request, client_address):
        """A broken connection (reset, TLS handshake refused): once per kind, no traceback."""
        self.page.refused("a connection that failed (reset, timeout or TLS handshake)",
                          str(client_address[0]))


class PageServer:
    """Brak's page on ``host``:``port`` (0: any free port), files from ``root``.

    ``config``: what ``/config.json`` answers (the gateway's port ...);
    ``tls``: (certfile, keyfile) to serve HTTPS, or None; ``log``: one call
    per line to log (a refusal kind once, the page not built once)."""

    def __init__(self, root: Path, host: str, port: int, config: dict,
                 tls: tuple[str, str] | None = None, log: Callable[[str], None] = print):
        self.root = Path(root)
        self.host = host
        self.config = json.dumps(config, sort_keys=True).encode()
        self.log = log
        self.state = page_state(self.root)
        self._said: set[str] = set()
        self._said_lock = threading.Lock()
        self.refusals = 0
        context = None
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            context.load_cert_chain(tls[0], tls[1])
        self.scheme = "https" if context is not None else "http"
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._server = _Server((host, int(port)), self, family, context)
        self.port = self._server.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address as this server binds it (``http://127.0.0.1:8766/``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}/"

    def not_built_line(self) -> str:
        """The line to log once when the page cannot be shown ("" : it can)."""
        if self.state == "not built":
            return NOT_BUILT.format(root=self.root, bundle=BUNDLE)
        if self.state == "missing":
            return f"Brak's page is not installed: no {INDEX} in {self.root} (docs/PAGE.md)"
        return ""

    def start(self) -> int:
        """Serve in a thread of its own; returns the port."""
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={
            "poll_interval": 0.2}, name="brak-page-http", daemon=True)
        self._thread.start()
        return self.port

    def stop(self) -> None:
        """Stop serving and close the socket (idempotent)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._server.shutdown()
            thread.join(5.0)
        self._server.server_close()

    def content(self, url_path: str) -> tuple[int, bytes, str]:
        """(status, body, content type) for a GET of ``url_path``; Refused otherwise."""
        if url_path == "/" + CONFIG:
            return 200, self.config, "application/json; charset=utf-8"
        path = served_path(self.root, url_path)
        if self.state != "built" and path.name == INDEX and path.parent == self.root:
            line = self.not_built_line()
            return 503, (line + "\n").encode(), "text/plain; charset=utf-8"
        try:
            if not path.is_file():
                raise Refused(404, "a file that does not exist", url_path)
            if path.stat().st_size > MAX_FILE_BYTES:
                raise Refused(500, f"a file over {MAX_FILE_BYTES} bytes", url_path)
            data = path.read_bytes()
        except OSError as exc:
            raise Refused(500, "a file that cannot be read", f"{url_path}: {exc}") from None
        return 200, data, CONTENT_TYPES[path.suffix.lower()]

    def refused(self, kind: str, detail: str = "") -> None:
        """Count a refusal; log its kind the first time only."""
        with self._said_lock:
            self.refusals += 1
            if kind in self._said:
                return
            self._said.add(kind)
        self.log(f"Brak's page: refused {kind} ({detail}); each kind is said once")
