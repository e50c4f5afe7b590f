"""The id resolver on its own: arXiv ids, slugs, repositories and code hashes, without MCP."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from papercode.core.ids import (
    ArxivId,
    arxiv_id_from_number,
    arxiv_id_prefix,
    bare_repo_url,
    canonical_arxiv_id,
    is_github_owner,
    is_github_repo_name,
    is_sha_prefix,
    normalize_hex,
    normalize_repo,
    paper_key,
    parse_arxiv_id,
    parse_slug,
    slug_from_record_url,
)


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("1902.04094", None),
        ("1902.04094v2", 2),
        ("arXiv:1902.04094", None),
        ("ARXIV:1902.04094", None),
        ("arxiv: 1902.04094v2", 2),
        ("https://arxiv.org/abs/1902.04094v2", 2),
        ("http://arxiv.org/pdf/1902.04094v2.pdf", 2),
        ("https://arxiv.org/pdf/1902.04094", None),
        ("https://export.arxiv.org/abs/1902.04094", None),
        ("https://arxiv.org/abs/1902.04094/", None),
        ("  1902.04094v2 \n", 2),
        ("\t arXiv:1902.04094 ", None),
    ],
)
def test_new_style_forms_resolve_to_the_bare_id(text: str, version: int | None) -> None:
    assert parse_arxiv_id(text) == ArxivId(canonical="1902.04094", version=version)


def test_five_digit_number_keeps_all_digits() -> None:
    assert parse_arxiv_id("2106.12345") == ArxivId("2106.12345", None)
    assert parse_arxiv_id("0704.0001v1") == ArxivId("0704.0001", 1)


@pytest.mark.parametrize(
    ("text", "canonical", "version"),
    [
        ("hep-th/9901001", "hep-th/9901001", None),
        ("hep-th/9901001v3", "hep-th/9901001", 3),
        ("arXiv:hep-th/9901001", "hep-th/9901001", None),
        ("HEP-TH/9901001", "hep-th/9901001", None),
        ("https://arxiv.org/abs/hep-th/9901001v2", "hep-th/9901001", 2),
        ("http://arxiv.org/pdf/hep-th/9901001v1.pdf", "hep-th/9901001", 1),
        (" cond-mat/0102536 ", "cond-mat/0102536", None),
        ("math.AG/0101001", "math.AG/0101001", None),
        ("MATH.ag/0101001v2", "math.AG/0101001", 2),
    ],
)
def test_old_style_ids_parse_with_and_without_version(text: str, canonical: str, version: int | None) -> None:
    assert parse_arxiv_id(text) == ArxivId(canonical=canonical, version=version)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "bert",
        "1902.040",
        "1902.040945x",
        "19020.4094",
        "1902.04094v",
        "https://example.com/abs/1902.04094",
        "hep-th/990100",
        "/paper/berts-are-generative-in-context-learners",
        "1902.04094 1902.04095",
    ],
)
def test_non_ids_are_not_arxiv_ids(text: str) -> None:
    assert parse_arxiv_id(text) is None


def test_canonical_arxiv_id_of_record_fields() -> None:
    assert canonical_arxiv_id("1902.04094") == "1902.04094"
    assert canonical_arxiv_id("hep-th/9901001") == "hep-th/9901001"
    assert canonical_arxiv_id(None) is None
    assert canonical_arxiv_id(1902.04094) is None
    assert canonical_arxiv_id("not an id") is None
    assert canonical_arxiv_id(" 1902.04094v2 ") == "1902.04094"


@given(st.text(alphabet="0123456789.v: arXiv/hep-thAG٣", max_size=16))
def test_the_record_field_resolves_as_a_pasted_id_does(text: str) -> None:
    """`canonical_arxiv_id` (what a build keys a record by) takes its own short cut: it must agree with the resolver."""
    parsed = parse_arxiv_id(text)
    assert canonical_arxiv_id(text) == (parsed.canonical if parsed else None)


@pytest.mark.parametrize(
    ("text", "prefix"),
    [("1902.04094", "1902.04094"), ("arXiv:1902.04094v2", "1902.04094"), ("arXiv: 1902.0", "1902.0"), ("ARXIV:19", "19"), ("19", "19")],
)
def test_a_partly_typed_arxiv_id_completes_from_what_it_begins_with(text: str, prefix: str) -> None:
    assert arxiv_id_prefix(text) == prefix


def test_a_paper_is_keyed_by_its_arxiv_id_else_its_slug() -> None:
    assert paper_key("1902.04094", "bert") == "1902.04094"
    assert paper_key(None, "bert") == paper_key("", "bert") == "bert"


@pytest.mark.parametrize(
    "text",
    [
        "berts-are-generative-in-context-learners",
        "/paper/berts-are-generative-in-context-learners",
        "/paper/berts-are-generative-in-context-learners/",
        "https://paperswithcode.com/paper/berts-are-generative-in-context-learners",
        "https://www.paperswithcode.com/paper/berts-are-generative-in-context-learners",
        "http://codewithpapers.app/paper/berts-are-generative-in-context-learners",
        "https://codewithpapers.app/paper/BERTs-are-Generative-In-Context-Learners",
        "  berts-are-generative-in-context-learners  ",
    ],
)
def test_slug_forms(text: str) -> None:
    assert parse_slug(text) == "berts-are-generative-in-context-learners"


@pytest.mark.parametrize("text", ["", "has space", "https://example.com/paper/x", "/papers/x", "-leading-hyphen", "a/b"])
def test_non_slugs(text: str) -> None:
    assert parse_slug(text) is None


def test_slug_from_record_url() -> None:
    assert slug_from_record_url("/paper/bert-has-a-mouth-and-it-must-speak-bert-as-a") == "bert-has-a-mouth-and-it-must-speak-bert-as-a"
    assert slug_from_record_url(None) is None
    assert slug_from_record_url("https://example.com/x") is None


@pytest.mark.parametrize(
    "text",
    [
        "nyu-dl/bert-gen",
        "NYU-DL/Bert-Gen",
        "https://github.com/nyu-dl/bert-gen",
        "http://github.com/nyu-dl/bert-gen",
        "https://www.github.com/nyu-dl/bert-gen",
        "github.com/nyu-dl/bert-gen",
        "https://github.com/nyu-dl/bert-gen.git",
        "https://github.com/nyu-dl/bert-gen/",
        "https://github.com/nyu-dl/bert-gen.git/",
        "https://github.com/nyu-dl/bert-gen/tree/master/scripts",
        "https://github.com/nyu-dl/bert-gen/blob/HEAD/generate.py",
        "  HTTPS://GITHUB.COM/NYU-DL/BERT-GEN  ",
    ],
)
def test_repo_forms_normalise_to_owner_name(text: str) -> None:
    assert normalize_repo(text) == "nyu-dl/bert-gen"


@pytest.mark.parametrize("text", ["", "bert-gen", "https://github.com/nyu-dl", "nyu dl/bert gen", "owner/na;me"])
def test_non_repos(text: str) -> None:
    assert normalize_repo(text) is None


def test_a_bare_owner_name_means_github() -> None:
    assert bare_repo_url("Owner/Name") == "https://github.com/Owner/Name"  # as written
    assert bare_repo_url("owner/name.git") == "https://github.com/owner/name.git"
    for text in ("owner", "owner/name/more", "https://github.com/owner/name", "../..", "owner/na me"):
        assert bare_repo_url(text) is None, text


def test_github_owner_and_name_as_github_allows_them() -> None:
    assert is_github_owner("nyu-dl") and is_github_owner("a" * 39)
    for owner in ("", "-lead", "a" * 40, "under_score", "dot.ted"):
        assert not is_github_owner(owner), owner
    assert is_github_repo_name("bert-gen") and is_github_repo_name(".github") and is_github_repo_name("a" * 100)
    for name in ("", ".", "..", "a" * 101, "sp ace", "sl/ash"):
        assert not is_github_repo_name(name), name


def test_normalize_hex() -> None:
    assert normalize_hex(" 2A890C3F ") == "2a890c3f"
    assert normalize_hex("2a890c3g") is None
    assert normalize_hex("") is None
    assert normalize_hex("0x2a") is None


def test_is_sha_prefix_wants_exactly_16_lower_hex() -> None:
    assert is_sha_prefix("2a890c3f8ff19f47")
    assert not is_sha_prefix("2A890C3F8FF19F47")
    assert not is_sha_prefix("2a890c3f8ff19f4")
    assert not is_sha_prefix("2a890c3f8ff19f477")
    assert not is_sha_prefix(None)


@pytest.mark.parametrize(
    ("number", "arxiv_id"),
    [
        (2406.04823, "2406.04823"),  # what the Inspector CLI sends for --tool-arg arxiv_id=2406.04823
        (1902.04094, "1902.04094"),
        (704.0001, "0704.0001"),  # the year-month's leading zero is lost in a number
        (2001.1, "2001.10000"),  # so are a 5-digit number's trailing zeros
        (1501.0001, "1501.00010"),
        (1412.698, "1412.6980"),  # before 1501: 4-digit numbers
        (1412.6980, "1412.6980"),
    ],
)
def test_a_json_number_becomes_the_arxiv_id_it_spells(number: float, arxiv_id: str) -> None:
    assert arxiv_id_from_number(number) == arxiv_id
    parsed = parse_arxiv_id(arxiv_id_from_number(number))
    assert parsed is not None and parsed.canonical == arxiv_id


@pytest.mark.parametrize(("number", "text"), [(1902, "1902"), (1e20, "1e+20"), (12345.5, "12345.5"), (2406.048231, "2406.048231")])
def test_a_number_that_is_no_arxiv_id_stays_its_plain_text(number: float, text: str) -> None:
    assert arxiv_id_from_number(number) == text
    assert parse_arxiv_id(text) is None
