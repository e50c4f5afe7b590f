"""Code proven by its hash: the harvest recipe, the hash-addressed store, checked sources, materialised samples."""
