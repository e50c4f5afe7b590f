"""Records in the published schema (the shape of `records/*.txt`), written and loaded as the server loads them.

`make_record` / `make_sample` build one record or sample; `write_records` writes records to a directory;
`load_papers` loads directories the way the server does. The bundled papers are named here (`BERT_MOUTH`, ...), and
`synthetic_records` is a large, deterministic worst-case corpus for the answer-size budgets.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from papercode.core.limits import Limits
from papercode.core.load_report import LoadReport
from papercode.corpus.stages import Corpus
from papercode.index.fields import PaperRow, SampleRow
from papercode.index.paper_index import PaperIndex

ABOUT = {
    "site": "https://codewithpapers.app",
    "licence": "CC BY-SA 4.0",
    "attribution": "https://codewithpapers.app/attribution",
}
CLAIM = "Per-sample execution status on synthesized fixtures; not a correctness claim about the paper."


BERT_MOUTH = "1902.04094"
BERTS_ICL = "2406.04823"
BERT_MOUTH_TITLE = "BERT has a Mouth, and It Must Speak: BERT as a Markov Random Field Language Model"
BERTS_ICL_TITLE = "BERTs are Generative In-Context Learners"

# 1902.04094's samples as (repo, status, entry) in the default order: official first, then
# status best first, then showable (inline_ok) first, then repo/path/entry.
BERT_MOUTH_ORDER = [
    ("nyu-dl/bert-gen", "ran_honours", "preprocess"),
    ("nyu-dl/bert-gen", "ran_draft_wrong", "get_seed_sent"),
    ("opqrstuvcut/BertMouth", "ran_honours", "initialization_text"),
    ("seanrjohnson/protein_gibbs_sampler", "ran", "partition"),
    ("seanrjohnson/protein_gibbs_sampler", "ran", "generate_step"),
    ("seanrjohnson/protein_gibbs_sampler", "ran", "rawbatchlen"),
    ("seanrjohnson/protein_gibbs_sampler", "ran", "apply_gap_threshold"),
    ("seanrjohnson/protein_gibbs_sampler", "ran", "count_gaps_per_column"),
    ("seanrjohnson/protein_gibbs_sampler", "ran", "delete_msa_cols"),
    ("swastishreya/BERT_as_a_conditional_generative_model", "ran_draft_wrong", "detokenize"),
]


def list_samples(index: PaperIndex, statuses: Iterable[str], **filters: Any) -> tuple[int, list[SampleRow]]:
    """(total, one page of samples in listing order) as rows: `PaperIndex.list_sample_ids` (same filters), materialised
    for a test to read each sample's fields."""
    total, ids = index.list_sample_ids(statuses, **filters)
    return total, index.samples.rows(ids)


def sha_for(*parts: object) -> str:
    """A deterministic 16-hex code hash."""
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:16]


def make_sample(sha: str, **fields: Any) -> dict[str, Any]:
    sample: dict[str, Any] = {
        "code_sha256_prefix": sha,
        "entry": "train",
        "repo": "owner/repo",
        "repo_kind": "official",
        "path": "train.py",
        "link_basis": "plan_row",
        "language": "python",
        "status": "ran",
        "verification_level": 1,
        "contract_check": None,
        "metamorphic_tier": None,
        "behaviour_fingerprint": False,
        "licence": "MIT",
        "inline_ok": True,
        "mcp_get_code": {"code_sha256": sha},
    }
    sample.update(fields)
    sample.setdefault("file_url", f"https://github.com/{sample['repo']}/blob/HEAD/{sample['path']}")
    return sample


def make_record(
    arxiv_id: str | None = "2001.00001",
    slug: str = "a-test-paper",
    samples: list[dict[str, Any]] | None = None,
    *,
    syntology: bool = True,
    **fields: Any,
) -> dict[str, Any]:
    """A record in the published schema; `syntology=False` gives a paper with no harvest (null)."""
    record: dict[str, Any] = {
        "about": ABOUT,
        "url": f"/paper/{slug}",
        "title": "A Test Paper",
        "arxiv_id": arxiv_id,
        "date": "2020-01-01",
        "proceeding": None,
        "authors": ["Ada Lovelace"],
        "abstract": "An abstract.",
        "url_abs": f"https://arxiv.org/abs/{arxiv_id}v1" if arxiv_id else None,
        "url_pdf": f"https://arxiv.org/pdf/{arxiv_id}v1.pdf" if arxiv_id else None,
        "source": {"archive": "pwc-archive", "snapshot": "2025-07-28", "row_kind": "abstracts"},
        "code_links": [],
        "tasks": [],
        "methods": [],
        "datasets_introduced": [],
        "methods_introduced": [],
        "results": [],
        "syntology": None,
        "arxiv_metadata": None,
        "syntology_extracted_results": None,
    }
    if syntology:
        record["syntology"] = {"read_at": "2026-09-01T00:00:00+00:00", "claim": CLAIM, "samples": samples or []}
    record.update(fields)
    return record


def write_records(directory: Path, records: list[dict[str, Any]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for number, record in enumerate(records):
        (directory / f"{number:03d}.json").write_bytes(orjson.dumps(record))
    return directory


def load_papers(roots: list[Path], limits: Limits | None = None) -> tuple[Corpus, list[PaperRow], LoadReport]:
    """Records loaded as the server loads them: the corpus, every paper it admitted (in index order), and the report."""
    loaded = Corpus.load(roots, limits)
    return loaded, list(loaded.index.papers), loaded.index.report


# -- a large worst-case corpus -------------------------------------------------------------

SYNTHETIC_PAPERS = 2_000
SHARED_REPO_URL = "https://github.com/huggingface/transformers"  # linked from every synthetic paper
SYNTHETIC_STATUSES = ("ran_honours", "ran", "ran_draft_wrong", "ran_violates", "unverified")
VOCABULARY = (
    *("transformer", "generative", "masked", "language", "model", "retrieval", "augmented", "contrastive", "self", "supervised"),
    *("learning", "efficient", "sparse", "attention", "diffusion", "graph", "neural", "network", "reinforcement", "policy"),
    *("optimisation", "vision"),
)


def _words(seed: int, count: int, sep: str = " ") -> str:
    return _phrase(seed * 7 % len(VOCABULARY), count, sep)


@functools.cache
def _phrase(start: int, count: int, sep: str) -> str:
    # Only the seed modulo the vocabulary matters: each phrase is made once (the corpus asks for ~230,000).
    return sep.join(VOCABULARY[(start + i * 3) % len(VOCABULARY)] for i in range(count))


@functools.cache
def synthetic_record_list() -> tuple[dict[str, Any], ...]:
    """`synthetic_records()`, made once a session (the corpus and the budget tests read the same records; never changed)."""
    return tuple(synthetic_records())


def synthetic_records(n: int = SYNTHETIC_PAPERS) -> Iterator[dict[str, Any]]:
    """Deterministic records at the long end of real data. Every tenth paper is a worst case:
    a ~200-character title, 300 authors, a 4,000-character abstract, 40 code links, 30 methods,
    12 tasks and 80 samples with long repository names, paths and entries; the others are
    smaller (so the corpus loads in a few seconds) but keep the long titles and paths."""
    for i in range(n):
        big = i % 10 == 0
        arxiv_id = f"{20 + i % 5}{(i % 12) + 1:02d}.{i:05d}"
        samples = [
            make_sample(
                sha_for("synthetic", i, j),
                entry=f"compute_{_words(i + j, 3, '_')}_{j}",
                repo=f"research-lab-{i % 50}/{_words(i, 3, '-')}-{j % 4}",
                repo_kind="official" if j % 4 == 0 else "listed",
                path=f"src/{_words(j, 2, '_')}/modules/{_words(i + j, 2, '_')}_{j}.py",
                status=SYNTHETIC_STATUSES[(i + j) % len(SYNTHETIC_STATUSES)],
                contract_check="HONOURS" if (i + j) % 5 == 0 else "OUTPUT_MISDECLARED",
                licence="NONE" if j % 7 == 0 else "Apache-2.0",
                inline_ok=j % 7 != 0,
            )
            for j in range(80 if big else 5)
        ]
        yield make_record(
            arxiv_id,
            f"synthetic-{i}-{_words(i, 6, '-')}",
            samples,
            title=f"{_words(i, 20)} ({i})"[:200],
            abstract=(_words(i, 600) if big else _words(i, 120))[: 4_000 if big else 800],
            date=f"{2015 + i % 10}-{(i % 12) + 1:02d}-{(i % 28) + 1:02d}",
            proceeding=f"Proceedings of the {_words(i, 8)} conference",
            authors=[f"Author {_words(i + k, 2)} {k}" for k in range(300 if big else 8)],
            code_links=[
                {
                    "repo_url": f"https://github.com/research-lab-{i % 50}/{_words(i, 3, '-')}-{k}",
                    "is_official": int(k == 0),
                    "mentioned_in_paper": int(k < 2),
                    "mentioned_in_github": 1,
                    "framework": ("pytorch", "tf", "jax", "mindspore")[k % 4],
                    "reach": {"status": "ok", "spdx": "Apache-2.0"},
                }
                for k in range(40 if big else 4)
            ]
            + [{"repo_url": SHARED_REPO_URL, "is_official": 0, "mentioned_in_paper": 0, "framework": "pytorch", "reach": None}],
            tasks=[
                {"task_slug": f"task-{_words(i + k, 3, '-')}", "task_name": f"Task {_words(i + k, 3)}"} for k in range(12 if big else 3)
            ],
            methods=[{"method_slug": f"method-{k}", "method_name": f"Method {_words(k, 3)}"} for k in range(30 if big else 5)],
        )
