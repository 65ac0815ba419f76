#!/usr/bin/env python3
"""Time ``engine="ray"`` against the process engine (``jobs=2``) on the same scan; check the reports are identical.

    python benchmarks/bench_scan.py --repeat 1     # writes benchmarks/_data/train_chat_200000.jsonl once
    python benchmarks/bench_ray.py --repeat 3

Every run is its own subprocess; the time shown is the scan call's wall time (index build,
train pass, reports to dicts), the subprocess's total beside it. The contestants alternate: ``jobs2`` (``scan(..., jobs=2)``), ``ray`` (``engine="ray"``, which
starts a local Ray with every CPU and shuts it down: what a laptop user pays) and
``ray-warm`` (Ray started before the clock starts: what a user with a running cluster pays;
the actor pool, the index in the object store and the scan are timed). Needs
``pip install -e '.[ray]'``. Correctness is the bar: the script exits 1 if a report differs
from the ``jobs2`` one (``created_at`` aside).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRAIN = HERE / "_data" / "train_chat_200000.jsonl"
EVAL = HERE.parents[1] / "shared" / "data" / "gsm8k" / "test.jsonl"

RUN = r"""
import json, sys, time
import leakcheck
from leakcheck.report.json import to_dict
mode, train, ev, out = sys.argv[1:5]
if mode == "ray-warm":
    import ray
    ray.init(include_dashboard=False, log_to_driver=False)
t0 = time.perf_counter()
kw = {"jobs": 2} if mode == "jobs2" else {"engine": "ray"}
d = to_dict(leakcheck.scan(train, ev, **kw))
wall = time.perf_counter() - t0
d.pop("created_at")
json.dump(d, open(out, "w"), sort_keys=True)
print(json.dumps({"wall": wall, "findings": len(d["findings"])}))
"""


def run(mode: str, train: Path, ev: Path, out: Path) -> dict:
    start = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", RUN, mode, str(train), str(ev), str(out)], capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"{mode} failed:\n{p.stderr[-2000:]}")
    res = json.loads(p.stdout.strip().splitlines()[-1])
    res["process"] = time.perf_counter() - start
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", type=Path, default=TRAIN)
    ap.add_argument("--eval", type=Path, default=EVAL)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    modes = ("jobs2", "ray", "ray-warm")
    walls: dict[str, list[float]] = {m: [] for m in modes}
    same = True
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            for m in modes:
                out = Path(tmp) / f"{m}.json"
                r = run(m, args.train, args.eval, out)
                walls[m].append(r["wall"])
                print(f"run {i + 1} {m:9s} scan {r['wall']:6.1f} s  process {r['process']:6.1f} s  findings {r['findings']}", flush=True)
            reference = json.loads((Path(tmp) / "jobs2.json").read_text())
            for m in modes[1:]:
                if json.loads((Path(tmp) / f"{m}.json").read_text()) != reference:
                    print(f"run {i + 1}: the {m} report differs from the jobs2 report")
                    same = False
    base = statistics.median(walls["jobs2"])
    print(f"\n{args.train.name} against {args.eval.name}, all levels, medians of {args.repeat}:")
    for m in modes:
        med = statistics.median(walls[m])
        print(f"  {m:9s} {med:6.1f} s  ({med - base:+.1f} s, {med / base:.2f}x jobs2)")
    print("reports identical to jobs2:", "yes" if same else "NO")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
