"""The model twins of the answers built as shown: each the shown answer validated into its answer model.

The keyed tools build their answers as shown (`shaping.shown`) and never through their models; these twins give the
same answers as models, for the tests that read them as objects, and tests/answers/test_fast_paths.py proves each
equal to its shown answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from . import models
from .queries import harvested_code_shown, paper_detail_shown, paper_list_shown, samples_by_status_shown

Params = ParamSpec("Params")
AnswerModel = TypeVar("AnswerModel", bound=models.Answer)


def _as_model(model: type[AnswerModel], answer_shown: Callable[Params, dict[str, Any]]) -> Callable[Params, AnswerModel]:
    """The twin of a tool's shown answer that returns its answer model: the shown answer, validated."""

    def answer(*args: Params.args, **kwargs: Params.kwargs) -> AnswerModel:
        return model.model_validate(answer_shown(*args, **kwargs))

    answer.__name__ = answer.__qualname__ = answer_shown.__name__.removesuffix("_shown")
    answer.__doc__ = f"`{answer_shown.__name__}`, as its answer model (`models.{model.__name__}`)."
    return answer


harvested_code = _as_model(models.HarvestedCode, harvested_code_shown)
samples_by_status = _as_model(models.SampleList, samples_by_status_shown)
paper_detail = _as_model(models.PaperAnswer, paper_detail_shown)
paper_list = _as_model(models.PaperAnswer, paper_list_shown)
