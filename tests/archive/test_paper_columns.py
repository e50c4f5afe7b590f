"""The archive's paper columns are made from the declaration of a paper's fields (`index.fields`): a build without a
column this papercode reads is of another format, refused with the command that rebuilds it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from papercode.corpus.stages import Corpus
from papercode.index.archive_layer import MANIFEST, ArchiveUnavailable, open_archive
from tests.support.archive_layers import build_small_archive


def test_a_build_without_a_column_this_papercode_reads_is_of_another_format(tmp_path: Path) -> None:
    archive = build_small_archive(tmp_path / "tables", tmp_path / "archive")
    build = (archive / "current").resolve()
    manifest = json.loads((build / MANIFEST).read_text(encoding="utf-8"))
    del manifest["files"]["papers/n_authors.i"]  # as a build made before the field was declared
    (build / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    (build / "papers" / "n_authors.i").unlink()
    with pytest.raises(ArchiveUnavailable, match=r"^the archive is of another format: its build has no papers/n_authors\.i"):
        open_archive(archive)
    (tmp_path / "records").mkdir()
    note = Corpus.load([tmp_path / "records"], archive_dir=archive).archive_note
    assert note is not None and "another format" in note and "`papercode archive build SOURCE...`" in note
