"""`papercode archive`: build Code-with-Papers records from the Papers-with-Code archive (the Hugging Face
mirror's parquet files, or the original JSON dumps), and fetch that mirror.

Nothing here imports pyarrow or huggingface_hub until a command needs them (`pip install 'papercode[archive]'`).
"""

from __future__ import annotations

from .build import BuildSummary, build_archive, check_snapshot
from .sources import BadInput, MissingDependency
from .store import ArchiveBusy, NotAnArchive, default_archive_dir, read_manifest, records_dir

__all__ = [
    "ArchiveBusy",
    "BadInput",
    "BuildSummary",
    "MissingDependency",
    "NotAnArchive",
    "build_archive",
    "check_snapshot",
    "default_archive_dir",
    "read_manifest",
    "records_dir",
]
