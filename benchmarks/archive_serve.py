"""`python -m benchmarks archive-serve --archive-dir DIR`: issue #22's starts of `papercode serve --archive` on a built
archive (the serving form `papercode archive build` writes: paper columns, search index, manifest, under
`DIR/builds/<id>` with `DIR/current` naming it), against an empty server.

It measures this checkout's papercode (through `papercode.bench`); a commit before issue #22, whose archive was record
shards under `DIR/records`, was measured by its own harness. (`--records DIR` runs issue #15's measure of a records
directory: `benchmarks.archive_serve_shards`.)

Servers are real `papercode serve` processes over stdio (the CLI, spawned by the MCP SDK's client with the 2025-11-25
handshake desktop hosts speak), each with its own temporary directory (`TMPDIR`: what it leaves there is counted):

1. **in-process** (a fresh subprocess, the CLI's GC policy): `Corpus.open(bundled records, cache_dir=a fresh directory,
   archive_dir=DIR)`, twice (the first start after a build, then a later one), timed; then `search_papers` (p50/p99,
   over the overlay) and the lookups (`get_paper`, `get_harvested_code_for_paper`, `find_papers_for_repo`,
   `corpus_stats`; p50), called as `answers` answers them (`papercode.bench.tool_answers`), with arguments taken from the corpus: archive papers
   no record replaces, and the records' papers. It also picks the probe: an archive-only paper with an arXiv id.
2. **empty server**: `papercode serve --records <an empty directory>`: the same process with nothing to serve, so that
   what a start of `--archive` takes beyond it is what serving costs (the bundled records included, which a user's
   `serve --archive` serves too): seconds from spawn to `initialize` and to `corpus_stats` answered.
3. **starts**: `papercode serve --archive --archive-dir DIR` (the bundled records above the archive), `--cache-dir` a
   fresh directory for the first start after the build, then the same directory for `--stdio-repeat` later starts,
   alternating with the empty server: seconds from spawn to `initialize` answered, then, asked one after the other, to a
   keyed tool answered (`get_harvested_code_for_paper` of the probe), to `get_paper` of the probe (it waits for the
   abstracts, which lie beside the search index) and to `search_papers`, each answered for the probe, with its title
   (a `loading` answer is asked again; any other error fails the run); the server's CPU seconds as each is answered;
   each server is closed only once a snapshot is in its cache directory (what the next start reads).
4. **memory**: through each server's start and then `--searches` `search_papers` calls over stdio (varied queries),
   the anonymous memory (`RssAnon` of `/proc/PID/status`, the server and every process below it, summed) polled every
   10 ms (`benchmarks.proctree`): its peak during the start (to the search answered), its peak overall and its value
   after the searches, each beyond the empty server's same figure (it makes the same calls).
5. **disk**: the archive directory (unchanged by the starts, checked) plus what the starts added to their cache
   directory, against the parquet files' bytes (from the build's manifest, or `--parquet DIR`); and what each server
   left in its temporary directory.
6. **reload**: a server with the bundled records and a records directory of its own above the archive, with `--watch`
   (`--watch-interval`), then another reloaded by SIGHUP: a record replacing the probe is written into that directory
   (renamed into place), and the time is taken until `get_paper` of the probe answers with the record's title; then it
   is removed, until the archive's row answers again, the same answer as before the record came.

Targets (issue #22, at 600k papers): every start's keyed tools and search answered <= 0.5 s after the empty server's
`corpus_stats` (the median of its starts); RssAnon beyond the empty server's <= 150 MB (10^6 bytes), at the start's
peak and after the searches; the archive directory plus the cache a start adds <= 3x the parquet files; search p50
<= 5 ms and p99 <= 20 ms in-process; lookups p50 < 1 ms; a reload <= 1 s, and the removed record brings the archive's
row back.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from papercode import bench

from . import archive_serve_shards as shards
from .archive_bench import FORM_FILES, archive_facts, disk_usage, manifest_line, manifest_of, run_step
from .archive_serve_shards import TARGET_LOOKUP_P50_MS, TARGET_SEARCH_P50_MS, TARGET_SEARCH_P99_MS
from .harness import REPO_ROOT, cpu_s, machine, pythonpath, shown_path
from .proctree import TreeSampler, children, rollup_kb, status_kb, tree, tree_cpu_s
from .results import JSON_HELP, at_most, finish, header
from .run import time_direct

TARGET_LATER_S = 0.5
TARGET_ANON_BYTES = 150 * 10**6
TARGET_DISK_VS_PARQUET = 3.0
TARGET_RELOAD_S = 1.0
LOOKUPS = ("get_paper", "get_harvested_code_for_paper", "find_papers_for_repo", "corpus_stats")
DEADLINE_S = 600.0  # the longest a run waits for any answer
RELOAD_DEADLINE_S = 600.0  # a papercode from before issue #22 reloads the archive's records too: minutes at 600k
REPLACED = "Replaced by a record: "


# -- in-process (a fresh subprocess) ----------------------------------------------------------------------


def worker_inprocess(payload: dict[str, Any]) -> dict[str, Any]:
    """`Corpus.open` over the archive, twice, timed; then the calls, timed; and the arguments of the stdio steps."""
    bench.load_sdk()  # before the timing, as a server imports it
    bench.gc_policy()
    roots, cache, archive_dir = [bench.bundled_records_dir()], Path(payload["cache_dir"]), Path(payload["archive_dir"])
    opens = []
    for _ in range(2):  # the first start after the build (an empty cache directory), then a later one
        start, cpu = time.perf_counter(), cpu_s()
        corpus = bench.Corpus.open(roots, cache_dir=cache, archive_dir=archive_dir)
        opens.append({"s": time.perf_counter() - start, "cpu_s": cpu_s() - cpu})
    if corpus.archive_note is not None:
        raise RuntimeError(f"the archive in {archive_dir} is not served: {corpus.archive_note}")
    anon_after_open = status_kb(os.getpid(), ("RssAnon",))["RssAnon"] * 1024
    records = bench.Corpus.open(roots, cache_dir=cache).index.papers  # the records alone: which papers are theirs
    record_rows = [records[i] for i in range(len(records))]
    archive = corpus.archive
    picked = _pick(corpus, record_rows, payload["calls"], payload["searches"], payload.get("seed", 0))
    direct = time_direct(corpus, picked["calls"])
    return {
        "open_first_s": opens[0]["s"],
        "open_first_cpu_s": opens[0]["cpu_s"],
        "open_later_s": opens[1]["s"],
        "open_later_cpu_s": opens[1]["cpu_s"],
        "papers": len(corpus.index.papers),
        "record_papers": len(record_rows),
        "archive_papers": len(archive) if archive is not None else len(corpus.index.papers) - len(record_rows),
        "build_id": archive.build_id if archive is not None else None,
        "rss_anon_after_open_bytes": anon_after_open,
        "direct": direct,
        "calls_shown": {tool: args[:3] for tool, args in picked["calls"].items()},
        "probe": picked["probe"],
        "searches": picked["searches"],
        "replacing_record": _replacing_record(roots[0], picked["probe"]),
    }


def _pick(corpus: Any, record_rows: list[Any], per_tool: int, searches: int, seed: int) -> dict[str, Any]:
    """Arguments from the corpus: lookups of archive papers no record replaces (four in five) and of the records'
    papers; repositories of those papers' code links; 1-3 words of their titles as queries (one in five asking for
    papers with samples); the probe, an archive-only paper with an arXiv id and a title of a few words."""
    rng = random.Random(seed)
    papers = corpus.index.papers
    record_arxiv = {row.arxiv_id for row in record_rows if row.arxiv_id}
    record_slugs = {row.slug for row in record_rows if row.slug}
    archive_rows = []
    for ordinal in rng.sample(range(len(papers)), min(len(papers), 4 * per_tool + 50)):
        row = papers[ordinal]
        if row.arxiv_id not in record_arxiv and row.slug not in record_slugs:
            archive_rows.append(row)
    probe = next((row for row in archive_rows if row.arxiv_id and len(_words(row.title)) >= 3), None)
    if probe is None:
        raise RuntimeError("no archive-only paper with an arXiv id and a title of three words or more was found")
    repos = []
    for row in archive_rows[: 2 * per_tool]:
        repos += [link["repo"] for link in bench.paper_detail_shown(corpus, row.arxiv_id or row.slug)["code_links"]]
    repos = repos or ["nobody/nothing"]

    def paper() -> Any:
        row = rng.choice(record_rows) if record_rows and rng.random() < 0.2 else rng.choice(archive_rows)
        return row.arxiv_id or row.slug

    def search() -> dict[str, Any]:
        row = rng.choice(record_rows) if record_rows and rng.random() < 0.05 else rng.choice(archive_rows)
        words = _words(row.title)
        asked: dict[str, Any] = {"query": " ".join(rng.sample(words, min(len(words), rng.randint(1, 3)))) if words else "learning"}
        if rng.random() < 0.2:
            asked["has_samples"] = True
        return asked

    calls: dict[str, list[dict[str, Any]]] = {tool: [] for tool in ("search_papers", *LOOKUPS)}
    for _ in range(per_tool):
        calls["search_papers"].append(search())
        calls["get_paper"].append({"paper": paper()})
        calls["get_harvested_code_for_paper"].append({"arxiv_id": paper()})
        calls["find_papers_for_repo"].append({"repo": rng.choice(repos)})
        calls["corpus_stats"].append({})
    return {
        "calls": calls,
        "probe": {"arxiv_id": probe.arxiv_id, "slug": probe.slug, "title": probe.title, "query": " ".join(_words(probe.title)[:3])},
        "searches": [search() for _ in range(searches)],
    }


def _words(title: str) -> list[str]:
    return [word for word in "".join(c if c.isalnum() else " " for c in title).split() if len(word) > 2]


def _replacing_record(bundled: Path, probe: dict[str, Any]) -> dict[str, Any]:
    """A record for the probe's paper (its arXiv id and slug, another title): a bundled record, samples and all, renamed."""
    import orjson

    source = min(path for path in bundled.iterdir() if path.suffix in (".txt", ".json"))
    record: dict[str, Any] = orjson.loads(source.read_bytes())
    arxiv = probe["arxiv_id"]
    record.update(
        arxiv_id=arxiv,
        url=f"/paper/{probe['slug']}",
        title=REPLACED + probe["title"],
        url_abs=f"https://arxiv.org/abs/{arxiv}v1",
        url_pdf=f"https://arxiv.org/pdf/{arxiv}v1.pdf",
    )
    return record


# -- stdio: servers spawned as a host spawns them ----------------------------------------------------------


class Server:
    """`papercode serve ARGS` over stdio, in a temporary directory of its own (its `TMPDIR`, its stderr, its code
    directory), with this process's children's RssAnon polled while it runs."""

    def __init__(self, args: Sequence[str], scratch: Path) -> None:
        self.args = [*args, "--offline", "--code-dir", str(scratch / "code")]
        self.scratch = scratch
        self.tmp = scratch / "tmp"
        self.tmp.mkdir(parents=True)

    def client(self) -> Any:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        env = {"PYTHONPATH": pythonpath(), "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", ""), "TMPDIR": str(self.tmp)}
        params = StdioServerParameters(command=sys.executable, args=["-m", "papercode", "serve", *self.args], env=env, cwd=str(REPO_ROOT))
        self.errlog = open(self.scratch / "stderr", "w")  # noqa: SIM115 - closed by `stderr()`
        return Client(stdio_client(params, errlog=self.errlog), mode="legacy")

    def stderr(self) -> str:
        self.errlog.close()
        return (self.scratch / "stderr").read_text(errors="replace")

    def pid(self) -> int:
        """The server's process (this process's child running `papercode serve` with this server's code directory)."""
        mine = str(self.scratch / "code").encode() + b"\x00"
        for child in children(os.getpid()):
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:
                continue
            if b"papercode\x00serve\x00" in cmdline and mine in cmdline:
                return child
        raise RuntimeError("the papercode serve process was not found among this process's children")

    def left(self) -> dict[str, int]:
        """What the server left in its temporary directory once it ended."""
        return disk_usage(self.tmp)


class AnswerError(RuntimeError):
    pass


async def answer(client: Any, tool: str, arguments: dict[str, Any], deadline_s: float = DEADLINE_S) -> Any:
    """The tool's answer; a `loading` error is asked again every 10 ms (bounded); any other error raises."""
    deadline = time.perf_counter() + deadline_s
    while True:
        result = await client.call_tool(tool, arguments)
        text = result.content[0].text if result.content else ""
        if not result.is_error:
            return result
        if not text.startswith("loading") or time.perf_counter() > deadline:
            raise AnswerError(f"{tool} {arguments}: {text[:300]}")
        await asyncio.sleep(0.01)


async def _searches(client: Any, searches: Sequence[dict[str, Any]]) -> dict[str, Any]:
    times, errors = [], 0
    for arguments in searches:
        start = time.perf_counter()
        result = await client.call_tool("search_papers", arguments)
        times.append(time.perf_counter() - start)
        errors += bool(result.is_error)
    times.sort()
    return {
        "n": len(times),
        "errors": errors,
        "p50_ms": statistics.median(times) * 1e3 if times else 0.0,
        "p99_ms": times[min(len(times) - 1, round(0.99 * (len(times) - 1)))] * 1e3 if times else 0.0,
    }


async def start(
    server: Server, asks: Sequence[tuple[str, str, dict[str, Any]]], searches: Sequence[dict[str, Any]], snapshot_in: Path | None = None
) -> dict[str, Any]:
    """Spawn the server; seconds from spawn to `initialize` and to each ask answered (`<label>_s`, and `<label>`: the
    answer's structured content); then the searches; then, with `snapshot_in`, until a snapshot is in that cache
    directory (a start is not over before it has written what the next start reads); RssAnon polled from before the
    spawn to the server's end."""
    sampler = TreeSampler("RssAnon").start()
    out: dict[str, Any] = {}
    try:
        spawned = time.perf_counter()
        async with server.client() as client:
            out["initialize_s"] = time.perf_counter() - spawned
            for label, tool, arguments in asks:
                result = await answer(client, tool, arguments)
                out[f"{label}_s"] = time.perf_counter() - spawned
                out[f"{label}_cpu_s"] = tree_cpu_s(server.pid())  # steadier than wall time on a shared machine
                out[label] = result.structured_content
            sampler.mark("started")
            out["anon_start_peak_bytes"] = sampler.peak
            out["stdio_searches"] = await _searches(client, searches)
            out["anon_after_searches_bytes"] = sampler.mark("after searches")
            if snapshot_in is not None:
                out["snapshot_s"] = await _snapshot_written(snapshot_in, spawned)
            out["anon_peak_bytes"] = sampler.peak
    except Exception as exc:
        raise RuntimeError(f"papercode serve {' '.join(server.args)}: {exc}\n{server.stderr()[-3000:]}") from exc
    finally:
        out["anon"] = sampler.stop()
    server.stderr()
    out["tmp_left"] = server.left()
    return out


async def _snapshot_written(cache: Path, since: float) -> float:
    deadline = time.perf_counter() + DEADLINE_S
    while not any(cache.glob("*.snapshot")):
        if time.perf_counter() > deadline:
            raise RuntimeError(f"no snapshot in the cache directory {DEADLINE_S:g} s after the searches")
        await asyncio.sleep(0.05)
    return time.perf_counter() - since


def _title(structured: Any) -> str | None:
    return structured.get("title") if isinstance(structured, dict) else None


async def _until_title(client: Any, paper: str, title: str, since: float) -> float | None:
    """Seconds from `since` until `get_paper(paper)` answers with `title` (asked every 5 ms), None past the deadline."""
    while time.perf_counter() - since < RELOAD_DEADLINE_S:
        result = await client.call_tool("get_paper", {"paper": paper})
        if not result.is_error and _title(result.structured_content) == title:
            return time.perf_counter() - since
        await asyncio.sleep(0.005)
    return None


async def reload(
    server: Server, records: Path, probe: dict[str, Any], record: dict[str, Any], trigger: Callable[[int], None]
) -> dict[str, Any]:
    """A record replacing the probe written into `records` (then removed) while the server runs; `trigger(pid)` after
    each change (SIGHUP, or nothing under `--watch`). Seconds until each change is served."""
    import orjson

    replaced = REPLACED + probe["title"]
    path = records / "replacing-record.json"
    out: dict[str, Any] = {}
    async with server.client() as client:
        before = (await answer(client, "get_paper", {"paper": probe["arxiv_id"]})).structured_content
        if _title(before) != probe["title"]:
            raise RuntimeError(f"get_paper {probe['arxiv_id']} answered {_title(before)!r} before any record came, not the archive's title")
        pid = server.pid()
        hidden = records / ".replacing-record.json"  # not a record file (a dot-name) until renamed
        hidden.write_bytes(orjson.dumps(record))
        os.rename(hidden, path)
        added = time.perf_counter()
        trigger(pid)
        out["added_s"] = await _until_title(client, probe["arxiv_id"], replaced, added)
        path.unlink()
        removed = time.perf_counter()
        trigger(pid)
        out["removed_s"] = await _until_title(client, probe["arxiv_id"], probe["title"], removed)
        after = (await answer(client, "get_paper", {"paper": probe["arxiv_id"]})).structured_content
        out["archive_row_back"] = after == before
    server.stderr()
    return out


async def two_servers(servers: Sequence[Server], probe: dict[str, Any]) -> dict[str, Any]:
    """Servers on one archive at once, each asked a search: each one's memory then, every process of it summed:
    RssAnon, RssFile, and `Pss` (a page shared by both counts half in each), anonymous and file-backed."""
    ready, release = asyncio.Event(), asyncio.Event()
    waiting: list[int] = []
    memory: dict[int, dict[str, int]] = {}

    async def serve(server: Server) -> None:
        async with server.client() as client:
            await answer(client, "search_papers", {"query": probe["query"]})
            waiting.append(server.pid())
            if len(waiting) == len(servers):
                ready.set()
            await asyncio.wait_for(ready.wait(), DEADLINE_S)
            if server is servers[0]:  # every server is up and holds what it needs: read them all at once
                for pid in waiting:
                    pids = tree(pid)
                    status = [status_kb(p, ("RssAnon", "RssFile")) for p in pids]
                    rollup = [rollup_kb(p, ("Pss", "Pss_Anon", "Pss_File")) for p in pids]
                    memory[pid] = {field: 1024 * sum(row[field] for row in status) for field in ("RssAnon", "RssFile")}
                    memory[pid].update({field: 1024 * sum(row[field] for row in rollup) for field in ("Pss", "Pss_Anon", "Pss_File")})
                release.set()
            await asyncio.wait_for(release.wait(), DEADLINE_S)
        server.stderr()

    await asyncio.gather(*(serve(server) for server in servers))
    rows = list(memory.values())
    return {
        "servers": rows,
        **{f"sum_{field}": sum(row[field] for row in rows) for field in ("RssAnon", "RssFile", "Pss", "Pss_Anon", "Pss_File")},
    }


# -- the run ---------------------------------------------------------------------------------------------


def parquet_bytes(archive_dir: Path, parquet: Path | None) -> tuple[int | None, str]:
    """The parquet files' bytes, and where they were found: `--parquet DIR` (an archive as generate-archive writes
    it), else the sources the build's manifest lists (when it was built from parquet)."""
    if parquet is not None:
        return sum((parquet / name).stat().st_size for name in FORM_FILES["parquet"]), "--parquet"
    sources = (manifest_of(archive_dir) or {}).get("sources") or []
    sizes = [int(source["bytes"]) for source in sources if source.get("form") == "parquet"]
    if sizes:
        return sum(sizes), "the build's manifest (its sources)"
    return None, "unknown: the build read no parquet files (pass --parquet DIR)"


def measure(
    archive_dir: Path,
    *,
    parquet: Path | None = None,
    calls: int = 300,
    stdio_repeat: int = 3,
    searches: int = 1000,
    watch_interval: float = 0.2,
    reloads: bool = True,
    log: Callable[[str], None] = lambda line: None,
) -> dict[str, Any]:
    result: dict[str, Any] = {"archive_dir": shown_path(archive_dir), "searches": searches, "watch_interval_s": watch_interval}
    result["parquet_bytes"], result["parquet_from"] = parquet_bytes(archive_dir, parquet)
    result["archive"] = archive_facts(archive_dir)
    with tempfile.TemporaryDirectory(prefix="papercode-archive-serve-") as tmp:
        work = Path(tmp)
        log("# in-process: Corpus.open over the archive, then the calls")
        inprocess = run_step(
            "inprocess",
            {"archive_dir": str(archive_dir), "cache_dir": str(work / "inprocess-cache"), "calls": calls, "searches": searches},
            module="benchmarks.archive_serve",
        )
        probe, queries = inprocess.pop("probe"), inprocess.pop("searches")
        record = inprocess.pop("replacing_record")
        result["inprocess"], result["probe"] = inprocess, probe
        empty_records, cache, empty_cache = work / "empty-records", work / "cache", work / "empty-cache"
        for directory in (empty_records, cache, empty_cache):
            directory.mkdir()
        empty_args = ["--records", str(empty_records), "--cache-dir", str(empty_cache)]
        archive_args = ["--archive", "--archive-dir", str(archive_dir), "--cache-dir", str(cache)]
        asks = [
            ("keyed", "get_harvested_code_for_paper", {"arxiv_id": probe["arxiv_id"]}),
            ("paper", "get_paper", {"paper": probe["arxiv_id"]}),  # it waits for the abstracts, beside the search index
            ("search", "search_papers", {"query": probe["query"]}),
        ]
        empties, starts = [], []
        for run in range(1 + stdio_repeat):
            kind = "first start after the build (empty cache directory)" if run == 0 else f"later start {run} of {stdio_repeat}"
            log(f"# empty server, then the {kind}")
            empties.append(asyncio.run(start(Server(empty_args, work / f"empty-{run}"), [("stats", "corpus_stats", {})], queries)))
            starts.append(asyncio.run(start(Server(archive_args, work / f"start-{run}"), asks, queries, snapshot_in=cache)))
            if _title(starts[-1]["paper"]) != probe["title"] or _title(starts[-1]["keyed"].get("paper")) != probe["title"]:
                raise RuntimeError(f"{probe['arxiv_id']} was answered with another title than the archive's: {starts[-1]['paper']!r}")
            for row in (empties[-1], starts[-1]):
                for answered in ("keyed", "paper", "search", "stats"):  # the answers themselves: checked, not kept
                    row.pop(answered, None)
        result["empty"], result["starts"] = empties, starts
        result["cache"] = disk_usage(cache)
        result["cache_entries"] = {
            entry.name: disk_usage(entry) if entry.is_dir() else {"files": 1, "bytes": entry.stat().st_size}
            for entry in sorted(cache.iterdir())
        }
        result["archive_after"] = disk_usage(archive_dir)
        log("# two servers on the archive at once")
        result["two_servers"] = asyncio.run(two_servers([Server(archive_args, work / f"pair-{n}") for n in range(2)], probe))
        if reloads:
            result["reload"] = {}
            for how in ("watch", "sighup"):
                log(f"# reload ({how})")
                records = work / f"records-{how}"
                records.mkdir()
                served = [
                    "--records",
                    str(_bundled()),
                    "--records",
                    str(records),
                    *archive_args[:3],
                    "--cache-dir",
                    str(work / f"cache-{how}"),
                ]
                if how == "watch":
                    served += ["--watch", "--watch-interval", str(watch_interval)]
                trigger: Callable[[int], None] = (lambda pid: None) if how == "watch" else (lambda pid: os.kill(pid, signal.SIGHUP))
                result["reload"][how] = asyncio.run(reload(Server(served, work / f"reload-{how}"), records, probe, record, trigger))
    return summarise(result)


def _bundled() -> Path:
    """The bundled records of the papercode measured."""
    return Path(bench.bundled_records_dir())


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    empties, starts = result["empty"], result["starts"]
    empty_stats_s = statistics.median(row["stats_s"] for row in empties)
    s: dict[str, Any] = {
        "empty_stats_s": empty_stats_s,
        "empty_stats_cpu_s": statistics.median(row["stats_cpu_s"] for row in empties),
        "empty_initialize_s": statistics.median(row["initialize_s"] for row in empties),
    }
    for key in ("anon_start_peak_bytes", "anon_peak_bytes", "anon_after_searches_bytes"):
        s[f"empty_{key}"] = statistics.median(row[key] for row in empties)
    s["starts"] = []
    for number, row in enumerate(starts):
        s["starts"].append(
            {
                "start": "first" if number == 0 else "later",
                "initialize_s": row["initialize_s"],
                "keyed_s": row["keyed_s"],
                "search_s": row["search_s"],
                "paper_s": row["paper_s"],
                "keyed_later_s": row["keyed_s"] - empty_stats_s,
                "paper_later_s": row["paper_s"] - empty_stats_s,
                "search_later_s": row["search_s"] - empty_stats_s,
                # against the empty server started just before it (the same moment of a shared machine's load)
                "keyed_later_paired_s": row["keyed_s"] - empties[number]["stats_s"],
                "search_later_paired_s": row["search_s"] - empties[number]["stats_s"],
                "keyed_cpu_s": row["keyed_cpu_s"],
                "search_cpu_s": row["search_cpu_s"],
                "search_cpu_beyond_s": row["search_cpu_s"] - s["empty_stats_cpu_s"],
                **{
                    f"{key}_beyond": row[key] - s[f"empty_{key}"]
                    for key in ("anon_start_peak_bytes", "anon_peak_bytes", "anon_after_searches_bytes")
                },
            }
        )
    archive_disk = result["archive"]["disk"]["disk_bytes"]
    s["disk_bytes"] = archive_disk + result["cache"]["disk_bytes"]
    s["archive_unchanged"] = result["archive_after"] == result["archive"]["disk"]
    if result["parquet_bytes"]:
        s["disk_vs_parquet"] = s["disk_bytes"] / result["parquet_bytes"]
    s["tmp_left_files"] = sum(row["tmp_left"]["files"] for row in (*empties, *starts))
    result["summary"] = s
    result["targets"] = [list(row) for row in targets(result)]
    return result


def targets(result: dict[str, Any]) -> list[tuple[str, bool, str]]:
    s = result["summary"]
    rows: list[tuple[str, bool, str]] = []
    for label, key in (
        ("keyed tool (get_harvested_code_for_paper)", "keyed_later_s"),
        ("get_paper", "paper_later_s"),
        ("search", "search_later_s"),
    ):
        each = ", ".join(f"{start[key]:+.2f}" for start in s["starts"])
        name = f"every start: {label} answered <= {TARGET_LATER_S:g} s after an empty server's corpus_stats"
        rows.append(at_most(name, max(start[key] for start in s["starts"]), TARGET_LATER_S, f"{each} s"))
    for label, key in (("at the start's peak", "anon_start_peak_bytes_beyond"), ("after the searches", "anon_after_searches_bytes_beyond")):
        worst = max(start[key] for start in s["starts"])
        rows.append(
            at_most(
                f"RssAnon beyond the empty server's, {label} <= 150 MB", worst, TARGET_ANON_BYTES, f"{worst / 1e6:.0f} MB (worst start)"
            )
        )
    if "disk_vs_parquet" in s:
        name = f"disk: archive directory + cache a start adds <= {TARGET_DISK_VS_PARQUET:g}x the parquet files"
        rows.append(at_most(name, s["disk_vs_parquet"], TARGET_DISK_VS_PARQUET, f"{s['disk_vs_parquet']:.2f}x"))
    direct = result["inprocess"]["direct"]
    for percentile, limit in (("p50", TARGET_SEARCH_P50_MS), ("p99", TARGET_SEARCH_P99_MS)):
        value = direct["search_papers"][f"{percentile}_ms"]
        rows.append(at_most(f"search_papers {percentile} <= {limit:g} ms (in-process)", value, limit, f"{value:.2f} ms"))
    for tool in LOOKUPS:
        p50 = direct[tool]["p50_ms"]
        rows.append((f"{tool} p50 < {TARGET_LOOKUP_P50_MS:g} ms (in-process)", p50 < TARGET_LOOKUP_P50_MS, f"{p50:.3f} ms"))
    for how, row in (result.get("reload") or {}).items():
        times = [row["added_s"], row["removed_s"]]
        worst = float("inf") if None in times else max(times)
        shown = ", ".join("none" if t is None else f"{t:.2f}" for t in times)
        rows.append(
            at_most(f"reload ({how}): a record added, then removed, served <= {TARGET_RELOAD_S:g} s", worst, TARGET_RELOAD_S, f"{shown} s")
        )
        back = row["archive_row_back"]
        rows.append((f"reload ({how}): the removed record brings the archive's row back", back, str(back)))
    return rows


# -- printing ----------------------------------------------------------------------------------------------


def _mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def _entries(entries: dict[str, dict[str, int]]) -> str:
    return ", ".join(f"{name}: {facts['files']} files, {facts['bytes'] / 2**10:,.0f} KiB" for name, facts in entries.items()) or "empty"


def format_result(result: dict[str, Any]) -> str:
    s, archive, inp = result["summary"], result["archive"], result["inprocess"]
    lines = [
        f"## {result['archive_dir']} ({manifest_line(archive)}): {inp['archive_papers']:,} archive papers, {inp['record_papers']} records above them ({inp['papers']:,} papers served)"
    ]
    lines.append(
        f"in-process Corpus.open  first {inp['open_first_s']:.3f} s (CPU {inp['open_first_cpu_s']:.2f} s),"
        f" later {inp['open_later_s']:.3f} s (CPU {inp['open_later_cpu_s']:.2f} s); RssAnon after {_mb(inp['rss_anon_after_open_bytes'])}"
    )
    lines.append("in-process (ms)                   p50      p99   errors")
    for tool, d in inp["direct"].items():
        lines.append(f"  {tool:30s} {d['p50_ms']:7.3f} {d['p99_ms']:8.3f}   {d['errors']}")
    probe = result["probe"]
    lines.append(f"probe: {probe['arxiv_id']} {probe['title']!r}; first search {probe['query']!r}")
    lines.append(
        "stdio: seconds from spawn (CPU s of the server's processes)   initialize  keyed (harvested code)  get_paper  search"
        "          beyond the empty server's corpus_stats (its median | the one just before), keyed, search (CPU, search)"
    )
    for number, (empty, row) in enumerate(zip(result["empty"], result["starts"], strict=True)):
        lines.append(
            f"  empty server {number:<47d} {empty['initialize_s']:6.2f}   corpus_stats {empty['stats_s']:5.2f} (CPU {empty['stats_cpu_s']:.2f})"
        )
        start = s["starts"][number]
        label = "first start after the build (empty cache)" if number == 0 else f"later start {number}"
        lines.append(
            f"  {label:59s} {row['initialize_s']:6.2f} {row['keyed_s']:13.2f} (CPU {row['keyed_cpu_s']:.2f})"
            f" {row['paper_s']:6.2f} {row['search_s']:7.2f} (CPU {row['search_cpu_s']:.2f})"
            f"   {start['keyed_later_s']:+.2f}, {start['search_later_s']:+.2f} | {start['keyed_later_paired_s']:+.2f}, {start['search_later_paired_s']:+.2f}"
            f"   (CPU {start['search_cpu_beyond_s']:+.2f})"
        )
    lines.append(
        f"RssAnon, every process of the server (MiB)      at start     peak   after {result['searches']} searches   their p50 / p99 over stdio (ms)"
    )
    for number, (empty, row) in enumerate(zip(result["empty"], result["starts"], strict=True)):
        for label, run in ((f"empty server {number}", empty), ("first start" if number == 0 else f"later start {number}", row)):
            errors = f"  ({run['stdio_searches']['errors']} errors)" if run["stdio_searches"]["errors"] else ""
            lines.append(
                f"  {label:44s} {run['anon_start_peak_bytes'] / 2**20:9,.0f} {run['anon_peak_bytes'] / 2**20:8,.0f}"
                f" {run['anon_after_searches_bytes'] / 2**20:17,.0f}   {run['stdio_searches']['p50_ms']:8.2f} / {run['stdio_searches']['p99_ms']:.2f}{errors}"
            )
    lines.append(
        "  beyond the empty server's (its medians), at start / peak / after: "
        + "; ".join(
            f"{start['start']} {start['anon_start_peak_bytes_beyond'] / 1e6:+.0f} / {start['anon_peak_bytes_beyond'] / 1e6:+.0f}"
            f" / {start['anon_after_searches_bytes_beyond'] / 1e6:+.0f} MB"
            for start in s["starts"]
        )
    )
    parquet = f"{_mb(result['parquet_bytes'])} ({result['parquet_from']})" if result["parquet_bytes"] else result["parquet_from"]
    disk = archive["disk"]
    vs = f" = {s['disk_vs_parquet']:.2f}x the parquet files" if "disk_vs_parquet" in s else ""
    lines.append(
        f"disk: archive directory {_mb(disk['disk_bytes'])} ({disk['files']} files) + cache directory after {len(result['starts'])} starts"
        f" {_mb(result['cache']['disk_bytes'])} ({_entries(result['cache_entries'])})"
        f" = {_mb(s['disk_bytes'])}{vs}; parquet files {parquet}"
    )
    lines.append(
        f"  the archive directory {'unchanged' if s['archive_unchanged'] else 'CHANGED'} by the starts;"
        f" files the servers left in their temporary directories: {s['tmp_left_files']}"
    )
    pair = result.get("two_servers")
    if pair:
        each = lambda field: " + ".join(f"{row[field] / 2**20:,.0f}" for row in pair["servers"])  # noqa: E731
        lines.append(
            f"two servers on the archive at once (MiB, each): RssAnon {each('RssAnon')}; RssFile {each('RssFile')};"
            f" Pss {each('Pss')} (anonymous {each('Pss_Anon')}, file-backed {each('Pss_File')}: a page both map counts half in each)"
        )
    for how, row in (result.get("reload") or {}).items():
        how_shown = f"--watch --watch-interval {result['watch_interval_s']:g}" if how == "watch" else "SIGHUP"
        times = [
            f"not served within {RELOAD_DEADLINE_S:g} s" if row[key] is None else f"{row[key]:.3f} s" for key in ("added_s", "removed_s")
        ]
        lines.append(
            f"reload ({how_shown}): a record replacing the probe added -> served in {times[0]}; removed -> the archive's row"
            f" served in {times[1]}, {'the same answer as before' if row['archive_row_back'] else 'NOT the answer of before'}"
        )
    lines.append("targets (issue #22, defined at 600k papers)")
    for name, passed, measured in targets(result):
        lines.append(f"  {'PASS' if passed else 'MISS'}  {name:84s} {measured}")
    return "\n".join(lines)


# -- entry points ------------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--archive-dir", type=Path, help="an archive directory `papercode archive build --out` wrote (the serving form)")
    which.add_argument(
        "--records",
        type=Path,
        help="issue #15's measure of a records directory (such as the record shards a commit before #22 built), served as --records",
    )
    parser.add_argument("--calls", type=int, default=300, help="in-process calls per tool (default 300)")
    parser.add_argument("--stdio-repeat", type=int, default=3, help="later starts over stdio, each after an empty server's (default 3)")
    parser.add_argument("--json", type=Path, help=JSON_HELP)
    serving = parser.add_argument_group("the serving form (--archive-dir)")
    serving.add_argument("--searches", type=int, default=1000, help="search_papers calls over stdio after each start (default 1000)")
    serving.add_argument("--watch-interval", type=float, default=0.2, help="the --watch interval of the reload server (default 0.2 s)")
    serving.add_argument("--no-reload", action="store_true", help="skip the reload servers")
    serving.add_argument("--parquet", type=Path, help="the parquet archive the build read (default: its size from the build's manifest)")
    shards = parser.add_argument_group("record shards (--records)")
    shards.add_argument("--repeat", type=int, default=1, help="cold starts (each a fresh process; medians)")
    shards.add_argument("--no-phases", action="store_true", help="no phase wrappers")


def main(args: argparse.Namespace) -> int:
    about = machine()
    print(header(about, "archive-serve"), flush=True)
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    if args.records is not None:
        command, shown = "archive-serve-records", shards.format_result
        records = args.records.resolve()
        result = shards.measure(
            records,
            calls=args.calls,
            repeat=args.repeat,
            stdio_repeat=args.stdio_repeat,
            phases=not args.no_phases,
            log=log,
        )
    else:
        command, shown = "archive-serve", format_result
        archive_dir = args.archive_dir.resolve()
        result = measure(
            archive_dir,
            parquet=args.parquet,
            calls=args.calls,
            stdio_repeat=args.stdio_repeat,
            searches=args.searches,
            watch_interval=args.watch_interval,
            reloads=not args.no_reload,
            log=log,
        )
    print(shown(result), flush=True)
    finish(args.json, command, result, about)
    return 0


def _worker_main(mode: str, payload_path: str) -> int:
    payload = json.loads(Path(payload_path).read_text())
    if mode != "inprocess":
        raise SystemExit(f"unknown worker mode {mode!r}")
    Path(payload["answer"]).write_text(json.dumps(worker_inprocess(payload)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        sys.exit(_worker_main(sys.argv[2], sys.argv[3]))
    raise SystemExit("run as python -m benchmarks archive-serve")
