"""`papercode serve | call | check | materialize`: run the server, call a tool in-process, check the
records, fill the verified code store.

Every setting comes from `settings.OPTIONS`; a bad value is one line on stderr and exit 2.
Logs and diagnostics go to stderr; in `serve` stdout carries only the MCP protocol.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import faulthandler
import gc
import logging
import os
import signal
import sys
import tempfile
import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from papercode import __version__
from papercode.archive.builds import remove_leftovers_when_idle
from papercode.core import scratch
from papercode.core.errors import QueryError
from papercode.corpus.snapshot import TEMPORARY_PREFIX
from papercode.corpus.stages import Corpus
from papercode.edge import stderr_log
from papercode.index.overlay import OVERLAY_PREFIX, overlay_parent
from papercode.ingest.parallel import BUILD_PREFIX, SEARCH_PREFIX
from papercode.settings import OPTIONS, Option, SettingError, Settings, settings_for
from papercode.verified.harvest import interpreter
from papercode.verified.materialize import OUTCOMES, Materializer, MaterializeSummary, VerifiedCode, materialize_corpus
from papercode.verified.sources import LocalClones, SourceFetcher
from papercode.verified.store import WRITING_PREFIX, CodeStore

from . import archive as archive_command
from . import memory
from .failure import fail
from .hostconfig import HOSTS, snippet
from .progress import LoadProgress, MaterializeProgress

if TYPE_CHECKING:
    from mcp.server.auth.settings import AuthSettings

    from papercode.corpus.reload import LiveCorpus
    from papercode.edge.access import StaticTokens
    from papercode.edge.app import PapercodeServer
    from papercode.index.paper_index import SampleRow

log = logging.getLogger("papercode")

EXAMPLES_SHOWN = 20


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="papercode", description="MCP server: from research papers to the code that implements them.")
    parser.add_argument("--version", action="version", version=f"papercode {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    subcommands = {
        "serve": commands.add_parser("serve", help="run the MCP server (stdio by default)"),
        "call": commands.add_parser("call", help="call one tool in-process and print its answer"),
        "check": commands.add_parser("check", help="load the records, check the code store, print the report (exit 1 on any problem)"),
        "materialize": commands.add_parser("materialize", help="fill the verified code store from local clones or GitHub"),
        "config": commands.add_parser("config", help="print the configuration snippet for an MCP host, with this installation's paths"),
    }
    subcommands.update(archive_command.add_parser(commands))
    for option in OPTIONS:
        for command, sub in subcommands.items():
            if command in option.commands:
                _add_option(sub, option)
    call = subcommands["call"]
    call.add_argument("tool", help="tool name, e.g. get_harvested_code_for_paper")
    call.add_argument("arguments", nargs="*", metavar="key=value", help="tool arguments; values are coerced to the tool's types")
    subcommands["config"].add_argument("client", metavar="HOST", choices=HOSTS, help=f"the MCP host to configure: {', '.join(HOSTS)}")
    materialize = subcommands["materialize"]
    materialize.add_argument("--repos", type=Path, metavar="DIR", help="local clones laid out as DIR/<owner>/<name>/...")
    materialize.add_argument("--fetch", action="store_true", help="download source files (from --code-base-url)")
    materialize.add_argument("--status", metavar="STATUS", help="only samples with this status (several: comma-separated)")
    materialize.add_argument("--paper", action="append", metavar="ID", help="only this paper's samples (arXiv id or slug); repeatable")
    materialize.add_argument("--repo", action="append", metavar="OWNER/NAME", help="only samples from this repository; repeatable")
    return parser


def _dest(option: Option) -> str:
    return option.flag.removeprefix("--").replace("-", "_")


def _add_option(parser: argparse.ArgumentParser, option: Option) -> None:
    help_text = option.help + (f" (env {option.env})" if option.env else "") + f"; default: {option.default.replace('`', '')}"
    help_text = help_text.replace("%", "%%")
    if option.parse is None:
        parser.add_argument(option.flag, dest=_dest(option), action="store_true", help=help_text)
    else:
        action = "append" if option.repeatable else "store"
        parser.add_argument(option.flag, dest=_dest(option), action=action, metavar=option.metavar, help=help_text)


def given_flags(args: argparse.Namespace) -> dict[str, Any]:
    return {option.flag: getattr(args, _dest(option), None) for option in OPTIONS}


def gc_policy() -> None:
    """One process-wide GC policy, set before anything is built (builds also run in reload threads):
    start-up objects are never scanned again, and young collections run ~140x less often, so a
    build's millions of short-lived objects mostly die before a collection sees them. The benchmarks
    apply it too, so that they measure what `papercode` runs."""
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)


def fatal_signals_logged() -> None:
    """A death Python cannot catch leaves its tracebacks on stderr, not nothing: above all SIGBUS, when a file of the
    archive a server maps is cut short under it (docs/archive.md). Not over a handler already on (pytest's)."""
    if not faulthandler.is_enabled():
        faulthandler.enable(file=2, all_threads=True)  # fd 2 itself: sys.stderr may be a wrapper


def main(argv: Sequence[str] | None = None) -> int:
    gc_policy()
    fatal_signals_logged()
    args = build_parser().parse_args(argv)
    command = f"archive {args.archive_command}" if args.command == "archive" else args.command
    try:
        settings = settings_for(command, given_flags(args))
    except SettingError as error:
        return fail(f"{error}. Next: {error.next_step or f'see papercode {command} --help'}")
    if args.command == "archive":
        remove_scratch_on_exit()  # a build's directory goes with it however it ends, short of kill -9
        return archive_command.run(args, settings)
    stderr_log.configure(settings.log_level)
    if args.command != "config":
        remove_scratch_on_exit()
        clear_leftovers(settings)
    problem = records_problem(settings.records)
    if problem:
        return fail(problem)
    try:
        if args.command == "check":
            return check(settings)
        if args.command == "call":
            return anyio.run(call_tool, settings, args.tool, args.arguments)
        if args.command == "materialize":
            return materialize(settings, args)
        if args.command == "config":
            return config(settings, args.client)
        return serve(settings)
    except BrokenPipeError:  # `papercode check | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the interpreter's final flush stays quiet too
        return 1


_SCRATCH_ON_EXIT = False


def remove_scratch_on_exit() -> None:
    """However this process ends, short of kill -9, it stops its build child and removes its temporary
    files and directories (`core.scratch`): at exit, and on SIGTERM, whose default would end the
    process on the spot. The handler removes them, then ends the process by the signal, as before."""
    global _SCRATCH_ON_EXIT
    if _SCRATCH_ON_EXIT:
        return
    _SCRATCH_ON_EXIT = True
    atexit.register(scratch.remove_all)
    # Not over a handler someone else set (or an ignored SIGTERM); signal handlers are the main thread's.
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminated)


def _terminated(signum: int, frame: object) -> None:
    scratch.remove_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def clear_leftovers(settings: Settings) -> None:
    """Remove what papercode processes of this user left when they died (kill -9, a crash): build
    directories and overlays of the archive's index in the temporary directory, a snapshot being written in the
    cache directory, code being written in the store, an archive build's directory. Never a running process's
    (`core.scratch`, `archive.builds`)."""
    removed = [
        *scratch.sweep(Path(tempfile.gettempdir()), (BUILD_PREFIX, SEARCH_PREFIX, OVERLAY_PREFIX)),
        *scratch.sweep(overlay_parent(), (OVERLAY_PREFIX,)),
        *scratch.sweep(settings.cache_dir, (TEMPORARY_PREFIX,)),
        *scratch.sweep(settings.code_dir, (WRITING_PREFIX,)),
        *remove_leftovers_when_idle(settings.archive_dir.real),
    ]
    for path in removed:
        log.info("removed %s, left by a papercode process that ended without removing it", path)


def open_corpus(settings: Settings) -> Corpus:
    return Corpus.open(settings.roots, settings.limits, settings.cache_dir, LoadProgress(), archive_dir=settings.served_archive)


def verified_code(settings: Settings) -> VerifiedCode:
    """get_code's code: the store, plus on-demand downloads unless offline."""
    store = CodeStore.for_records(settings.code_dir, settings.records)
    fetcher = None if settings.offline else SourceFetcher(settings.code_base_url)
    return VerifiedCode(store, Materializer(store, fetcher=fetcher) if fetcher else None, materialize_flags=materialize_flags(settings))


def materialize_flags(settings: Settings) -> tuple[str, ...]:
    """The flags of `settings` that `papercode materialize` needs too, to store code where a server with them reads
    it: those not at their default."""
    default = Settings()
    given = {
        "--records": settings.records != default.records,
        "--code-dir": settings.code_dir != default.code_dir,
        "--code-base-url": settings.code_base_url != default.code_base_url,
    }
    return tuple(flag for flag, differs in given.items() if differs)


def records_problem(roots: Iterable[Path]) -> str | None:
    """Why the records cannot be read at all (one line with the next step), or None."""
    for root in roots:
        if not root.exists():
            return f"--records {root}: no such file or directory. Next: pass the directory that holds your record files"
        if not os.access(root, os.R_OK | (os.X_OK if root.is_dir() else 0)):
            return f"--records {root}: permission denied. Next: make it readable by this user, or pass another directory"
    return None


def build_live_server(settings: Settings, auth: tuple[StaticTokens, AuthSettings] | None = None) -> tuple[PapercodeServer, LiveCorpus]:
    """The server over a live corpus of `settings.records` (built in the background once it runs),
    with verified code (and HTTP auth, when given)."""
    from papercode.corpus.reload import ColdBuildProgress, LiveCorpus, ready_line
    from papercode.corpus.snapshot import records_part, served_key
    from papercode.corpus.stages import Stage, open_stages
    from papercode.edge.app import build_server

    roots, archive = settings.roots, settings.served_archive
    terminal, build = LoadProgress(), ColdBuildProgress()

    def progress(done: int, total: int, records: int) -> None:
        build(done, total, records)
        terminal(done, total, records)

    live = LiveCorpus(
        stages=lambda key: open_stages(
            roots, settings.limits, settings.cache_dir, progress, key and records_part(key), archive_dir=archive
        ),
        fingerprint=lambda: served_key(roots, settings.limits, archive),
        progress=build,
    )

    def announce(stage: Stage, seconds: float) -> None:  # what is ready, on stderr beside the startup line
        sys.stderr.write(f"papercode: {ready_line(stage, seconds)}\n")

    async def give_memory_back(_: object) -> None:  # the corpus replaced (or the one that failed) is gone by now
        await anyio.to_thread.run_sync(memory.return_free_memory)

    live.on_stage(announce)
    server = build_server(live, verified_code(settings), auth=auth, ready_timeout=settings.ready_timeout, views=not settings.no_views)
    live.on_swap(server.notify_corpus_changed)
    live.on_failure(server.notify_reload_failed)
    live.on_swap(give_memory_back)
    live.on_failure(give_memory_back)
    return server, live


def serve(settings: Settings) -> int:
    # Until the server takes its signals over (edge.stdio, uvicorn), SIGTERM stops it as Ctrl-C does: quietly, exit 0.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        status = _serve(settings)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM while starting (or in the last moments of stopping)
        status = 0
    _end_now_if_still_building(status)
    return status


def _end_now_if_still_building(status: int) -> None:
    """A build cannot be interrupted, and the interpreter would wait for its thread at exit: when one is
    still running once serving has stopped (Ctrl-C, SIGTERM, the client gone mid-build), stop its child,
    remove the scratch files and end the process now, with `status`."""
    if not any(thread.is_alive() and not thread.daemon for thread in threading.enumerate() if thread is not threading.current_thread()):
        return
    scratch.remove_all()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def _serve(settings: Settings) -> int:
    from papercode.edge.access import StaticTokens, auth_for
    from papercode.edge.health import add_health_route
    from papercode.edge.http import serve_http, url_of
    from papercode.edge.startup import StartupError, bind, check_exposure, read_tokens

    sock = None
    try:
        if settings.transport != "stdio":
            tokens = read_tokens(settings, os.environ)
            check_exposure(settings, tokens)
            sock = bind(settings.host, settings.port)
    except StartupError as error:
        return fail(str(error))
    auth = (StaticTokens(tokens), auth_for(url_of(sock, settings.transport))) if sock is not None and tokens else None
    memory.fix_mapping_threshold()
    server, live = build_live_server(settings, auth)
    if sock is not None:
        add_health_route(server, live.health)

    async def run() -> None:
        async with anyio.create_task_group() as tasks:
            if settings.watch:
                tasks.start_soon(live.watch, settings.watch_interval)
            if hasattr(signal, "SIGHUP"):
                await tasks.start(live.reload_on_sighup)
            if sock is None:
                await server.run_stdio_async()  # loads the records in the background as it serves
            else:
                async with server.running():
                    await serve_http(server, settings, sock, auth)
            tasks.cancel_scope.cancel()

    anyio.run(run)
    return 0


async def call_tool(settings: Settings, tool: str, pairs: list[str]) -> int:
    from mcp import Client, MCPError

    from papercode.edge.app import build_server

    arguments: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            return fail(f"call: expected key=value, got {pair!r}")
        arguments[key] = value
    corpus = await anyio.to_thread.run_sync(open_corpus, settings)
    code = verified_code(settings)
    try:
        async with Client(build_server(lambda: corpus, code)) as client:
            try:
                result = await client.call_tool(tool, arguments)
            except MCPError as error:  # a protocol error, e.g. an unknown tool
                sys.stderr.write(f"{error.error.message}\n")
                return 1
    finally:
        await code.aclose()
    text = "".join(block.text for block in result.content if block.type == "text")
    (sys.stderr if result.is_error else sys.stdout).write(text + "\n")
    return 1 if result.is_error else 0


def check(settings: Settings) -> int:
    """Load the records and verify every file in the code store; exit 1 if anything is wrong."""
    corpus = Corpus.load(settings.roots, settings.limits, LoadProgress(), archive_dir=settings.served_archive)
    report = corpus.index.report
    store = CodeStore.for_records(settings.code_dir, settings.records)
    verified, bad = store.verify_all()
    out = sys.stdout.write
    out(f"records: {', '.join(report.roots)}\n")
    out(f"files: {report.files_seen} found, {report.files_read} read\n")
    out(f"records: {report.records_read} read, {report.records_indexed} indexed\n")
    out(f"problems: {report.rejected} rejected, {report.warnings} warnings\n")
    out(f"code store: {verified} verified, {bad} bad ({', '.join(map(str, store.dirs))})\n")
    if settings.archive:
        archive = corpus.archive
        if archive is None:
            out(f"archive: {corpus.archive_note}\n")
        else:
            out(
                f"archive: build {archive.build_id} ({len(archive):,} papers, data of {archive.manifest.data_date}), {settings.archive_dir.shown}\n"
            )
    _print_grouped(
        ((problem.severity, problem.code), f"{problem.where()}: {problem.reason}") for problem in [*report.problems, *store.problems]
    )
    return 1 if report.rejected or bad or corpus.archive_note else 0


def materialize(settings: Settings, args: argparse.Namespace) -> int:
    if not args.repos and not args.fetch:
        return fail("materialize needs a source: --repos DIR (local clones) and/or --fetch (download). Next: add one")
    if args.repos and not args.repos.is_dir():
        return fail(f"--repos {args.repos} is not a directory. Next: pass the directory that holds <owner>/<name> clones")
    corpus = open_corpus(settings)
    try:
        rows = samples_to_materialize(corpus, args.status, args.paper or (), args.repo or ())
    except QueryError as error:
        return fail(str(error))
    store = CodeStore(settings.code_dir)
    clones = LocalClones(args.repos) if args.repos else None
    fetcher = SourceFetcher(settings.code_base_url) if args.fetch else None
    materializer = Materializer(store, clones=clones, fetcher=fetcher)

    async def run() -> MaterializeSummary:
        try:
            return await materialize_corpus(rows, materializer, MaterializeProgress())
        finally:
            if fetcher is not None:
                await fetcher.aclose()

    summary = anyio.run(run)
    return 0 if print_materialized(summary, store) else 1


def samples_to_materialize(corpus: Corpus, status: str | None, papers: Sequence[str], repos: Sequence[str]) -> list[SampleRow]:
    """Every sample of the corpus, or those with these statuses, of these papers, from these repos."""
    from papercode.answers.checks import check_statuses
    from papercode.answers.resolving import resolve_paper, resolve_repo

    statuses = set(check_statuses(corpus, status)) if status else None
    wanted_repos = set(map(resolve_repo, repos))
    chosen = [resolve_paper(corpus, paper)[0] for paper in papers] if papers else corpus.index.papers
    return [
        row
        for paper in chosen
        for row in corpus.index.samples_of(paper)
        if (statuses is None or row.status in statuses) and (not wanted_repos or row.repo.lower() in wanted_repos)
    ]


def config(settings: Settings, host: str) -> int:
    records = [] if settings.records == Settings().records else list(settings.records)
    text, where = snippet(host, records, (settings.host, settings.port), settings.served_archive)
    sys.stdout.write(text + "\n")
    sys.stderr.write(f"papercode: paste this into {where}\n")
    return 0


def print_materialized(summary: MaterializeSummary, store: CodeStore) -> int:
    """Print what `papercode materialize` did; return how many of its samples have their code in the store now."""
    out = sys.stdout.write
    counts = summary.counts
    stored = sum(1 for outcome in summary.outcomes if outcome.verified and store.contains(outcome.sha))  # a write may have failed
    already = counts["already_stored"]
    out(
        f"{len(summary.outcomes)} samples: {stored} stored now in {store.write_dir} (rebuilt with {interpreter()}), "
        f"{already} stored already, {len(summary.outcomes) - stored - already} not stored\n"
    )
    for outcome, count in summary.counts.most_common():
        out(f"  {outcome:<22}{count:>8}  {OUTCOMES[outcome]}\n")  # type: ignore[index]
    _print_grouped(
        ((outcome.outcome, ""), f"{outcome.sha} {outcome.repo}/{outcome.path}:{outcome.entry}: {outcome.reason}")
        for outcome in summary.outcomes
        if not outcome.verified and outcome.outcome != "already_stored"
    )
    if not summary.usable:
        out("nothing could be verified\n")
    elif not stored + already:
        out(f"nothing could be stored in {store.write_dir} (the warnings above say why)\n")
    return stored + already


def _print_grouped(items: Iterable[tuple[tuple[str, str], str]]) -> None:
    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key, line in items:
        grouped[key].append(line)
    out = sys.stdout.write
    for (first, second), lines in sorted(grouped.items()):
        out(f"\n{first} {second} ({len(lines)}):\n".replace("  (", " ("))
        for line in lines[:EXAMPLES_SHOWN]:
            out(f"  {line}\n")
        if len(lines) > EXAMPLES_SHOWN:
            out(f"  … and {len(lines) - EXAMPLES_SHOWN} more\n")
