"""How fast can a chat JSONL file be parsed at all? Row parsers against columnar JSON readers.

Issue 9 asked whether columnar parsing (pyarrow's or polars' JSON reader, then list ops for
the chat turns) could make ``exact,normalized`` as fast as the ``hash`` yardstick. This
times the parse step alone on the benchmark's train file, single-threaded, in 16 MiB blocks
as leakcheck's shards are cut:

* ``json``: ``json.loads`` per line (what the ``hash`` yardstick does)
* ``orjson``: ``orjson.loads`` per line (what leakcheck does)
* ``pyarrow``: ``pyarrow.json.read_json`` per block into columns (``use_threads=False``)
* ``polars``: ``polars.read_ndjson`` per block (``POLARS_MAX_THREADS=1``, set before import)

Contestants alternate ``--repeat`` times in one process; medians are printed with the ratio
to ``orjson``. Nothing is written.

Usage: python benchmarks/parse_speed.py [TRAIN.jsonl] [--repeat 3] [--threads]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

DEFAULT = Path(__file__).resolve().parent / "_data" / "train_chat_200000.jsonl"
BLOCK = 16 << 20


def blocks(data: bytes) -> list[bytes]:
    """``data`` cut into pieces of about :data:`BLOCK` bytes that end at line ends."""
    out, pos = [], 0
    while pos < len(data):
        end = data.find(b"\n", pos + BLOCK)
        end = len(data) if end < 0 else end + 1
        out.append(data[pos:end])
        pos = end
    return out


def contestants(threads: bool) -> dict[str, Callable[[list[bytes]], int]]:
    if not threads:
        os.environ.setdefault("POLARS_MAX_THREADS", "1")
    import orjson
    import polars as pl
    import pyarrow.json as pj

    def rows(loads: Callable[[bytes], object]) -> Callable[[list[bytes]], int]:
        def run(bs: list[bytes]) -> int:
            n = 0
            for b in bs:
                for line in b.splitlines():
                    loads(line)
                    n += 1
            return n
        return run

    def arrow(bs: list[bytes]) -> int:
        return sum(pj.read_json(io.BytesIO(b), read_options=pj.ReadOptions(use_threads=threads, block_size=len(b) + 1)).num_rows
                   for b in bs)

    def polars(bs: list[bytes]) -> int:
        return sum(pl.read_ndjson(io.BytesIO(b)).height for b in bs)

    return {"json": rows(json.loads), "orjson": rows(orjson.loads), "pyarrow": arrow, "polars": polars}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", action="store_true", help="let pyarrow and polars use all cores")
    a = ap.parse_args(argv)
    bs = blocks(a.train.read_bytes())
    cs = contestants(a.threads)
    times: dict[str, list[float]] = {k: [] for k in cs}
    counts: dict[str, int] = {}
    for _ in range(a.repeat):
        for name, run in cs.items():
            t = time.perf_counter()
            counts[name] = run(bs)
            times[name].append(time.perf_counter() - t)
    base = statistics.median(times["orjson"])
    print(f"{a.train.name}: {sum(map(len, bs)) / 2**20:.1f} MiB in {len(bs)} blocks, {a.repeat} alternating runs, medians, "
          f"threads {'on' if a.threads else 'off'}")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:8s} {m:6.2f} s  {counts[name]:>9,} rows  {m / base:5.2f} x orjson")


if __name__ == "__main__":
    main()
