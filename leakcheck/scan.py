"""Wire it together: read eval, build the index, stream train through it, collect findings.

>>> import leakcheck, os
>>> d = os.path.join(os.path.dirname(leakcheck.__file__), "data", "chat_small")
>>> r = leakcheck.scan(os.path.join(d, "train_chat.jsonl"), os.path.join(d, "eval_questions.jsonl"),
...                    leakcheck.ScanConfig(levels=("exact", "normalized")))
>>> r.summary()["contaminated"]["count"] > 0
True
"""

from __future__ import annotations

import datetime as _dt
import itertools
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .canon import normalize
from .config import LEVELS, Fields, ScanConfig
from .detect.base import Detector, Match
from .detect.hashing import TextMatchDetector
from .errors import InputError, LeakcheckError, RecordError
from .formats import DETECT_SAMPLE, FormatSpec, detect_format
from .io import BadRow, RawRow, iter_rows, open_source
from .records import Record
from .result import ChanceMatch, EvalDuplicate, Finding, InputInfo, ScanResult, SkippedRow, UnreadFile

Input = str | os.PathLike | Iterable[Mapping[str, Any]]
_RANK = {lv: i for i, lv in enumerate(LEVELS)}
_MAX_SKIPPED_LISTED = 10_000
SNIPPET = 160


def snippet(text: str | None, n: int = SNIPPET) -> str:
    """Whitespace-collapsed start of ``text`` for reports."""
    if not text:
        return ""
    t = " ".join(text[: n * 8].split())  # the head is enough, even of a 50 MB text
    return t if len(t) <= n else t[: n - 1] + "…"


@dataclass
class _Reader:
    """Turns one input into records, applying the error policy and counting every row."""

    name: str
    side: str
    fields: Fields
    on_error: str
    files: tuple[str, ...] = ()
    spec: FormatSpec | None = None
    rows: int = 0
    records: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_rows: list[SkippedRow] = field(default_factory=list)
    detected_from: str = ""
    subsets: dict[str, int] = field(default_factory=dict)
    no_target: int = 0
    unread: tuple[UnreadFile, ...] = ()

    def _raw(self, data: Input) -> Iterator[RawRow | BadRow]:
        if isinstance(data, (str, os.PathLike)):
            src = open_source(data)
            self.files, self.unread = src.files, src.unread
            return iter_rows(src)
        rows: Iterable[Any]
        if hasattr(data, "iter_rows") and hasattr(data, "schema"):  # polars: iterating gives columns
            rows = data.iter_rows(named=True)  # type: ignore[union-attr]
        elif hasattr(data, "iterrows") and hasattr(data, "to_dict"):  # pandas: iterating gives column names
            rows = data.to_dict("records")  # type: ignore[union-attr]
        elif isinstance(data, Iterable) and not isinstance(data, Mapping):
            rows = data
        else:
            raise LeakcheckError(
                f"{self.side}: cannot read a {type(data).__name__}; pass a path, a datasets.Dataset, "
                "a polars/pandas DataFrame or an iterable of dicts"
            )
        return (RawRow(self.name, "row", i, r) for i, r in enumerate(rows, 1))

    def _skip(self, file: str, where: str, reason: str, message: str, fix: str) -> None:
        if self.on_error == "fail":
            raise InputError(file, where, message, (fix + ", or pass --on-error skip") if fix else "or pass --on-error skip")
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        if len(self.skipped_rows) < _MAX_SKIPPED_LISTED:
            self.skipped_rows.append(SkippedRow(file, where, reason, message))

    def _detect(self, sample: list[RawRow | BadRow]) -> RecordError | None:
        """Detect the format from the sampled rows; the error every row then gets when none fits."""
        rows = [r for r in sample if isinstance(r, RawRow)]
        if not rows:
            return None
        f = self.fields
        try:
            self.spec = detect_format([r.data for r in rows], f.prompt, f.target, f.id, f.group)
        except RecordError as exc:
            if exc.reason == "unknown_field":  # a wrong option, not a bad row: no --on-error skip
                raise InputError(rows[0].file, None, exc.what, exc.fix) from None
            return exc
        first, last = rows[0], rows[-1]
        same = first.file == last.file and first.unit == last.unit
        span = f"{first.unit}s {first.number}-{last.number}" if first is not last else first.where
        self.detected_from = span if same else f"the first {len(rows)} records"
        return None

    def _extractor(self) -> tuple[Callable[[Any, int], Record] | None, bool]:
        """The detected format's extract function, and whether it has a target to count as missing."""
        if self.spec is None:
            return None, False
        return self.spec.extract, self.spec.target is not None

    def records_of(self, data: Input) -> Iterator[Record]:
        stream = self._raw(data)
        sample = list(itertools.islice(stream, DETECT_SAMPLE))
        undetected = self._detect(sample)
        extract, has_target = self._extractor()
        for raw in itertools.chain(_emptied(sample), stream):
            rownum = self.rows
            self.rows += 1
            if isinstance(raw, BadRow):
                self._skip(raw.file, raw.where, raw.reason, raw.what, raw.fix)
                continue
            try:
                if extract is None and type(raw.data) is dict and (undetected is None or undetected.reason == "not_object"):
                    undetected = self._detect([raw])  # no sampled row was an object: this first one decides
                    extract, has_target = self._extractor()
                if extract is None:
                    raise undetected or RecordError("not_object", "record is not an object", "each record must be a JSON object")
                rec = extract(raw.data, rownum)
            except RecordError as exc:
                what = exc.what
                if self.spec is not None and exc.reason in ("missing_field", "not_text"):
                    what += f" (format {self.spec.name}, detected from {self.detected_from})"
                self._skip(raw.file, raw.where, exc.reason, what, exc.fix or "")
                continue
            except RecursionError:  # a JSON-string column nested past Python's stack
                self._skip(raw.file, raw.where, "too_deep", "a field is nested too deeply to read", "flatten the record")
                continue
            if has_target and rec.target is None:
                self.no_target += 1
            self.records += 1
            yield rec

    def info(self, display: str) -> InputInfo:
        return InputInfo(
            path=display,
            files=self.files,
            format=self.spec.name if self.spec else "unknown",
            fields=self.spec.fields() if self.spec else {},
            records=self.records,
            rows=self.rows,
            skipped=dict(self.skipped),
            skipped_rows=tuple(self.skipped_rows),
            no_target=self.no_target,
            subsets=dict(self.subsets),
            unread=self.unread,
        )


def _emptied(items: list[Any]) -> Iterator[Any]:
    """The items in order, each let go once it is taken (the detection sample is not kept for the whole scan)."""
    items.reverse()
    while items:
        yield items.pop()


def _display(data: Input, side: str) -> str:
    return os.fspath(data) if isinstance(data, (str, os.PathLike)) else f"<{side} records>"


def build_detectors(evals: list[Record], config: ScanConfig) -> list[Detector]:
    """One detector per requested level, each indexed on the eval records."""
    dets: list[Detector] = []
    for lv in config.levels:
        if lv in ("exact", "normalized"):
            dets.append(TextMatchDetector(lv, evals, config.short_target_chars))
        else:
            from .detect import fuzzy  # numpy/datasketch only when asked for

            dets.append(fuzzy.build(lv, evals, config))
    return dets


def _eval_duplicates(evals: list[Record], short: int) -> list[EvalDuplicate]:
    """Eval records sharing a normalized prompt (and target): one group per item, strongest kind."""
    out: list[EvalDuplicate] = []
    claimed: set[int] = set()
    for kind in ("pair", "prompt", "target"):
        buckets: dict[tuple, list[int]] = {}
        for i, r in enumerate(evals):
            if i in claimed:
                continue
            if kind == "pair":
                if r.target is None:
                    continue
                key: tuple = (normalize(r.prompt), normalize(r.target))
            elif kind == "prompt":
                key = (normalize(r.prompt),)
            else:
                if r.target is None or len(normalize(r.target)) < short:
                    continue
                key = (normalize(r.target),)
            buckets.setdefault(key, []).append(i)
        for idxs in buckets.values():
            if len(idxs) > 1:
                exact = len({(evals[i].prompt, evals[i].target) for i in idxs}) == 1 if kind == "pair" else False
                exact = exact or (kind == "prompt" and len({evals[i].prompt for i in idxs}) == 1)
                exact = exact or (kind == "target" and len({evals[i].target for i in idxs}) == 1)
                claimed.update(idxs)
                first = evals[idxs[0]]
                out.append(EvalDuplicate(
                    kind=kind,
                    level="exact" if exact else "normalized",
                    ids=tuple(evals[i].id for i in idxs),
                    rows=tuple(evals[i].row for i in idxs),
                    snippet=snippet(first.target if kind == "target" else first.prompt, 100),
                ))
    out.sort(key=lambda d: d.rows[0])
    return out


class _Collector:
    """Turns raw matches into findings: pairs, strongest level per kind, chance targets, groups."""

    def __init__(self, evals: list[Record], config: ScanConfig, espec: FormatSpec, tspec_ref: "_Reader"):
        self.evals = evals
        self.cfg = config
        self.espec = espec
        self.treader = tspec_ref
        self.findings: list[Finding] = []
        self.near_misses: dict[tuple[int, str], tuple[tuple, Finding]] = {}
        self.short = [r.target is not None and len(normalize(r.target)) < config.short_target_chars for r in evals]
        # eval idx -> [train keys seen, pending findings, total matches, examples]
        self.target_only: dict[int, list[Any]] = {}
        self.groups: dict[str, list[int]] = {}
        for i, r in enumerate(evals):
            if r.group is not None:
                self.groups.setdefault(r.group, []).append(i)

    def _field(self, spec: FormatSpec | None, name: str) -> str:
        if spec is None:
            return name
        return (spec.prompt if name == "prompt" else spec.target) or name

    def add_batch(self, batch: list[Record], matches: Iterable[tuple[str, Match]]) -> None:
        best: dict[tuple[int, int], dict[tuple[str, str], tuple[int, float, str]]] = {}
        below: list[tuple[str, Match]] = []
        for level, m in matches:
            if m.below:
                below.append((level, m))
                continue
            slot = best.setdefault((m.pos, m.eval_idx), {})
            fk = (m.eval_field, m.train_field)
            cand = (_RANK[level], -m.score, level)
            if fk not in slot or cand < slot[fk]:
                slot[fk] = cand
        tspec = self.treader.spec
        for level, m in below:
            if (m.pos, m.eval_idx) not in best:
                self._near_miss(level, m, batch[m.pos], tspec)
        for (pos, ei), slot in sorted(best.items()):
            t = batch[pos]
            e = self.evals[ei]
            pp = slot.get(("prompt", "prompt"))
            tt = slot.get(("target", "target"))
            # A short target ("18", "B") equal by chance must not turn a prompt match into a
            # pair: it stays a chance match, counted apart, and the prompt match stands alone.
            if pp and tt and not self.short[ei]:
                weaker = max(pp, tt)
                self._emit(e, t, "pair", weaker[2], min(-pp[1], -tt[1]), "prompt", "prompt", tspec,
                           detail={"prompt_level": pp[2], "prompt_score": -pp[1],
                                   "target_level": tt[2], "target_score": -tt[1]})
            else:
                if pp:
                    self._emit(e, t, "prompt", pp[2], -pp[1], "prompt", "prompt", tspec)
                if tt:
                    self._target_only(ei, e, t, tt, tspec)
            for (ef, tf), kind in ((("target", "prompt"), "target_in_prompt"), (("prompt", "target"), "prompt_in_target")):
                c = slot.get((ef, tf))
                if c:
                    self._emit(e, t, kind, c[2], -c[1], ef, tf, tspec)
        if self.groups:
            for pos, t in enumerate(batch):
                if t.group is None:
                    continue
                for ei in self.groups.get(t.group, ()):
                    if (pos, ei) not in best:
                        self._emit(self.evals[ei], t, "group", "exact", 1.0, "prompt", "prompt", tspec, group=t.group)

    def _emit(self, e: Record, t: Record, kind: str, level: str, score: float, ef: str, tf: str,
              tspec: FormatSpec | None, group: str | None = None, detail: dict | None = None) -> None:
        self.findings.append(self._finding(e, t, kind, level, score, ef, tf, tspec, group, detail))

    def _finding(self, e: Record, t: Record, kind: str, level: str, score: float, ef: str, tf: str,
                 tspec: FormatSpec | None, group: str | None = None, detail: dict | None = None) -> Finding:
        return Finding(
            eval_id=e.id, train_id=t.id, kind=kind, level=level, score=round(score, 4),
            eval_row=e.row, train_row=t.row,
            eval_field=self._field(self.espec, ef), train_field=self._field(tspec, tf),
            eval_snippet=snippet(e.prompt if ef == "prompt" else e.target),
            train_snippet=snippet(t.prompt if tf == "prompt" else t.target),
            group=group if group is not None else (e.group if e.group is not None and e.group == t.group else None),
            detail=detail,
            subset=e.subset,
        )

    def _target_only(self, ei: int, e: Record, t: Record, tt: tuple[int, float, str], tspec: FormatSpec | None) -> None:
        st = self.target_only.get(ei)
        if st is None:
            st = self.target_only[ei] = [set(), [], 0, [], tt[2]]
        st[2] += 1
        if len(st[3]) < self.cfg.max_examples:
            st[3].append(t.id)
        if _RANK[tt[2]] < _RANK[st[4]]:
            st[4] = tt[2]
        if self.short[ei]:
            return
        key = t.group if t.group is not None else ("row", t.row)
        st[0].add(key)
        if len(st[0]) <= self.cfg.max_target_hits:
            st[1].append(self._finding(e, t, "target", tt[2], -tt[1], "target", "target", tspec))
        else:
            st[1] = []

    def _near_miss(self, level: str, m: Match, t: Record, tspec: FormatSpec | None) -> None:
        """Keep, per eval record and level, the highest-scoring match under the threshold.

        The key orders every candidate totally, so what is kept does not depend on the
        order or sharding of the train side.
        """
        key = (m.score, -t.row, m.eval_field, m.train_field)
        slot = (m.eval_idx, level)
        if slot in self.near_misses and key <= self.near_misses[slot][0]:
            return
        kind = m.eval_field if m.eval_field == m.train_field else f"{m.eval_field}_in_{m.train_field}"
        f = self._finding(self.evals[m.eval_idx], t, kind, level, m.score, m.eval_field, m.train_field, tspec)
        self.near_misses[slot] = (key, f)

    def closest_near_misses(self) -> tuple[Finding, ...]:
        """The ``max_near_misses`` best near misses, one per eval record and level, best first."""
        leaked = {f.eval_row for f in self.findings}
        ranked = sorted(
            ((key[0], -f.eval_row, _RANK[f.level], key), f)
            for (ei, lv), (key, f) in self.near_misses.items()
            if f.eval_row not in leaked
        )
        return tuple(f for _, f in reversed(ranked[-self.cfg.max_near_misses :]))

    def finish(self) -> tuple[list[Finding], list[ChanceMatch]]:
        chance: list[ChanceMatch] = []
        for ei, (keys, pending, total, examples, level) in sorted(self.target_only.items()):
            e = self.evals[ei]
            if self.short[ei] or len(keys) > self.cfg.max_target_hits:
                chance.append(ChanceMatch(
                    eval_id=e.id, eval_row=e.row, target=snippet(e.target, 60),
                    reason="short" if self.short[ei] else "generic", level=level,
                    train_matches=total, examples=tuple(examples),
                ))
            else:
                self.findings.extend(pending)
        findings = sorted(self.findings, key=Finding.sort_key)
        return findings, chance


def _parameters(config: ScanConfig, dets: list[Detector]) -> dict[str, Any]:
    return {
        "levels": {d.level: d.parameters() for d in dets},
        "short_target_chars": config.short_target_chars,
        "max_target_hits": config.max_target_hits,
        "on_error": config.on_error,
    }


def load_records(data: Input, fields: Fields | None = None, on_error: str = "fail", side: str = "eval") -> tuple[list[Record], InputInfo]:
    """Read a whole input into records (for the eval side, or for a look in a notebook).

    >>> import leakcheck, os
    >>> p = os.path.join(os.path.dirname(leakcheck.__file__), "data", "chat_small", "eval_questions.jsonl")
    >>> recs, info = load_records(p)
    >>> info.format, len(recs) == info.records
    ('gsm8k', True)
    """
    recs, reader = _read_all(data, fields or Fields(), on_error, side)
    return recs, reader.info(_display(data, side))


def _read_all(data: Input, fields: Fields, on_error: str, side: str) -> tuple[list[Record], _Reader]:
    reader = _Reader(_display(data, side), side, fields, on_error)
    recs = list(reader.records_of(data))
    # Counted here, off the streamed train path: reports need records per eval subset only.
    for r in recs:
        if r.subset is not None:
            reader.subsets[r.subset] = reader.subsets.get(r.subset, 0) + 1
    return recs, reader


def scan(train: Input, eval: Input, config: ScanConfig | None = None) -> ScanResult:
    """Find eval records that leaked into train, field by field and level by level.

    ``train`` and ``eval`` are paths (file, folder, glob, ``save_to_disk`` folder) or
    iterables of dicts (a ``datasets.Dataset`` works). The train side is streamed in
    batches of ``config.batch_size``; only the eval side is held in memory.
    """
    cfg = config or ScanConfig()
    if isinstance(train, (str, os.PathLike)):
        open_source(train)  # fail on a wrong train path before the eval side is indexed
    evals, ereader = _read_all(eval, cfg.eval_fields, cfg.on_error, "eval")
    einfo = ereader.info(_display(eval, "eval"))
    if not evals:
        _no_records(einfo, "eval")
    notes: list[str] = []
    if isinstance(train, (str, os.PathLike)) and isinstance(eval, (str, os.PathLike)):
        if os.path.realpath(os.fspath(train)) == os.path.realpath(os.fspath(eval)):
            notes.append("train and eval are the same file: every record matches itself")
    notes += _input_notes(einfo, "eval")
    dets = build_detectors(evals, cfg)
    treader = _Reader(_display(train, "train"), "train", cfg.train_fields, cfg.on_error)
    assert ereader.spec is not None  # records were read, so a format was detected
    collector = _Collector(evals, cfg, ereader.spec, treader)
    # Detectors that learn from the train side (template statistics) see a sample of the
    # first records before anything is matched; that sample is then probed like any batch.
    primers = [d for d in dets if hasattr(d, "prime")]
    stream = treader.records_of(train)
    if primers:
        sample = list(itertools.islice(stream, cfg.sample_size))
        for d in primers:
            d.prime(sample)
        for i in range(0, len(sample), cfg.batch_size):
            _probe(collector, dets, sample[i : i + cfg.batch_size])
        del sample
    batch: list[Record] = []
    for rec in stream:
        batch.append(rec)
        if len(batch) >= cfg.batch_size:
            _probe(collector, dets, batch)
            batch = []
    if batch:
        _probe(collector, dets, batch)
    tinfo = treader.info(_display(train, "train"))
    if treader.records == 0:
        _no_records(tinfo, "train")
    notes += _input_notes(tinfo, "train")
    findings, chance = collector.finish()
    near_misses = collector.closest_near_misses()
    for d in dets:
        notes.extend(getattr(d, "notes", lambda: [])())
    return ScanResult(
        train=tinfo,
        eval=einfo,
        levels=cfg.levels,
        parameters=_parameters(cfg, dets),
        findings=tuple(findings),
        chance=tuple(chance),
        eval_duplicates=tuple(_eval_duplicates(evals, cfg.short_target_chars)),
        near_misses=near_misses,
        notes=tuple(notes),
        created_at=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
    )


def _probe(collector: _Collector, dets: list[Detector], batch: list[Record]) -> None:
    def gen() -> Iterator[tuple[str, Match]]:
        for d in dets:
            for m in d.probe(batch):
                yield d.level, m

    collector.add_batch(batch, gen())


def _input_notes(info: InputInfo, side: str) -> list[str]:
    """What was read only in part: files left beside the data, records without a target."""
    notes = []
    if info.unread:
        reasons = Counter(u.reason.split(":")[0] for u in info.unread)
        names = ", ".join(os.path.basename(u.path.rstrip("/")) for u in info.unread[:3]) + (", ..." if len(info.unread) > 3 else "")
        notes.append(f"{side}: {len(info.unread)} file(s) not read ({', '.join(f'{n} {r}' for r, n in sorted(reasons.items()))}): {names}")
    if info.no_target:
        notes.append(f"{side}: {info.no_target:,} of {info.records:,} records have no {info.fields.get('target')} (missing, null or empty): "
                     "their prompts were compared, their targets could not be")
    return notes


def _no_records(info: InputInfo, side: str) -> None:
    if info.rows == 0:
        raise InputError(info.path, None, f"the {side} input has no records (empty or blank lines only)",
                         "check the path; a gate must not pass data it did not see")
    raise InputError(info.path, None, f"all {info.rows} rows of the {side} input were skipped "
                     f"({', '.join(f'{k}: {v}' for k, v in sorted(info.skipped.items()))})",
                     "fix the rows or pass the right --prompt-field/--target-field")
