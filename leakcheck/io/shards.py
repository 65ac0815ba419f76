"""Cut the train side into shards that workers read independently, and read one shard.

A plain JSONL file is cut into byte ranges that start at line starts; a Parquet file into
ranges of row groups; anything else (compressed files, JSON arrays, CSV, a saved dataset) is
one shard. Every shard knows how many lines/rows of its file come before it, so rows and
error messages carry the file's own 1-based line or row numbers in any worker.

>>> import tempfile, os
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "a.jsonl")
>>> _ = open(p, "w").write("".join('{"text": "row %d"}\\n' % i for i in range(10)))
>>> shards = plan_shards(open_source(p), target_bytes=64)
>>> len(shards) > 1, sum(1 for s in shards for _ in iter_shard(s))
(True, 10)
>>> [r.number for r in iter_shard(shards[1])][:1] == [shards[1].line_base + 1]
True
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from .compress import codec_of_bytes
from .readers import BadRow, RawRow, Source, iter_rows, line_rows, open_source

#: Bytes per shard: large enough that a shard's fixed cost is noise, small enough for progress.
SHARD_BYTES = 16 << 20
_SPLITTABLE = (".jsonl", ".ndjson")

__all__ = ["Shard", "plan_shards", "iter_shard", "open_source", "SHARD_BYTES"]


@dataclass(frozen=True)
class Shard:
    """A piece of the train input: all of ``file``, a byte range of it, or a range of row groups.

    ``index`` orders shards as the rows are ordered; ``line_base`` is the number of lines
    (rows for Parquet) of ``file`` before the shard; ``size`` is its size in bytes (progress).
    """

    index: int
    file: str
    kind: str  # "file", "hf", "lines" or "rowgroups"
    start: int = 0
    stop: int = 0
    line_base: int = 0
    size: int = 0


def plan_shards(source: Source, target_bytes: int = SHARD_BYTES, tail_bytes: int = 0) -> list[Shard]:
    """The shards of ``source``, in row order.

    ``tail_bytes``: the last that many bytes of the last JSONL file are cut in shards of a
    quarter of ``target_bytes``, so that workers taking shards as they free up finish
    together (the last shard taken is short).
    """
    out: list[Shard] = []
    if source.kind == "hf":
        return [Shard(0, source.files[0], "hf", size=_size(source.files[0]))]
    for k, f in enumerate(source.files):
        low = f.lower()
        size = _size(f)
        if low.endswith(_SPLITTABLE) and size > target_bytes and _plain_lines(f):
            out += _line_shards(f, size, target_bytes, len(out), tail_bytes if k == len(source.files) - 1 else 0)
        elif low.endswith(".parquet"):
            out += _rowgroup_shards(f, size, target_bytes, len(out))
        else:
            out.append(Shard(len(out), f, "file", size=size))
    return out


def _size(path: str) -> int:
    try:
        if os.path.isdir(path):
            return sum(e.stat().st_size for e in os.scandir(path) if e.is_file())
        return os.path.getsize(path)
    except OSError:
        return 0


def _plain_lines(path: str) -> bool:
    """Not a JSON array and not compressed under a plain name: byte ranges cut it at line starts."""
    with open(path, "rb") as fh:
        head = fh.read(64)
    return codec_of_bytes(head) is None and head.lstrip(b"\xef\xbb\xbf").lstrip()[:1] != b"["


def _line_shards(path: str, size: int, target: int, first: int, tail: int = 0) -> list[Shard]:
    """Byte ranges starting at line starts; the lines before each range are counted on the way.
    Ranges in the last ``tail`` bytes aim at a quarter of ``target``.

    A range ends at the end of the line that crosses its size (or of the file). The file is read
    through one reused buffer (no fresh memory per range, and no file mapping, whose pages would
    count in the scan's peak memory); newlines are counted in C where it is built.
    """
    from .chat_lines import _module

    mod = _module()
    count: Callable[[Any, int, int], int] = mod.count_newlines if mod is not None else _count_newlines
    out: list[Shard] = []
    start, lines = 0, 0
    buf = bytearray(max(1, min(size, 8 << 20)))
    view = memoryview(buf)
    with open(path, "rb") as fh:
        while start < size:
            want = target if size - start > tail else max(1, target // 4)
            fh.seek(start)
            counted, got, last = 0, 0, 10
            while got < want:
                n = fh.readinto(view[: min(len(buf), want - got)])
                if not n:
                    break
                counted += count(buf, 0, n)
                got += n
                last = buf[n - 1]
            if got < want:  # the end of the file: its last line may lack a newline
                stop, counted = start + got, counted + (last != 10)
            else:  # to the end of the line the range cut
                stop, counted = _line_end(fh, start + got), counted + 1
            out.append(Shard(first + len(out), path, "lines", start, stop, lines, stop - start))
            lines += counted
            start = stop
    return out


def _count_newlines(buf: bytearray, start: int, end: int) -> int:
    return buf.count(b"\n", start, end)


def _line_end(fh: Any, end: int) -> int:
    """Just past the first newline at or after ``end`` (``fh`` is there), or the end of the file."""
    while True:
        chunk = fh.read(1 << 16)
        if not chunk:
            return end
        k = chunk.find(b"\n")
        if k >= 0:
            return end + k + 1
        end += len(chunk)


def _rowgroup_shards(path: str, size: int, target: int, first: int) -> list[Shard]:
    import pyarrow.parquet as pq

    try:
        md = pq.ParquetFile(path).metadata
    except Exception:  # unreadable: one shard, whose reader gives the one-line error
        return [Shard(first, path, "file", size=size)]
    groups = md.num_row_groups
    if groups <= 1 or size <= target:
        return [Shard(first, path, "file", size=size)]
    per = max(1, int(groups * target / max(size, 1)))
    out: list[Shard] = []
    rows = 0
    for g in range(0, groups, per):
        stop = min(groups, g + per)
        gsize = sum(md.row_group(i).total_byte_size for i in range(g, stop))
        out.append(Shard(first + len(out), path, "rowgroups", g, stop, rows, gsize))
        rows += sum(md.row_group(i).num_rows for i in range(g, stop))
    return out


def iter_shard(shard: Shard) -> Iterator[RawRow | BadRow]:
    """Every row of one shard, numbered as in its file (1-based lines for JSONL)."""
    if shard.kind == "lines":
        return _iter_line_range(shard)
    if shard.kind == "rowgroups":
        return _iter_rowgroups(shard)
    return iter_rows(Source(shard.file, (shard.file,), "hf" if shard.kind == "hf" else "files"))


def _iter_line_range(shard: Shard) -> Iterator[RawRow | BadRow]:
    try:
        fh = open(shard.file, "rb")
    except PermissionError:
        raise InputError(shard.file, None, "permission denied", "make the file readable (chmod +r)") from None
    with fh:
        fh.seek(shard.start)
        yield from line_rows(shard.file, fh, shard.line_base, shard.stop)


def _iter_rowgroups(shard: Shard) -> Iterator[RawRow | BadRow]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = shard.file
    row = shard.line_base
    try:
        pf = pq.ParquetFile(path)
        for batch in pf.iter_batches(batch_size=2048, row_groups=list(range(shard.start, shard.stop))):
            for rec in batch.to_pylist():
                row += 1
                yield RawRow(path, "row", row, rec)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(path, f"after row {row}", f"corrupt Parquet data ({str(exc)[:100]})", "re-create the file") from None
