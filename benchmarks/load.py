"""HTTP under load: 50 clients making 20,000 calls over stateless streamable HTTP, quiet and under attack.

`python -m benchmarks.load [--papers 10000] [--clients 50] [--calls 20000] [--hostile 10]` generates a corpus (or takes
`--records DIR`), starts `papercode serve --transport streamable-http --stateless --port 0` as a subprocess, warms it,
then measures, from this process:

- the floor: MCP `ping` round trips on the same kind of connection (p50/p99);
- the quiet run: `--clients` clients, each with its own keep-alive connection, making `--calls` tool calls in all (a
  mix of the seven tools with arguments taken from the records), reporting calls/s, p50/p99 and errors;
- the hostile run: the same good clients while `--hostile` attackers run beside them: half send oversized arguments
  (a 4 MB `status` list, refused with 413) in a loop, half open connections and send half a request's headers, then
  wait (closed by the server after 10 s, and opened again);
- the server's RSS before, between and after the runs (/proc/<pid>/status), which should stay flat.

The target (issue 11): 0 errors, RSS flat, and the good clients' p99 under attack within 2x of the quiet run.
Numbers are printed with the machine and date; nothing here is a test.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import os
import platform
import random
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2

from .generate import write_corpus
from .harness import pythonpath
from .run import make_calls

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
LISTENING = re.compile(r"serving MCP over \S+ on (?P<url>http://\S+)")


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def start_server(records: Path, cache: Path) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "papercode",
            "serve",
            "--transport",
            "streamable-http",
            "--stateless",
            "--port",
            "0",
            "--records",
            str(records),
            "--cache-dir",
            str(cache),
            "--offline",
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=dict(os.environ, PYTHONPATH=pythonpath()),  # this checkout's papercode, not whatever the virtualenv installed
    )
    assert server.stderr is not None
    ready, _, _ = select.select([server.stderr], [], [], 600)
    line = server.stderr.readline() if ready else ""
    found = LISTENING.search(line)
    if found is None:
        server.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return server, found["url"]


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def good_clients(url: str, calls: list[tuple[str, dict[str, Any]]], clients: int) -> dict[str, Any]:
    """`clients` concurrent clients share the calls; (calls/s, p50, p99 in ms, errors)."""
    queue: asyncio.Queue[tuple[int, str, dict[str, Any]]] = asyncio.Queue()
    for number, (tool, arguments) in enumerate(calls):
        queue.put_nowait((number, tool, arguments))
    latencies: list[float] = []
    errors: list[str] = []

    async def client() -> None:
        async with httpx2.AsyncClient(timeout=60, limits=httpx2.Limits(max_connections=1)) as http:
            while not queue.empty():
                number, tool, arguments = queue.get_nowait()
                body = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
                started = time.perf_counter()
                try:
                    response = await http.post(url, headers=HEADERS, json=body)
                    answer = response.json()
                    if response.status_code != 200 or "result" not in answer:
                        errors.append(f"{tool}: HTTP {response.status_code} {str(answer)[:120]}")
                except (httpx2.HTTPError, ValueError) as exc:
                    errors.append(f"{tool}: {type(exc).__name__}: {exc}")
                latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    elapsed = time.perf_counter() - started
    return {
        "calls": len(latencies),
        "calls_per_s": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1e3,
        "p99_ms": percentile(latencies, 0.99) * 1e3,
        "errors": len(errors),
        "first_errors": errors[:5],
    }


async def pings(url: str, count: int) -> dict[str, float]:
    latencies = []
    async with httpx2.AsyncClient(timeout=60) as http:
        for number in range(count):
            started = time.perf_counter()
            response = await http.post(url, headers=HEADERS, json={"jsonrpc": "2.0", "id": number, "method": "ping"})
            response.raise_for_status()
            latencies.append(time.perf_counter() - started)
    return {"p50_ms": statistics.median(latencies) * 1e3, "p99_ms": percentile(latencies, 0.99) * 1e3}


async def oversized_arguments(url: str, stop: asyncio.Event, sent: list[int]) -> None:
    """A 4 MB `status` list, again and again (refused at 64 KiB)."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "list_samples_by_status", "arguments": {"status": ["ran"] * 700_000}},
        }
    ).encode()
    async with httpx2.AsyncClient(timeout=60) as http:
        while not stop.is_set():
            try:
                response = await http.post(url, headers=HEADERS, content=body)
                sent.append(response.status_code)
            except httpx2.HTTPError:
                sent.append(0)


async def half_sent_requests(url: str, stop: asyncio.Event, held: list[int]) -> None:
    """Connections that send half a request's headers and wait (closed by the server; opened again)."""
    host, port = url.removeprefix("http://").split("/")[0].rsplit(":", 1)
    while not stop.is_set():
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
        await writer.drain()
        held.append(1)
        with contextlib.suppress(TimeoutError, ConnectionError):
            await asyncio.wait_for(reader.read(1), timeout=60)  # returns b"" when the server closes it
        writer.close()


async def measure(url: str, pid: int, calls: list[tuple[str, dict[str, Any]]], clients: int, hostile: int) -> dict[str, Any]:
    result: dict[str, Any] = {"rss_start": rss_bytes(pid)}
    await good_clients(url, calls[: min(len(calls), 2_000)], clients)  # warm every tool and connection
    result["rss_warm"] = rss_bytes(pid)
    result["ping"] = await pings(url, 500)
    result["quiet"] = await good_clients(url, calls, clients)
    result["rss_after_quiet"] = rss_bytes(pid)
    stop = asyncio.Event()
    refused: list[int] = []
    held: list[int] = []
    attackers = [asyncio.create_task(oversized_arguments(url, stop, refused)) for _ in range(hostile - hostile // 2)]
    attackers += [asyncio.create_task(half_sent_requests(url, stop, held)) for _ in range(hostile // 2)]
    await asyncio.sleep(1)  # let the attack start
    result["hostile"] = await good_clients(url, calls, clients)
    stop.set()
    for attacker in attackers:
        attacker.cancel()
    await asyncio.gather(*attackers, return_exceptions=True)
    result["attack"] = {"oversized_sent": len(refused), "oversized_refused_413": refused.count(413), "half_sent_connections": len(held)}
    result["rss_end"] = rss_bytes(pid)
    return result


def report(result: dict[str, Any], papers: int) -> str:
    mib = 1024 * 1024
    quiet, hostile = result["quiet"], result["hostile"]
    lines = [
        f"# HTTP load: {papers:,} papers, stateless streamable HTTP, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        f"floor (MCP ping, one connection)   p50 {result['ping']['p50_ms']:.2f} ms   p99 {result['ping']['p99_ms']:.2f} ms",
        "run        calls  calls/s   p50 ms   p99 ms  errors",
    ]
    for name, run in (("quiet", quiet), ("hostile", hostile)):
        lines.append(f"{name:8s} {run['calls']:7,d} {run['calls_per_s']:8.0f} {run['p50_ms']:8.2f} {run['p99_ms']:8.2f} {run['errors']:7d}")
    attack = result["attack"]
    lines.append(
        f"attack: {attack['oversized_sent']:,} oversized requests ({attack['oversized_refused_413']:,} refused 413), "
        f"{attack['half_sent_connections']:,} half-sent connections"
    )
    lines.append(
        "server RSS MiB: start {:.0f}, warm {:.0f}, after quiet {:.0f}, end {:.0f}".format(
            *(result[key] / mib for key in ("rss_start", "rss_warm", "rss_after_quiet", "rss_end"))
        )
    )
    ratio = hostile["p99_ms"] / quiet["p99_ms"]
    verdict = "PASS" if ratio <= 2 and not quiet["errors"] and not hostile["errors"] else "MISS"
    lines.append(f"target: good clients' p99 under attack <= 2x quiet, 0 errors: {ratio:.2f}x, {verdict}")
    for run in (quiet, hostile):
        lines.extend(f"  error: {error}" for error in run["first_errors"])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.load")
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--records", type=Path, help="serve these records instead of generating a corpus")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--hostile", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="papercode-load-") as scratch:
        records = args.records or write_corpus(Path(scratch) / "records", args.papers, seed=args.seed, layout="jsonl")
        rng = random.Random(args.seed)
        per_tool = args.calls // 7 + 1
        by_tool = make_calls([records], per_tool, args.seed)
        calls = [(tool, arguments) for tool, arglist in by_tool.items() for arguments in arglist]
        rng.shuffle(calls)
        calls = calls[: args.calls]
        server, url = start_server(records, Path(scratch) / "cache")
        try:
            result = asyncio.run(measure(url, server.pid, calls, args.clients, args.hostile))
        finally:
            server.terminate()
            server.wait(timeout=60)
    print(report(result, args.papers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
