"""Issue #21, the archive path under attack, its rows: a hostile row is rejected, or its field cut or left out, when
the archive is built, by the rules the server applies (the slug rule, repository keys, the caps on texts, lists and
lines), so that what `papercode archive build` writes is what the server serves, whole; a build that would write no
paper leaves the previous archive in place; and a build's files changed or cut after the build are found (a start
refuses a file of another size, `papercode archive verify` checks every byte).

Every archive here is written by the test (tests/support/archive_tables.py).
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from papercode.answers import overview, queries
from papercode.archive import build as build_module
from papercode.archive import build_archive, rows
from papercode.archive.build import EmptyArchive
from papercode.archive.rows import Vocabulary, link_key, paper_url_problem, repo_url, within_caps
from papercode.cli import main as cli
from papercode.core import safe_text
from papercode.core.errors import QueryError
from papercode.core.ids import MAX_SLUG_CHARS, normalize_repo, parse_slug, repo_key, slug_from_record_url
from papercode.core.limits import Limits
from papercode.core.load_report import LoadReport
from papercode.core.records import MAX_LIST_ENTRIES, MAX_NAME_CHARS, MAX_URL_CHARS
from papercode.core.safe_text import URL_PROBLEMS, web_url
from papercode.corpus.stages import Corpus
from papercode.index import fields
from papercode.ingest import decode
from tests.support.archive_tables import (
    PWC,
    Row,
    bundled_rows,
    current_manifest,
    link_row,
    method_row,
    paper_row,
    served_papers,
    write_json,
    write_parquet,
)
from tests.support.build_phases import without_phases
from tests.support.checkout import SERVER_DIR
from tests.support.records import make_record

DATA_DATE = "2025-07-28"
CAP = Limits()  # the server's caps as it applies them by default
MIB = 1024 * 1024
MB_ONE = 1_000_000


def build(directory: Path, papers: list[Row], links: list[Row], **options: Any) -> build_module.BuildSummary:
    """The two tables as JSON dumps, built into `directory / "archive"`."""
    sources = [write_json(directory / "src" / "papers.json", papers), write_json(directory / "src" / "links.json", links)]
    return build_archive(sources, directory / "archive", data_date=DATA_DATE, **options)


def files_of(directory: Path) -> dict[str, bytes]:
    return {str(path.relative_to(directory)): path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file()}


def served_links(archive: Path) -> dict[str, list[str]]:
    """Each served paper's code links' URLs, by slug."""
    return {slug: [link[0] for link in paper["code_links"]] for slug, paper in served_papers(archive).items()}


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
        full = safe_text._taken_apart(url, need_path)
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
    assert served_links(tmp_path / "archive") == {"p": ["https://github.com/Owner/Name", "https://gitlab.com/Group/Project"]}
    assert summary.rejected.counts == {"duplicate_link": 4}
    assert link_key("https://github.com/Owner/Name") == link_key("http://www.github.com/owner/name.git/") == "owner/name"


def test_hostile_repo_urls_are_counted_by_reason_and_none_is_written(tmp_path: Path) -> None:
    papers = [paper_row("p", "P")]
    links = [link_row("p", value) for value, _ in HOSTILE_REPO_URLS] + [link_row("p", "https://github.com/good/one")]
    build(tmp_path, papers, links)
    assert served_links(tmp_path / "archive") == {"p": ["https://github.com/good/one"]}
    expected: dict[str, int] = {}
    for _, reason in HOSTILE_REPO_URLS:
        expected[reason] = expected.get(reason, 0) + 1
    manifest = current_manifest(tmp_path / "archive")
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
    served = served_papers(tmp_path / "archive")
    assert sorted(served) == ["data", "js", "long", "only-linked"]
    assert served["js"]["url_abs"] is None and served["js"]["url_pdf"] == "https://arxiv.org/pdf/2001.00001v1.pdf"
    assert served["data"]["url_pdf"] is None and served["data"]["url_abs"] == "https://arxiv.org/abs/2001.00002"
    assert served["long"]["url_pdf"] is None
    assert served["only-linked"]["url_abs"] is None and served["only-linked"]["url_pdf"] is None
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
    served = served_papers(tmp_path / "archive")
    assert sorted(served) == ["good-slug", "only-linked"]
    assert summary.rejected.counts == {"bad_paper_url": 2 * len(HOSTILE_SLUGS) + 1}
    for slug in served:  # the slug the server finds is the one written
        assert slug_from_record_url(f"/paper/{slug}") == slug
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


def test_fields_over_the_servers_caps_are_cut_at_build_time_and_served_as_cut(tmp_path: Path) -> None:
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
    served = served_papers(tmp_path / "archive")  # nothing over a cap is left for the server to hold
    assert len(served) == len(papers) + 1 and summary.rejected.total() == 0
    assert len(served["long-abstract"]["abstract"]) == len(served["long-title"]["title"]) == CAP.max_string_chars
    assert len(served["only-linked"]["title"]) == CAP.max_string_chars
    assert len(served["many-authors"]["authors"]) == len(served["many-tasks"]["tasks"]) == len(served["many-methods"]["methods"])
    assert len(served["many-tasks"]["tasks"]) == MAX_LIST_ENTRIES
    assert [len(name) for name in served["long-author"]["authors"]] == [5, CAP.max_string_chars]
    assert served["long-task-name"]["tasks"] == [("image-classification", "Image Classification")]
    assert served["control-method-name"]["methods"] == []
    assert served["long-abstract"]["code_links"] == [("https://github.com/a/b", False, False, None)]  # the framework left out
    for paper in served.values():
        texts = [paper["title"], paper["abstract"] or "", paper["proceeding"] or "", *paper["authors"]]
        assert max(map(len, texts)) <= CAP.max_string_chars
        assert max(len(paper["authors"]), len(paper["tasks"]), len(paper["methods"])) <= MAX_LIST_ENTRIES
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
    assert list(served_papers(tmp_path / "archive")) == ["fine"]
    assert summary.rejected.counts == {"record_too_large": 1, "links_of_rejected_paper": 2}
    assert (summary.papers, summary.code_links) == (1, 1)
    assert f"{CAP.max_line_bytes:,}-byte record cap" in summary.rejected.examples["record_too_large"]


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
    code = cli.main(["archive", "build", *map(str, sources), "--out", str(archive), "--snapshot", DATA_DATE])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    err = without_phases(err)
    assert err.count("\n") == 1 and err.startswith("papercode: archive build: papers.json, links.json: no paper to write: every one of")
    assert "bad_paper_url 2" in err and "The previous archive is unchanged" in err
    assert files_of(archive) == before
    assert len(list((archive / "builds").iterdir())) == 1  # nothing of the refused build


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
        build_archive(sources, archive, data_date=DATA_DATE)
    assert files_of(archive) == before


@pytest.mark.process
def test_papercode_archive_build_refuses_an_empty_build_and_a_server_keeps_its_papers(tmp_path: Path) -> None:
    archive = good_archive(tmp_path)
    before = files_of(archive)
    source = write_json(tmp_path / "bad" / "papers.json", [paper_row("no-title", None), paper_row("also-none", "  ")])
    result = papercode_process(tmp_path, "archive", "build", source, "--out", archive, "--snapshot", DATA_DATE)
    assert result.returncode == 2 and result.stdout == ""
    assert "no paper to write" in result.stderr and "no_title 2" in result.stderr
    assert files_of(archive) == before
    check = papercode_process(tmp_path, "check", "--archive", "--archive-dir", archive)
    assert "records: 2 read, 2 indexed" in check.stdout, check.stdout + check.stderr  # the bundled records
    assert f"archive: build {current_manifest(archive)['build_id']} (5 papers, " in check.stdout  # and the archive beneath


# -- D12: a build's files changed or cut after the build ---------------------------------------------
# (What replaced the shards deleted, cut or unlisted since the build, said to be missing by the loader: a build is one
# set of files its manifest lists with their sizes and sha256; a start refuses one of another size or missing, and
# serves the records alone saying so; `papercode archive verify` checks every byte.)


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, build_module.BuildSummary]:
    papers = [paper_row(f"paper-{i}", f"Paper {i}", abstract="words " * (i % 97)) for i in range(600)]
    return tmp_path / "archive", build(tmp_path, papers, [link_row("paper-1", "a/b")])


def test_a_complete_build_is_served_whole_and_verified(
    built: tuple[Path, build_module.BuildSummary], capsys: pytest.CaptureFixture[str]
) -> None:
    archive, summary = built
    corpus = Corpus.load([], archive_dir=archive)
    assert corpus.archive_note is None and len(corpus.index.papers) == summary.papers and corpus.index.report.problems == []
    assert cli.main(["archive", "verify", "--out", str(archive)]) == 0
    files = len(current_manifest(archive)["files"])
    assert capsys.readouterr().out == f"archive: build {summary.build_id} intact ({files} files, 600 papers)\n"


@pytest.mark.parametrize("damage", ["deleted", "cut", "changed"])
def test_a_file_deleted_cut_or_changed_since_the_build_is_found(
    built: tuple[Path, build_module.BuildSummary], damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    archive, summary = built
    title = archive / "current" / "papers" / "title.data"
    data = title.read_bytes()
    if damage == "deleted":
        title.unlink()
    else:
        title.write_bytes(data[: len(data) // 2] if damage == "cut" else b"X" + data[1:])
    corpus = Corpus.load([], archive_dir=archive)
    if damage == "changed":  # the same size: a start maps it (it reads no byte it does not serve); verify finds it
        assert corpus.archive_note is None
    else:
        assert corpus.archive is None and corpus.archive_note is not None
        assert f"the archive's build {summary.build_id} is damaged: title.data " in corpus.archive_note
        assert overview.corpus_stats(corpus).archive == corpus.archive_note and str(archive) not in corpus.archive_note
    assert cli.main(["archive", "verify", "--out", str(archive)]) == 1
    err = capsys.readouterr().err
    if damage == "changed":  # every byte read: the one changed is found
        files = len(current_manifest(archive)["files"])
        assert err == (
            f"papercode: archive verify: {summary.build_id}/papers/title.data: its bytes are not those the build wrote (sha256 differs)\n"
            f"papercode: archive verify: 1 of {files} files of build {summary.build_id} are damaged. Next: rebuild it\n"
        )
    else:  # refused as a start refuses it
        assert err.count("\n") == 1 and err.startswith(
            f"papercode: archive verify: the archive's build {summary.build_id} is damaged: title.data "
        )


@pytest.mark.process
def test_papercode_check_says_the_archive_is_damaged_and_serves_the_records(
    built: tuple[Path, build_module.BuildSummary], tmp_path: Path
) -> None:
    archive, summary = built
    (archive / "current" / "papers" / "blob.data").unlink()
    result = papercode_process(tmp_path, "check", "--archive", "--archive-dir", archive)
    assert result.returncode == 1
    assert "records: 2 read, 2 indexed" in result.stdout  # the bundled records, served alone
    assert f"archive: the archive is not served: the archive's build {summary.build_id} is damaged: blob.data " in result.stdout


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
def test_papercode_check_gives_up_on_a_huge_records_file_without_a_newline(tmp_path: Path) -> None:
    """(The archive's shards are gone, but a records directory is still read line by line.)"""
    records = tmp_path / "records"
    records.mkdir()
    for i, record in enumerate(make_record(f"2001.{i:05d}", f"paper-{i}") for i in range(3)):
        (records / f"{i}.json").write_bytes(orjson.dumps(record))
    with open(records / "papers-99.jsonl", "wb") as stream:
        stream.truncate(20 * 1024 * MIB)  # 20 GiB of zeros, none of them on disk
    result = papercode_process(tmp_path, "check", "--records", records, timeout=600)
    assert "error too_large (1):" in result.stdout, result.stdout + result.stderr
    assert "papers-99.jsonl:1: line is over the 8,388,608-byte cap" in result.stdout
    assert "the rest of the file is not read" in result.stdout
    assert "records: 3 read, 3 indexed" in result.stdout  # every other file, whole


# -- record assembly: a row's fields into the record's shape (`rows.RecordAssembly`) --------------------------------


def test_a_papers_row_becomes_its_record_field_by_field() -> None:
    """The record keeps the fields in the order every record writes them; a field the rules cannot use is left out
    with a warning, the paper kept."""
    rejected, warnings = rows.Tally(), rows.Tally()
    assembly = rows.RecordAssembly(rejected, warnings)
    task = {"task_slug": "image-classification", "task_name": "Image Classification"}
    row = rows.PapersTableRow(
        paper_url="https://paperswithcode.com/paper/p1",
        title="T",
        date="2020-13-40",
        proceeding="NeurIPS",
        authors="A. Author",
        abstract="An abstract.",
        url_abs="https://arxiv.org/abs/2001.00001",
        url_pdf="javascript:alert(1)",
        tasks=[task],
    )
    record = assembly.paper(row, "p1", "2001.00001", "papers.json", 7)
    assert list(record.items()) == [
        ("url", "/paper/p1"),
        ("title", "T"),
        ("arxiv_id", "2001.00001"),
        ("proceeding", "NeurIPS"),
        ("authors", ["A. Author"]),
        ("abstract", "An abstract."),
        ("url_abs", "https://arxiv.org/abs/2001.00001"),
        ("tasks", [task]),
    ]
    assert dict(warnings.counts) == {"bad_date": 1, "bad_url_pdf": 1} and not rejected.total()
    assert warnings.examples["bad_date"].startswith("papers.json row 7: date '2020-13-40' of /paper/p1")


def test_a_links_row_becomes_its_code_link_or_is_rejected() -> None:
    rejected, warnings = rows.Tally(), rows.Tally()
    assembly = rows.RecordAssembly(rejected, warnings)
    row = rows.LinksTableRow(repo_url="https://GitHub.com/Owner/Repo", is_official="true", mentioned_in_paper=0, framework="\x00")
    link = assembly.link(row, "p1", "links.json", 3)
    assert link is not None and link.key == "owner/repo" and link.order == (-1, 0, 0, "https://github.com/Owner/Repo")
    assert link.row == fields.link_row("https://github.com/Owner/Repo", True, False, None)
    assert dict(warnings.counts) == {"bad_framework": 1}
    assert assembly.link(rows.LinksTableRow(repo_url="ftp://example.org/x"), "p1", "links.json", 4) is None
    assert dict(rejected.counts) == {"bad_repo_url": 1}
