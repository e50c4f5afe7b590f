"""Tests of `papercode.corpus`: a corpus and its life (readiness, warm starts, reloads)."""
