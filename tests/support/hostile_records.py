"""The hostile record set: every kind of bad file, line, record and sample, beside the good records it hides, written
into a directory of the test's own (`write_hostile_set`; no third-party data) for the caps it is made for
(`HOSTILE_LIMITS`). `GOOD` names the good records and their files, `HOSTILE` what the load report must say about each
bad file. `plain_record` and `plain_sample` build a good record in the few fields the loader needs.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Any

import orjson

from papercode.core.limits import Limits

# Small caps so the oversized files stay small; the 5 MB abstract still fits in a file.
HOSTILE_LIMITS = Limits(max_file_bytes=6 * 1024 * 1024, max_line_bytes=64 * 1024, max_string_chars=100_000)


def plain_sample(sha: str, status: str = "ran", repo_kind: str = "official", inline_ok: Any = True, **extra: Any) -> dict[str, Any]:
    """A good sample, in another language than the real records' (see `language`)."""
    return {
        "code_sha256_prefix": sha,
        "entry": f"fn_{sha[:4]}",
        "repo": "owner/repo",
        "repo_kind": repo_kind,
        "path": "pkg/mod.py",
        "language": "rust",  # the real records' samples are all python: listings filter them apart
        "status": status,
        "licence": "MIT",
        "inline_ok": inline_ok,
        **extra,
    }


def plain_record(
    arxiv_id: str | None, title: str = "A good paper", samples: Any = None, read_at: str = "2025-01-01T00:00:00Z", **extra: Any
) -> dict[str, Any]:
    """A good record in the few fields the loader needs, with two samples unless `samples` says otherwise."""
    samples = [plain_sample("a" * 16), plain_sample("b" * 16, status="unverified", inline_ok=False)] if samples is None else samples
    record: dict[str, Any] = {
        "url": f"/paper/slug-{arxiv_id or 'none'}",
        "title": title,
        "arxiv_id": arxiv_id,
        "date": "2021-01-01",
        "authors": ["Ann Author"],
        "abstract": "An abstract.",
        "code_links": [{"repo_url": "https://github.com/owner/repo", "is_official": 1}],
        "syntology": {"read_at": read_at, "samples": samples},
    }
    record.update(extra)
    return record


def _truncated_gzip() -> bytes:
    return gzip.compress(orjson.dumps(plain_record("2101.00099")))[:-12]


# Good records in the hostile set, and which file each comes from.
GOOD = {
    "2101.00001": "good.json",
    "2101.00002": "bom.json",
    "2101.00003": "lines.jsonl",
    "2101.00004": "lines.jsonl",
    "2101.00005": "dup_new.json",
    "2101.00006": "dup_tie_a.json",
    "2101.00007": "status_number.json",
    "2101.00008": "inline_yes.json",
    "2101.00009": "bad_sha.json",
    "2101.00010": "huge_abstract.json",
    "2101.00011": "dir.json/inner.json",
    "2101.00012": "good.jsonl.gz",
    "2101.00013": "unknown_status.json",
    "2101.00014": "aggregates.json",
    "2101.00015": "sub/nested.txt",
    "2101.00016": "link_inside.json",
}

# (file, line or None, severity, code): what the load report must say about each hostile file.
HOSTILE: list[tuple[str, int | None, str, str]] = [
    ("malformed.json", None, "error", "bad_json"),
    ("truncated.json", None, "error", "bad_json"),
    ("empty.json", None, "error", "empty"),
    ("invalid_utf8.json", None, "error", "bad_encoding"),
    ("array.json", None, "error", "not_an_object"),
    ("number.json", None, "error", "not_an_object"),
    ("lines.jsonl", 2, "error", "bad_json"),
    ("lines.jsonl", 4, "error", "not_an_object"),
    ("lines.jsonl", 6, "error", "bad_json"),
    ("lines.jsonl", 7, "error", "too_large"),
    ("lines.jsonl", 8, "error", "bad_json"),
    ("lines.jsonl", 9, "error", "invalid_record"),
    ("authors_string.json", None, "error", "invalid_record"),
    ("samples_object.json", None, "error", "invalid_record"),
    ("status_number.json", None, "error", "invalid_sample"),
    ("inline_yes.json", None, "error", "invalid_sample"),
    ("missing_title.json", None, "error", "invalid_record"),
    ("missing_title_and_id.json", None, "error", "invalid_record"),
    ("no_key.json", None, "error", "no_key"),
    ("dup_old.json", None, "error", "duplicate"),
    ("dup_tie_b.json", None, "error", "duplicate"),
    ("bad_sha.json", None, "error", "invalid_sample"),
    ("huge_abstract.json", None, "warning", "string_truncated"),
    ("deep.json", None, "error", "bad_json"),
    ("deep_field.json", None, "error", "bad_json"),
    ("link_outside.json", None, "error", "symlink_outside"),
    ("link_outside_dir", None, "error", "symlink_outside"),
    ("unreadable.json", None, "error", "unreadable"),
    ("too_big.json", None, "error", "too_large"),
    ("bomb.json.gz", None, "error", "too_large"),
    ("not_gzip.json.gz", None, "error", "bad_gzip"),
    ("not_gzip.jsonl.gz", None, "error", "bad_gzip"),
    ("truncated_gzip.json.gz", None, "error", "bad_gzip"),
    ("fifo.json", None, "error", "not_a_file"),
    ("loop.json", None, "error", "unreadable"),
    ("dangling.json", None, "error", "unreadable"),
    ("unknown_status.json", None, "warning", "unknown_status"),
    ("aggregates.json", None, "warning", "summary_mismatch"),
    ("aggregates.json", None, "warning", "by_repo_kind_mismatch"),
    ("aggregates.json", None, "warning", "pointer_only_mismatch"),
]


def write_hostile_set(root: Path) -> Path:
    """Write every hostile file (and the good ones among them) under `root/records`."""
    records = root / "records"
    records.mkdir()
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.json").write_bytes(orjson.dumps(plain_record("2101.00999", title="Outside the records directory")))

    def put(name: str, data: bytes | str) -> None:
        path = records / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)

    good = orjson.dumps(plain_record("2101.00001"))
    put("good.json", good)
    put("malformed.json", '{"title": "x", "arxiv_id": 2101.0,, }')
    put("truncated.json", good[: len(good) // 2])
    put("empty.json", "")
    put("bom.json", b"\xef\xbb\xbf" + orjson.dumps(plain_record("2101.00002")))
    put("invalid_utf8.json", orjson.dumps(plain_record("2101.00098", title="broken \x01")).replace(b"\\u0001", b"\xff\xfe"))
    put("array.json", orjson.dumps([plain_record("2101.00097")]))
    put("number.json", "42")
    deep_line = b"[" * 100_000 + b"]" * 100_000
    put(
        "lines.jsonl",
        b"\n".join(
            [
                orjson.dumps(plain_record("2101.00003")),  # 1 good
                b'{"title": ',  # 2 bad JSON
                b"   ",  # 3 blank: skipped silently
                b"[1, 2]",  # 4 not an object
                orjson.dumps(plain_record("2101.00004")),  # 5 good
                b'{"title": "cut off", "arxiv_id": "2101.0',  # 6 truncated
                orjson.dumps(plain_record("2101.00096", abstract="x" * 100_000)),  # 7 over the line cap
                deep_line[:60_000],  # 8 deep nesting (under the line cap)
                orjson.dumps({"arxiv_id": "2101.00095"}),  # 9 no title
            ]
        )
        + b"\n",
    )
    put("authors_string.json", orjson.dumps(plain_record("2101.00094", authors="Ann Author, Bob Author")))
    put("samples_object.json", orjson.dumps(plain_record("2101.00093", samples={"0": plain_sample("c" * 16)})))
    put("status_number.json", orjson.dumps(plain_record("2101.00007", samples=[plain_sample("d" * 16, status=3), plain_sample("e" * 16)])))
    put(
        "inline_yes.json",
        orjson.dumps(plain_record("2101.00008", samples=[plain_sample("f" * 16, inline_ok="yes"), plain_sample("1" * 16)])),
    )
    missing_title = plain_record("2101.00092")
    del missing_title["title"]
    put("missing_title.json", orjson.dumps(missing_title))
    missing_both = plain_record(None)
    del missing_both["title"], missing_both["arxiv_id"], missing_both["url"]
    put("missing_title_and_id.json", orjson.dumps(missing_both))
    no_key = plain_record(None)
    del no_key["arxiv_id"], no_key["url"]
    put("no_key.json", orjson.dumps(no_key))
    put("dup_new.json", orjson.dumps(plain_record("2101.00005", title="Newer harvest", read_at="2025-06-01T00:00:00Z")))
    put("dup_old.json", orjson.dumps(plain_record("2101.00005", title="Older harvest", read_at="2025-01-01T00:00:00Z")))
    put("dup_tie_a.json", orjson.dumps(plain_record("2101.00006", title="First by path")))
    put("dup_tie_b.json", orjson.dumps(plain_record("2101.00006", title="Second by path")))
    put("bad_sha.json", orjson.dumps(plain_record("2101.00009", samples=[plain_sample("../../etc/passwd"), plain_sample("2" * 16)])))
    put("huge_abstract.json", orjson.dumps(plain_record("2101.00010", abstract="word " * 1_000_000)))
    put("deep.json", deep_line)
    put("deep_field.json", b'{"title": "deep", "arxiv_id": "2101.00091", "extra": ' + deep_line + b"}")
    put("dir.json/inner.json", orjson.dumps(plain_record("2101.00011")))
    put("good.jsonl.gz", gzip.compress(orjson.dumps(plain_record("2101.00012")) + b"\n"))
    put("sub/nested.txt", orjson.dumps(plain_record("2101.00015")))
    (records / "link_outside.json").symlink_to(outside / "secret.json")
    (records / "link_outside_dir").symlink_to(outside, target_is_directory=True)
    put("target_inside.dat", orjson.dumps(plain_record("2101.00016")))  # not a record name itself: reached only by the link
    (records / "link_inside.json").symlink_to(records / "target_inside.dat")
    (records / "link_to_good.json").symlink_to(records / "good.json")  # the same file twice: read once
    put("unreadable.json", orjson.dumps(plain_record("2101.00090")))
    (records / "unreadable.json").chmod(0)
    put("too_big.json", b" " * (HOSTILE_LIMITS.max_file_bytes + 1) + orjson.dumps(plain_record("2101.00089")))
    put("bomb.json.gz", gzip.compress(b" " * (HOSTILE_LIMITS.max_file_bytes + 1) + b"{}"))
    put("not_gzip.json.gz", orjson.dumps(plain_record("2101.00088")))
    put("not_gzip.jsonl.gz", orjson.dumps(plain_record("2101.00087")) + b"\n")
    put("truncated_gzip.json.gz", _truncated_gzip())
    os.mkfifo(records / "fifo.json")
    (records / "loop.json").symlink_to(records / "loop.json")
    (records / "dangling.json").symlink_to(records / "gone.json")
    put(
        "unknown_status.json",
        orjson.dumps(plain_record("2101.00013", samples=[plain_sample("3" * 16, status="ran_on_gpu"), plain_sample("4" * 16)])),
    )
    aggregates = plain_record("2101.00014")
    aggregates["syntology"].update(
        summary={"ran": 5, "unverified": 1},
        by_repo_kind={"official": {"samples": 9, "ran": 5, "repositories": 1}},
        n_pointer_only_for_licence=0,
    )
    put("aggregates.json", orjson.dumps(aggregates))
    put(".hidden.json", "not even JSON")  # hidden files are not record files
    put("notes.md", "not a record")
    return records
