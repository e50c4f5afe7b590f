"""Tests of `papercode.ingest`: the cold build of the records."""
