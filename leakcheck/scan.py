"""Wire it together: index the eval side, stream the train side through it in shards, merge.

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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Any

from .canon import normalize
from .collect import Collector, TrainSide, snippet
from .config import Fields, ScanConfig
from .engine import (RowCounts, ScanJob, ShardResult, Staged, probe_records, records_of, run_processes, run_serial, shard_bytes,
                     submit_once, warm_up_for)
from .errors import InputError, LeakcheckError, RecordError, UsageError
from .formats import DETECT_SAMPLE, FormatSpec, detect_format
from .index import EvalIndex, TrainLearned
from .io import BadRow, RawRow, Source, iter_rows, open_source
from .io import shards as _shards
from .io.shards import plan_shards
from .levels import REGISTRY
from .records import Record
from .result import EvalDuplicate, InputInfo, ScanResult, UnreadFile

Input = str | os.PathLike | Iterable[Mapping[str, Any]]
__all__ = ["scan", "scan_many", "scan_index", "load_records", "eval_duplicates", "snippet", "Input"]


def _display(data: Input, side: str) -> str:
    return os.fspath(data) if isinstance(data, (str, os.PathLike)) else f"<{side} records>"


def _memory_rows(data: Any, side: str, name: str) -> Iterator[RawRow]:
    rows: Iterable[Any]
    if hasattr(data, "iter_rows") and hasattr(data, "schema"):  # polars: iterating gives columns
        rows = data.iter_rows(named=True)
    elif hasattr(data, "iterrows") and hasattr(data, "to_dict"):  # pandas: iterating gives column names
        rows = data.to_dict("records")
    elif isinstance(data, Iterable) and not isinstance(data, (Mapping, str, bytes)):
        rows = data
    else:
        raise LeakcheckError(
            f"{side}: cannot read a {type(data).__name__}; pass a path, a datasets.Dataset, "
            "a polars/pandas DataFrame or an iterable of dicts"
        )
    return (RawRow(name, "row", i, r) for i, r in enumerate(rows, 1))


@dataclass
class _Opened:
    """One side, opened: its rows, the format detected from them, its files and the files left."""

    display: str
    files: tuple[str, ...]
    spec: FormatSpec
    detected_from: str
    rows: Iterator[RawRow | BadRow]  # every row, the ones read for detection included
    unread: tuple[UnreadFile, ...] = ()
    hub: dict[str, str] | None = None
    #: The resolved input (files, or a Hub snapshot), resolved once: shards are planned from it.
    source: Source | None = None


def _open(data: Input, fields: Fields, side: str) -> _Opened:
    """Open ``data`` and detect its format from a sample of its first rows (:data:`DETECT_SAMPLE`)."""
    name = _display(data, side)
    unread: tuple[UnreadFile, ...] = ()
    hub = None
    src: Source | None = None
    if isinstance(data, (str, os.PathLike)):
        src = open_source(data)
        files, rows, unread, hub = src.files, iter_rows(src), src.unread, src.hub
    else:
        files, rows = (), _memory_rows(data, side, name)
    head = list(itertools.islice(rows, DETECT_SAMPLE))
    sample = [r for r in head if isinstance(r, RawRow) and type(r.data) is dict]
    while not sample and (raw := next(rows, None)) is not None:  # no object in the sample: the first one decides
        head.append(raw)
        if isinstance(raw, RawRow) and type(raw.data) is dict:
            sample = [raw]
    every = itertools.chain(_emptied(head), rows)
    if not sample:
        return _Opened(name, files, FormatSpec("unknown", "prompt", None), "", every, unread, hub, src)
    try:
        spec = detect_format([r.data for r in sample], fields.prompt, fields.target, fields.id, fields.group)
    except RecordError as exc:
        if exc.reason == "unknown_field":  # a wrong option, not a bad row: no --on-error skip
            raise InputError(sample[0].file, None, exc.what, exc.fix) from None
        # nothing fits: every row gets this row error, counted or raised like any bad row
        return _Opened(name, files, FormatSpec("unknown", "prompt", None), "", _all_bad(every, exc), unread, hub, src)
    return _Opened(name, files, spec, _span(sample), every, unread, hub, src)


def _all_bad(rows: Iterator[RawRow | BadRow], exc: RecordError) -> Iterator[RawRow | BadRow]:
    for r in rows:
        yield BadRow(r.file, r.where, exc.reason, exc.what, exc.fix or "") if isinstance(r, RawRow) else r


def _span(sample: list[RawRow]) -> str:
    """Where a format was detected from: ``lines 1-1000``, or ``the first 1000 records`` across files."""
    first, last = sample[0], sample[-1]
    if first is last:
        return first.where
    if first.file == last.file and first.unit == last.unit:
        return f"{first.unit}s {first.number}-{last.number}"
    return f"the first {len(sample)} records"


def _emptied(items: list[Any]) -> Iterator[Any]:
    """The items in order, each let go once it is taken (the detection sample is not kept for the whole scan)."""
    items.reverse()
    while items:
        yield items.pop()


def _info(opened: _Opened, counts: RowCounts) -> InputInfo:
    return InputInfo(
        path=opened.display, files=opened.files, format=opened.spec.name if counts.rows else "unknown",
        fields=opened.spec.fields() if counts.rows else {}, records=counts.records, rows=counts.rows,
        skipped=dict(counts.skipped), skipped_rows=tuple(counts.skipped_rows), subsets=dict(counts.subsets),
        no_target=counts.no_target, unread=opened.unread, hub=opened.hub,
    )


def load_records(data: Input, fields: Fields | None = None, on_error: str = "fail", side: str = "eval") -> tuple[list[Record], InputInfo]:
    """Read a whole input into records (for the eval side, or for a look in a notebook).

    >>> import leakcheck, os
    >>> p = os.path.join(os.path.dirname(leakcheck.__file__), "data", "chat_small", "eval_questions.jsonl")
    >>> recs, info = load_records(p)
    >>> info.format, len(recs) == info.records
    ('gsm8k', True)
    """
    opened = _open(data, fields or Fields(), side)
    counts = RowCounts()
    recs = [r for r, _ in records_of(opened.rows, opened.spec, on_error, counts, opened.detected_from)]
    for r in recs:
        if r.subset is not None:
            counts.subsets[r.subset] = counts.subsets.get(r.subset, 0) + 1
    info = _info(opened, counts)
    if not recs:
        _no_records(info, side)
    return recs, info


def eval_duplicates(evals: list[Record], short: int) -> list[EvalDuplicate]:
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



def name_of(data: Input, i: int = 0) -> str:
    """The default name of an eval set: its file name without extensions, plus ``-SPLIT`` for ``PATH::SPLIT``."""
    if isinstance(data, (str, os.PathLike)):
        base = os.path.basename(os.fspath(data).rstrip("/").split("::")[0]) or "eval"
        split = os.fspath(data).split("::")[1] if "::" in os.fspath(data) else ""
        for ext in (".gz", ".bz2", ".xz", ".zst", ".jsonl", ".json", ".parquet", ".csv", ".tsv", ".ndjson"):
            base = base[: -len(ext)] if base.lower().endswith(ext) else base
        return f"{base}-{split}" if split else base
    return f"eval{i + 1}" if i else "eval"


def build_index(evals: Sequence[tuple[str, Input]], config: ScanConfig) -> EvalIndex:
    """Read each named eval input and index them together at ``config.levels``."""
    named = []
    for name, data in evals:
        recs, info = load_records(data, config.eval_fields, config.on_error, "eval")
        named.append((name, recs, info))
    return EvalIndex.build(named, config)


#: ``progress(bytes, records)`` after each shard; called once first with ``(0, 0, total_bytes)``.
Progress = Callable[..., None]


def scan(train: Input, eval: Input, config: ScanConfig | None = None, *, jobs: int = 1, progress: Progress | None = None,
         engine: str = "local", ray_address: str | None = None) -> ScanResult:
    """Find eval records that leaked into train, field by field and level by level.

    ``train`` and ``eval`` are paths (file, folder, glob, ``save_to_disk`` folder) or
    iterables of dicts (a ``datasets.Dataset`` works). The train side is streamed in
    shards and batches; only the eval index is held in memory. ``jobs`` > 1 probes shards
    on that many processes, with identical results. ``engine="ray"`` probes them on a Ray
    cluster instead (see :mod:`leakcheck.ray_engine`; ``jobs`` > 1 caps its actors,
    ``ray_address`` names the cluster), with identical results too.
    """
    cfg = config or ScanConfig()
    _check_engine(engine, train)
    if isinstance(train, (str, os.PathLike)):
        open_source(train)  # fail on a wrong train path before the eval side is indexed
    (result,) = scan_many(train, [(name_of(eval, 0), eval)], cfg, jobs=jobs, progress=progress, engine=engine,
                          ray_address=ray_address).values()
    return result


def scan_many(train: Input, evals: Sequence[tuple[str, Input]], config: ScanConfig | None = None, *, jobs: int = 1,
              progress: Progress | None = None, engine: str = "local", ray_address: str | None = None) -> dict[str, ScanResult]:
    """:func:`scan` against several named eval sets in one pass over ``train``: one result per set."""
    cfg = config or ScanConfig()
    _check_engine(engine, train)
    learning = start_learning(train, cfg, jobs, engine)
    index = build_index(evals, cfg)
    notes = {}
    for name, data in evals:
        if isinstance(train, (str, os.PathLike)) and isinstance(data, (str, os.PathLike)) \
                and os.path.realpath(os.fspath(train)) == os.path.realpath(os.fspath(data)):
            notes[name] = ["train and eval are the same file: every record matches itself"]
    return scan_index(train, index, cfg, jobs=jobs, progress=progress, notes=notes, engine=engine, ray_address=ray_address,
                      learning=learning)


def start_learning(train: Input, config: ScanConfig, jobs: int, engine: str = "local") -> "Future[TrainLearned | None] | None":
    """Learn the train side's templates in another process while this one builds the eval index.

    For a scan that starts worker processes anyway (:func:`~leakcheck.engine.uses_workers`;
    the fork server is started here), when its fuzzy levels learn without the eval side
    (:attr:`~leakcheck.levels.LevelSpec.learn`): hand the future to :func:`scan_index`. The
    result is what :func:`scan_index` would learn itself from the same first records; if
    the process fails, it learns them itself.
    """
    if not any(REGISTRY[lv].learn for lv in config.levels) or not isinstance(train, (str, os.PathLike)) \
            or not warm_up_for(train, jobs, engine):
        return None
    return submit_once(learn_train, os.fspath(train), config)


def learn_train(train: str, config: ScanConfig) -> TrainLearned | None:
    """What the levels of ``config`` learn from the first records of ``train`` (see :func:`start_learning`);
    ``None`` when no row tells its format (the scan reports that itself)."""
    opened = _open(train, config.train_fields, "train")
    return TrainLearned.of(_sample(opened, config)[0], config) if opened.detected_from else None


def scan_index(train: Input, index: EvalIndex, config: ScanConfig | None = None, *, jobs: int = 1,
               progress: Progress | None = None, notes: Mapping[str, list[str]] | None = None,
               engine: str = "local", ray_address: str | None = None,
               learning: "Future[TrainLearned | None] | None" = None) -> dict[str, ScanResult]:
    """Scan ``train`` against a built or loaded :class:`EvalIndex`; one result per eval set.

    ``learning``: what :func:`start_learning` started for this train side and config, if anything.
    """
    cfg = config or ScanConfig(levels=index.levels)
    _check_engine(engine, train)
    index.check(cfg)
    index = index.only(cfg.levels)
    opened = _open(train, cfg.train_fields, "train")
    efields = tuple((s.info.fields.get("prompt") or "prompt", s.info.fields.get("target") or "target") for s in index.sets)
    job = ScanJob(cfg, opened.spec, efields, opened.detected_from)
    if not opened.detected_from:  # no row told the format: every row was bad, count (or raise on) them
        counts = RowCounts()
        list(records_of(opened.rows, opened.spec, cfg.on_error, counts))
        _no_records(_info(opened, counts), "train")
    # What the levels learn from the train side's first records (templates, IDF) is learned
    # before anything is matched, once: every shard is then probed with the same index.
    staged = Staged(index, (lambda: _train_learned(opened, cfg, learning)) if any(REGISTRY[lv].learn for lv in index.levels)
                    else None, learning)
    if isinstance(train, (str, os.PathLike)):
        assert opened.source is not None  # a path was opened as a Source
        shards = plan_shards(opened.source, **_shard_size(opened.source, jobs if engine == "local" else 1))
        if progress:
            progress(0, 0, sum(s.size for s in shards))
        if engine == "ray":
            from .ray_engine import run_ray

            results: Iterable[ShardResult] = run_ray(staged.get(), job, shards, jobs=jobs if jobs > 1 else 0,
                                                     address=ray_address, progress=progress)
        elif jobs > 1 and len(shards) > 1:
            results = run_processes(staged, job, shards, min(jobs, len(shards)), progress)
        else:
            results = run_serial(staged.get(), job, shards, progress)
        counts, merged, offsets = _reduce(staged, job, results, len(shards))
    else:
        counts = RowCounts()
        merged = probe_records(staged.get(), job, records_of(opened.rows, opened.spec, cfg.on_error, counts,
                                                             opened.detected_from), TrainSide(opened.spec, None, 0))
        offsets = [0]
    index = staged.get()
    tinfo = _info(opened, counts)
    if counts.records == 0:
        _no_records(tinfo, "train")
    collected = merged.finish(offsets, row_ids=opened.spec.id is None)
    return _results(index, cfg, tinfo, collected, notes or {})


def _train_learned(opened: _Opened, cfg: ScanConfig, learning: "Future[TrainLearned | None] | None") -> TrainLearned:
    """What the levels learn from the first train records: learned in another process
    (``learning``) or, failing that, here."""
    try:
        learned = learning.result() if learning is not None else None
        if learned is not None:
            return learned
    except Exception:  # noqa: BLE001 - a failed helper process only costs the time: learn here (and meet its error)
        pass
    learned = TrainLearned.of(_sample(opened, cfg)[0], cfg)
    from .detect.fuzzy import forget_words  # the sample's words: workers hash their own batches

    forget_words(ahead=False)  # not the batches this process read ahead: it probes them next
    return learned


def _shard_size(source: Source, jobs: int) -> dict[str, int]:
    """``target_bytes`` for :func:`plan_shards` when ``jobs`` workers want equal shards (else its
    default), and short shards at the end (``tail_bytes``) so that they finish together."""
    most = _shards.SHARD_BYTES
    total = sum(_file_size(f) for f in source.files)
    size = shard_bytes(total, jobs, most)
    out = {"target_bytes": size} if size != most else {}
    if jobs > 1 and total > most:
        out["tail_bytes"] = jobs * size
    return out


def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path) if os.path.isfile(path) else 0
    except OSError:  # gone or unreadable: its reader gives the one-line error
        return 0


ENGINES = ("local", "ray")


def _check_engine(engine: str, train: Input) -> None:
    """Refuse an unknown engine, or what it cannot scan, before any work."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")
    if engine == "ray":
        from .ray_engine import check_input, import_ray

        check_input(train)
        import_ray()


def _sample(opened: _Opened, cfg: ScanConfig) -> tuple[list[Record], RowCounts]:
    """The first ``sample_size`` train records; the rows read are put back in front of the stream."""
    head: list[RawRow | BadRow] = []

    def kept() -> Iterator[RawRow | BadRow]:
        for raw in opened.rows:
            head.append(raw)
            yield raw

    counts = RowCounts()
    recs = [r for r, _ in itertools.islice(records_of(kept(), opened.spec, "skip", counts), cfg.sample_size)]
    opened.rows = itertools.chain(head, opened.rows)
    return recs, counts


def _reduce(staged: Staged, job: ScanJob, results: Iterable[ShardResult], n: int) -> tuple[RowCounts, Collector, list[int]]:
    """Merge shard results in shard order: row counts, collector state and each shard's row offset."""
    by_shard: dict[int, ShardResult] = {}
    for r in results:
        by_shard[r.shard] = r
    merged = Collector(staged.get(), job.config, job.efields)
    counts = RowCounts()
    offsets = []
    for i in range(n):
        r = by_shard[i]
        offsets.append(counts.rows)
        counts.merge(r.counts)
        merged.merge(r.state)
    return counts, merged, offsets


def _results(index: EvalIndex, cfg: ScanConfig, tinfo: InputInfo, collected: Any, notes: Mapping[str, list[str]]) -> dict[str, ScanResult]:
    params = {
        "levels": {lv: {**p.parameters(), **collected.stats.get(lv, {})} for lv, p in index.parts.items()},
        "short_target_chars": cfg.short_target_chars,
        "max_target_hits": cfg.max_target_hits,
        "on_error": cfg.on_error,
    }
    level_notes = [n for p in index.parts.values() for n in p.notes()]
    meta = index.meta
    if meta.targets is None and not meta.target_views and any(REGISTRY[lv].fuzzy for lv in index.parts) and any(meta.has_target):
        # an index written before it kept each target's text-free agreement view
        level_notes.append("target agreement is off: this eval index holds neither eval targets nor their agreement keys, so "
                           "near/contained matches of sibling tasks (another final answer, other code) are not told apart; "
                           "rebuild the index with this leakcheck or scan the eval files")
    created = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    out = {}
    for s in index.sets:
        fill, target_of = _snippets(meta, s)
        out[s.name] = ScanResult(
            train=tinfo, eval=s.info, levels=cfg.levels, parameters=params,
            findings=tuple(fill(f) for f in collected.findings if f.eval_set == s.name),
            chance=tuple(replace(c, target=c.target or target_of(c.eval_row)) for c in collected.chance if c.eval_set == s.name),
            eval_duplicates=s.duplicates,
            near_misses=tuple(fill(f) for f in collected.near_misses if f.eval_set == s.name),
            siblings=tuple(fill(f) for f in collected.siblings if f.eval_set == s.name),
            notes=tuple(notes.get(s.name, []) + _input_notes(s.info, "eval") + _input_notes(tinfo, "train") + level_notes),
            policy=cfg.policy, created_at=created,
        )
    return out


def _snippets(meta: Any, s: Any) -> tuple[Callable[[Any], Any], Callable[[int], str]]:
    """Fill eval snippets into findings made by workers, which never see eval text.

    An index loaded from a file has no eval text either: its findings name eval records by
    id and fingerprint only.
    """
    if meta.prompts is None:
        return (lambda f: f), (lambda row: "")
    pos = {meta.rows[i]: i for i in range(s.start, s.stop)}

    def fill(f: Any) -> Any:
        if f.eval_snippet or f.eval_row not in pos:
            return f
        i = pos[f.eval_row]
        text = meta.targets[i] if f.kind in ("target", "target_in_prompt") else meta.prompts[i]
        return replace(f, eval_snippet=snippet(text))

    def target_of(row: int) -> str:
        return snippet(meta.targets[pos[row]], 60) if row in pos else ""

    return fill, target_of


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
