"""The Code-with-Papers record schema: typed models for the fields papercode uses.

Every model keeps unknown fields (`extra="allow"`): the format grows, and a new field must
never cost a record its place. Types are strict where a wrong type would mislead an agent
(`inline_ok` must be a real boolean: "yes" is not permission to show code).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

import msgspec
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr, field_validator

from .ids import LOWER_HEX, MAX_OWNER_CHARS, MAX_REPO_NAME_CHARS, SHA_PREFIX_LENGTH

# Statuses in order, best first for an agent looking for working code. Unknown values are
# kept and rank after these.
KNOWN_STATUSES: tuple[str, ...] = ("ran_honours", "ran", "ran_draft_wrong", "ran_violates", "unverified")
OFFICIAL_KIND = "official"  # the repository kind of the paper's own code (listings put it first: see `ordering`)
REPO_KINDS: tuple[str, ...] = (OFFICIAL_KIND, "named_in_paper", "found_in_text", "listed", "community")
NO_LICENCE = "NONE"  # a sample's licence when none was found (the records write it; a missing one counts as it)
# The prose the model reads, generated from the orders above so that it cannot drift from them.
STATUS_ORDER_TEXT = " > ".join(KNOWN_STATUSES)  # best first: "ran_honours > ran > ... > unverified"
STATUS_CHOICES_TEXT = f"{', '.join(KNOWN_STATUSES[:-1])} or {KNOWN_STATUSES[-1]}"
REPO_KIND_CHOICES_TEXT = f"{', '.join(REPO_KINDS[:-1])} or {REPO_KINDS[-1]}"
# The index keeps verification levels in a 64-bit column (its lowest value means "none").
LEVEL_MIN, LEVEL_MAX = -(2**63) + 1, 2**63 - 1


def _zero_one_flag(value: Any) -> Any:
    # The archive writes flags as 0/1; accept real booleans too, nothing else.
    if value in (0, 1) and not isinstance(value, float):
        return bool(value)
    return value


Flag = Annotated[StrictBool, BeforeValidator(_zero_one_flag)]
ShaPrefix = Annotated[StrictStr, Field(pattern=rf"^[0-9a-f]{{{SHA_PREFIX_LENGTH}}}$")]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Reach(_Open):
    status: StrictStr | None = None
    spdx: StrictStr | None = None


class CodeLink(_Open):
    repo_url: StrictStr
    is_official: Flag = False
    mentioned_in_paper: Flag | None = None
    mentioned_in_github: Flag | None = None
    framework: StrictStr | None = None
    reach: Reach | None = None


class Task(_Open):
    task_slug: StrictStr
    task_name: StrictStr | None = None


class Method(_Open):
    method_slug: StrictStr | None = None
    method_name: StrictStr


class Source(_Open):
    archive: StrictStr | None = None
    snapshot: StrictStr | None = None
    licence_url: StrictStr | None = None
    row_kind: StrictStr | None = None


# Sample fields are identifiers shown in every listing: bounded so one hostile sample cannot
# flood an answer (real ones are far shorter). A sample over a bound is dropped and reported.
# Each bound holds for both schemas below (the pydantic models and the fast path).
MAX_NAME_CHARS = 200
MAX_WORD_CHARS = 64
MIN_REPO_CHARS, MAX_REPO_CHARS = 3, MAX_OWNER_CHARS + 1 + MAX_REPO_NAME_CHARS  # owner/name
MAX_PATH_CHARS = 400
MAX_URL_CHARS = 1_000
# A record's lists (authors, tasks, methods, code links) are cut to this many entries, the cut reported: the
# largest collaborations sign a few thousand papers' authors, and a million tiny entries in one record would
# cost the server gigabytes while staying under the line cap.
MAX_LIST_ENTRIES = 10_000
Name = Annotated[StrictStr, Field(min_length=1, max_length=MAX_NAME_CHARS)]
Word = Annotated[StrictStr, Field(min_length=1, max_length=MAX_WORD_CHARS)]


class Sample(_Open):
    code_sha256_prefix: ShaPrefix
    entry: Name
    repo: Annotated[StrictStr, Field(min_length=MIN_REPO_CHARS, max_length=MAX_REPO_CHARS)]
    repo_kind: Word
    path: Annotated[StrictStr, Field(min_length=1, max_length=MAX_PATH_CHARS)]
    file_url: Annotated[StrictStr, Field(max_length=MAX_URL_CHARS)] | None = None
    link_basis: StrictStr | None = None
    language: Word | None = None
    status: Word
    verification_level: Annotated[StrictInt, Field(ge=LEVEL_MIN, le=LEVEL_MAX)] | None = None
    contract_check: Word | None = None
    metamorphic_tier: StrictStr | None = None
    behaviour_fingerprint: StrictBool | None = None
    licence: Word | None = None
    inline_ok: StrictBool


class RepoKindCounts(_Open):
    samples: StrictInt = 0
    ran: StrictInt = 0
    repositories: StrictInt = 0


class Syntology(_Open):
    read_at: StrictStr | None = None
    claim: StrictStr | None = None
    summary: dict[str, StrictInt] | None = None
    by_repo_kind: dict[str, RepoKindCounts] | None = None
    n_pointer_only_for_licence: StrictInt | None = None
    samples: list[Sample] = Field(default_factory=list)

    @field_validator("samples", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value


class Record(_Open):
    url: StrictStr | None = None
    title: Annotated[StrictStr, Field(min_length=1)]
    arxiv_id: StrictStr | None = None
    date: StrictStr | None = None
    proceeding: StrictStr | None = None
    authors: list[StrictStr] = Field(default_factory=list)
    abstract: StrictStr | None = None
    url_abs: StrictStr | None = None
    url_pdf: StrictStr | None = None
    source: Source | None = None
    code_links: list[CodeLink] = Field(default_factory=list)
    tasks: list[Task] = Field(default_factory=list)
    methods: list[Method] = Field(default_factory=list)
    syntology: Syntology | None = None

    @field_validator("authors", "code_links", "tasks", "methods", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value


# -- the fast path -------------------------------------------------------------------------
#
# msgspec Structs with the same fields, types and bounds as the pydantic models above. The loader
# decodes every record straight into these (unknown fields are skipped in C, nothing is built for
# them); only a record they reject goes through the pydantic models, which then say exactly what
# is wrong with it. They must never accept what the models reject: `tests/core/test_fast_records.py`
# holds the two to the same answers. Not tracked by the cyclic GC (`gc=False`): they hold data
# only, never a cycle.

_FastFlag = bool | Literal[0, 1]  # 0/1 as written by the archive: read it with bool()
# Its length is checked here; its digits once per record by `RecordDecoder` (a pattern here would run a
# regular expression per sample, a third of the decoding time).
_FastSha = Annotated[str, msgspec.Meta(min_length=SHA_PREFIX_LENGTH, max_length=SHA_PREFIX_LENGTH)]
_FastName = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME_CHARS)]
_FastRepo = Annotated[str, msgspec.Meta(min_length=MIN_REPO_CHARS, max_length=MAX_REPO_CHARS)]
_FastWord = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_WORD_CHARS)]
_FastPath = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_PATH_CHARS)]
_FastUrl = Annotated[str, msgspec.Meta(max_length=MAX_URL_CHARS)]
_FastTitle = Annotated[str, msgspec.Meta(min_length=1)]
_FastLevel = Annotated[int, msgspec.Meta(ge=LEVEL_MIN, le=LEVEL_MAX)]


class _Fast(msgspec.Struct, gc=False):
    pass


class ReachData(_Fast):
    status: str | None = None
    spdx: str | None = None


class CodeLinkData(_Fast):
    repo_url: str
    is_official: _FastFlag = False
    mentioned_in_paper: _FastFlag | None = None
    mentioned_in_github: _FastFlag | None = None
    framework: str | None = None
    reach: ReachData | None = None


class TaskData(_Fast):
    task_slug: str
    task_name: str | None = None


class MethodData(_Fast):
    method_name: str
    method_slug: str | None = None


class SourceData(_Fast):
    archive: str | None = None
    snapshot: str | None = None
    licence_url: str | None = None
    row_kind: str | None = None


class SampleData(_Fast):
    code_sha256_prefix: _FastSha
    entry: _FastName
    repo: _FastRepo
    repo_kind: _FastWord
    path: _FastPath
    status: _FastWord
    inline_ok: bool
    file_url: _FastUrl | None = None
    link_basis: str | None = None
    language: _FastWord | None = None
    verification_level: _FastLevel | None = None
    contract_check: _FastWord | None = None
    metamorphic_tier: str | None = None
    behaviour_fingerprint: bool | None = None
    licence: _FastWord | None = None


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


class RecordData(_Fast):
    """A validated record as the index reads it (a null list stays None: read it as empty)."""

    title: _FastTitle
    url: str | None = None
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
