"""One frozen settings object, from command-line flags over `PAPERCODE_*` environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from .loading import Limits
from .snapshot import default_cache_dir

Transport = Literal["stdio", "sse", "streamable-http"]
N = TypeVar("N", int, float)

# Every setting: (flag, environment variable, help). The README documents each; a test checks.
ENVIRONMENT = {
    "records": "PAPERCODE_RECORDS",
    "max_file_bytes": "PAPERCODE_MAX_FILE_BYTES",
    "max_line_bytes": "PAPERCODE_MAX_LINE_BYTES",
    "max_string_chars": "PAPERCODE_MAX_STRING_CHARS",
    "log_level": "PAPERCODE_LOG_LEVEL",
    "cache_dir": "PAPERCODE_CACHE_DIR",
    "watch_interval": "PAPERCODE_WATCH_INTERVAL",
}


def bundled_records_dir() -> Path:
    """The records shipped with papercode: inside the wheel, or beside `server/` in a checkout."""
    packaged = Path(__file__).parent / "_records"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "records"


@dataclass(frozen=True, slots=True)
class Settings:
    records: tuple[Path, ...] = field(default_factory=lambda: (bundled_records_dir(),))
    limits: Limits = field(default_factory=Limits)
    log_level: str = "WARNING"
    cache_dir: Path | None = field(default_factory=default_cache_dir)
    watch: bool = False
    watch_interval: float = 5.0
    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000


def env_records() -> tuple[Path, ...] | None:
    value = os.environ.get(ENVIRONMENT["records"], "").strip()
    if not value:
        return None
    return tuple(Path(part).expanduser() for part in value.split(os.pathsep) if part.strip())


def env_cache_dir() -> Path | None:
    """PAPERCODE_CACHE_DIR: a directory, or `off` for no snapshot; None when unset."""
    value = os.environ.get(ENVIRONMENT["cache_dir"], "").strip()
    if not value:
        return None
    return Path("off") if value.lower() == "off" else Path(value).expanduser()


def env_float(name: str) -> float | None:
    return _env_number(name, float, "a number")


def env_int(name: str) -> int | None:
    return _env_number(name, int, "a whole number")


def _env_number(name: str, kind: type[N], what: str) -> N | None:
    """A positive number from the setting's environment variable; None when it is unset."""
    value = os.environ.get(ENVIRONMENT[name], "").strip()
    if not value:
        return None
    try:
        number = kind(value)
    except ValueError:
        raise SystemExit(f"papercode: {ENVIRONMENT[name]} must be {what}, got {value!r}") from None
    if number <= 0:
        raise SystemExit(f"papercode: {ENVIRONMENT[name]} must be positive, got {number}")
    return number
