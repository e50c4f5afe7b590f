"""The leaderboards' tables read by a child process while the papers are (`archive.boards_child`), for a large archive:
the build must come out as when this process reads them after the papers, byte for byte; a table the child cannot
read fails the build as it would here; a child that dies costs a read here and nothing else; nothing is left behind."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

import pytest

from papercode.archive import boards_child, build_archive
from papercode.archive.build import BuildSummary
from papercode.archive.tables import BadInput
from papercode.index.mapped_archive import current_build
from tests.support.archive_tables import link_row, paper_row, write_json
from tests.support.leaderboard_tables import benchmark, dataset, method, result, task, write_dump, write_parquet

pytestmark = pytest.mark.process

ACCURACY = "Top 1 Accuracy"


def write_sources(directory: Path) -> Path:
    """Papers and links, and the three tables in both forms (each task, method and dataset named twice: read once)."""
    write_json(
        directory / "papers.json",
        [
            paper_row("resnet", "Deep Residual Learning", arxiv_id="1512.03385", tasks=["Image Classification"]),
            paper_row("vit", "An Image is Worth 16x16 Words", tasks=["Image Classification"]),
            paper_row("titled", "Known By Its Title"),
        ],
    )
    write_json(directory / "links.json", [link_row("resnet", "https://github.com/KaimingHe/deep-residual-networks", is_official=True)])
    rows = [
        result("ResNet", {ACCURACY: "76.1%"}, paper_url="https://arxiv.org/abs/1512.03385", date="2015-12-10"),
        result("ViT", {ACCURACY: "88.5", "Params": "632M"}, paper_url="https://paperswithcode.com/paper/vit"),
        result("Titled", {ACCURACY: "-"}, paper_title="known by its  title", code=["https://github.com/someone/titled"]),
        result("Ghost", {ACCURACY: "70"}, paper_url="https://arxiv.org/abs/2999.00001", paper_title="Nobody Wrote This"),
    ]
    evaluations = [task("Image Classification", [benchmark("ImageNet", [ACCURACY], rows)], [task("Few-Shot Image Classification")])]
    methods = [method("ResNet", paper={"title": "Deep Residual Learning", "url": "https://arxiv.org/abs/1512.03385"})]
    datasets = [dataset("ImageNet", variants=["ImageNet ILSVRC"])]
    for name, table in (("evaluation-tables", evaluations), ("methods", methods), ("datasets", datasets)):
        write_dump(directory / f"{name}.json.gz", table)
        write_parquet(directory / name / "data" / "train-00000-of-00001.parquet", table)
    return directory


def built(sources: Path, out: Path, monkeypatch: pytest.MonkeyPatch, *, beside: bool) -> BuildSummary:
    monkeypatch.setattr(boards_child, "CHILD_PROCESS_BYTES", 0 if beside else 1 << 60)
    return build_archive([sources], out, data_date="2025-07-28")


def outcome(summary: BuildSummary) -> dict[str, Any]:
    """Everything a build says of the leaderboards: their files and sha256s, counts, rejections, warnings, rows read."""
    manifest = summary.manifest()
    return {
        "files": {name: facts for name, facts in manifest["files"].items() if name.startswith("boards/")},
        "counts": manifest["counts"]["boards"],
        "rejected": summary.rejected.as_json(),
        "warnings": summary.warnings.as_json(),
        "rows": [(source.path.name, source.rows) for source in summary.sources],
    }


@pytest.fixture(autouse=True)
def own_temporary_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The child's scratch directory is made here, so the test can see that none is left."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return scratch


def test_tables_read_beside_the_papers_build_the_same_archive_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own_temporary_directory: Path
) -> None:
    sources = write_sources(tmp_path / "sources")
    here = outcome(built(sources, tmp_path / "here", monkeypatch, beside=False))
    answers: list[object] = []
    real_result = boards_child.BoardsBeside.result

    def kept(self: boards_child.BoardsBeside, *args: Any) -> Any:
        answers.append(real_result(self, *args))
        return answers[-1]

    monkeypatch.setattr(boards_child.BoardsBeside, "result", kept)
    beside = outcome(built(sources, tmp_path / "beside", monkeypatch, beside=True))
    assert len(answers) == 1 and answers[0] is not None  # the child wrote them
    assert beside == here
    assert len(here["files"]) > 40 and here["counts"]["results_joined_by"] == {"arxiv": 1, "slug": 1, "title": 1}
    assert here["counts"]["results_unjoined"] == 1 and "result_paper_not_found" in here["warnings"]
    assert {"duplicate_task", "duplicate_method", "duplicate_dataset"} <= set(here["rejected"])
    assert all(rows is not None for _, rows in here["rows"])
    assert list(own_temporary_directory.iterdir()) == []


def test_a_table_the_child_cannot_read_fails_the_build_as_here_and_keeps_the_previous(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, own_temporary_directory: Path
) -> None:
    sources = write_sources(tmp_path / "sources")
    out = tmp_path / "archive"
    first = built(sources, out, monkeypatch, beside=True)
    broken = sources / "methods" / "data" / "train-00000-of-00001.parquet"
    data = bytearray(broken.read_bytes())
    data[4 : len(data) // 2] = b"\xff" * (len(data) // 2 - 4)  # the footer whole, the pages not
    broken.write_bytes(bytes(data))
    messages = []
    for beside in (False, True):
        with pytest.raises(BadInput, match=r"train-00000-of-00001\.parquet") as caught:
            built(sources, out, monkeypatch, beside=beside)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert "process failed" not in caplog.text  # the child said which table, rather than failing
    assert current_build(out) == out / "builds" / first.build_id
    assert sorted(path.name for path in (out / "builds").iterdir()) == [first.build_id]
    assert list(own_temporary_directory.iterdir()) == []


def test_a_child_that_dies_costs_a_read_here_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, own_temporary_directory: Path
) -> None:
    sources = write_sources(tmp_path / "sources")
    here = outcome(built(sources, tmp_path / "here", monkeypatch, beside=False))
    real_result = boards_child.BoardsBeside.result

    def dies_first(self: boards_child.BoardsBeside, *args: Any) -> Any:
        self._child.process.kill()
        self._child.process.wait()
        return real_result(self, *args)

    monkeypatch.setattr(boards_child.BoardsBeside, "result", dies_first)
    with caplog.at_level(logging.WARNING, logger=boards_child.__name__):
        again = outcome(built(sources, tmp_path / "again", monkeypatch, beside=True))
    assert again == here
    assert "the leaderboards' process failed (exit -9" in caplog.text and "reading their tables here" in caplog.text
    assert list(own_temporary_directory.iterdir()) == []
