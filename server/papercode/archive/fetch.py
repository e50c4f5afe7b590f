"""`papercode archive fetch`: the archive's two datasets from the Hugging Face Hub, through huggingface_hub.

Downloads go to huggingface_hub's own cache (`$HF_HOME/hub`, or `HF_HUB_CACHE`): resumable, shared with other
tools, with its progress bars. `HF_ENDPOINT`, `HF_HOME` and `HF_HUB_OFFLINE` are honoured; the library reads
them when it is imported, which happens here, on first use, never when papercode starts.

Each dataset's commit is asked first (`dataset_info`: its sha and the date of its last commit); when the Hub
cannot be reached (or `HF_HUB_OFFLINE` is set) the cached snapshot is used instead, and the caller is told why.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import Any, Final

from .sources import MissingDependency

DATASETS: Final = ("pwc-archive/papers-with-abstracts", "pwc-archive/links-between-paper-and-code")
PATTERNS: Final = ["data/*.parquet"]
INFO_TIMEOUT: Final = 30.0


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


def fetch_datasets(datasets: tuple[str, ...] = DATASETS) -> FetchResult:
    """Each dataset's parquet files, downloaded or already cached. Raises `FetchError`, `MissingDependency`."""
    hub()
    from huggingface_hub import HfApi, constants, snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

    endpoint, cache = constants.ENDPOINT, constants.HF_HUB_CACHE
    offline: str | None = "HF_HUB_OFFLINE is set" if constants.HF_HUB_OFFLINE else None
    fetched: list[Fetched] = []
    for dataset in datasets:
        info = None
        if offline is None:
            try:
                info = HfApi(endpoint=endpoint).dataset_info(dataset, revision="main", timeout=INFO_TIMEOUT)
            except (RepositoryNotFoundError, RevisionNotFoundError) as exc:
                raise FetchError(f"{dataset} was not found on {endpoint} ({type(exc).__name__}). Next: check HF_ENDPOINT") from None
            except Exception as exc:  # unreachable, refused, a proxy, a 5xx: anything else means "use the cache"
                offline = f"cannot reach {endpoint} ({_short(exc)})"
        if info is not None:
            try:
                folder = Path(snapshot_download(dataset, repo_type="dataset", allow_patterns=PATTERNS))
            except Exception as exc:
                raise FetchError(
                    f"downloading {dataset} from {endpoint} failed: {_short(exc)}. Next: run it again (downloads resume)"
                ) from None
            day = info.last_modified.astimezone(UTC).date().isoformat() if info.last_modified and info.sha == folder.name else None
            fetched.append(Fetched(dataset, folder, folder.name, day))
            continue
        try:
            folder = Path(snapshot_download(dataset, repo_type="dataset", allow_patterns=PATTERNS, local_files_only=True))
        except LocalEntryNotFoundError:
            step = "unset HF_HUB_OFFLINE" if constants.HF_HUB_OFFLINE else "connect to the network"
            raise FetchError(
                f"{offline}, and {dataset} is not in the download cache {cache}. "
                f"Next: {step}, or build from files you have: papercode archive build FILE..."
            ) from None
        fetched.append(Fetched(dataset, folder, folder.name, None))
    return FetchResult(fetched, cache, endpoint, offline)


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text
    return text if len(text) <= 200 else text[:199] + "…"
