"""How answers show what the index holds: fields at their default left out, text cut to its bound, samples grouped by
repository and file, list answers cut to the answer budget, the attribution each answer carries.

An answer (or a part of one) is built "as shown" (`shown`): a JSON-ready dict with the fields of its answer model
(`models`), in the model's order, those that are None left out. The keyed tools and the leaderboards build their
answers so, once, rather than building the answer models and dumping them: on their hot paths the models' validation
and dump would cost more than the lookup. `twins` turns each such answer into its model, and tests/answers/test_fast_paths.py
proves the two agree, byte for byte; the SDK validates every answer against its output model too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

import orjson

from papercode.core.errors import QueryError
from papercode.corpus.stages import Corpus
from papercode.index.columns import SampleColumns
from papercode.index.fields import DETAIL_FIELDS, PAPER_FIELDS, SHOWN_SAMPLE_FIELDS, CodeLinkRow, PaperDetails
from papercode.index.paper_index import PaperRow, task_key

from . import models
from .checks import MAX_ID_CHARS

TITLE_CHARS = 300  # real titles are far shorter; a hostile one must not flood every list
AUTHOR_CHARS = 100
CODE_LINKS_SHOWN = 10
ABSTRACT_CHARS = 2_000
# A list answer's entries end before this many bytes, so that with its note and attribution it keeps within the
# 4,000 tokens (16,000 bytes) every default answer does; the ids or hashes after are left out, and counted.
LIST_ENTRY_BYTES = 14_000

_NOTHING_IMPLIED: tuple[None, None] = (None, None)  # what an unknown status implies


def shown(**fields: Any) -> dict[str, Any]:
    """An answer (or a part of one) as the model receives it: the fields given, in their answer model's order,
    those that are None left out."""
    return {name: value for name, value in fields.items() if value is not None}


def in_order(order: Sequence[str], **fields: Any) -> dict[str, Any]:
    """`shown` of fields given in any order: in `order` (an answer model's), those that are None left out."""
    return {name: value for name in order if (value := fields.get(name)) is not None}


def shorten(text: str, most: int) -> str:
    """Display text cut to `most` characters, marked with an ellipsis when cut."""
    return text if len(text) <= most else text[: most - 1] + "…"


def authors_shown(authors: list[str], most: int) -> list[str]:
    """A paper's first `most` authors, each name cut to `AUTHOR_CHARS`."""
    return [shorten(name, AUTHOR_CHARS) for name in authors[:most]]


class PaperRefFields(TypedDict):
    arxiv_id: str | None
    slug: str | None
    title: str


def paper_ref(paper: PaperRow) -> PaperRefFields:
    """How an answer names a paper (`models.PaperRef`): its arXiv id, else its slug, and its title."""
    return {"arxiv_id": paper.arxiv_id, "slug": None if paper.arxiv_id else paper.slug, "title": shorten(paper.title, TITLE_CHARS)}


# The fields of a paper get_paper shows as stored, under their names (`index.fields`: those marked `shown`), each placed
# among the answer's fields by its model.
_SHOWN_OF_ROW = tuple(field.name for field in PAPER_FIELDS if field.kind.shown)
_SHOWN_OF_DETAILS = tuple(field.name for field in DETAIL_FIELDS if field.kind.shown)
PAPER_ANSWER_ORDER = tuple(models.PaperAnswer.model_fields)
_UNPLACED = sorted({*_SHOWN_OF_ROW, *_SHOWN_OF_DETAILS} - set(PAPER_ANSWER_ORDER))
if _UNPLACED:
    raise ImportError(f"get_paper shows {', '.join(_UNPLACED)} (index.fields), which models.PaperAnswer lacks: add each where it is shown")


def as_stored(paper: PaperRow, details: PaperDetails) -> dict[str, Any]:
    """The fields of `paper` get_paper shows as stored, by name."""
    shown_fields = {name: getattr(paper, name) for name in _SHOWN_OF_ROW}
    shown_fields.update({name: getattr(details, name) for name in _SHOWN_OF_DETAILS})
    return shown_fields


def merged_tasks(tasks: list[tuple[str, str]]) -> list[str]:
    """A paper's task names, one for each task however many of its slugs name it."""
    names: dict[str, str] = {}
    for slug, name in tasks:
        names.setdefault(task_key(slug), name)
    return list(names.values())


def rest(count: int, listed: int) -> int | None:
    """How many of `count` a list of `listed` leaves out (None: none)."""
    return count - listed if count > listed else None


def page_cursor(corpus: Corpus, query: Mapping[str, object], offset: int, listed: int, total: int) -> str | None:
    """The cursor of the page after one of `listed` items from `offset`, None when it is the last."""
    end = offset + listed
    return corpus.pager.encode(query, end) if end < total else None


def attribution(corpus: Corpus, paper: PaperRow) -> str:
    """Whose material an answer about `paper` carries: its Code-with-Papers record, or the archive's row."""
    return models.ARCHIVE_ATTRIBUTION if corpus.index.sources.from_archive(paper.ordinal) else models.ATTRIBUTION


def attribution_of(corpus: Corpus, papers: Sequence[PaperRow]) -> str:
    """Whose material an answer about several papers carries: the records', the archive's, or both."""
    sources = {attribution(corpus, paper) for paper in papers}
    return sources.pop() if len(sources) == 1 else models.BOTH_ATTRIBUTION if sources else models.ATTRIBUTION


# -- samples -------------------------------------------------------------------------------


def sample_checks(status: str, contract_check: str | None, verification_level: int | None) -> tuple[str | None, int | None]:
    """A sample's contract check and verification level as answers show them: each left out (None) when it is what
    the status implies (`models.STATUS_IMPLIES`), or when the record has none."""
    implied_check, implied_level = models.STATUS_IMPLIES.get(status, _NOTHING_IMPLIED)
    return (
        None if contract_check == implied_check else contract_check,
        None if verification_level == implied_level else verification_level,
    )


def language_shown(language: str | None) -> str | None:
    """A sample's language as answers show it: left out when it is the default, "" when the record names none."""
    return None if language == models.DEFAULT_LANGUAGE else language or ""


SampleGroupKey = tuple[
    int, str, str, str | None, str | None, bool
]  # paper (-1: not grouped by paper), repo, kind, language, licence, inline_ok

# The sample fields grouped_samples unpacks by position, in this order: those `index.fields` marks `shown`, as
# `SampleColumns.shown` reads them. A field marked shown (or moved) there is a name in its loop too, and a place in
# `models.GroupedSample` or `models.RepoSamples`: refused at import until it is, not at the first call.
GROUPED_SAMPLE_FIELDS = (
    "code_sha256",
    "entry",
    "repo",
    "repo_kind",
    "path",
    "language",
    "status",
    "contract_check",
    "verification_level",
    "licence",
    "inline_ok",
)
if SHOWN_SAMPLE_FIELDS != GROUPED_SAMPLE_FIELDS:
    raise ImportError(
        f"index.fields marks the sample fields {', '.join(SHOWN_SAMPLE_FIELDS)} shown, in that order, but "
        f"answers.shaping.grouped_samples unpacks {', '.join(GROUPED_SAMPLE_FIELDS)}: unpack each in its loop, in the "
        "declaration's order, list it in GROUPED_SAMPLE_FIELDS and show it where models.GroupedSample or models.RepoSamples "
        "places it (or leave the field unmarked)"
    )


def grouped_samples(
    columns: SampleColumns,
    ids: Sequence[int],
    papers: Sequence[int] | None = None,
    stored: Callable[[str], bool] | None = None,
    status_shown: bool = True,
) -> dict[SampleGroupKey, dict[str, Any]]:
    """Samples `ids` as answers show them: by repository (`models.RepoSamples`, as shown), then by file; each group
    where its first sample comes (so, best first) and the samples of a file in their order. A repository's fields
    (kind, language, licence, inline_ok) are said by the group, so samples of one repository that differ in them
    make a group each; with `papers` (each sample's paper) the groups are by paper too (keyed by it first).

    One pass over the page, read from the columns (`SampleColumns.shown`), with no row built: this is the
    keyed tools' hot path."""
    groups: dict[SampleGroupKey, dict[str, Any]] = {}
    owners = papers if papers is not None else [-1] * len(ids)
    implies = models.STATUS_IMPLIES
    # The fields of GROUPED_SAMPLE_FIELDS, in its order.
    for paper, (sha, entry, repo, kind, path, language, status, check, level, licence, inline) in zip(
        owners, columns.shown(ids), strict=True
    ):
        key = (paper, repo, kind, language, licence, inline)
        group = groups.get(key)
        if group is None:
            group = groups[key] = shown(
                repo=repo, repo_kind=kind, language=language_shown(language), licence=licence, inline_ok=None if inline else False
            )
            group["files"] = {}
        # Built field by field (the order of `models.GroupedSample`), not through `shown`: this runs once a sample.
        sample = {"code_sha256": sha, "entry": entry}
        if status_shown:
            sample["status"] = status
        implied_check, implied_level = implies.get(status, _NOTHING_IMPLIED)
        if check is not None and check != implied_check:
            sample["contract_check"] = check
        if level is not None and level != implied_level:
            sample["verification_level"] = level
        if stored is not None and inline and stored(sha):
            sample["stored"] = True
        files = group["files"]
        if path in files:
            files[path].append(sample)
        else:
            files[path] = [sample]
    return groups


def sample_counts(corpus: Corpus, paper: PaperRow) -> dict[str, Any]:
    """A paper's samples counted from the index's columns (get_paper's summary and get_harvested_code_for_paper's
    counts; `models.SampleCounts`, as shown): no sample row is built for it."""
    counts = corpus.index.samples.counts(paper.samples)
    if not counts["pointer_only"]:
        del counts["pointer_only"]
    return counts


# -- code links ----------------------------------------------------------------------------


def code_links(links: Sequence[CodeLinkRow], most: int) -> list[dict[str, Any]]:
    """The first `most` of a paper's code links as answers show them (`models.RepoLink`; they are stored official
    first)."""
    return [
        shown(
            repo=link.repo_url,
            official=True if link.is_official else None,
            framework=link.framework,
            mentioned_in_paper=link.mentioned_in_paper,
            reach=link.reach_status,
            licence=link.licence,
        )
        for link in links[:most]
    ]


def repositories_instead(paper: PaperRow) -> tuple[list[str] | None, str]:
    """For a paper without samples: its first repositories (official first) and a note that counts them."""
    links = paper.details().code_links  # stored official first
    if not links:
        return None, "no harvested code samples and no known repositories for this paper. Next: search_papers for related work"
    listed = links[:CODE_LINKS_SHOWN]
    official = sum(link.is_official for link in links)
    which = f"the first {official} official" if official else "none marked official"
    more = f" ({len(links) - len(listed)} more not listed)" if len(links) > len(listed) else ""
    note = f"no harvested code samples for this paper; repos: {len(listed)} of its {len(links)} repositories, {which}{more}. "
    return [link.repo_url for link in listed], note + "Next: read a repository's code, or search_papers for related papers with samples"


# -- list answers --------------------------------------------------------------------------


def list_entries(asked: Sequence[str], entry: Callable[[int], dict[str, Any]], tool: str) -> tuple[list[dict[str, Any]], int, str | None]:
    """A list answer's entries, in the order asked: `entry(position)`, or, when that raises a QueryError about the item,
    the item marked in place (`asked`, `error`). The entries end before `LIST_ENTRY_BYTES`; returns them, how many
    items were left out, and a note with the next step for each error and for what was left out."""
    entries: list[dict[str, Any]] = []
    next_steps: dict[str, str] = {}
    size = 0
    for position, item in enumerate(asked):
        try:
            answered = entry(position)
        except QueryError as error:
            if error.code in ("loading", "load_failed"):  # about the corpus, not the item: the whole call fails
                raise
            next_steps.setdefault(error.code, error.next_step)
            answered = {"asked": shorten(item, MAX_ID_CHARS), "error": error.code}
        size += len(orjson.dumps(answered)) + 1
        if size > LIST_ENTRY_BYTES and entries:
            left_out = len(asked) - position
            next_steps["left_out"] = f"the last {left_out} were left out to keep this answer small: call {tool} again with them"
            return entries, left_out, _note(next_steps)
        entries.append(answered)
    return entries, 0, _note(next_steps)


def _note(next_steps: dict[str, str]) -> str | None:
    return "; ".join(f"{code}: {step}" for code, step in next_steps.items()) or None
