"""The Papers-with-Code archive built once into the form every server maps: `papercode archive build / fetch / verify`.

The build reads the archive's tables (the Hugging Face mirror's parquet files, or the original JSON dumps: papers, code
links and, when given, the leaderboards' tables) and writes its serving form, search index included, into a build
directory of its own (`builds`); `index.mapped_archive` opens it at every start. `fetch` downloads the mirror.

Nothing here imports pyarrow or huggingface_hub until a command needs them (`pip install 'papercode[archive]'`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from papercode.core.lazy import loaded_on_first_use

from .builds import ArchiveBusy
from .location import NotAnArchive, default_archive_dir
from .manifest import BadManifest, check_data_date

if TYPE_CHECKING:  # what `__getattr__` loads on first use, named for the type checker and linters
    from .build import BuildSummary, build_archive
    from .tables import BadInput, MissingDependency

# The build's modules load on first use: `serve` reads where the archive is (`location`) and its manifest on every
# start, and has no use for the rest.
_LAZY = {
    "BuildSummary": ".build",
    "build_archive": ".build",
    "BadInput": ".tables",
    "MissingDependency": ".tables",
}


__getattr__ = loaded_on_first_use(__name__, _LAZY)


__all__ = [
    "ArchiveBusy",
    "BadInput",
    "BadManifest",
    "BuildSummary",
    "MissingDependency",
    "NotAnArchive",
    "build_archive",
    "check_data_date",
    "default_archive_dir",
]
