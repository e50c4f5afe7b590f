"""Tests of `papercode.index`: the immutable index, its search, and the archive laid beneath the records."""
