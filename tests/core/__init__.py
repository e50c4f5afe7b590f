"""Tests of `papercode.core`: ids, cursors, the record schema, scratch files."""
