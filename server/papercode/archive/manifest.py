"""An archive's manifest, `archive.json`: papercode's mark on a directory it wrote, and what a build remembers.

Only a directory whose manifest carries papercode's format marker is ever replaced or removed (`store`). A manifest
of another format version is one this papercode does not read: `serve --archive` and `check --archive` refuse it
(the next step is a rebuild, which replaces it). Nothing read from a manifest is trusted further than it is checked:
a date must be a real day, not after today; a dataset commit, 40 lower-case hex characters.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from stat import S_ISREG
from typing import Any, Final

import orjson

from papercode.core import archive_layout

FORMAT: Final = "papercode-archive"
FORMAT_VERSION: Final = 1
MANIFEST: Final = archive_layout.MANIFEST
MAX_MANIFEST_BYTES: Final = 16 << 20  # a manifest is kilobytes: a larger file is not one, and is not read whole
COMMIT: Final = re.compile(r"[0-9a-f]{40}")  # a dataset commit, as the Hub names it
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class BadManifest(Exception):
    """A manifest this papercode does not read: `path: why`, one line."""


def latest_day() -> date:
    """Today where it is latest (UTC+14): a date after it is in the future everywhere."""
    return (datetime.now(UTC) + timedelta(hours=14)).date()


def check_snapshot(text: object) -> str:
    """`text` when it is a real day written YYYY-MM-DD, not after today; ValueError otherwise."""
    if not isinstance(text, str) or not _DAY.fullmatch(text):
        raise ValueError(f"{text!r} is not a date written YYYY-MM-DD")
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a real date") from None
    if day > latest_day():
        raise ValueError(f"{text!r} is after today")
    return text


def read_manifest(archive: Path) -> dict[str, Any] | None:
    """The manifest of the archive in `archive`, None when it has none. BadManifest when it cannot be read, is not
    papercode's, or is of a format version this papercode does not read."""
    manifest = _load(archive / MANIFEST)
    if manifest is not None and manifest.get("format_version") != FORMAT_VERSION:
        shown = orjson.dumps(manifest.get("format_version")).decode()[:40]
        raise BadManifest(f"{archive / MANIFEST}: format_version {shown}, which this papercode does not read")
    return manifest


def papercode_manifest(directory: Path) -> dict[str, Any] | None:
    """The manifest of `directory` when it carries papercode's format marker (whatever its version), else None."""
    try:
        return _load(directory / MANIFEST)
    except BadManifest:
        return None


def commit_dates(manifest: Mapping[str, Any] | None) -> dict[str, str]:
    """Each dataset commit's date as a manifest records it: only the pairs that hold up (a commit id, a real day
    not after today); a hand-edited value is left out, never passed on into records."""
    found: dict[str, str] = {}
    sources = (manifest or {}).get("sources")
    for entry in sources if isinstance(sources, list) else []:
        if not isinstance(entry, dict):
            continue
        commit, day = entry.get("commit"), entry.get("commit_date")
        if isinstance(commit, str) and COMMIT.fullmatch(commit) and isinstance(day, str) and _is_day(day):
            found.setdefault(commit, day)
    return found


def _is_day(value: object) -> bool:
    try:
        check_snapshot(value)
    except ValueError:
        return False
    return True


def _load(path: Path) -> dict[str, Any] | None:
    """The JSON object in `path` when it has papercode's format marker; None when there is no such file."""
    try:  # not through a symlink, and never blocking on a FIFO put in its place
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BadManifest(f"{path}: cannot be read ({exc.strerror or exc})") from None
    with os.fdopen(descriptor, "rb") as stream:
        if not S_ISREG(os.fstat(descriptor).st_mode):
            raise BadManifest(f"{path}: not a regular file")
        data = stream.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise BadManifest(f"{path}: larger than any manifest papercode writes")
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise BadManifest(f"{path}: not JSON") from None
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise BadManifest(f'{path}: not a manifest papercode wrote (no "format": "{FORMAT}")')
    return value
