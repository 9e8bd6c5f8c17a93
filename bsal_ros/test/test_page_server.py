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

"""Brak's page server (bsal_ros/foxglove/page_server.py; no ROS node, no browser):
which files it serves and how, what it refuses, its bounds, its log lines, HTTPS;
and how the gateway starts it (nodes/foxglove_page.py, with a stand-in gateway)."""

import http.client
import json
from pathlib import Path
import shutil
import socket
import ssl
import subprocess
import time

import pytest

from bsal_ros.foxglove import page_server
from bsal_ros.foxglove.page_server import PageServer, Refused, served_path

CONFIG = {"gateway": {"port": 8765, "scheme": "ws", "subprotocol": "foxglove.sdk.v1"},
          "namespace": "/"}


def make_web(root: Path, built: bool = True) -> Path:
    """A web/ folder as the package ships it, plus what must never be served."""
    web = root / "web"
    (web / "dist").mkdir(parents=True)
    (web / "index.html").write_text("<!doctype html><title>Brak</title>")
    (web / "page.css").write_text("body{}")
    (web / "favicon.svg").write_text("<svg/>")
    if built:
        (web / "dist" / "page.js").write_text("console.log(1)")
        (web / "dist" / "page.js.map").write_text("{}")
    (web / "package.json").write_text('{"name": "x"}')
    (web / "src").mkdir()
    (web / "src" / "main.js").write_text("secret source")
    (web / "node_modules" / "lib").mkdir(parents=True)
    (web / "node_modules" / "lib" / "index.js").write_text("dependency")
    (web / ".hidden.html").write_text("hidden")
    (web / "notes.txt").write_text("not a page file")
    (root / "outside.html").write_text("outside the web folder")
    (web / "dist" / "big.js").write_bytes(b"x")
    return web


@pytest.fixture
def server(tmp_path):
    lines = []
    web = make_web(tmp_path)
    srv = PageServer(web, "127.0.0.1", 0, CONFIG, log=lines.append)
    srv.start()
    srv.lines = lines
    yield srv
    srv.stop()


def request(srv, method, path, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    try:
        conn.request(method, path, headers=headers or {})
        answer = conn.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        conn.close()


@pytest.mark.parametrize("path,rel", [
    ("/", "index.html"), ("/index.html", "index.html"), ("/page.css", "page.css"),
    ("/favicon.svg", "favicon.svg"), ("/dist/page.js", "dist/page.js"),
    ("/dist/page.js.map", "dist/page.js.map"), ("/dist/page%2Ejs", "dist/page.js"),
])
def test_the_page_s_files_are_what_a_path_names(tmp_path, path, rel):
    assert served_path(tmp_path, path) == tmp_path / rel


@pytest.mark.parametrize("path", [
    "/../outside.html", "/%2e%2e/outside.html", "/dist/../package.json", "/dist/%2e%2e/index.html",
    "/package.json", "/package-lock.json", "/node_modules/lib/index.js", "/src/main.js",
    "/.hidden.html", "/dist/.x.js", "//etc/passwd.html", "/dist//page.js", "/dist/",
    "/dist", "/dist/sub/page.js", "/notes.txt", "/index.html/", "/./index.html",
    "relative.html", "/a\\b.html", "/x%00.html", "/dist/page.html", "/index.js",
])
def test_anything_else_is_refused_before_the_disk_is_looked_at(tmp_path, path):
    with pytest.raises(Refused) as refused:
        served_path(tmp_path, path)
    assert refused.value.status in (400, 404)


def test_get_serves_each_file_with_its_content_type_and_the_security_headers(server):
    for path, ctype, body in [
            ("/", "text/html; charset=utf-8", b"<!doctype html><title>Brak</title>"),
            ("/page.css", "text/css; charset=utf-8", b"body{}"),
            ("/favicon.svg", "image/svg+xml", b"<svg/>"),
            ("/dist/page.js", "text/javascript; charset=utf-8", b"console.log(1)"),
            ("/dist/page.js.map", "application/json; charset=utf-8", b"{}")]:
        status, headers, data = request(server, "GET", path)
        assert (status, headers["Content-Type"], data) == (200, ctype, body), path
        assert headers["Content-Length"] == str(len(body))
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    assert server.lines == []


def test_config_json_names_the_gateway_and_a_query_string_changes_nothing(server):
    status, headers, data = request(server, "GET", "/config.json?x=1")
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    assert json.loads(data) == CONFIG


def test_head_answers_the_headers_without_the_body(server):
    status, headers, data = request(server, "HEAD", "/dist/page.js")
    assert (status, data) == (200, b"")
    assert headers["Content-Length"] == str(len("console.log(1)"))


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"])
def test_other_methods_are_refused_405(server, method):
    status, headers, _ = request(server, method, "/index.html")
    assert status == 405 and headers["Allow"] == "GET, HEAD"


def test_no_listing_no_escape_no_other_file_over_http(server):
    for path in ["/dist/", "/dist", "/src/main.js", "/package.json", "/node_modules/lib/index.js",
                 "/%2e%2e/outside.html", "/.hidden.html", "/notes.txt", "/missing.html"]:
        status, _, data = request(server, "GET", path)
        assert status in (400, 404), path
        assert b"secret source" not in data and b"dependency" not in data
        assert b"outside the web folder" not in data


def test_each_kind_of_refusal_is_logged_once_not_per_request(server):
    for _ in range(20):
        request(server, "GET", "/package.json")
        request(server, "POST", "/")
        request(server, "GET", "/missing.html")
    assert server.refusals == 60
    assert len(server.lines) == 3, server.lines
    assert any("a method other than GET and HEAD" in ln for ln in server.lines)
    assert any("a file that is not one of the page's" in ln for ln in server.lines)
    assert any("a file that does not exist" in ln for ln in server.lines)


def test_a_malformed_request_is_answered_400_and_the_server_goes_on(server):
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
            s.sendall(b"NONSENSE\r\n\r\n")
            assert s.recv(100).startswith(b"HTTP/1.0 400")
    assert sum("a malformed request" in ln for ln in server.lines) == 1
    assert request(server, "GET", "/")[0] == 200


def test_a_file_over_the_size_bound_is_not_served(server, monkeypatch):
    monkeypatch.setattr(page_server, "MAX_FILE_BYTES", 3)
    (server.root / "dist" / "big.js").write_bytes(b"x" * 4)
    assert request(server, "GET", "/dist/big.js")[0] == 500
    assert request(server, "GET", "/favicon.svg")[0] == 500      # 6 bytes: over 3 too


def test_requests_beyond_the_bound_are_answered_503_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(page_server, "MAX_CONNECTIONS", 2)
    lines = []
    srv = PageServer(make_web(tmp_path), "127.0.0.1", 0, CONFIG, log=lines.append)
    srv.start()
    idle = []
    try:
        # two connections that never send a request hold both slots
        idle = [socket.create_connection(("127.0.0.1", srv.port), timeout=5) for _ in range(2)]
        deadline = time.monotonic() + 10
        status = None
        while time.monotonic() < deadline:
            status = request(srv, "GET", "/")[0]
            if status == 503:
                break
            time.sleep(0.05)      # the two idle ones may not have been accepted yet
        assert status == 503
        assert sum("beyond the connection limit" in ln for ln in lines) == 1
        for s in idle:
            s.close()
        deadline = time.monotonic() + 10
        while request(srv, "GET", "/")[0] != 200:
            assert time.monotonic() < deadline, "the slots never came back"
            time.sleep(0.05)
    finally:
        for s in idle:
            s.close()
        srv.stop()


def test_a_page_without_its_bundle_says_it_is_not_built(tmp_path):
    lines = []
    srv = PageServer(make_web(tmp_path, built=False), "127.0.0.1", 0, CONFIG, log=lines.append)
    srv.start()
    try:
        assert srv.state == "not built"
        assert "is not built" in srv.not_built_line() and "npm run build" in srv.not_built_line()
        status, headers, data = request(srv, "GET", "/")
        assert status == 503 and b"is not built" in data
        assert headers["Content-Type"].startswith("text/plain")
    finally:
        srv.stop()


def test_a_missing_index_says_the_page_is_not_installed(tmp_path):
    srv = PageServer(tmp_path, "127.0.0.1", 0, CONFIG, log=lambda line: None)
    try:
        assert srv.state == "missing"
        assert "not installed" in srv.not_built_line()
    finally:
        srv.stop()


def test_a_built_page_says_nothing(server):
    assert server.state == "built" and server.not_built_line() == ""


def test_stop_frees_the_port_and_can_be_called_twice(tmp_path):
    srv = PageServer(make_web(tmp_path), "127.0.0.1", 0, CONFIG, log=lambda line: None)
    srv.start()
    port = srv.port
    srv.stop()
    srv.stop()
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))


def test_a_taken_port_is_an_os_error(server):
    with pytest.raises(OSError):
        PageServer(server.root, "127.0.0.1", server.port, CONFIG, log=lambda line: None)


def test_url_names_the_scheme_host_and_port(server):
    assert server.url == f"http://127.0.0.1:{server.port}/"


def self_signed(tmp_path):
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl command to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def test_with_tls_it_serves_https_only(tmp_path):
    cert, key = self_signed(tmp_path)
    lines = []
    srv = PageServer(make_web(tmp_path), "127.0.0.1", 0, CONFIG, tls=(str(cert), str(key)),
                     log=lines.append)
    srv.start()
    try:
        assert srv.url == f"https://127.0.0.1:{srv.port}/"
        context = ssl.create_default_context(cafile=str(cert))
        conn = http.client.HTTPSConnection("127.0.0.1", srv.port, timeout=10, context=context)
        conn.request("GET", "/dist/page.js")
        answer = conn.getresponse()
        assert (answer.status, answer.read()) == (200, b"console.log(1)")
        conn.close()
        # plain HTTP on the HTTPS port gets no page
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
            s.settimeout(5)
            try:
                data = s.recv(1000)
            except (ConnectionResetError, socket.timeout):
                data = b""
            assert b"<title>Brak</title>" not in data
        deadline = time.monotonic() + 5
        while not any("failed" in ln for ln in lines) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sum("connection that failed" in ln for ln in lines) == 1, lines
    finally:
        srv.stop()


def test_with_tls_a_request_beyond_the_bound_is_closed_without_a_handshake(tmp_path,
                                                                           monkeypatch):
    # a 503 over TLS needs the handshake first, in the accepting thread, which a
    # client that stalls its handshake would hold: beyond the bound it is closed
    monkeypatch.setattr(page_server, "MAX_CONNECTIONS", 1)
    cert, key = self_signed(tmp_path)
    lines = []
    srv = PageServer(make_web(tmp_path), "127.0.0.1", 0, CONFIG, tls=(str(cert), str(key)),
                     log=lines.append)
    srv.start()
    context = ssl.create_default_context(cafile=str(cert))
    idle = None
    try:
        idle = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        deadline = time.monotonic() + 10
        while not any("beyond the connection limit" in ln for ln in lines):
            assert time.monotonic() < deadline, lines
            conn = http.client.HTTPSConnection("127.0.0.1", srv.port, timeout=10,
                                               context=context)
            try:
                conn.request("GET", "/")
                answer = conn.getresponse()
                # the idle one not accepted yet: served
                assert answer.status == 200, answer.status
            except (ssl.SSLError, ConnectionError, http.client.RemoteDisconnected):
                pass                  # closed before the handshake: the refusal
            finally:
                conn.close()
            time.sleep(0.05)
        idle.close()
        deadline = time.monotonic() + 10
        while True:                   # the slot comes back: served again
            conn = http.client.HTTPSConnection("127.0.0.1", srv.port, timeout=10,
                                               context=context)
            try:
                conn.request("GET", "/")
                if conn.getresponse().status == 200:
                    break
            except (ssl.SSLError, ConnectionError, http.client.RemoteDisconnected):
                assert time.monotonic() < deadline, "the slot never came back"
                time.sleep(0.05)
            finally:
                conn.close()
    finally:
        if idle is not None:
            idle.close()
        srv.stop()


class Gateway:
    """What serve_page reads of a started FoxgloveGatewayNode (no ROS needed)."""

    def __init__(self, **params):
        from types import SimpleNamespace
        self.p = {"page": True, "page_port": 0, "host": "127.0.0.1", "certfile": "",
                  "keyfile": "", **params}
        self.port = 8765
        self.filter = SimpleNamespace(namespace="brak2")
        self.access = SimpleNamespace(tls=False)
        self.lines = []
        self.stopped = 0
        self.page, self.page_url = None, ""

    def get_logger(self):
        from types import SimpleNamespace
        return SimpleNamespace(warning=self.lines.append)

    def stop(self):
        self.stopped += 1


@pytest.fixture
def share(tmp_path, monkeypatch):
    from bsal_ros.nodes import foxglove_page
    monkeypatch.setattr(foxglove_page, "share_dir", lambda: tmp_path)
    return tmp_path


def test_the_gateway_serves_the_page_and_tells_it_the_gateway(share):
    from bsal_ros.nodes.foxglove_page import serve_page
    make_web(share)
    gw = Gateway()
    words = serve_page(gw, "ws")
    try:
        assert words == f"Brak's page {gw.page_url}" and gw.page_url == gw.page.url
        assert gw.lines == []
        _, _, data = request(gw.page, "GET", "/config.json")
        assert json.loads(data) == {"gateway": {"port": 8765, "scheme": "ws",
                                                "subprotocol": "foxglove.sdk.v1"},
                                    "namespace": "/brak2"}
    finally:
        gw.page.stop()


def test_the_gateway_says_once_that_the_page_is_not_built(share):
    from bsal_ros.nodes.foxglove_page import serve_page
    make_web(share, built=False)
    gw = Gateway()
    words = serve_page(gw, "ws")
    try:
        assert words.endswith("(not built)")
        assert len(gw.lines) == 1 and "Brak's page is not built" in gw.lines[0]
        for _ in range(3):
            assert request(gw.page, "GET", "/")[0] == 503
        assert len(gw.lines) == 1
    finally:
        gw.page.stop()


def test_page_false_serves_nothing(share):
    from bsal_ros.nodes.foxglove_page import serve_page
    gw = Gateway(page=False)
    assert serve_page(gw, "ws") == "Brak's page off (page is false)"
    assert gw.page is None and gw.page_url == ""


def test_a_taken_page_port_stops_the_gateway_with_an_os_error(share):
    from bsal_ros.nodes.foxglove_page import serve_page
    web = make_web(share)
    taken = PageServer(web, "127.0.0.1", 0, CONFIG, log=lambda line: None)
    try:
        gw = Gateway(page_port=taken.port)
        with pytest.raises(OSError, match="cannot serve Brak's page on 127.0.0.1"):
            serve_page(gw, "ws")
        assert gw.stopped == 1 and gw.page is None
    finally:
        taken.stop()
