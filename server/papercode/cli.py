"""`papercode serve | call | check`: run the server, call a tool in-process, check the records.

Logs and diagnostics go to stderr; in `serve` stdout carries only the MCP protocol.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import anyio

from . import __version__
from .corpus import Corpus
from .loading import Limits, LoadReport
from .progress import LoadProgress
from .settings import ENVIRONMENT, Settings, env_cache_dir, env_float, env_int, env_records

log = logging.getLogger("papercode")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="papercode", description="MCP server: from research papers to the code that implements them.")
    parser.add_argument("--version", action="version", version=f"papercode {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    def corpus_options(sub: argparse.ArgumentParser, cached: bool = True) -> None:
        sub.add_argument(
            "--records",
            action="append",
            type=Path,
            metavar="DIR",
            help=f"records directory or file; repeatable (env {ENVIRONMENT['records']}, {os.pathsep!r}-separated; default: bundled records)",
        )
        sub.add_argument("--max-file-bytes", type=int, help=f"cap on a .json/.txt record file (env {ENVIRONMENT['max_file_bytes']})")
        sub.add_argument("--max-line-bytes", type=int, help=f"cap on one .jsonl line (env {ENVIRONMENT['max_line_bytes']})")
        sub.add_argument("--max-string-chars", type=int, help=f"longer titles/abstracts are cut (env {ENVIRONMENT['max_string_chars']})")
        sub.add_argument("--log-level", help=f"stderr log level (env {ENVIRONMENT['log_level']}; default WARNING)")
        if cached:
            sub.add_argument("--cache-dir", type=Path, help=f"index snapshot directory for warm starts (env {ENVIRONMENT['cache_dir']})")
            sub.add_argument("--no-cache", action="store_true", help="always build the index from the records; write no snapshot")

    serve = commands.add_parser("serve", help="run the MCP server (stdio by default)")
    corpus_options(serve)
    serve.add_argument("--transport", choices=["stdio", "sse", "streamable-http"], default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP transports: address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="HTTP transports: port (default 8000)")
    serve.add_argument("--watch", action="store_true", help="poll the records and reload the index when they change")
    serve.add_argument("--watch-interval", type=float, help=f"seconds between polls (env {ENVIRONMENT['watch_interval']}; default 5)")

    call = commands.add_parser("call", help="call one tool in-process and print its answer")
    corpus_options(call)
    call.add_argument("tool", help="tool name, e.g. get_harvested_code_for_paper")
    call.add_argument("arguments", nargs="*", metavar="key=value", help="tool arguments; values are coerced to the tool's types")

    check = commands.add_parser("check", help="load the records and print the load report (exit 1 if anything was rejected)")
    corpus_options(check, cached=False)
    return parser


def settings_from(args: argparse.Namespace) -> Settings:
    defaults = Settings()

    def positive(flag: int | None, name: str, default: int) -> int:
        value = flag if flag is not None else env_int(name)
        if value is not None and value <= 0:
            raise SystemExit(f"papercode: --{name.replace('_', '-')} must be positive")
        return value if value is not None else default

    limits = Limits(
        max_file_bytes=positive(args.max_file_bytes, "max_file_bytes", defaults.limits.max_file_bytes),
        max_line_bytes=positive(args.max_line_bytes, "max_line_bytes", defaults.limits.max_line_bytes),
        max_string_chars=positive(args.max_string_chars, "max_string_chars", defaults.limits.max_string_chars),
    )
    settings = replace(
        defaults,
        limits=limits,
        log_level=(args.log_level or os.environ.get(ENVIRONMENT["log_level"]) or defaults.log_level).upper(),
    )
    records = tuple(args.records) if args.records else env_records()
    if records:
        settings = replace(settings, records=records)
    cache_dir = getattr(args, "cache_dir", None) or env_cache_dir()
    if getattr(args, "no_cache", False) or cache_dir == Path("off"):
        settings = replace(settings, cache_dir=None)
    elif cache_dir is not None:
        settings = replace(settings, cache_dir=cache_dir)
    if args.command == "serve":
        interval = args.watch_interval if args.watch_interval is not None else env_float("watch_interval")
        if interval is not None and interval <= 0:
            raise SystemExit("papercode: --watch-interval must be positive")
        settings = replace(
            settings,
            transport=args.transport,
            host=args.host,
            port=args.port,
            watch=args.watch,
            watch_interval=interval or defaults.watch_interval,
        )
    return settings


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    settings = settings_from(args)
    logging.basicConfig(stream=sys.stderr, level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command == "check":
        return print_check(Corpus.load(list(settings.records), settings.limits, LoadProgress()).index.report)
    if args.command == "call":
        corpus = Corpus.open(list(settings.records), settings.limits, settings.cache_dir, LoadProgress())
        return anyio.run(call_tool, corpus, args.tool, args.arguments)
    return serve(settings)


def serve(settings: Settings) -> int:
    from .app import build_server
    from .reload import LiveCorpus
    from .snapshot import records_key

    roots = list(settings.records)
    progress = LoadProgress()
    live = LiveCorpus(
        build=lambda key: Corpus.open(roots, settings.limits, settings.cache_dir, progress, key=key),
        fingerprint=lambda: records_key(roots, settings.limits),
    )
    server = build_server(live)
    live.on_swap(server.notify_corpus_changed)

    async def run() -> None:
        async with anyio.create_task_group() as tasks:
            if settings.watch:
                tasks.start_soon(live.watch, settings.watch_interval)
            if hasattr(signal, "SIGHUP"):
                await tasks.start(live.reload_on_sighup)
            if settings.transport == "stdio":
                await server.run_stdio_async()
            else:
                log.warning("serving MCP over %s on http://%s:%d", settings.transport, settings.host, settings.port)
                if settings.transport == "sse":
                    await server.run_sse_async(host=settings.host, port=settings.port)
                else:
                    await server.run_streamable_http_async(host=settings.host, port=settings.port)
            tasks.cancel_scope.cancel()

    anyio.run(run)
    return 0


async def call_tool(corpus: Corpus, tool: str, pairs: list[str]) -> int:
    from mcp import Client

    from .app import build_server

    arguments: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            sys.stderr.write(f"papercode call: expected key=value, got {pair!r}\n")
            return 2
        arguments[key] = value
    async with Client(build_server(lambda: corpus)) as client:
        result = await client.call_tool(tool, arguments)
    text = "".join(block.text for block in result.content if block.type == "text")
    (sys.stderr if result.is_error else sys.stdout).write(text + "\n")
    return 1 if result.is_error else 0


def print_check(report: LoadReport) -> int:
    out = sys.stdout.write
    out(f"records: {', '.join(report.roots)}\n")
    out(f"files: {report.files_seen} found, {report.files_read} read\n")
    out(f"records: {report.records_read} read, {report.records_indexed} indexed\n")
    out(f"problems: {report.rejected} rejected, {report.warnings} warnings\n")
    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for problem in report.problems:
        grouped[(problem.severity, problem.code)].append(f"{problem.where()}: {problem.reason}")
    for (severity, code), items in sorted(grouped.items()):
        out(f"\n{severity} {code} ({len(items)}):\n")
        for item in items[:20]:
            out(f"  {item}\n")
        if len(items) > 20:
            out(f"  … and {len(items) - 20} more\n")
    return 1 if report.rejected else 0
