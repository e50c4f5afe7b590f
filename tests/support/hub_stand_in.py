"""A loopback stand-in for the Hugging Face Hub: just what huggingface_hub 2.4.0 asks when it downloads a
dataset snapshot (see the team's notes on the verified request sequence).

- `GET /api/datasets/<owner>/<name>/revision/<rev>`: `{id, sha, lastModified}`, `sha` 40 lower-case hex;
- `GET /api/datasets/<repo>/tree/<rev>?recursive=true&expand=false`: the file entries (`type`, `path`, `oid`, `size`);
- `HEAD` / `GET /datasets/<repo>/resolve/<rev>/<path>` (`rev` is `main` or the sha): `X-Repo-Commit`, `ETag`,
  `Content-Length`, then the body, plain; never an `X-Xet-*` header or a `xetHash`;
- an unknown repository: 404 with `X-Error-Code: RepoNotFound`; an unknown file: 404 with `EntryNotFound`;
  anything else (the best-effort `/api/agent-harnesses` lookup): a plain 404.

A dataset can also answer as a hostile Hub (or a proxy in the way) would: another `sha`, another `X-Repo-Commit`,
files it lists but will not serve, or a body that trickles in a byte at a time.

Bound to 127.0.0.1 on a port the OS picks; every request is recorded as (method, path).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import unquote, urlsplit


@dataclass
class Dataset:
    files: dict[str, bytes]  # path in the repository -> content
    sha: str = field(default="")
    last_modified: str = "2025-07-28T09:10:11.000Z"
    # A hostile Hub (or a proxy in the way): what it answers instead of the truth.
    answered_sha: str | None = None  # the repository info's `sha`
    answered_commit: str | None = None  # the `X-Repo-Commit` of every resolve answer
    hidden: frozenset[str] = frozenset()  # files the tree lists that resolve answers with EntryNotFound
    trickle: frozenset[str] = frozenset()  # files whose body comes a byte at a time, every `trickle_every` seconds
    trickle_every: float = 0.2

    def __post_init__(self) -> None:
        if not self.sha:
            digest = hashlib.sha1()
            for path in sorted(self.files):
                digest.update(path.encode() + b"\0" + self.files[path])
            self.sha = digest.hexdigest()

    @staticmethod
    def etag(content: bytes) -> str:
        return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()  # the git blob id, as the Hub sends


class HubStandIn:
    """`with HubStandIn({"owner/name": Dataset(...)}) as hub:` then `HF_ENDPOINT=hub.url`."""

    def __init__(self, datasets: dict[str, Dataset]) -> None:
        self.datasets = datasets
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                stand_in._answer(self, body=True)

            def do_HEAD(self) -> None:
                stand_in._answer(self, body=False)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> HubStandIn:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _answer(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        path = unquote(urlsplit(handler.path).path)
        with self._lock:
            self.requests.append((handler.command, path))
        if path.startswith("/api/datasets/"):
            self._api(handler, path.removeprefix("/api/datasets/"), body)
        elif path.startswith("/datasets/"):
            self._resolve(handler, path.removeprefix("/datasets/"), body)
        else:
            _send(handler, 404, b"Not Found", {}, body)

    def _find(self, rest: str, marker: str) -> tuple[str, Dataset, str] | None:
        """(repo id, dataset, what follows `/<marker>/`) for `<owner>/<name>/<marker>/...`."""
        parts = rest.split("/", 3)
        if len(parts) < 3 or parts[2] != marker:
            return None
        repo = f"{parts[0]}/{parts[1]}"
        dataset = self.datasets.get(repo)
        if dataset is None:
            return None
        return repo, dataset, parts[3] if len(parts) > 3 else ""

    def _api(self, handler: BaseHTTPRequestHandler, rest: str, body: bool) -> None:
        for marker in ("revision", "tree"):
            found = self._find(rest, marker)
            if found is None:
                continue
            repo, dataset, _ = found
            if marker == "revision":
                sha = dataset.sha if dataset.answered_sha is None else dataset.answered_sha
                payload: object = {"id": repo, "sha": sha, "lastModified": dataset.last_modified, "private": False}
            else:
                payload = [
                    {"type": "file", "path": path, "oid": Dataset.etag(content), "size": len(content)}
                    for path, content in sorted(dataset.files.items())
                ]
            _send(handler, 200, json.dumps(payload).encode(), {"Content-Type": "application/json"}, body)
            return
        _send(handler, 404, b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound"}, body)

    def _resolve(self, handler: BaseHTTPRequestHandler, rest: str, body: bool) -> None:
        found = self._find(rest, "resolve")
        if found is None:
            _send(handler, 404, b"Repository not found", {"X-Error-Code": "RepoNotFound"}, body)
            return
        _, dataset, tail = found
        revision, _, file_path = tail.partition("/")
        content = dataset.files.get(file_path)
        commit = dataset.sha if dataset.answered_commit is None else dataset.answered_commit
        if revision not in ("main", dataset.sha, dataset.answered_sha) or content is None or file_path in dataset.hidden:
            _send(handler, 404, b"Entry not found", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": commit}, body)
            return
        headers = {"X-Repo-Commit": commit, "ETag": f'"{Dataset.etag(content)}"', "Content-Type": "application/octet-stream"}
        if body and file_path in dataset.trickle:
            self._trickle(handler, content, headers, dataset.trickle_every)
            return
        _send(handler, 200, content, headers, body)

    def _trickle(self, handler: BaseHTTPRequestHandler, content: bytes, headers: dict[str, str], every: float) -> None:
        """The whole length announced, then one byte every `every` seconds until the client hangs up or the stand-in stops."""
        handler.send_response(200)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(content)))
        handler.end_headers()
        for index in range(len(content)):
            try:
                handler.wfile.write(content[index : index + 1])
                handler.wfile.flush()
            except OSError:
                return
            if self._stopping.wait(every):
                return


def _send(handler: BaseHTTPRequestHandler, status: int, content: bytes, headers: dict[str, str], body: bool) -> None:
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(content)))
    handler.end_headers()
    if body:
        handler.wfile.write(content)
