#!/usr/bin/env python3
"""Where a scan's wall time goes: ``leakcheck scan ARGS`` with a timestamp at each phase.

Prints, on standard error, seconds since start as the driver enters and leaves the phases
(format detection, the eval index, learning the train templates, the shard plan, the merge)
and as it finishes each shard it probes itself, with that shard's time. The workers' shards
are not traced: the driver's idle time shows where it waits for them.

    python benchmarks/trace_scan.py benchmarks/_data/train_chat_200000.jsonl ../shared/data/gsm8k/test.jsonl \\
        --levels all --json /tmp/r.json --quiet --jobs 2
"""

from __future__ import annotations

import functools
import importlib
import sys
import time
from typing import Any, Callable

T0 = time.perf_counter()
PHASES = ("start_learning", "build_index", "_train_learned", "plan_shards", "_reduce", "_results")


def log(msg: str) -> None:
    print(f"{time.perf_counter() - T0:7.3f} {msg}", file=sys.stderr, flush=True)


def traced(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(f)
    def g(*a: Any, **k: Any) -> Any:
        log(f"> {name}")
        try:
            return f(*a, **k)
        finally:
            log(f"< {name}")

    return g


def main() -> None:
    scan = importlib.import_module("leakcheck.scan")  # the module: leakcheck.scan is also a function
    engine = importlib.import_module("leakcheck.engine")
    log("imported leakcheck")
    for name in PHASES:
        setattr(scan, name, traced(name, getattr(scan, name)))
    probe = engine.probe_shard

    def probe_shard(index: Any, job: Any, shard: Any, *ahead: Any) -> Any:
        t = time.perf_counter()
        out = probe(index, job, shard, *ahead)
        log(f"driver shard {shard.index} {time.perf_counter() - t:.2f}s{' (read ahead)' if any(ahead) else ''}")
        return out

    engine.probe_shard = probe_shard
    from leakcheck.cli import main as cli

    try:
        cli(["scan", *sys.argv[1:]])
    finally:
        log("end")


if __name__ == "__main__":  # workers start from a fork server that re-imports this file
    main()
