"""Where an archive lives, and what a build may write into.

An archive directory (`--out`, `--archive-dir`) is papercode's own: `current` (a symlink) names the build being
served and `builds/` holds each build (`index.mapped_archive` declares the layout, `builds` switches builds in it).
A build writes into a directory only when it does not exist yet, is empty, or is an archive papercode wrote and
holds nothing papercode did not write: one of this layout, or one of format 1 (`archive.json` with papercode's format
marker and its `records/` shards), whose files the build removes once its own build is current. Anything else given
as `--out` is refused and left as it is. The archive directory is taken as its real path (`core.paths.RealPath`), read
once with the setting: an `--out` that is a symlink, or lies under one, is followed (the archive is built where it
points, and the link stays).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from papercode.core.paths import RealPath, given_path, xdg_base
from papercode.index.mapped_archive import BUILDS, CURRENT, MANIFEST, build_id_is_valid

from .builds import BUILDING_NAME, LINKING_NAME, LOCK
from .manifest import papercode_manifest

RECORDS = "records"  # format 1's record shards
ARCHIVE_DIR_VARIABLE = "PAPERCODE_ARCHIVE_DIR"
_OWN = frozenset({CURRENT, BUILDS, LOCK})


class NotAnArchive(Exception):
    """`--out` names something that is not an archive papercode wrote: nothing is written into it."""


def default_archive_dir() -> Path:
    """`$PAPERCODE_ARCHIVE_DIR` (read as every setting's path is: `core.paths.given_path`), else
    `$XDG_DATA_HOME/papercode/archive`, else `~/.local/share/papercode/archive`."""
    chosen = given_path(os.environ.get(ARCHIVE_DIR_VARIABLE, ""))
    return chosen if chosen is not None else xdg_base("XDG_DATA_HOME", ".local/share") / "papercode" / "archive"


def real_archive_dir(given: Path | None = None) -> RealPath:
    """The archive directory `given` names (None: the default), as papercode takes it: its real path."""
    return RealPath.of(given if given is not None else default_archive_dir())


def checked_out_dir(out: RealPath) -> Path:
    """The directory a build into `out` writes (its real path). NotAnArchive unless it does not exist yet, is empty, or
    is an archive papercode wrote holding nothing papercode did not write."""
    target, shown = out.real, f"--out {out.shown}"
    if not os.path.lexists(target):
        if target.parent.is_dir() or not out.through_symlink:
            return target
        raise NotAnArchive(f"{shown}: points where nothing is. Next: create {target.parent} (or mount its disk), or pass another --out")
    if not target.is_dir():
        raise NotAnArchive(f"{shown}: exists and is not a directory. Next: pass a new directory or an archive papercode built")
    why = _not_papercodes(target)
    if why is not None:
        raise NotAnArchive(f"{shown}: {why}; it was left as it is. Next: pass a new or empty directory, or an archive papercode built")
    return target


def _not_papercodes(directory: Path) -> str | None:
    """Why `directory` holds something papercode did not write; None when it is empty or an archive and nothing else."""
    with os.scandir(directory) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    shards = _format_1_shards(directory) if any(entry.name == MANIFEST for entry in entries) else None
    if entries and shards is None and not any(entry.name in _OWN for entry in entries):
        return f"not empty and not an archive papercode wrote (no {CURRENT} link, no {MANIFEST} with papercode's format marker)"
    for entry in entries:
        why = _foreign(entry, shards)
        if why is not None:
            return why
    return None


def _foreign(entry: os.DirEntry[str], shards: set[str] | None) -> str | None:
    """Why `entry` of an archive directory is not papercode's (None: it is)."""
    name = entry.name
    if (name == CURRENT and entry.is_symlink()) or (name == LOCK and entry.is_file(follow_symlinks=False)):
        return None
    if LINKING_NAME.fullmatch(name) and entry.is_symlink():
        return None
    if name == BUILDS and entry.is_dir(follow_symlinks=False):
        with os.scandir(entry.path) as listing:
            for build in listing:
                papercodes = build_id_is_valid(build.name) or BUILDING_NAME.fullmatch(build.name)
                if not papercodes or not build.is_dir(follow_symlinks=False):
                    return f"holds {BUILDS}/{build.name}, which papercode did not write"
        return None
    if shards is not None and name == MANIFEST and entry.is_file(follow_symlinks=False):
        return None
    if shards is not None and name == RECORDS and entry.is_dir(follow_symlinks=False):
        with os.scandir(entry.path) as listing:
            for shard in sorted(listing, key=lambda item: item.name):
                if shard.name not in shards or not shard.is_file(follow_symlinks=False):
                    return f"holds {RECORDS}/{shard.name}, which papercode did not write"
        return None
    return f"holds {name}, which papercode did not write"


def _format_1_shards(directory: Path) -> set[str] | None:
    """The shards a format 1 archive in `directory` lists (None: no manifest of papercode's there)."""
    manifest = papercode_manifest(directory)
    if manifest is None:
        return None
    listed = manifest.get("shards")
    return {str(item.get("name")) for item in listed if isinstance(item, dict)} if isinstance(listed, list) else set()


def remove_format_1(directory: Path) -> None:
    """The files of a format 1 archive in `directory` (its manifest and listed shards), once a newer build is
    current there: what is checked to be papercode's only (`checked_out_dir` refused anything else)."""
    shards = _format_1_shards(directory)
    if shards is None:
        return
    records = directory / RECORDS
    for name in shards:
        if name and "/" not in name and name not in (".", ".."):
            with contextlib.suppress(FileNotFoundError):
                (records / name).unlink()
    with contextlib.suppress(OSError):
        records.rmdir()  # only when nothing else is left in it
    with contextlib.suppress(FileNotFoundError):
        (directory / MANIFEST).unlink()
