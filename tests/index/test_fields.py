"""A paper's and a sample's fields are declared once (`index.fields`): a field added there, in a copy of papercode, is
built from the records (in one process and in two), written into the archive's build and read back from it (a
paper's), kept by the snapshot of a warm start, and shown by get_paper, with no other edit of the code but its line
in get_paper's answer model; builds and snapshots made before it are refused, never served without it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from papercode.archive import build_archive
from papercode.corpus.stages import Corpus
from tests.support.archive_tables import link_row, paper_row, write_json
from tests.support.checkout import SERVER_DIR
from tests.support.records import make_record, make_sample, sha_for, write_records

pytestmark = pytest.mark.process

# The fields added: one of each kind an archive keeps (a packed text column, an int32 column, a field of the details),
# and a sample's.
DECLARED = {
    "PaperRow": (
        "    samples: Annotated[range, SampleIds(",
        """    first_author: Annotated[
        str | None,
        Text(
            record=lambda source: next(iter(source.record.authors or ()), None),
            row=lambda source: next(iter(source.record.get("authors") or ()), None),
            shown=True,
        ),
    ]
    n_tasks: Annotated[
        int, Int32(record=lambda source: len(source.record.tasks or ()), row=lambda source: len(source.record.get("tasks") or ()), shown=True)
    ]
""",
    ),
    "SampleRow": (
        "\n\n    @property\n    def is_official(self) -> bool:",
        '\n    metamorphic_tier: Annotated[str | None, Interned(record=operator.attrgetter("metamorphic_tier"))]',
    ),
    "PaperDetails": (
        "\n\nclass SampleRow(NamedTuple):",
        """
    n_methods: Annotated[
        int | None,
        Detail(
            record=lambda source: len(source.record.methods or ()) or None,
            row=lambda source: len(source.record.get("methods") or ()) or None,
            shown=True,
        ),
    ] = msgspec.field(default=None, name="nm")""",
    ),
}
# Where get_paper's answer shows them: after its number of authors.
PLACED = (
    "    n_authors: int | None = None\n",
    "    first_author: str | None = None\n    n_tasks: int | None = None\n    n_methods: int | None = None\n",
)
ADDED = ("first_author", "n_tasks", "n_methods")

# Run by the copy: the archive built, the records built in one process and in two, a warm start, and the answers.
CHILD = """
import json, logging, sys
from pathlib import Path

from papercode.answers import queries
from papercode.archive import build_archive
from papercode.corpus import stages
from papercode.corpus.stages import Corpus
from papercode.ingest import builder, parallel

logging.basicConfig(level=logging.WARNING, format="%(message)s")
records, tables, archive, before, cache = map(Path, sys.argv[1:6])
build_archive(sorted(tables.iterdir()), archive, data_date="2025-07-28")
keys = ("2001.00001", "2003.00003", "only-in-the-archive-no-arxiv")
builds, parts = [], []
build_stages, add_part = stages.build_stages, builder.IndexBuilder.add_part
stages.build_stages = lambda *args, **kwargs: builds.append(1) or build_stages(*args, **kwargs)
builder.IndexBuilder.add_part = lambda self, part: parts.append(1) or add_part(self, part)
def shown(corpus):
    tiers = {row.path: row.metamorphic_tier for row in corpus.index.samples_of(corpus.index.paper_by_arxiv("2001.00001"))}
    return {"tiers": tiers, **{key: queries.paper_detail_shown(corpus, key) for key in keys}}

one = shown(Corpus.load([records], archive_dir=archive))
parallel.CHILD_PROCESS_BYTES = 0  # the records split between two processes, as a large corpus's are
cold = shown(Corpus.open([records], cache_dir=cache, archive_dir=archive))
counted = (len(builds), len(parts))
warm = shown(Corpus.open([records], cache_dir=cache, archive_dir=archive))
counted += (len(builds),)
note = Corpus.load([records], archive_dir=before).archive_note
json.dump({"one": one, "cold": cold, "warm": warm, "counted": counted, "note": note}, sys.stdout)
"""


def _patched(path: Path, anchor: str, added: str, *, before: bool) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(anchor) == 1, f"{path.name} no longer has {anchor!r} once"
    path.write_text(text.replace(anchor, added + anchor if before else anchor + added), encoding="utf-8")


def _copy_with_fields(tmp_path: Path) -> Path:
    """papercode copied, with the fields added to its declaration (and nothing else)."""
    copy = tmp_path / "copy"
    shutil.copytree(SERVER_DIR / "papercode", copy / "papercode", ignore=shutil.ignore_patterns("__pycache__"))
    declaration = copy / "papercode" / "index" / "fields.py"
    for anchor, added in DECLARED.values():
        _patched(declaration, anchor, added, before=True)
    return copy


def _run(copy: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    environment = {"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin", "HOME": str(copy)}
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, env=environment, timeout=300, check=False)


def _sources(tmp_path: Path) -> tuple[Path, Path]:
    """Four records (so that two processes can share them) and archive tables: two of its papers are records too."""
    methods = [{"method_name": name} for name in ("Adam", "BERT", "Dropout")]
    tasks = [{"task_slug": "qa", "task_name": "Question Answering"}, {"task_slug": "nli", "task_name": "NLI"}]
    records = write_records(
        tmp_path / "records",
        [
            make_record(
                "2001.00001",
                "a-record",
                [make_sample(sha_for(1), metamorphic_tier="tier 2"), make_sample(sha_for(2), path="eval.py")],
                authors=["Ada", "Bo"],
                tasks=tasks,
                methods=methods,
            ),
            *(make_record(f"2002.0000{i}", f"record-{i}", [make_sample(sha_for(10 + i))], authors=[]) for i in range(3)),
        ],
    )
    papers = [
        paper_row("the-archive-slug", "The archive's title", arxiv_id="2001.00001"),
        paper_row("only-in-the-archive", "Only here", arxiv_id="2003.00003", authors=["Cy", "Di", "Ed"], tasks=["Parsing"]),
        paper_row("only-in-the-archive-no-arxiv", "Only here, no arXiv id", authors=[], methods=[]),
    ]
    links = [link_row("only-in-the-archive", "https://github.com/a/b", "Only here", is_official=True)]
    tables = tmp_path / "tables"
    write_json(tables / "papers.json.gz", papers)
    write_json(tables / "links.json.gz", links)
    return records, tables


def test_a_field_added_to_the_declaration_is_built_archived_restored_and_shown(tmp_path: Path) -> None:
    records, tables = _sources(tmp_path)
    # Made before the fields were added (by this papercode): an archive build and a snapshot of the records.
    before = tmp_path / "before"
    build_archive(sorted(tables.iterdir()), before, data_date="2025-07-28")
    Corpus.open([records], cache_dir=tmp_path / "cache")
    copy = _copy_with_fields(tmp_path)

    # A field get_paper shows needs its place in get_paper's answer model: without it, the answers do not load.
    unplaced = _run(copy, "-c", "import papercode.answers.shaping")
    assert unplaced.returncode != 0
    assert "get_paper shows first_author, n_methods, n_tasks (index.fields), which models.PaperAnswer lacks" in unplaced.stderr

    _patched(copy / "papercode" / "answers" / "models.py", *PLACED, before=False)
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    ran = _run(copy, script, records, tables, tmp_path / "archive", before, tmp_path / "cache")
    assert ran.returncode == 0, ran.stderr
    found = json.loads(ran.stdout)

    # Built in one process, then in two (the snapshot written before refused: a cold build), then a warm start.
    assert found["counted"] == [2, 1, 2]
    assert "the paper columns were written for another declaration of their fields" in ran.stderr
    assert "another format" in found["note"] and "papercode archive build" in found["note"]
    expected: dict[str, dict[str, Any]] = {
        "2001.00001": {"first_author": "Ada", "n_tasks": 2, "n_methods": 3},  # the record, over the archive's row
        "2003.00003": {"first_author": "Cy", "n_tasks": 1},  # the archive's: no methods, left out
        "only-in-the-archive-no-arxiv": {"n_tasks": 0},
    }
    for start in ("one", "cold", "warm"):
        assert found[start]["tiers"] == {"train.py": "tier 2", "eval.py": None}, start
        for key, fields in expected.items():
            answer = found[start][key]
            assert {name: answer[name] for name in ADDED if name in answer} == fields, (start, key)
            placed = [name for name in answer if name in ("n_authors", *ADDED, "date")]
            assert placed == ["n_authors", *(name for name in ADDED if name in fields), "date"], (start, key)
    assert found["cold"] == found["warm"] == found["one"]
