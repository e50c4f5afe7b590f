"""The immutable index a server answers from: papers and samples as columns, keyed lookups and full-text search.

The records' columns are in memory (built, or restored from a snapshot); the archive's are mapped read-only from its
build (`mapped_archive`, `mapped`) and laid beneath the records' (`overlaid`, `overlay`), neither copied nor rebuilt.
"""
