"""The prompts `implement_paper` and `compare_implementations`: the paper resolved, then its text.

The texts are prose over the paper's rows, cut to size; what is said of the sample order and of licences is
generated from their definitions (`ordering`, `records`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from papercode.core.ordering import PAPER_ORDER_GIST
from papercode.core.records import NO_LICENCE, STATUS_ORDER_TEXT
from papercode.corpus.stages import Corpus
from papercode.index.paper_index import CodeLinkRow, SampleRow

from .resolving import full_text, resolve_paper
from .shaping import ABSTRACT_CHARS, CODE_LINKS_SHOWN, TITLE_CHARS, attribution, shorten

PROMPT_SAMPLES = 8  # the samples `implement_paper` names (the best ones: they come in the paper's order)


def _sample_line(row: SampleRow) -> str:
    showable = "may be shown" if row.inline_ok else "POINTER ONLY: never reproduce"
    return f"- {row.entry} in {row.repo}/{row.path} [{row.status}, {row.repo_kind}, licence {row.licence or 'unknown'}, {showable}] code_sha256={row.code_sha256}"


def implement_prompt(corpus: Corpus, arxiv_id: str) -> str:
    """The `implement_paper` prompt for the paper `arxiv_id` names."""
    paper, _ = resolve_paper(corpus, arxiv_id)
    abstract = full_text(corpus).abstract(paper.ordinal)
    return _implement(
        shorten(paper.title, TITLE_CHARS),
        paper.key,
        abstract=abstract[:ABSTRACT_CHARS] if abstract else None,
        samples=corpus.index.samples_of(paper),
        claim=paper.claim,
        credit=attribution(corpus, paper),
    )


def compare_prompt(corpus: Corpus, arxiv_id: str) -> str:
    """The `compare_implementations` prompt for the paper `arxiv_id` names."""
    paper, _ = resolve_paper(corpus, arxiv_id)
    return _compare(
        shorten(paper.title, TITLE_CHARS),
        paper.key,
        samples=corpus.index.samples_of(paper),
        links=paper.details().code_links,
        links_shown=CODE_LINKS_SHOWN,
        credit=attribution(corpus, paper),
    )


def _implement(title: str, key: str, *, abstract: str | None, samples: Sequence[SampleRow], claim: str | None, credit: str) -> str:
    """The `implement_paper` prompt for a paper (`samples` in its order: the first `PROMPT_SAMPLES` are named)."""
    named = samples[:PROMPT_SAMPLES]
    lines = [
        f'Implement the method of the paper "{title}" ({key}).',
        "",
        "Abstract:",
        abstract or "(no abstract in the record)",
        "",
    ]
    if named:
        lines += [f"Best harvested code samples ({PAPER_ORDER_GIST}):", *map(_sample_line, named), ""]
        lines += [
            "Fetch a sample's code with get_code(code_sha256). Respect licences: a sample marked POINTER ONLY",
            "(inline_ok false) must only be linked by its file_url, never copied or reproduced.",
        ]
    else:
        lines.append("No code samples were harvested for this paper; use get_paper for its code links.")
    if claim:
        lines += ["", f"What the statuses mean: {claim}"]
    lines += ["", f"Attribution: {credit}"]
    return "\n".join(lines)


def _samples_summary(rows: list[SampleRow]) -> str:
    if not rows:
        return "no harvested samples"
    statuses = ", ".join(f"{n} {status}" for status, n in Counter(row.status for row in rows).most_common())
    licences = ", ".join(sorted({row.licence or "unknown" for row in rows}))
    pointer_only = sum(1 for row in rows if not row.inline_ok)
    showable = f"{pointer_only} POINTER ONLY (never copy)" if pointer_only else "all may be shown"
    return f"samples: {statuses}; sample licence {licences}; {showable}"


def _compare(title: str, key: str, *, samples: Sequence[SampleRow], links: Sequence[CodeLinkRow], links_shown: int, credit: str) -> str:
    """The `compare_implementations` prompt: each of the first `links_shown` code links with the paper's
    samples from its repository, then the repositories only samples name."""
    by_repo: dict[str, list[SampleRow]] = {}
    for row in samples:
        by_repo.setdefault(row.repo.lower(), []).append(row)
    lines = [f'Compare the implementations of "{title}" ({key}) and recommend one to build on.', "", "Repositories:"]
    for link in links[:links_shown]:
        rows = by_repo.pop(link.repo, []) if link.repo else []
        lines.append(
            f"- {link.repo_url}: {'official' if link.is_official else 'not official'}, framework {link.framework or 'unknown'}, "
            f"repository licence {link.licence or 'unknown'}; {_samples_summary(rows)}"
        )
    for rows in by_repo.values():
        lines.append(f"- {rows[0].repo} ({rows[0].repo_kind}, not in the code links); {_samples_summary(rows)}")
    if len(links) > links_shown:
        lines.append(f"- … and {len(links) - links_shown} more code links (get_paper lists them)")
    lines += [
        "",
        f"Weigh: official status, execution status ({STATUS_ORDER_TEXT}),",
        f"framework, and licence (inline_ok false / licence {NO_LICENCE} means link only, never copy).",
        "Use get_harvested_code_for_paper with repo_kind to see each repository's samples, and get_code(code_sha256)",
        "to fetch a sample's code; respect each sample's licence.",
        "",
        f"Attribution: {credit}",
    ]
    return "\n".join(lines)
