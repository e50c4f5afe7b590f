"""The corpus-wide parts of an index, computed once at the end of a build over whole columns (numpy).

Per record, the builder only appends to columns; everything that needs every paper at once is
computed here: which samples are live (a duplicate's winner leaves the loser's samples unreferenced),
the counts and the code-hash order (here), the listing order with its buckets (`listing`) and the
repository lists (`repositories`). Each is a sort or a count over integer columns, so it costs
milliseconds per million samples instead of a Python statement per sample. The results are plain
`array`s, as the index serves and pickles them.
"""

from __future__ import annotations

from array import array
from collections import Counter

import numpy as np

from papercode.core.ids import paper_key
from papercode.core.records import NO_LICENCE, OFFICIAL_KIND
from papercode.index.columns import PaperColumns, SampleColumns
from papercode.index.fields import NONE
from papercode.index.paper_index import CorpusWide

from .arrays import Ints, as_ints, dense, live_positions, narrow, pick, range_starts, view
from .listing import listing
from .repositories import LinkRepos, repositories


def compute(samples: SampleColumns, papers: PaperColumns, links: LinkRepos) -> CorpusWide:
    """Everything derived from the papers' live samples (and their code links)."""
    values = samples.strings.values
    official_id = samples.strings.ids.get(OFFICIAL_KIND, -2)  # -2: no sample is official
    starts, ends = view(papers.start), view(papers.end)
    live = live_positions(starts, ends, view(samples.paper))

    def counts(column: array[int], missing: str) -> Counter[str]:
        found, codes = dense(pick(column, live))
        count = np.bincount(codes, minlength=len(found))
        first = np.argsort(narrow(codes), kind="stable")[range_starts(count)] if len(codes) else count
        seen = np.argsort(first, kind="stable")  # in order of first appearance, as a Counter over the column would be
        return Counter(
            {
                (missing if string_id == NONE else values[string_id]): n
                for string_id, n in zip(found[seen].tolist(), count[seen].tolist(), strict=True)
            }
        )

    sha = pick(samples.code_sha256, live)
    by_sha = np.argsort(sha, kind="stable")
    sample_ids = by_sha if live is None else live[by_sha]
    by_key, key_rank = key_ranks(papers)
    listing_order, buckets = listing(samples, papers, by_key)
    repo_names, repo_offsets, repo_papers = repositories(samples, key_rank, links, live, official_id)
    return CorpusWide(
        live_samples=len(samples) if live is None else len(live),
        status_counts=counts(samples.status, "unknown"),
        repo_kind_counts=counts(samples.repo_kind, "unknown"),
        licence_counts=counts(samples.licence, NO_LICENCE),
        language_counts=counts(samples.language, "unknown"),
        papers_with_samples=int(np.count_nonzero(ends > starts)),
        sha_sorted=array("Q", sha[by_sha].astype(np.uint64).tobytes()),
        sha_samples=as_ints(sample_ids),
        repo_names=repo_names,
        repo_offsets=repo_offsets,
        repo_papers=repo_papers,
        listing_order=listing_order,
        buckets=buckets,
    )


def key_ranks(papers: PaperColumns) -> tuple[list[int], Ints]:
    """Paper ordinals in key order, and each paper's rank in it."""
    keys = list(map(paper_key, papers.arxiv_id, papers.slug))
    by_key = sorted(range(len(papers)), key=keys.__getitem__)
    ranks = np.empty(len(papers), dtype=np.int64)
    ranks[by_key] = np.arange(len(papers), dtype=np.int64)
    return by_key, ranks
