"""Tests of `papercode.archive`: the archive's build, fetch, store and serving form."""
