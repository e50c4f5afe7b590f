"""Completion values for the prompts' and resource templates' arguments, by prefix."""

from __future__ import annotations

from papercode.core.ids import SHA_PREFIX_LENGTH, arxiv_id_prefix, normalize_hex
from papercode.corpus.stages import Corpus

COMPLETIONS = 20


def complete(corpus: Corpus, argument: str, value: str) -> list[str] | None:
    """Completion values for an argument by prefix; None for arguments we do not complete."""
    text = value.strip()
    if argument in ("arxiv_id", "paper"):
        return corpus.index.arxiv_ids_with_prefix(arxiv_id_prefix(text), COMPLETIONS)
    if argument == "status":
        return [status for status in corpus.index.statuses() if status.startswith(text.lower())]
    if argument == "code_sha256":
        if not text:
            return corpus.index.shas_with_prefix("", COMPLETIONS)
        hex_prefix = normalize_hex(text)
        return [] if hex_prefix is None else corpus.index.shas_with_prefix(hex_prefix[:SHA_PREFIX_LENGTH], COMPLETIONS)
    return None
