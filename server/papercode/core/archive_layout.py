"""The archive's layout on disk, as its writer (`archive`) and its reader (the loader, `build.files`) both see it:
a directory holding the manifest (`archive.json`) and the record shards (`records/`), the manifest listing each
shard with its size and its number of records, so that the loader can tell a shard deleted or cut since the build.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

MANIFEST = "archive.json"
RECORDS = "records"
_MOST_MANIFEST_BYTES = 1 << 20  # a manifest lists a few shards and sources: a few kilobytes


@dataclass(frozen=True, slots=True)
class Shard:
    name: str  # its file name inside `records/`
    bytes: int
    records: int


def listed_shards(records: Path) -> list[Shard] | None:
    """The shards the manifest beside the records directory `records` lists; None when there is no manifest, it
    cannot be read, or it lists no shards in the form the build writes."""
    try:
        with open(records.parent / MANIFEST, "rb") as stream:
            data = stream.read(_MOST_MANIFEST_BYTES + 1)
        manifest = orjson.loads(data) if len(data) <= _MOST_MANIFEST_BYTES else None
    except (OSError, orjson.JSONDecodeError):
        return None
    entries = manifest.get("shards") if isinstance(manifest, dict) else None
    if not isinstance(entries, list):
        return None
    shards = []
    for entry in entries:
        if not isinstance(entry, dict):
            return None
        name, size, count = entry.get("name"), entry.get("bytes"), entry.get("records")
        if not isinstance(name, str) or type(size) is not int or type(count) is not int:
            return None
        shards.append(Shard(name, size, count))
    return shards
