"""A loaded corpus and its life: the stages of a start, the snapshot that makes warm starts fast, live reload."""
