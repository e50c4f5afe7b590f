"""Completion values for the prompts' and resource templates' arguments, by prefix."""

from __future__ import annotations

from papercode.core.ids import SHA_PREFIX_LENGTH, normalize_hex, parse_arxiv_id
from papercode.corpus.stages import Corpus

COMPLETIONS = 20


def complete(corpus: Corpus, argument: str, value: str) -> list[str] | None:
    """Completion values for an argument by prefix; None for arguments we do not complete."""
    text = value.strip()
    if argument in ("arxiv_id", "paper"):
        parsed = parse_arxiv_id(text)
        prefix = parsed.canonical if parsed else _strip_arxiv_prefix(text)
        return corpus.index.arxiv_ids_with_prefix(prefix, COMPLETIONS)
    if argument == "status":
        return [status for status in corpus.index.statuses() if status.startswith(text.lower())]
    if argument == "code_sha256":
        if not text:
            return corpus.index.shas_with_prefix("", COMPLETIONS)
        hex_prefix = normalize_hex(text)
        return [] if hex_prefix is None else corpus.index.shas_with_prefix(hex_prefix[:SHA_PREFIX_LENGTH], COMPLETIONS)
    return None


def _strip_arxiv_prefix(text: str) -> str:
    return text[6:].strip() if text.lower().startswith("arxiv:") else text
