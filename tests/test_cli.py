"""The `papercode` command line (`python -m papercode`), run as a subprocess: check, call, flags and env."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from conftest import BERT_MOUTH, BERT_MOUTH_TITLE, BERTS_ICL, make_record, write_records
from papercode import __version__

TIMEOUT_SECONDS = 60


@pytest.fixture
def environment(tmp_path: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PAPERCODE_")}
    env.update(HOME=str(tmp_path), PAPERCODE_CACHE_DIR=str(tmp_path / "cache"))
    return env


def papercode(environment: dict[str, str], *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "papercode", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        env={**environment, **extra_env},
        check=False,
    )


def test_check_on_bundled_records_prints_counts(environment: dict[str, str]) -> None:
    done = papercode(environment, "check")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "files: 2 found, 2 read" in lines
    assert "records: 2 read, 2 indexed" in lines
    assert "problems: 0 rejected, 0 warnings" in lines


def test_check_exits_1_when_a_record_is_rejected(environment: dict[str, str], tmp_path: Path) -> None:
    records = write_records(tmp_path / "records", [make_record(), {"title": "no key"}])
    done = papercode(environment, "check", "--records", str(records))
    assert done.returncode == 1
    assert "records: 2 read, 1 indexed" in done.stdout
    assert "problems: 1 rejected" in done.stdout
    assert "no_key" in done.stdout and "001.json" in done.stdout


def test_check_reads_records_from_the_environment(environment: dict[str, str], tmp_path: Path) -> None:
    first = write_records(tmp_path / "a", [make_record("2001.00001", "one")])
    second = write_records(tmp_path / "b", [make_record("2001.00002", "two")])
    done = papercode(environment, "check", PAPERCODE_RECORDS=f"{first}{os.pathsep}{second}")
    assert done.returncode == 0, done.stderr
    assert "records: 2 read, 2 indexed" in done.stdout


def test_records_flag_is_repeatable_and_beats_the_environment(environment: dict[str, str], tmp_path: Path) -> None:
    first = write_records(tmp_path / "a", [make_record("2001.00001", "one")])
    second = write_records(tmp_path / "b", [make_record("2001.00002", "two")])
    done = papercode(environment, "check", "--records", str(first), "--records", str(second), PAPERCODE_RECORDS=str(tmp_path / "nowhere"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "records: 2 read, 2 indexed" in done.stdout


def test_call_get_paper_prints_only_compact_json(environment: dict[str, str]) -> None:
    done = papercode(environment, "call", "get_paper", f"paper={BERT_MOUTH}")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert done.stdout == orjson.dumps(answer).decode() + "\n"
    assert answer["title"] == BERT_MOUTH_TITLE
    assert answer["query"] == {"asked": BERT_MOUTH, "resolved": BERT_MOUTH}


def test_call_coerces_arguments_to_the_tools_types(environment: dict[str, str]) -> None:
    done = papercode(environment, "call", "get_harvested_code_for_paper", f"arxiv_id={BERTS_ICL}", "limit=3", "status=ran,unverified")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert len(answer["samples"]) == 3 and answer["matched"] == 24 and "next_cursor" in answer


def test_call_stdout_is_only_json_even_when_logging_debug(environment: dict[str, str]) -> None:
    done = papercode(environment, "call", "corpus_stats", "--log-level", "DEBUG")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["papers"] == 2
    assert done.stdout.count("\n") == 1


def test_call_tool_error_exits_1_with_message_on_stderr(environment: dict[str, str]) -> None:
    done = papercode(environment, "call", "get_paper", "paper=9999.99999")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("not_found: no paper with arXiv id 9999.99999")
    assert "Next:" in done.stderr


def test_call_unknown_tool_exits_1(environment: dict[str, str]) -> None:
    done = papercode(environment, "call", "no_such_tool")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("not_found:")


def test_call_malformed_argument_exits_2(environment: dict[str, str]) -> None:
    done = papercode(environment, "call", "get_paper", BERT_MOUTH)
    assert done.returncode == 2 and done.stdout == ""
    assert "key=value" in done.stderr


def test_version(environment: dict[str, str]) -> None:
    done = papercode(environment, "--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"papercode {__version__}"


@pytest.mark.parametrize("value", ["0", "-5", "lots"])
def test_bad_numeric_setting_in_the_environment_is_refused(environment: dict[str, str], value: str) -> None:
    done = papercode(environment, "check", PAPERCODE_MAX_FILE_BYTES=value)
    assert done.returncode != 0
    assert "PAPERCODE_MAX_FILE_BYTES" in done.stderr
