"""Run the scan's one step over shards of the train side: serially, on processes, or on Ray.

The step, :func:`probe_shard`, is the same on every engine: read one shard's rows, turn them
into records with the train format the driver detected, probe every level of the eval index,
and return the shard's collector state and row counts. Engines only decide where steps run;
the driver merges what they return (:mod:`leakcheck.collect`), so results do not depend on
the engine, the number of jobs or the order in which shards finish.

>>> default_jobs() >= 1
True
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from .collect import Collector, TrainSide
from .config import ScanConfig
from .detect.base import Match
from .errors import InputError, RecordError
from .formats import FormatSpec
from .index import EvalIndex, TrainLearned
from .io.chat_lines import ChatShard, Filtering, declined_rows, read_chat_shard
from .io.readers import BadRow, RawRow
from .io import shards as _shards
from .io.shards import SHARD_BYTES, Shard, iter_shard, open_source
from .records import Record
from .result import SkippedRow

MAX_SKIPPED_LISTED = 10_000


def default_jobs() -> int:
    """All cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@dataclass
class RowCounts:
    """Rows read from one side (or shard): every row is a record or a counted skip."""

    rows: int = 0
    records: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_rows: list[SkippedRow] = field(default_factory=list)
    subsets: dict[str, int] = field(default_factory=dict)
    #: records read whose reward target is missing, null or empty (prompt compared, no target)
    no_target: int = 0

    def merge(self, other: "RowCounts") -> "RowCounts":
        self.rows += other.rows
        self.records += other.records
        self.no_target += other.no_target
        for k, v in other.skipped.items():
            self.skipped[k] = self.skipped.get(k, 0) + v
        room = MAX_SKIPPED_LISTED - len(self.skipped_rows)
        self.skipped_rows += other.skipped_rows[: max(0, room)]
        for k, v in other.subsets.items():
            self.subsets[k] = self.subsets.get(k, 0) + v
        return self


@dataclass(frozen=True)
class ScanJob:
    """Everything a worker needs besides the index and its shard (small, picklable)."""

    config: ScanConfig
    spec: FormatSpec
    #: per eval set: the (prompt, target) field names findings report
    efields: tuple[tuple[str, str], ...]
    detected_from: str = ""


@dataclass
class ShardResult:
    """What one step returns: its shard, row counts and collector state."""

    shard: int
    counts: RowCounts
    state: Collector


class Staged:
    """The eval index a scan probes with, once what its levels learn from train is known.

    ``base`` is the index built from the eval side alone; ``learn`` returns what the levels
    learn from the first train records (:class:`~leakcheck.index.TrainLearned`), perhaps by
    waiting for another process (``pending``, its future). Worker processes can start from
    ``base`` while that runs: each step is handed the learned result and applies it once.
    """

    def __init__(self, base: EvalIndex, learn: Callable[[], TrainLearned] | None = None,
                 pending: Future | None = None) -> None:
        self.base = base
        self._learn = learn
        self._pending = pending
        self._index: EvalIndex | None = base if learn is None else None
        self.learned: TrainLearned | None = None

    def done(self) -> bool:
        """Whether :meth:`get` returns without waiting (or learning here)."""
        return self._index is not None or (self._pending is not None and self._pending.done())

    def learning_elsewhere(self) -> bool:
        """Whether :meth:`get` would wait for another process (this one is free meanwhile)."""
        return self._index is None and self._pending is not None and not self._pending.done()

    def get(self) -> EvalIndex:
        """The index with what was learned applied: learned (or waited for) on the first call."""
        if self._index is None:
            assert self._learn is not None
            self.learned = self._learn()
            self._index = self.base.with_learned(self.learned)
        return self._index


def records_of(rows: Iterable[RawRow | BadRow], spec: FormatSpec, on_error: str, counts: RowCounts, detected_from: str = "",
               first_row: int = 0) -> Iterator[tuple[Record, int]]:
    """``(record, line)`` for every good row; bad rows raise (``on_error="fail"``) or are counted."""
    for raw in rows:
        rownum = first_row + counts.rows
        counts.rows += 1
        rec = _record_of(raw, rownum, spec, on_error, counts, detected_from)
        if rec is not None:
            yield rec, raw.number  # type: ignore[union-attr]


def _record_of(raw: RawRow | BadRow, rownum: int, spec: FormatSpec, on_error: str, counts: RowCounts,
               detected_from: str) -> Record | None:
    """One row's record, counted; ``None`` for a bad row (raised with ``on_error="fail"``, else counted)."""
    if isinstance(raw, BadRow):
        _skip(counts, on_error, raw.file, raw.where, raw.reason, raw.what, raw.fix)
        return None
    try:
        rec = spec.extract(raw.data, rownum)
    except RecordError as exc:
        what = exc.what
        if exc.reason in ("missing_field", "not_text"):
            what += f" (format {spec.name}, detected from {detected_from})" if detected_from else f" (format {spec.name})"
        _skip(counts, on_error, raw.file, raw.where, exc.reason, what, exc.fix or "")
        return None
    except RecursionError:  # a JSON-string column nested past Python's stack
        _skip(counts, on_error, raw.file, raw.where, "too_deep", "a field is nested too deeply to read", "flatten the record")
        return None
    if spec.target is not None and rec.target is None:
        counts.no_target += 1
    counts.records += 1
    return rec


@dataclass
class Sparse:
    """Levels to probe only on some records of a shard: the rows their :class:`LineFilter` passed."""

    levels: frozenset[str]
    rows: set[int]


@dataclass
class ShardRecords:
    """``(record, line)`` of a shard's good rows, and the rows some levels need not see."""

    records: Iterator[tuple[Record, int]]
    sparse: Sparse | None = None

    def __iter__(self) -> Iterator[tuple[Record, int]]:
        return self.records


def shard_records(shard: Shard, job: ScanJob, counts: RowCounts, filtering: Filtering | None = None) -> ShardRecords:
    """``(record, line)`` of ``shard``'s good rows, as :func:`records_of` makes them. A JSONL shard of
    chats or flat rows is read by the C reader (:mod:`leakcheck.io.chat_lines`) where it is built,
    every other one row by row. ``filtering`` (the index's): rows that no level could match are counted and
    left out, or the result says which rows the levels that can tell need see (:attr:`ShardRecords.sparse`)."""
    chat = read_chat_shard(shard, job.spec, filtering)
    if chat is None:
        return ShardRecords(records_of(iter_shard(shard), job.spec, job.config.on_error, counts, job.detected_from))
    counts.rows += chat.rows
    counts.records += chat.fast
    if job.spec.target is not None:
        counts.no_target += chat.fast_no_target
    sparse = Sparse(filtering.levels, chat.maybe) if filtering is not None and chat.maybe is not None else None
    if not chat.declined:
        return ShardRecords(iter(chat.kept), sparse)
    return ShardRecords(_with_declined(shard, job, counts, chat), sparse)


def _with_declined(shard: Shard, job: ScanJob, counts: RowCounts, chat: ChatShard) -> Iterator[tuple[Record, int]]:
    """The C reader's records with those of the lines it declined, read the usual way, in row order."""
    spec, on_error = job.spec, job.config.on_error
    kept = chat.kept
    k = 0
    for row, raw in declined_rows(shard, chat):
        while k < len(kept) and kept[k][0].row < row:
            yield kept[k]
            k += 1
        rec = _record_of(raw, row, spec, on_error, counts, job.detected_from)
        if rec is not None:
            yield rec, raw.number  # type: ignore[union-attr]
    yield from kept[k:]


def _skip(counts: RowCounts, on_error: str, file: str, where: str, reason: str, message: str, fix: str) -> None:
    if on_error == "fail":
        raise InputError(file, where, message, (fix + ", or pass --on-error skip") if fix else "or pass --on-error skip")
    counts.skipped[reason] = counts.skipped.get(reason, 0) + 1
    if len(counts.skipped_rows) < MAX_SKIPPED_LISTED:
        counts.skipped_rows.append(SkippedRow(file, where, reason, message))


def probe_records(index: EvalIndex, job: ScanJob, records: Iterable[tuple[Record, int]], train: TrainSide) -> Collector:
    """Probe every level of ``index`` with ``records`` in batches; the collector holds the result.

    ``records`` from :func:`shard_records` may say that some levels need see only some rows.
    """
    sparse = records.sparse if isinstance(records, ShardRecords) else None
    collector = Collector(index, job.config, job.efields, train.shard)
    batch: list[Record] = []
    lines: list[int] = []
    size = job.config.batch_size
    for rec, line in records:
        batch.append(rec)
        lines.append(line)
        if len(batch) >= size:
            _probe_batch(index, collector, batch, lines, train, sparse)
            batch, lines = [], []
    if batch:
        _probe_batch(index, collector, batch, lines, train, sparse)
    return collector


def _probe_batch(index: EvalIndex, collector: Collector, batch: list[Record], lines: list[int], train: TrainSide,
                 sparse: Sparse | None = None) -> None:
    stats: dict[str, dict[str, int]] = {lv: {} for lv in index.parts}
    some = [i for i, r in enumerate(batch) if r.row in sparse.rows] if sparse is not None else []

    def gen() -> Iterator[tuple[str, Match]]:
        for lv, part in index.parts.items():
            if sparse is not None and lv in sparse.levels:  # the rest cannot match at this level
                for m in part.probe([batch[i] for i in some], stats[lv]) if some else ():
                    yield lv, m._replace(pos=some[m.pos])
                continue
            for m in part.probe(batch, stats[lv]):
                yield lv, m

    collector.add_batch(batch, lines, train, gen())
    for lv, s in stats.items():
        if s:
            collector.count(lv, s)


@dataclass
class ReadAhead:
    """A shard read (and its batches tokenized) before the index was ready: see :func:`read_ahead`."""

    shard: Shard
    counts: RowCounts
    records: list[tuple[Record, int]]
    sparse: Sparse | None = None


def probe_shard(index: EvalIndex, job: ScanJob, shard: Shard, ahead: ReadAhead | None = None) -> ShardResult:
    """The scan's one step: read ``shard``, probe it against ``index``, return its state."""
    if ahead is not None and ahead.shard == shard:
        counts, recs = ahead.counts, ShardRecords(iter(ahead.records), ahead.sparse)
    else:
        counts = RowCounts()
        recs = shard_records(shard, job, counts, index.filtering)
    collector = probe_records(index, job, recs, TrainSide(job.spec, shard.file, shard.index))
    return ShardResult(shard.index, counts, collector.detach())


def read_ahead(base: EvalIndex, job: ScanJob, shard: Shard) -> ReadAhead | None:
    """Read ``shard``'s records and do the :attr:`~leakcheck.levels.LevelSpec.prepare` work of
    ``base``'s levels, batch by batch as :func:`probe_records` will cut them: the part of a step
    that needs no learned index, done while the scan waits for what is learned from train
    (``base``, the index before it, already tells which rows the text levels need see). ``None``
    if the shard has a bad row: its step meets it again and reports it as usual.
    """
    from .levels import REGISTRY

    counts = RowCounts()
    try:
        got = shard_records(shard, job, counts, base.filtering)
        records = list(got)
    except (InputError, OSError):
        return None
    prepares = {p for lv in base.levels if (p := REGISTRY[lv].prepare) is not None}
    size = job.config.batch_size
    for i in range(0, len(records), size):
        batch = [r for r, _ in records[i : i + size]]
        for prepare in prepares:
            prepare(batch)
    return ReadAhead(shard, counts, records, got.sparse)


def shard_bytes(total: int, jobs: int, most: int = SHARD_BYTES) -> int:
    """Bytes per shard for ``jobs`` workers: at most ``most``, and as many equal shards as a multiple of ``jobs``.

    Shards of one size, ``jobs`` of them per round, leave no worker alone with a short last
    shard while the others wait (16 MiB shards of a 145 MB file: 9, the ninth half a shard).

    A train side of at most ``most`` bytes stays one shard (scanned in this process).

    >>> shard_bytes(145_000_000, 2)  # 10 shards of 14.5 MB
    14500000
    >>> shard_bytes(20_000_000, 2), shard_bytes(20_000_000, 1) == SHARD_BYTES, shard_bytes(1_000, 2) == SHARD_BYTES
    (10000000, True, True)
    """
    if jobs <= 1 or total <= most:
        return most
    count = -(-total // most)
    count = -(-count // jobs) * jobs
    return max(1, -(-total // count))


# -- engines -----------------------------------------------------------------------------------

#: ``progress(bytes, records)``, called as each shard is done.
Progress = Callable[..., None]


def run_serial(index: EvalIndex, job: ScanJob, shards: Sequence[Shard], progress: Progress | None = None) -> Iterator[ShardResult]:
    for s in shards:
        r = probe_shard(index, job, s)
        if progress:
            progress(s.size, r.counts.records)
        yield r


_WORKER: dict[str, Any] = {}
# processes are started from two threads (the learning process's, the pool's): one at a time
# may hide ``__main__.__file__``
_MAIN_LOCK = threading.RLock()


@contextlib.contextmanager
def _main_without_phantom_file() -> Iterator[None]:
    """Workers re-import the caller's ``__main__`` from its file; standard input and ``-c`` have none.

    A real script is re-imported as usual (so it needs the ``if __name__ == "__main__"``
    guard every multiprocessing program needs).
    """
    with _MAIN_LOCK:
        main = sys.modules.get("__main__")
        path = getattr(main, "__file__", None)
        if main is None or path is None or os.path.isfile(path):
            yield
            return
        del main.__file__
        try:
            yield
        finally:
            main.__file__ = path


def _init_worker(index_bytes: bytes, job: ScanJob) -> None:
    _WORKER["base"] = _WORKER["index"] = EvalIndex.from_bytes(index_bytes, job.config)
    _WORKER["job"] = job
    _WORKER["learned"] = None
    _WORKER["ahead"] = {}


def _worker_read_ahead(shard: Shard) -> int:
    """Read ``shard`` ahead in this worker, for the step that probes it (see :func:`read_ahead`)."""
    _WORKER["ahead"][shard.index] = read_ahead(_WORKER["base"], _WORKER["job"], shard)
    return os.getpid()


def _worker_step(shard: Shard, learned: TrainLearned | None = None) -> ShardResult:
    """Probe ``shard`` with the worker's index, ``learned`` applied to it (on the first step:
    a pool serves one scan, so every step brings the same)."""
    if learned is not None and _WORKER["learned"] is None:
        _WORKER["index"], _WORKER["learned"] = _WORKER["base"].with_learned(learned), learned
    held: dict[int, ReadAhead | None] = _WORKER["ahead"]
    ahead = held.pop(shard.index, None)
    for k in [k for k in held if k < shard.index]:  # shards are taken in order: another worker probed them
        del held[k]
    return probe_shard(_WORKER["index"], _WORKER["job"], shard, ahead)


def _pool_context() -> Any:
    import multiprocessing as mp

    ctx = mp.get_context("forkserver")
    # the fuzzy levels' modules (and NumPy) too: what every worker and the learning process import first
    ctx.set_forkserver_preload(["leakcheck.engine", "leakcheck.detect.fuzzy"])
    return ctx


def warm_up() -> None:
    """Start the fork server now, so it imports leakcheck while this process builds the eval index."""
    from multiprocessing import forkserver

    _pool_context()
    with _main_without_phantom_file():
        forkserver.ensure_running()


def uses_workers(train: Any, jobs: int, engine: str = "local") -> bool:
    """Whether a scan of ``train`` will start worker processes: ``jobs`` > 1 and a local
    train side of more than one shard. A train path that does not open is ``False``: the
    scan reports it where it always does.
    """
    if jobs <= 1 or engine != "local" or not isinstance(train, (str, os.PathLike)):
        return False
    path = os.fspath(train)
    if "::" in path or not os.path.exists(path):  # a hub dataset or a selection resolves later, once
        return False
    try:
        source = open_source(path)
    except InputError:
        return False
    return sum(os.path.getsize(f) for f in source.files if os.path.isfile(f)) > _shards.SHARD_BYTES


def warm_up_for(train: Any, jobs: int, engine: str = "local") -> bool:
    """:func:`warm_up` when :func:`uses_workers`; its workers then start as soon as the eval
    index exists, not a fork server's import later. Returns whether it did.
    """
    if not uses_workers(train, jobs, engine):
        return False
    warm_up()
    return True


def submit_once(fn: Callable[..., Any], *args: Any) -> Future:
    """``fn(*args)`` in one process from the fork server, while this one goes on; its future.

    The process is started from a thread: starting it waits for the fork server to import
    leakcheck (a third of a second), which this process spends on other work.
    """
    out: Future = Future()
    out.set_running_or_notify_cancel()

    def start() -> None:
        from concurrent.futures import ProcessPoolExecutor

        try:
            pool = ProcessPoolExecutor(max_workers=1, mp_context=_pool_context())
            with _main_without_phantom_file():
                fut = pool.submit(fn, *args)
            pool.shutdown(wait=False)  # the process ends once fn has returned
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the future
            out.set_exception(exc)
            return
        fut.add_done_callback(lambda f: _settle(out, f))

    threading.Thread(target=start, daemon=True).start()
    return out


def _settle(out: Future, done: Future) -> None:
    exc = done.exception()
    if exc is not None:
        out.set_exception(exc)
    else:
        out.set_result(done.result())


def run_processes(index: EvalIndex | Staged, job: ScanJob, shards: Sequence[Shard], jobs: int,
                  progress: Progress | None = None) -> Iterator[ShardResult]:
    """Steps on this process and ``jobs - 1`` worker processes, which load the index once from its bytes.

    This process probes shards too: it holds the index already, so ``--jobs 2`` starts one
    worker, not two that each load the index and add their memory while this one waits.
    A :class:`Staged` index whose learning is still running: the workers start (and load
    its base) meanwhile, and are handed what was learned with each shard.
    Shards are taken in row order by whoever is free. A failing shard stops the taking; the
    error raised is the one of the first failing shard in row order (the serial engine's),
    once every shard before it is done.

    Workers come from a fork server that imported only leakcheck: not forked from this
    process, whose polars and NumPy threads may hold locks a forked child would inherit, and
    not spawned, which would re-run the caller's ``__main__`` (a script without a
    ``if __name__ == "__main__"`` guard, a notebook, standard input).
    """
    import queue
    from concurrent.futures import ProcessPoolExecutor

    staged = index if isinstance(index, Staged) else Staged(index)
    if jobs <= 1:
        yield from run_serial(staged.get(), job, shards, progress)
        return

    todo = iter(shards)
    by_index = {sh.index: sh for sh in shards}
    lock = threading.Lock()
    stop = threading.Event()
    failed: dict[int, BaseException] = {}
    done: queue.SimpleQueue[ShardResult | None] = queue.SimpleQueue()

    def take() -> Shard | None:
        with lock:
            return None if failed or stop.is_set() else next(todo, None)

    def fail(shard: Shard, exc: BaseException) -> None:
        with lock:
            failed[shard.index] = exc

    def feed(pool: ProcessPoolExecutor, s: Shard | None, fut: Future | None) -> None:
        try:
            while s is not None:
                try:
                    fut = fut or pool.submit(_worker_step, s, *step_args)
                    done.put(fut.result())
                except BaseException as exc:  # noqa: BLE001 - handed to the driver thread
                    fail(s, exc)
                s, fut = take(), None
        finally:
            done.put(None)

    ctx = _pool_context()
    with ProcessPoolExecutor(max_workers=jobs - 1, mp_context=ctx, initializer=_init_worker,
                             initargs=(staged.base.to_bytes(with_text=True, compress=False), job)) as pool:
        # The driver takes the first shard (it starts at once), each worker one of the next.
        s = take()
        nexts = [take() for _ in range(jobs - 1)]
        ahead = None
        if not staged.done():
            # While the learning goes on, the workers start, load the index and read their
            # first shards ahead, and so does this process if the learning is not its own. A
            # submit may start a worker, which must happen in this thread
            # (``_main_without_phantom_file`` changes ``__main__`` meanwhile).
            with _main_without_phantom_file():
                for w in nexts:
                    if w is not None:
                        pool.submit(_worker_read_ahead, w)
            if s is not None and staged.learning_elsewhere():
                ahead = read_ahead(staged.base, job, s)
        index = staged.get()
        step_args = (staged.learned,) if staged.learned is not None else ()
        with _main_without_phantom_file():
            firsts = [(w, pool.submit(_worker_step, w, *step_args) if w is not None else None) for w in nexts]
        feeders = [threading.Thread(target=feed, args=(pool, w, f), daemon=True) for w, f in firsts]
        for t in feeders:
            t.start()
        running = len(feeders)
        try:
            while s is not None or running:
                if s is not None:
                    try:
                        mine, ahead = probe_shard(index, job, s, ahead), None
                        yield _reported(mine, by_index[s.index], progress)
                    except GeneratorExit:
                        raise
                    except BaseException as exc:
                        fail(s, exc)
                    s = take()
                # the workers' results so far; all of them once this process has nothing left to take
                while running and (s is None or not done.empty()):
                    r = done.get()
                    if r is None:
                        running -= 1
                    else:
                        yield _reported(r, by_index[r.shard], progress)
        finally:
            stop.set()  # nothing more is taken, whatever happened
            for t in feeders:
                t.join()
    if failed:
        raise failed[min(failed)]


def _reported(r: ShardResult, shard: Shard, progress: Progress | None) -> ShardResult:
    if progress:
        progress(shard.size, r.counts.records)
    return r
