"""The fix: write the train set (or the eval set) without its leaked records, and say what went.

:func:`clean` scans, then streams a copy of every input file in its own format, acting on
the records the ``remove`` policy gates (read like ``--fail-on``):

- ``drop`` leaves them out;
- ``flag`` keeps every record and names the eval sets each one leaked (a JSONL key added to
  the flagged lines, a ``list<string>`` Parquet column);
- ``redact`` cuts the matched spans of ``contained`` findings out of long train texts, and
  drops records with any other finding.

Every other line of a JSONL file (plain or compressed, the codec kept) is copied byte for
byte; a Parquet file keeps its schema, compression and row groups (a group left empty is not
written); a folder or glob stays a folder with the same relative names. The manifest lists
every record acted on, sorted by file and line. Nothing is written over an input, and every
output appears whole or not at all.

>>> import leakcheck, os, tempfile
>>> d = os.path.join(os.path.dirname(leakcheck.__file__), "data", "chat_small")
>>> from leakcheck.scan import build_index
>>> cfg = leakcheck.ScanConfig(levels=("exact", "normalized"))
>>> ix = build_index([("questions", os.path.join(d, "eval_questions.jsonl"))], cfg)
>>> out = os.path.join(tempfile.mkdtemp(), "clean.jsonl")
>>> m = clean(os.path.join(d, "train_chat.jsonl"), ix, cfg, out)
>>> m.counts["dropped"] == len(m.records) > 0, m.counts["kept"] + m.counts["dropped"] == m.counts["records"]
(True, True)
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np
import orjson

from . import __version__
from .config import LEVELS, Policy, ScanConfig
from .errors import InputError, UsageError
from .index import EvalIndex
from .io.compress import CORRUPT, codec_of_bytes, corrupt, open_binary, open_binary_writer, strip_codec
from .io.readers import RawRow, _looks_like_header, iter_rows
from .io.sources import Source, open_source
from .report._atomic import atomic_target, in_place, stream_of, write_atomic
from .result import Finding, ScanResult

MODES = ("drop", "flag", "redact")
SIDES = ("train", "eval")
FLAG_FIELD = "leakcheck_leaked"
_PIECE = 1 << 20
_BUFFER = 1 << 20
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Leak:
    """One finding behind an action: the record on the other side, how it matched."""

    eval_set: str
    other_id: str
    kind: str
    level: str
    score: float

    def to_dict(self, side: str) -> dict[str, Any]:
        other = "train_id" if side == "eval" else "eval_id"
        return {"eval_set": self.eval_set, other: self.other_id, "kind": self.kind, "level": self.level, "score": round(self.score, 4)}


@dataclass(frozen=True)
class Cut:
    """A span cut out of one string of a record (``--mode redact``): ``[start, end)`` in characters."""

    field: str
    start: int
    end: int

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "start": self.start, "end": self.end, "chars": self.end - self.start}


@dataclass(frozen=True)
class Action:
    """What happened to one record: ``dropped``, ``flagged`` or ``redacted``."""

    file: str
    line: int  # 1-based line (JSONL, CSV) or row (Parquet)
    index: int  # 0-based position in the whole input
    id: str
    fingerprint: str
    action: str
    leaks: tuple[Leak, ...]
    cuts: tuple[Cut, ...] = ()
    #: why a redaction became a drop
    note: str = ""

    def to_dict(self, side: str) -> dict[str, Any]:
        d: dict[str, Any] = {"file": self.file, "line": self.line, "index": self.index, f"{side}_id": self.id,
                             "fingerprint": self.fingerprint, "action": self.action,
                             "eval_sets": sorted({lk.eval_set for lk in self.leaks}),
                             "leaks": [lk.to_dict(side) for lk in self.leaks]}
        if self.cuts:
            d["cuts"] = [c.to_dict() for c in self.cuts]
        if self.note:
            d["note"] = self.note
        return d


@dataclass
class FileCounts:
    """Records of one input file and what happened to them."""

    input: str
    output: str
    records: int = 0
    kept: int = 0
    dropped: int = 0
    flagged: int = 0
    redacted: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class Manifest:
    """What :func:`clean` wrote and every record it acted on, deterministic (no timestamps)."""

    side: str
    mode: str
    remove: Policy
    input: str
    output: str
    files: tuple[FileCounts, ...]
    records: tuple[Action, ...]
    eval_sets: tuple[str, ...]
    skipped: int = 0
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        keys = ("records", "kept", "dropped", "flagged", "redacted")
        return {k: sum(getattr(f, k) for f in self.files) for k in keys} | {"skipped_unchecked": self.skipped}

    def to_dict(self) -> dict[str, Any]:
        return {
            "leakcheck_clean": 1, "version": __version__, "side": self.side, "mode": self.mode,
            "remove": self.remove.spec(), "options": self.options, "input": self.input, "output": self.output,
            "eval_sets": list(self.eval_sets), "counts": self.counts, "files": [f.to_dict() for f in self.files],
            "records": [a.to_dict(self.side) for a in self.records],
        }

    def write(self, path: str) -> None:
        write_atomic(path, json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n")


def clean(train: str | os.PathLike, index: EvalIndex, config: ScanConfig, out: str | os.PathLike, *, mode: str = "drop",
          side: str = "train", eval_path: str | os.PathLike | None = None, remove: Policy | None = None,
          flag_field: str = FLAG_FIELD, jobs: int = 1, progress: Any = None,
          results: Mapping[str, ScanResult] | None = None) -> Manifest:
    """Scan ``train`` against ``index`` and write ``out``: the ``side`` input without (or flagging) what ``remove`` gates.

    ``remove`` defaults to the config's gate policy. With ``side="eval"``, ``eval_path`` is
    the one eval input the index was built from, and its leaked records are acted on.
    ``results`` skips the scan (already run on the same inputs). Returns the manifest; the
    caller writes it (:meth:`Manifest.write`).
    """
    _check_options(mode, side, eval_path, index, flag_field)
    policy = remove or config.policy
    missing = sorted(policy.levels_named() - set(config.levels), key=LEVELS.index)
    if missing:  # removing nothing at a level that never ran would look like a clean set
        raise UsageError(f"--remove names {', '.join(missing)}, which does not run (--levels {','.join(config.levels)}); "
                         "add it to --levels or drop it from --remove")
    src = open_source(eval_path if side == "eval" and eval_path is not None else train)
    single = _check_output(src, os.fspath(out))
    if results is None:
        from .scan import scan_index

        results = scan_index(train, index, config, jobs=jobs, progress=progress)
    gated = sorted((f for r in results.values() for f in r.gated(policy)), key=_finding_order)
    where = _eval_locations(src) if side == "eval" else None
    plan: dict[str, dict[int, list[Finding]]] = {}
    for f in gated:
        file, line = _locate(f, side, where)
        plan.setdefault(file, {}).setdefault(line, []).append(f)
    skipped = sum(sum(r.train.skipped.values()) if side == "train" else sum(r.eval.skipped.values()) for r in results.values())
    redactor = _Redactor(index, config) if mode == "redact" else None
    outputs = output_names(src, os.fspath(out))
    opts: dict[str, Any] = {"levels": list(config.levels), "on_error": config.on_error} | ({"flag_field": flag_field} if mode == "flag" else {})
    writer = _Writer(mode, side, flag_field, redactor)
    files: list[FileCounts] = []
    actions: list[Action] = []
    with atomic_target(out, folder=not single) as tmp:
        for path, rel in outputs:
            dest = tmp if single else os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
            counts = FileCounts(path, os.fspath(out) if single else os.path.join(os.fspath(out), rel))
            actions += writer.copy(path, dest, plan.pop(path, {}), counts)
            files.append(counts)
    if plan:  # a finding in a file that was not copied: never report a record removed that is still there
        raise InputError(next(iter(plan)), None, "holds leaked records but is not one of the files copied", "report this as a bug")
    return Manifest(side, mode, policy, src.path, os.fspath(out), tuple(files), tuple(actions),
                    tuple(results), skipped, opts)


def _check_options(mode: str, side: str, eval_path: Any, index: EvalIndex, flag_field: str) -> None:
    if mode not in MODES:
        raise UsageError(f"clean: unknown mode {mode!r}; use one of {', '.join(MODES)}")
    if side not in SIDES:
        raise UsageError(f"clean: unknown side {side!r}; use train or eval")
    if side == "eval" and (eval_path is None or len(index.sets) != 1):
        raise UsageError("clean --side eval: name exactly one EVAL file (not --index): its records are the ones written")
    if side == "eval" and mode == "redact":
        raise UsageError("clean --side eval --mode redact: redact cuts spans out of long train texts; use --mode drop or flag for an eval set")
    if mode == "redact" and "contained" not in index.levels:
        raise UsageError("clean --mode redact cuts contained matches: run the contained level (--levels ...,contained)")
    if mode == "flag" and not flag_field.strip():
        raise UsageError("clean --flag-field is empty; name the field to add, e.g. --flag-field leakcheck_leaked")


def _check_output(src: Source, out: str) -> bool:
    """Whether the output is one file (else a folder); refuse, before the scan, one that cannot be written."""
    if src.kind == "hf":
        raise UsageError(f"clean: {src.path} is a saved Hugging Face dataset; clean writes files: "
                         "export it (Dataset.to_parquet) and clean the Parquet file")
    if stream_of(out) is not None or (in_place(out) and not os.path.isdir(out)):
        raise UsageError(f"clean -o {out}: name a file or folder to write; clean does not write to streams or devices")
    single = len(src.files) == 1 and src.files[0] == src.path
    if single and os.path.isdir(out):
        raise UsageError(f"clean -o {out}: is a folder; the input is one file, so name the output file (e.g. {out.rstrip('/')}/clean.jsonl)")
    inside = [d for d in (src.path, *src.files) if os.path.isdir(d) and _within(out, d)]
    if inside and os.path.realpath(out) == os.path.realpath(inside[0]):
        raise UsageError(f"clean -o {out}: is the input folder {inside[0]}; choose another path: leakcheck never writes over an input")
    if inside:  # the next scan of that folder would read the cleaned copy as more data
        raise UsageError(f"clean -o {out}: is inside the input folder {inside[0]}; write the output outside it")
    if not single and os.path.lexists(out) and not (os.path.isdir(out) and not os.listdir(out)):
        raise UsageError(f"clean -o {out}: already exists; the input is a folder or glob, so name a new (or empty) folder")
    for f in src.files:
        low = strip_codec(f).lower()
        if low.endswith(".json") and not _is_jsonl(f):
            raise UsageError(f"clean: {f} is a JSON document, not JSON lines; convert it to JSONL (one object per line) first")
    return single


def _within(path: str, folder: str) -> bool:
    p, f = os.path.realpath(path), os.path.realpath(folder)
    return p == f or p.startswith(f.rstrip(os.sep) + os.sep)


def _is_jsonl(path: str) -> bool:
    """A ``.json`` file the reader reads line by line: not an array, nor an object holding one list of records.

    (The reader numbers those records ``row N`` of the list, not lines: a copy by lines would
    drop the wrong bytes.)
    """
    with open_binary(path) as fh:
        raw = fh.read().removeprefix(b"\xef\xbb\xbf")
    try:
        whole = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw.lstrip()[:1] == b"{"  # several values: one object per line
    if isinstance(whole, dict):
        return sum(1 for v in whole.values() if isinstance(v, list) and v and isinstance(v[0], dict)) != 1
    return False


def _finding_order(f: Finding) -> tuple:
    return (f.eval_set or "", f.eval_row, f.train_file or "", f.train_line or 0, f.kind, f.level)


def _locate(f: Finding, side: str, where: dict[int, tuple[str, int]] | None) -> tuple[str, int]:
    if side == "eval":
        assert where is not None
        if f.eval_row not in where:
            raise InputError(f"eval row {f.eval_row}", None, "the scan found a leak in an eval row clean cannot find again", "report this as a bug")
        return where[f.eval_row]
    if f.train_file is None or f.train_line is None:
        raise UsageError("clean: the train side was not read from files; pass a file, folder or glob")
    return f.train_file, f.train_line


def _eval_locations(src: Source) -> dict[int, tuple[str, int]]:
    """0-based row of every eval row (as the scan numbers them, bad rows included) -> (file, line)."""
    return {i: (r.file, r.number) for i, r in enumerate(iter_rows(src)) if isinstance(r, RawRow)}


def output_names(src: Source, out: str) -> list[tuple[str, str]]:
    """``(input file, name in the output)``: a file's base name, or its path inside the folder/glob/Hub repo it came from.

    >>> output_names(Source("d", ("d/a/x.jsonl", "d/y.jsonl"), "files"), "o")
    [('d/a/x.jsonl', 'a/x.jsonl'), ('d/y.jsonl', 'y.jsonl')]
    """
    if src.hub and src.hub.get("revision"):
        mark = os.sep + os.path.join("snapshots", src.hub["revision"]) + os.sep
        return [(f, f.split(mark, 1)[1] if mark in f else os.path.basename(f)) for f in src.files]
    if os.path.isdir(src.path):
        base = src.path
    elif len(src.files) == 1:
        return [(src.files[0], os.path.basename(src.files[0]))]
    else:
        base = os.path.commonpath([os.path.dirname(os.path.abspath(f)) for f in src.files])
    return [(f, os.path.relpath(os.path.abspath(f), os.path.abspath(base))) for f in src.files]


# -- writing -------------------------------------------------------------------------------------


class _Writer:
    """Copies one file at a time in its own format, acting on the planned lines."""

    def __init__(self, mode: str, side: str, flag_field: str, redactor: "_Redactor | None"):
        self.mode, self.side, self.flag_field, self.redactor = mode, side, flag_field, redactor

    def copy(self, path: str, dest: str, plan: dict[int, list[Finding]], counts: FileCounts) -> list[Action]:
        base = strip_codec(path).lower()
        if base.endswith(".parquet"):
            acts = self._parquet(path, dest, plan, counts)
        elif base.endswith((".csv", ".tsv")):
            acts = self._csv(path, dest, plan, counts)
        else:
            acts = self._jsonl(path, dest, plan, counts)
        missing = sorted(set(plan) - {a.line for a in acts})
        if missing:
            raise InputError(path, f"line {missing[0]}", "a leaked record was not found where the scan saw it (did the file change?)",
                             "rerun clean on unchanged files")
        return acts

    def _action(self, path: str, line: int, found: list[Finding], what: str, cuts: tuple[Cut, ...] = (), note: str = "") -> Action:
        f = found[0]
        if self.side == "train":
            rid, fp, idx = f.train_id, f.train_fingerprint, f.train_row
            leaks = {Leak(x.eval_set or "", x.eval_id, x.kind, x.level, x.score) for x in found}
        else:
            rid, fp, idx = f.eval_id, f.eval_fingerprint, f.eval_row
            leaks = {Leak(x.eval_set or "", x.train_id, x.kind, x.level, x.score) for x in found}
        return Action(path, line, idx, rid, fp, what, tuple(sorted(leaks, key=lambda lk: (lk.eval_set, lk.other_id, lk.kind, lk.level))),
                      cuts, note)

    def _flags(self, found: list[Finding]) -> list[str]:
        """The flag's value: the eval sets a train record leaked, or the train files an eval record was found in."""
        if self.side == "train":
            return sorted({f.eval_set or "" for f in found})
        return sorted({os.path.basename(f.train_file or "") for f in found})

    def _decide(self, path: str, line: int, found: list[Finding], obj: Any) -> tuple[Any, Action]:
        """The record to write (``None``: drop it) and the action taken."""
        if self.mode == "flag":
            return obj, self._action(path, line, found, "flagged")
        if self.mode == "redact":
            assert self.redactor is not None
            new, cuts, note = self.redactor.redact(obj, found)
            if new is not None:
                return new, self._action(path, line, found, "redacted", cuts)
            return None, self._action(path, line, found, "dropped", note=note)
        return None, self._action(path, line, found, "dropped")

    @staticmethod
    def _count(counts: FileCounts, act: Action | None) -> None:
        counts.records += 1
        if act is None:
            counts.kept += 1
        else:
            setattr(counts, act.action, getattr(counts, act.action) + 1)
            if act.action != "dropped":
                counts.kept += 1

    # JSONL (any codec) ------------------------------------------------------------------------

    def _jsonl(self, path: str, dest: str, plan: dict[int, list[Finding]], counts: FileCounts) -> list[Action]:
        acts: list[Action] = []
        lineno = 0
        with _open_in(path) as src, _open_out(path, dest) as out:

            def read() -> bytes:
                try:
                    return src.readline(_PIECE)
                except CORRUPT as exc:  # reading only: a failed write is the output's error
                    raise corrupt(path, f"after line {lineno}", exc) from None

            at_start = True
            while chunk := read():
                if at_start:
                    lineno += 1
                    if lineno not in plan and not chunk.isspace():
                        counts.records += 1
                        counts.kept += 1
                at_start = chunk.endswith(b"\n")
                found = plan.get(lineno)
                if found is None:
                    out.write(chunk)
                    continue
                while not at_start and (more := read()):
                    chunk += more
                    at_start = more.endswith(b"\n")
                kept, act = self._jsonl_line(path, lineno, chunk, found)
                acts.append(act)
                self._count(counts, act)
                if kept is not None:
                    out.write(kept)
        return acts

    def _jsonl_line(self, path: str, lineno: int, line: bytes, found: list[Finding]) -> tuple[bytes | None, Action]:
        bom = _BOM if lineno == 1 and line.startswith(_BOM) else b""  # kept on the line, not parsed
        try:
            obj = orjson.loads(line[len(bom):])
        except orjson.JSONDecodeError:
            obj = json.loads(line[len(bom):].decode("utf-8"))  # a lone surrogate escape, which the scan read this way too
        if not isinstance(obj, dict):
            raise InputError(path, f"line {lineno}", "is not a JSON object; clean keeps JSONL records as objects", "convert the file to one object per line")
        new, act = self._decide(path, lineno, found, obj)
        if new is None:
            return None, act
        if act.action == "flagged":
            return _with_key(path, lineno, line, obj, self.flag_field, self._flags(found)), act
        body = line.rstrip(b"\r\n")
        return bom + json.dumps(new, ensure_ascii=False).encode("utf-8", "surrogatepass") + line[len(body):], act

    # Parquet --------------------------------------------------------------------------------

    def _parquet(self, path: str, dest: str, plan: dict[int, list[Finding]], counts: FileCounts) -> list[Action]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(path)
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(path, None, f"not a readable Parquet file ({str(exc)[:100]})", "check the file was fully written") from None
        schema = pf.schema_arrow
        if self.mode == "flag":
            if self.flag_field in schema.names:
                raise UsageError(f"clean --flag-field {self.flag_field}: {path} already has that column; name another with --flag-field")
            schema = schema.append(pa.field(self.flag_field, pa.list_(pa.string())))
        md = pf.metadata
        codec = md.row_group(0).column(0).compression.lower() if md.num_row_groups and md.num_columns else "snappy"
        acts: list[Action] = []
        row = 0
        with pq.ParquetWriter(dest, schema, compression=codec) as w:
            for g in range(md.num_row_groups):
                table = pf.read_row_group(g)
                n = table.num_rows
                here = {r - row: plan[r] for r in range(row + 1, row + n + 1) if r in plan}
                table, got = self._parquet_group(path, table, here, row, schema)
                acts += got
                got_by = {a.line - row - 1: a for a in got}
                for i in range(n):
                    self._count(counts, got_by.get(i))
                row += n
                if table.num_rows:
                    w.write_table(table, row_group_size=table.num_rows)
        return acts

    def _parquet_group(self, path: str, table: Any, here: dict[int, list[Finding]], row: int, schema: Any) -> tuple[Any, list[Action]]:
        import pyarrow as pa

        if not here:
            return (_flag_column(table, [[]] * table.num_rows, schema) if self.mode == "flag" else table), []
        rows = table.to_pylist()
        acts: list[Action] = []
        keep: list[int] = []
        flags: list[list[str]] = []
        for i, rec in enumerate(rows):
            found = here.get(i + 1)
            if found is None:
                keep.append(i)
                flags.append([])
                continue
            new, act = self._decide(path, row + i + 1, found, rec)
            acts.append(act)
            if new is not None:
                rows[i] = new
                keep.append(i)
                flags.append(self._flags(found) if act.action == "flagged" else [])
        if self.mode == "redact":
            table = pa.Table.from_pylist([rows[i] for i in keep], schema=table.schema)
        else:
            table = table.take(pa.array(keep, type=pa.int64()))  # typed: an empty list would be null-typed
        return (_flag_column(table, flags, schema) if self.mode == "flag" else table), acts

    # CSV ------------------------------------------------------------------------------------

    def _csv(self, path: str, dest: str, plan: dict[int, list[Finding]], counts: FileCounts) -> list[Action]:
        if self.mode != "drop":
            raise UsageError(f"clean --mode {self.mode}: {path} is CSV, which clean can only drop records from; "
                             "convert it to JSONL or Parquet, or use --mode drop")
        acts: list[Action] = []
        delim = "\t" if strip_codec(path).lower().endswith(".tsv") else ","
        with open_binary(path) as src, _open_out(path, dest) as out:
            raw: list[bytes] = []

            def lines() -> Iterator[str]:
                for b in iter(lambda: src.readline(), b""):
                    raw.append(b)
                    yield b.decode("utf-8", "surrogateescape")

            reader = csv.reader(lines(), delimiter=delim, strict=True)
            start = 1
            for i, cells in enumerate(reader):
                data = i > 0 or not _looks_like_header(cells)  # a headerless file (MMLU's) starts with a record
                found = plan.get(start) if data else None
                if found is None:
                    out.write(b"".join(raw))
                    if data and cells:
                        counts.records += 1
                        counts.kept += 1
                else:
                    _, act = self._decide(path, start, found, None)
                    acts.append(act)
                    self._count(counts, act)
                raw.clear()
                start = reader.line_num + 1
            out.write(b"".join(raw))
        return acts


def _flag_column(table: Any, flags: list[list[str]], schema: Any) -> Any:
    import pyarrow as pa

    name = schema.names[-1]
    return table.append_column(schema.field(name), pa.array(flags, type=pa.list_(pa.string())))


def _with_key(path: str, lineno: int, line: bytes, obj: dict, key: str, value: list[str]) -> bytes:
    """The line with ``"key": value`` added before its closing brace; every other byte unchanged."""
    if key in obj:
        raise UsageError(f"clean --flag-field {key}: {path} line {lineno} already has that key; name another with --flag-field")
    body = line.rstrip(b" \t\r\n")
    if not body.endswith(b"}"):
        raise InputError(path, f"line {lineno}", "does not end with '}'", "write one JSON object per line")
    sep = b", " if obj else b""
    field = json.dumps({key: value}, ensure_ascii=False)[1:-1].encode("utf-8", "surrogatepass")
    return body[:-1] + sep + field + b"}" + line[len(body):]


@contextlib.contextmanager
def _open_in(path: str) -> Iterator[BinaryIO]:
    """The file's bytes, decompressed; a plain file with a large buffer (the copy is I/O: 8 KiB reads cost 2.5x)."""
    with open(path, "rb") as fh:
        codec = codec_of_bytes(fh.read(8))
    if codec is not None:
        with open_binary(path) as z:
            yield z
        return
    with open(path, "rb", buffering=_BUFFER) as plain:
        yield plain


@contextlib.contextmanager
def _open_out(path: str, dest: str) -> Iterator[BinaryIO]:
    """``dest`` for writing, compressed as the bytes of ``path`` are (gz stays gz); deterministic headers."""
    with open(path, "rb") as fh:
        codec = codec_of_bytes(fh.read(8))
    with open_binary_writer(dest, codec, _BUFFER) as out:
        yield out


# -- redaction -----------------------------------------------------------------------------------


class _Redactor:
    """Cuts the spans of a train record's strings that the eval items' n-grams cover.

    The eval side is known by n-gram hashes only (an index holds no eval text): a train token
    is covered when an n-gram through it has a hash of the eval item. After the cut, the
    record is read again and its contained score against each item recomputed; if any is
    still at the threshold, or the record has a finding at another level, it is dropped.
    """

    def __init__(self, index: EvalIndex, config: ScanConfig):
        self.det: Any = index.parts["contained"]  # a ContainedDetector: its n-gram hashes per eval item
        self.n = config.contained.ngram
        self.threshold = config.contained.threshold
        self.config = config
        self.item_of: dict[tuple[str, int], int] = {}
        for s in index.sets:
            for i in range(s.start, s.stop):
                self.item_of[(s.name, index.meta.rows[i])] = i
        self.spec: Any = None

    def _items(self, found: list[Finding]) -> list[int] | None:
        out = []
        for f in found:
            i = self.item_of[(f.eval_set or "", f.eval_row)]
            if f.level != "contained":
                return None
            if f.kind == "pair" and all(lv == "contained" for k, lv in f.evidence() if k != "pair"):
                out += [i, i + self.det.E]
            elif f.kind in ("prompt", "target", "target_in_prompt", "prompt_in_target"):
                out.append(i + (self.det.E if f.kind in ("target", "target_in_prompt") else 0))
            else:
                return None
        return out

    def redact(self, obj: Any, found: list[Finding]) -> tuple[Any, tuple[Cut, ...], str]:
        """``(new record, cuts, "")`` or ``(None, (), why it is dropped instead)``."""
        items = self._items(found)
        if items is None:
            return None, (), "a finding other than contained: dropped"
        hashes = np.unique(np.concatenate([self.det.item_h[self.det.item_ptr[i]: self.det.item_ptr[i + 1]] for i in items]))
        cuts: list[Cut] = []
        new = _map_strings(obj, "", lambda s, where: self._cut(s, where, hashes, cuts))
        if not cuts or not self._clean_now(new, items):
            return None, (), "the matched span could not be cut out whole: dropped"
        return new, tuple(cuts), ""

    def _cut(self, s: str, where: str, hashes: np.ndarray, cuts: list[Cut]) -> str:
        spans = _token_spans(s)
        if spans is None or len(spans[0]) < self.n:
            return s
        tok_h, starts, ends = spans
        from .detect import grams

        w = grams.Words(tok_h, np.array([0, len(tok_h)], dtype=np.int64))
        h, _ = grams.ngrams(w, self.n)
        hit = np.flatnonzero(np.isin(h, hashes))
        if not len(hit):
            return s
        covered = np.zeros(len(tok_h) + 1, dtype=np.int32)
        np.add.at(covered, hit, 1)
        np.add.at(covered, hit + self.n, -1)
        on = np.cumsum(covered)[:-1] > 0
        out, pos = [], 0
        i = 0
        while i < len(on):
            if not on[i]:
                i += 1
                continue
            j = i
            while j + 1 < len(on) and on[j + 1]:
                j += 1
            a, b = int(starts[i]), int(ends[j])
            out.append(s[pos:a])
            cuts.append(Cut(where, a, b))
            pos = b
            i = j + 1
        out.append(s[pos:])
        return "".join(out)

    def _clean_now(self, obj: Any, items: list[int]) -> bool:
        from .formats import detect_format

        if self.spec is None:
            f = self.config.train_fields
            self.spec = detect_format([obj], f.prompt, f.target, f.id, f.group)
        try:
            rec = self.spec.extract(obj, 0)
        except Exception:  # the cut left no readable prompt: drop the record instead
            return False
        for it in items:
            ev, ef = (it - self.det.E, "target") if it >= self.det.E else (it, "prompt")
            for text in (rec.prompt, rec.target):
                score = self.det.similarity(ev, ef, text)
                if score is not None and score >= self.threshold:
                    return False
        return True


def _map_strings(obj: Any, where: str, fn: Callable[[str, str], str]) -> Any:
    """``obj`` with ``fn(string, its dotted path)`` applied to every string inside it."""
    if isinstance(obj, str):
        return fn(obj, where)
    if isinstance(obj, dict):
        return {k: _map_strings(v, f"{where}.{k}" if where else str(k), fn) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_map_strings(v, f"{where}[{i}]", fn) for i, v in enumerate(obj)]
    return obj


def _token_spans(s: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Token hashes of ``s`` as the contained level computes them, with each token's character span."""
    from .detect import grams

    if s.isascii():
        w = grams.words([s])  # ASCII: the byte offsets it keeps are character offsets
        assert w.starts is not None and w.ends is not None
        return w.hashes, w.starts, w.ends
    found = list(grams._SIMPLE.finditer(s))
    w = grams.words([" ".join(m.group() for m in found)])
    if len(w.hashes) != len(found):
        return None  # the tokens do not map one to one onto the text: the record is dropped instead
    return w.hashes, np.array([m.start() for m in found]), np.array([m.end() for m in found])


def plan_summary(m: Manifest) -> str:
    """One line for the terminal: what was written and what was removed."""
    c = m.counts
    parts = [f"{c['records']:,} {m.side} records", f"{c['kept']:,} written"]
    for k in ("dropped", "flagged", "redacted"):
        if c[k]:
            parts.append(f"{c[k]:,} {k}")
    if m.skipped:
        parts.append(f"{m.skipped:,} unreadable rows kept unchecked")
    return f"wrote {m.output}: " + ", ".join(parts)


__all__ = ["clean", "Manifest", "Action", "Cut", "Leak", "FileCounts", "MODES", "SIDES", "FLAG_FIELD", "output_names",
           "plan_summary"]
