"""Decode and validate record files, reporting every problem instead of raising.

Each rejected file, line, record or sample becomes a `Problem` in the `LoadReport`, and every good
record is kept. Memory is bounded by the `Limits`: whole-file reads are capped, `.jsonl` is streamed a
line at a time with a line cap, and over-long strings are cut.

Two paths, one answer. Every record is first decoded by msgspec straight into the `RecordData`
structs (the fields papercode uses, validated in C; unknown fields skipped). A record that
fails there is parsed again with orjson and validated by the pydantic models, which say exactly
what is wrong (and drop only the bad samples); that slow path runs only for bad records.
Duplicates are not resolved here: see `duplicates`.
"""

from __future__ import annotations

import gzip
import logging
import operator
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

import msgspec
import orjson
from pydantic import ValidationError

from papercode.core.ids import canonical_arxiv_id, duplicate_key, slug_from_record_url
from papercode.core.limits import Limits
from papercode.core.load_report import LoadReport, ProgressCallback
from papercode.core.records import KNOWN_STATUSES, MAX_LIST_ENTRIES, RECORD_DECODER, RecordData, SyntologyData, record_model

from .files import RecordFile, find_record_files

log = logging.getLogger(__name__)

_BOM = b"\xef\xbb\xbf"
_READ_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class LoadedRecord:
    """A validated record, its keys (resolved once) and where it came from (`line` for `.jsonl`)."""

    record: RecordData
    path: str
    line: int | None = None
    arxiv_id: str | None = None  # canonical, no version
    slug: str | None = None

    @property
    def duplicate_key(self) -> str:
        """The identity duplicates share: `arxiv:<id>`, else `slug:<slug>` (not the paper's key, which has no prefix)."""
        return duplicate_key(self.arxiv_id, self.slug)

    @property
    def read_at(self) -> str:
        harvest = self.record.syntology
        return (harvest.read_at or "") if harvest else ""


_PROGRESS_EVERY = 1_000  # records between progress calls inside one `.jsonl` file
_COUNT_STATUS = operator.attrgetter("status")
_COUNT_KIND = operator.attrgetter("repo_kind")
_INLINE = operator.attrgetter("inline_ok")

_KNOWN_STATUSES = frozenset(KNOWN_STATUSES)


def iter_records(
    roots: list[Path],
    report: LoadReport,
    limits: Limits | None = None,
    progress: ProgressCallback | None = None,
    files: list[RecordFile] | None = None,
) -> Iterator[LoadedRecord]:
    """Every valid record under `roots`, one at a time (so memory holds one record, not all).

    `files` is what `find_record_files` found under `roots` when the caller walked them already.
    `progress` is called after each file and every thousand records inside a `.jsonl` file.
    Duplicates are not resolved here: see `DuplicateFilter`.
    """
    limits = limits or Limits()
    report.roots = [str(root) for root in roots]
    if files is None:
        files = [found for root in roots for found in find_record_files(root, report)]
    report.files_seen = total = len(files)
    for done, found in enumerate(files, 1):
        for data, line in _read_file(found.path, found.size, limits, report):
            report.records_read += 1
            loaded = _decode(data, found.path, line, limits, report)
            if loaded is not None:
                yield loaded
            if progress is not None and line is not None and line % _PROGRESS_EVERY == 0:
                progress(done - 1, total, report.records_read)
        if progress is not None:
            progress(done, total, report.records_read)


def _read_file(path: str, size: int, limits: Limits, report: LoadReport) -> Iterator[tuple[bytes, int | None]]:
    """The raw JSON texts in one file: the whole file, or each non-blank line of a `.jsonl` (with its number).

    `size` is what the walk saw: reading that much plus one byte allocates no more than the file
    needs (a read of the whole cap would allocate 32 MiB per file), and a file that grew since is
    read on to the cap.
    """
    name = path
    try:
        with _open(path) as stream:
            if name.removesuffix(".gz").endswith(".jsonl"):
                report.files_read += 1
                yield from _read_jsonl(stream, name, limits, report)
                return
            cap = limits.max_file_bytes + 1
            if name.endswith(".gz"):
                data = stream.read(cap)
            else:
                data = stream.read(min(size + 1, cap))
                if len(data) == size + 1 and len(data) < cap:
                    data += stream.read(cap - len(data))
    except IsADirectoryError:
        report.add("error", "not_a_file", name, "is a directory, not a record file")
        return
    except (OSError, EOFError, zlib.error) as exc:
        code = "bad_gzip" if isinstance(exc, (gzip.BadGzipFile, EOFError, zlib.error)) else "unreadable"
        report.add("error", code, name, f"cannot read: {getattr(exc, 'strerror', None) or exc}")
        return
    report.files_read += 1
    if len(data) > limits.max_file_bytes:
        report.add("error", "too_large", name, f"file is over the {limits.max_file_bytes:,}-byte cap")
        return
    yield data, None


def _open(path: str) -> IO[bytes]:
    if path.endswith(".gz"):
        return cast(IO[bytes], gzip.open(path, "rb"))
    # A whole file is read in one call, so no buffer is needed; `.jsonl` is read a line at a time (buffered).
    return open(path, "rb", buffering=-1 if path.endswith(".jsonl") else 0)


def _read_jsonl(stream: IO[bytes], name: str, limits: Limits, report: LoadReport) -> Iterator[tuple[bytes, int]]:
    """Each non-blank line with its number. A line over the cap is reported and passed over to its end, but a
    file's over-long lines are passed over for at most `max_file_bytes` in all: past that (a file of one endless
    line, a sparse file of zeros) the rest of the file is not read."""
    line_number = 0
    cap, budget = limits.max_line_bytes, limits.max_file_bytes
    while True:
        line = stream.readline(cap + 1)
        if not line:
            return
        line_number += 1
        if len(line) > cap and not line.endswith(b"\n"):
            passed = _skip_rest_of_line(stream, budget)
            if passed is None:
                report.add(
                    "error",
                    "too_large",
                    name,
                    f"line is over the {cap:,}-byte cap, and over-long lines ran past {limits.max_file_bytes:,} bytes: "
                    "the rest of the file is not read",
                    line_number,
                )
                return
            budget -= passed
            report.add("error", "too_large", name, f"line is over the {cap:,}-byte cap", line_number)
            continue
        if not line.strip():
            continue
        yield line, line_number


def _skip_rest_of_line(stream: IO[bytes], budget: int) -> int | None:
    """Read past the end of the current line: the bytes read, or None when its end is not within `budget` bytes."""
    passed = 0
    while passed <= budget:
        chunk = stream.readline(min(_READ_CHUNK, budget - passed + 1))
        passed += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return passed
    return None


def _parse(data: bytes, name: str, line: int | None, report: LoadReport) -> Any:
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    if not data.strip():
        report.add("error", "empty", name, "file is empty or only whitespace", line)
        return None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if exc.msg.startswith("str is not valid UTF-8"):  # orjson gives no useful position for these
            report.add("error", "bad_encoding", name, "not valid UTF-8", line)
        elif line is not None:  # orjson's line/column would count within this one .jsonl line
            report.add("error", "bad_json", name, f"not valid JSON: {exc.msg} (character {exc.pos + 1} of the line)", line)
        else:
            report.add("error", "bad_json", name, f"not valid JSON: {exc}", line)
        return None
    if not isinstance(value, dict):
        report.add("error", "not_an_object", name, f"a record must be a JSON object, found {_json_kind(value)}", line)
        return None
    return value


def _json_kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")


# -- validation ----------------------------------------------------------------------------


def _decode(data: bytes, name: str, line: int | None, limits: Limits, report: LoadReport) -> LoadedRecord | None:
    """One record from its JSON text: the fast path, else the exact one (see the module docstring)."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        record = RECORD_DECODER.decode(data)
    except (msgspec.DecodeError, RecursionError):  # a ValidationError is a DecodeError too
        value = _parse(data, name, line, report)
        return None if value is None else _validate(value, name, line, limits, report)
    return _accept(record, 0, name, line, limits=limits, report=report)


def _validate(value: dict[str, Any], name: str, line: int | None, limits: Limits, report: LoadReport) -> LoadedRecord | None:
    """The exact path: pydantic says what is wrong; a record whose only faults are samples keeps the rest."""
    dropped = 0
    try:
        record_model().model_validate(value)
    except ValidationError as exc:
        bad_samples = _bad_sample_positions(exc)
        if bad_samples is None:
            report.add("error", "invalid_record", name, _describe(exc), line)
            return None
        kept = _without_bad_samples(value, bad_samples, exc, name, line, report=report)
        if kept is None:
            return None
        value, dropped = kept, len(bad_samples)
    try:
        record = msgspec.convert(value, RecordData)
    except msgspec.ValidationError as exc:  # the two schemas disagree: reject, and say where
        report.add("error", "invalid_record", name, str(exc), line)
        return None
    return _accept(record, dropped, name, line, limits=limits, report=report)


def _accept(record: RecordData, dropped: int, name: str, line: int | None, *, limits: Limits, report: LoadReport) -> LoadedRecord | None:
    """Checks past the schema: a key to find the record by, caps on free text, the harvest's own sums."""
    arxiv_id, slug = canonical_arxiv_id(record.arxiv_id), slug_from_record_url(record.url)
    if arxiv_id is None and slug is None:
        report.add("error", "no_key", name, "record has neither a valid arxiv_id nor a /paper/<slug> url", line)
        return None
    if record.arxiv_id is not None and arxiv_id is None:
        report.add("warning", "bad_arxiv_id", name, f"arxiv_id {record.arxiv_id[:40]!r} is not an arXiv id; indexed by slug only", line)
    if record.url is not None and slug is None and arxiv_id is not None:
        report.add("warning", "bad_url", name, f"url {record.url[:60]!r} is not /paper/<slug>; indexed by arXiv id only", line)
    _cap_fields(record, limits, name, line, report)
    if record.syntology is not None:
        _check_harvest(record.syntology, dropped, name, line, report)
    return LoadedRecord(record, name, line, arxiv_id, slug)


def _bad_sample_positions(exc: ValidationError) -> set[int] | None:
    """Sample positions when every error is inside one sample; else None (reject the record)."""
    positions: set[int] = set()
    for error in exc.errors():
        loc = error["loc"]
        if len(loc) >= 3 and loc[0] == "syntology" and loc[1] == "samples" and isinstance(loc[2], int):
            positions.add(loc[2])
        else:
            return None
    return positions


def _without_bad_samples(
    value: dict[str, Any], bad: set[int], exc: ValidationError, name: str, line: int | None, *, report: LoadReport
) -> dict[str, Any] | None:
    for error in exc.errors():
        position = error["loc"][2]
        field_path = ".".join(str(part) for part in error["loc"][3:]) or "sample"
        report.add("error", "invalid_sample", name, f"sample {position} dropped: {field_path}: {error['msg']}", line)
    harvest = dict(value["syntology"])
    harvest["samples"] = [sample for i, sample in enumerate(harvest["samples"]) if i not in bad]
    kept = {**value, "syntology": harvest}
    try:
        record_model().model_validate(kept)
        return kept
    except ValidationError as again:
        report.add("error", "invalid_record", name, _describe(again), line)
        return None


def _describe(exc: ValidationError, most: int = 3) -> str:
    errors = exc.errors()
    parts = [f"{'.'.join(str(p) for p in e['loc']) or 'record'}: {e['msg']}" for e in errors[:most]]
    more = f" (+{len(errors) - most} more)" if len(errors) > most else ""
    return "; ".join(parts) + more


def _cap_fields(record: RecordData, limits: Limits, name: str, line: int | None, report: LoadReport) -> None:
    """Cut the free-text fields answers show, and the lists, to their caps; identifiers are left alone (the line
    and file caps bound them)."""
    cap = limits.max_string_chars
    authors = record.authors
    abstract, proceeding = record.abstract, record.proceeding
    if (
        len(record.title) <= cap
        and (abstract is None or len(abstract) <= cap)
        and (proceeding is None or len(proceeding) <= cap)
        and (not authors or (len(authors) <= MAX_LIST_ENTRIES and max(map(len, authors)) <= cap))
        and (record.tasks is None or len(record.tasks) <= MAX_LIST_ENTRIES)
        and (record.methods is None or len(record.methods) <= MAX_LIST_ENTRIES)
        and (record.code_links is None or len(record.code_links) <= MAX_LIST_ENTRIES)
    ):
        return  # the usual record: nothing to cut (checked without a loop over the fields: this runs per record)
    for field_name in ("title", "abstract", "proceeding"):
        text = getattr(record, field_name)
        if isinstance(text, str) and len(text) > cap:
            setattr(record, field_name, text[:cap])
            report.add("warning", "string_truncated", name, f"{field_name} cut from {len(text):,} to {cap:,} characters", line)
    for field_name in ("authors", "tasks", "methods", "code_links"):
        entries = getattr(record, field_name)
        if entries is not None and len(entries) > MAX_LIST_ENTRIES:
            setattr(record, field_name, entries[:MAX_LIST_ENTRIES])
            report.add("warning", "list_truncated", name, f"{field_name} cut from {len(entries):,} to {MAX_LIST_ENTRIES:,} entries", line)
    authors = record.authors or []
    long_names = [i for i, author in enumerate(authors) if len(author) > cap]
    if long_names:
        record.authors = [author[:cap] for author in authors]
        report.add("warning", "string_truncated", name, f"{len(long_names)} author name(s) cut to {cap:,} characters", line)


def _check_harvest(harvest: SyntologyData, dropped: int, name: str, line: int | None, report: LoadReport) -> None:
    samples = harvest.samples or []
    statuses = Counter(map(_COUNT_STATUS, samples))
    unknown = sorted(statuses.keys() - _KNOWN_STATUSES)
    if unknown:
        shown = ", ".join(repr(status[:40]) for status in unknown[:5]) + (" …" if len(unknown) > 5 else "")
        report.add("warning", "unknown_status", name, f"unknown status value(s) kept and indexed: {shown}", line)
    if dropped:
        return  # the aggregates counted the dropped samples too; that is already reported
    if harvest.summary is not None and _nonzero(harvest.summary) != dict(statuses):
        report.add("warning", "summary_mismatch", name, "syntology.summary disagrees with the samples; the samples win", line)
    if harvest.by_repo_kind is not None:
        declared = _nonzero({kind: counts.samples for kind, counts in harvest.by_repo_kind.items()})
        if declared != dict(Counter(map(_COUNT_KIND, samples))):
            report.add("warning", "by_repo_kind_mismatch", name, "syntology.by_repo_kind disagrees with the samples; the samples win", line)
    if harvest.n_pointer_only_for_licence is not None:
        pointer_only = len(samples) - sum(map(_INLINE, samples))
        if harvest.n_pointer_only_for_licence != pointer_only:
            report.add(
                "warning", "pointer_only_mismatch", name, "n_pointer_only_for_licence disagrees with the samples; the samples win", line
            )


def _nonzero(counts: dict[str, int]) -> dict[str, int]:
    return {key: count for key, count in counts.items() if count}
