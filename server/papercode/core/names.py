"""Names as people write them (tasks, methods, datasets, metrics), made into the keys every lookup compares.

One rule, one place: `search_papers`' `task` and `method` filters key the index's facets with it, and the leaderboard
tools (`get_leaderboard`, `describe`) key the archive's tasks, methods, datasets and metrics with it, so a name found by
one is found by the other. Case, white space, hyphens and underscores never matter; task names also merge the usual
spelling variants (`Language Modelling` / `Language Modeling`); datasets and metrics are keyed as methods are. A slug (`semantic-segmentation`, the lower-cased name
with every run of other characters one `-`) is one more way to write a name: `name_keys` gives both.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
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
