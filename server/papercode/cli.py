"""`papercode serve | call | check`: run the server, call a tool in-process, check the records.

Logs and diagnostics go to stderr; in `serve` stdout carries only the MCP protocol.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import anyio

from . import __version__
from .corpus import Corpus
from .loading import Limits, LoadReport
from .settings import ENVIRONMENT, Settings, env_int, env_records

log = logging.getLogger("papercode")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="papercode", description="MCP server: from research papers to the code that implements them.")
    parser.add_argument("--version", action="version", version=f"papercode {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    def corpus_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--records",
            action="append",
            type=Path,
            metavar="DIR",
            help=f"records directory or file; repeatable (env {ENVIRONMENT['records']}, os.pathsep-separated; default: the bundled records)",
        )
        sub.add_argument("--max-file-bytes", type=int, help=f"cap on a .json/.txt record file (env {ENVIRONMENT['max_file_bytes']})")
        sub.add_argument("--max-line-bytes", type=int, help=f"cap on one .jsonl line (env {ENVIRONMENT['max_line_bytes']})")
        sub.add_argument("--max-string-chars", type=int, help=f"longer titles/abstracts are cut (env {ENVIRONMENT['max_string_chars']})")
        sub.add_argument("--log-level", help=f"stderr log level (env {ENVIRONMENT['log_level']}; default WARNING)")

    serve = commands.add_parser("serve", help="run the MCP server (stdio by default)")
    corpus_options(serve)
    serve.add_argument("--transport", choices=["stdio", "sse", "streamable-http"], default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP transports: address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="HTTP transports: port (default 8000)")

    call = commands.add_parser("call", help="call one tool in-process and print its answer")
    corpus_options(call)
    call.add_argument("tool", help="tool name, e.g. get_harvested_code_for_paper")
    call.add_argument("arguments", nargs="*", metavar="key=value", help="tool arguments; values are coerced to the tool's types")

    check = commands.add_parser("check", help="load the records and print the load report (exit 1 if anything was rejected)")
    corpus_options(check)
    return parser


def settings_from(args: argparse.Namespace) -> Settings:
    defaults = Limits()

    def pick(flag: int | None, name: str, default: int) -> int:
        value = flag if flag is not None else env_int(name)
        if value is not None and value <= 0:
            raise SystemExit(f"papercode: --{name.replace('_', '-')} must be positive")
        return value if value is not None else default

    limits = Limits(
        max_file_bytes=pick(args.max_file_bytes, "max_file_bytes", defaults.max_file_bytes),
        max_line_bytes=pick(args.max_line_bytes, "max_line_bytes", defaults.max_line_bytes),
        max_string_chars=pick(args.max_string_chars, "max_string_chars", defaults.max_string_chars),
    )
    records = tuple(args.records) if args.records else env_records()
    log_level = (args.log_level or os.environ.get(ENVIRONMENT["log_level"]) or "WARNING").upper()
    settings = Settings(limits=limits, log_level=log_level)
    if records:
        settings = replace(settings, records=records)
    if args.command == "serve":
        settings = replace(settings, transport=args.transport, host=args.host, port=args.port)
    return settings


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    settings = settings_from(args)
    logging.basicConfig(stream=sys.stderr, level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    corpus = Corpus.load(list(settings.records), settings.limits)
    if args.command == "check":
        return print_check(corpus.index.report)
    if args.command == "call":
        return anyio.run(call_tool, corpus, args.tool, args.arguments)
    return serve(corpus, settings)


def serve(corpus: Corpus, settings: Settings) -> int:
    from .app import build_server

    server = build_server(lambda: corpus)
    if settings.transport == "stdio":
        server.run("stdio")
    else:
        log.warning("serving MCP over %s on http://%s:%d", settings.transport, settings.host, settings.port)
        server.run(settings.transport, host=settings.host, port=settings.port)
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
