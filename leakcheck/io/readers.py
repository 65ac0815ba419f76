"""Stream raw rows from JSONL (+ .gz), JSON arrays, Parquet, CSV and HF datasets on disk.

Each row comes with the file it is in and where (``line 12`` for JSONL, ``row 5``
otherwise), so every error can name both. A row that cannot be parsed is yielded as a
:class:`BadRow` instead of raising, so the caller can fail or count it (``--on-error``).

>>> import tempfile, os
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "a.jsonl")
>>> _ = open(p, "w").write('{"text": "hi"}\\n\\n{"text": "yo"}\\n')
>>> [(r.where, r.data) for r in iter_rows(open_source(p))]
[('line 1', {'text': 'hi'}), ('line 3', {'text': 'yo'})]
"""

from __future__ import annotations

import csv
import glob
import gzip
import json
import os
import re
import sys
import zlib
from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple

import orjson

from ..errors import InputError

DATA_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".json", ".json.gz", ".parquet", ".csv", ".csv.gz", ".tsv")
_SPLIT_WORD = re.compile(r"(?:^|[-_./])(train|test|validation|valid|dev|eval)(?:[-_./]|$)")


@dataclass(frozen=True)
class Source:
    """A resolved input: what the user named and the data files (or HF dataset) behind it."""

    path: str
    files: tuple[str, ...]
    kind: str  # "files" or "hf"

    @property
    def display(self) -> str:
        return self.path


class RawRow(NamedTuple):
    """One parsed row; ``where`` is built only when a message needs it."""

    file: str
    unit: str  # "line" or "row"
    number: int
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


def _is_data_file(name: str) -> bool:
    return name.lower().endswith(DATA_SUFFIXES)


def _is_hf_saved(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "state.json")) or os.path.isfile(
        os.path.join(path, "dataset_dict.json")
    )


def _split_of(relpath: str) -> str | None:
    m = _SPLIT_WORD.search(relpath.lower())
    return m.group(1) if m else None


def open_source(path: str | os.PathLike) -> Source:
    """Resolve a file, folder, glob or ``save_to_disk`` folder; raise :class:`InputError` if empty.

    ``FOLDER::SPLIT`` picks one split of a local dataset repo (files whose path names the
    split, e.g. ``data/test-00000-of-00001.parquet``) or of a saved ``DatasetDict``.
    """
    path = os.fspath(path)
    if "::" in path and not os.path.exists(path):
        return _open_split(*path.rsplit("::", 1))
    if any(c in path for c in "*?[") and not os.path.exists(path):
        files = sorted(f for f in glob.glob(path, recursive=True) if os.path.isfile(f) and _is_data_file(f))
        if not files:
            raise InputError(path, None, "the glob matches no data files", "check the pattern; data files end in " + ", ".join(DATA_SUFFIXES))
        return Source(path, tuple(files), "files")
    if not os.path.exists(path):
        raise InputError(path, None, "no such file or folder", "check the path")
    if os.path.isdir(path):
        if _is_hf_saved(path):
            if os.path.isfile(os.path.join(path, "dataset_dict.json")):
                names = sorted(d for d in os.listdir(path) if os.path.isdir(os.path.join(path, d)))
                raise InputError(
                    path, None, f"is a DatasetDict with splits {', '.join(names)}",
                    f"pick one, e.g. {path}::{names[0] if names else 'train'}",
                )
            return Source(path, (path,), "hf")
        files = _walk_data_files(path)
        if not files:
            raise InputError(path, None, "the folder holds no data files", "data files end in " + ", ".join(DATA_SUFFIXES))
        splits = {sp for f in files if (sp := _split_of(os.path.relpath(f, path)))}
        if len(splits) > 1:
            raise InputError(
                path, None, f"the folder mixes several splits ({', '.join(sorted(splits))})",
                f"pick one, e.g. {path}::{sorted(splits)[-1]}",
            )
        return Source(path, tuple(files), "files")
    if not os.access(path, os.R_OK):
        raise InputError(path, None, "permission denied", "make the file readable (chmod +r) or run as a user who may read it")
    return Source(path, (path,), "files")


def _open_split(folder: str, split: str) -> Source:
    whole = f"{folder}::{split}"
    if not os.path.isdir(folder):
        raise InputError(whole, None, f"no such folder {folder}", "FOLDER::SPLIT needs a dataset folder")
    if os.path.isfile(os.path.join(folder, "dataset_dict.json")):
        sub = os.path.join(folder, split)
        if not os.path.isdir(sub):
            names = sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)))
            raise InputError(whole, None, f"the DatasetDict has no split {split!r}", f"choose one of {', '.join(names)}")
        return Source(whole, (sub,), "hf")
    return Source(whole, tuple(_split_files(folder, split)), "files")


def _walk_data_files(folder: str) -> list[str]:
    """Data files below ``folder`` in a stable order, hidden files and folders left out."""
    files: list[str] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        files += [os.path.join(root, n) for n in sorted(names) if _is_data_file(n) and not n.startswith(".")]
    return files


def _split_files(folder: str, split: str) -> list[str]:
    found: dict[str, list[str]] = {}
    for f in _walk_data_files(folder):
        found.setdefault(_split_of(os.path.relpath(f, folder)) or "", []).append(f)
    if split.lower() not in found:
        known = ", ".join(sorted(k for k in found if k)) or "none named in the file paths"
        raise InputError(f"{folder}::{split}", None, f"no data files of split {split!r}", f"splits found: {known}")
    return found[split.lower()]


def iter_rows(source: Source) -> Iterator[RawRow | BadRow]:
    """Yield every row of every file of ``source`` in order."""
    if source.kind == "hf":
        yield from _iter_hf(source.files[0])
        return
    for f in source.files:
        low = f.lower()
        if low.endswith((".parquet",)):
            yield from _iter_parquet(f)
        elif low.endswith((".csv", ".csv.gz", ".tsv")):
            yield from _iter_csv(f)
        else:
            yield from _iter_json_lines(f)


def _open_bytes(path: str):
    try:
        if path.lower().endswith(".gz"):
            return gzip.open(path, "rb")
        return open(path, "rb")
    except PermissionError:
        raise InputError(path, None, "permission denied", "make the file readable (chmod +r)") from None
    except IsADirectoryError:
        raise InputError(path, None, "is a folder where a file was expected", "pass the folder itself or a glob") from None


def _decode_line(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as first:
        # orjson rejects lone surrogate escapes ("\ud800") that the stdlib accepts.
        try:
            return json.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise first from None


def _json_error(path: str, where: str, line: bytes, exc: Exception) -> BadRow:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as e:
        return BadRow(path, where, "invalid_utf8", f"invalid UTF-8 byte 0x{line[e.start]:02x} at column {e.start + 1}",
                      "re-encode the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)")
    try:  # re-parse without the line break so the column is the one in the line
        orjson.loads(line.rstrip(b"\r\n"))
    except orjson.JSONDecodeError as e:
        exc = e
    msg = str(exc).split("\n")[0]
    m = re.match(r"(.*?): line \d+ column (\d+)", msg)
    if m:
        msg = f"{m.group(1)} at column {m.group(2)}"
    return BadRow(path, where, "invalid_json", f"invalid JSON ({msg[:120]})", "fix or remove the line")


def _iter_json_lines(path: str) -> Iterator[RawRow | BadRow]:
    fh = _open_bytes(path)
    lineno = 0
    try:
        with fh:
            head = fh.peek(64)[:64] if hasattr(fh, "peek") else b""
            if head.startswith(b"\xef\xbb\xbf"):
                head = head[3:]
            if head.lstrip()[:1] == b"[" or (path.lower().endswith((".json", ".json.gz")) and head.lstrip()[:1] == b"{"):
                whole = _try_whole_json(path, fh)
                if whole is not None:
                    yield from whole
                    return
                fh = _open_bytes(path)
            first = True
            for line in fh:
                lineno += 1
                if first:
                    first = False
                    if line.startswith(b"\xef\xbb\xbf"):
                        line = line[3:]
                if line.isspace() or not line:
                    continue
                try:
                    yield RawRow(path, "line", lineno, _decode_line(line))
                except (ValueError, UnicodeDecodeError) as exc:
                    bad = _json_error(path, f"line {lineno}", line, exc)
                    if not line.endswith(b"\n") and bad.reason == "invalid_json":
                        bad = BadRow(path, f"line {lineno}", "truncated_line", "the last line is cut off (no closing brace/newline)",
                                     "the file was truncated while writing: regenerate it or delete the last line")
                    yield bad
    except (EOFError, zlib.error, gzip.BadGzipFile, OSError) as exc:
        if isinstance(exc, PermissionError):
            raise InputError(path, None, "permission denied", "make the file readable (chmod +r)") from None
        if isinstance(exc, gzip.BadGzipFile) and lineno == 0:
            raise InputError(path, None, "is not gzip-compressed although its name ends in .gz",
                             "rename it without .gz or compress it with gzip") from None
        raise InputError(path, f"after line {lineno}", f"compressed data is truncated or corrupt ({exc})",
                         "re-download or re-compress the file (gzip -t tests it)") from None


def _try_whole_json(path: str, fh) -> Iterator[RawRow | BadRow] | None:
    """A JSON array (or an object holding one list of records); ``None`` means: read as JSONL."""
    raw = fh.read()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            obj = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise InputError(path, f"byte {e.start}", "invalid UTF-8", "re-encode the file as UTF-8") from None
        except json.JSONDecodeError as e:
            if raw.lstrip()[:1] == b"{" and "Extra data" in str(e):
                return None  # one object per line: JSONL with a .json name
            raise InputError(path, f"line {e.lineno} column {e.colno}", f"invalid JSON ({e.msg})",
                             "fix the file (python -m json.tool FILE shows where)") from None
    if isinstance(obj, dict):
        lists = [k for k, v in obj.items() if isinstance(v, list) and v and isinstance(v[0], dict)]
        if len(lists) == 1:
            obj = obj[lists[0]]
        else:
            return iter([RawRow(path, "row", 0, obj)])
    if not isinstance(obj, list):
        raise InputError(path, None, "holds a single JSON value, not records", "write one JSON object per line (JSONL)")
    return (RawRow(path, "row", i, r) for i, r in enumerate(obj))


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
                yield RawRow(path, "row", row, rec)
                row += 1
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(path, f"after row {row}", f"corrupt Parquet data ({str(exc)[:100]})", "re-create the file") from None


def _iter_csv(path: str) -> Iterator[RawRow | BadRow]:
    csv.field_size_limit(sys.maxsize)
    opener = gzip.open if path.lower().endswith(".gz") else open
    delim = "\t" if path.lower().endswith(".tsv") else ","
    try:
        with opener(path, "rt", encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh, delimiter=delim)
            row = 0
            try:
                first = next(reader, None)
                if first is None:
                    return
                if _looks_like_header(first):
                    names = first
                else:  # a headerless file (MMLU's CSVs): columns are named 0, 1, 2, ...
                    names = [str(i) for i in range(len(first))]
                    yield RawRow(path, "row", row, dict(zip(names, first)))
                    row += 1
                width = len(names)
                for cells in reader:
                    if not cells:
                        continue
                    if len(cells) > width:
                        yield BadRow(path, f"row {row} (line {reader.line_num})", "csv_extra_columns",
                                     f"row has {len(cells)} columns, the header {width}", "quote fields that contain the delimiter")
                    else:  # a short row lacks its last fields: they are missing, not empty
                        yield RawRow(path, "row", row, dict(zip(names, cells)))
                    row += 1
            except UnicodeDecodeError:
                raise InputError(path, f"after row {row}", "invalid UTF-8", "re-encode the file as UTF-8") from None
            except csv.Error as e:
                raise InputError(path, f"line {reader.line_num}", f"malformed CSV ({e})", "check quoting") from None
    except PermissionError:
        raise InputError(path, None, "permission denied", "make the file readable (chmod +r)") from None


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
            yield RawRow(path, "row", row, rec)
            row += 1
