"""The local HTTP server behind ``annotate`` and ``view``: loopback only unless told otherwise.

A page that can write labels into a results file must not be reachable from other machines by
accident, nor from a web page the researcher happens to visit: the server binds 127.0.0.1 by
default and refuses any other address unless the host was given explicitly; every request
must carry a ``Host`` header naming the address it serves (so a DNS-rebinding site, whose
requests carry its own name, is refused), and writes must be JSON from the same origin (a
cross-site form cannot send them). Pages carry a strict Content-Security-Policy: scripts only
from this server, nothing inline, no frames.
"""

from __future__ import annotations

import errno
import ipaddress
import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "DEFAULT_HOST",
    "App",
    "Response",
    "WebError",
    "WebServer",
    "allowed_hosts",
    "bind_problem",
    "check_bind",
    "is_loopback",
    "json_response",
]

DEFAULT_HOST = "127.0.0.1"
#: Largest request body accepted (a label with a long note is a few kB).
MAX_BODY = 64 * 1024
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
STATIC_TYPES = {".js": "text/javascript", ".css": "text/css"}


class WebError(Exception):
    """The server cannot start as asked (address refused or in use); the message says what to
    do instead."""


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def json_response(data: Any, status: int = 200) -> Response:
    return Response(status, json.dumps(data, ensure_ascii=False).encode("utf-8"))


def error_response(status: int, message: str) -> Response:
    return json_response({"error": message}, status)


class App(Protocol):
    """What a page behind the server answers: GET with a query, POST with a JSON body."""

    def get(self, path: str, query: dict[str, str]) -> Response: ...

    def post(self, path: str, body: Any) -> Response: ...


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, *, explicit: bool) -> None:
    """Refuse a non-loopback address that the user did not ask for by name."""
    if not is_loopback(host) and not explicit:
        raise WebError(
            f"refusing to serve on {host}, which other machines can reach; pass --host {host} "
            "explicitly if that is what you want (anyone who reaches it can read the results)"
        )


def _wildcard(host: str) -> bool:
    return host in ("0.0.0.0", "::", "")


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The ``Host`` header values this server answers: the address it is bound to (and, for a
    loopback or wildcard bind, the loopback names; for a wildcard, this machine's names)."""
    names = {host.lower()}
    if is_loopback(host) or _wildcard(host):
        names |= {"127.0.0.1", "localhost", "[::1]"}
    if _wildcard(host):
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    names = {f"[{n}]" if ":" in n and not n.startswith("[") else n for n in names}
    out = {f"{n}:{port}" for n in names}
    if port == 80:
        out |= names
    return frozenset(out)


def static_file(name: str) -> Response:
    """A file of ``web/static`` (scripts and styles of the pages), or 404."""
    suffix = name[name.rfind(".") :] if "." in name else ""
    if "/" in name or name.startswith(".") or suffix not in STATIC_TYPES:
        return error_response(404, "not found")
    res = resources.files("deflectbench.web").joinpath("static", name)
    if not res.is_file():
        return error_response(404, "not found")
    return Response(200, res.read_bytes(), f"{STATIC_TYPES[suffix]}; charset=utf-8")


def _handler(
    app_of: Callable[[], App | None], hosts: Callable[[], frozenset[str]]
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "deflectbench"
        sys_version = ""

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the terminal shows the URL; requests carry model text, not worth logging."""

        def _send(self, res: Response) -> None:
            self.send_response(res.status)
            self.send_header("Content-Type", res.content_type)
            self.send_header("Content-Length", str(len(res.body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("Cross-Origin-Resource-Policy", "same-origin")
            for k, v in res.headers.items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(res.body)

        def _host_ok(self) -> bool:
            host = (self.headers.get("Host") or "").strip().lower()
            if host in hosts() or host == self._own_address():
                return True
            self._send(error_response(421, "this server answers only its own address"))
            return False

        def _own_address(self) -> str | None:
            """On a wildcard bind (``--host 0.0.0.0``), the address this connection reached, as
            a Host header names it: the machine's own IP is its own address, while a
            DNS-rebinding page still sends its own name and is refused."""
            address = self.server.server_address  # (host, port, ...) for TCP, as bound here
            bound = address[0] if isinstance(address, tuple) else address
            if not _wildcard(str(bound)):
                return None
            local, port = self.connection.getsockname()[:2]
            local = str(local).removeprefix("::ffff:")
            name = f"[{local}]" if ":" in local else local
            return f"{name}:{port}".lower()

        def _route(self) -> tuple[str, dict[str, str]]:
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            return parts.path, query

        def _safely(self, call: Callable[[App], Response]) -> None:
            app = app_of()
            if app is None:
                self._send(error_response(503, "starting; reload in a moment"))
                return
            try:
                res = call(app)
            except Exception as exc:  # one bad request must not stop the server
                res = error_response(500, f"{type(exc).__name__}: {exc}")
            self._send(res)

        def do_GET(self) -> None:
            if not self._host_ok():
                return
            path, query = self._route()
            if path == "/favicon.ico":  # browsers ask; no icon, and no 404 in the console
                self._send(Response(204, b"", "image/x-icon"))
                return
            if path.startswith("/static/"):
                self._send(static_file(path.removeprefix("/static/")))
                return
            self._safely(lambda app: app.get(path, query))

        def do_HEAD(self) -> None:
            self.do_GET()

        def do_POST(self) -> None:
            if not self._host_ok():
                return
            origin = self.headers.get("Origin")
            if origin is not None and urlsplit(origin).netloc.lower() not in hosts():
                self._send(error_response(403, "cross-origin writes are refused"))
                return
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if ctype != "application/json":
                self._send(error_response(415, "send JSON (Content-Type: application/json)"))
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY:
                self._send(error_response(413, f"a request body is at most {MAX_BODY} bytes"))
                return
            try:
                body = json.loads(self.rfile.read(length) or b"null")
            except (ValueError, UnicodeDecodeError):
                self._send(error_response(400, "the body is not valid JSON"))
                return
            path, _ = self._route()
            self._safely(lambda app: app.post(path, body))

    return Handler


def bind_problem(host: str, port: int, exc: OSError) -> str:
    """Why ``host:port`` cannot be served, and the option that fixes it (a busy port needs
    another --port; an unknown or foreign address needs another --host)."""
    reason = exc.strerror or str(exc)
    if isinstance(exc, socket.gaierror):
        return (
            f"cannot serve on {host}: no such address ({reason}); give --host an IP address of "
            "this machine, or leave it out for 127.0.0.1"
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return (
            f"cannot serve on {host}: it is not an address of this machine; give --host one of "
            "its addresses (0.0.0.0 for all), or leave it out for 127.0.0.1"
        )
    if exc.errno == errno.EACCES:
        return (
            f"cannot serve on {host}:{port}: ports below 1024 need administrator rights; pass "
            "a --port above 1023 (0 picks a free one)"
        )
    return f"cannot serve on {host}:{port}: {reason}; pass another --port (0 picks a free one)"


#: How often serving checks whether to stop (the standard library waits 0.5 s): a stop
#: (the end of a test, the page closed from another thread) returns at once, and a wake-up
#: twenty times a second costs an idle server nothing measurable.
POLL_INTERVAL_S = 0.05


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class WebServer:
    """``app`` served on ``host:port`` (port 0: any free port); see :meth:`running` for tests."""

    def __init__(
        self, app: App | None, host: str = DEFAULT_HOST, port: int = 0, *, explicit: bool = False
    ):
        check_bind(host, explicit=explicit)
        self._hosts: frozenset[str] = frozenset()
        #: What the server answers; may be set after binding (the CLI binds first, so a busy
        #: port or a bad address fails before anything is drawn or stored).
        self.app = app
        handler = _handler(lambda: self.app, lambda: self._hosts)
        server_cls: type[_Server] = _Server
        if ":" in host.strip("[]"):
            server_cls = type("_Server6", (_Server,), {"address_family": socket.AF_INET6})
        try:
            self.httpd = server_cls((host.strip("[]"), port), handler)
        except OSError as exc:
            raise WebError(bind_problem(host, port, exc)) from None
        self.host = host
        self.port = int(self.httpd.server_address[1])
        self._hosts = allowed_hosts(host, self.port)

    @property
    def url(self) -> str:
        host = "127.0.0.1" if _wildcard(self.host) else self.host
        host = f"[{host}]" if ":" in host and not host.startswith("[") else host
        return f"http://{host}:{self.port}/"

    def close(self) -> None:
        """Release the port without serving (the command failed after binding)."""
        self.httpd.server_close()

    def serve_forever(self) -> None:
        try:
            self.httpd.serve_forever(poll_interval=POLL_INTERVAL_S)
        finally:
            self.httpd.server_close()

    @contextmanager
    def running(self) -> Iterator[WebServer]:
        """Serve in a background thread for the duration of the block."""
        thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": POLL_INTERVAL_S}, daemon=True
        )
        thread.start()
        try:
            yield self
        finally:
            self.httpd.shutdown()
            self.httpd.server_close()
            thread.join(timeout=5)
