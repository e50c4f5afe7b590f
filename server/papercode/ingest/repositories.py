"""Which papers name each repository (`find_papers_for_repo`), from their code links and their samples."""

from __future__ import annotations

from array import array
from typing import NamedTuple

import numpy as np

from papercode.index.columns import SampleColumns

from .arrays import Ints, as_ints, dense, live_positions, pick, view


class LinkRepos(NamedTuple):
    """Repositories named by code links, one entry per (paper, link) with a GitHub repository."""

    paper: array[int]
    repo: array[int]  # index into `names`
    official: bytearray
    start: array[int]  # per paper ordinal: its entries are start..end-1 (a replaced paper's old ones are left out)
    end: array[int]
    names: list[str]  # lower-case owner/name
    numbers: dict[str, int]  # name -> its index in `names`


def repositories(
    samples: SampleColumns, key_rank: Ints, links: LinkRepos, live: Ints | None, official_id: int
) -> tuple[list[str], array[int], array[int]]:
    """Lower-case owner/name -> papers that name it (in a code link or a sample), official first,
    then most samples from it, then paper key (CSR: sorted names, offsets, papers)."""
    values = samples.strings.values
    names, number = links.names, links.numbers

    def code_of(name: str) -> int:
        found = number.get(name)
        if found is None:
            found = number[name] = len(names)
            names.append(name)
        return found

    repo_ids, repo_of = dense(pick(samples.repo, live))
    sample_code = np.asarray([code_of(values[string_id].lower()) for string_id in repo_ids.tolist()], dtype=np.int64)[repo_of]
    link_live = live_positions(view(links.start), view(links.end), view(links.paper))
    link_paper, link_code, link_official = (pick(column, link_live) for column in (links.paper, links.repo, links.official))
    width = max(len(names), 1)
    # One entry per (paper, repository) named by a sample or a link: how many samples, whether any is official.
    keys = np.concatenate(
        (pick(samples.paper, live).astype(np.int64) * width + sample_code, link_paper.astype(np.int64) * width + link_code)
    )
    entries, entry_of = np.unique(keys, return_inverse=True)
    from_samples = len(keys) - len(link_paper)
    count = np.bincount(entry_of[:from_samples], minlength=len(entries))
    officials = np.concatenate((pick(samples.repo_kind, live) == official_id, link_official.astype(bool)))
    official = np.bincount(entry_of, weights=officials, minlength=len(entries)) > 0
    paper, code = entries // width, entries % width

    name_rank = np.empty(len(names), dtype=np.int64)
    name_rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names), dtype=np.int64)
    order = np.lexsort((paper, key_rank[paper], -count, ~official, name_rank[code]))
    codes = code[order]
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1]))) if len(codes) else np.zeros(0, dtype=np.int64)
    offsets = np.append(starts, len(codes))
    return list(map(names.__getitem__, codes[starts].tolist())), as_ints(offsets), as_ints(paper[order])
