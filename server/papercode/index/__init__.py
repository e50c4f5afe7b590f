"""The in-memory index: papers and samples as columns, keyed lookups, corpus-wide orders and full-text search."""
