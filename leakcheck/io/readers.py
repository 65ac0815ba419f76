"""Stream raw rows from JSONL, JSON arrays, Parquet, CSV/TSV and HF datasets on disk.

Text formats may be gzip-, bzip2-, xz- or zstd-compressed. Each row comes with the file
it is in and where, 1-based (``line 12`` for JSONL and CSV, ``row 5`` for Parquet and JSON
arrays), so every error can name both. A row that cannot be parsed is yielded as a
:class:`BadRow` instead of raising, so the caller can fail or count it (``--on-error``).
Lines are read up to :data:`MAX_LINE_BYTES`, so a runaway line costs bounded memory.

>>> import tempfile, os
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "a.jsonl")
>>> _ = open(p, "w").write('{"text": "hi"}\\n\\n{"text": "yo"}\\n')
>>> [(r.where, r.data) for r in iter_rows(open_source(p))]
[('line 1', {'text': 'hi'}), ('line 3', {'text': 'yo'})]
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterator, NamedTuple

import orjson

from ..errors import InputError
from .compress import CORRUPT, corrupt, open_binary, strip_codec
from .sources import DATA_SUFFIXES, Source, open_source

__all__ = ["DATA_SUFFIXES", "MAX_LINE_BYTES", "BadRow", "RawRow", "Source", "iter_rows", "open_source"]

#: The longest line (JSONL record, CSV line or field) read: longer ones are errors, read past
#: in pieces. Tests lower it; it is documented in the README ("When your data is messy").
MAX_LINE_BYTES = 64 << 20
_BOM = b"\xef\xbb\xbf"
_NL = b"\n"
_MAX_DEPTH = 1024  # orjson's nesting limit; the stdlib fallback stops earlier
_NUL_FIX = "the file is binary, or was zero-filled by a crash: regenerate it or cut those bytes out"
_QUOTE_FIX = "a stray quote? quote the whole field and double the quotes inside it (\"\")"


class RawRow(NamedTuple):
    """One parsed row; ``where`` is built only when a message needs it."""

    file: str
    unit: str  # "line" or "row"
    number: int  # 1-based
    data: Any

    @property
    def where(self) -> str:
        return f"{self.unit} {self.number}"


@dataclass(frozen=True, slots=True)
class BadRow:
    """A row that could not be parsed: ``reason`` is a stable key used for counting."""

    file: str
    where: str
    reason: str
    what: str
    fix: str

    def error(self) -> InputError:
        return InputError(self.file, self.where, self.what, self.fix)


def iter_rows(source: Source) -> Iterator[RawRow | BadRow]:
    """Yield every row of every file of ``source`` in order."""
    if source.kind == "hf":
        yield from _iter_hf(source.files[0])
        return
    for f in source.files:
        base = strip_codec(f).lower()
        if base.endswith(".parquet"):
            yield from _iter_parquet(f)
        elif base.endswith((".csv", ".tsv")):
            yield from _iter_csv(f)
        else:
            yield from _iter_json_lines(f)


class _LongLine(NamedTuple):
    size: int
    nul_only: bool


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n and n % (1 << 20) == 0 else f"{n:,} bytes"


def _read_past(readline: Callable[[int], bytes], head: bytes) -> _LongLine:
    """Read the rest of an over-long line whose first piece is ``head``, 1 MiB at a time."""
    size, nul_only, line = len(head), head.count(0) == len(head), head
    while not line.endswith(b"\n"):
        line = readline(1 << 20)
        if not line:
            break
        body = line.rstrip(b"\r\n")
        size += len(body)
        nul_only = nul_only and body.count(0) == len(body)
    return _LongLine(size, nul_only)


def _bounded_lines(fh: BinaryIO) -> Iterator[bytes | _LongLine]:
    """The lines of ``fh``; a line over :data:`MAX_LINE_BYTES` becomes a :class:`_LongLine`."""
    limit = MAX_LINE_BYTES
    readline: Callable[[int], bytes] = fh.readline
    while line := readline(limit + 1):
        yield line if len(line) <= limit or line.endswith(b"\n") else _read_past(readline, line)


def _long_line(n: _LongLine) -> str:
    nul = ", all NUL bytes" if n.nul_only else ""
    return f"the line is longer than the {_size(MAX_LINE_BYTES)} limit ({n.size:,} bytes{nul})"


def _long_fix(n: _LongLine) -> str:
    return _NUL_FIX if n.nul_only else "split the record, or check that this is a line-based file"


def _decode_line(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as first:
        if str(first).startswith("depth limit"):
            raise
        # orjson rejects lone surrogate escapes ("\ud800") that the stdlib accepts.
        try:
            return json.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise first from None


def _json_error(path: str, where: str, line: bytes, exc: Exception) -> BadRow:
    if b"\x00" in line:
        return BadRow(path, where, "nul_bytes", "the line holds NUL bytes: binary data, not JSON text", _NUL_FIX)
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as e:
        return BadRow(path, where, "invalid_utf8", f"invalid UTF-8 byte 0x{line[e.start]:02x} at column {e.start + 1}",
                      "re-encode the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)")
    if str(exc).startswith("depth limit"):
        return BadRow(path, where, "too_deep", f"JSON nested deeper than {_MAX_DEPTH} levels", "flatten the record")
    try:  # re-parse without the line break so the column is the one in the line
        orjson.loads(line.rstrip(b"\r\n"))
    except orjson.JSONDecodeError as e:
        exc = e
    msg = str(exc).split("\n")[0]
    m = re.match(r"(.*?): line \d+ column (\d+)", msg)
    if m:
        msg = f"{m.group(1)} at column {m.group(2)}"
    if not line.endswith(b"\n"):
        return BadRow(path, where, "truncated_line", "the last line is cut off (no closing brace/newline)",
                      "the file was truncated while writing: regenerate it or delete the last line")
    return BadRow(path, where, "invalid_json", f"invalid JSON ({msg[:120]})", "fix or remove the line")


def _iter_json_lines(path: str) -> Iterator[RawRow | BadRow]:
    lineno = 0
    try:
        with open_binary(path) as fh:
            head = fh.peek(64)[:64].removeprefix(_BOM).lstrip()[:1]  # type: ignore[attr-defined]
            if head == b"[" or (strip_codec(path).lower().endswith(".json") and head == b"{"):
                raw = fh.read()
                whole = _whole_json(path, raw)
                if whole is not None:
                    yield from whole
                    return
                fh = io.BytesIO(raw)  # one object per line under a .json name: already in memory
            counted = [0]
            yield from line_rows(path, fh, counted=counted)
            lineno = counted[0]
    except CORRUPT as exc:
        if isinstance(exc, PermissionError):
            raise InputError(path, None, "permission denied", "make the file readable (chmod +r)") from None
        raise corrupt(path, f"after line {lineno}", exc) from None


def line_rows(path: str, fh: Any, lineno: int = 0, stop: int | None = None, counted: list[int] | None = None) -> Iterator[RawRow | BadRow]:
    """The rows of a JSONL stream from its current position: one per non-blank line, numbered from ``lineno + 1``.

    ``stop``: the byte offset (of a shard) at which to end, after the line that crosses it.
    ``counted[0]`` follows the last line number read, for messages about a stream cut short.
    The read loop is written out, not a generator of lines: it runs once per record.
    """
    limit = MAX_LINE_BYTES
    readline: Callable[[int], bytes] = fh.readline
    pos = fh.tell() if stop is not None else 0
    line = readline(limit + 1)
    if lineno == 0:
        line = line.removeprefix(_BOM)
    while line:
        lineno += 1
        if counted is not None:
            counted[0] = lineno
        pos += len(line)
        if len(line) > limit and not line.endswith(b"\n"):
            long = _read_past(readline, line)
            pos = fh.tell() if stop is not None else pos
            yield BadRow(path, f"line {lineno}", "line_too_long", _long_line(long), _long_fix(long))
        elif not line.isspace():
            yield line_row(path, lineno, line)
        if stop is not None and pos >= stop:
            return
        line = readline(limit + 1)


def line_row(path: str, lineno: int, line: bytes) -> RawRow | BadRow:
    """One non-blank JSONL line (at most :data:`MAX_LINE_BYTES` long) parsed, or why it cannot be."""
    try:
        return RawRow(path, "line", lineno, _decode_line(line))
    except (ValueError, UnicodeDecodeError) as exc:
        return _json_error(path, f"line {lineno}", line, exc)


def _line_col(raw: bytes, pos: int) -> str:
    line_start = raw.rfind(b"\n", 0, pos) + 1
    return f"line {raw.count(_NL, 0, pos) + 1} column {pos - line_start + 1}"


def _whole_json(path: str, raw: bytes) -> Iterator[RawRow | BadRow] | None:
    """A JSON array (or an object holding one list of records); ``None`` means: read as JSONL."""
    raw = raw.removeprefix(_BOM)
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as first:
        if str(first).startswith("depth limit"):
            raise InputError(path, _line_col(raw, first.pos), f"JSON nested deeper than {_MAX_DEPTH} levels", "flatten the records") from None
        try:
            obj = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise InputError(path, _line_col(raw, e.start), "invalid UTF-8", "re-encode the file as UTF-8") from None
        except json.JSONDecodeError as e:
            if "Extra data" in str(e):
                return None  # one value per line: JSONL (under a .json name, or starting with a list)
            raise InputError(path, f"line {e.lineno} column {e.colno}", f"invalid JSON ({e.msg})",
                             "fix the file (python -m json.tool FILE shows where)") from None
    if isinstance(obj, dict):
        lists = [k for k, v in obj.items() if isinstance(v, list) and v and isinstance(v[0], dict)]
        if len(lists) == 1:
            obj = obj[lists[0]]
        else:
            return iter([RawRow(path, "row", 1, obj)])
    if not isinstance(obj, list):
        raise InputError(path, None, "holds a single JSON value, not records", "write one JSON object per line (JSONL)")
    return (RawRow(path, "row", i, r) for i, r in enumerate(obj, 1))


def _iter_parquet(path: str) -> Iterator[RawRow | BadRow]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except PermissionError:
        raise InputError(path, None, "permission denied", "make the file readable (chmod +r)") from None
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(path, None, f"not a readable Parquet file ({str(exc)[:100]})", "check the file was fully written") from None
    row = 0
    try:
        for batch in pf.iter_batches(batch_size=2048):
            for rec in batch.to_pylist():
                row += 1
                yield RawRow(path, "row", row, rec)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(path, f"after row {row}", f"corrupt Parquet data ({str(exc)[:100]})", "re-create the file") from None


def _text_lines(fh: BinaryIO, path: str) -> Iterator[str]:
    """Decoded lines for the csv module, each within the line limit; bad bytes name their line."""
    for n, line in enumerate(_bounded_lines(fh), 1):
        if isinstance(line, _LongLine):
            raise InputError(path, f"line {n}", _long_line(line), _long_fix(line) if line.nul_only else _QUOTE_FIX)
        if n == 1:
            line = line.removeprefix(_BOM)
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(path, f"line {n}", f"invalid UTF-8 byte 0x{line[e.start]:02x} at column {e.start + 1}",
                             "re-encode the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)") from None


def _csv_error(path: str, start: int, end: int, e: csv.Error) -> InputError:
    msg = str(e)
    if "unexpected end of data" in msg:
        what = "a quoted field that starts in this row never closes: the rest of the file would be one field"
    elif "expected after" in msg:
        span = f", and the field ran on to line {end}" if end > start else ""
        what = f"text follows the closing quote of a field ({msg}{span})"
    elif "field larger than field limit" in msg:
        what = f"a field is longer than the {_size(MAX_LINE_BYTES)} limit (it ran on to line {end})"
    elif "NUL" in msg:
        return InputError(path, f"line {end}", "the line holds NUL bytes: binary data, not CSV text", _NUL_FIX)
    else:
        return InputError(path, f"line {start}", f"malformed CSV ({msg})", "check the quoting")
    return InputError(path, f"line {start}", what, _QUOTE_FIX)


def _iter_csv(path: str) -> Iterator[RawRow | BadRow]:
    """Rows of a CSV/TSV file, located by the line each starts on (a quoted field may span lines)."""
    csv.field_size_limit(MAX_LINE_BYTES)
    delim = "\t" if strip_codec(path).lower().endswith(".tsv") else ","
    start = 1
    try:
        with open_binary(path) as fh:
            reader = csv.reader(_text_lines(fh, path), delimiter=delim, strict=True)
            try:
                first = next(reader, None)
                if first is None:
                    return
                if _looks_like_header(first):
                    names = first
                else:  # a headerless file (MMLU's CSVs): columns are named 0, 1, 2, ...
                    names = [str(i) for i in range(len(first))]
                    yield RawRow(path, "line", 1, dict(zip(names, first)))
                width = len(names)
                while True:
                    start = reader.line_num + 1
                    cells = next(reader, None)
                    if cells is None:
                        return
                    if not cells:
                        continue
                    if len(cells) > width:
                        yield BadRow(path, f"line {start}", "csv_extra_columns",
                                     f"row has {len(cells)} columns, the header {width}", "quote fields that contain the delimiter")
                    else:  # a short row lacks its last fields: they are missing, not empty
                        yield RawRow(path, "line", start, dict(zip(names, cells)))
            except csv.Error as e:
                raise _csv_error(path, start, reader.line_num, e) from None
    except CORRUPT as exc:
        if isinstance(exc, PermissionError):
            raise InputError(path, None, "permission denied", "make the file readable (chmod +r)") from None
        raise corrupt(path, f"after line {start}", exc) from None


_HEADER_CELL = re.compile(r"[A-Za-z_][\w .:/()-]{0,63}")


def _looks_like_header(cells: list[str]) -> bool:
    """Column names are short, distinct, start with a letter and have a few words at most.

    ``csv.Sniffer.has_header`` misjudges text-heavy files both ways (checked on MMLU's CSVs
    and on question/answer files), so this simpler rule decides.
    """
    return (
        len(set(cells)) == len(cells)
        and all(_HEADER_CELL.fullmatch(c) and len(c.split()) <= 4 for c in cells)
    )


def _iter_hf(path: str) -> Iterator[RawRow | BadRow]:
    try:
        import datasets
    except ImportError:  # pragma: no cover - datasets is a core dependency
        raise InputError(path, None, "is a Hugging Face dataset folder", "pip install datasets") from None
    try:
        ds = datasets.load_from_disk(path)
    except Exception as exc:  # datasets raises many kinds here
        raise InputError(path, None, f"cannot load the saved dataset ({str(exc)[:100]})", "re-save it with Dataset.save_to_disk") from None
    row = 0
    for batch in ds.with_format("arrow").iter(batch_size=2048):
        for rec in batch.to_pylist():
            row += 1
            yield RawRow(path, "row", row, rec)
