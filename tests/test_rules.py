"""Each rule has one home: the code that applies it, and the prose that states it, follow the definition."""

from __future__ import annotations

import itertools
import random
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import BERT_MOUTH, list_samples, make_record, make_sample, sha_for
from papercode.answers import models, prompts, resolving
from papercode.core.errors import QueryError
from papercode.core.ids import GITHUB_URL, MAX_OWNER_CHARS, MAX_REPO_NAME_CHARS, SHA_PREFIX_LENGTH, is_sha_prefix
from papercode.core.ordering import LISTING_ORDER, PAPER_ORDER, PAPER_ORDER_GIST, PAPER_TIES, STATUS_BEST_FIRST, group, status_order
from papercode.core.records import KNOWN_STATUSES, MAX_PATH_CHARS, MAX_REPO_CHARS, REPO_KINDS
from papercode.corpus.stages import Corpus
from papercode.index.columns import blob_url
from papercode.settings import DEFAULT_CODE_BASE_URL, Settings
from papercode.verified import store
from papercode.verified.harvest import sha256_prefix
from papercode.verified.materialize import OUTCOMES
from papercode.verified.sources import FETCH_TIMEOUT_SECONDS, MAX_SOURCE_BYTES, MAX_SOURCE_SIZE_TEXT, SourceFetcher, SourceLocation, locate

LoadCorpus = Callable[[list[dict[str, Any]]], Corpus]
VERIFIED_CODE_PAGE = (Path(__file__).parents[1] / "docs" / "verified-code.md").read_text(encoding="utf-8")

# -- the two sample orders -----------------------------------------------------------------

_STATUSES = (*KNOWN_STATUSES, "ran_someday", "also_unknown")
_KINDS = (*REPO_KINDS, "fork")


def _random_samples(rng: random.Random, paper: int, count: int) -> list[dict[str, Any]]:
    return [
        make_sample(
            f"{paper:04x}{number:012x}",
            repo=rng.choice(("a/x", "b/y", "C/z")),
            path=rng.choice(("m.py", "n.py")),
            entry=rng.choice(("f", "g")),
            repo_kind=rng.choice(_KINDS),
            status=rng.choice(_STATUSES),
            inline_ok=rng.random() < 0.5,
        )
        for number in range(count)
    ]


def _mixed_corpus(load_corpus: LoadCorpus) -> tuple[Corpus, dict[str, list[dict[str, Any]]]]:
    rng = random.Random(14)
    samples = {f"2001.{paper:05d}": _random_samples(rng, paper, 40) for paper in range(1, 6)}
    records = [make_record(arxiv_id, f"paper-{arxiv_id}", listed) for arxiv_id, listed in samples.items()]
    rng.shuffle(records)
    return load_corpus(records), samples


def _paper_key(sample: dict[str, Any], position: int) -> tuple[Any, ...]:
    """The paper order as `PAPER_ORDER` and `PAPER_TIES` state it, criterion by criterion."""
    return (*(criterion.rank(sample[criterion.field]) for criterion in PAPER_ORDER), *(sample[tie] for tie in PAPER_TIES), position)


def test_a_papers_samples_are_in_the_order_its_definition_states(load_corpus: LoadCorpus) -> None:
    corpus, samples = _mixed_corpus(load_corpus)
    for arxiv_id, listed in samples.items():
        expected = [sample["code_sha256_prefix"] for _, sample in sorted(enumerate(listed), key=lambda item: _paper_key(item[1], item[0]))]
        paper = corpus.index.paper_by_arxiv(arxiv_id)
        assert paper is not None
        assert [row.code_sha256 for row in corpus.index.samples_of(paper)] == expected


def test_the_corpus_listing_is_in_the_order_its_definition_states(load_corpus: LoadCorpus) -> None:
    corpus, samples = _mixed_corpus(load_corpus)

    def listing_key(arxiv_id: str, sample: dict[str, Any], position: int) -> tuple[Any, ...]:
        criteria = (
            status_order(sample["status"]) if criterion is STATUS_BEST_FIRST else criterion.rank(sample[criterion.field])
            for criterion in LISTING_ORDER
        )
        return (*criteria, arxiv_id, _paper_key(sample, position))

    expected = sorted(
        ((arxiv_id, sample, position) for arxiv_id, listed in samples.items() for position, sample in enumerate(listed)),
        key=lambda item: listing_key(*item),
    )
    total, rows = list_samples(corpus.index, corpus.index.statuses())
    assert total == len(expected)
    assert [row.code_sha256 for row in rows] == [sample["code_sha256_prefix"] for _, sample, _ in expected]


def test_the_listing_and_a_paper_put_the_same_criteria_in_a_different_order() -> None:
    assert set(LISTING_ORDER) == set(PAPER_ORDER)
    assert LISTING_ORDER[0] is STATUS_BEST_FIRST and PAPER_ORDER[1] is STATUS_BEST_FIRST


def test_what_the_prompt_says_of_the_order_is_generated_from_it(corpus: Corpus) -> None:
    assert PAPER_ORDER_GIST == f"{PAPER_ORDER[0].words} and {PAPER_ORDER[1].words} first" == "official repositories and working code first"
    text = prompts.implement_prompt(corpus, BERT_MOUTH)
    assert f"Best harvested code samples ({PAPER_ORDER_GIST}):" in text
    paper = corpus.index.paper_by_arxiv(BERT_MOUTH)
    assert paper is not None
    named = [line.split(" in ", 1)[0][2:] for line in text.splitlines() if line.startswith("- ")]
    assert named == [row.entry for row in corpus.index.samples_of(paper)][: prompts.PROMPT_SAMPLES]


def test_a_group_sorts_as_its_criteria_do() -> None:
    values = list(itertools.product(_KINDS, _STATUSES, (True, False)))
    by_group = sorted(values, key=lambda triple: (group(PAPER_ORDER, triple), triple))
    by_criteria = sorted(values, key=lambda triple: ((*(c.rank(v) for c, v in zip(PAPER_ORDER, triple, strict=True)),), triple))
    assert by_group == by_criteria


# -- the code hash's length ----------------------------------------------------------------


def test_the_code_hash_length_is_one_constant_everywhere(load_corpus: LoadCorpus) -> None:
    assert len(sha256_prefix("def f():\n    pass\n")) == SHA_PREFIX_LENGTH
    assert array("Q").itemsize * 8 == 4 * SHA_PREFIX_LENGTH  # the index keeps a hash in one 64-bit int
    assert is_sha_prefix("0" * SHA_PREFIX_LENGTH) and not is_sha_prefix("0" * (SHA_PREFIX_LENGTH + 1))
    sha = "00" + "a" * (SHA_PREFIX_LENGTH - 2)  # leading zeros survive the int column
    corpus = load_corpus([make_record(samples=[make_sample(sha)])])
    assert [row.code_sha256 for row in corpus.index.samples] == [sha]
    assert corpus.index.shas_with_prefix(sha[:3]) == [sha]
    too_long = load_corpus([make_record(samples=[make_sample(sha + "0")])])
    assert len(too_long.index.samples) == 0


def test_the_code_hash_prose_is_generated_from_its_length(corpus: Corpus) -> None:
    assert f"sha256(code)[:{SHA_PREFIX_LENGTH}] == code_sha256" in str(models.CodeAnswer.model_fields["code"].description)
    with pytest.raises(QueryError, match=f"pass the full {SHA_PREFIX_LENGTH}-character code_sha256"):
        resolving.find_code(corpus, "abc")


# -- the bounds on a sample's path and repository ------------------------------------------


def test_the_path_bound_is_the_same_for_the_records_and_the_sources(load_corpus: LoadCorpus) -> None:
    longest, over = "p" * (MAX_PATH_CHARS - 3) + ".py", "p" * (MAX_PATH_CHARS - 2) + ".py"
    corpus = load_corpus([make_record(samples=[make_sample(sha_for(1), path=longest), make_sample(sha_for(2), path=over)])])
    assert [row.path for row in corpus.index.samples] == [longest]
    assert [problem.reason for problem in corpus.index.report.problems] == [
        f"sample 1 dropped: path: String should have at most {MAX_PATH_CHARS} characters"
    ]
    assert isinstance(locate("owner/name", longest), SourceLocation)
    assert locate("owner/name", over) == f"path is longer than {MAX_PATH_CHARS} characters"


def test_the_repository_bound_is_githubs_for_the_records_and_the_sources(load_corpus: LoadCorpus) -> None:
    longest = "o" * MAX_OWNER_CHARS + "/" + "n" * MAX_REPO_NAME_CHARS
    assert len(longest) == MAX_REPO_CHARS
    assert isinstance(locate(longest, "a.py"), SourceLocation)
    assert locate("o" + longest, "a.py") == f"repo owner must be 1-{MAX_OWNER_CHARS} letters, digits or hyphens, not starting with a hyphen"
    assert str(locate(longest + "n", "a.py")).startswith(f"repo name must be 1-{MAX_REPO_NAME_CHARS} letters")
    corpus = load_corpus([make_record(samples=[make_sample(sha_for(1), repo=longest), make_sample(sha_for(2), repo=longest + "n")])])
    assert [row.repo for row in corpus.index.samples] == [longest]


# -- the size cap on a source file (and so on a harvested module) ---------------------------


def test_the_code_cap_is_one_constant_and_its_prose_is_generated_from_it() -> None:
    assert store.MAX_CODE_BYTES == MAX_SOURCE_BYTES == 2 * 1024 * 1024
    assert MAX_SOURCE_SIZE_TEXT == "2 MB"
    assert OUTCOMES["too_large"] == f"the source file is over the {MAX_SOURCE_SIZE_TEXT} cap"
    assert f"Each download has a {FETCH_TIMEOUT_SECONDS:g} s timeout and a {MAX_SOURCE_SIZE_TEXT} cap" in " ".join(
        VERIFIED_CODE_PAGE.split()
    )


# -- GitHub's URLs ------------------------------------------------------------------------


def test_the_builder_knows_a_usual_file_url_by_the_indexs_own_rule(load_corpus: LoadCorpus) -> None:
    usual = make_sample(sha_for(1), repo="Owner/Name", path="src/a.py")
    moved = make_sample(sha_for(2), repo="Owner/Name", path="src/b.py", file_url=f"{GITHUB_URL}Owner/Name/blob/main/src/b.py")
    corpus = load_corpus([make_record(samples=[usual, moved])])
    assert usual["file_url"] == blob_url("Owner/Name", "src/a.py")  # the fixture writes the usual URL
    assert list(corpus.index.samples.file_url.values()) == [moved["file_url"]]  # only the unusual one is kept
    assert [row.file_url for row in corpus.index.samples] == [usual["file_url"], moved["file_url"]]


def test_the_default_code_host_is_the_fetchers() -> None:
    assert Settings().code_base_url == DEFAULT_CODE_BASE_URL == SourceFetcher().base_url
