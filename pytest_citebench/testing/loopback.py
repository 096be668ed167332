"""The part every replay server of this package shares: serve a request handler on a free
127.0.0.1 port in a daemon thread, give its root URL, stop idempotently, work as a context
manager. The servers differ only in what they answer (``doi_replay``, ``title_search_replay``).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class LoopbackServer:
    """Base of a replay server: a subclass's ``start`` builds its handler and calls ``_serve``."""

    _httpd: ThreadingHTTPServer | None = None

    def start(self) -> Self:
        raise NotImplementedError

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> Self:
        """Serve ``handler`` on a free loopback port (never another address) in a daemon thread."""
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    @property
    def root(self) -> str:
        """Base URL of the running server (its port is picked by the OS at ``start``)."""
        if self._httpd is None:
            raise RuntimeError("server not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def stop(self) -> None:
        """Idempotent; frees the port."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
