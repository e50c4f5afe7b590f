"""`index.overlaid.Ordinals`: what the numbering works out of the replaced papers is kept on it, and goes with it."""

from __future__ import annotations

import gc
import weakref

import numpy as np

from papercode.index.overlaid import Ordinals


def test_the_replaced_papers_are_sorted_once_and_let_go_with_the_numbering() -> None:
    ordinals = Ordinals(records=2, archive=10, replaced={7: 1, 3: 0})
    assert ordinals.replaced_sorted.dtype == np.int32 and ordinals.replaced_sorted.tolist() == [3, 7]
    assert ordinals.replaced_sorted is ordinals.replaced_sorted  # made once a numbering (a corpus)
    # A reload replaces the corpus: nothing worked out of the old numbering may keep it alive.
    numbering = weakref.ref(ordinals)
    gc.disable()  # let go by reference counting alone, as a reload lets its old corpus go
    try:
        del ordinals
        assert numbering() is None
    finally:
        gc.enable()
