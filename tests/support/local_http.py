"""The scaffolding every local test server shares: an app served on 127.0.0.1 at a free port
from a daemon thread, stopped cleanly, with handlers that log nothing.

The wire-format servers (:mod:`support.servers`, :mod:`support.batch_servers`) differ in
what they answer, not in how they start, stop or write a response; that is written once here.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that time out close their sockets under us; that is expected here.
        pass


class QuietHandler(BaseHTTPRequestHandler):
    """A keep-alive handler without logging; ``app`` is the server object it answers for."""

    app: Any
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(
        self,
        status: int,
        payload: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
        self._sent(status)

    def _sent(self, status: int) -> None:
        """Called after each response (a server counting statuses overrides it)."""


class LocalServer:
    """Start/stop and the URLs of an app whose requests ``handler`` answers (a context manager).

    ``_stopping`` is set on stop, so a handler made to hang (a fault) wakes up and ends.
    """

    def __init__(
        self, handler: type[QuietHandler], server_class: type[QuietServer] = QuietServer
    ) -> None:
        self._handler = handler
        self._server_class = server_class
        self._stopping = threading.Event()
        self._httpd: QuietServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        handler = type("Handler", (self._handler,), {"app": self})
        httpd = self._server_class(("127.0.0.1", 0), handler)
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url
