"""A synthetic Papers-with-Code archive in the real shape, deterministic by seed (issue #15's benchmark input).

`write_archive(out, papers, links, seed=…, forms=…)` writes the two tables `papercode archive build` reads, in either or
both of the forms people have (the Hugging Face mirror of the archive, and the original dumps):

* `parquet`: the Hugging Face mirror's layout, `papers-with-abstracts/data/train-0000i-of-00004.parquet` (four files,
  rows split evenly, in order) and `links-between-paper-and-code/data/train-00000-of-00001.parquet`; snappy, row
  groups of 1,000 rows (what `datasets` writes by default; assumed, not read from the mirror's metadata);
* `json.gz`: the original dumps, `papers-with-abstracts.json.gz` and `links-between-papers-and-code.json.gz`, one
  compact JSON array each, gzip level 6 (no name or time in the header, so the bytes depend on the seed only).

Both forms hold the same rows in the same order. The papers table has the archive's 18 columns, `methods` a list of
`{name, full_name, description, introduced_year, source_url, source_title, code_snippet_url, main_collection: {name,
description, parent, area}}` drawn (Zipf) from a catalogue of a few thousand methods whose descriptions are the
bulk of the bytes, repeated per paper. Proportions:

* about 15 % of papers list methods: a tenth of all papers a bundle of 3-30 that come together (an architecture and its
  parts, as the real `1902.04094` lists 14 and `2406.04823` 19), the rest a few single ones; 1.1 a paper on average.
  This is calibrated to the mirror's sizes: its four papers files are 580 MB of parquet and (being four shards of
  `datasets`' 500 MB default) 1.5-2 GB in memory, about 3 KB a row; here about 3.3 KB a row, half of it methods;

* about one paper in eight without an arXiv id (about 1 % of the rest old-style, `hep-th/9901001`);
* abstracts about 1,000 characters on average (lognormal, 150-5,000), a few null;
* 1-15 authors mostly, some dozens, about 0.2 % hundreds (up to 900), a few none;
* 0-8 task names (Zipf over a catalogue with near-duplicates such as `Language Modeling` / `Language Modelling`);
* about a third of the papers have code; three in four of those have 1 link, a few famous ones dozens;
* about 2 % of the links name a paper the papers table lacks; the links come in random order;
* about 95 % of repositories on GitHub, the rest on GitLab, the Hugging Face Hub and Bitbucket; some popular
  repositories (frameworks, model zoos) are linked from many papers.

Rows are generated and written in batches (`BATCH` papers), so memory stays flat whatever the size; the gzip and
parquet encoders run in a writer thread beside the generator (both release the GIL).
"""

from __future__ import annotations

import argparse
import bisect
import functools
import gzip
import itertools
import math
import random
import re
import string
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from .archive_boards import REAL, BoardSizes, BoardStats, board_files, format_board_stats, papers_of, write_boards

__all__ = [
    "DATE_TYPES",
    "FORMS",
    "LINKS_DUMP",
    "LINKS_PARQUET",
    "LINK_COLUMNS",
    "METHOD_FIELDS",
    "PAPERS_DUMP",
    "PAPERS_PARQUET",
    "PAPER_COLUMNS",
    "ArchiveStats",
    "archive_files",
    "write_archive",
]

FORMS = ("parquet", "json.gz")
DATE_TYPES = ("string", "date", "timestamp", "float-ms")  # the forms `date` takes in parquet copies (archive.md)
PAPER_COLUMNS = (
    "paper_url",
    "arxiv_id",
    "nips_id",
    "openreview_id",
    "title",
    "abstract",
    "short_abstract",
    "url_abs",
    "url_pdf",
    "proceeding",
    "authors",
    "tasks",
    "date",
    "conference_url_abs",
    "conference_url_pdf",
    "conference",
    "reproduces_paper",
    "methods",
)
METHOD_FIELDS = (
    "name",
    "full_name",
    "description",
    "introduced_year",
    "source_url",
    "source_title",
    "code_snippet_url",
    "main_collection",
)
COLLECTION_FIELDS = ("name", "description", "parent", "area")
LINK_COLUMNS = (
    "paper_url",
    "paper_title",
    "paper_arxiv_id",
    "paper_url_abs",
    "paper_url_pdf",
    "repo_url",
    "is_official",
    "mentioned_in_paper",
    "mentioned_in_github",
    "framework",
)
PAPER_SHARDS = 4
PAPERS_PARQUET = tuple(f"papers-with-abstracts/data/train-{i:05d}-of-{PAPER_SHARDS:05d}.parquet" for i in range(PAPER_SHARDS))
LINKS_PARQUET = "links-between-paper-and-code/data/train-00000-of-00001.parquet"
PAPERS_DUMP = "papers-with-abstracts.json.gz"
LINKS_DUMP = "links-between-papers-and-code.json.gz"

BATCH = 5_000  # papers generated, converted and written at a time
ROW_GROUP = 1_000
GZIP_LEVEL = 6
NO_ARXIV_SHARE = 1 / 8
CODE_SHARE = 1 / 3
ORPHAN_LINK_SHARE = 0.02
DEFAULT_METHODS = 3_000
METHODLESS_SHARE = 0.85
BUNDLE_SHARE = 0.10
PAPER_URL = "https://paperswithcode.com/paper/"

AREAS = (
    "General",
    "Computer Vision",
    "Natural Language Processing",
    "Reinforcement Learning",
    "Audio",
    "Graphs",
    "Sequential",
)
# The head of the method catalogue: the methods most papers list, with the archive's `name` / `full_name`.
HEAD_METHODS = (
    ("Adam", "Adam"),
    ("Dropout", "Dropout"),
    ("Softmax", "Softmax"),
    ("ReLU", "Rectified Linear Units"),
    ("Residual Connection", "Residual Connection"),
    ("Convolution", "Convolution"),
    ("Batch Normalization", "Batch Normalization"),
    ("Linear Layer", "Linear Layer"),
    ("Layer Normalization", "Layer Normalization"),
    ("Attention Dropout", "Attention Dropout"),
    ("Multi-Head Attention", "Multi-Head Attention"),
    ("Scaled Dot-Product Attention", "Scaled Dot-Product Attention"),
    ("Dense Connections", "Dense Connections"),
    ("GELU", "Gaussian Error Linear Units"),
    ("Weight Decay", "Weight Decay"),
    ("Transformer", "Transformer"),
    ("BPE", "Byte Pair Encoding"),
    ("Label Smoothing", "Label Smoothing"),
    ("Position-Wise Feed-Forward Layer", "Position-Wise Feed-Forward Layer"),
    ("Absolute Position Encodings", "Absolute Position Encodings"),
    ("SGD", "Stochastic Gradient Descent"),
    ("Max Pooling", "Max Pooling"),
    ("Global Average Pooling", "Global Average Pooling"),
    ("ResNet", "Residual Network"),
    ("1x1 Convolution", "1x1 Convolution"),
    ("Bottleneck Residual Block", "Bottleneck Residual Block"),
    ("Kaiming Initialization", "Kaiming Initialization"),
    ("LSTM", "Long Short-Term Memory"),
    ("BERT", "BERT"),
    ("WordPiece", "WordPiece"),
    ("Linear Warmup With Linear Decay", "Linear Warmup With Linear Decay"),
    ("Cosine Annealing", "Cosine Annealing"),
    ("GAN", "Generative Adversarial Network"),
    ("Sigmoid Activation", "Sigmoid Activation"),
    ("Tanh Activation", "Tanh Activation"),
    ("CNN", "Convolutional Neural Networks"),
    ("VAE", "Variational Autoencoder"),
    ("Diffusion", "Diffusion"),
    ("ViT", "Vision Transformer"),
    ("CLIP", "Contrastive Language-Image Pre-training"),
)
HEAD_TASKS = (
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
    "Reinforcement Learning (RL)",
    "Time Series Forecasting",
    "Anomaly Detection",
    "Text Classification",
    "Named Entity Recognition",
    "Named Entity Recognition (NER)",
    "Pose Estimation",
    "Depth Estimation",
    "Domain Adaptation",
    "Few-Shot Learning",
    "In-Context Learning",
    "Representation Learning",
    "Sentiment Analysis",
    "Decoder",
    "Denoising",
)
FRAMEWORKS = ("pytorch", "tf", "none", "jax", "mindspore", "paddle", "mxnet", "caffe2", "torch")
FRAMEWORK_WEIGHTS = (52, 20, 17, 3, 3, 2, 1.5, 0.5, 1)
POPULAR_REPOS = (
    "https://github.com/huggingface/transformers",
    "https://github.com/open-mmlab/mmdetection",
    "https://github.com/rwightman/pytorch-image-models",
    "https://github.com/facebookresearch/detectron2",
    "https://github.com/tensorflow/models",
    "https://github.com/pytorch/fairseq",
    "https://github.com/open-mmlab/mmsegmentation",
    "https://github.com/PaddlePaddle/PaddleNLP",
    "https://github.com/mindspore-ai/models",
    "https://github.com/google-research/google-research",
    "https://github.com/huggingface/diffusers",
    "https://github.com/osmr/imgclsmob",
)
SEED_WORDS = (  # noqa: SIM905 - a word list reads better as text
    "the of and a to in we is for that on with this our by are as an from be which can model learning method "
    "results data network performance show propose approach these it training using task neural based paper models "
    "deep new two problem such has set than use proposed both state art methods also information different large "
    "through its while existing work however improve framework attention graph representation representations self "
    "supervised unsupervised contrastive generative adversarial diffusion policy reinforcement agent robust efficient "
    "scalable sparse dense retrieval augmented vision visual image images video segmentation detection object "
    "recognition speech audio text translation machine question answering reasoning knowledge embedding latent "
    "variational inference bayesian optimization gradient stochastic convergence federated privacy benchmark dataset "
    "evaluation pretrained fine tuning transfer domain adaptation generalization few shot zero meta continual "
    "multimodal cross lingual semantic parsing summarization dialogue generation sequence temporal spatial point cloud "
    "mesh rendering radiance field implicit physics molecular protein drug medical clinical forecasting anomaly causal "
    "fairness explainable quantization pruning distillation compression hardware memory context tokenization experts"
).split()
SYLLABLES = (  # noqa: SIM905
    "ka ro mi ten sor vel an ic al ing tion ra lo ne mu ti ver gen struct form ex pro trans con dis re inter "
    "multi poly graph net lin ar or ur ent ive ous ist ize ate ment ness ity ual"
).split()
FIRST_SEED = (  # noqa: SIM905
    "Alex Wei Maria Jun Sara Kyunghyun Yoshua Geoffrey Fei Li Ahmed Olga Pierre Hiroshi Priya Carlos Anna Ivan Mei "
    "Tom Lucia Omar Elena David Chen Yuki Noah Leila Marco Sofia Ravi Hannah Jonas Aisha Kenji Laura Diego Nina"
).split()
LAST_SEED = (  # noqa: SIM905
    "Wang Cho Smith Garcia Zhang Li Chen Kumar Nguyen Müller Rossi Tanaka Kim Lee Ivanov Dubois Silva Novak Cohen "
    "Brown Martin Lopez Singh Sato Park Yang Huang Patel Schmidt Moreau Costa Haddad Okafor Jensen Kowalski Horvath"
).split()
VENUES = (
    ("NeurIPS", "neurips", 12),
    ("ICML", "icml", 7),
    ("ICLR", "iclr", 5),
    ("CVPR", "cvpr", 6),
    ("ICCV", "iccv", 10),
    ("ECCV", "eccv", 9),
    ("ACL", "acl", 7),
    ("EMNLP", "emnlp", 11),
    ("NAACL", "naacl", 6),
    ("AAAI", "aaai", 2),
    ("IJCAI", "ijcai", 8),
    ("WS", "ws", 6),
)
OLD_ARCHIVES = ("hep-th", "hep-ph", "cond-mat", "astro-ph", "math", "cs", "quant-ph", "gr-qc", "physics", "nlin")


@dataclass
class ArchiveStats:
    """What `write_archive` wrote: counts that check the proportions, and every file with its size."""

    papers: int = 0
    papers_without_arxiv: int = 0
    papers_with_code: int = 0
    links: int = 0
    orphan_links: int = 0
    orphan_papers: int = 0
    max_links_per_paper: int = 0
    links_per_paper: Counter[int] = field(default_factory=Counter)
    repo_hosts: Counter[str] = field(default_factory=Counter)
    method_entries: int = 0
    abstract_chars: int = 0
    authors_max: int = 0
    files: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    boards: BoardStats | None = None


# -- text ----------------------------------------------------------------------------------


def _zipf_cum(n: int, exponent: float = 1.0, offset: float = 2.7) -> list[float]:
    return list(itertools.accumulate(1.0 / (rank + offset) ** exponent for rank in range(n)))


class _Text:
    """Word, sentence, name and title pools, built once per seed; drawing from them is a few C calls."""

    def __init__(self, rng: random.Random, vocabulary: int = 6_000, sentences: int = 60_000) -> None:
        words = list(dict.fromkeys(SEED_WORDS))
        seen = set(words)
        while len(words) < vocabulary:
            word = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 2, 3, 3, 4))))
            if word not in seen:
                seen.add(word)
                words.append(word)
        self.words = words
        self.word_cum = _zipf_cum(len(words))
        self.sentences: list[str] = []
        for _ in range(sentences):
            picked = rng.choices(words, cum_weights=self.word_cum, k=rng.randint(8, 30))
            sentence = " ".join(picked)
            if rng.random() < 0.15:  # a little notation, as abstracts and method descriptions have
                sentence += f" ({rng.choice(string.ascii_uppercase)}{rng.randint(1, 99)} = {rng.random():.3f})"
            self.sentences.append(sentence[0].upper() + sentence[1:] + ".")
        self.first = FIRST_SEED + [self._name(rng) for _ in range(1_500)]
        self.last = LAST_SEED + [self._name(rng) for _ in range(6_000)]
        self.first_cum = _zipf_cum(len(self.first), 0.8)
        self.last_cum = _zipf_cum(len(self.last), 0.8)

    def _name(self, rng: random.Random) -> str:
        return "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 2, 3)))).capitalize()

    def paragraph(self, rng: random.Random, chars: int) -> str:
        """Sentences from the pool until at least `chars` characters."""
        out: list[str] = []
        total = 0
        pool = self.sentences
        while total < chars:
            sentence = pool[int(rng.random() * len(pool))]
            out.append(sentence)
            total += len(sentence) + 1
        return " ".join(out)

    def title(self, rng: random.Random) -> str:
        words = rng.choices(self.words, cum_weights=self.word_cum, k=rng.randint(4, 12))
        title = " ".join(w.capitalize() if len(w) > 3 else w for w in words)
        title = title[0].upper() + title[1:]
        if rng.random() < 0.35:  # "Name: what it does"
            head = "".join(w.capitalize() for w in rng.sample(self.words[100:], rng.randint(1, 2)))
            title = f"{head[:14]}: {title}"
        return title

    def authors(self, rng: random.Random) -> list[str]:
        roll = rng.random()
        if roll < 0.005:
            n = 0
        elif roll < 0.007:
            n = rng.randint(150, 900)  # collaborations
        elif roll < 0.04:
            n = rng.randint(16, 60)
        else:
            n = min(15, 1 + int(rng.expovariate(1 / 4.0)))
        firsts = rng.choices(self.first, cum_weights=self.first_cum, k=n)
        lasts = rng.choices(self.last, cum_weights=self.last_cum, k=n)
        return [f"{first} {last}" for first, last in zip(firsts, lasts, strict=True)]


_NOT_ALNUM = re.compile(r"[\W_]+")


def _slugify(text: str, limit: int = 120) -> str:
    """Lower case, runs of other characters turned into `-` (archive.md's rule for slugs)."""
    return _NOT_ALNUM.sub("-", text.lower()).strip("-")[:limit].rstrip("-") or "paper"


# -- catalogues ----------------------------------------------------------------------------


def _markdown(rng: random.Random, text: _Text, chars: int) -> str:
    """A method description: paragraphs with some LaTeX and an image, as the archive's method pages have."""
    parts: list[str] = []
    remaining = chars
    while remaining > 0:
        size = min(remaining, rng.randint(200, 900))
        parts.append(text.paragraph(rng, size))
        remaining -= size + 2
        if remaining > 120 and rng.random() < 0.4:
            sym = rng.choice(("x", "h", "W", "\\theta", "\\mathbf{y}", "z_{t}"))
            formula = f"$$ {sym} = \\sigma\\left(W_{{{rng.randint(1, 9)}}}{sym} + b\\right) $$"
            parts.append(formula)
            remaining -= len(formula) + 2
        if remaining > 120 and rng.random() < 0.15:
            image = f"![](https://production-media.paperswithcode.com/methods/{rng.getrandbits(64):016x}.png)"
            parts.append(image)
            remaining -= len(image) + 2
    return "\n\n".join(parts)


def _lognormal_chars(rng: random.Random, median: float, sigma: float, low: int, high: int) -> int:
    return max(low, min(high, int(rng.lognormvariate(math.log(median), sigma))))


def _collections(rng: random.Random, text: _Text, n: int = 300) -> list[dict[str, Any] | None]:
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < n:
        name = " ".join(w.capitalize() for w in rng.sample(text.words[60:2_000], rng.randint(1, 3)))
        name = rng.choice(("", "", "Attention ", "Convolutional ", "Graph ")) + name + rng.choice(("s", " Methods", " Layers", ""))
        if name not in seen:
            seen.add(name)
            names.append(name)
    out: list[dict[str, Any] | None] = []
    for i, name in enumerate(names):
        out.append(
            {
                "name": name,
                "description": text.paragraph(rng, _lognormal_chars(rng, 250, 0.7, 20, 2_000)),
                "parent": names[rng.randrange(i)] if i and rng.random() < 0.5 else None,
                "area": rng.choice(AREAS),
            }
        )
    return out


def _methods(rng: random.Random, text: _Text, n: int) -> list[dict[str, Any]]:
    collections = _collections(rng, text)
    names = list(HEAD_METHODS)
    seen = {name for name, _ in names}
    while len(names) < n:
        words = [w.capitalize() for w in rng.sample(text.words[60:], rng.randint(1, 4))]
        full_name = " ".join(words)
        if rng.random() < 0.4:
            name = "".join(w[0] for w in words).upper() + rng.choice(("", "", "Net", "-GAN", "++", "v2", "Former"))
        else:
            name = full_name
        if name in seen:
            continue
        seen.add(name)
        names.append((name, full_name))
    methods = []
    for rank, (name, full_name) in enumerate(names):
        # the head is what most rows repeat: keep its lengths in the range of the real head (Adam's is about 1,000)
        chars = _lognormal_chars(rng, 650, 0.35, 250, 1_600) if rank < 100 else _lognormal_chars(rng, 650, 0.8, 40, 12_000)
        arxiv = f"{rng.randint(12, 24):02d}{rng.randint(1, 12):02d}.{rng.randint(0, 99_999):05d}"
        owner, repo = rng.choice(text.last).lower(), rng.choice(text.words[60:])
        methods.append(
            {
                "name": name,
                "full_name": full_name,
                "description": _markdown(rng, text, chars),
                "introduced_year": None if rng.random() < 0.1 else min(2024, 2025 - int(rng.expovariate(1 / 8))),
                "source_url": None if rng.random() < 0.2 else f"http://arxiv.org/abs/{arxiv}v{rng.randint(1, 5)}",
                "source_title": None if rng.random() < 0.2 else text.title(rng),
                "code_snippet_url": None
                if rng.random() < 0.4
                else f"https://github.com/{owner}/{repo}/blob/{rng.getrandbits(160):040x}/{repo}/{rng.choice(('model', 'layers', 'nn', 'ops'))}.py#L{(line := rng.randint(1, 900))}-L{line + rng.randint(5, 80)}",
                "main_collection": None if rng.random() < 0.05 else collections[min(int(rng.expovariate(1 / 40)), len(collections) - 1)],
            }
        )
    return methods


def _tasks(rng: random.Random, text: _Text, n: int = 2_500) -> list[str]:
    tasks = list(HEAD_TASKS)
    seen = set(tasks)
    while len(tasks) < n:
        task = " ".join(w.capitalize() for w in rng.sample(text.words[60:3_000], rng.randint(1, 4)))
        if rng.random() < 0.05:
            task += rng.choice((" (RL)", "-Shot", " 3D", " Estimation"))
        if task not in seen:
            seen.add(task)
            tasks.append(task)
    return tasks


# -- rows ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=2)
def _text_pools(seed: int) -> tuple[_Text, tuple[Any, ...]]:
    """The seed's text pools (read only once built), and the state of its stream after them: building the pools takes
    most of the time of a small archive, and another archive of the same seed in this process draws the same ones."""
    rng = random.Random(f"archive:{seed}")
    return _Text(rng), rng.getstate()


class _Papers:
    """Paper rows in order, from one seeded stream; also the identities that link rows copy."""

    def __init__(self, seed: int, n_methods: int) -> None:
        self.text, state = _text_pools(seed)
        self.rng = random.Random()
        self.rng.setstate(state)
        self.methods = _methods(self.rng, self.text, n_methods)
        self.method_cum = _zipf_cum(len(self.methods), 1.05, 1.5)
        self.bundles = self._bundles()
        self.tasks = _tasks(self.rng, self.text)
        self.task_cum = _zipf_cum(len(self.tasks), 1.0, 3.0)
        self.slugs: set[str] = set()
        self.slug_list: list[str] = []
        self.arxiv_ids: set[str] = set()
        self.serial = 0

    def _bundles(self, n: int = 250) -> list[list[dict[str, Any]]]:
        """Method sets that come together (an architecture and its parts, as `BERT` brings `Multi-Head Attention`,
        `GELU`, `Layer Normalization`, ...), drawn mostly from the head of the catalogue."""
        rng = self.rng
        head = self.methods[:400]
        head_cum = _zipf_cum(len(head), 1.0, 1.5)
        return [
            list({id(m): m for m in rng.choices(head, cum_weights=head_cum, k=min(30, 3 + int(rng.expovariate(1 / 8))))}.values())
            for _ in range(n)
        ]

    def _paper_methods(self) -> list[dict[str, Any]]:
        """No methods for most papers; else a bundle and a few single methods (a tenth of papers), or single methods."""
        rng = self.rng
        roll = rng.random()
        if roll < METHODLESS_SHARE:
            return []
        picked: list[dict[str, Any]] = []
        if roll < METHODLESS_SHARE + BUNDLE_SHARE:
            picked += self.bundles[min(int(rng.expovariate(1 / 30)), len(self.bundles) - 1)]
        n_single = int(rng.expovariate(1 / 1.2)) + (roll >= METHODLESS_SHARE + BUNDLE_SHARE)
        picked += rng.choices(self.methods, cum_weights=self.method_cum, k=n_single)
        return list({id(m): m for m in picked}.values())

    def _slug(self, title: str) -> str:
        base = _slugify(title)
        slug, k = base, 0
        while slug in self.slugs:  # the archive's own rule: a repeated title gets -1, -2, ...
            k += 1
            slug = f"{base}-{k}"
        self.slugs.add(slug)
        self.slug_list.append(slug)
        return slug

    def _arxiv(self, year: int, month: int) -> str:
        rng = self.rng
        while True:
            if rng.random() < 0.01 or year < 2007:
                arxiv_id = f"{rng.choice(OLD_ARCHIVES)}/{year % 100:02d}{month:02d}{rng.randint(1, 999):03d}"
            elif year < 2015:
                arxiv_id = f"{year % 100:02d}{month:02d}.{rng.randint(1, 9_999):04d}"
            else:
                arxiv_id = f"{year % 100:02d}{month:02d}.{rng.randint(1, 99_999):05d}"
            if arxiv_id not in self.arxiv_ids:
                self.arxiv_ids.add(arxiv_id)
                return arxiv_id

    def identity(self) -> tuple[str, str, str | None, str | None, str | None, int, int]:
        """(paper_url, title, arxiv_id, url_abs, url_pdf, year, month) of the next paper."""
        rng = self.rng
        self.serial += 1
        title = self.text.title(rng)
        slug = self._slug(title)
        year = min(2025, 2026 - int(rng.expovariate(1 / 4.5))) if rng.random() < 0.97 else rng.randint(1991, 2012)
        month = rng.randint(1, 12 if year < 2025 else 7)
        url_abs: str | None
        url_pdf: str | None
        if rng.random() < NO_ARXIV_SHARE:
            arxiv_id = None
            roll = rng.random()
            if roll < 0.5:
                url_abs = f"https://openreview.net/forum?id={rng.getrandbits(48):012x}"
                url_pdf = url_abs.replace("/forum?", "/pdf?")
            elif roll < 0.9:
                url_abs = f"https://aclanthology.org/{year}.{rng.choice(('acl', 'emnlp', 'naacl', 'coling'))}-main.{rng.randint(1, 900)}"
                url_pdf = url_abs + ".pdf"
            else:
                url_abs, url_pdf = None, None
        else:
            arxiv_id = self._arxiv(year, month)
            version = 1 + int(rng.expovariate(1.2))
            scheme = "https" if year >= 2023 else "http"  # as in the two real records (2019: http, 2024: https)
            url_abs = f"{scheme}://arxiv.org/abs/{arxiv_id}v{version}"
            url_pdf = f"{scheme}://arxiv.org/pdf/{arxiv_id}v{version}.pdf"
        return PAPER_URL + slug, title, arxiv_id, url_abs, url_pdf, year, month

    def row(self) -> dict[str, Any]:
        rng = self.rng
        text = self.text
        paper_url, title, arxiv_id, url_abs, url_pdf, year, month = self.identity()
        abstract: str | None = None if rng.random() < 0.005 else text.paragraph(rng, _lognormal_chars(rng, 930, 0.38, 150, 5_000) - 70)
        proceeding = conference = conference_url_abs = conference_url_pdf = nips_id = openreview_id = None
        if rng.random() < 0.3:
            venue, venue_slug, venue_month = VENUES[int(rng.expovariate(1 / 3)) % len(VENUES)]
            proceeding = f"{venue} {year} {venue_month}"
            if rng.random() < 0.5:
                conference = f"{venue_slug}-{year}-{venue_month}"
            if venue == "NeurIPS":
                nips_id = f"{rng.getrandbits(128):032x}"
                conference_url_abs = f"http://papers.nips.cc/paper/{rng.randint(1_000, 9_999)}-{paper_url.rsplit('/', 1)[1][:60]}"
                conference_url_pdf = conference_url_abs + ".pdf"
            elif venue in ("ICLR", "ICML") or rng.random() < 0.3:
                openreview_id = "".join(rng.choices(string.ascii_letters + string.digits, k=10))
                conference_url_abs = f"https://openreview.net/forum?id={openreview_id}"
                conference_url_pdf = f"https://openreview.net/pdf?id={openreview_id}"
            elif rng.random() < 0.6:
                conference_url_abs = f"https://aclanthology.org/{year}.{venue_slug}-{rng.randint(1, 900)}"
                conference_url_pdf = conference_url_abs + ".pdf"
        n_tasks = 0 if rng.random() < 0.08 else min(8, 1 + int(rng.expovariate(1 / 1.6)))
        tasks = list(dict.fromkeys(rng.choices(self.tasks, cum_weights=self.task_cum, k=n_tasks)))
        methods = self._paper_methods()
        return {
            "paper_url": paper_url,
            "arxiv_id": arxiv_id,
            "nips_id": nips_id,
            "openreview_id": openreview_id,
            "title": title,
            "abstract": abstract,
            "short_abstract": None if abstract is None or rng.random() < 0.5 else abstract[:280].rsplit(" ", 1)[0] + " ...",
            "url_abs": url_abs,
            "url_pdf": url_pdf,
            "proceeding": proceeding,
            "authors": text.authors(rng),
            "tasks": tasks,
            "date": None if rng.random() < 0.003 else f"{year}-{month:02d}-{rng.randint(1, 28):02d}",
            "conference_url_abs": conference_url_abs,
            "conference_url_pdf": conference_url_pdf,
            "conference": conference,
            "reproduces_paper": PAPER_URL + rng.choice(self.slug_list) if rng.random() < 0.0005 else None,
            "methods": methods,
        }


def _repo_url(rng: random.Random, text: _Text) -> str:
    roll = rng.random()
    if roll < 0.05:
        return rng.choice(POPULAR_REPOS)
    owner = f"{rng.choice(text.last).lower()}{rng.choice(('', '', '-lab', '-ai', 'dev', '-group'))}{rng.randint(0, 99) if rng.random() < 0.3 else ''}"
    name = "-".join(rng.sample(text.words[60:3_000], rng.randint(1, 3)))
    if roll < 0.95:
        return f"https://github.com/{owner}/{name}"
    if roll < 0.975:
        return f"https://gitlab.com/{owner}/{name}"
    if roll < 0.993:
        return f"https://huggingface.co/{owner}/{name}"
    return f"https://bitbucket.org/{owner}/{name}"


def _link_counts(rng: random.Random, n_papers: int, n_links: int) -> tuple[list[int], list[int]]:
    """(papers with code, in order; their link counts), about a third of the papers, counts summing to `n_links`.

    Every paper with code has one link; the rest are spread by weight: lognormal (capped) for most papers, so that
    about three in four have one link, and 100-500 for one in 500 (the famous papers), which get dozens."""
    n_code = min(max(1, round(n_papers * CODE_SHARE)), n_links, n_papers)
    with_code = sorted(rng.sample(range(n_papers), n_code))
    counts = [1] * n_code
    extra = n_links - n_code
    if n_code and extra:
        weights = list(
            itertools.accumulate(
                rng.uniform(100, 500) if rng.random() < 0.002 else min(rng.lognormvariate(0, 1.6), 40.0) for _ in range(n_code)
            )
        )
        total = weights[-1]
        for _ in range(extra):
            counts[bisect.bisect(weights, rng.random() * total)] += 1
    return with_code, counts


_Identity = tuple[str, str, str | None, str | None, str | None]  # (paper_url, title, arxiv_id, url_abs, url_pdf) of a paper


def _link_rows(
    rng: random.Random,
    text: _Text,
    identities: Sequence[_Identity],
    counts: Sequence[int],
) -> Iterator[dict[str, Any]]:
    """Every link, in random order: the first link of a paper is official about half the time."""
    order = [(i, rank) for i, count in enumerate(counts) for rank in range(count)]
    rng.shuffle(order)
    frameworks = list(FRAMEWORKS)
    framework_cum = list(itertools.accumulate(FRAMEWORK_WEIGHTS))
    for i, rank in order:
        paper_url, title, arxiv_id, url_abs, url_pdf = identities[i]
        official = rng.random() < (0.55 if rank == 0 else 0.04)
        yield {
            "paper_url": paper_url,
            "paper_title": title,
            "paper_arxiv_id": arxiv_id,
            "paper_url_abs": url_abs,
            "paper_url_pdf": url_pdf,
            "repo_url": _repo_url(rng, text),
            "is_official": official,
            "mentioned_in_paper": rng.random() < (0.8 if official else 0.06),
            "mentioned_in_github": rng.random() < (0.6 if official else 0.25),
            "framework": rng.choices(frameworks, cum_weights=framework_cum)[0],
        }


# -- writers -------------------------------------------------------------------------------


class _JsonArray:
    """A gzipped JSON array written a batch of rows at a time: `[`, rows joined by `,`, `]`."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed in close()
        self._gz = gzip.GzipFile(filename="", mode="wb", fileobj=self._file, compresslevel=GZIP_LEVEL, mtime=0)
        self._gz.write(b"[")
        self._first = True

    def encode(self, rows: Sequence[dict[str, Any]]) -> bytes:
        blob = b",".join(map(orjson.dumps, rows))
        if rows and not self._first:
            blob = b"," + blob
        self._first = self._first and not rows
        return blob

    def write(self, blob: bytes) -> None:
        self._gz.write(blob)

    def close(self) -> None:
        self._gz.write(b"]")
        self._gz.close()
        self._file.close()


def _schemas(date_type: str) -> tuple[Any, Any]:
    import pyarrow as pa

    collection = pa.struct([(name, pa.string()) for name in COLLECTION_FIELDS])
    method = pa.struct(
        [
            ("name", pa.string()),
            ("full_name", pa.string()),
            ("description", pa.string()),
            ("introduced_year", pa.int64()),
            ("source_url", pa.string()),
            ("source_title", pa.string()),
            ("code_snippet_url", pa.string()),
            ("main_collection", collection),
        ]
    )
    date = {"string": pa.string(), "date": pa.date32(), "timestamp": pa.timestamp("ms"), "float-ms": pa.float64()}[date_type]
    types = {"authors": pa.list_(pa.string()), "tasks": pa.list_(pa.string()), "methods": pa.list_(method), "date": date}
    papers = pa.schema([(name, types.get(name, pa.string())) for name in PAPER_COLUMNS])
    links = pa.schema([(name, pa.bool_() if name.startswith(("is_", "mentioned_")) else pa.string()) for name in LINK_COLUMNS])
    return papers, links


def _parquet_table(rows: Sequence[dict[str, Any]], schema: Any, date_type: str) -> Any:
    import pyarrow as pa

    if date_type == "string" or "date" not in schema.names:
        return pa.Table.from_pylist(rows, schema=schema)
    import pyarrow.compute as pc

    # convert from the strings, as a copy made through another tool would hold them
    table = pa.Table.from_pylist(rows, schema=schema.set(schema.get_field_index("date"), pa.field("date", pa.string())))
    dates = table.column("date")
    if date_type == "date":
        converted = dates.cast(pa.date32())
    else:
        converted = dates.cast(pa.timestamp("ms"))
        if date_type == "float-ms":
            converted = pc.cast(converted.cast(pa.int64()), pa.float64())
    return table.set_column(table.schema.get_field_index("date"), "date", converted)


class _Sink:
    """One table's outputs (parquet files and/or a json.gz dump); encoding and compression run in one writer thread,
    one batch behind the generator."""

    def __init__(
        self, out: Path, forms: Sequence[str], *, parquet: Sequence[str], dump: str, schema: Any, date_type: str, pool: ThreadPoolExecutor
    ) -> None:
        """The table's `parquet` files and its `dump`, each if `forms` has its form."""
        self.out, self.schema, self.date_type, self.pool = out, schema, date_type, pool
        self.parquet = parquet if "parquet" in forms else ()
        self.json = _JsonArray(out / dump) if "json.gz" in forms else None
        self.writer: Any = None
        self.shard = -1
        self.pending: Future[None] | None = None

    def _parquet_writer(self, shard: int) -> Any:
        import pyarrow.parquet as pq

        if self.writer is not None:
            self.writer.close()
        path = self.out / self.parquet[shard]
        path.parent.mkdir(parents=True, exist_ok=True)
        self.shard = shard
        return pq.ParquetWriter(path, self.schema, compression="snappy")

    def write(self, rows: Sequence[dict[str, Any]], shard: int = 0) -> None:
        blob = self.json.encode(rows) if self.json else b""
        table = _parquet_table(rows, self.schema, self.date_type) if self.parquet else None
        self.wait()

        def job() -> None:
            if self.json:
                self.json.write(blob)
            if table is not None:
                while self.shard < shard:  # a file with no rows is still written, as a shard of an empty split
                    self.writer = self._parquet_writer(self.shard + 1)
                self.writer.write_table(table, row_group_size=ROW_GROUP)

        self.pending = self.pool.submit(job)

    def wait(self) -> None:
        if self.pending is not None:
            self.pending.result()
            self.pending = None

    def close(self) -> None:
        self.wait()
        if self.parquet and self.shard < len(self.parquet) - 1:  # fewer rows than files: the rest hold no rows
            for shard in range(self.shard + 1, len(self.parquet)):
                self.writer = self._parquet_writer(shard)
        if self.writer is not None:
            self.writer.close()
        if self.json:
            self.json.close()


# -- entry point ---------------------------------------------------------------------------


def archive_files(forms: Iterable[str], boards: bool = False) -> list[str]:
    """The paths, relative to the archive directory, that `write_archive` writes for these forms (`boards`: with the
    leaderboards' tables)."""
    files: list[str] = []
    forms = list(forms)
    for form in forms:
        files += [*PAPERS_PARQUET, LINKS_PARQUET] if form == "parquet" else [PAPERS_DUMP, LINKS_DUMP]
    return files + (board_files(forms) if boards else [])


def write_archive(
    out: Path,
    papers: int,
    links: int,
    *,
    seed: int = 0,
    forms: Sequence[str] = FORMS,
    methods: int = DEFAULT_METHODS,
    date_type: str = "string",
    progress: Callable[[str], None] | None = None,
    boards: BoardSizes | None = None,
) -> ArchiveStats:
    """Write a synthetic archive of `papers` paper rows and `links` link rows under `out`, in `forms`; with `boards`,
    its leaderboards' tables of those sizes too (`archive_boards`), their results naming these papers.

    The same arguments give the same rows (and, with the same pyarrow and zlib, the same bytes)."""
    _check_arguments(papers, links, forms, date_type)
    started = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stats = ArchiveStats(papers=papers, links=links)
    source = _Papers(seed, methods)
    paper_schema, link_schema = _schemas(date_type) if "parquet" in forms else (None, None)
    orphan_links = _orphan_links(papers, links)
    with_code, counts = _link_counts(random.Random(f"links:{seed}"), papers, links - orphan_links)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="archive-writer") as pool:
        sink = _Sink(out, forms, parquet=PAPERS_PARQUET, dump=PAPERS_DUMP, schema=paper_schema, date_type=date_type, pool=pool)
        identities, on_boards = _write_papers(sink, source, stats, with_code=with_code, boards=boards, seed=seed, progress=progress)

        # links naming papers the table lacks: papers drawn by the same rules, never written
        orphan_counts = _orphan_counts(source.rng, orphan_links)
        identities += [source.identity()[:5] for _ in orphan_counts]
        all_counts = counts + orphan_counts
        stats.papers_with_code = len(with_code)
        stats.orphan_links = sum(orphan_counts)
        stats.orphan_papers = len(orphan_counts)
        stats.links_per_paper = Counter(counts)
        stats.max_links_per_paper = max(all_counts, default=0)

        sink = _Sink(out, forms, parquet=(LINKS_PARQUET,), dump=LINKS_DUMP, schema=link_schema, date_type=date_type, pool=pool)
        link_rows = _link_rows(random.Random(f"link-rows:{seed}"), source.text, identities, all_counts)
        while batch := list(itertools.islice(link_rows, BATCH * 2)):
            stats.repo_hosts.update(row["repo_url"].split("/", 3)[2] for row in batch)
            sink.write(batch)
        sink.close()
    written = sum(all_counts)
    if written != links:  # the counts are built to sum to `links`; a bug here would skew every ratio quietly
        raise AssertionError(f"wrote {written} links, not {links}")
    if boards is not None:
        stats.boards = write_boards(out, forms, seed=seed, papers=on_boards, words=source.text.words[60:3_000], sizes=boards)
    stats.files = {name: (out / name).stat().st_size for name in archive_files(forms, boards is not None)}
    stats.seconds = time.perf_counter() - started
    return stats


def _check_arguments(papers: int, links: int, forms: Sequence[str], date_type: str) -> None:
    unknown = set(forms) - set(FORMS)
    if unknown or not forms:
        raise ValueError(f"forms must be some of {', '.join(FORMS)}, not {', '.join(sorted(unknown)) or 'none'}")
    if date_type not in DATE_TYPES:
        raise ValueError(f"date_type must be one of {', '.join(DATE_TYPES)}, not {date_type!r}")
    if papers < 0 or links < 0:
        raise ValueError("papers and links must be >= 0")


def _orphan_links(papers: int, links: int) -> int:
    """How many of the `links` name a paper the papers table lacks."""
    if papers == 0:
        return links  # no paper to link to
    return max(1, round(links * ORPHAN_LINK_SHARE)) if links > 1 and ORPHAN_LINK_SHARE else 0


def _orphan_counts(rng: random.Random, orphan_links: int) -> list[int]:
    """The links of each paper the table lacks, `orphan_links` in all."""
    counts: list[int] = []
    left = orphan_links
    while left > 0:
        counts.append(min(left, 1 + int(rng.expovariate(1.5))))
        left -= counts[-1]
    return counts


def _write_papers(
    sink: _Sink,
    source: _Papers,
    stats: ArchiveStats,
    *,
    with_code: Sequence[int],
    boards: BoardSizes | None,
    seed: int,
    progress: Callable[[str], None] | None,
) -> tuple[list[_Identity], list[tuple[str, str, str | None]]]:
    """Write the papers table (`source`'s rows, in batches, split evenly across its files), counting them in `stats`.
    Returns the identities the link rows copy, of the papers `with_code` in its order, and those of the papers the
    leaderboards' results name."""
    code_at = dict(zip(with_code, range(len(with_code)), strict=True))
    identities: list[_Identity] = [("", "", None, None, None)] * len(with_code)
    # the papers results name: a sample (its own stream: the papers' rows stay those of an archive without boards)
    on_boards: list[tuple[str, str, str | None]] = []
    board_share, board_pick = (
        (min(1.0, 2 * boards.results / max(stats.papers, 1)) if boards else 0.0),
        random.Random(f"board-papers:{seed}"),
    )
    bounds = [stats.papers * k // PAPER_SHARDS for k in range(PAPER_SHARDS + 1)]
    batch: list[dict[str, Any]] = []
    shard = 0
    for i in range(stats.papers):
        while i >= bounds[shard + 1]:
            if batch:
                sink.write(batch, shard)
                batch = []
            shard += 1
        row = source.row()
        batch.append(row)
        stats.papers_without_arxiv += row["arxiv_id"] is None
        stats.method_entries += len(row["methods"])
        stats.abstract_chars += len(row["abstract"] or "")
        stats.authors_max = max(stats.authors_max, len(row["authors"]))
        if board_share and board_pick.random() < board_share:
            on_boards.append((row["paper_url"], row["title"], row["arxiv_id"]))
        at = code_at.get(i)
        if at is not None:
            identities[at] = (row["paper_url"], row["title"], row["arxiv_id"], row["url_abs"], row["url_pdf"])
        if len(batch) >= BATCH:
            sink.write(batch, shard)
            batch = []
            if progress:
                progress(f"{i + 1:,} papers")
    if batch:
        sink.write(batch, shard)
    sink.close()
    return identities, on_boards


def format_stats(stats: ArchiveStats) -> str:
    """What was written, and the proportions it has."""
    mib = 2**20
    lines = [
        f"papers {stats.papers:,}: {stats.papers_without_arxiv:,} without an arXiv id"
        f" ({stats.papers_without_arxiv / max(stats.papers, 1):.1%}), {stats.papers_with_code:,} with code"
        f" ({stats.papers_with_code / max(stats.papers, 1):.1%}), abstracts {stats.abstract_chars / max(stats.papers, 1):,.0f} chars"
        f" on average, {stats.method_entries / max(stats.papers, 1):.2f} methods a paper, at most {stats.authors_max:,} authors",
        f"links {stats.links:,}: {stats.orphan_links:,} name {stats.orphan_papers:,} papers absent from the papers table"
        f" ({stats.orphan_links / max(stats.links, 1):.1%}); links a paper with code: 1 for"
        f" {stats.links_per_paper.get(1, 0) / max(stats.papers_with_code, 1):.0%}, at most {stats.max_links_per_paper}",
        "repository hosts: " + ", ".join(f"{host} {n / max(stats.links, 1):.1%}" for host, n in stats.repo_hosts.most_common()),
    ]
    for name, size in stats.files.items():
        lines.append(f"  {size / mib:10,.1f} MiB  {name}")
    groups: dict[str, int] = Counter()
    for name, size in stats.files.items():
        groups["papers parquet" if name.startswith("papers-") and name.endswith(".parquet") else name] += size
    if "papers parquet" in groups:
        lines.append(f"  {groups['papers parquet'] / mib:10,.1f} MiB  papers parquet, 4 files together")
    if stats.boards is not None:
        lines.append(format_board_stats(stats.boards))
    lines.append(f"written in {stats.seconds:.1f} s")
    return "\n".join(lines)


# -- command lines -------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`generate-archive`: a whole archive."""
    parser.add_argument("--papers", type=int, required=True, help="rows of the papers table (the real one: 576,261)")
    parser.add_argument("--links", type=int, required=True, help="rows of the links table (the real one: 300,161)")
    parser.add_argument("--out", type=Path, required=True, help="directory to write into (outside the git tree)")
    parser.add_argument("--forms", default="parquet,json.gz", help="comma-separated: parquet, json.gz (default both)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", type=int, default=DEFAULT_METHODS, help=f"distinct methods (default {DEFAULT_METHODS:,})")
    parser.add_argument("--date-type", choices=DATE_TYPES, default="string", help="type of `date` in parquet (default string)")
    parser.add_argument(
        "--no-boards",
        action="store_true",
        help="without the leaderboards' tables (evaluation-tables, methods, datasets; by default the real sizes)",
    )


def main(args: argparse.Namespace) -> int:
    print(f"# writing {args.papers:,} papers and {args.links:,} links ({args.forms}) to {args.out}", file=sys.stderr, flush=True)
    stats = write_archive(
        args.out,
        args.papers,
        args.links,
        seed=args.seed,
        forms=_forms(args.forms),
        methods=args.methods,
        date_type=args.date_type,
        boards=None if args.no_boards else REAL,
    )
    print(format_stats(stats))
    return 0


def add_board_arguments(parser: argparse.ArgumentParser) -> None:
    """`generate-boards`: the leaderboards' tables for an archive written without them."""
    parser.add_argument("--papers-from", type=Path, required=True, help="the generated archive (its papers parquet)")
    parser.add_argument("--out", type=Path, required=True, help="directory to write into (outside the git tree)")
    parser.add_argument("--forms", default="parquet,json.gz")
    parser.add_argument("--seed", type=int, default=0)


def generate_boards(args: argparse.Namespace) -> int:
    stats = write_boards(
        out=args.out, forms=_forms(args.forms), seed=args.seed, papers=papers_of(args.papers_from), words=SEED_WORDS, sizes=REAL
    )
    print(format_board_stats(stats))
    return 0


def _forms(given: str) -> list[str]:
    return [form.strip() for form in given.split(",")]
