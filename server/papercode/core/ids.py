"""Turn identifiers as people paste them into the index's canonical keys.

One resolver for every tool, resource and prompt: arXiv ids (new and old style, with or
without version, `arXiv:` prefix, abs/pdf URLs), Papers-with-Code slugs, repository names
and code hashes. Nothing here touches the index or MCP.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# New style: YYMM.NNNN(N); old style: archive(.SUBJ)/YYMMNNN. Both may carry vN.
_NEW_STYLE = r"\d{4}\.\d{4,5}"
_OLD_STYLE = r"[a-z][a-z\-]*(?:\.[a-z]{2})?/\d{7}"
_ARXIV_BODY = re.compile(rf"(?P<id>{_NEW_STYLE}|{_OLD_STYLE})(?:v(?P<version>\d+))?", re.IGNORECASE)
_ARXIV_URL = re.compile(r"https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/(?P<rest>.+?)(?:\.pdf)?/?$", re.IGNORECASE)
_ARXIV_PREFIX = re.compile(r"^arxiv:\s*", re.IGNORECASE)

# ASCII only: with IGNORECASE alone, `[a-z]` also matches the Kelvin sign and the dotless i.
_SLUG_PATTERN = r"[a-z0-9][a-z0-9\-_.]*"
_SLUG = re.compile(_SLUG_PATTERN, re.IGNORECASE | re.ASCII)
_LOWER_SLUG = re.compile(_SLUG_PATTERN, re.ASCII).fullmatch  # the archive's slugs are lower case: no folding, no copy
MAX_SLUG_CHARS = 200  # the archive's slugs are cut titles, well under this
PAPER_URL_PREFIX = "https://paperswithcode.com/paper/"  # a paper's URL as the archive writes it
_PAPER_URL = re.compile(
    r"^(?:https?://(?:www\.)?(?:paperswithcode\.com|codewithpapers\.app))?/paper/(?P<slug>[^/?#]+)/?$",
    re.IGNORECASE,
)

# GitHub's own bounds on a repository's owner and name.
MAX_OWNER_CHARS = 39
MAX_REPO_NAME_CHARS = 100

# What GitHub itself allows (stricter than the repository keys below, which take the archive's odd names too): what a
# source file is fetched from.
_GITHUB_OWNER = re.compile(rf"[A-Za-z0-9][A-Za-z0-9-]{{0,{MAX_OWNER_CHARS - 1}}}")
_GITHUB_NAME = re.compile(rf"[A-Za-z0-9._-]{{1,{MAX_REPO_NAME_CHARS}}}")


def is_github_owner(text: str) -> bool:
    """An owner GitHub allows: 1 to `MAX_OWNER_CHARS` letters, digits or hyphens, not starting with a hyphen."""
    return _GITHUB_OWNER.fullmatch(text) is not None


def is_github_repo_name(text: str) -> bool:
    """A repository name GitHub allows: 1 to `MAX_REPO_NAME_CHARS` letters, digits, `.`, `_` or `-`, not `.` or `..`."""
    return _GITHUB_NAME.fullmatch(text) is not None and text not in (".", "..")


GITHUB_HOST = "github.com"
GITHUB_URL = f"https://{GITHUB_HOST}/"  # a repository's page is GITHUB_URL + owner/name
# A part of owner/name: GitHub's characters, not dots alone (`.` and `..` are path steps, not names).
_REPO_PART = r"\.*[A-Za-z0-9_\-][A-Za-z0-9_.\-]*"
REPO_NAME_PATTERN = rf"{_REPO_PART}/{_REPO_PART}"  # owner/name, in any letter case

_REPO_URL = re.compile(rf"^(?:https?://)?(?:www\.)?{re.escape(GITHUB_HOST)}/", re.IGNORECASE)
_REPO_NAME = re.compile(rf"^{REPO_NAME_PATTERN}$")

LOWER_HEX = "0123456789abcdef"
HEX_DIGITS = frozenset(LOWER_HEX)
SHA_PREFIX_LENGTH = 16  # a sample's code hash: the first 16 hex characters of a sha256 (64 bits: one int column)
SHA_PREFIX_FORMAT = f"0{SHA_PREFIX_LENGTH}x"  # `format(int(sha, 16), SHA_PREFIX_FORMAT) == sha`


@dataclass(frozen=True, slots=True)
class ArxivId:
    """A parsed arXiv id: `canonical` has no version (the index key)."""

    canonical: str
    version: int | None


def parse_arxiv_id(text: str) -> ArxivId | None:
    """Parse any accepted arXiv id form; None when `text` is not an arXiv id."""
    value = text.strip()
    if _bare_new_style(value):
        return ArxivId(canonical=value, version=None)
    return _arxiv_id_by_patterns(value)


def _bare_new_style(value: str) -> bool:
    """A bare new-style id (YYMM.NNNN(N)), as most are asked and written: what the patterns would say of it, without
    running three of them."""
    return len(value) in (9, 10) and value.isascii() and value[4] == "." and value[:4].isdigit() and value[5:].isdigit()


def _arxiv_id_by_patterns(value: str) -> ArxivId | None:
    url = _ARXIV_URL.match(value)
    if url:
        value = url.group("rest")
    else:
        value = _ARXIV_PREFIX.sub("", value)
    match = _ARXIV_BODY.fullmatch(value)
    if not match:
        return None
    version = match.group("version")
    # Old-style archive names are lower case (hep-th, math.AG keeps its subject upper).
    canonical = match.group("id")
    if "/" in canonical:
        archive, number = canonical.split("/", 1)
        if "." in archive:
            name, subject = archive.split(".", 1)
            archive = f"{name.lower()}.{subject.upper()}"
        else:
            archive = archive.lower()
        canonical = f"{archive}/{number}"
    return ArxivId(canonical=canonical, version=int(version) if version else None)


def arxiv_id_from_number(value: float) -> str:
    """The arXiv id a JSON number spells, as clients send unquoted ids (`--tool-arg arxiv_id=2406.04823`).

    A number loses the leading zero of the year-month (0704.0001 arrives as 704.0001) and trailing
    zeros of the sequence number (2001.10000 arrives as 2001.1): the year-month is padded to 4 digits
    and the number to 5 digits from 1501 on, 4 before. Anything else is returned as its plain text.
    """
    text = repr(value) if isinstance(value, float) else str(value)
    whole, dot, fraction = text.partition(".")
    if not dot or not whole.isdigit() or not fraction.isdigit() or len(whole) > 4:
        return text
    year_month = whole.zfill(4)
    digits = 5 if year_month >= "1501" else 4
    if len(fraction) > digits:
        return text
    return f"{year_month}.{fraction.ljust(digits, '0')}"


def canonical_arxiv_id(raw: object) -> str | None:
    """The index key for a record's `arxiv_id` field (which should be bare already: then it is the key, as it is)."""
    if not isinstance(raw, str):
        return None
    if _bare_new_style(raw):
        return raw
    parsed = _arxiv_id_by_patterns(raw.strip())
    return parsed.canonical if parsed else None


def arxiv_id_prefix(text: str) -> str:
    """What a partly typed arXiv id (a completion's value) begins with: the id when it is whole, else the text
    without an `arXiv:` prefix."""
    parsed = parse_arxiv_id(text)
    return parsed.canonical if parsed else _ARXIV_PREFIX.sub("", text.strip())


def parse_slug(text: str) -> str | None:
    """A Papers-with-Code slug from a bare slug, `/paper/<slug>` or a paper URL (lower case); None when it is
    not one: ASCII letters, digits, `-`, `_` and `.`, a letter or digit first, at most `MAX_SLUG_CHARS`."""
    if text.startswith(PAPER_URL_PREFIX):  # the archive's form: one pattern, not two (the build runs this per row)
        slug = text[len(PAPER_URL_PREFIX) :]
        if len(slug) <= MAX_SLUG_CHARS and _LOWER_SLUG(slug):
            return slug
    value = text.strip()
    url = _PAPER_URL.match(value)
    if url:
        value = url.group("slug")
    return _slug(value)


def _slug(value: str) -> str | None:
    return value.lower() if len(value) <= MAX_SLUG_CHARS and _SLUG.fullmatch(value) else None


def slug_from_record_url(url: object) -> str | None:
    """The slug in a record's `url` field (`/paper/<slug>`), by the rule `parse_slug` applies; None otherwise."""
    if not isinstance(url, str):
        return None
    match = _PAPER_URL.match(url.strip())
    return _slug(match.group("slug")) if match else None


def bare_repo_url(text: str) -> str | None:
    """The GitHub URL a bare `owner/name` means (`GITHUB_URL` + it, as written); None when `text` is not one."""
    return GITHUB_URL + text if _REPO_NAME.fullmatch(text) else None


_PLAIN_REPO_URL = re.compile(f"{re.escape(GITHUB_URL)}({REPO_NAME_PATTERN})")


def repo_key(url: str) -> str | None:
    """`normalize_repo(url)`, with one regular expression for the usual `GITHUB_URL` + owner/name (a code link's
    URL, read per link when an index or an archive is built)."""
    plain = _PLAIN_REPO_URL.fullmatch(url)
    if plain is not None and not plain[1].lower().endswith(".git"):
        return plain[1].lower()
    return normalize_repo(url)


def normalize_repo(text: str) -> str | None:
    """`owner/name` (lower case) from a repo name or a GitHub URL; `<host>/<path>` for a GitLab,
    Bitbucket or Hugging Face repository URL (GitLab groups nest: `gitlab.com/group/subgroup/name`).

    Accepts `.git`, a trailing slash, `/tree/<branch>/<dir>` (GitLab's `/-/tree/…`, Bitbucket's `/src/…`)
    and any letter case.
    """
    hosted = _OTHER_HOST_URL.match(text.strip())
    if hosted is not None:
        return _hosted_repo(hosted["host"].lower(), hosted["path"])
    value = _REPO_URL.sub("", text.strip())
    parts = [part for part in value.split("/") if part]
    if len(parts) < 2:
        return None
    owner, name = parts[0], parts[1]
    if name.lower().endswith(".git"):
        name = name[:-4]
    candidate = f"{owner}/{name}"
    if not _REPO_NAME.fullmatch(candidate):
        return None
    return candidate.lower()


_OTHER_HOST_URL = re.compile(r"^(?:https?://)?(?:www\.)?(?P<host>gitlab\.com|bitbucket\.org|huggingface\.co)/(?P<path>.*)$", re.IGNORECASE)
_PATH_PART = re.compile(r"^[A-Za-z0-9_.\-]+$")
_HUB_KINDS = frozenset({"spaces", "datasets"})  # huggingface.co/<kind>/<owner>/<name>; models have no kind
_MAX_GROUP_DEPTH = 20


def _hosted_repo(host: str, path: str) -> str | None:
    path = path.split("?", 1)[0].split("#", 1)[0].split("/-/", 1)[0]  # GitLab browses under `/-/`
    parts = [part for part in path.split("/") if part]
    if parts and parts[-1].lower().endswith(".git"):
        parts[-1] = parts[-1][:-4]
    if host == "bitbucket.org":
        parts = parts[:2]
    elif host == "huggingface.co":
        parts = parts[: 3 if parts and parts[0].lower() in _HUB_KINDS else 2]
    if not 2 <= len(parts) <= _MAX_GROUP_DEPTH or not all(_PATH_PART.fullmatch(part) and part.strip(".") for part in parts):
        return None
    return f"{host}/{'/'.join(parts)}".lower()


def normalize_hex(text: str) -> str | None:
    """Lower-case hex string, or None when `text` has a non-hex character."""
    value = text.strip().lower()
    if value and set(value) <= HEX_DIGITS:
        return value
    return None


def is_sha_prefix(value: object) -> bool:
    """True for a record's `code_sha256_prefix`: exactly `SHA_PREFIX_LENGTH` lower-case hex characters."""
    return isinstance(value, str) and len(value) == SHA_PREFIX_LENGTH and set(value) <= HEX_DIGITS


def paper_key(arxiv_id: str | None, slug: str | None) -> str:
    """The id agents use for a paper: its arXiv id, else its slug (every paper has one of them)."""
    return arxiv_id or slug or ""


def duplicate_key(arxiv_id: str | None, slug: str | None) -> str:
    """The identity duplicate records share: `arxiv:<id>`, else `slug:<slug>`."""
    return f"arxiv:{arxiv_id}" if arxiv_id else f"slug:{slug}"
