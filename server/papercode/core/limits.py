"""Caps that bound memory while loading records; each is a setting (see `settings.py`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps that bound memory while loading; each is a setting (see `settings.py`)."""

    max_file_bytes: int = 32 * 1024 * 1024
    max_line_bytes: int = 8 * 1024 * 1024
    max_string_chars: int = 100_000
