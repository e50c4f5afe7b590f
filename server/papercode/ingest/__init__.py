"""The cold build: find and decode record files, keep one record per paper, and build the index (in two processes)."""
