"""A recording reverse proxy on loopback in front of the moto S3 server: every request Ketch sends
goes through it to the real server and is logged (method, path, Range header), so tests can count
the GET/HEAD requests a scan makes and see which byte ranges of which objects it fetched."""

from __future__ import annotations

import http.client
import re
import threading
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

# Hop-by-hop headers are the proxy's own business, not forwarded.
_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}
_RANGE = re.compile(r"bytes=(\d+)-(\d*)\Z")


@dataclass(frozen=True)
class Request:
    """One request as the server saw it: ``path`` without the query string; ``range`` is the
    ``(first, last)`` byte pair (inclusive; ``last`` None when open-ended) of a ranged GET."""

    method: str
    path: str
    query: str
    range: tuple[int, int | None] | None


class S3RequestLog:
    """``with S3RequestLog(endpoint) as log:`` serves on ``log.endpoint`` (http://127.0.0.1:PORT),
    forwards each request to ``endpoint`` and appends it to ``log.requests`` (thread-safe)."""

    def __init__(self, upstream: str) -> None:
        parsed = urllib.parse.urlsplit(upstream)
        self._upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self._lock = threading.Lock()
        self.requests: list[Request] = []
        log = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
                return

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                split = urllib.parse.urlsplit(self.path)
                match = _RANGE.match(self.headers.get("Range") or "")
                byte_range = (int(match[1]), int(match[2]) if match[2] else None) if match else None
                with log._lock:
                    log.requests.append(
                        Request(self.command, urllib.parse.unquote(split.path), split.query, byte_range)
                    )
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                # One upstream connection per client connection (this handler), kept alive.
                if not hasattr(self, "_upstream_conn"):
                    self._upstream_conn = http.client.HTTPConnection(*log._upstream, timeout=30)
                try:
                    self._upstream_conn.request(self.command, self.path, body=body, headers=headers)
                    response = self._upstream_conn.getresponse()
                    payload = response.read()
                except (http.client.HTTPException, OSError):
                    self._upstream_conn.close()  # reconnect once (the server closed an idle one)
                    self._upstream_conn.request(self.command, self.path, body=body, headers=headers)
                    response = self._upstream_conn.getresponse()
                    payload = response.read()
                self.send_response(response.status, response.reason)
                for key, value in response.getheaders():
                    # A HEAD answer's Content-Length is the object's size: keep it.
                    if key.lower() not in _HOP and (
                        key.lower() != "content-length" or self.command == "HEAD"
                    ):
                        self.send_header(key, value)
                if self.command != "HEAD":
                    self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward

            def finish(self) -> None:
                super().finish()
                if hasattr(self, "_upstream_conn"):
                    self._upstream_conn.close()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        host, port = self._server.server_address[:2]
        self.endpoint = f"http://{host}:{port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> S3RequestLog:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def of(self, method: str, prefix: str = "") -> list[Request]:
        """The requests with this method whose path starts with ``prefix`` (e.g. ``/bucket/key``)."""
        with self._lock:
            return [r for r in self.requests if r.method == method and r.path.startswith(prefix)]
