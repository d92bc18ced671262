"""The HTTP side of ``cogen view``: the standard library's ``ThreadingHTTPServer`` on loopback.

Routes, all ``GET`` (any other method is refused with 405: the server is read-only):

* ``/``                      the page (``static/index.html``)
* ``/assets/<name>``         the page's own files, only those shipped in ``static/``
* ``/api/info``              configs, splits, the predictions file (:meth:`ViewApp.info`)
* ``/api/filters``           a split's facets and predictions overview (:meth:`ViewApp.filters`)
* ``/api/rows``              one page of drawn rows (:meth:`ViewApp.page`)
* ``/files/<path>``          a file of a local dataset folder (card, previews, manifests, shards);
  never the build state ``.cogen/`` and never a path that leaves the folder

A request whose path holds ``..``, a backslash, a NUL, an absolute or encoded way out (after
decoding, once) gets 403; an unknown path 404. The ``Host`` header must name the loopback
address the server listens on (a page on another site cannot reach it by DNS rebinding).
"""

from __future__ import annotations

import json
import mimetypes
import socket
import sys
import urllib.parse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path

from cogen.errors import CogenError, DataError
from cogen.view.app import ViewApp
from cogen.view.source import FolderSource, safe_relpath

__all__ = ["HOST", "ViewServer", "make_server"]

#: The only address the server listens on.
HOST = "127.0.0.1"
_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _assets() -> dict[str, bytes]:
    """The page's files, read once from the package (``cogen/view/static``)."""
    folder = resources.files("cogen.view") / "static"
    return {entry.name: entry.read_bytes() for entry in folder.iterdir() if entry.is_file()}


def _required(query: dict, name: str) -> str:
    """A parameter the request must carry (a clear 400 when it does not, never a raw ``KeyError``)."""
    value = query.get(name, [""])[0]
    if not value:
        raise DataError(f"the request names no {name}")
    return value


def _number(one: dict, name: str, default: int) -> int:
    try:
        return int(one.get(name, default))
    except ValueError:
        raise DataError(f"{name} must be a whole number, not {one[name][:40]!r}") from None


def _flag(query: dict, name: str) -> bool:
    return query.get(name, [""])[0] in ("1", "true", "yes")


class ViewServer(ThreadingHTTPServer):
    """A ``ThreadingHTTPServer`` bound to :data:`HOST` that answers for one :class:`ViewApp`."""

    daemon_threads = True

    def __init__(self, app: ViewApp, port: int = 0):
        self.app, self.assets = app, _assets()
        super().__init__((HOST, port), _Handler)

    def handle_error(self, request, client_address) -> None:
        """A client that resets or drops its connection (a closed tab, a cancelled fetch) is no error of the
        server's: ignored in silence. Anything else is one line on stderr, never a traceback."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            return
        print(f"cogen view: a request from {client_address[0]} failed ({type(error).__name__}: {error})",
              file=sys.stderr, flush=True)

    @property
    def url(self) -> str:
        """Where the page is served."""
        return f"http://{HOST}:{self.server_address[1]}/"


def make_server(app: ViewApp, port: int = 0) -> ViewServer:
    """A :class:`ViewServer` on ``port`` (0: a free one chosen by the system)."""
    return ViewServer(app, port)


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format, *args) -> None:
        """Quiet: the terminal shows the URL and the stop line only."""

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in _SECURITY_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, payload: dict, status: int = 200) -> None:
        self._send(status, json.dumps(payload, allow_nan=False, default=str).encode(), "application/json; charset=utf-8")

    def _error(self, status: HTTPStatus, message: str | None = None) -> None:
        self._json({"error": message or status.phrase}, status)

    def _refuse_method(self) -> None:
        self.send_response(HTTPStatus.METHOD_NOT_ALLOWED)
        self.send_header("Allow", "GET, HEAD")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse_method

    def do_HEAD(self) -> None:
        self.do_GET()

    def _host_ok(self) -> bool:
        port = self.server.server_address[1]
        return self.headers.get("Host", "") in (f"{HOST}:{port}", f"localhost:{port}")

    def do_GET(self) -> None:
        if not self._host_ok():
            return self._error(HTTPStatus.FORBIDDEN, "this server answers only to its loopback address")
        parts = urllib.parse.urlsplit(self.path)
        try:
            path = urllib.parse.unquote(parts.path, errors="strict")
        except UnicodeDecodeError:
            return self._error(HTTPStatus.FORBIDDEN, "path refused")
        if not path.startswith("/") or path.startswith("//") or "\\" in path or "\x00" in path \
                or any(segment in (".", "..") for segment in path.split("/")):
            return self._error(HTTPStatus.FORBIDDEN, "path refused")
        query = urllib.parse.parse_qs(parts.query)
        try:
            self._route(path, query)
        except CogenError as error:
            self._error(HTTPStatus.BAD_REQUEST, str(error))
        except ValueError as error:
            self._error(HTTPStatus.BAD_REQUEST, f"bad request: {error}")

    def _route(self, path: str, query: dict) -> None:
        if path in ("/", "/index.html"):
            return self._asset("index.html")
        if path == "/favicon.ico":
            return self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        if path.startswith("/assets/"):
            return self._asset(path[len("/assets/"):])
        if path.startswith("/files/"):
            return self._file(path[len("/files/"):])
        api = {"/api/info": self._info, "/api/filters": self._filters, "/api/rows": self._rows}.get(path)
        if api is None:
            return self._error(HTTPStatus.NOT_FOUND)
        return api(query)

    def _asset(self, name: str) -> None:
        body = self.server.assets.get(name)
        if body is None:
            return self._error(HTTPStatus.NOT_FOUND)
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        self._send(200, body, kind + ("; charset=utf-8" if kind.startswith("text/") or kind.endswith("javascript") else ""))

    def _file(self, name: str) -> None:
        source = self.server.app.source
        clean = safe_relpath(name)
        if not isinstance(source, FolderSource) or clean is None:
            return self._error(HTTPStatus.FORBIDDEN if clean is None else HTTPStatus.NOT_FOUND)
        target = (source.root / clean).resolve()
        if not target.is_relative_to(source.root) or not Path(target).is_file():
            return self._error(HTTPStatus.FORBIDDEN if not target.is_relative_to(source.root) else HTTPStatus.NOT_FOUND)
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        self._send(200, target.read_bytes(), kind)

    def _info(self, query: dict) -> None:
        self._json(self.server.app.info())

    def _filters(self, query: dict) -> None:
        self._json(self.server.app.filters(_required(query, "config"), _required(query, "split")))

    def _rows(self, query: dict) -> None:
        one = {name: values[0] for name, values in query.items()}
        chosen = {name[len("f."):]: value for name, value in one.items() if name.startswith("f.") and value}
        self._json(self.server.app.page(
            _required(query, "config"), _required(query, "split"), offset=_number(one, "offset", 0),
            limit=_number(one, "limit", 12), chosen=chosen, wrong_only=_flag(query, "wrong"),
            error=one.get("error") or None, row_id=one.get("id") or None))
