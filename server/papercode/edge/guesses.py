"""The names agents guess: an argument or a tool papercode does not have, answered with the one it most likely meant.

Agents write `q` for `query`, `max_results` for `limit`, `search` for `search_papers`. The SDK drops an argument a
tool does not take without a word, so the call answers something else than was asked; papercode refuses it instead
(`unknown_arguments`, a failed call), and answers a tool it does not have with the nearest tools
(`unknown_tool_message`, made a protocol error by `compat.unknown_tool`). Both name the call to make. The nearest name
comes first from the tables of names agents use (`ARGUMENT_GUESSES`, `TOOL_GUESSES`: edit distance would not find
`q` → `query`), then by edit distance (`core.names.near_by_edits`, by which describe's kinds are guessed too).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

import orjson

from papercode.answers.checks import quote
from papercode.core.names import near_by_edits


def _by_guess(table: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """{papercode's name: the names agents use for it} read the other way: {a name agents use: what it may mean}."""
    meanings: dict[str, tuple[str, ...]] = {}
    for meant, guesses in table.items():
        for guess in guesses.split():
            meanings[guess] = (*meanings.get(guess, ()), meant)
    return meanings


# Each argument of papercode's, with the names agents use for it (`normalised`); a name that may mean several
# arguments means the one the tool takes. `a+b`: both, each given the value (`year` is year_from and year_to).
ARGUMENT_GUESSES = _by_guess(
    {
        "query": "q text keywords keyword terms search search_query query_text author authors title dataset benchmark",
        "arxiv_id": "id paper_id paper_ids ids papers arxiv arxiv_ids paper slug title url",
        "paper": "id paper_id paper_ids ids papers arxiv arxiv_ids arxiv_id slug title url",
        "code_sha256": "id sha sha256 hash hashes code_hash code_sha code codes",
        "name": "id",
        "dataset": "benchmark benchmark_name dataset_name datasets",
        "limit": "max_results top_k k n page_size per_page count num_results size max",
        "year_from+year_to": "year",
        "year_from": "from_year start_year min_year since after",
        "year_to": "to_year end_year max_year until before",
        "order": "sort sort_by sort_order direction",
        "repo": "repo_url repository repository_url github github_url repo_name url",
        "status": "statuses state sample_status",
        "cursor": "page page_token next_cursor next offset",
        "licence": "license licenses spdx",
        "language": "lang programming_language",
        "task": "task_name",
        "method": "method_name model",
        "metric": "metric_name metrics",
        "kind": "type category",
        "repo_kind": "repo_type repository_kind kind",
        "has_code": "with_code code_only has_samples",
        "has_samples": "has_code with_code code_only",
        "official_code": "official official_only",
        "inline_only": "inline inline_ok",
    }
)
# Each tool of papercode's, with the names agents use for it (`normalised`).
TOOL_GUESSES = _by_guess(
    {
        "search_papers": "search search_paper find_papers find_paper papers query",
        "get_paper": "get_papers paper get_paper_details paper_details fetch_paper read_paper",
        "get_harvested_code_for_paper": (
            "get_code_for_paper code_for_paper get_paper_code paper_code get_harvested_code harvested_code get_samples "
            "get_implementations find_code get_code_samples"
        ),
        "list_samples_by_status": "list_samples samples_by_status get_samples_by_status",
        "find_papers_for_repo": "find_repo papers_for_repo get_papers_for_repo find_papers_by_repo repo_papers get_repo",
        "get_code": "code get_sample get_code_sample fetch_code read_code verified_code get_source",
        "corpus_stats": "stats get_stats corpus corpus_info info get_corpus_stats",
        "get_leaderboard": "leaderboard get_leaderboards sota get_sota benchmark get_benchmark get_results",
        "describe": "get_task get_method get_dataset describe_task describe_method describe_dataset explain",
    }
)
MOST_NAMED = 3  # nearest names, at most
MOST_LISTED = 5  # unknown names quoted in one refusal, at most
MOST_GUESSED = 20  # unknown names of one call looked up, at most
VALUE_CHARS = 60  # a value shown in the call to make, cut past this


def normalised(name: str) -> str:
    """A name as agents vary it, made comparable: camelCase and any separator as snake_case, lower case, without a
    host's prefix (`mcp__papercode__search_papers`, `papercode.search`)."""
    last = re.split(r"__|[./:]", name.strip())[-1]
    return re.sub(r"[\s\-]+", "_", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", last)).lower()


def nearest(name: str, names: Sequence[str], guesses: Mapping[str, tuple[str, ...]]) -> list[str]:
    """The names among `names` that `name` most likely meant, nearest first: the table's (an `a+b` entry when both
    are among them), then those a few edits away (`core.names.near_by_edits`); at most `MOST_NAMED`."""
    key = normalised(name)
    found = [guess for guess in guesses.get(key, ()) if all(part in names for part in guess.split("+"))]
    found += [candidate for candidate in near_by_edits(key, names) if candidate not in found]
    return found[:MOST_NAMED]


def _shown(value: object) -> str:
    """A value as JSON in the call to make, cut to `VALUE_CHARS`."""
    try:
        text = orjson.dumps(value).decode()
    except TypeError:  # e.g. a lone surrogate, which only an in-process caller can send
        text = repr(value)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def _quoted(names: Iterable[str]) -> str:
    listed = list(names)
    more = f" and {len(listed) - MOST_LISTED} more" if len(listed) > MOST_LISTED else ""
    return ", ".join(quote(name) for name in listed[:MOST_LISTED]) + more


def renamed(arguments: Mapping[str, object], takes: Sequence[str]) -> tuple[dict[str, object], dict[str, str | None]]:
    """The arguments `takes` does not have, as the tool would read them: each under the nearest name it takes that is
    not given already; and those left without one, each with the name it meant when that is given (else None). Only
    the first `MOST_GUESSED` are guessed at: a call of thousands of names costs no more than one of a few."""
    fixed: dict[str, object] = {}
    left: dict[str, str | None] = {}
    unknown = [(name, value) for name, value in arguments.items() if name not in takes]
    for position, (name, value) in enumerate(unknown):
        meant = next(iter(nearest(name, takes, ARGUMENT_GUESSES)), None) if position < MOST_GUESSED else None
        parts = [] if meant is None else meant.split("+")
        missing = [part for part in parts if part not in arguments and part not in fixed]
        fixed.update(dict.fromkeys(missing, value))
        if not missing:
            left[name] = meant if parts and all(part in arguments for part in parts) else None
    return fixed, left


def unknown_arguments(tool: str, takes: Sequence[str], arguments: Mapping[str, object]) -> str | None:
    """The refusal of a call that gives `tool` arguments it does not take (None when it takes them all): what it takes,
    and the call to make, each argument under the name it most likely meant, or without it."""
    unknown = [name for name in arguments if name not in takes]
    if not unknown:
        return None
    fixed, left = renamed(arguments, takes)
    steps = []
    if fixed:
        steps.append("with " + ", ".join(f"{name}={_shown(value)}" for name, value in fixed.items()))
    if left:
        given = [
            meant.replace("+", " and ") + (" are given" if "+" in meant else " is given") for meant in dict.fromkeys(left.values()) if meant
        ]
        steps.append(f"without {_quoted(left)}" + (f" ({', '.join(given)})" if given else ""))
    plural = "s" if len(unknown) > 1 else ""
    takes_text = ", ".join(takes) if takes else "none"
    return (
        f"invalid_argument: {tool} takes no argument{plural} {_quoted(unknown)} (it takes {takes_text}). "
        f"Next: call again {' and '.join(steps)}."
    )


def unknown_tool_message(name: str, arguments: Mapping[str, object], tools: Mapping[str, Sequence[str]]) -> str:
    """What a call to a tool papercode does not have is told: the nearest tools and the call to make (its arguments
    under the names that tool takes), or every tool when none is near."""
    near = nearest(name, list(tools), TOOL_GUESSES)
    if not near:
        return f"not_found: unknown tool {quote(name)}; papercode's tools: {', '.join(tools)}. Next: call the one that fits (tools/list describes each)."
    meant = near[0]
    kept = {key: value for key, value in arguments.items() if key in tools[meant]}
    fixed, _ = renamed(arguments, tools[meant])
    call = ", ".join(f"{key}={_shown(value)}" for key, value in (kept | fixed).items())
    making = f"{meant}({call})" if call or not tools[meant] else f"{meant} (it takes {', '.join(tools[meant])})"
    return f"not_found: unknown tool {quote(name)}; the nearest: {', '.join(near)}. Next: call {making}."
