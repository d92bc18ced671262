"""The ``cogen view`` server: loopback only, read-only, and nothing outside the dataset folder and
the page's own files can be read, however the path is written."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from pathlib import Path

import pytest

from cogen.view import HOST, ViewApp, make_server

SECRET = "top-secret-outside-the-dataset"

#: Every way out of the dataset folder or the page's assets that we know of, written raw.
ATTACKS = [
    "/../secret.txt", "/files/../secret.txt", "/files/../../secret.txt", "/files/data/../../secret.txt",
    "/files/%2e%2e/secret.txt", "/files/%2E%2E/secret.txt", "/files/..%2fsecret.txt", "/files/..%2Fsecret.txt",
    "/files/%2e%2e%2fsecret.txt", "/files/%252e%252e/secret.txt", "/files/%252e%252e%252fsecret.txt",
    "/files/..%5csecret.txt", "/files/..\\secret.txt", "/files/%5c..%5csecret.txt", "/files/%00../secret.txt",
    "/files/README.md%00.png", "/files//etc/passwd", "/files/%2fetc%2fpasswd", "/files/{root}/secret.txt",
    "/files/%2F{root}%2Fsecret.txt", "//etc/passwd", "/files/.cogen/lock", "/files/.cogen/../../secret.txt",
    "/files/link.txt", "/files/C:/Windows/win.ini", "/assets/../server.py", "/assets/%2e%2e/server.py",
    "/assets/..%2fserver.py", "/assets/../../secret.txt", "/assets/%2e%2e%2f%2e%2e%2fsecret.txt", "/assets/view.js/..",
    "/assets/", "/assets/__init__.py", "/static/view.js", "/api/../secret.txt", "/files/data/./../../secret.txt",
    "/files/%c0%ae%c0%ae/secret.txt", "/files/%u002e%u002e/secret.txt", "/files/...//secret.txt",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A dataset folder (a manifest, a card, build state, a link out) served on a free port."""
    root = tmp_path_factory.mktemp("served")
    (root / "secret.txt").write_text(SECRET)
    folder = root / "data"
    (folder / "manifests").mkdir(parents=True)
    (folder / ".cogen").mkdir()
    (folder / ".cogen" / "lock").write_text(SECRET)
    (folder / "README.md").write_text("# the card")
    (folder / "link.txt").symlink_to(root / "secret.txt")
    manifest = {"config": "S", "family": None, "splits": {"train": {"files": [], "rows": 0}}}
    (folder / "manifests" / "S.json").write_text(json.dumps(manifest))
    server = make_server(ViewApp(folder))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, root
    server.shutdown()
    server.server_close()


def _get(server, path: str, method: str = "GET", host: str | None = None) -> tuple[int, bytes]:
    port = server.server_address[1]
    connection = http.client.HTTPConnection(HOST, port, timeout=10)
    connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    connection.putheader("Host", host or f"{HOST}:{port}")
    connection.endheaders()
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, body


def test_the_server_listens_on_loopback_only(served):
    server, _ = served
    assert server.server_address[0] == "127.0.0.1" and server.server_address[1] > 0
    assert server.socket.family == socket.AF_INET


@pytest.mark.parametrize("attack", ATTACKS)
def test_no_path_reads_outside_the_folder_or_the_assets(served, attack):
    server, root = served
    status, body = _get(server, attack.format(root=str(root).lstrip("/")))
    assert status in (403, 404), (attack, status)
    assert SECRET.encode() not in body and b"import " not in body


def test_the_page_its_assets_and_the_folder_s_files_are_served(served):
    server, _ = served
    for path, marker in [("/", b"<!doctype html>"), ("/assets/view.js", b"use strict"), ("/assets/view.css", b".c0"),
                         ("/files/README.md", b"# the card"), ("/files/manifests/S.json", b'"config"'),
                         ("/api/info", b'"configs"')]:
        status, body = _get(server, path)
        assert status == 200 and marker in body, path


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_the_server_is_read_only(served, method):
    server, root = served
    assert _get(server, "/files/README.md", method)[0] == 405
    assert (root / "data" / "README.md").read_text() == "# the card"


def test_another_host_name_is_refused(served):
    server, _ = served
    assert _get(server, "/api/info", host="evil.example:80")[0] == 403
    assert _get(server, "/api/info", host=f"localhost:{server.server_address[1]}")[0] == 200


def test_bad_queries_are_a_json_error(served):
    server, _ = served
    status, body = _get(server, "/api/rows?config=nope&split=train")
    assert status == 400 and "has no config" in json.loads(body)["error"]
    status, body = _get(server, "/api/rows")
    assert status == 400 and "error" in json.loads(body)


def test_every_answer_carries_the_security_headers(served):
    server, _ = served
    connection = http.client.HTTPConnection(HOST, server.server_address[1], timeout=10)
    connection.request("GET", "/")
    response = connection.getresponse()
    response.read()
    assert "default-src 'self'" in response.getheader("Content-Security-Policy")
    assert response.getheader("X-Content-Type-Options") == "nosniff"
    connection.close()


def test_assets_are_only_the_shipped_page_files(served):
    server, _ = served
    shipped = {p.name for p in (Path(__file__).resolve().parents[1] / "cogen" / "view" / "static").iterdir()}
    assert set(server.assets) == shipped == {"index.html", "view.css", "view.js"}


def test_clients_that_reset_or_drop_the_connection_leave_no_traceback(served, capfd):
    """A browser that closes a tab mid-answer resets the connection: the server stays quiet and up."""
    import struct

    server, _ = served
    port = server.server_address[1]
    for sending in (b"GET /api/in", b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port, b""):
        for _ in range(5):
            client = socket.create_connection((HOST, port), timeout=10)
            if sending:
                client.sendall(sending)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
            client.close()
    assert _get(server, "/api/info")[0] == 200
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err and "ConnectionResetError" not in captured.err, captured.err[:500]
