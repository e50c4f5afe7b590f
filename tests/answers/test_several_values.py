"""The one reading of an argument that takes several values (`checks.SeveralValues`): a JSON list as it is, a
comma-separated string split only when every part reads as one value (ids split, a title's commas stay), and anything
else refused naming both forms."""

from __future__ import annotations

import pytest

from papercode.answers import checks
from papercode.core.errors import QueryError
from tests.support.records import BERT_MOUTH, BERT_MOUTH_TITLE, BERTS_ICL

SLUG = "/paper/bert-has-a-mouth-and-it-must-speak-bert-as-a"


@pytest.mark.parametrize(
    ("values", "given", "read"),
    [
        (checks.PAPERS, f"{BERT_MOUTH},{BERTS_ICL}", [BERT_MOUTH, BERTS_ICL]),
        (
            checks.PAPERS,
            f" arXiv:{BERT_MOUTH}v2 , https://arxiv.org/abs/{BERTS_ICL} ",
            [f"arXiv:{BERT_MOUTH}v2", f"https://arxiv.org/abs/{BERTS_ICL}"],
        ),
        (checks.PAPERS, f"{BERT_MOUTH},{SLUG},bert-gen-paper", [BERT_MOUTH, SLUG, "bert-gen-paper"]),
        (checks.PAPERS, f"{BERT_MOUTH},", BERT_MOUTH),  # a stray comma: one value, as the string it is
        (checks.PAPERS, [BERT_MOUTH], [BERT_MOUTH]),  # a list stays a list, even of one
        (checks.CODE_HASHES, "2a890c3f, 013A68B0", ["2a890c3f", "013A68B0"]),
        (checks.STATUSES, "ran_honours,ran", ["ran_honours", "ran"]),
        (checks.STATUSES, "ran", "ran"),
    ],
)
def test_a_list_or_ids_comma_separated_are_several_values(values: checks.SeveralValues, given: object, read: object) -> None:
    assert values.read(given) == read


@pytest.mark.parametrize(
    ("values", "given"),
    [
        (checks.PAPERS, BERT_MOUTH_TITLE),  # a title's commas
        (checks.PAPERS, "Attention, please"),  # single words may be a title's: a bare slug splits only with a hyphen
        (checks.PAPERS, f"{BERT_MOUTH}, BERT as a Markov Random Field"),  # one part is no id
        (checks.PAPERS, "Zero-Shot, Few-Shot"),  # hyphenated words as a title writes them: no slug is capitalised
        (checks.PAPERS, f"{BERT_MOUTH}, Self-Attention"),
        (checks.PAPERS, ","),
        (checks.CODE_HASHES, "2a890c3f,not-hex"),
        (checks.STATUSES, "ran,ran honours"),
        (checks.STATUSES, "ran," * checks.MAX_SPLIT),  # more parts than any list takes: left whole, refused as too long
    ],
)
def test_a_string_whose_parts_are_not_all_ids_is_one_value(values: checks.SeveralValues, given: str) -> None:
    assert values.read(given) == given


@pytest.mark.parametrize(
    ("given", "kind"),
    [(5, "a number"), (None, "null"), ({"id": "x"}, "an object"), (["ran", 1], "a list holding a number"), ([[]], "a list holding a list")],
)
def test_anything_else_is_refused_naming_both_forms(given: object, kind: str) -> None:
    with pytest.raises(QueryError) as refused:
        checks.STATUSES.read(given)
    assert str(refused.value) == (
        f"invalid_argument: status takes a string or a list of strings, not {kind}. "
        'Next: call again with status=["ran_honours", "ran"] (a JSON list) or status="ran_honours,ran" (comma-separated).'
    )
