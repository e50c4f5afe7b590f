"""An archive's manifest, `archive.json`: papercode's mark on a directory it wrote, and what a build remembers.

Only a directory whose manifest carries papercode's format marker is ever replaced or removed (`location`). The format
itself (marker, version, the bounded read) is declared with the serving form, in `index.mapped_archive`; what a build
takes from a previous manifest is checked here: a date must be a real day, not after today (`core.days`); a dataset
commit, 40 lower-case hex characters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from papercode.core.days import checked_day, is_day
from papercode.index.mapped_archive import MANIFEST, ManifestProblem, load_manifest

COMMIT: Final = re.compile(r"[0-9a-f]{40}")  # a dataset commit, as the Hub names it


BadManifest = ManifestProblem  # a manifest this papercode does not read: `path: why`, one line


def check_data_date(text: object) -> str:
    """`text` when it is a real day written YYYY-MM-DD, not after today; ValueError otherwise."""
    return checked_day(text)


def papercode_manifest(directory: Path) -> dict[str, Any] | None:
    """The manifest of `directory` when it carries papercode's format marker (whatever its version), else None (one
    that cannot be read, too: only what is known to be papercode's is replaced)."""
    try:
        return load_manifest(directory / MANIFEST)
    except (BadManifest, OSError):
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
        if isinstance(commit, str) and COMMIT.fullmatch(commit) and isinstance(day, str) and is_day(day):
            found.setdefault(commit, day)
    return found
