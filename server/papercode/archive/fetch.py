"""`papercode archive fetch`: the archive's datasets from the Hugging Face Hub, through huggingface_hub.

Downloads go to huggingface_hub's own cache (`$HF_HOME/hub`, or `HF_HUB_CACHE`), shared with other tools. `HF_ENDPOINT`,
`HF_HOME` and `HF_HUB_OFFLINE` are honoured; the library reads them when it is imported, which happens here, on first
use, never when papercode starts.

Each dataset's commit is asked first (`dataset_info`: its sha and the date of its last commit); when the Hub cannot
be reached (or `HF_HUB_OFFLINE` is set) the cached snapshot that `refs/main` names is used instead, and the caller
is told why.

huggingface_hub 2.4 builds cache paths from what the Hub answers without checking them: a `sha` or an
`X-Repo-Commit` of `../../x` makes it write outside the cache, and store the traversal in `refs/main`. So nothing
the Hub (or a proxy in the way) answers is used unchecked: the commit must be 40 lower-case hex characters before
anything is downloaded, and the download is pinned to it (`revision=<sha>`); while it runs, every answer that
names a commit must name that one, and every blob name must be one plain file name (`_Watch`, a response hook on
the library's HTTP client); the snapshot folder must lie inside the cache; `refs/main` is written by papercode,
with the checked commit, and checked again when an offline run reads it.

The same hook counts the bytes of every answer as they arrive: a body that brings under `STALL_BYTES` in
`stall_timeout` seconds stops the fetch (a Hub that trickles a byte every few seconds stays inside the library's
read timeout, and would hold it for ever). huggingface_hub keeps each file it completed; the one cut off starts
again on the next run (2.4 removes a partial file when its download fails).
"""

from __future__ import annotations

import os
import re
import secrets
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import Any, Final

import httpx2

from .manifest import COMMIT, check_data_date
from .tables import MissingDependency

# The leaderboards, methods and datasets: the archive builds and serves without them, so a Hub (or a cache) that
# lacks one is said in a line, and the rest is built.
CATALOGUES: Final = ("pwc-archive/evaluation-tables", "pwc-archive/methods", "pwc-archive/datasets")
DATASETS: Final = ("pwc-archive/papers-with-abstracts", "pwc-archive/links-between-paper-and-code", *CATALOGUES)
PATTERNS: Final = ["data/*.parquet"]
INFO_TIMEOUT: Final = 30.0
STALL_BYTES: Final = 64 * 1024
_BLOB_NAME = re.compile(r"[0-9A-Za-z_-][0-9A-Za-z._-]{0,254}")  # one plain file name: what the library names a blob by


class FetchError(Exception):
    """The datasets could not be had, from the Hub or the cache: one line, with the next step."""


@dataclass(frozen=True, slots=True)
class Fetched:
    dataset: str
    folder: Path  # the snapshot folder (`.../snapshots/<commit>`), holding `data/*.parquet`
    commit: str
    commit_date: str | None  # YYYY-MM-DD of the dataset's last commit, when the Hub said


@dataclass(frozen=True, slots=True)
class FetchResult:
    datasets: list[Fetched]
    cache_dir: str
    endpoint: str
    offline_reason: str | None = None  # set when the cache was used because the Hub could not be asked
    skipped: tuple[str, ...] = ()  # the `CATALOGUES` neither the Hub nor the cache had, each said in a line

    @property
    def commit_dates(self) -> dict[str, str]:
        return {item.commit: item.commit_date for item in self.datasets if item.commit_date}


def hub() -> Any:
    """The `huggingface_hub` module, imported now (it reads its environment variables at import)."""
    try:
        import huggingface_hub
    except ImportError:
        raise MissingDependency("huggingface_hub", "papercode archive fetch") from None
    return huggingface_hub


def fetch_datasets(
    datasets: tuple[str, ...] = DATASETS, *, stall_timeout: float, announce: Callable[[str], None] | None = None
) -> FetchResult:
    """Each dataset's parquet files, downloaded or already cached. `announce` (when given: off a terminal) is told of
    each file downloaded, one line each, and huggingface_hub's progress bars are off (unless
    HF_HUB_DISABLE_PROGRESS_BARS decides). Raises `FetchError`, `MissingDependency`."""
    hub()
    from huggingface_hub import constants
    from huggingface_hub.utils.tqdm import disable_progress_bars

    if announce is not None and "HF_HUB_DISABLE_PROGRESS_BARS" not in os.environ:
        disable_progress_bars()

    endpoint, cache = constants.ENDPOINT, Path(constants.HF_HUB_CACHE)
    watch = _Watch(stall_timeout)
    _watch_the_client(watch)
    skipped: list[str] = []
    asked: dict[str, tuple[str, Any]] = {}
    offline: str | None = "HF_HUB_OFFLINE is set" if constants.HF_HUB_OFFLINE else None
    if offline is None:
        asked, offline = _ask(datasets, endpoint, skipped)
    fetched: list[Fetched] = []
    for dataset in datasets:
        if dataset in asked:
            commit, info = asked[dataset]
            folder = _download(dataset, commit, cache=cache, endpoint=endpoint, watch=watch, announce=announce)
            fetched.append(Fetched(dataset, folder, commit, _day_of(info.last_modified)))
        elif offline is not None:  # (a catalogue the Hub said it does not have is left out)
            cached = _cached(dataset, cache, offline, skipped)
            if cached is not None:
                fetched.append(cached)
    return FetchResult(fetched, str(cache), endpoint, offline, tuple(skipped))


def _ask(datasets: tuple[str, ...], endpoint: str, skipped: list[str]) -> tuple[dict[str, tuple[str, Any]], str | None]:
    """Each dataset's checked commit and the Hub's answer, all asked before anything is downloaded; and why the cache
    must serve the rest, when the Hub cannot be reached. A catalogue the Hub does not have is added to `skipped`."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    asked: dict[str, tuple[str, Any]] = {}
    for dataset in datasets:
        try:
            info = HfApi(endpoint=endpoint).dataset_info(dataset, revision="main", timeout=INFO_TIMEOUT)
        except (RepositoryNotFoundError, RevisionNotFoundError) as exc:
            if dataset in CATALOGUES:
                skipped.append(f"{dataset} was not found on {endpoint} ({type(exc).__name__})")
                continue
            raise FetchError(f"{dataset} was not found on {endpoint} ({type(exc).__name__}). Next: check HF_ENDPOINT") from None
        except Exception as exc:  # unreachable, refused, a proxy, a 5xx: anything else means "use the cache"
            return asked, f"cannot reach {endpoint} ({_short(exc)})"
        asked[dataset] = (_checked_commit(info.sha, f"{endpoint} answered the commit of {dataset} as"), info)
    return asked, None


def _cached(dataset: str, cache: Path, offline: str, skipped: list[str]) -> Fetched | None:
    """The dataset's snapshot that the cache's `refs/main` names (`offline`: why the Hub was not asked); None, added
    to `skipped`, for a catalogue the cache lacks."""
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    cached = _cached_commit(cache, dataset)
    if cached is None and dataset in CATALOGUES:
        skipped.append(f"{dataset} is not in the download cache {cache}")
        return None
    try:
        if cached is None:
            raise LocalEntryNotFoundError(f"no refs/main for {dataset}")
        folder = Path(snapshot_download(dataset, repo_type="dataset", revision=cached, allow_patterns=PATTERNS, local_files_only=True))
    except LocalEntryNotFoundError:
        step = "unset HF_HUB_OFFLINE" if constants.HF_HUB_OFFLINE else "connect to the network"
        raise FetchError(
            f"{offline}, and {dataset} is not in the download cache {cache}. "
            f"Next: {step}, or build from files you have: papercode archive build FILE..."
        ) from None
    return Fetched(dataset, _inside_the_cache(folder, cache, dataset, cached), cached, None)


def _download(dataset: str, commit: str, *, cache: Path, endpoint: str, watch: _Watch, announce: Callable[[str], None] | None) -> Path:
    """The dataset's snapshot of `commit`, downloaded (what is cached already is kept), watched by `watch`."""
    from huggingface_hub import snapshot_download

    watch.pin(commit)
    try:
        with _Announcer(_snapshot(cache, dataset, commit), dataset, announce):
            folder = snapshot_download(dataset, repo_type="dataset", revision=commit, allow_patterns=PATTERNS)
    except Exception as exc:
        if watch.refused is not None:
            raise FetchError(f"downloading {dataset} from {endpoint}: {watch.refused}") from None
        raise FetchError(
            f"downloading {dataset} from {endpoint} failed: {_short(exc)}. Next: run it again (the files already downloaded are kept)"
        ) from None
    finally:
        watch.pin(None)
    checked = _inside_the_cache(Path(folder), cache, dataset, commit)
    _remember(cache, dataset, commit)
    return checked


# -- what the Hub answers, checked -----------------------------------------------------------


def _checked_commit(value: object, said: str) -> str:
    if isinstance(value, str) and COMMIT.fullmatch(value):
        return value
    raise FetchError(
        f"{said} {_shown(value)}, not a commit id (40 hex characters); nothing was downloaded. "
        "Next: check HF_ENDPOINT and any proxy in the way"
    )


def _repository(cache: Path, dataset: str) -> Path:
    """A dataset's folder in huggingface_hub's cache (`datasets--<owner>--<name>`)."""
    from huggingface_hub.file_download import repo_folder_name

    return cache / repo_folder_name(repo_id=dataset, repo_type="dataset")


def _snapshot(cache: Path, dataset: str, commit: str) -> Path:
    return _repository(cache, dataset) / "snapshots" / commit


def _inside_the_cache(folder: Path, cache: Path, dataset: str, commit: str) -> Path:
    """`folder` when it is the dataset's snapshot of `commit` and lies inside the cache, once every link is followed."""
    real, root = Path(os.path.realpath(folder)), Path(os.path.realpath(cache))
    if folder.name != commit or not real.is_relative_to(root) or not real.is_dir():
        raise FetchError(
            f"the snapshot of {dataset} is {real}, not a folder inside the download cache {cache}; it was not read. "
            f"Next: delete {_repository(cache, dataset)} and fetch again"
        )
    return folder


def _remember(cache: Path, dataset: str, commit: str) -> None:
    """`refs/main` := the checked commit, as huggingface_hub writes it when it resolves `main` itself (pinned to a
    commit, it does not), so that an offline run finds this snapshot. Written whole, then renamed into place."""
    ref = _repository(cache, dataset) / "refs" / "main"
    temporary = ref.with_name(f"main.{secrets.token_hex(4)}.tmp")
    try:
        ref.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(commit, encoding="ascii")
        os.replace(temporary, ref)
    except OSError as exc:  # the snapshot is there; only a later offline run would miss it
        temporary.unlink(missing_ok=True)
        sys.stderr.write(
            f"papercode: could not record {dataset}'s commit in {ref} ({exc.strerror or exc}): offline runs will not find it\n"
        )


def _cached_commit(cache: Path, dataset: str) -> str | None:
    """The commit the cache's `refs/main` names (None: no such file); FetchError when it is not a commit id."""
    ref = _repository(cache, dataset) / "refs" / "main"
    try:
        with open(ref, "rb") as stream:
            text = stream.read(256).decode("ascii", "replace").strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FetchError(f"{ref} cannot be read ({exc.strerror or exc}). Next: check the download cache's permissions") from None
    if COMMIT.fullmatch(text):
        return text
    raise FetchError(
        f"{ref} holds {_shown(text)}, not a commit id; it was not followed. "
        f"Next: delete {_repository(cache, dataset)} and fetch again with the network"
    )


def _day_of(moment: Any) -> str | None:
    """The date of the dataset's last commit as the Hub gave it, when it is a day that has been."""
    try:
        return check_data_date(moment.astimezone(UTC).date().isoformat())
    except (AttributeError, TypeError, ValueError):
        return None


class _Refused(Exception):
    """Raised inside huggingface_hub's download (never one of the errors it retries) to stop it."""


class _Watch:
    """A response hook on huggingface_hub's HTTP client: every body must keep coming and, while a download is pinned
    to a commit, every answer must name that commit and plain blob names (see the module docstring)."""

    def __init__(self, stall_timeout: float) -> None:
        self.stall_timeout = stall_timeout
        self.commit: str | None = None
        self.refused: str | None = None  # why the download was stopped; None while it runs
        self._lock = threading.Lock()

    def pin(self, commit: str | None) -> None:
        self.commit = commit

    def __call__(self, response: httpx2.Response) -> None:
        if self.refused is not None:  # stopped: the library's other threads stop at their next request
            raise _Refused(self.refused)
        response.stream = _Counted(response.stream, self)
        commit = self.commit
        if commit is None:
            return
        named = response.headers.get("X-Repo-Commit")
        if named is not None and named != commit:
            self.refuse(
                f"the Hub answered {response.request.url.path[:200]} with commit {_shown(named)}, not {commit}; "
                "nothing it named was written. Next: check HF_ENDPOINT and any proxy in the way"
            )
        if response.request.method == "HEAD":
            for header in ("X-Linked-Etag", "ETag"):
                value = response.headers.get(header)
                if value is not None and not _BLOB_NAME.fullmatch(value.lstrip("W/").strip('"')):
                    self.refuse(
                        f"the Hub answered {response.request.url.path[:200]} with {header} {_shown(value)}, not a file name; "
                        "nothing it named was written. Next: check HF_ENDPOINT and any proxy in the way"
                    )

    def refuse(self, why: str) -> None:
        with self._lock:
            if self.refused is None:
                self.refused = why
        raise _Refused(why)


class _Counted(httpx2.SyncByteStream):
    """A response body as it arrives from the network, each piece counted (before httpx2 gathers the pieces into
    the library's 10 MiB chunks): under `STALL_BYTES` in `stall_timeout` seconds stops the download. A body that
    stops outright is the library's to end: its read timeout, then a few retries, each counted afresh."""

    def __init__(self, stream: Any, watch: _Watch) -> None:
        self._stream = stream
        self._watch = watch

    def __iter__(self) -> Iterator[bytes]:
        watch = self._watch
        since, received = time.monotonic(), 0
        for piece in self._stream:
            received += len(piece)
            now = time.monotonic()
            if received >= STALL_BYTES:
                since, received = now, 0
            elif now - since > watch.stall_timeout:
                watch.refuse(
                    f"stalled: under {STALL_BYTES // 1024} KiB arrived in {watch.stall_timeout:g} s. Next: run it again "
                    "(the files already downloaded are kept), or allow longer with --stall-timeout SECONDS"
                )
            if watch.refused is not None:
                raise _Refused(watch.refused)
            yield piece

    def close(self) -> None:
        self._stream.close()

    @property
    def elapsed(self) -> Any:
        """What httpx2's own stream measured, for `Response.elapsed`."""
        return getattr(self._stream, "elapsed", None)


def _watch_the_client(watch: _Watch) -> None:
    """huggingface_hub's shared HTTP client, made from now on with `watch` among its response hooks. The library's
    own hooks (offline mode, request ids) and settings carry over from the client it made itself."""
    from huggingface_hub import get_session, set_client_factory

    model = get_session()
    hooks, follow, timeout, trust_env = model.event_hooks, model.follow_redirects, model.timeout, model.trust_env

    def client() -> httpx2.Client:
        return httpx2.Client(
            event_hooks={"request": list(hooks["request"]), "response": [*hooks["response"], watch]},
            follow_redirects=follow,
            timeout=timeout,
            trust_env=trust_env,
        )

    set_client_factory(client)


class _Announcer:
    """One line for each file that lands in the snapshot folder while a download runs (huggingface_hub puts a file
    there once it is complete), whichever way the library downloaded it."""

    def __init__(self, folder: Path, dataset: str, announce: Callable[[str], None] | None) -> None:
        self._folder, self._dataset, self._announce = folder, dataset, announce
        self._seen: set[Path] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> _Announcer:
        if self._announce is not None:
            self._seen = set(self._files())
            self._thread = threading.Thread(target=self._run, name="papercode-fetch-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._tell()  # what landed since the last look: every file downloaded gets its line

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            self._tell()

    def _tell(self) -> None:
        assert self._announce is not None
        for path in sorted(set(self._files()) - self._seen):
            self._seen.add(path)
            try:
                size = path.stat().st_size
            except OSError:
                continue
            self._announce(f"downloaded {self._dataset} {path.relative_to(self._folder).as_posix()} ({size / 1e6:,.1f} MB)")

    def _files(self) -> Iterator[Path]:
        try:
            yield from (path for path in (self._folder / "data").rglob("*.parquet") if path.is_file())
        except OSError:
            return


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text
    return text if len(text) <= 200 else text[:199] + "…"
