"""The fast path (msgspec `RecordData`) and the exact path (pydantic `Record`, `record_model`) accept exactly the same records.

The loader trusts the fast path for every record it accepts, and asks pydantic only about the ones it rejects: if
msgspec ever accepted what pydantic rejects, a bad record would slip in unreported. Each case is a record that
differs from a good one in one field.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest
from pydantic import ValidationError

from conftest import load_papers
from papercode.core.records import LEVEL_MAX, RECORD_DECODER, record_model


def _good() -> dict[str, Any]:
    return {
        "url": "/paper/a-good-paper",
        "title": "A good paper",
        "arxiv_id": "2101.00001",
        "authors": ["Ann Author"],
        "code_links": [{"repo_url": "https://github.com/owner/repo", "is_official": 1, "mentioned_in_paper": 0, "reach": {"status": "ok"}}],
        "tasks": [{"task_slug": "t", "task_name": "T"}],
        "methods": [{"method_name": "Adam"}],
        "source": {"snapshot": "2025-07-28"},
        "syntology": {
            "read_at": "2025-01-01T00:00:00Z",
            "summary": {"ran": 1},
            "by_repo_kind": {"official": {"samples": 1, "ran": 1, "repositories": 1}},
            "n_pointer_only_for_licence": 0,
            "samples": [
                {
                    "code_sha256_prefix": "0123456789abcdef",
                    "entry": "fn",
                    "repo": "owner/repo",
                    "repo_kind": "official",
                    "path": "pkg/mod.py",
                    "status": "ran",
                    "inline_ok": True,
                    "verification_level": 2,
                }
            ],
        },
        "unknown_field": {"anything": [1, 2.5, None, "x"]},
    }


def _with(path: str, value: Any) -> dict[str, Any]:
    record = _good()
    *parents, last = path.split(".")
    target: Any = record
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    if value is _DELETE:
        del target[int(last) if last.isdigit() else last]
    else:
        target[int(last) if last.isdigit() else last] = value
    return record


_DELETE = "<field removed>"  # a marker, not a value any case sets
SAMPLE = "syntology.samples.0"
CASES: list[tuple[str, Any]] = [
    ("title", ""),
    ("title", None),
    ("title", _DELETE),
    ("title", 3),
    ("arxiv_id", 2101.00001),
    ("authors", None),
    ("authors", "Ann Author"),
    ("authors", ["Ann", 3]),
    ("code_links", None),
    ("code_links", {"repo_url": "x"}),
    ("code_links.0.is_official", 0),
    ("code_links.0.is_official", True),
    ("code_links.0.is_official", 2),
    ("code_links.0.is_official", 1.0),
    ("code_links.0.is_official", "1"),
    ("code_links.0.mentioned_in_paper", None),
    ("code_links.0.repo_url", _DELETE),
    ("code_links.0.reach", "ok"),
    ("tasks.0.task_slug", None),
    ("methods.0.method_name", _DELETE),
    ("source", []),
    ("syntology", None),
    ("syntology.samples", None),
    ("syntology.samples", {"0": {}}),
    ("syntology.summary", {"ran": 1.0}),
    ("syntology.summary", {"ran": True}),
    ("syntology.by_repo_kind", {"official": {"samples": "1"}}),
    ("syntology.n_pointer_only_for_licence", 1.5),
    (f"{SAMPLE}.code_sha256_prefix", "0123456789abcdef\n"),
    (f"{SAMPLE}.code_sha256_prefix", "0123456789ABCDEF"),
    (f"{SAMPLE}.code_sha256_prefix", "0123456789abcde"),
    (f"{SAMPLE}.code_sha256_prefix", "../../etc/passwd"),
    (f"{SAMPLE}.entry", ""),
    (f"{SAMPLE}.entry", "e" * 200),
    (f"{SAMPLE}.entry", "e" * 201),
    (f"{SAMPLE}.entry", "🙂" * 200),
    (f"{SAMPLE}.repo", "ab"),
    (f"{SAMPLE}.repo", "r" * 141),
    (f"{SAMPLE}.repo_kind", "k" * 65),
    (f"{SAMPLE}.path", "p" * 401),
    (f"{SAMPLE}.file_url", "u" * 1001),
    (f"{SAMPLE}.file_url", None),
    (f"{SAMPLE}.language", ""),
    (f"{SAMPLE}.status", 3),
    (f"{SAMPLE}.status", _DELETE),
    (f"{SAMPLE}.inline_ok", "yes"),
    (f"{SAMPLE}.inline_ok", 1),
    (f"{SAMPLE}.inline_ok", _DELETE),
    (f"{SAMPLE}.verification_level", 1.0),
    (f"{SAMPLE}.verification_level", True),
    (f"{SAMPLE}.verification_level", LEVEL_MAX),
    (f"{SAMPLE}.verification_level", LEVEL_MAX + 1),
    (f"{SAMPLE}.verification_level", -(2**63)),
    (f"{SAMPLE}.behaviour_fingerprint", 0),
    (f"{SAMPLE}.licence", None),
    (f"{SAMPLE}.contract_check", "c" * 65),
]


@pytest.mark.parametrize(("path", "value"), CASES, ids=[f"{path}={value!r}"[:60] for path, value in CASES])
def test_fast_and_exact_paths_agree(path: str, value: Any) -> None:
    record = _with(path, copy.deepcopy(value))
    raw = orjson.dumps(record)
    try:
        record_model().model_validate(orjson.loads(raw))
        exact = True
    except ValidationError:
        exact = False
    try:
        RECORD_DECODER.decode(raw)
        fast = True
    except msgspec.DecodeError:
        fast = False
    assert fast == exact


def test_the_good_record_is_good() -> None:
    raw = orjson.dumps(_good())
    record_model().model_validate(orjson.loads(raw))
    assert RECORD_DECODER.decode(raw).title == "A good paper"


def test_a_record_the_fast_path_rejects_loses_only_its_bad_sample(tmp_path: Path) -> None:
    record = _good()
    record["syntology"]["samples"].append({**record["syntology"]["samples"][0], "code_sha256_prefix": "f" * 16, "status": 3})
    (tmp_path / "r.json").write_bytes(orjson.dumps(record))
    loaded, (paper,), report = load_papers([tmp_path])
    assert [sample.code_sha256 for sample in loaded.index.samples_of(paper)] == ["0123456789abcdef"]
    assert [(p.code, "sample 1" in p.reason) for p in report.problems] == [("invalid_sample", True)]


def test_an_unknown_field_is_skipped_whatever_it_holds(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_bytes(
        orjson.dumps(_good())[:-1] + b', "extra": {"deep": [[[["x"]]]], "n": 123456789012345678901234567890}}'
    )
    _, papers, report = load_papers([tmp_path])
    assert len(papers) == 1 and report.problems == []


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        ("code_links.0", 3, "Input should be a valid dictionary or instance of CodeLink"),
        ("code_links.0.is_official", "yes", "Input should be a valid boolean"),
        ("syntology.samples.0.code_sha256_prefix", "0123456789ABCDEF", "String should match pattern '^[0-9a-f]{16}$'"),
        ("syntology.samples.0.code_sha256_prefix", "abc", "String should match pattern '^[0-9a-f]{16}$'"),
        ("syntology.samples.0.inline_ok", 1, "Input should be a valid boolean"),
        ("syntology.samples.0.verification_level", LEVEL_MAX + 1, f"Input should be less than or equal to {LEVEL_MAX}"),
        ("syntology.samples.0.repo", "ab", "String should have at least 3 characters"),
        ("title", "", "String should have at least 1 character"),
        ("authors", "Ann", "Input should be a valid list"),
    ],
)
def test_the_exact_path_says_what_is_wrong_in_the_same_words(path: str, value: Any, said: str) -> None:
    """The pydantic models are derived from the Structs, and say what the load report has always said of a fault: the
    model's name, a sample hash's pattern (not its length), the bound crossed."""
    with pytest.raises(ValidationError) as caught:
        record_model().model_validate(_with(path, value))
    assert [(".".join(map(str, error["loc"])), error["msg"]) for error in caught.value.errors()] == [(path, said)]
