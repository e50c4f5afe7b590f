"""Synthetic Code-with-Papers records in the real schema, deterministic by seed.

The shape copies the bundled records (`records/*.txt`): the paper part from the Papers-with-Code archive plus a
`syntology` harvest block whose `summary`, `by_repo_kind` and `n_pointer_only_for_licence` are derived from its
samples, exactly as in the real records. The spread is chosen to stress the loader and the index:

* record sizes about 3-40 KB (compact JSON, mean about 15 KB), 0-80 samples per record;
* a fifth of samples licence-restricted (`licence` NONE, `inline_ok` false);
* about 3 % old-style arXiv ids (`hep-th/9901001`), about 4 % papers with no arXiv id (slug only);
* about 0.5 % papers with hundreds of authors;
* every sample has a unique 16-hex `code_sha256_prefix` (repeated as `mcp_get_code.code_sha256`).

`generate_records(n, seed)` yields the records; `write_corpus(directory, n, seed, layout)` writes them as one `.json`
per record in sharded subdirectories (`files`), as `.jsonl` bundles of at most 10,000 lines (`jsonl`), or as gzipped
bundles (`jsonl.gz`).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

__all__ = ["LAYOUTS", "add_arguments", "generate_records", "main", "write_corpus"]

LAYOUTS = ("files", "jsonl", "jsonl.gz")
BUNDLE_LINES = 10_000
FILES_PER_SHARD = 1_000
MIN_BYTES = 3_000
MAX_BYTES = 40_000

ABOUT = {
    "site": "https://codewithpapers.app",
    "non_affiliation": "Code with Papers and Syntology are not affiliated with, endorsed by, or sponsored by Papers with Code, "
    "Meta, or the pwc-archive mirror.",
    "licence": "CC BY-SA 4.0",
    "licence_url": "https://creativecommons.org/licenses/by-sa/4.0/legalcode",
    "attribution": "https://codewithpapers.app/attribution",
    "modified": "archive material modified by Syntology; see the attribution page",
}
SOURCE = {
    "archive": "pwc-archive (Hugging Face), CC BY-SA 4.0",
    "snapshot": "2025-07-28",
    "licence_url": "https://creativecommons.org/licenses/by-sa/4.0/legalcode",
    "row_kind": "abstracts",
}
CLAIM = (
    "Per-sample execution status on synthesized fixtures; not a correctness claim about the paper. Samples come from "
    "repositories linked to the paper, official or community; repo_kind says which."
)
READ_AT_IS = "when the build read Syntology's graph, not when any sample ran"
REPO_KIND_VOCABULARY = {
    "official": "The archive marks this repository official for the paper",
    "named_in_paper": "The archive records that the paper mentions this repository; it is not marked official",
    "listed": "In the archive's code links for this paper, not marked official and not recorded as mentioned in the paper",
    "found_in_text": "Syntology found this repository in the paper's own text; whether it is the authors' implementation is not asserted",
    "community": "Not in the archive's code links for this paper; a community repository Syntology harvested",
}
PROVENANCE = "external:paperswithcode_snapshot_2025-07-28"

STATUSES = ("ran_honours", "ran", "ran_draft_wrong", "ran_violates", "unverified")
STATUS_WEIGHTS = (0.15, 0.35, 0.08, 0.05, 0.37)
REPO_KINDS = ("official", "named_in_paper", "listed", "found_in_text", "community")
FRAMEWORKS = ("pytorch", "pytorch", "pytorch", "tf", "tf", "jax", "none", "mindspore", "paddle", "mxnet")
LICENCES = ("MIT", "MIT", "MIT", "Apache-2.0", "Apache-2.0", "BSD-3-Clause", "GPL-3.0", "BSD-2-Clause", "CC-BY-4.0")
OLD_ARCHIVES = ("hep-th", "hep-ph", "cond-mat", "astro-ph", "math", "cs", "quant-ph", "gr-qc", "physics", "nlin")

WORDS = (  # noqa: SIM905 - a word list reads better as text
    "learning deep neural network networks model models language transformer attention graph representation "
    "representations training self supervised unsupervised contrastive generative adversarial diffusion policy "
    "reinforcement agent agents robust robustness efficient scalable sparse dense retrieval augmented vision visual "
    "image images video segmentation detection object recognition speech audio text translation machine question "
    "answering reasoning knowledge embedding embeddings latent variational inference bayesian optimization gradient "
    "stochastic convergence federated privacy differential secure benchmark dataset evaluation large small pretrained "
    "fine tuning transfer domain adaptation generalization few shot zero meta continual multimodal cross lingual "
    "semantic syntactic parsing summarization dialogue generation sequence temporal spatial point cloud 3d mesh "
    "rendering neural radiance field implicit physics informed molecular protein drug discovery medical clinical "
    "survival time series forecasting anomaly causal counterfactual fairness explainable interpretable quantization "
    "pruning distillation compression hardware kernel memory long context tokenization mixture experts routing "
    "bert gpt vit resnet lstm gan vae clip llama mamba state space convolutional recurrent hierarchical"
).split()
TITLE_PATTERNS = (
    "{A} {B} for {C} {D}",
    "Towards {A} {B} {C}",
    "{A}: {B} {C} with {D} {E}",
    "On the {A} of {B} {C}",
    "{A} {B} {C} via {D} {E}",
    "Learning {A} {B} from {C} {D}",
    "{A} is All You Need for {B} {C}",
    "Rethinking {A} {B} in {C} {D}",
)
FIRST = (  # noqa: SIM905 - a word list reads better as text
    "Alex Wei Maria Jun Sara Kyunghyun Yoshua Geoffrey Fei Li Ahmed Olga Pierre Hiroshi Priya Carlos Anna Ivan Mei "
    "Tom Lucia Omar Elena David Chen Yuki Noah Leila Marco Sofia Ravi Hannah Jonas Aisha Kenji Laura Diego Nina"
).split()
LAST = (  # noqa: SIM905 - a word list reads better as text
    "Wang Cho Smith Garcia Zhang Li Chen Kumar Nguyen Müller Rossi Tanaka Kim Lee Ivanov Dubois Silva Novak Cohen "
    "Brown Martin Lopez Singh Sato Park Yang Huang Patel Schmidt Moreau Costa Haddad Okafor Jensen Kowalski Horvath"
).split()
TASKS = [
    (w.lower().replace(" ", "-"), w)
    for w in (
        "Language Modeling",
        "Language Modelling",
        "Image Classification",
        "Object Detection",
        "Semantic Segmentation",
        "Question Answering",
        "Machine Translation",
        "Text Generation",
        "Speech Recognition",
        "Node Classification",
        "Link Prediction",
        "Image Generation",
        "Reinforcement Learning",
        "Time Series Forecasting",
        "Anomaly Detection",
        "Text Classification",
        "Named Entity Recognition",
        "Pose Estimation",
        "Depth Estimation",
        "Domain Adaptation",
        "Few-Shot Learning",
        "Representation Learning",
        "Sentiment Analysis",
        "Summarization",
        "Visual Question Answering",
        "Drug Discovery",
        "Protein Structure Prediction",
        "Recommendation Systems",
        "Graph Classification",
        "Denoising",
    )
]
METHODS = [
    (w.lower().replace(" ", "-"), w)
    for w in (
        "Adam",
        "Attention",
        "Attention Dropout",
        "BERT",
        "Dense Connections",
        "Dropout",
        "Layer Normalization",
        "Linear Layer",
        "Linear Warmup With Linear Decay",
        "Multi-Head Attention",
        "Residual Connection",
        "Softmax",
        "Weight Decay",
        "WordPiece",
        "Batch Normalization",
        "ReLU",
        "GELU",
        "Convolution",
        "Max Pooling",
        "SGD",
        "Transformer",
        "LSTM",
        "Scaled Dot-Product Attention",
        "Label Smoothing",
        "Cosine Annealing",
        "ResNet",
        "Global Average Pooling",
        "Byte Pair Encoding",
        "Position-Wise Feed-Forward Layer",
        "Absolute Position Encodings",
    )
]
FUNC_VERBS = "compute build apply load parse make get init forward sample encode decode train eval update normalize".split()  # noqa: SIM905
FUNC_NOUNS = "loss mask batch scores logits grid graph features tokens weights config embeddings attention gap".split()  # noqa: SIM905
DIRS = ("src", "lib", "models", "utils", "scripts", "core", "tools")

# id spaces and strides coprime with them, so that distinct serials get distinct ids
_OLD_SPACE = len(OLD_ARCHIVES) * 1000 * 12 * 16
_OLD_STRIDE = 7_919
_NEW_SPACE = 100_000 * 12 * 18
_NEW_STRIDE = 1_000_003


def _title(rng: random.Random) -> str:
    pattern = rng.choice(TITLE_PATTERNS)
    words = {k: rng.choice(WORDS).capitalize() for k in "ABCDE"}
    return pattern.format(**words)


def _slug(title: str, serial: int) -> str:
    base = "".join(c if c.isalnum() else "-" for c in title.lower())
    base = "-".join(part for part in base.split("-") if part)[:60].rstrip("-")
    return f"{base}-{serial}"


def _abstract(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 22))]
        out.append(" ".join(words).capitalize() + ".")
    text = " ".join(out)
    # the archive wraps abstracts at about 70 columns
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > 72:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(lines)


def _author(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _reach(rng: random.Random) -> dict[str, str] | None:
    roll = rng.random()
    if roll < 0.3:
        return None
    if roll < 0.6:
        return {"status": "ok"}
    if roll < 0.95:
        return {"status": "ok", "spdx": rng.choice(LICENCES)}
    return {"status": "gone"}


def _repo_name(rng: random.Random) -> str:
    owner = f"{rng.choice(LAST).lower().replace('ü', 'ue')}{rng.choice(('', '-lab', '-ai', 'dev', '42', '-group'))}{rng.randint(0, 9999)}"
    name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}"
    return f"{owner}/{name}"


def _n_samples(rng: random.Random) -> int:
    roll = rng.random()
    if roll < 0.2:
        return 0
    if roll < 0.9:
        return min(80, max(1, int(rng.expovariate(1 / 14))))
    return rng.randint(30, 80)


def _sample(rng: random.Random, sha: str, repo: str, kind: str, compact: bool) -> dict[str, Any]:
    restricted = rng.random() < 0.2
    status = rng.choices(STATUSES, STATUS_WEIGHTS)[0]
    if compact:
        path = f"{rng.choice(DIRS)}/{rng.choice(FUNC_NOUNS)}.py"
    else:
        path = f"{rng.choice(DIRS)}/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{rng.choice(FUNC_NOUNS)}.py"
    contract = {
        "ran_honours": "HONOURS",
        "ran_violates": "VIOLATES",
        "ran_draft_wrong": "OUTPUT_MISDECLARED",
    }.get(status)
    return {
        "code_sha256_prefix": sha,
        "entry": f"{rng.choice(FUNC_VERBS)}_{rng.choice(FUNC_NOUNS)}",
        "repo": repo,
        "repo_kind": kind,
        "path": path,
        "file_url": f"https://github.com/{repo}/blob/HEAD/{path}",
        "link_basis": rng.choice(("plan_row", "first_harvest_node", "harvester_set", "harvester_set")),
        "language": "python",
        "status": status,
        "verification_level": 0 if status == "unverified" else 1,
        "contract_check": contract,
        "metamorphic_tier": rng.choice((None, None, "deterministic", "well_formed")) if status != "unverified" else None,
        "behaviour_fingerprint": status != "unverified" and rng.random() < 0.3,
        "licence": "NONE" if restricted else rng.choice(LICENCES),
        "inline_ok": not restricted,
        "mcp_get_code": {"code_sha256": sha},
    }


def _record(rng: random.Random, serial: int, seed: int) -> dict[str, Any]:
    title = _title(rng)
    slug = _slug(title, serial)
    id_roll = rng.random()
    arxiv_id: str | None
    if id_roll < 0.04:
        arxiv_id = None
        year, month = rng.randint(2010, 2025), rng.randint(1, 12)
    elif id_roll < 0.07:
        # old-style: a bijection from the serial onto (archive, year 1991-2006, month, 3-digit number)
        k = (serial * _OLD_STRIDE) % _OLD_SPACE
        archive = OLD_ARCHIVES[k % len(OLD_ARCHIVES)]
        k //= len(OLD_ARCHIVES)
        number, k = k % 1000, k // 1000
        month, year = k % 12 + 1, 1991 + k // 12
        arxiv_id = f"{archive}/{year % 100:02d}{month:02d}{number:03d}"
    else:
        # new-style: a bijection from the serial onto (year 2008-2025, month, 5-digit number)
        k = (serial * _NEW_STRIDE) % _NEW_SPACE
        number, k = k % 100_000, k // 100_000
        month, year = k % 12 + 1, 2008 + k // 12
        arxiv_id = f"{year % 100:02d}{month:02d}.{number:05d}"
    date = f"{year}-{month:02d}-{rng.randint(1, 28):02d}"
    version = rng.randint(1, 4)
    if arxiv_id is not None:
        url_abs = f"http://arxiv.org/abs/{arxiv_id}v{version}"
        url_pdf = f"http://arxiv.org/pdf/{arxiv_id}v{version}.pdf"
    else:
        url_abs = f"https://openreview.net/forum?id={serial:x}{seed}"
        url_pdf = f"https://openreview.net/pdf?id={serial:x}{seed}"

    if rng.random() < 0.005:
        n_authors = rng.randint(150, 900)
    else:
        n_authors = rng.randint(1, 12)
    authors = [_author(rng) for _ in range(n_authors)]

    n_samples = _n_samples(rng)
    # big harvests leave less room for the rest so that records stay under 40 KB
    roomy = n_samples < 40
    abstract = _abstract(rng, rng.randint(4, 12) if roomy else rng.randint(3, 5))

    n_links = min(rng.randint(0, 4) + (rng.randint(0, 30) if rng.random() < 0.15 else 0), 35 if roomy else 6)
    official_links = 1 if n_links and rng.random() < 0.6 else 0
    repos = [_repo_name(rng) for _ in range(max(n_links, 1))]
    code_links = [
        {
            "paper_slug": slug,
            "repo_url": f"https://github.com/{repos[i]}",
            "is_official": 1 if i < official_links else 0,
            "mentioned_in_paper": 1 if i < official_links or rng.random() < 0.1 else 0,
            "mentioned_in_github": rng.choice((0, 1)),
            "framework": rng.choice(FRAMEWORKS),
            "reach": _reach(rng),
        }
        for i in range(n_links)
    ]
    tasks = [{"task_slug": s, "task_name": t} for s, t in rng.sample(TASKS, rng.randint(0, 4))]
    methods = [{"method_slug": s, "method_name": m} for s, m in rng.sample(METHODS, rng.randint(0, 18 if roomy else 6))]

    record: dict[str, Any] = {
        "about": ABOUT,
        "url": f"/paper/{slug}",
        "title": title,
        "arxiv_id": arxiv_id,
        "date": date,
        "proceeding": rng.choice((None, None, f"NeurIPS {year}", f"ICML {year} {rng.randint(1, 12)}", f"WS {year} 6")),
        "authors": authors,
        "abstract": abstract,
        "url_abs": url_abs,
        "url_pdf": url_pdf,
        "source": SOURCE,
        "code_links": code_links,
        "tasks": tasks,
        "methods": methods,
        "datasets_introduced": [],
        "methods_introduced": [],
        "results": [],
        "syntology": _syntology(
            rng,
            serial,
            seed,
            arxiv_id=arxiv_id,
            slug=slug,
            n_samples=n_samples,
            repos=repos,
            official_links=official_links,
            n_links=n_links,
        ),
        "arxiv_metadata": None,
        "syntology_extracted_results": None,
    }
    return _fit(rng, record)


def _fit(rng: random.Random, record: dict[str, Any]) -> dict[str, Any]:
    """Keep the compact JSON between MIN_BYTES and MAX_BYTES: pad the abstract, or trim methods, links and samples."""
    size = len(orjson.dumps(record))
    while size < MIN_BYTES:
        record["abstract"] += "\n" + _abstract(rng, 2)
        size = len(orjson.dumps(record))
    if size <= MAX_BYTES:
        return record
    record["methods"] = record["methods"][:4]
    record["abstract"] = record["abstract"][:600]
    syntology = record["syntology"]
    size = len(orjson.dumps(record))
    if syntology and size > MAX_BYTES:
        samples = syntology["samples"]
        per_sample = len(orjson.dumps(samples)) / max(len(samples), 1)
        excess = size - MAX_BYTES
        keep = max(0, len(samples) - int(excess / per_sample) - 1)
        if len(record["authors"]) > 100:
            keep = len(samples)  # the many-authors records may go over: they are what stresses the loader
        syntology["samples"] = samples = samples[:keep]
        syntology.update(_aggregates(samples))
    return record


def _syntology(
    rng: random.Random,
    serial: int,
    seed: int,
    *,
    arxiv_id: str | None,
    slug: str,
    n_samples: int,
    repos: list[str],
    official_links: int,
    n_links: int,
) -> dict[str, Any] | None:
    if n_samples == 0 and rng.random() < 0.5:
        return None
    key = arxiv_id or slug
    # pick the repositories the samples come from, with their kind
    harvested: list[tuple[str, str]] = []
    for i in range(min(len(repos), rng.randint(1, 4))):
        if i < official_links:
            kind = "official"
        elif i < n_links:
            kind = rng.choice(("listed", "listed", "named_in_paper"))
        else:
            kind = rng.choice(("found_in_text", "community"))
        harvested.append((repos[i], kind))
    if rng.random() < 0.2:
        harvested.append((_repo_name(rng), rng.choice(("found_in_text", "community"))))
    samples = []
    for j in range(n_samples):
        repo, kind = harvested[min(int(rng.expovariate(1.0)), len(harvested) - 1)]
        sha = hashlib.sha256(f"{seed}:{serial}:{j}".encode()).hexdigest()[:16]
        samples.append(_sample(rng, sha, repo, kind, compact=n_samples >= 40))

    return {
        "syntology_url": f"https://syntology.ai/paper/{key}",
        "atlas_url": f"https://app.syntology.ai/?focus={key}",
        "mcp": {"get_harvested_code_for_paper": {"arxiv_id": key}},
        "developers": "https://syntology.ai/developers",
        "read_at": f"2026-{rng.randint(1, 9):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
        f"{rng.randint(0, 59):02d}+00:00",
        "read_at_is": READ_AT_IS,
        "claim": CLAIM,
        "repos": [
            {"provenance": PROVENANCE, "url": f"https://github.com/{repo}", "reach": _reach(rng)}
            for repo in (repos[:n_links] + [r for r, _ in harvested if r not in repos[:n_links]])
        ],
        **_aggregates(samples),
        "repo_kind_vocabulary": REPO_KIND_VOCABULARY,
        "samples": samples,
    }


def _aggregates(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """`summary`, `by_repo_kind` and `n_pointer_only_for_licence`, derived from the samples as the real records are."""
    summary: dict[str, int] = {}
    by_kind: dict[str, dict[str, Any]] = {}
    kind_repos: dict[str, set[str]] = {}
    for s in samples:
        summary[s["status"]] = summary.get(s["status"], 0) + 1
        entry = by_kind.setdefault(s["repo_kind"], {"samples": 0, "ran": 0, "repositories": 0})
        entry["samples"] += 1
        if s["status"].startswith("ran"):
            entry["ran"] += 1
        kind_repos.setdefault(s["repo_kind"], set()).add(s["repo"])
    for kind, entry in by_kind.items():
        entry["repositories"] = len(kind_repos[kind])

    return {"summary": summary, "by_repo_kind": by_kind, "n_pointer_only_for_licence": sum(1 for s in samples if not s["inline_ok"])}


def generate_records(n: int, seed: int = 0) -> Iterator[dict[str, Any]]:
    """Yield `n` records in the real schema; the same `(n, seed)` always yields the same records.

    Record `i` depends only on `(seed, i)`, so the first k records of a bigger corpus are the k-record corpus.
    """
    for serial in range(n):
        rng = random.Random(f"{seed}:{serial}")
        yield _record(rng, serial, seed)


def write_corpus(directory: Path, n: int, seed: int = 0, layout: str = "files") -> Path:
    """Write `n` generated records under `directory` and return it.

    `files`: `shard_NNN/NNNNNNN.json`, 1,000 files a shard; `jsonl`: `bundle_NNN.jsonl` of at most 10,000 lines;
    `jsonl.gz`: the same bundles gzipped.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    records = generate_records(n, seed)
    if layout == "files":
        shard_dir: Path | None = None
        for i, record in enumerate(records):
            if i % FILES_PER_SHARD == 0:
                shard_dir = directory / f"shard_{i // FILES_PER_SHARD:03d}"
                shard_dir.mkdir(exist_ok=True)
            assert shard_dir is not None
            (shard_dir / f"{i:07d}.json").write_bytes(orjson.dumps(record))
        return directory
    bundle: list[bytes] = []
    index = 0

    def flush() -> None:
        nonlocal bundle, index
        if not bundle:
            return
        data = b"".join(bundle)
        if layout == "jsonl.gz":
            (directory / f"bundle_{index:03d}.jsonl.gz").write_bytes(gzip.compress(data, compresslevel=6, mtime=0))
        else:
            (directory / f"bundle_{index:03d}.jsonl").write_bytes(data)
        bundle = []
        index += 1

    for record in records:
        bundle.append(orjson.dumps(record) + b"\n")
        if len(bundle) >= BUNDLE_LINES:
            flush()
    flush()
    return directory


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=int, required=True, help="number of records")
    parser.add_argument("--out", type=Path, required=True, help="directory to write into (outside the git tree)")
    parser.add_argument("--layout", choices=LAYOUTS, default="files")
    parser.add_argument("--seed", type=int, default=0)


def main(args: argparse.Namespace) -> int:
    out = write_corpus(args.out, args.n, seed=args.seed, layout=args.layout)
    print(f"wrote {args.n} records to {out} ({args.layout})", file=sys.stderr)
    return 0
