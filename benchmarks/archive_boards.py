"""The synthetic archive's leaderboards: evaluation tables, methods and datasets in the real shapes and sizes (issue #23).

`write_boards(out, forms, seed=, papers=, words=, sizes=)` writes, beside the papers and links `archive_data.write_archive` wrote:

* `parquet`: `evaluation-tables/data/train-0000i-of-00004.parquet` (the top-level tasks split in four, each file's
  nested types inferred from its rows as a JSON-to-parquet conversion does: a result's `metrics` is one struct with
  a field for every metric name in the file, null where the row has none), `methods/data/train-00000-of-00001.parquet`
  and `datasets/data/train-00000-of-00001.parquet`;
* `json.gz`: `evaluation-tables.json.gz`, `methods.json.gz`, `datasets.json.gz`, one array each.

Sizes (`REAL`, from the public copies of the archive): 2,250 top-level tasks and about 2,200 subtasks under them,
nested up to four levels (4,451 in all); 12,000 benchmarks spread over them (most tasks have a few, some hundreds,
many none), a few with subdatasets; 59,860 results, most benchmarks a handful, some thousands; 8,725 methods and
15,008 datasets. Metric names are drawn (Zipf) from a catalogue of a few thousand, the real ones at its head.

A result names its paper as the real rows do: an arXiv abs or pdf URL (most), a Papers-with-Code paper URL, or only a
title (`paper_url` empty); a few name papers the archive lacks. Values are typed as people typed them: `88.5`,
`88.5%`, `88.5 ± 0.3`, `1.2M`, and a few `-` or `n/a`.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

FORMS = ("parquet", "json.gz")
EVALUATION_SHARDS = 4
EVALUATIONS_PARQUET = tuple(f"evaluation-tables/data/train-{i:05d}-of-{EVALUATION_SHARDS:05d}.parquet" for i in range(EVALUATION_SHARDS))
METHODS_PARQUET = "methods/data/train-00000-of-00001.parquet"
DATASETS_PARQUET = "datasets/data/train-00000-of-00001.parquet"
EVALUATIONS_DUMP, METHODS_DUMP, DATASETS_DUMP = "evaluation-tables.json.gz", "methods.json.gz", "datasets.json.gz"
PWC = "https://paperswithcode.com"

HEAD_METRICS = (
    "Accuracy",
    "Top-1 Accuracy",
    "Top-5 Accuracy",
    "F1",
    "Mean IoU",
    "mIoU",
    "mAP",
    "box AP",
    "AP50",
    "AP75",
    "BLEU score",
    "ROUGE-L",
    "FID",
    "Inception score",
    "PSNR",
    "SSIM",
    "EM",
    "Error rate",
    "Test perplexity",
    "Word Error Rate (WER)",
    "MAE",
    "RMSE",
    "Number of params",
    "FPS",
    "Inference Time (ms)",
    "NDCG@10",
    "Recall@1",
    "Hits@10",
    "MRR",
    "AUC",
)
HEAD_DATASETS = (
    "ImageNet",
    "COCO",
    "Cityscapes",
    "CIFAR-10",
    "CIFAR-100",
    "MNIST",
    "SQuAD1.1",
    "GLUE",
    "WikiText-103",
    "Penn Treebank",
    "ADE20K",
    "PASCAL VOC 2012",
    "KITTI",
    "LibriSpeech",
    "WMT2014 English-German",
    "CelebA-HQ",
    "Cora",
    "ogbn-arxiv",
    "Atari 2600 Breakout",
    "MS MARCO",
)
MODALITIES = ("Images", "Texts", "Videos", "Audio", "Graphs", "3D", "Tabular", "Point cloud", "Time series")
AREAS = ("Computer Vision", "Natural Language Processing", "Methodology", "Speech", "Graphs", "Reinforcement Learning", "Medical")


@dataclass(frozen=True)
class BoardSizes:
    """How many of each the leaderboards hold."""

    top_tasks: int = 2_250
    subtasks: int = 2_201
    benchmarks: int = 12_000
    results: int = 59_860
    methods: int = 8_725
    datasets: int = 15_008
    metric_names: int = 6_000


REAL = BoardSizes()


@dataclass
class BoardStats:
    """What `write_boards` wrote."""

    tasks: int = 0
    deepest: int = 0
    benchmarks: int = 0
    results: int = 0
    by_arxiv_url: int = 0
    by_paper_url: int = 0
    by_title: int = 0
    absent_papers: int = 0
    unparsed_values: int = 0
    files: dict[str, int] = field(default_factory=dict)


def board_files(forms: Sequence[str]) -> list[str]:
    files: list[str] = []
    for form in forms:
        files += (
            [*EVALUATIONS_PARQUET, METHODS_PARQUET, DATASETS_PARQUET]
            if form == "parquet"
            else [EVALUATIONS_DUMP, METHODS_DUMP, DATASETS_DUMP]
        )
    return files


def _zipf(n: int, exponent: float = 1.0) -> list[float]:
    return list(itertools.accumulate(1.0 / (rank + 2.7) ** exponent for rank in range(n)))


class _Boards:
    def __init__(self, seed: int, sizes: BoardSizes, papers: Sequence[tuple[str, str, str | None]], words: Sequence[str]) -> None:
        self.rng = random.Random(f"boards:{seed}")
        self.sizes, self.papers, self.words = sizes, papers, list(words)
        rng = self.rng
        self.metrics = list(HEAD_METRICS) + self._names(
            sizes.metric_names - len(HEAD_METRICS), 1, 3, suffixes=("", "@1", "@5", " (%)", " (val)")
        )
        self.metric_cum = _zipf(len(self.metrics), 1.1)
        self.datasets = list(HEAD_DATASETS) + self._names(sizes.datasets - len(HEAD_DATASETS), 1, 3, suffixes=("", "-2", " v2", " 3D", ""))
        self.dataset_cum = _zipf(len(self.datasets), 0.9)
        self.task_names = self._names(sizes.top_tasks + sizes.subtasks, 1, 4, suffixes=("", "", " (RL)", " Detection", " Estimation"))
        self.models = self._names(5_000, 1, 2, suffixes=("", "-L", "-B", "++", " (ours)", "-v2"))
        self.unparsed = 0
        self.joined = {"arxiv": 0, "paper": 0, "title": 0, "absent": 0}
        rng.shuffle(self.task_names)

    def _names(self, n: int, low: int, high: int, suffixes: Sequence[str]) -> list[str]:
        rng, out, seen = self.rng, [], set()
        while len(out) < n:
            name = " ".join(word.capitalize() for word in rng.sample(self.words, rng.randint(low, high))) + rng.choice(suffixes)
            if name not in seen:
                seen.add(name)
                out.append(name)
        return out

    def _text(self, chars: int) -> str:
        rng = self.rng
        return " ".join(rng.choices(self.words, k=max(1, chars // 7))).capitalize() + "."

    # -- evaluation tables ---------------------------------------------------------------------

    def tasks(self) -> tuple[list[dict[str, Any]], BoardStats]:
        """The top-level tasks, each with its subtasks nested, and what they hold."""
        rng, sizes = self.rng, self.sizes
        names = iter(self.task_names)
        entries: list[dict[str, Any]] = [self._task(next(names)) for _ in range(sizes.top_tasks)]
        depth = [1] * len(entries)
        for _ in range(sizes.subtasks):  # under a task drawn towards the first ones, up to four levels
            parent = min(int(rng.expovariate(1 / (len(entries) / 3))), len(entries) - 1)
            while depth[parent] >= 4:
                parent = rng.randrange(sizes.top_tasks)
            child = self._task(next(names))
            entries[parent]["subtasks"].append(child)
            entries.append(child)
            depth.append(depth[parent] + 1)
        weights = list(itertools.accumulate(rng.paretovariate(1.1) if rng.random() < 0.6 else 0.0 for _ in entries))
        per_board = self._row_counts(sizes.benchmarks, sizes.results)
        made = 0
        while made < sizes.benchmarks:
            owner = entries[min(bisect.bisect_right(weights, rng.random() * weights[-1]), len(entries) - 1)]
            board = self._benchmark(per_board[made])
            made += 1
            if made < sizes.benchmarks and rng.random() < 0.02:  # a subdataset
                board["subdatasets"].append(self._benchmark(per_board[made], named=f"{board['dataset']} (subset)"))
                made += 1
            owner["datasets"].append(board)
        stats = BoardStats(
            tasks=len(entries),
            deepest=max(depth),
            benchmarks=sizes.benchmarks,
            results=sum(per_board),
            by_arxiv_url=self.joined["arxiv"],
            by_paper_url=self.joined["paper"],
            by_title=self.joined["title"],
            absent_papers=self.joined["absent"],
            unparsed_values=self.unparsed,
        )
        return entries[: sizes.top_tasks], stats

    def _task(self, name: str) -> dict[str, Any]:
        rng = self.rng
        return {
            "task": name,
            "description": self._text(int(rng.lognormvariate(5.5, 0.6))) if rng.random() < 0.8 else "",
            "categories": [rng.choice(AREAS)],
            "synonyms": [name.lower().replace(" ", "-")] if rng.random() < 0.05 else [],
            "source_link": None,
            "datasets": [],
            "subtasks": [],
        }

    def _row_counts(self, boards: int, results: int) -> list[int]:
        """Rows a benchmark, heavy-tailed, summing to `results` (each at least one)."""
        rng = self.rng
        weights = list(itertools.accumulate(min(rng.paretovariate(0.9), 5_000.0) for _ in range(boards)))
        extra = Counter(bisect.bisect_right(weights, rng.random() * weights[-1]) for _ in range(max(0, results - boards)))
        return [1 + extra[board] for board in range(boards)]

    def _benchmark(self, rows: int, named: str | None = None) -> dict[str, Any]:
        rng = self.rng
        dataset = named or rng.choices(self.datasets, cum_weights=self.dataset_cum)[0] + rng.choice(("", "", "", " test", " val"))
        metrics = list(dict.fromkeys(rng.choices(self.metrics, cum_weights=self.metric_cum, k=1 + int(rng.expovariate(1 / 1.5)))))[:8]
        centres = {metric: rng.uniform(1, 95) for metric in metrics}
        return {
            "dataset": dataset,
            "description": self._text(int(rng.lognormvariate(5.0, 0.7))) if rng.random() < 0.5 else "",
            "dataset_citations": [],
            "dataset_links": [],
            "sota": {"metrics": metrics, "rows": [self._result(centres) for _ in range(rows)]},
            "subdatasets": [],
        }

    def _result(self, centres: dict[str, float]) -> dict[str, Any]:
        rng = self.rng
        url, title, date = self._paper()
        metrics: dict[str, str] = {}
        for metric, centre in centres.items():
            if len(metrics) and rng.random() < 0.2:  # not every row reports every metric
                continue
            metrics[metric] = self._value(metric, centre)
        return {
            "model_name": rng.choice(self.models),
            "metrics": metrics,
            "paper_title": title,
            "paper_url": url,
            "paper_date": date,
            "code_links": [
                {"title": "code", "url": f"https://github.com/{rng.choice(self.words)}/{rng.choice(self.words)}-{rng.randint(1, 99)}"}
                for _ in range(rng.choice((0, 0, 1, 1, 2)))
            ],
            "model_links": [],
            "uses_additional_data": rng.random() < 0.1,
        }

    def _paper(self) -> tuple[str, str, str | None]:
        """(paper_url, paper_title, paper_date) as a row names its paper."""
        rng = self.rng
        year = rng.randint(2012, 2025)
        date = f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}" if rng.random() < 0.97 else None
        roll = rng.random()
        if roll < 0.02 or not self.papers:
            self.joined["absent"] += 1
            return f"https://arxiv.org/abs/2999.{rng.randint(0, 99_999):05d}", self._text(60), date
        paper_url, title, arxiv_id = self.papers[rng.randrange(len(self.papers))]
        if arxiv_id and roll < 0.72:
            self.joined["arxiv"] += 1
            version = rng.randint(1, 4)
            return (
                rng.choice((f"http://arxiv.org/abs/{arxiv_id}v{version}", f"https://arxiv.org/pdf/{arxiv_id}v{version}.pdf")),
                title,
                date,
            )
        if roll < 0.92:
            self.joined["paper"] += 1
            return paper_url, title, date
        self.joined["title"] += 1
        return "", title, date

    def _value(self, metric: str, centre: float) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.03:
            self.unparsed += 1
            return rng.choice(("-", "-", "n/a", "—"))
        value = max(0.0, rng.gauss(centre, centre / 8))
        if "params" in metric.lower():
            return f"{value:.1f}M"
        if roll < 0.35:
            return f"{value:.1f}%"
        if roll < 0.40:
            return f"{value:.1f} ± {rng.uniform(0.1, 1.5):.1f}"
        return f"{value:.2f}"

    # -- methods and datasets --------------------------------------------------------------------

    def methods(self) -> list[dict[str, Any]]:
        rng = self.rng
        names = self._names(self.sizes.methods, 1, 3, suffixes=("", "Net", "-GAN", "++", "Former"))
        return [
            {
                "url": f"{PWC}/method/{name.lower().replace(' ', '-')}",
                "name": name,
                "full_name": name if rng.random() < 0.5 else f"{name} {rng.choice(self.words).capitalize()}",
                "description": self._text(int(rng.lognormvariate(6.3, 0.6))),
                "paper": self._paper_ref() if rng.random() < 0.7 else None,
                "introduced_year": rng.randint(1980, 2025) if rng.random() < 0.9 else None,
                "source_url": None,
                "source_title": None,
                "code_snippet_url": None,
                "num_papers": int(rng.paretovariate(0.8)),
                "collections": [{"collection": rng.choice(self.task_names), "area_id": "general", "area": rng.choice(AREAS)}],
            }
            for name in names
        ]

    def _paper_ref(self) -> dict[str, str]:
        if not self.papers:
            return {"title": self._text(60), "url": ""}
        paper_url, title, _ = self.papers[self.rng.randrange(len(self.papers))]
        return {"title": title, "url": paper_url}

    def datasets_table(self) -> list[dict[str, Any]]:
        rng = self.rng
        return [
            {
                "url": f"{PWC}/dataset/{name.lower().replace(' ', '-')}",
                "name": name,
                "full_name": f"{name} {rng.choice(('Dataset', 'Benchmark', 'Corpus'))}",
                "homepage": f"https://{rng.choice(self.words)}.example.org/{name.lower().replace(' ', '-')}",
                "description": self._text(int(rng.lognormvariate(6.3, 0.6))),
                "paper": self._paper_ref() if rng.random() < 0.5 else None,
                "introduced_date": None,
                "warning": None,
                "modalities": rng.sample(MODALITIES, rng.randint(1, 2)),
                "tasks": [{"task": task, "url": ""} for task in rng.sample(self.task_names, rng.randint(0, 4))],
                "languages": ["English"] if rng.random() < 0.3 else [],
                "variants": [name, f"{name} test", f"{name} val"] if rng.random() < 0.3 else [name],
                "num_papers": int(rng.paretovariate(0.8)),
                "data_loaders": [],
            }
            for name in self.datasets
        ]


def write_boards(
    out: Path,
    forms: Sequence[str],
    *,
    seed: int,
    papers: Sequence[tuple[str, str, str | None]],
    words: Sequence[str],
    sizes: BoardSizes = REAL,
) -> BoardStats:
    """Write the three tables in `forms` under `out`; results name papers among `papers` ((paper_url, title, arXiv id))."""
    boards = _Boards(seed, sizes, papers, words)
    tasks, stats = boards.tasks()
    methods, datasets = boards.methods(), boards.datasets_table()
    for form in forms:
        if form == "json.gz":
            _dump(out / EVALUATIONS_DUMP, tasks)
            _dump(out / METHODS_DUMP, methods)
            _dump(out / DATASETS_DUMP, datasets)
        else:
            bounds = [len(tasks) * k // EVALUATION_SHARDS for k in range(EVALUATION_SHARDS + 1)]
            for shard, path in enumerate(EVALUATIONS_PARQUET):
                _parquet(out / path, tasks[bounds[shard] : bounds[shard + 1]])
            _parquet(out / METHODS_PARQUET, methods)
            _parquet(out / DATASETS_PARQUET, datasets)
    stats.files = {name: (out / name).stat().st_size for name in board_files(forms)}
    return stats


def _dump(path: Path, rows: list[dict[str, Any]]) -> None:
    import gzip

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) as stream:
        stream.write(orjson.dumps(rows))


def _parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path, compression="snappy")


def format_board_stats(stats: BoardStats) -> str:
    mib = 2**20
    lines = [
        f"leaderboards: {stats.tasks:,} tasks (nested {stats.deepest} levels), {stats.benchmarks:,} benchmarks, {stats.results:,} results "
        f"(papers named by arXiv URL {stats.by_arxiv_url:,}, paper URL {stats.by_paper_url:,}, title {stats.by_title:,}, "
        f"absent {stats.absent_papers:,}; {stats.unparsed_values:,} values that do not parse)"
    ]
    groups: dict[str, int] = Counter()
    for name, size in stats.files.items():
        groups[name.split("/", 1)[0] + (" parquet" if name.endswith(".parquet") else "")] += size
    lines += [f"  {size / mib:10,.1f} MiB  {name}" for name, size in groups.items() if name.endswith(" parquet")]
    return "\n".join(lines)


def papers_of(archive: Path, most: int = 2 * REAL.results, seed: int = 0) -> list[tuple[str, str, str | None]]:
    """(paper_url, title, arXiv id) of up to `most` papers of a generated archive's papers table (parquet), drawn at
    random: what `generate-boards` makes results name, for an archive generated without its leaderboards."""
    import pyarrow.parquet as pq

    rng = random.Random(f"board-papers:{seed}")
    found: list[tuple[str, str, str | None]] = []
    for path in sorted((archive / "papers-with-abstracts" / "data").glob("*.parquet")):
        table = pq.read_table(path, columns=["paper_url", "title", "arxiv_id"])
        rows = zip(*(table.column(name).to_pylist() for name in ("paper_url", "title", "arxiv_id")), strict=True)
        found += [row for row in rows if rng.random() < 0.25]
    rng.shuffle(found)
    return found[:most]
