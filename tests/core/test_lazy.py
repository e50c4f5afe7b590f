"""`core.lazy`: a package's names loaded on first use, from their home modules, relative or absolute."""

from __future__ import annotations

import pytest

from papercode.core import lazy, paths
from papercode.core.lazy import loaded_on_first_use


def test_each_name_is_loaded_from_its_home_and_no_other_name_is_given() -> None:
    getattr_ = loaded_on_first_use("papercode.core", {"loaded_on_first_use": ".lazy", "given_path": "papercode.core.paths"})
    assert getattr_("loaded_on_first_use") is lazy.loaded_on_first_use
    assert getattr_("given_path") is paths.given_path
    with pytest.raises(AttributeError, match=r"^module 'papercode.core' has no attribute 'paths'$"):
        getattr_("paths")
