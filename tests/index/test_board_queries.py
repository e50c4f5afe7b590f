"""`index.board_queries`: what it keeps of a corpus is let go with the corpus."""

from __future__ import annotations

import gc

import numpy as np

from papercode.index import board_queries
from papercode.index.overlaid import Ordinals


def test_the_replaced_papers_of_a_corpus_are_kept_only_while_it_is() -> None:
    # A reload replaces the corpus: what a query worked out of the old one's numbering must not outlive it.
    ordinals = Ordinals(records=2, archive=10, replaced={7: 1, 3: 0})
    assert np.array_equal(board_queries._replaced(ordinals), [3, 7])
    assert board_queries._replaced(ordinals) is board_queries._replaced(ordinals)  # made once a corpus
    held = len(board_queries._REPLACED)
    gc.disable()  # let go by reference counting alone, as a reload lets its old corpus go
    try:
        del ordinals
        assert len(board_queries._REPLACED) == held - 1
    finally:
        gc.enable()
