"""Leaderboard metrics: their values as people typed them, and which way is better.

`parse_value` reads the number out of a value as it was entered (`88.5`, `88.5%`, `1.2M`, `12.3 ± 0.4`, `1,024`);
a value it cannot read (`-`, `n/a`, a word) is None: answers show it as given and rank it last.

`lower_is_better` is the one table of metric names whose smaller values are better (errors, losses, distances,
times...): every other metric is ranked higher-is-better. A name matches when one of its words, or a run of its
words, is in the table; case, punctuation and parentheses do not matter (`Top-1 Error Rate`, `FID (50k)`,
`Inference Time (ms)`, `bits/dim`).
"""

from __future__ import annotations

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
        # ranks (a smaller rank is better)
        "mean rank",
        "median rank",
        "medr",
        "meanr",
    }
)
_LONGEST: Final = max(len(entry.split()) for entry in LOWER_IS_BETTER)
_WORDS = re.compile(r"[a-z0-9]+")

# A number as typed: a sign, digits (thousands separated by commas, or not), a fraction, an exponent; then an
# optional magnitude (k, M, B, G, T) and percent sign; then nothing, or something that does not continue the number
# (an uncertainty `± 0.4`, `+/- 0.4`, `(0.4)`, a unit after a space, a footnote mark `*` or `†`).
_NUMBER = re.compile(
    r"\s*(?P<sign>[-+\u2212]?)\s*"
    r"(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d*)?|\d+(?:\.\d*)?|\.\d+)"
    r"(?:[eE](?P<exponent>[-+]?\d{1,3}))?"
    r"\s*(?P<magnitude>[kKMBGT](?![a-zA-Z]))?"
    r"\s*%?"
    r"(?P<rest>(?:[\s(\[*\u2020\u2021\u00b1/,;]|\+/?-).*)?",
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


def lower_is_better(name: str) -> bool:
    """Whether smaller values of the metric `name` are better (`LOWER_IS_BETTER`); higher is better otherwise."""
    words = _WORDS.findall(name.lower())
    for size in range(1, _LONGEST + 1):
        for start in range(len(words) - size + 1):
            if " ".join(words[start : start + size]) in LOWER_IS_BETTER:
                return True
    return False


def direction_text(lower: bool) -> str:
    """How an answer says which way a metric is better."""
    return "lower is better" if lower else "higher is better"
