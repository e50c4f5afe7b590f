"""Verified code: the harvest recipe, the hash-addressed store, checked sources, and materialising samples."""
