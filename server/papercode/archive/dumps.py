"""A JSON dump (one top-level array of rows, optionally gzipped) read in pieces of bounded size.

The archive's papers dump is about 2 GiB of JSON: parsed whole it needs gigabytes (orjson cannot even reserve its
buffer for it on a 24 GiB machine). Here the file is gunzipped a chunk at a time, and the array is cut between two
rows into pieces of about `PIECE_BYTES`; each piece, wrapped in `[` `]`, is parsed in one call.

Where to cut is found cheaply, then proven by the parse itself. JSON is read left to right with no look-ahead past
a `}`, so a prefix of a valid array ending inside a row (inside a nested object, or inside a string that happens to
contain `},{`) always fails to parse at its very end ("truncated", or at the closing `]` added), while one ending
between two rows parses. So:

1. the candidate is the last `}` `,` `{` `"<first key>":` (white space allowed between) in the buffer: between two
   rows when each row starts with the same key, as a dump's rows do;
2. if there is none, or its piece fails at its end, the buffer is scanned exactly (strings skipped, brackets
   counted) for the commas between rows, and the last one that parses is taken;
3. a piece that fails before its end is invalid JSON: `DumpError`, naming the byte of the dump where it failed.

Every byte of the array is in exactly one piece, and the pieces joined by their commas are the array, so the rows
are those of a whole-file parse and any invalid byte is found. At the end of the file the rest (with the array's
`]`) is parsed as it is: a dump cut short, or with anything but white space after its `]`, fails there.

A gzipped dump is bounded by how far it expands (`Expansion`): a real dump expands a few times over, a gzip bomb a
thousand, so past a size no real row needs, a stream that has expanded more than `EXPANSION_RATIO` times is refused:
checked on the start of the stream before its rows are read (a bomb is refused in about a second), then as they are.
A row nested deeper than the parser goes (about a thousand levels) is refused too, naming the byte where it is deepest.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, Final

import msgspec

PIECE_BYTES: Final = 16 << 20  # JSON parsed per call (the rows it holds are released before the next piece)
MAX_PIECE: Final = 1 << 28  # a single row larger than this is refused, as `tables` refuses a first row this large
READ_BYTES: Final = 1 << 17  # gzip input per inflate call: at most ~128 MiB out even for a gzip bomb
EXPANSION_FLOOR: Final = 1 << 28  # decompressed bytes no real row needs (as `MAX_PIECE`): below them any ratio is let be
EXPANSION_RATIO: Final = 30  # decompressed bytes per compressed byte; real dumps expand a few times, a gzip bomb ~1000
_BOM: Final = b"\xef\xbb\xbf"
_WS: Final = b" \t\r\n"
_MAX_TRIES: Final = 64
_AT_BYTE = re.compile(r"\s*\(byte (\d+)\)$")
# A JSON string (escapes included, possessive: linear even when unterminated), or a bracket, or a comma.
_TOKEN = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[][{},]', re.DOTALL)

Decode = Callable[[memoryview], list[Any]]


class DumpError(ValueError):
    """The dump cannot be read as a JSON array of rows (the message says where and why, without the path)."""


@dataclass(frozen=True, slots=True)
class Expansion:
    """How far a gzip stream may expand: once past `floor` decompressed bytes, at most `ratio` times the compressed
    bytes read. (Tests lower the floor; the build uses `EXPANSION`.)"""

    floor: int = EXPANSION_FLOOR
    ratio: int = EXPANSION_RATIO

    def check(self, given: int, taken: int) -> None:
        """Raise `DumpError` when `given` decompressed bytes from `taken` compressed ones pass the bound."""
        if given > self.floor and given > self.ratio * taken:
            raise DumpError(
                f"expands more than {self.ratio}x ({given:,} bytes from the first {taken:,}), past the {self.floor:,} bytes "
                "a row may need: refused as a decompression bomb (a real dump expands a few times)"
            )


EXPANSION: Final = Expansion()


def plain_chunks(stream: BinaryIO, size: int = PIECE_BYTES) -> Iterator[bytes]:
    """An uncompressed file's bytes, `size` at a time."""
    while chunk := stream.read(size):
        yield chunk


@dataclass(slots=True)
class Inflated:
    """How far a gzip stream is inflated: compressed bytes `taken` (inflated), decompressed bytes `given`."""

    taken: int = 0
    given: int = 0


def gunzipped_chunks(
    stream: BinaryIO, read_bytes: int = READ_BYTES, bound: Expansion = EXPANSION, inflated: Inflated | None = None
) -> Iterator[bytes]:
    """A gzip file's decompressed bytes, in chunks (every member of a multi-member file; zero padding between or after
    members skipped, as `gzip` does), counted in `inflated`. Raises `EOFError` for a file cut short, `zlib.error` for
    corrupt data (a CRC or length that does not match the trailer included), and `DumpError` past `bound`."""
    so_far = Inflated() if inflated is None else inflated
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    fed = False  # the current member has had input
    data = b""
    read = 0
    while True:
        if not data:
            data = stream.read(read_bytes)
            if not data:
                break
            read += len(data)
        if inflate.eof:  # a member ended: what follows is padding or another member
            data = data.lstrip(b"\x00")
            if not data:
                continue
            inflate, fed = zlib.decompressobj(16 + zlib.MAX_WBITS), False
        fed = True
        out = inflate.decompress(data)
        data = inflate.unused_data if inflate.eof else b""
        if out:
            so_far.taken, so_far.given = read - len(data), so_far.given + len(out)  # what is left in `data` is not inflated yet
            bound.check(so_far.given, so_far.taken)
            yield out
    if fed and not inflate.eof:
        raise EOFError("Compressed file ended before the end-of-stream marker was reached")


def check_expansion(stream: BinaryIO, bound: Expansion = EXPANSION) -> None:
    """Inflate the start of a gzip stream and drop it, until it is past `bound.floor` decompressed bytes or has taken
    `bound.floor / bound.ratio` compressed ones (past those it cannot pass the bound at the floor): a gzip bomb is
    refused (`DumpError`) in the time zlib takes, before its rows are read, and a real dump costs a few MB of inflating.
    Raises as `gunzipped_chunks` does."""
    so_far = Inflated()
    for _ in gunzipped_chunks(stream, bound=bound, inflated=so_far):
        if so_far.given > bound.floor or so_far.taken * bound.ratio > bound.floor:
            return


def _boundary(first_key: str | None) -> re.Pattern[bytes] | None:
    if not first_key:
        return None
    key = re.escape(msgspec.json.encode(first_key))
    return re.compile(rb"\}[ \t\r\n]*(,)[ \t\r\n]*\{[ \t\r\n]*" + key + rb"[ \t\r\n]*:")


def array_pieces(
    chunks: Iterable[bytes],
    decode: Decode,
    *,
    first_key: str | None = None,
    piece_bytes: int = PIECE_BYTES,
    max_piece: int = MAX_PIECE,
) -> Iterator[list[Any]]:
    """The rows of the JSON array in `chunks` (bytes of any sizes), a piece at a time, each parsed by `decode` (given
    a whole JSON array, it returns its elements or raises `msgspec.DecodeError`). `first_key` is the key each row
    starts with, when known: the fast way to find where rows meet. Raises `DumpError`."""
    source = iter(chunks)
    head = b""
    offset = 0  # of head[0] in the decompressed file
    while len(head) < len(_BOM) and (chunk := next(source, None)) is not None:
        head += chunk
    if head.startswith(_BOM):
        head, offset = head[len(_BOM) :], len(_BOM)
    while not head.lstrip(_WS) and (chunk := next(source, None)) is not None:  # the white space before the `[`
        offset += len(head)
        head = chunk
    start = len(head) - len(head.lstrip(_WS))
    if head[start : start + 1] != b"[":
        raise DumpError("not a JSON array of rows")

    # buf[0] is always a `[`: the array's own, then the comma before the row buf[1:] starts with. A piece is
    # parsed in place: buf[:comma + 1], with the comma after its last row made a `]` while it is parsed.
    buf = bytearray(head[start:])
    offset += start + 1  # of buf[1]
    del head
    fast = _boundary(first_key)
    want = piece_bytes
    eof = False
    while True:
        while len(buf) <= want:
            chunk = next(source, None)
            if chunk is None:
                eof = True
                break
            buf += chunk
        if eof:  # the rest, with the array's closing bracket
            rows = _parse(decode, buf, len(buf), offset, final=True)
            if rows:
                yield rows
            return
        split = _split(decode, buf, offset, fast)
        if split is None:  # no boundary between rows yet: a row longer than what is buffered
            if len(buf) > max_piece:
                raise DumpError(f"a row over {max_piece:,} bytes at byte {offset:,} (or not an array of rows)")
            want = len(buf) + piece_bytes
            continue
        rows, comma = split
        del buf[:comma]  # cheap: a bytearray drops its head without moving the rest
        buf[0] = 0x5B  # `[`
        offset, want = offset + comma, piece_bytes
        yield rows
        del rows


def _split(decode: Decode, buf: bytearray, offset: int, fast: re.Pattern[bytes] | None) -> tuple[list[Any], int] | None:
    """The rows before the last comma between two rows in `buf` (parsed), and that comma's index; None if `buf`
    holds no such comma."""
    tried: set[int] = set()
    if fast is not None:  # the last row boundary is almost always near the end: look there first
        match = _last(fast, buf, max(1, len(buf) - (1 << 20)))
        if match is None and len(buf) > 1 << 20:
            match = _last(fast, buf, 1)
        if match is not None:
            comma = match.start(1)
            tried.add(comma)
            rows = _parse(decode, buf, comma, offset, final=False)
            if rows is not None:
                return rows, comma
    for comma in reversed(_commas_between_rows(buf)):
        if comma in tried:
            continue
        if len(tried) >= _MAX_TRIES:
            break
        tried.add(comma)
        rows = _parse(decode, buf, comma, offset, final=False)
        if rows is not None:
            return rows, comma
    return None


def _last(pattern: re.Pattern[bytes], buf: bytearray, start: int) -> re.Match[bytes] | None:
    match = None
    for match in pattern.finditer(buf, start):  # noqa: B007 - the last one is wanted
        pass
    return match


def _commas_between_rows(buf: bytearray) -> list[int]:
    """Where the commas at the array's own level are in `buf` (`[` then a row). Exact up to the last whole string;
    past a string the buffer cuts short, commas inside it may be listed too (their pieces then fail to parse)."""
    depth = 0
    commas: list[int] = []
    opening, closing = frozenset(b"[{"), frozenset(b"]}")
    for token in _TOKEN.finditer(buf, 1):
        char = buf[token.start()]
        if char == 0x22:  # a string
            continue
        if char in opening:
            depth += 1
        elif char in closing:
            depth -= 1
            if depth < 0:  # the array's own `]`: nothing after it is a row
                break
        elif depth == 0:
            commas.append(token.start())
    return commas


def _parse(decode: Decode, buf: bytearray, end: int, offset: int, *, final: bool) -> list[Any] | None:
    """The rows of the piece `buf[:end + 1]` (`[`, rows, and the comma at `end` read as `]`; when `final`, `buf`
    whole, with its own `]`). None when it fails at its very end: `end` is not between two rows (never when
    `final`). `offset` is where buf[1] is in the decompressed file."""
    if not final:
        buf[end] = 0x5D  # `]`
    try:
        with memoryview(buf) as whole, whole[: end + 1] if not final else whole[:] as piece:
            return decode(piece)
    except RecursionError:  # the parser recurses once a level: past Python's limit it gives up, as it should
        depth, deepest_at = deepest(buf, end + 1 if not final else len(buf))  # buf[0] is the array's own level
        raise DumpError(
            f"a row nested {depth - 1:,} levels deep (too deep to read) at byte {offset + deepest_at - 1:,} of the JSON"
        ) from None
    except msgspec.DecodeError as exc:
        message = str(exc)
        at = _AT_BYTE.search(message)
        byte = int(at.group(1)) if at else None
        if byte is None and message.startswith("Input data was truncated"):
            if not final:
                return None
            raise DumpError("not valid JSON: the file ends inside the array (cut short?)") from None
        if byte is not None and not final and byte >= end:
            return None
        reason = _AT_BYTE.sub("", message).removeprefix("JSON is malformed: ")
        where = f" at byte {offset + byte - 1:,} of the JSON" if byte is not None else ""
        raise DumpError(f"not valid JSON: {reason}{where}") from None
    finally:
        if not final:
            buf[end] = 0x2C  # `,`


def deepest(data: bytes | bytearray, end: int | None = None) -> tuple[int, int]:
    """(the deepest nesting of `[`/`{` in `data[:end]`, the index where it is first reached), strings skipped."""
    depth = most = where = 0
    for token in _TOKEN.finditer(data, 0, len(data) if end is None else end):
        char = data[token.start()]
        if char in b"[{":
            depth += 1
            if depth > most:
                most, where = depth, token.start()
        elif char in b"]}":
            depth -= 1
    return most, where


# As `_TOKEN`, with the colon after a key: `cut_deep` must know which key holds an array.
_KEYED_TOKEN = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[][{},:]', re.DOTALL)


def cut_deep(
    data: bytes | bytearray | memoryview, most: int, entries: bytes = b"subtasks", *, top_entries: bool = False
) -> tuple[bytes, int]:
    """`data` (JSON) with every array or object nested more than `most` levels deep replaced by `null`, so that a parser
    that gives up at a thousand levels reads the rest; and how many objects the cut parts held as elements of an array
    under the key `entries` (of the top array itself with `top_entries`): what was cut, counted. One pass, no recursion:
    a file nested a million levels deep costs its length."""
    key = entries.join((b'"', b'"'))
    view = bytes(data)
    out: list[bytes] = []
    stack: list[bool] = []  # for each open array or object: whether it is an array of entries
    string_start = string_end = held_by = -1  # the last string's bounds; where the key that holds the next value starts
    last = cut_from = cut_depth = 0
    cut = 0
    for token in _KEYED_TOKEN.finditer(view):
        char = view[token.start()]
        if char == 0x22:  # a string: a key when a colon follows
            string_start, string_end = token.start(), token.end()
            continue
        if char == 0x3A:
            held_by = string_start if string_end >= 0 else -1
            string_end = -1
            continue
        string_end = -1
        if char in b"[{":
            entry = char == 0x7B and bool(stack) and stack[-1]
            holder = view[held_by : held_by + len(key)] if held_by >= 0 else b""
            stack.append(char == 0x5B and (holder == key or (top_entries and not stack)))
            held_by = -1
            if cut_depth:
                cut += entry
            elif len(stack) > most:
                cut_from, cut_depth = token.start(), len(stack)
                cut += entry
        elif char in b"]}":
            if cut_depth and len(stack) == cut_depth:
                out += (view[last:cut_from], b"null")
                last, cut_depth = token.end(), 0
            if stack:
                stack.pop()
        else:  # a comma
            held_by = -1
    if cut_depth:  # cut short inside a cut part: what was read of it goes, the parser finds the end
        out.append(view[last:cut_from])
        last = len(view)
    out.append(view[last:])
    return b"".join(out), cut
