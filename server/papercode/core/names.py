"""Names as people write them (tasks, methods, datasets, metrics), made into the keys every lookup compares.

One rule, one place: `search_papers`' `task` and `method` filters key the index's facets with it, and the leaderboard
tools (`get_leaderboard`, `describe`) key the archive's tasks, methods, datasets and metrics with it, so a name found by
one is found by the other. Case, white space, hyphens and underscores never matter; task names also merge the usual
spelling variants (`Language Modelling` / `Language Modeling`); datasets and metrics are keyed as methods are. A slug (`semantic-segmentation`, the lower-cased name
with every run of other characters one `-`) is one more way to write a name: `name_keys` gives both.

A name that names nothing is answered with the nearest names, by one of two rules: among a few names (a tool's
arguments, the tools, describe's kinds), those a few edits away (`near_by_edits`); among the many sorted keys of the
archive's names, the neighbours of where it would sort, by how much of their beginning it shares (`shared_prefix`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import Literal

NameKind = Literal["task", "method", "dataset", "metric"]

_NON_SLUG = re.compile(r"[^a-z0-9]+")
_SEPARATORS = re.compile(r"[\s_\-]+")
_NUMBERS = re.compile(r"\d+")
_SPELLING = ((re.compile(r"(.)\1"), r"\1"), (re.compile(r"isation"), "ization"), (re.compile(r"our\b"), "or"))


def name_slug(name: str) -> str:
    """A task's or method's slug: lower case, each run of other characters one `-` (`Multi-Head Attention` -> `multi-head-attention`)."""
    return _NON_SLUG.sub("-", name.lower()).strip("-")


@functools.lru_cache(maxsize=1 << 16)  # method and framework names repeat across papers
def facet_value(text: str) -> str:
    """Method and framework names match loosely: case, spaces, hyphens and underscores do not matter."""
    return _SEPARATORS.sub("-", text.strip().lower())


@functools.lru_cache(maxsize=1 << 16)  # task names repeat across papers
def task_key(name: str) -> str:
    """Task names match as method names do, and near-duplicates merge (language-modeling / language-modelling)."""
    key = facet_value(name)
    for pattern, replacement in _SPELLING:
        key = pattern.sub(replacement, key)
    return key


def name_key(kind: NameKind, text: str) -> str:
    """The key of a name of `kind`: tasks as `search_papers` keys tasks; methods, datasets and metrics as it keys
    methods (no spelling merges: `CIFAR-100` is not `CIFAR-10`)."""
    return task_key(text) if kind == "task" else facet_value(text)


def same_numbers(a: str, b: str) -> bool:
    """Whether two names hold the same numbers (`task_key` merges doubled characters, digits too: `Atari 2600` and
    `Atari 260` share a key, and are not one task)."""
    return _NUMBERS.findall(a) == _NUMBERS.findall(b)


def shared_prefix(a: str, b: str) -> int:
    """How many characters two keys begin with alike: how near they are, for the nearest names of a name not found."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


MOST_EDITED_CHARS = 64  # no name compared by edits is near one longer: edit distance would cost its square


def edit_distance(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`."""
    before: list[int] | None = None
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y))
            if before is not None and i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                cost = min(cost, before[j - 2] + 1)
            current.append(cost)
        before, previous = previous, current
    return previous[-1]


def near_by_edits(name: str, names: Sequence[str]) -> list[str]:
    """The names among `names` a few edits from `name` (about a third of the shorter name, one at least), the nearest
    first, then in their order: what a misspelt name most likely meant, among a few names."""
    if len(name) > MOST_EDITED_CHARS:
        return []
    near = sorted(
        (distance, position, candidate)
        for position, candidate in enumerate(names)
        if (distance := edit_distance(name, candidate)) <= max(1, min(len(name), len(candidate)) // 3)
    )
    return [candidate for _, _, candidate in near]


def name_keys(kind: NameKind, names: Iterable[str]) -> set[str]:
    """Every key under which something named `names` (its name, full name, synonyms, variants...) is found: each
    name as written and as its slug."""
    keys: set[str] = set()
    for name in names:
        if name:
            keys.update(_keys_of(kind, name))
    return keys


@functools.lru_cache(maxsize=1 << 16)  # a build keys every board's dataset: the same few thousand names
def _keys_of(kind: NameKind, name: str) -> tuple[str, ...]:
    if not name.strip():
        return ()
    slug = name_slug(name)
    return (name_key(kind, name), name_key(kind, slug)) if slug else (name_key(kind, name),)


def title_key(title: str) -> str:
    """A paper's title as a leaderboard row's title is compared with it: lower case, white space runs one space (cheap:
    an archive build keys every paper's title with it)."""
    return " ".join(title.lower().split())
