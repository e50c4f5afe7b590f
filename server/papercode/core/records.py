"""The Code-with-Papers record schema: the fields papercode uses, declared once (msgspec Structs, the fast path),
with the pydantic models that say what is wrong with a record derived from them (`record_model`, the exact path)."""

from __future__ import annotations

import functools
import operator
from typing import Annotated, Any, Literal

import msgspec
import msgspec.inspect as mi
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr, create_model

from .ids import LOWER_HEX, MAX_OWNER_CHARS, MAX_REPO_NAME_CHARS, SHA_PREFIX_LENGTH

# Statuses in order, best first for an agent looking for working code, each with what it says of a sample (the words
# the views' legend shows a person). Unknown values are kept and rank after these.
STATUS_MEANINGS: dict[str, str] = {
    "ran_honours": "ran, and honours its contract",
    "ran": "ran on synthesized fixtures",
    "ran_draft_wrong": "ran, but its declared output was wrong",
    "ran_violates": "ran, and broke its contract",
    "unverified": "not run",
}
KNOWN_STATUSES: tuple[str, ...] = tuple(STATUS_MEANINGS)
OFFICIAL_KIND = "official"  # the repository kind of the paper's own code (listings put it first: see `ordering`)
REPO_KINDS: tuple[str, ...] = (OFFICIAL_KIND, "named_in_paper", "found_in_text", "listed", "community")
NO_LICENCE = "NONE"  # a sample's licence when none was found (the records write it; a missing one counts as it)
# The prose the model reads, generated from the orders above so that it cannot drift from them.
STATUS_ORDER_TEXT = " > ".join(KNOWN_STATUSES)  # best first: "ran_honours > ran > ... > unverified"
STATUS_CHOICES_TEXT = f"{', '.join(KNOWN_STATUSES[:-1])} or {KNOWN_STATUSES[-1]}"
REPO_KIND_CHOICES_TEXT = f"{', '.join(REPO_KINDS[:-1])} or {REPO_KINDS[-1]}"
# The index keeps verification levels in a 64-bit column (its lowest value means "none").
LEVEL_MIN, LEVEL_MAX = -(2**63) + 1, 2**63 - 1


# Sample fields are identifiers shown in every listing: bounded so one hostile sample cannot
# flood an answer (real ones are far shorter). A sample over a bound is dropped and reported.
MAX_NAME_CHARS = 200
MAX_WORD_CHARS = 64
MIN_REPO_CHARS, MAX_REPO_CHARS = 3, MAX_OWNER_CHARS + 1 + MAX_REPO_NAME_CHARS  # owner/name
MAX_PATH_CHARS = 400
MAX_URL_CHARS = 1_000
# A record's lists (authors, tasks, methods, code links) are cut to this many entries, the cut reported: the
# largest collaborations sign a few thousand papers' authors, and a million tiny entries in one record would
# cost the server gigabytes while staying under the line cap.
MAX_LIST_ENTRIES = 10_000

# -- the schema ----------------------------------------------------------------------------
#
# Declared once, as msgspec Structs: the loader decodes every record straight into these (unknown fields are
# skipped in C, nothing is built for them). Only a record they reject goes through the pydantic models derived
# from them below (`record_model`), which then say exactly what is wrong with it. Not tracked by the cyclic GC
# (`gc=False`): they hold data only, never a cycle. Keyword-only where a required field follows an optional one:
# fields keep the format's order, the order in which pydantic reports a record's faults.

Flag = bool | Literal[0, 1]  # 0/1 as written by the archive: read it with bool()
# Its length is checked here; its digits once per record by `RecordDecoder` (a pattern here would run a regular
# expression per sample, a third of the decoding time). The pydantic model checks the pattern instead.
ShaPrefix = Annotated[
    str,
    msgspec.Meta(min_length=SHA_PREFIX_LENGTH, max_length=SHA_PREFIX_LENGTH, extra={"pattern": rf"^[0-9a-f]{{{SHA_PREFIX_LENGTH}}}$"}),
]
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME_CHARS)]
RepoName = Annotated[str, msgspec.Meta(min_length=MIN_REPO_CHARS, max_length=MAX_REPO_CHARS)]
Word = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_WORD_CHARS)]
SamplePath = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_PATH_CHARS)]
FileUrl = Annotated[str, msgspec.Meta(max_length=MAX_URL_CHARS)]
Title = Annotated[str, msgspec.Meta(min_length=1)]
Level = Annotated[int, msgspec.Meta(ge=LEVEL_MIN, le=LEVEL_MAX)]


class _Fast(msgspec.Struct, gc=False):
    pass


class ReachData(_Fast):
    status: str | None = None
    spdx: str | None = None


class CodeLinkData(_Fast):
    repo_url: str
    is_official: Flag = False
    mentioned_in_paper: Flag | None = None
    mentioned_in_github: Flag | None = None
    framework: str | None = None
    reach: ReachData | None = None


class TaskData(_Fast):
    task_slug: str
    task_name: str | None = None


class MethodData(_Fast, kw_only=True):
    method_slug: str | None = None
    method_name: str


class SourceData(_Fast):
    archive: str | None = None
    snapshot: str | None = None
    licence_url: str | None = None
    row_kind: str | None = None


class SampleData(_Fast, kw_only=True):
    code_sha256_prefix: ShaPrefix
    entry: Name
    repo: RepoName
    repo_kind: Word
    path: SamplePath
    file_url: FileUrl | None = None
    link_basis: str | None = None
    language: Word | None = None
    status: Word
    verification_level: Level | None = None
    contract_check: Word | None = None
    metamorphic_tier: str | None = None
    behaviour_fingerprint: bool | None = None
    licence: Word | None = None
    inline_ok: bool


class RepoKindCountsData(_Fast):
    samples: int = 0
    ran: int = 0
    repositories: int = 0


class SyntologyData(_Fast):
    read_at: str | None = None
    claim: str | None = None
    summary: dict[str, int] | None = None
    by_repo_kind: dict[str, RepoKindCountsData] | None = None
    n_pointer_only_for_licence: int | None = None
    samples: list[SampleData] | None = None


class RecordData(_Fast, kw_only=True):
    """A validated record as the index reads it (a null list stays None: read it as empty)."""

    url: str | None = None
    title: Title
    arxiv_id: str | None = None
    date: str | None = None
    proceeding: str | None = None
    authors: list[str] | None = None
    abstract: str | None = None
    url_abs: str | None = None
    url_pdf: str | None = None
    source: SourceData | None = None
    code_links: list[CodeLinkData] | None = None
    tasks: list[TaskData] | None = None
    methods: list[MethodData] | None = None
    syntology: SyntologyData | None = None


# -- the exact path: pydantic models derived from the schema -------------------------------
#
# The same fields, types and bounds, strict where a wrong type would mislead an agent (`inline_ok` must be a real
# boolean: "yes" is not permission to show code), and open (`extra="allow"`): the format grows, and a new field
# must never cost a record its place. Each is named as its Struct without "Data" (pydantic names a model in its
# messages). They must never accept what the Structs reject: `tests/core/test_fast_records.py` holds the two to the
# same answers.


def _zero_one_flag(value: Any) -> Any:
    # The archive writes flags as 0/1; accept real booleans too, nothing else.
    if value in (0, 1) and not isinstance(value, float):
        return bool(value)
    return value


_FLAG = Annotated[StrictBool, BeforeValidator(_zero_one_flag)]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


def _exact_type(kind: mi.Type, models: dict[type, type[BaseModel]]) -> Any:
    """The pydantic annotation that checks what msgspec's `kind` does, strictly."""
    extra: dict[str, Any] = {}
    if isinstance(kind, mi.Metadata):
        extra, kind = dict(kind.extra or {}), kind.type
    if isinstance(kind, mi.UnionType):
        parts = [part for part in kind.types if not isinstance(part, mi.NoneType)]
        if len(parts) == 2 and {type(part) for part in parts} == {mi.BoolType, mi.LiteralType}:
            exact = _FLAG
        else:
            (part,) = parts  # the schema's unions are "a type or null", and Flag
            exact = _exact_type(part, models)
        return exact | None if len(parts) < len(kind.types) else exact
    if isinstance(kind, mi.StrType):
        # A pattern states the length too (and pydantic's message about it is the one the load report has said).
        bounds = {"pattern": extra["pattern"]} if "pattern" in extra else {"min_length": kind.min_length, "max_length": kind.max_length}
        return Annotated[StrictStr, Field(**bounds)]
    if isinstance(kind, mi.IntType):
        return Annotated[StrictInt, Field(ge=kind.ge, le=kind.le)]
    if isinstance(kind, mi.BoolType):
        return StrictBool
    if isinstance(kind, mi.ListType):
        return list[_exact_type(kind.item_type, models)]  # type: ignore[misc]
    if isinstance(kind, mi.DictType):
        return dict[str, _exact_type(kind.value_type, models)]  # type: ignore[misc]
    if isinstance(kind, mi.StructType):
        return _exact_model(kind.cls, models)
    raise TypeError(f"no pydantic twin for {kind!r}")


def _exact_model(struct: type[msgspec.Struct], models: dict[type, type[BaseModel]]) -> type[BaseModel]:
    if struct not in models:
        info = mi.type_info(struct)
        assert isinstance(info, mi.StructType)
        fields: dict[str, Any] = {
            field.name: (_exact_type(field.type, models), ... if field.required else field.default) for field in info.fields
        }
        models[struct] = create_model(struct.__name__.removesuffix("Data"), __base__=_Open, __module__=__name__, **fields)
    return models[struct]


@functools.cache
def record_model() -> type[BaseModel]:
    """The pydantic model of a record (`Record`), derived on first use: only a record the Structs reject needs it."""
    return _exact_model(RecordData, {})


_SHA = operator.attrgetter("code_sha256_prefix")


class RecordDecoder:
    """Decodes a record's JSON into `RecordData`, validating as the pydantic models do.

    Every sample hash must be lower-case hex: checked in one pass over a record's hashes joined
    (each has exactly `SHA_PREFIX_LENGTH` characters already), not with a pattern per sample.
    """

    def __init__(self) -> None:
        self._decode = msgspec.json.Decoder(RecordData).decode

    def decode(self, data: bytes) -> RecordData:
        """The record in `data`; `msgspec.ValidationError` (a `DecodeError`) when it is not a valid one."""
        record = self._decode(data)
        harvest = record.syntology
        if harvest is not None and harvest.samples and "".join(map(_SHA, harvest.samples)).strip(LOWER_HEX):
            raise msgspec.ValidationError("Expected `str` of lower-case hex digits - at `$.syntology.samples[...].code_sha256_prefix`")
        return record


RECORD_DECODER = RecordDecoder()
