"""The archive's paper columns, now made from the declaration of a paper's fields (`index.fields`), are those a build
wrote before it, byte for byte, and read back to the same answers; a build without a column this papercode reads is
of another format: refused, with the command that rebuilds it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from papercode.corpus.stages import Corpus
from papercode.index.mapped_archive import MANIFEST, ArchiveUnavailable, open_archive
from tests.support import archive_record
from tests.support.archive_overlay import build_small_archive

# Made at commit c5e42ca, before the fields were declared once (see `tests.support.archive_record`).
BEFORE = json.loads((Path(__file__).parent / "archive_before_fields.json").read_text(encoding="utf-8"))


def _differing(now: dict[str, str], before: dict[str, str]) -> list[str]:
    return sorted(name for name in now.keys() | before.keys() if now.get(name) != before.get(name))


def test_a_build_writes_the_paper_columns_a_build_wrote_before_and_answers_as_it_did(tmp_path: Path) -> None:
    now = archive_record.record(tmp_path)
    assert _differing(now["papers"], BEFORE["papers"]) == []  # the format: changed only with its version
    # An answer changed on purpose is recorded again, by the command in `tests.support.archive_record`'s docstring.
    assert _differing(now["answers"], BEFORE["answers"]) == []


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
