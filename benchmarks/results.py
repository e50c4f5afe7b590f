"""One JSON file per benchmark run: every number the run printed, with the machine, the date and the commit measured.

`save(target, command, result)` writes `{"command", "argv", "machine", "result"}` to `target`; when `target` does not
end in `.json` it is a directory (such as `benchmarks/results`), and the file is written in it, named `<UTC date>T<time>Z-<command>-<commit>.json`, so runs
never overwrite each other. Reports are generated from these files, so they name nothing of the machine they ran on:
paths in them are shown as `harness.shown_path` shows them.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from .harness import format_machine, machine, shown_path

RESULTS_DIR = Path(__file__).resolve().parent / "results"
JSON_HELP = (
    "also write every number to this JSON file; a path not ending in .json is a directory (e.g. benchmarks/results),"
    " where a new file named for the run is written"
)


def shown_argv(argv: list[str]) -> list[str]:
    """The command line, with every absolute path (alone or after `--flag=`) shown by `shown_path`."""
    shown = []
    for arg in argv:
        flag, equals, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        if value.startswith("/"):
            value = shown_path(value)
        shown.append(f"{flag}{equals}{value}")
    return shown


def shown(value: Any) -> Any:
    """`value` (a JSON-ready structure) with every absolute path in it, as a string or a key, shown by `shown_path`."""
    if isinstance(value, str):
        return shown_path(value) if value.startswith("/") else value
    if isinstance(value, dict):
        return {shown(key): shown(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [shown(item) for item in value]
    return value


def save(target: Path | None, command: str, result: dict[str, Any], about: dict[str, Any] | None = None) -> Path | None:
    """Write the run's JSON (see the module docstring); the path written, or None without a target."""
    if target is None:
        return None
    about = about or machine()
    if target.suffix != ".json":
        commit = (about.get("papercode_source") or {}).get("commit") or "unknown"
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        target = target / f"{stamp}-{command}-{commit[:7]}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    document = {"command": command, "argv": shown_argv(sys.argv[1:]), "machine": about, "result": shown(result)}
    target.write_text(json.dumps(document, indent=1, sort_keys=False) + "\n")
    return target


def header(about: dict[str, Any], name: str) -> str:
    """The lines a run starts with: the machine, the versions, the papercode measured."""
    return format_machine(about).replace("# papercode benchmark", f"# papercode {name} benchmark", 1)


def finish(target: Path | None, command: str, result: dict[str, Any], about: dict[str, Any]) -> None:
    """The line a run ends with (when, and the load then), and its JSON saved (`save`)."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# done {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average {load}", flush=True)
    written = save(target, command, result, about)
    if written:
        print(f"# saved {shown_path(written)}", flush=True)


def at_most(name: str, value: float, limit: float, measured: str) -> tuple[str, bool, str]:
    """A target's row: (what, passed, what was measured)."""
    return (name, value <= limit, measured)
