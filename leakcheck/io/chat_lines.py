"""JSONL shards read in C: records without a Python dict per line, and only those a level could match.

The usual path parses every line with orjson into dicts and lists and walks them in Python
(:meth:`~leakcheck.formats.FormatSpec.extract`): most of a scan's time on the exact and
normalized levels. ``leakcheck/_chatlines.c`` reads the common cases, an OpenAI-messages
chat or a flat row of top-level prompt and target strings (GSM8K's ``question``/``answer``),
with a string or integer id, straight from the bytes; every line it declines (anything unusual,
and every line with an error) is read the usual way, so errors, skips and messages are the
same. When every level of the scan can say which texts could match (:class:`LineFilter`: the
exact and normalized levels), a line none of whose texts could is counted and never becomes a
record; with other levels too, it is marked for those levels alone (:class:`Filtering`).

Without a C compiler at install (or with ``LEAKCHECK_NO_KERNEL=1``) nothing here runs and
the usual path reads every line, with the same results.

>>> text_hash(b"What is 2+2?") == _text_hash_python(b"What is 2+2?")
True
"""

from __future__ import annotations

import functools
import os
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._compiled import compiled
from ..records import Record
from . import readers
from .shards import _SPLITTABLE, Shard, _plain_lines

_M = (1 << 64) - 1
_MUL = 0x9E3779B97F4A7C15


def _module() -> Any:
    return compiled("_chatlines")


def _mix64(h: int) -> int:
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & _M
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & _M
    return h ^ (h >> 33)


def _text_hash_python(b: bytes) -> int:
    """The C ``text_hash``: 8 bytes at a time (little-endian) added and multiplied in, then the MurmurHash3 finalizer."""
    h = 0
    for k in range(0, len(b), 8):
        h = ((h + int.from_bytes(b[k : k + 8], "little")) * _MUL) & _M
        h ^= h >> 29
    return _mix64(h ^ ((len(b) * _MUL) & _M))


def text_hash(b: bytes) -> int:
    """The 64-bit hash the C reader tests a text's bytes with (an eval index keeps these, not text)."""
    mod = _module()
    return mod.text_hash(b) if mod is not None else _text_hash_python(b)


@dataclass(frozen=True)
class LineFilter:
    """Which train texts a level could match, as the C reader tests them.

    ``full_*``: :func:`text_hash` of the eval texts a train prompt / target could equal as
    they are (``exact``); ``words_*``: of the first five lower-cased words of those a train
    text could equal after normalization (``normalized``), tested for ASCII train texts,
    ``nonascii``: whether every non-ASCII text passes (it has no cheap test). A filter is
    exact in one direction only: a text it drops matches nothing; one it keeps may not match.
    """

    full_p: frozenset[int] = frozenset()
    full_t: frozenset[int] = frozenset()
    words_p: frozenset[int] = frozenset()
    words_t: frozenset[int] = frozenset()
    words: bool = False
    nonascii: bool = False

    def __or__(self, other: "LineFilter") -> "LineFilter":
        return LineFilter(self.full_p | other.full_p, self.full_t | other.full_t, self.words_p | other.words_p,
                          self.words_t | other.words_t, self.words or other.words, self.nonascii or other.nonascii)

    @functools.cached_property
    def packed(self) -> tuple[bytes, bytes, bytes, bytes, bool, bool]:
        """The filter as :func:`chat_lines` takes it: sorted uint64 buffers and two flags."""
        def sort(s: frozenset[int]) -> bytes:
            return array("Q", sorted(s)).tobytes()

        return sort(self.full_p), sort(self.full_t), sort(self.words_p), sort(self.words_t), self.words, self.nonascii


@dataclass(frozen=True)
class Filtering:
    """What the C reader may do with the lines a scan's levels could not match: ``line_filter``
    tells them (the union of ``levels``' filters); ``drop`` (every level of the scan has one):
    leave them out, else mark which lines ``levels`` need probe."""

    line_filter: LineFilter
    levels: frozenset[str]
    drop: bool

    @classmethod
    def of(cls, filters: Mapping[str, LineFilter], all_levels: Sequence[str]) -> "Filtering | None":
        """The filtering for levels ``all_levels`` of which those in ``filters`` can say; ``None``: none can."""
        if not filters:
            return None
        union = LineFilter()
        for f in filters.values():
            union = union | f
        return cls(union, frozenset(filters), drop=set(filters) == set(all_levels))


@dataclass(frozen=True)
class _Keys:
    """The top-level keys the C reader looks for: a chat's, or a flat row's prompt and target; the id's."""

    text: bytes
    target: bytes | None
    flat: bool
    id: bytes | None


def _top_key(spec: Any, key: str) -> str | None:
    """The field ``key`` of ``spec`` as one top-level key (no path, no ``+`` join), else ``None``."""
    paths = spec._paths.get(key, ())
    if len(paths) != 1 or len(paths[0]) != 1 or not isinstance(paths[0][0], str):
        return None
    return paths[0][0]


def _keys(spec: Any) -> _Keys | None:
    """The keys the C reader looks for, if ``spec`` reads rows it can: a chat, or top-level texts."""
    if spec.group is not None or spec.subset is not None or spec.history is not None:
        return None
    if spec._chat_key is not None:
        text, target, flat = spec._chat_key, None, False
    else:
        text, target, flat = _top_key(spec, "prompt"), _top_key(spec, "target") if spec.target is not None else None, True
        if text is None or (spec.target is not None and (target is None or target == text)):
            return None
    rid = _top_key(spec, "id") if spec.id is not None else None
    if spec.id is not None and (rid is None or rid in (text, target)):
        return None
    return _Keys(text.encode(), target.encode() if target is not None else None, flat, rid.encode() if rid is not None else None)


def _whole_lines(shard: Shard) -> bytes | None:
    """The bytes of ``shard``'s lines, as :func:`~leakcheck.io.readers.line_rows` reads them
    (to the end of the line that crosses its end); ``None`` if they cannot be read so."""
    if shard.kind == "file":  # a JSONL file too small to cut: whole, if the usual path reads it as lines
        try:
            if not (shard.file.lower().endswith(_SPLITTABLE) and os.path.isfile(shard.file) and _plain_lines(shard.file)):
                return None
            with open(shard.file, "rb") as fh:
                return fh.read()
        except OSError:
            return None
    if shard.kind != "lines" or shard.stop is None:
        return None
    try:
        with open(shard.file, "rb") as fh:
            fh.seek(shard.start)
            data = fh.read(shard.stop - shard.start)
            if data and not data.endswith(b"\n"):
                rest = fh.readline(readers.MAX_LINE_BYTES + 2)
                if len(rest) > readers.MAX_LINE_BYTES:
                    return None
                data += rest
    except OSError:
        return None  # the usual path says what is wrong
    return data


@dataclass
class ChatShard:
    """What the C reader made of a shard: counts of the lines it read, records kept, lines declined."""

    rows: int
    fast: int
    fast_no_target: int
    kept: list[tuple[Record, int]]
    declined: list[tuple[int, int, int, int]]  # (row, line, start, end)
    #: with a filter that marks instead of dropping: the rows it passes, declined ones included
    maybe: set[int] | None
    data: bytes


def read_chat_shard(shard: Shard, spec: Any, filtering: Filtering | None = None) -> ChatShard | None:
    """Read ``shard`` with the C reader; ``None`` where it cannot (no module, not a chat, a long line).

    ``filtering``: drop the lines its filter does not pass, or keep them all and list the rows it
    passes in :attr:`ChatShard.maybe` (see :class:`Filtering`).
    """
    mod = _module()
    keys = _keys(spec) if mod is not None else None
    if keys is None:
        return None
    data = _whole_lines(shard)
    if data is None:
        return None
    packed = (*filtering.line_filter.packed, filtering.drop) if filtering is not None else None
    out = mod.chat_lines(data, shard.line_base, keys.text, keys.target, keys.flat, keys.id, spec.id_required, readers.MAX_LINE_BYTES,
                         Record, packed)
    if out is None:
        return None
    rows, fast, fast_no_target, kept, declined, maybe = out
    if maybe is not None:
        maybe = set(maybe).union(row for row, _, _, _ in declined)
    return ChatShard(rows, fast, fast_no_target, kept, declined, maybe, data)


def declined_rows(shard: Shard, chat: ChatShard) -> Iterator[tuple[int, readers.RawRow | readers.BadRow]]:
    """``(row, raw row)`` of each line the C reader declined, parsed the usual way."""
    for row, line, start, end in chat.declined:
        yield row, readers.line_row(shard.file, line, chat.data[start:end])
