"""In-memory stand-in for the Hugging Face Hub HTTP API, for loopback tests (standard library only).

Serves what ``HfApi.create_repo`` / ``list_repo_files`` / ``create_commit`` / ``upload_folder``
and ``datasets.load_dataset("org/name", ...)`` call (huggingface_hub 2.4, datasets 5.2) on
127.0.0.1. Binary files go through the legacy LFS "basic" transfer, so clients must run with
``HF_HUB_DISABLE_XET`` (the fixture in ``conftest.py`` patches it). Not covered: Xet, branches,
pull requests, pagination, metadata validation (every README is accepted).

Authentication is optional: with ``hub.tokens`` set (token -> ``"read"`` or ``"write"``), write
routes answer 401 without a known token and 403 with a read token, as the real Hub does.
``hub.failures`` injects faults by request prefix, to test what a failed upload leaves: a status
code (``"PUT /__lfs__": 500``: every such request fails) or a :class:`Fault` (fail only after some
requests went through, or stall a request so that a test can kill the client mid-upload).

Adapted from the team's ecosystem research (fake Hub, appendix A). Two details matter for speed
and correctness: ``disable_nagle_algorithm`` (else every keep-alive request stalls about 40 ms)
and no body on HEAD responses.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LFS_SUFFIXES = (".parquet", ".arrow", ".bin", ".npy", ".zip", ".gz")  # like the Hub's default .gitattributes
REPO = r"(?P<rtype>model|dataset|space)s/(?P<rid>[^/]+/[^/]+)"
RESOLVE = r"/(?:(?P<rtype>dataset|space)s/)?(?P<rid>[^/]+/[^/]+)"


def git_sha1(data: bytes) -> str:
    """The git blob id of ``data`` (what the Hub reports as a file's oid)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Fault:
    """An injected fault: let ``after`` matching requests through, then answer ``status`` (``times``
    times, or forever); with ``stall`` seconds, hold each failing request that long first (the
    hub's ``wake`` event ends every stall early)."""

    def __init__(self, status: int = 500, after: int = 0, times: int | None = None, stall: float = 0.0):
        self.status, self.after, self.times, self.stall = status, after, times, stall
        self.seen = self.failed = 0

    def strikes(self) -> bool:
        """Count one matching request; True when this one fails."""
        self.seen += 1
        if self.seen <= self.after or (self.times is not None and self.failed >= self.times):
            return False
        self.failed += 1
        return True


class Repo:
    """A repository: its current files and the files at every commit."""

    def __init__(self, rid: str, rtype: str, private: bool = False):
        self.id, self.type, self.private, self.files = rid, rtype, private, {}
        self.history: list[tuple[str, str, dict[str, bytes]]] = []
        self.commit("initial commit")

    def commit(self, message: str) -> str:
        sha = hashlib.sha1(f"{self.id}{time.time_ns()}{message}{len(self.history)}".encode()).hexdigest()
        self.history.append((sha, message, dict(self.files)))
        return sha

    @property
    def sha(self) -> str:
        return self.history[-1][0]

    @property
    def commits(self) -> list[str]:
        """Commit messages after the initial commit, oldest first."""
        return [message for _, message, _ in self.history[1:]]

    def at(self, rev):
        """Files at a revision ("main" or a commit sha), or None."""
        if rev in (None, "main", "refs/heads/main"):
            return self.history[-1][2]
        return next((files for sha, _, files in self.history if sha == rev), None)


class Hub:
    """The server's state: repositories, LFS objects, a request log and optional tokens."""

    def __init__(self):
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lfs: dict[str, bytes] = {}  # sha256 -> bytes
        self.lock = threading.Lock()
        self.log: list[str] = []
        self.tokens: dict[str, str] | None = None  # None: every request is allowed
        self.failures: dict[str, int | Fault] = {}  # "METHOD /path-prefix" -> status code or Fault
        self.wake = threading.Event()  # set it to end every injected stall at once

    def repo(self, rid: str, rtype: str = "dataset") -> Repo | None:
        return self.repos.get((rtype, rid))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    hub: Hub

    def log_message(self, *args):
        pass

    def _send(self, code, body=b"", ctype="application/json", headers=None):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _err(self, code, message, kind="RepoNotFound"):
        self._send(code, {"error": message}, headers={"X-Error-Code": kind, "X-Error-Message": message})

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _files(self, m, rev=None):
        repo = self.hub.repos.get((m["rtype"] or "model", m["rid"]))
        return repo, (repo.at(urllib.parse.unquote(rev) if rev else None) if repo else None)

    def _refused(self) -> bool:
        """Answer 401/403 when tokens are configured and the request may not write."""
        if self.hub.tokens is None:
            return False
        token = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        role = self.hub.tokens.get(token)
        if role == "write":
            return False
        self._body()
        if role is None:
            self._err(401, "Invalid credentials in Authorization header", "Unauthorized")
        else:
            self._err(403, "You don't have the rights to write to this repo", "Forbidden")
        return True

    do_GET = do_HEAD = do_POST = do_PUT = lambda self: self._route()

    def _route(self):
        url = urllib.parse.urlsplit(self.path)
        path, query = urllib.parse.unquote(url.path), urllib.parse.parse_qs(url.query)
        self.hub.log.append(f"{self.command} {url.path}")
        for request, fault in list(self.hub.failures.items()):
            if f"{self.command} {path}".startswith(request):
                fault = self.hub.failures[request] = fault if isinstance(fault, Fault) else Fault(fault)
                with self.hub.lock:
                    strikes = fault.strikes()
                if strikes:
                    self._body()
                    self.hub.wake.wait(fault.stall)
                    return self._err(fault.status, f"fake hub: injected failure for {request}", "Injected")
        with self.hub.lock:
            try:
                self._dispatch(self.command, path, query)
            except Exception as error:  # surface server bugs as 500s
                self._err(500, repr(error), "Internal")

    def _dispatch(self, method, path, query):
        host = f"http://{self.headers['Host']}"
        writes = method == "POST" and path != "/api/validate-yaml" and "/paths-info/" not in path
        if writes and self._refused():
            return None
        if (method, path) == ("POST", "/api/repos/create"):
            return self._create(host)
        if (method, path) == ("POST", "/api/validate-yaml"):
            self._body()
            return self._send(200, {"errors": [], "warnings": []})
        if (method, path) == ("GET", "/api/whoami-v2"):
            return self._send(200, {"type": "user", "name": "user", "orgs": [],
                                    "auth": {"accessToken": {"role": "write"}}})
        for pattern, handler in self.ROUTES:
            if method in handler.methods and (m := re.fullmatch(pattern, path)):
                return handler(self, m, query, host)
        return self._err(404, f"fake hub: no route for {method} {path}", "NotImplemented")

    def _create(self, host):
        body = json.loads(self._body() or b"{}")
        rtype, rid = body.get("type") or "model", f"{body.get('organization') or 'user'}/{body['name']}"
        url = f"{host}/{'' if rtype == 'model' else rtype + 's/'}{rid}"
        if (rtype, rid) in self.hub.repos:
            return self._send(409, {"error": "You already created this repo", "url": url})
        self.hub.repos[(rtype, rid)] = Repo(rid, rtype, bool(body.get("private")))
        return self._send(200, {"url": url, "name": rid})

    def _info(self, m, query, host):
        repo, files = self._files(m, m["rev"])
        if files is None:
            return self._err(404, "Repository or revision not found")
        sha = m["rev"] if m["rev"] and len(m["rev"]) == 40 else repo.sha
        return self._send(200, {"id": repo.id, "sha": sha, "private": repo.private, "disabled": False,
                                "gated": False, "tags": [], "author": repo.id.split("/")[0], "downloads": 0,
                                "likes": 0, "lastModified": "2026-01-01T00:00:00.000Z",
                                "siblings": [{"rfilename": p} for p in sorted(files)]})

    def _preupload(self, m, query, host):
        files = json.loads(self._body()).get("files", [])
        return self._send(200, {"files": [{"path": f["path"], "shouldIgnore": False,
                                           "uploadMode": "lfs" if f["path"].endswith(LFS_SUFFIXES) else "regular"}
                                          for f in files]})

    def _commit(self, m, query, host):
        repo, _ = self._files(m)
        if repo is None:
            return self._err(404, "Repository not found")
        summary, files = "", dict(repo.files)  # apply to a copy: a bad operation changes nothing
        for line in filter(None, self._body().splitlines()):  # NDJSON: header, file, lfsFile, deleted*
            item = json.loads(line)
            key, value = item["key"], item["value"]
            if key == "header":
                summary = value.get("summary", "")
            elif key == "file":
                content = value["content"]
                files[value["path"]] = base64.b64decode(content) if value.get("encoding") == "base64" \
                    else content.encode()
            elif key == "lfsFile":
                if value["oid"] not in self.hub.lfs:
                    return self._err(400, f"LFS object {value['oid']} missing", "BadRequest")
                files[value["path"]] = self.hub.lfs[value["oid"]]
            elif key == "deletedFile":
                files.pop(value["path"], None)
            elif key == "deletedFolder":
                for p in [p for p in files if p.startswith(value["path"].rstrip("/") + "/")]:
                    del files[p]
            else:
                return self._err(400, f"unsupported commit op {key}", "BadRequest")
        repo.files = files
        sha = repo.commit(summary)
        prefix = "" if repo.type == "model" else repo.type + "s/"
        return self._send(200, {"commitUrl": f"{host}/{prefix}{repo.id}/commit/{sha}", "commitOid": sha,
                                "pullRequestUrl": None})

    def _tree(self, m, query, host):
        _, files = self._files(m, m["rev"])
        if files is None:
            return self._err(404, "Repository not found")
        sub = (m["sub"] or "").strip("/")
        recursive = query.get("recursive", ["false"])[0].lower() == "true"
        entries: dict[str, dict] = {}
        for p, data in sorted(files.items()):
            if sub and not p.startswith(sub + "/"):
                continue
            parts = (p[len(sub) + 1:] if sub else p).split("/")
            for i in range(1, len(parts) if recursive else min(2, len(parts))):
                folder = "/".join(([sub] if sub else []) + parts[:i])
                entries.setdefault(folder, {"type": "directory", "oid": "0" * 40, "size": 0, "path": folder})
            if recursive or len(parts) == 1:
                entries[p] = {"type": "file", "oid": git_sha1(data), "size": len(data), "path": p}
        if sub and not entries:
            return self._err(404, "Entry not found", "EntryNotFound")
        return self._send(200, list(entries.values()))

    def _paths_info(self, m, query, host):
        _, files = self._files(m, m["rev"])
        if files is None:
            return self._err(404, "Repository not found")
        raw = self._body().decode()
        paths = (json.loads(raw)["paths"] if "json" in self.headers.get("Content-Type", "")
                 else urllib.parse.parse_qs(raw).get("paths", []))
        out = []
        for p in (p.strip("/") for p in paths):
            if p in files:
                out.append({"type": "file", "oid": git_sha1(files[p]), "size": len(files[p]), "path": p})
            elif any(f.startswith(p + "/") for f in files):
                out.append({"type": "directory", "oid": "0" * 40, "size": 0, "path": p})
        return self._send(200, out)

    def _lfs_batch(self, m, query, host):
        objects = [{"oid": o["oid"], "size": o["size"], "authenticated": True,
                    **({} if o["oid"] in self.hub.lfs else
                       {"actions": {"upload": {"href": f"{host}/__lfs__/{o['oid']}", "header": {}}}})}
                   for o in json.loads(self._body())["objects"]]
        return self._send(200, {"transfer": "basic", "objects": objects}, "application/vnd.git-lfs+json")

    def _lfs_put(self, m, query, host):
        data = self._body()
        if hashlib.sha256(data).hexdigest() != m["oid"]:
            return self._err(400, "sha256 mismatch", "BadRequest")
        self.hub.lfs[m["oid"]] = data
        return self._send(200, {})

    def _resolve(self, m, query, host):
        repo, files = self._files(m, m["rev"])
        if files is None:
            return self._err(404, "Repository or revision not found")
        if (data := files.get(m["file"])) is None:
            return self._err(404, "Entry not found", "EntryNotFound")
        rev = urllib.parse.unquote(m["rev"])
        headers = {"ETag": f'"{git_sha1(data)}"', "X-Repo-Commit": rev if len(rev) == 40 else repo.sha,
                   "Accept-Ranges": "bytes"}
        byte_range = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range") or "")
        if byte_range and self.command == "GET":  # HfFileSystem reads byte ranges
            first, last = byte_range.groups()
            start = int(first) if first else max(0, len(data) - int(last))
            end = min(int(last), len(data) - 1) if (first and last) else len(data) - 1
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            return self._send(206, data[start:end + 1], "application/octet-stream", headers)
        return self._send(200, data, "application/octet-stream", headers)


def _route(function, *methods):
    function.methods = methods
    return function


Handler.ROUTES = (
    (rf"/api/{REPO}(?:/revision/(?P<rev>[^/]+))?", _route(Handler._info, "GET")),
    (rf"/api/{REPO}/preupload/.+", _route(Handler._preupload, "POST")),
    (rf"/api/{REPO}/commit/(?P<rev>.+)", _route(Handler._commit, "POST")),
    (rf"/api/{REPO}/tree/(?P<rev>[^/]+)(?P<sub>/.*)?", _route(Handler._tree, "GET")),
    (rf"/api/{REPO}/paths-info/(?P<rev>.+)", _route(Handler._paths_info, "POST")),
    (rf"{RESOLVE}\.git/info/lfs/objects/batch", _route(Handler._lfs_batch, "POST")),
    (r"/__lfs__/(?P<oid>[0-9a-f]{64})", _route(Handler._lfs_put, "PUT")),
    (rf"{RESOLVE}/resolve/(?P<rev>[^/]+)/(?P<file>.+)", _route(Handler._resolve, "GET", "HEAD")),
)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):  # a client killed mid-request
            super().handle_error(request, client_address)


def serve(host: str = "127.0.0.1", port: int = 0):
    """Start the fake Hub in a daemon thread; returns ``(server, endpoint_url, hub)``.

    Call ``server.shutdown()`` and ``server.server_close()`` to stop it.
    """
    hub = Hub()
    server = _Server((host, port), type("BoundHandler", (Handler,), {"hub": hub}))
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}", hub
