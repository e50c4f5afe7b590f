"""Tests of `papercode.verified`: verified code, its harvest, sources and store."""
