"""Tests of `papercode.cli`: the command line."""
