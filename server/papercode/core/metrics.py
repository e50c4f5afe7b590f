"""Leaderboard metrics: their values as people typed them, and which way is better.

`parse_value` reads the number out of a value as it was entered (`88.5`, `88.5%`, `1.2M`, `12.3 ± 0.4`, `1,024`);
a value it cannot read (`-`, `n/a`, a word) is None: answers show it as given and rank it last.

`lower_is_better` decides which way a metric is better from its name, by the one table of words here: a server asks
it when it answers (never a build), so a change to the table ranks every build right without a rebuild. A name is
read up to its condition (`TPR@FPR=1%`, `FPR at 95% TPR`: what follows `@` or the word `at` says where it was
measured, not what). Higher is better when a word or run of words of `HIGHER_IS_BETTER` is in it (a reduction, a
speedup, a throughput, a rate free of something: `Error reduction (%)`, `Latency speedup`, `Error-free rate`); else
lower is better when one of `LOWER_IS_BETTER` is (errors, losses, distances, times, costs, average ranks, false
positive and collision rates, memory), or its unit is a time or a size (`Speed (ms)`, `(GB)`); higher otherwise.
Case, punctuation and parentheses do not matter (`Top-1 Error Rate`, `FID (50k)`, `Inference Time (ms)`, `bits/dim`).
"""

from __future__ import annotations

import functools
import math
import re
from typing import Final

# Whole words (or runs of words) that make a metric lower-is-better, as lower-case words.
LOWER_IS_BETTER: Final = frozenset(
    {
        # errors and losses
        "error",
        "errors",
        "err",
        "loss",
        "nll",
        "perplexity",
        "ppl",
        "mae",
        "mse",
        "rmse",
        "rmsle",
        "mape",
        "smape",
        "wer",
        "cer",
        "ter",
        "eer",
        "hter",
        "epe",
        "ate",
        "rpe",
        "abs rel",
        "sq rel",
        "miss rate",
        # generative quality as a distance between distributions
        "fid",
        "kid",
        "fvd",
        "lpips",
        # bits per unit
        "bpd",
        "bpc",
        "bits per dim",
        "bits per dimension",
        "bits per char",
        "bits per character",
        "bits dim",
        "bits char",
        # distances
        "distance",
        "chamfer",
        "hausdorff",
        "emd",
        # costs
        "latency",
        "time",
        "runtime",
        "params",
        "parameters",
        "flops",
        "gflops",
        "macs",
        "model size",
        "memory",
        # ranks (a smaller rank is better; `Rank-1` alone is an accuracy)
        "mean rank",
        "median rank",
        "average rank",
        "avg rank",
        "average ranking",
        "medr",
        "meanr",
        # how often it goes wrong
        "fpr",
        "fpr95",
        "false positive rate",
        "false positives",
        "false negative rate",
        "fnr",
        "false alarm rate",
        "collision",
        "collisions",
        "collision rate",
    }
)
# Whole words (or runs of words) that make a metric higher-is-better whatever else it names: how much of a cost was
# saved (`Error reduction`, `Latency speedup`, `Speedup over runtime`), work per time (`Throughput (images/time)`), or
# how often something bad did not happen (`Error-free rate`).
HIGHER_IS_BETTER: Final = frozenset({"reduction", "speedup", "speed up", "throughput", "free", "improvement", "gain"})
_LONGEST: Final = max(len(entry.split()) for entry in LOWER_IS_BETTER | HIGHER_IS_BETTER)
_WORDS = re.compile(r"[a-z0-9]+")
_CONDITION = re.compile(r"@|\bat\b", re.IGNORECASE)  # what follows says where a metric was measured (`TPR@FPR=1%`)
# A unit of time or size, alone in parentheses or per something (`(ms)`, `(ms/image)`, `(GB)`): not `(MS-COCO)`.
_COST_UNIT = re.compile(
    r"\(\s*(?:ms|msec|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|kb|mb|gb|tb|kib|mib|gib|bytes)\s*(?:[/)]|per\b)",
    re.IGNORECASE,
)

# A number as typed: a sign, digits (thousands separated by commas, or not), a fraction, an exponent; then an
# optional magnitude (k, M, B, G, T) and percent sign; then nothing, or something that does not continue the number
# (an uncertainty `± 0.4`, `+/- 0.4`, `(0.4)`, a unit after a space, a footnote mark `*` or `†`). Digits are 0-9 and
# white space is the class below, spelled out because Python's `\s` and `\d` differ from JavaScript's: the leaderboard
# view reads values by this rule too (edge/apps/leaderboard.js, held to it by tests/product/test_app_views.py).
_SPACE = r"\s\x1c-\x1f\x85\ufeff"
_NUMBER = re.compile(
    rf"[{_SPACE}]*(?P<sign>[-+\u2212]?)[{_SPACE}]*"
    r"(?P<digits>[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?|[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:[eE](?P<exponent>[-+]?[0-9]{1,3}))?"
    rf"[{_SPACE}]*(?P<magnitude>[kKMBGT](?![a-zA-Z]))?"
    rf"[{_SPACE}]*%?"
    rf"(?P<rest>(?:[{_SPACE}(\[*\u2020\u2021\u00b1/,;]|\+/?-).*)?",
    re.DOTALL,
)
_MAGNITUDE: Final = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}
MAX_VALUE_CHARS: Final = 64  # a value longer than this is not a number someone typed into a table


def parse_value(value: object) -> float | None:
    """The number a metric value holds, or None (not reported, or not a number)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        number = float(value)
        return number if math.isfinite(number) else None
    if not isinstance(value, str) or len(value) > MAX_VALUE_CHARS:
        return None
    found = _NUMBER.fullmatch(value)
    if found is None:
        return None
    number = float(found["digits"].replace(",", "") + (f"e{found['exponent']}" if found["exponent"] else ""))
    if found["magnitude"]:
        number *= _MAGNITUDE[found["magnitude"]]
    if found["sign"] in ("-", "\u2212"):
        number = -number
    return number if math.isfinite(number) else None


@functools.lru_cache(maxsize=1 << 14)  # every answer of a board asks it of a few names
def lower_is_better(name: str) -> bool:
    """Whether smaller values of the metric `name` are better (see the module's docstring); higher is better otherwise."""
    measured = _CONDITION.split(name, maxsplit=1)[0]
    if not _WORDS.search(measured.lower()):  # nothing before its condition: the name as a whole
        measured = name
    words = _WORDS.findall(measured.lower())
    if _names_one_of(words, HIGHER_IS_BETTER):
        return False
    return _names_one_of(words, LOWER_IS_BETTER) or _COST_UNIT.search(measured) is not None


def _names_one_of(words: list[str], table: frozenset[str]) -> bool:
    """Whether one of `words`, or a run of them, is in `table`."""
    for size in range(1, _LONGEST + 1):
        for start in range(len(words) - size + 1):
            if " ".join(words[start : start + size]) in table:
                return True
    return False


def direction_text(lower: bool) -> str:
    """How an answer says which way a metric is better."""
    return "lower is better" if lower else "higher is better"
