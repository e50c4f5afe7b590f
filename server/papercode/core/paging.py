"""Opaque paging cursors, bound to one query on one index.

A cursor is base64url of (offset, MAC). The MAC covers the offset, the query's canonical form
and the index fingerprint, so a cursor is stable for the same index and query, and a
tampered cursor or one from another query is detected instead of silently paging wrong.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping

from .errors import QueryError

_MAC_BYTES = 8
_OFFSET_BYTES = 4  # 12 bytes in all: 16 base64 characters with no spare bits to tamper with


class Pager:
    """Issues and checks cursors for one index (identified by its fingerprint)."""

    def __init__(self, index_fingerprint: bytes) -> None:
        self._key = hashlib.sha256(b"papercode-cursor\0" + index_fingerprint).digest()

    def encode(self, query: Mapping[str, object], offset: int) -> str:
        raw = offset.to_bytes(_OFFSET_BYTES, "big")
        return base64.urlsafe_b64encode(raw + self._mac(query, raw)).decode().rstrip("=")

    def decode(self, query: Mapping[str, object], cursor: str | None) -> int:
        """The offset a cursor points at (0 for no cursor); QueryError when it is not ours."""
        if cursor is None or cursor == "":
            return 0
        try:
            padded = cursor.strip() + "=" * (-len(cursor.strip()) % 4)
            blob = base64.urlsafe_b64decode(padded.encode("ascii"))
        except (ValueError, UnicodeEncodeError):
            blob = b""
        raw, mac = blob[:_OFFSET_BYTES], blob[_OFFSET_BYTES:]
        canonical = len(blob) == _OFFSET_BYTES + _MAC_BYTES and base64.urlsafe_b64encode(blob).decode() == cursor.strip()
        if not canonical or not hmac.compare_digest(mac, self._mac(query, raw)):
            raise QueryError(
                "invalid_argument",
                "cursor is not valid for this query (tampered, truncated, or from another query or index)",
                "repeat the call with the same arguments and no cursor to start again",
            )
        return int.from_bytes(raw, "big")

    def _mac(self, query: Mapping[str, object], raw: bytes) -> bytes:
        canonical = repr(sorted((key, repr(value)) for key, value in query.items())).encode()
        return hmac.new(self._key, canonical + b"\0" + raw, hashlib.sha256).digest()[:_MAC_BYTES]
