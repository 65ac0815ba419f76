"""The scan's one step on Ray: train shards mapped by a pool of actors, merged in the driver.

``leakcheck.scan(train, eval, engine="ray")`` plans the same shards as the local engines
(byte ranges of a JSONL file, ranges of Parquet row groups, whole files), makes a Ray
dataset of them and maps it with ``map_batches`` on an actor pool. The eval index is put in
the object store once, as :meth:`~leakcheck.index.EvalIndex.to_bytes`; every actor loads it
once and runs :func:`~leakcheck.engine.probe_shard`, the step the local engines run, so it
reads its shard with leakcheck's own readers: findings, rows, lines, ids and skipped rows are
those of ``engine="local"``. The driver merges the shard results in shard order.

Ray's own readers (``read_json``, ``read_parquet``) are not used: Arrow's JSON reader types a
column from the whole file (an id ``1`` next to an id ``2.5`` becomes ``1.0``; a message
``content`` that is a string in one row and a list of parts in another fails the file), fills
absent keys with nulls and knows no line numbers.

Files are read where the actors run: every node must see the train files at the same path.

>>> NEEDS_RAY
"--engine ray needs Ray: pip install 'leakcheck[ray]'"
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import re
from collections.abc import Iterator, Sequence
from typing import Any

from .engine import Progress, ScanJob, ShardResult, probe_shard
from .errors import InputError, LeakcheckError, UsageError
from .index import EvalIndex
from .io.shards import Shard

NEEDS_RAY = "--engine ray needs Ray: pip install 'leakcheck[ray]'"
#: ``s3://bucket/x``, ``gs://...``: names no local reader opens (``hf://`` is the Hub's, resolved locally).
_URI = re.compile(r"^(?!hf://)[A-Za-z][A-Za-z0-9+.-]*://")

__all__ = ["NEEDS_RAY", "import_ray", "check_input", "run_ray"]


def import_ray() -> Any:
    """The ``ray`` module with Ray Data, or a one-line :class:`UsageError` saying what to install."""
    try:
        import ray
        import ray.data  # noqa: F401  (the extra: ray[data], not bare ray)
    except ImportError:
        raise UsageError(NEEDS_RAY) from None
    return ray


def check_input(train: object) -> None:
    """Refuse what the Ray engine cannot scan, before any work.

    >>> check_input("data/train.jsonl")
    >>> check_input("s3://bucket/t.jsonl")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    leakcheck.errors.UsageError: s3://bucket/t.jsonl: --engine ray reads files that every node sees at the same path ...
    """
    if not isinstance(train, (str, os.PathLike)):
        raise UsageError("--engine ray scans files: pass the train data as a path every Ray node can read, or use engine='local' "
                         "for records in memory")
    if _URI.match(os.fspath(train)):
        raise UsageError(f"{os.fspath(train)}: --engine ray reads files that every node sees at the same path (local disk, NFS, "
                         "a mounted bucket), not object-store URIs; mount the bucket (s3fs, gcsfuse) or copy the files to shared storage")


def run_ray(index: EvalIndex, job: ScanJob, shards: Sequence[Shard], *, jobs: int = 0, address: str | None = None,
            progress: Progress | None = None) -> Iterator[ShardResult]:
    """Steps on a pool of Ray actors; yields one :class:`ShardResult` per shard, in shard order.

    A Ray already initialized in this process is used as it is. Otherwise this connects to
    ``address`` (``"auto"``, ``"HOST:6379"``, ``"ray://HOST:10001"``) or, without it, to
    ``RAY_ADDRESS``, else to a cluster started on this machine, else starts a local Ray;
    either is let go at the end (a cluster is not stopped). ``jobs`` > 0 caps the actors; by default
    there is one per CPU of the cluster, and never more than shards. A bad row (with
    ``on_error="fail"``) or an unreadable file raises the error the serial engine raises:
    the one of the first shard in row order.
    """
    ray = import_ray()
    started = _connect(ray, address)
    try:
        with _quiet_data_context(ray) as ctx:
            yield from _run(ray, ctx, index, job, shards, jobs, progress)
    finally:
        if started:
            ray.shutdown()


def _connect(ray: Any, address: str | None) -> bool:
    """Connect to (or start) Ray; whether this call started it."""
    if ray.is_initialized():
        return False
    try:
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    except ConnectionError as exc:
        raise UsageError(f"--engine ray: cannot connect to Ray ({str(exc).splitlines()[0][:120]}); "
                         "start the cluster (ray start --head) or set RAY_ADDRESS to its address") from None
    return True


@contextlib.contextmanager
def _quiet_data_context(ray: Any) -> Iterator[Any]:
    """Ray Data set to keep shard order and draw no progress bars of its own; restored afterwards."""
    ctx = ray.data.DataContext.get_current()
    order, bars = ctx.execution_options.preserve_order, ctx.enable_progress_bars
    log = logging.getLogger("ray.data")
    level = log.level
    ctx.execution_options.preserve_order, ctx.enable_progress_bars = True, False
    log.setLevel(logging.ERROR)
    try:
        yield ctx
    finally:
        ctx.execution_options.preserve_order, ctx.enable_progress_bars = order, bars
        log.setLevel(level)


def _pool(ray: Any, shards: int, jobs: int) -> tuple[int, float]:
    """Actors and CPUs per actor: never more actors than CPUs can hold, so every actor starts."""
    cpus = max(1.0, float(ray.cluster_resources().get("CPU", 1)))
    n = max(1, min(shards, jobs if jobs > 0 else int(cpus)))
    return n, min(1.0, cpus / n)


def _run(ray: Any, ctx: Any, index: EvalIndex, job: ScanJob, shards: Sequence[Shard], jobs: int,
         progress: Progress | None) -> Iterator[ShardResult]:
    n, cpus = _pool(ray, len(shards), jobs)
    index_ref = ray.put(index.to_bytes(with_text=True))
    ds = ray.data.from_items([{"shard": pickle.dumps(s)} for s in shards], override_num_blocks=len(shards))
    out = ds.map_batches(
        _Prober, batch_size=1, batch_format="pyarrow", compute=ray.data.ActorPoolStrategy(size=n), num_cpus=cpus,
        # The ref goes inside a list: Ray resolves no ObjectRef nested in constructor arguments,
        # so the actor gets the ref and fetches the bytes itself, once.
        fn_constructor_kwargs={"index_ref": [index_ref], "job": job, "cwd": os.getcwd()},
    )
    size = {s.index: s.size for s in shards}
    for row in out.iter_rows():
        if row["error"]:
            raise _error_from(row["error"])
        result: ShardResult = pickle.loads(row["result"])
        if progress:
            progress(size[result.shard], result.counts.records)
        yield result


class _Prober:
    """One actor: loads the index once, then runs the scan's step on one shard per call."""

    def __init__(self, index_ref: list[Any], job: ScanJob, cwd: str):
        import ray

        self.index = EvalIndex.from_bytes(ray.get(index_ref[0]), job.config)
        self.job = job
        if os.path.isdir(cwd):  # relative train paths are the driver's
            os.chdir(cwd)

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        results, errors = [], []
        for blob in batch.column("shard").to_pylist():
            shard: Shard = pickle.loads(blob)
            try:
                results.append(pickle.dumps(self._step(shard)))
                errors.append(b"")
            except LeakcheckError as exc:
                results.append(b"")
                errors.append(_error_to(exc))
        return pa.table({"result": pa.array(results, pa.binary()), "error": pa.array(errors, pa.binary())})

    def _step(self, shard: Shard) -> ShardResult:
        if not os.path.exists(shard.file):
            import socket

            raise InputError(shard.file, None, f"not found on Ray node {socket.gethostname()}",
                             "put the train data where every node sees it at the same path (NFS, a mounted bucket), or use --engine local")
        return probe_shard(self.index, self.job, shard)


def _error_to(exc: LeakcheckError) -> bytes:
    """An error as plain data: an :class:`InputError` does not survive pickling (its ``args`` are the message)."""
    if isinstance(exc, InputError):
        return pickle.dumps(("input", exc.path, exc.where, exc.what, exc.fix))
    return pickle.dumps(("usage" if isinstance(exc, UsageError) else "other", str(exc)))


def _error_from(blob: bytes) -> LeakcheckError:
    kind, *args = pickle.loads(blob)
    if kind == "input":
        return InputError(*args)
    return UsageError(args[0]) if kind == "usage" else LeakcheckError(args[0])
