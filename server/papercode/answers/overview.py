"""What the corpus holds and what loading it found: `corpus_stats`, the load report resource and the load notice.

Problems are shown without the server's paths: record files relative to their records directory, code store files
by name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePath

from papercode.core.load_report import Problem, relative_to_roots, shown_path
from papercode.corpus.stages import Corpus
from papercode.index.paper_index import PaperIndex

from . import models

LICENCES_SHOWN = 20
FIRST_PROBLEMS = 5
LOAD_REPORT_PROBLEMS = 500


def corpus_stats(corpus: Corpus, code_problems: Sequence[Problem] = (), ready: str | None = None) -> models.CorpusStats:
    index = corpus.index
    licences = index.licence_counts
    top = dict(licences.most_common(LICENCES_SHOWN))
    if len(licences) > LICENCES_SHOWN:
        top["(other)"] = sum(licences.values()) - sum(top.values())
    return models.CorpusStats(
        papers=len(index.papers),
        papers_with_samples=index.papers_with_samples,
        samples=len(index.samples),
        by_status=dict(index.status_counts.most_common()),
        by_repo_kind=dict(index.repo_kind_counts.most_common()),
        by_licence=top,
        by_language=dict(index.language_counts.most_common()),
        by_source=by_source(index),
        archive=corpus.archive_note,
        snapshots=sorted(index.snapshots),
        read_at_range=list(index.read_at_range or ()),
        load=load_summary(corpus, code_problems),
        ready=ready,
        attribution=models.ATTRIBUTION if by_source(index) is None else models.BOTH_ATTRIBUTION,
    )


def by_source(index: PaperIndex) -> dict[str, int] | None:
    """Papers by where they came from, when the archive is served beneath the records (else None)."""
    sources = index.sources
    archive_only = len(index.papers) - sources.archive_start  # the papers before it came from the records
    if not archive_only and not sources.archive_replaced:
        return None
    return {"records": sources.archive_start, "archive": archive_only, "archive_rows_replaced": sources.archive_replaced}


def shown_problems(corpus: Corpus, code_problems: Sequence[Problem], most: int) -> list[Problem]:
    """The first `most` load problems as answers show them: record paths relative to their records
    directory (in reasons too) and code store files by name, so no answer reveals where the server keeps its files."""
    roots = corpus.index.report.roots
    records = corpus.index.report.problems[:most]
    of_records = [
        replace(problem, path=shown_path(problem.path, roots), reason=relative_to_roots(problem.reason, roots)) for problem in records
    ]
    return of_records + [
        replace(problem, path=f"code store: {PurePath(problem.path).name}") for problem in code_problems[: most - len(of_records)]
    ]


def load_summary(corpus: Corpus, code_problems: Sequence[Problem] = ()) -> models.LoadSummary:
    """The load report's counts; bad files found in the code store count as rejected too."""
    report = corpus.index.report
    return models.LoadSummary(
        files_seen=report.files_seen,
        files_read=report.files_read,
        records_read=report.records_read,
        records_indexed=report.records_indexed,
        rejected=report.rejected + len(code_problems),
        warnings=report.warnings,
        by_reason=dict(Counter(problem.code for problem in [*report.problems, *code_problems])),
        first_problems=[f"{p.severity} {p.code} {p.where()}: {p.reason}" for p in shown_problems(corpus, code_problems, FIRST_PROBLEMS)],
    )


def load_notice(corpus: Corpus, code_problems: Sequence[Problem] = ()) -> tuple[str, str] | None:
    """(level, text) telling a client that loading found problems (or that the archive asked for is not served); None
    when it found none."""
    summary = load_summary(corpus, code_problems)
    archive = f"; {corpus.archive_note}" if corpus.archive_note else ""
    if not summary.rejected and not summary.warnings:
        return ("warning", f"loaded {summary.records_indexed:,} papers{archive}") if archive else None
    return (
        "warning",
        f"loaded {summary.records_indexed:,} papers; {summary.rejected:,} records, samples or files rejected and "
        f"{summary.warnings:,} warnings: read corpus://load-report{archive}",
    )


def load_report(corpus: Corpus, code_problems: Sequence[Problem] = ()) -> dict[str, object]:
    """The full load report (problems capped, with the count of the rest)."""
    problems = [
        {"severity": p.severity, "code": p.code, "path": p.path, "line": p.line, "reason": p.reason}
        for p in shown_problems(corpus, code_problems, LOAD_REPORT_PROBLEMS)
    ]
    return {
        "summary": load_summary(corpus, code_problems).model_dump(exclude={"first_problems"}),
        "problems": [{key: value for key, value in item.items() if value is not None} for item in problems],
        "more_problems": max(0, len(corpus.index.report.problems) + len(code_problems) - LOAD_REPORT_PROBLEMS),
    }
