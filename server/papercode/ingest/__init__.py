"""The records' cold build: record files found, decoded and admitted, one per paper, into an index built on both cores."""
