"""Issue #21, the archive path under attack, its rows: a hostile row is rejected, or its field cut or left out, when
the archive is built, by the rules the server applies (the slug rule, repository keys, the caps on texts, lists and
lines), so that what `papercode archive build` writes is what the server serves, whole; a build that would write no
paper leaves the previous archive in place; and shards deleted or cut after the build are said to be missing.

Every archive here is written by the test (tests/archive_tables.py).
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from archive_tables import PWC, Row, archive_records, bundled_rows, link_row, method_row, paper_row, write_json, write_parquet
from conftest import SERVER_DIR, make_record
from papercode.answers import queries
from papercode.archive import build as build_module
from papercode.archive import build_archive, read_manifest, records_dir, rows
from papercode.archive.build import EmptyArchive
from papercode.archive.rows import URL_PROBLEMS, Vocabulary, link_key, paper_url_problem, repo_url, web_url, within_caps
from papercode.build import decode
from papercode.build.decode import iter_records
from papercode.cli import main as cli
from papercode.core.errors import QueryError
from papercode.core.ids import MAX_SLUG_CHARS, normalize_repo, parse_slug, repo_key, slug_from_record_url
from papercode.core.limits import Limits
from papercode.core.load_report import LoadReport
from papercode.core.records import MAX_LIST_ENTRIES, MAX_NAME_CHARS, MAX_URL_CHARS
from papercode.corpus.stages import Corpus

SNAPSHOT = "2025-07-28"
CAP = Limits()  # the server's caps as it applies them by default
MIB = 1024 * 1024
MB_ONE = 1_000_000


def build(directory: Path, papers: list[Row], links: list[Row], **options: Any) -> build_module.BuildSummary:
    """The two tables as JSON dumps, built into `directory / "archive"`."""
    sources = [write_json(directory / "src" / "papers.json", papers), write_json(directory / "src" / "links.json", links)]
    return build_archive(sources, directory / "archive", snapshot=SNAPSHOT, **options)


def served_report(archive: Path) -> LoadReport:
    """What the server's loader says of a built archive's shards."""
    report = LoadReport()
    for _ in iter_records([records_dir(archive)], report):
        pass
    return report


def files_of(directory: Path) -> dict[str, bytes]:
    return {str(path.relative_to(directory)): path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file()}


def papercode_process(scratch: Path, *args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`papercode ARGS` in a fresh process running this checkout, its caches and scratch files in `scratch`."""
    environment = {
        **os.environ,
        "PYTHONPATH": str(SERVER_DIR),
        "PAPERCODE_OFFLINE": "1",
        "PAPERCODE_CACHE_DIR": str(scratch / "cache"),
        "PAPERCODE_CODE_DIR": str(scratch / "code"),
        "TMPDIR": str(scratch),
    }
    command = [sys.executable, "-m", "papercode", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=timeout, check=False)


# -- D6: repository and paper URLs -------------------------------------------------------------

HOSTILE_REPO_URLS = [
    ("https://user:pass@github.com/owner/name", "repo_url_credentials"),
    ("https://token@github.com/owner/name", "repo_url_credentials"),
    ("http://127.0.0.1:22/a/b", "repo_url_not_a_host_name"),
    ("https://[::1]/a/b", "repo_url_not_a_host_name"),
    ("https://localhost/a/b", "repo_url_not_a_host_name"),
    ("https://github.com:8443/owner/name", "repo_url_not_a_host_name"),
    ("https://gіthub.com/owner/name", "repo_url_not_a_host_name"),  # a Cyrillic і
    ("https://github.com/own\x00er/name", "repo_url_hidden_characters"),
    ("https://github.com/owner/\u202eeman", "repo_url_hidden_characters"),
    ("https://github.com/owner/name\u200b", "repo_url_hidden_characters"),
    ("https://github.com/owner/name\x1b[2J", "repo_url_hidden_characters"),
    ("https://github.com/../../x", "repo_url_dot_segments"),
    ("https://github.com/owner/./name", "repo_url_dot_segments"),
    ("https://github.com/owner/name/..", "repo_url_dot_segments"),
    ("https://github.com/owner/%2E%2e/x", "repo_url_dot_segments"),
    ("https://github.com/owner/" + "n" * (MAX_URL_CHARS - 24), "repo_url_too_long"),
    ("https://github.com/" + "a/" * 500_000, "repo_url_too_long"),
    ("javascript:alert(1)//github.com/a/b", "bad_repo_url"),
    ("https://github.com\\@evil.example/owner/name", "bad_repo_url"),
    ("owner/..", "bad_repo_url"),
    ("../..", "bad_repo_url"),
]


@pytest.mark.parametrize(("value", "reason"), HOSTILE_REPO_URLS)
def test_a_repo_url_a_client_cannot_follow_safely_is_rejected_with_its_reason(value: str, reason: str) -> None:
    assert repo_url(value) == (None, reason)


ORDINARY_URLS = [
    "https://github.com/nyu-dl/bert-gen",
    "https://github.com/owner/.github",
    "https://github.com/MS-P3/code7/tree/main/visual_bert",
    "https://gitlab.com/group/subgroup/project",
    "https://huggingface.co/spaces/owner/demo",
    "https://bitbucket.org/owner/repo",
    "https://arxiv.org/abs/1902.04094v2",
    "https://arxiv.org/pdf/1902.04094v2.pdf",
    "https://openreview.net/pdf?id=r1xMH1BtvB",
    "http://proceedings.mlr.press/v97/wang19a/wang19a.pdf",
    "https://aclanthology.org/2020.acl-main.1.pdf",
    "https://www.example.org/papers/a%20b.pdf",
    "https://example.org/~user/paper..v2.pdf",
]


@pytest.mark.parametrize("url", ORDINARY_URLS)
def test_an_ordinary_url_is_kept_as_it_is(url: str) -> None:
    assert web_url(url) == (url, None)


def test_only_the_scheme_and_host_of_a_url_are_lower_cased() -> None:
    assert web_url(" HTTPS://GitHub.COM/Owner/Name ") == ("https://github.com/Owner/Name", None)
    assert repo_url("HTTP://GitLab.com/Group/Project") == ("http://gitlab.com/Group/Project", None)
    assert repo_url("Owner/Name") == ("https://github.com/Owner/Name", None)  # a bare owner/name means GitHub


@given(
    st.sampled_from(["https://", "http://", "HTTPS://", "ftp://", "https://user@"]),
    st.sampled_from(["github.com", "arxiv.org", "a.b.co", "127.0.0.1", "ex-ample.org", "x..y.com", ".x.com", "x.com:80"]),
    st.text(alphabet="/.%2eE?#@:;=&~-_aZ09\\ \u202e\x00", max_size=24),
)
def test_the_plain_shape_checked_first_never_accepts_what_the_full_check_refuses(scheme: str, host: str, rest: str) -> None:
    url = scheme + host + rest
    for need_path in (False, True):
        full = rows._taken_apart(url, need_path)
        assert web_url(url, need_path) == full  # the fast shape is only a shortcut to the same answer
        if full[0] is not None:
            authority = re.match(r"https?://([^/?#]*)", full[0])
            assert authority is not None and "@" not in authority[1] and ":" not in authority[1]


def test_a_link_names_its_repository_once_in_any_letter_case_shown_as_first_seen(tmp_path: Path) -> None:
    links = [
        link_row("p", "HTTPS://GITHUB.COM/Owner/Name"),
        link_row("p", "https://github.com/owner/name", is_official=True),
        link_row("p", "https://github.com/OWNER/NAME.git"),
        link_row("p", "https://github.com/owner/name/"),
        link_row("p", "https://GitLab.com/Group/Project"),
        link_row("p", "https://gitlab.com/Group/Project/"),
    ]
    summary = build(tmp_path, [paper_row("p", "P")], links)
    (record,) = archive_records(tmp_path / "archive")
    assert [link["repo_url"] for link in record["code_links"]] == ["https://github.com/Owner/Name", "https://gitlab.com/Group/Project"]
    assert summary.rejected.counts == {"duplicate_link": 4}
    assert link_key("https://github.com/Owner/Name") == link_key("http://www.github.com/owner/name.git/") == "owner/name"


def test_hostile_repo_urls_are_counted_by_reason_and_none_is_written(tmp_path: Path) -> None:
    papers = [paper_row("p", "P")]
    links = [link_row("p", value) for value, _ in HOSTILE_REPO_URLS] + [link_row("p", "https://github.com/good/one")]
    build(tmp_path, papers, links)
    (record,) = archive_records(tmp_path / "archive")
    assert [link["repo_url"] for link in record["code_links"]] == ["https://github.com/good/one"]
    expected: dict[str, int] = {}
    for _, reason in HOSTILE_REPO_URLS:
        expected[reason] = expected.get(reason, 0) + 1
    manifest = read_manifest(tmp_path / "archive")
    assert manifest is not None
    assert {reason: entry["count"] for reason, entry in manifest["rejected"].items()} == expected
    for reason, entry in manifest["rejected"].items():
        assert len(entry["example"]) < 400  # a 1 MB URL is shown by its start
        if reason.startswith("repo_url_"):
            assert URL_PROBLEMS[reason.removeprefix("repo_url_")] in entry["example"]


def test_a_paper_url_a_client_cannot_follow_safely_is_left_out_and_the_paper_kept(tmp_path: Path) -> None:
    papers = [
        paper_row("js", "J", url_abs="javascript:alert(document.cookie)", url_pdf="https://arxiv.org/pdf/2001.00001v1.pdf"),
        paper_row("data", "D", url_abs="https://arxiv.org/abs/2001.00002", url_pdf="data:text/html,<script>alert(1)</script>"),
        paper_row("long", "L", url_pdf="https://arxiv.org/pdf/" + "9" * MB_ONE),
    ]
    links = [
        link_row("only-linked", "https://github.com/a/b", "O", paper_url_abs="http://10.0.0.1/abs", paper_url_pdf="https://x.org/../pdf")
    ]
    summary = build(tmp_path, papers, links)
    records = {record["url"]: record for record in archive_records(tmp_path / "archive")}
    assert sorted(records) == ["/paper/data", "/paper/js", "/paper/long", "/paper/only-linked"]
    assert "url_abs" not in records["/paper/js"] and records["/paper/js"]["url_pdf"] == "https://arxiv.org/pdf/2001.00001v1.pdf"
    assert "url_pdf" not in records["/paper/data"] and records["/paper/data"]["url_abs"] == "https://arxiv.org/abs/2001.00002"
    assert "url_pdf" not in records["/paper/long"]
    assert "url_abs" not in records["/paper/only-linked"] and "url_pdf" not in records["/paper/only-linked"]
    assert summary.warnings.counts == {"bad_url_abs": 2, "bad_url_pdf": 3}
    assert summary.rejected.total() == 0
    assert "not http or https" in summary.warnings.examples["bad_url_abs"]


# -- D6, the server side: a repository key never holds a path step ------------------------------


@pytest.mark.parametrize(
    "text",
    ["https://github.com/../../x", "https://github.com/./x", "https://github.com/owner/..", "../..", "./.", "github.com/.../x"],
)
def test_a_repository_key_is_never_made_of_dots(text: str) -> None:
    assert normalize_repo(text) is None
    assert repo_key(text) is None


def test_find_papers_for_repo_never_resolves_dot_segments(load_corpus: Any) -> None:
    record = make_record(code_links=[{"repo_url": "https://github.com/../../x", "is_official": 1}, {"repo_url": "https://github.com/a/b"}])
    corpus = load_corpus([record])
    for asked in ("https://github.com/../../x", "../..", "https://github.com/./x"):
        with pytest.raises(QueryError) as raised:
            queries.papers_for_repo(corpus, asked)
        assert raised.value.code == "invalid_argument"
    assert [paper.arxiv_id for paper in queries.papers_for_repo(corpus, "https://github.com/a/b").papers] == ["2001.00001"]


# -- D5: slugs ---------------------------------------------------------------------------------

HOSTILE_SLUGS = ["..", ".", "%2e%2e", "<script>alert(1)</script>", "a\x00b", "a\x1b[2Jb", "a\\b", "café", "\u212aelvin", "x" * 5_000]


def test_a_paper_url_without_a_slug_the_server_takes_is_rejected_in_both_tables(tmp_path: Path) -> None:
    papers = [paper_row(slug, "Hostile") for slug in HOSTILE_SLUGS] + [paper_row("Good-Slug", "Kept")]
    papers.append({**paper_row("x", "Ten megabytes"), "paper_url": f"{PWC}/paper/" + "y" * (10 * MIB)})
    links = [link_row(slug, "https://github.com/a/b") for slug in HOSTILE_SLUGS] + [link_row("only-linked", "https://github.com/c/d")]
    summary = build(tmp_path, papers, links)
    records = archive_records(tmp_path / "archive")
    assert sorted(record["url"] for record in records) == ["/paper/good-slug", "/paper/only-linked"]
    assert summary.rejected.counts == {"bad_paper_url": 2 * len(HOSTILE_SLUGS) + 1}
    for record in records:  # the slug the server finds is the one written
        assert slug_from_record_url(record["url"]) == record["url"].removeprefix("/paper/")
    assert paper_url_problem(None) == paper_url_problem("  ") == "no_paper_url" and paper_url_problem("<x>") == "bad_paper_url"


def test_the_slug_rule_is_ascii_and_bounded_on_the_server_too() -> None:
    assert parse_slug("\u212aelvin") is None  # with IGNORECASE alone, [a-z] matches the Kelvin sign
    assert parse_slug("a" * MAX_SLUG_CHARS) == "a" * MAX_SLUG_CHARS and parse_slug("a" * (MAX_SLUG_CHARS + 1)) is None
    assert parse_slug(f"{PWC}/paper/Mixed-Case") == "mixed-case"
    assert slug_from_record_url("/paper/<script>") is None
    assert slug_from_record_url("/paper/good-one") == "good-one"


def test_a_record_whose_url_holds_no_slug_is_not_found_or_listed_by_it(load_corpus: Any) -> None:
    corpus = load_corpus(
        [make_record(None, "<script>", title="Hostile slug only"), make_record("2001.00002", "a\x1bb", title="Hostile slug")]
    )
    assert [hit.arxiv_id for hit in queries.search_papers(corpus, "hostile").hits] == ["2001.00002"]
    codes = sorted((problem.severity, problem.code) for problem in corpus.index.report.problems)
    assert codes == [("error", "no_key"), ("warning", "bad_url")]


# -- D3: fields over the server's caps -----------------------------------------------------------


def test_fields_over_the_servers_caps_are_cut_at_build_time_and_the_shards_load_without_a_problem(tmp_path: Path) -> None:
    long_text = "w" * (9 * MIB)  # over the server's line cap on its own
    papers = [
        paper_row("long-abstract", "Long abstract", abstract=long_text),
        paper_row("long-title", long_text),
        paper_row("long-proceeding", "Long proceeding", proceeding="p" * (CAP.max_string_chars + 1)),
        paper_row("many-authors", "Many authors", authors=[f"Author {i}" for i in range(MAX_LIST_ENTRIES + 5)]),
        paper_row("long-author", "A long author name", authors=["Short", "n" * (CAP.max_string_chars + 7)]),
        paper_row("many-tasks", "Many tasks", tasks=[f"Task {i}" for i in range(MAX_LIST_ENTRIES + 5)]),
        paper_row("many-methods", "Many methods", methods=[method_row(f"Method {i}", "") for i in range(MAX_LIST_ENTRIES + 5)]),
        paper_row("long-task-name", "A long task name", tasks=["Image Classification", "t" * (MAX_NAME_CHARS + 1)]),
        paper_row("control-method-name", "A method name with a control character", methods=[method_row("Adam\x1b[31m")]),
    ]
    links = [
        link_row("long-abstract", "https://github.com/a/b", framework="f" * MB_ONE),
        link_row("only-linked", "https://github.com/c/d", long_text),
    ]
    summary = build(tmp_path, papers, links)
    assert served_report(tmp_path / "archive").problems == []  # nothing over a cap is left for the server to cut or lose
    records = {record["url"].removeprefix("/paper/"): record for record in archive_records(tmp_path / "archive")}
    assert len(records) == len(papers) + 1 and summary.rejected.total() == 0
    assert len(records["long-abstract"]["abstract"]) == len(records["long-title"]["title"]) == CAP.max_string_chars
    assert len(records["only-linked"]["title"]) == CAP.max_string_chars
    assert len(records["many-authors"]["authors"]) == len(records["many-tasks"]["tasks"]) == len(records["many-methods"]["methods"])
    assert len(records["many-tasks"]["tasks"]) == MAX_LIST_ENTRIES
    assert [len(name) for name in records["long-author"]["authors"]] == [5, CAP.max_string_chars]
    assert records["long-task-name"]["tasks"] == [{"task_slug": "image-classification", "task_name": "Image Classification"}]
    assert "methods" not in records["control-method-name"]
    assert "framework" not in records["long-abstract"]["code_links"][0]
    assert summary.warnings.counts == {
        "string_truncated": 5,  # abstract, title, proceeding, an author's name, a links-only title
        "list_truncated": 3,
        "bad_task_name": 1,
        "bad_method_name": 1,
        "bad_framework": 1,
    }
    assert all(len(example) < 400 for example in summary.warnings.examples.values())


def test_a_record_still_over_the_line_cap_once_cut_is_rejected_with_its_links(tmp_path: Path) -> None:
    authors = ["a" * CAP.max_string_chars] * (CAP.max_line_bytes // CAP.max_string_chars + 1)  # each name within the caps
    papers = [paper_row("huge", "Huge", authors=authors), paper_row("fine", "Fine")]
    links = [
        link_row("huge", "https://github.com/a/b"),
        link_row("huge", "https://github.com/a/c"),
        link_row("fine", "https://github.com/a/d"),
    ]
    summary = build(tmp_path, papers, links)
    assert [record["url"] for record in archive_records(tmp_path / "archive")] == ["/paper/fine"]
    assert summary.rejected.counts == {"record_too_large": 1, "links_of_rejected_paper": 2}
    assert (summary.papers, summary.code_links) == (1, 1)
    assert f"{CAP.max_line_bytes:,}-byte line cap" in summary.rejected.examples["record_too_large"]


def test_within_caps_leaves_a_record_under_them_alone_and_cuts_a_copy_otherwise() -> None:
    record = {"url": "/paper/p", "title": "T", "authors": ["A"], "tasks": [{"task_slug": "t"}]}
    assert within_caps(record) == (record, ())
    long = {**record, "abstract": "x" * (CAP.max_string_chars + 1), "authors": ["A"] * (MAX_LIST_ENTRIES + 1)}
    capped, cuts = within_caps(long)
    assert len(capped["abstract"]) == CAP.max_string_chars and len(capped["authors"]) == MAX_LIST_ENTRIES
    assert [reason for reason, _ in cuts] == ["string_truncated", "list_truncated"]
    assert len(long["authors"]) == MAX_LIST_ENTRIES + 1  # the row's own values are not touched


def test_a_million_distinct_task_names_keep_the_vocabulary_bounded() -> None:
    vocabulary = Vocabulary()
    names = [f"Task {i}" for i in range(Vocabulary.MOST_NAMES + 1_000)]
    entries = vocabulary.tasks_of(names)
    assert len(entries) == MAX_LIST_ENTRIES + 1  # looked up no further than a record keeps (one more: to say it was cut)
    for start in range(0, len(names), MAX_LIST_ENTRIES):
        vocabulary.tasks_of(names[start : start + MAX_LIST_ENTRIES])
    assert len(vocabulary.tasks) == Vocabulary.MOST_NAMES


def test_the_server_cuts_a_records_lists_to_the_same_cap(load_corpus: Any) -> None:
    tasks = [{"task_slug": f"t{i}", "task_name": f"T {i}"} for i in range(MAX_LIST_ENTRIES + 3)]
    corpus = load_corpus([make_record(tasks=tasks, authors=[f"A {i}" for i in range(MAX_LIST_ENTRIES + 1)])])
    problems = [(problem.code, problem.reason) for problem in corpus.index.report.problems]
    assert problems == [
        ("list_truncated", f"authors cut from {MAX_LIST_ENTRIES + 1:,} to {MAX_LIST_ENTRIES:,} entries"),
        ("list_truncated", f"tasks cut from {MAX_LIST_ENTRIES + 3:,} to {MAX_LIST_ENTRIES:,} entries"),
    ]
    assert len(corpus.index.papers[0].details().authors) == MAX_LIST_ENTRIES


# -- D14: a build that would write no paper ------------------------------------------------------


def good_archive(directory: Path) -> Path:
    """An archive of the bundled papers and three more."""
    papers, links = bundled_rows()
    build(directory / "good", [*papers, *(paper_row(f"more-{i}", f"More {i}") for i in range(3))], links)
    return directory / "good" / "archive"


def test_a_build_whose_every_row_is_rejected_is_refused_and_the_previous_archive_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = good_archive(tmp_path)
    before = files_of(archive)
    papers = [paper_row("no-title", None), paper_row("..", "Bad slug"), {**paper_row("x"), "paper_url": None}]
    sources = [write_json(tmp_path / "bad" / "papers.json", papers), write_json(tmp_path / "bad" / "links.json", [link_row("..", "a/b")])]
    code = cli.main(["archive", "build", *map(str, sources), "--out", str(archive), "--snapshot", SNAPSHOT])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("papercode: archive build: papers.json, links.json: no paper to write: every one of")
    assert "bad_paper_url 2" in err and "The previous archive is unchanged" in err
    assert files_of(archive) == before
    assert not list(archive.parent.glob(".archive.*"))


def test_a_build_from_tables_without_rows_is_refused_and_the_previous_archive_kept(tmp_path: Path) -> None:
    archive = good_archive(tmp_path)
    before = files_of(archive)
    one_paper, one_link = bundled_rows()
    sources = [
        write_parquet(tmp_path / "empty" / "papers.parquet", one_paper[:1]),
        write_parquet(tmp_path / "empty" / "links.parquet", one_link[:1]),
    ]
    for source in sources:  # the tables' columns, no rows
        import pyarrow.parquet as pq

        pq.write_table(pq.read_table(source).slice(0, 0), source)
    with pytest.raises(EmptyArchive, match="no paper to write: the sources hold 0 papers rows and 0 links rows"):
        build_archive(sources, archive, snapshot=SNAPSHOT)
    assert files_of(archive) == before


@pytest.mark.process
def test_papercode_archive_build_refuses_an_empty_build_and_a_server_keeps_its_papers(tmp_path: Path) -> None:
    archive = good_archive(tmp_path)
    before = files_of(archive)
    source = write_json(tmp_path / "bad" / "papers.json", [paper_row("no-title", None), paper_row("also-none", "  ")])
    result = papercode_process(tmp_path, "archive", "build", source, "--out", archive, "--snapshot", SNAPSHOT)
    assert result.returncode == 2 and result.stdout == ""
    assert "no paper to write" in result.stderr and "no_title 2" in result.stderr
    assert files_of(archive) == before
    check = papercode_process(tmp_path, "check", "--archive", "--archive-dir", archive)
    assert "records: 7 read, 5 indexed" in check.stdout, check.stdout + check.stderr  # the bundled records, the archive beneath


# -- D12: shards deleted or cut after the build ----------------------------------------------------


@pytest.fixture
def sharded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, build_module.BuildSummary]:
    """A built archive of 600 papers in all 16 shards."""
    monkeypatch.setattr(build_module, "SHARD_CHUNK_BYTES", 4_000)
    papers = [paper_row(f"paper-{i}", f"Paper {i}", abstract="words " * (i % 97)) for i in range(600)]
    summary = build(tmp_path, papers, [link_row("paper-1", "a/b")])
    assert len(summary.shards) == build_module.MAX_SHARDS
    return tmp_path / "archive", summary


def served(archive: Path) -> Corpus:
    records = records_dir(archive)
    return Corpus.load([records], archive=records)


def test_a_complete_archive_loads_without_a_warning(sharded: tuple[Path, build_module.BuildSummary]) -> None:
    archive, summary = sharded
    corpus = served(archive)
    assert corpus.index.report.problems == [] and len(corpus.index.papers) == summary.papers


def test_shards_deleted_or_cut_since_the_build_are_said_to_be_missing(sharded: tuple[Path, build_module.BuildSummary]) -> None:
    archive, summary = sharded
    shards = summary.shards
    for shard in shards[1:-1]:
        (records_dir(archive) / shard.name).unlink()
    cut = records_dir(archive) / shards[-1].name
    cut.write_bytes(cut.read_bytes()[: shards[-1].bytes // 2])
    (records_dir(archive) / "stray.jsonl").write_bytes(b"")
    corpus = served(archive)
    warnings = [(problem.code, Path(problem.path).name) for problem in corpus.index.report.problems if problem.severity == "warning"]
    missing = len(shards) - 2
    lost = sum(shard.records for shard in shards[1:])
    assert warnings == [
        ("archive_incomplete", "archive.json"),
        *[("archive_shard_missing", shard.name) for shard in shards[1:-1]],
        ("archive_shard_changed", shards[-1].name),
        ("archive_shard_unlisted", "stray.jsonl"),
    ]
    stats = queries.corpus_stats(corpus)
    assert stats.load.by_reason["archive_incomplete"] == 1 and stats.load.by_reason["archive_shard_missing"] == missing
    (first,) = [line for line in stats.load.first_problems if "archive_incomplete" in line]
    assert f"lists {summary.papers:,} papers in {len(shards)} shards; {missing} shard(s) missing and 1 changed" in first
    assert f"({lost:,} papers)" in first
    assert "/" not in first.split("archive_incomplete ")[1].split(":")[0]  # no server path in an answer


def test_an_archive_without_its_manifest_says_so(sharded: tuple[Path, build_module.BuildSummary]) -> None:
    archive, _ = sharded
    (archive / "archive.json").write_bytes(b'{"shards": "not a list"}')
    assert [problem.code for problem in served(archive).index.report.problems] == ["archive_manifest"]


@pytest.mark.process
def test_papercode_check_says_the_archive_is_incomplete(sharded: tuple[Path, build_module.BuildSummary], tmp_path: Path) -> None:
    archive, summary = sharded
    for shard in summary.shards[1:]:
        (records_dir(archive) / shard.name).unlink()
    result = papercode_process(tmp_path, "check", "--archive", "--archive-dir", archive)
    kept = summary.shards[0].records
    assert f"records: {kept + 2} read, {kept + 2} indexed" in result.stdout  # the two bundled records, then one shard
    assert "warning archive_incomplete (1):" in result.stdout
    assert f"lists {summary.papers:,} papers in {len(summary.shards)} shards; {len(summary.shards) - 1} shard(s) missing" in result.stdout
    assert f"warning archive_shard_missing ({len(summary.shards) - 1}):" in result.stdout


class Endless(io.RawIOBase):
    """A file of one line that never ends (a sparse file of zeros, say), which refuses to be read past `most` bytes."""

    def __init__(self, most: int) -> None:
        self.read_bytes, self.most = 0, most

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        assert self.read_bytes < self.most, f"read {self.read_bytes:,} bytes of an endless line"
        view = memoryview(buffer)
        view[:] = b"\0" * len(view)
        self.read_bytes += len(view)
        return len(view)


def test_the_line_reader_gives_up_on_an_endless_line_instead_of_reading_the_file() -> None:
    limits = Limits(max_file_bytes=4 * MIB, max_line_bytes=MIB)
    stream = Endless(most=64 * MIB)
    report = LoadReport()
    assert list(decode._read_jsonl(io.BufferedReader(stream), "shard.jsonl", limits, report)) == []
    assert stream.read_bytes <= limits.max_line_bytes + limits.max_file_bytes + 2 * io.DEFAULT_BUFFER_SIZE + (1 << 20)
    ((code, reason),) = [(problem.code, problem.reason) for problem in report.problems]
    assert code == "too_large" and reason.endswith("the rest of the file is not read")


@pytest.mark.process
def test_papercode_check_gives_up_on_a_huge_shard_without_a_newline(
    sharded: tuple[Path, build_module.BuildSummary], tmp_path: Path
) -> None:
    archive, _ = sharded
    sparse = records_dir(archive) / "papers-99.jsonl"
    with open(sparse, "wb") as stream:
        stream.truncate(20 * 1024 * MIB)  # 20 GiB of zeros, none of them on disk
    result = papercode_process(tmp_path, "check", "--archive", "--archive-dir", archive, timeout=600)
    assert "error too_large (1):" in result.stdout, result.stdout + result.stderr
    assert "papers-99.jsonl:1: line is over the 8,388,608-byte cap" in result.stdout
    assert "the rest of the file is not read" in result.stdout
    assert "records: 602 read, 602 indexed" in result.stdout  # every other shard, whole
