"""Where a sample's source file comes from: local clones, or GitHub's raw file host.

Records are untrusted, so a sample's `repo` and `path` only ever reach the disk or the network
as a `SourceLocation`, which `locate` builds after checking both strictly: a hostile record
cannot name another host, a pre-encoded URL or a file outside the clone. The fetcher asks one
fixed base (never a host a response names), bounds time, size and concurrency, shares
concurrent requests for the same file, and stops asking a base that just failed. Nothing here
imports MCP or the index.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import re
import socket
import ssl
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Literal, NamedTuple
from urllib.parse import quote, urlsplit

import anyio
import httpx2

from papercode import __version__
from papercode.core.ids import MAX_OWNER_CHARS, MAX_REPO_NAME_CHARS, is_github_owner, is_github_repo_name
from papercode.core.records import MAX_PATH_CHARS

log = logging.getLogger(__name__)

SourceOutcome = Literal["ok", "file_missing", "fetch_failed", "too_large", "invalid_location"]
# Why this machine cannot connect to a host at all, which asking again soon does not mend (unlike a timeout or a 5xx):
# it cannot reach it (its name does not resolve, the connection is refused or has no route), or the TLS handshake
# fails (a certificate it does not trust: a proxy that intercepts TLS, or no CA bundle).
ConnectFailure = Literal["unreachable", "tls"]

DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
MAX_SOURCE_BYTES = 2 * 1024 * 1024  # a source file's cap (and so a harvested module's: see `store`)
MAX_SOURCE_SIZE_TEXT = f"{MAX_SOURCE_BYTES / (1024 * 1024):g} MB"  # the cap as prose states it: "2 MB"
FETCH_TIMEOUT_SECONDS = 5.0
RETRY_AFTER_SECONDS = 60.0
MAX_REDIRECTS = 3

# Control, invisible formatting (e.g. a right-to-left override), lone surrogates (not encodable) and line separators.
_UNWANTED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_URL_SYNTAX = frozenset("%?#")  # `%` would let a path arrive pre-encoded; `?` and `#` would end the path
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_GONE = frozenset({404, 410})
_THROTTLED = frozenset({403, 429})  # GitHub answers 403 or 429 when rate limited
_DEFAULT_PORTS = {"http": 80, "https": 443}
_MAX_REASON_CHARS = 200
_MAX_QUOTED_CHARS = 100  # of any text a server or the OS supplied


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """A checked location: safe to put in a URL or under a directory (construction re-checks it)."""

    owner: str
    name: str
    path: str

    def __post_init__(self) -> None:
        problem = _owner_problem(self.owner) or _name_problem(self.name) or _path_problem(self.path)
        if problem:
            raise ValueError(problem)

    @property
    def repo(self) -> str:
        return f"{self.owner}/{self.name}"


def locate(repo: str, path: str) -> SourceLocation | str:
    """The checked location, or the reason (one short sentence) it is refused."""
    if not isinstance(repo, str) or not isinstance(path, str):  # records are untrusted, whatever their schema says
        return "repo and path must be strings"
    parts = repo.split("/")
    if len(parts) != 2:
        return "repo must be exactly 'owner/name', with no scheme, host or extra segments"
    owner, name = parts
    problem = _owner_problem(owner) or _name_problem(name) or _path_problem(path)
    return problem or SourceLocation(owner, name, path)


def _owner_problem(owner: str) -> str | None:
    if is_github_owner(owner):
        return None
    return f"repo owner must be 1-{MAX_OWNER_CHARS} letters, digits or hyphens, not starting with a hyphen"


def _name_problem(name: str) -> str | None:
    if is_github_repo_name(name):
        return None
    return f"repo name must be 1-{MAX_REPO_NAME_CHARS} letters, digits, '.', '_' or '-', and not '.' or '..'"


def _path_problem(path: str) -> str | None:
    if not path:
        return "path is empty"
    if len(path) > MAX_PATH_CHARS:
        return f"path is longer than {MAX_PATH_CHARS} characters"
    if path[0] in "/\\":
        return "path must be relative to the repository root"
    if "\\" in path:
        return "path has a backslash; directories are separated by '/'"
    if any(unicodedata.category(char) in _UNWANTED_CATEGORIES for char in path):
        return "path has a control, formatting or line-separator character"
    if not _URL_SYNTAX.isdisjoint(path):
        return "path has '%', '?' or '#'; give the plain file path, not a URL"
    for segment in path.split("/"):
        if segment in ("", ".", ".."):
            return "path has an empty, '.' or '..' segment"
        if segment.lower() == ".git":  # a sample never lives there, and a local clone's .git/config may hold a token
            return "path goes into '.git'"
    return None


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A source file's bytes (`ok`), or why there are none: `reason` is one short sentence, no secrets.
    `connect_failed`: fetching failed because this machine cannot connect to the host at all (`ConnectFailure`)."""

    outcome: SourceOutcome
    content: bytes | None = None
    reason: str = ""
    connect_failed: ConnectFailure | None = None


def _not_ok(outcome: SourceOutcome, reason: str, *, connect_failed: ConnectFailure | None = None) -> SourceFile:
    return SourceFile(outcome, reason=reason[:_MAX_REASON_CHARS], connect_failed=connect_failed)


def _quoted(text: str) -> str:
    """Text a server or the OS supplied, made safe to show: printable and short."""
    printable = "".join(char if char.isprintable() else " " for char in text).strip()
    return printable[:_MAX_QUOTED_CHARS]


# -- local clones ------------------------------------------------------------------------


class LocalClones:
    """Files from clones laid out as DIR/<owner>/<name>/<path> (a user who already cloned the repositories).

    Blocking file I/O: callers run `read` in a worker thread.
    """

    def __init__(self, root: Path, max_bytes: int = MAX_SOURCE_BYTES) -> None:
        self._root = root
        self._max_bytes = max_bytes

    def read(self, location: SourceLocation) -> SourceFile:
        clone = self._clone_dir(location)
        if clone is None:
            return _not_ok("file_missing", f"no local clone of {location.repo}")
        try:
            real_clone = clone.resolve(strict=True)
            target = clone.joinpath(*location.path.split("/")).resolve()
        except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
            return _not_ok("file_missing", f"{location.path} cannot be resolved in the clone of {location.repo}")
        if not target.is_relative_to(real_clone):
            log.warning("refused %s in the local clone of %s: a symlink leads outside the clone", location.path, location.repo)
            return _not_ok("invalid_location", f"{location.path} leads outside the clone of {location.repo} (symlink)")
        missing = _not_ok("file_missing", f"{location.path} is not a regular file in the clone of {location.repo}")
        try:
            # Stat before opening: opening a FIFO would block until a writer comes, a device may never end.
            if not S_ISREG(target.stat().st_mode):
                return missing
            content = _read_regular_file(target, self._max_bytes + 1)
        except (FileNotFoundError, NotADirectoryError):
            return missing
        except OSError as exc:
            log.warning("cannot read %s in the local clone of %s: %s", location.path, location.repo, exc)
            return _not_ok("fetch_failed", f"cannot read {location.path} in the local clone: {_quoted(exc.strerror or type(exc).__name__)}")
        if content is None:  # replaced by something else between the stat and the open
            return missing
        if len(content) > self._max_bytes:
            return _not_ok("too_large", f"{location.path} is over the {self._max_bytes:,}-byte cap")
        return SourceFile("ok", content)

    def _clone_dir(self, location: SourceLocation) -> Path | None:
        owner_dir = _child_dir_ignoring_case(self._root, location.owner)
        return None if owner_dir is None else _child_dir_ignoring_case(owner_dir, location.name)


def _child_dir_ignoring_case(parent: Path, name: str) -> Path | None:
    """`parent/name`, else the first directory (by name) whose name matches ignoring case: GitHub names are case-insensitive."""
    exact = parent / name
    wanted = name.lower()
    try:
        if exact.is_dir():
            return exact
        with os.scandir(parent) as listing:
            candidates = sorted(entry.name for entry in listing if entry.name.lower() == wanted and entry.is_dir())
    except OSError:
        return None
    return parent / candidates[0] if candidates else None


def _read_regular_file(path: Path, limit: int) -> bytes | None:
    """At most `limit` bytes of `path`; None when it is not a regular file after all.

    Non-blocking and no-follow, so a FIFO or symlink swapped in after the stat can neither hang
    the read nor redirect it; the descriptor is checked again before reading.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    with open(os.open(path, flags), "rb") as handle:
        if not S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read(limit)


# -- fetching ----------------------------------------------------------------------------


class _Attempt(NamedTuple):
    file: SourceFile
    base_failed: bool  # the base itself is unwell (unreachable, slow, 5xx, rate limited): stop asking for a while


class _InFlight:
    """One request that concurrent fetches of the same location wait for."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.result: SourceFile | None = None  # stays None when the fetching task was cancelled


class SourceFetcher:
    """Files downloaded from `<base_url>/<owner>/<name>/HEAD/<path>`.

    `fetch` never raises for network, HTTP or size problems: each becomes a `SourceFile` outcome.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        timeout: float = FETCH_TIMEOUT_SECONDS,
        max_bytes: int = MAX_SOURCE_BYTES,
        concurrency: int = 8,
        retry_after: float = RETRY_AFTER_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._base_url = base_url.rstrip("/")
        parts = urlsplit(self._base_url)
        if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
            raise ValueError("the source base URL must be an http:// or https:// URL with a host")
        _ = parts.port  # raises ValueError for a port out of range
        if parts.username is not None or parts.query or parts.fragment:
            raise ValueError("the source base URL must have no credentials, query or fragment")
        try:
            self._origin = _origin(httpx2.URL(self._base_url))
        except httpx2.InvalidURL as exc:
            raise ValueError(f"the source base URL is invalid: {exc}") from exc
        self._host = parts.netloc  # for reasons and logs: has no credentials (refused above)
        self._timeout = timeout
        self._max_bytes = max_bytes
        self._limiter = anyio.CapacityLimiter(concurrency)
        self._retry_after = retry_after
        self._clock = clock
        self._retry_at: float | None = None  # the circuit is open until then
        self._opened_by = SourceFile("fetch_failed")  # the failure that opened it
        self._in_flight: dict[SourceLocation, _InFlight] = {}
        self._client: httpx2.AsyncClient | None = None

    @property
    def base_url(self) -> str:
        return self._base_url

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def fetch(self, location: SourceLocation) -> SourceFile:
        """The file at `location`; concurrent fetches of the same location share one request."""
        while (shared := self._in_flight.get(location)) is not None:
            await shared.done.wait()
            if shared.result is not None:
                return shared.result
            # The task that was fetching it was cancelled: take over (or wait for whoever did).
        mine = _InFlight()
        self._in_flight[location] = mine
        try:
            mine.result = await self._fetch_unshared(location)
            return mine.result
        finally:
            del self._in_flight[location]
            mine.done.set()

    async def _fetch_unshared(self, location: SourceLocation) -> SourceFile:
        refused = self._refused_while_open()
        if refused is not None:
            return refused
        async with self._limiter:
            refused = self._refused_while_open()  # the base may have failed while this waited
            if refused is not None:
                return refused
            attempt = await self._download(location)
        if attempt.base_failed:
            self._retry_at = self._clock() + self._retry_after
            self._opened_by = attempt.file
        if attempt.file.outcome == "file_missing":
            log.info("%s is missing from %s: %s", f"{location.repo}/{location.path}", self._host, attempt.file.reason)
        elif attempt.file.outcome != "ok":
            log.warning("could not fetch %s from %s: %s", f"{location.repo}/{location.path}", self._host, attempt.file.reason)
        return attempt.file

    def _refused_while_open(self) -> SourceFile | None:
        if self._retry_at is None:
            return None
        wait = self._retry_at - self._clock()
        if wait <= 0:
            return None  # let the next request through; a failure opens the circuit again
        cause = self._opened_by
        return _not_ok("fetch_failed", f"{cause.reason}; it will be retried in {math.ceil(wait)} s", connect_failed=cause.connect_failed)

    async def _download(self, location: SourceLocation) -> _Attempt:
        url = f"{self._base_url}/{location.owner}/{location.name}/HEAD/" + "/".join(
            quote(segment, safe="") for segment in location.path.split("/")
        )
        try:
            with anyio.fail_after(self._timeout):  # the whole exchange, body and redirects included
                return await self._follow(httpx2.URL(url))
        except (TimeoutError, httpx2.TimeoutException):
            return _Attempt(_not_ok("fetch_failed", f"timed out after {self._timeout:g} s"), base_failed=True)
        except httpx2.ConnectError as exc:  # httpcore maps a failed TLS handshake (an ssl.SSLError) to ConnectError too
            failure, reason = connect_failure(self._host, exc)
            return _Attempt(_not_ok("fetch_failed", reason, connect_failed=failure), base_failed=True)
        except httpx2.TransportError as exc:
            return _Attempt(_not_ok("fetch_failed", f"could not reach {self._host}: {_describe(exc)}"), base_failed=True)
        except httpx2.HTTPError as exc:  # e.g. a body that does not decode: the base answered, just badly
            return _Attempt(_not_ok("fetch_failed", f"bad answer from {self._host}: {_describe(exc)}"), base_failed=False)

    async def _follow(self, url: httpx2.URL) -> _Attempt:
        """GET `url`, following redirects only within the base's origin."""
        client = self._http_client()
        for _ in range(MAX_REDIRECTS + 1):
            async with client.stream("GET", url) as response:
                status = response.status_code
                if status == 200:
                    return _Attempt(await self._read_body(response), base_failed=False)
                if status in _GONE:
                    return _Attempt(_not_ok("file_missing", f"{self._host} has no such file (HTTP {status})"), base_failed=False)
                if status not in _REDIRECTS:
                    failed = status >= 500 or status in _THROTTLED
                    return _Attempt(_not_ok("fetch_failed", f"{self._host} answered HTTP {status}"), base_failed=failed)
                target = self._redirect_target(response)
                if isinstance(target, str):
                    return _Attempt(_not_ok("fetch_failed", target), base_failed=False)
                url = target
        return _Attempt(_not_ok("fetch_failed", f"more than {MAX_REDIRECTS} redirects from {self._host}"), base_failed=False)

    def _redirect_target(self, response: httpx2.Response) -> httpx2.URL | str:
        """Where a redirect leads when that is on the base's origin, else why it is not followed."""
        location = response.headers.get("location")
        if not location:
            return f"a redirect from {self._host} had no Location"
        try:
            target = response.url.join(location)
        except httpx2.InvalidURL:
            return f"a redirect from {self._host} had an invalid Location"
        if _origin(target) != self._origin or target.userinfo:
            return f"redirected off {self._host}; not followed"
        return target

    async def _read_body(self, response: httpx2.Response) -> SourceFile:
        too_large = _not_ok("too_large", f"the file is over the {self._max_bytes:,}-byte cap")
        declared = response.headers.get("content-length", "")
        if declared.isascii() and declared.isdigit() and int(declared) > self._max_bytes:
            return too_large  # refused before reading a byte of it
        # Decoded bytes are counted (a small gzip body can inflate enormously); httpx2 inflates in bounded pieces.
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self._max_bytes:
                return too_large
            chunks.append(chunk)
        return SourceFile("ok", b"".join(chunks))

    def _http_client(self) -> httpx2.AsyncClient:
        # Created on first use, inside the running event loop that will use it.
        if self._client is None:
            self._client = httpx2.AsyncClient(
                headers={"User-Agent": f"papercode/{__version__}"},
                verify=_tls_context(),
                timeout=httpx2.Timeout(self._timeout),
                follow_redirects=False,  # followed by hand, and only within the base's origin
            )
        return self._client


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every fetcher of the process: each context loads and parses the whole certificate bundle."""
    return httpx2.create_ssl_context()


def _origin(url: httpx2.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port or _DEFAULT_PORTS.get(url.scheme)


def _describe(exc: BaseException) -> str:
    return _quoted(str(exc)) or type(exc).__name__


_OPENSSL_NOISE = re.compile(r"^\[SSL: \w+\] | \(_ssl\.c:\d+\)$")  # "[SSL: CODE] what happened (_ssl.c:1006)"


def connect_failure(host: str, exc: BaseException) -> tuple[ConnectFailure, str]:
    """Why `host` could not be connected to, from the error beneath `exc`: a TLS handshake that failed (OpenSSL's
    reason, e.g. a certificate this machine does not trust), a name that does not resolve, or the socket's error (a
    connection refused or without a route). An `ssl.SSLError` is an OSError whose errno is OpenSSL's, not the
    system's: it is told apart first, and `os.strerror` is read only for a socket's error."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLError):
            return "tls", f"the TLS handshake with {host} failed: {_quoted(_OPENSSL_NOISE.sub('', str(cause)))}"
        if isinstance(cause, socket.gaierror):
            return "unreachable", f"{host} cannot be resolved from this machine (DNS: {_quoted(cause.strerror or str(cause))})"
        if isinstance(cause, OSError) and cause.errno:
            return "unreachable", f"{host} cannot be reached from this machine ({_quoted(os.strerror(cause.errno))})"
        cause = cause.__cause__ or cause.__context__
    return "unreachable", f"{host} cannot be reached from this machine ({_describe(exc)})"
