#!/usr/bin/env python3
"""What ``leakcheck clean`` costs next to ``leakcheck scan`` of the same train file.

Alternates ``scan`` and ``clean`` (A B A B ...) of the generated chat train file against
GSM8K test at the same levels and ``--jobs``; prints records/s, MiB/s, wall, CPU and peak
RSS (summed over the process tree) of each run, medians, and the clean/scan wall ratio
(clean should cost a scan plus one streaming copy), and a plain ``cp`` of the file as the
disk's floor for that copy. Checks that every clean run dropped
exactly the planted items (20 in the shared files) and that a rescan of the last output
is clean.

    python benchmarks/bench_clean.py --records 1M --repeat 3
    python benchmarks/bench_clean.py --records 200k --levels exact,normalized --jobs 1
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from benchlib import REPO, MiB, TreeRun, leakcheck_argv, load_avg, measure_tree, median, parse_count, usable_cpus


def _argv(cmd: str, train: Path, evalp: Path, out: Path, levels: str, jobs: int) -> list[str]:
    argv = [*leakcheck_argv(), cmd, str(train), str(evalp), "--levels", levels, "-j", str(jobs), "--quiet"]
    return argv + (["-o", str(out)] if cmd == "clean" else ["--json", str(out)])


def _row(name: str, r: TreeRun, records: int, size: int) -> str:
    return (f"{name:<6} wall {r.wall:7.1f} s  cpu {r.cpu:7.1f} s  {records / r.wall:>10,.0f} rec/s  "
            f"{size / MiB / r.wall:7.1f} MiB/s  peak RSS {r.rss_sum_mib:7.0f} MiB  rc {r.rc}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", default="1M", help="train size N: benchmarks/_data/train_chat_N.jsonl (200k or 1M)")
    ap.add_argument("--train", type=Path, help="another chat train file (its .meta.json, if any, gives the planted count)")
    ap.add_argument("--eval", type=Path, default=REPO.parent / "shared" / "data" / "gsm8k" / "test.jsonl")
    ap.add_argument("--levels", default="all")
    ap.add_argument("--jobs", type=int, default=usable_cpus())
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tmp", type=Path, default=None, help="where outputs go (default: a temporary folder)")
    a = ap.parse_args()
    train = a.train or REPO / "benchmarks" / "_data" / f"train_chat_{parse_count(a.records)}.jsonl"
    meta = json.loads(train.with_suffix(".meta.json").read_text()) if train.with_suffix(".meta.json").is_file() else {}
    if not train.is_file() or not a.eval.is_file():
        print(f"missing {train if not train.is_file() else a.eval}: see benchmarks/README.md (Data)", file=sys.stderr)
        return 2
    n = meta.get("records") or sum(1 for _ in train.open("rb"))
    size = train.stat().st_size
    planted = meta.get("planted")
    print(f"train {train.name}: {n:,} records, {size / MiB:,.0f} MiB; eval {a.eval}; levels {a.levels}; -j {a.jobs}; "
          f"{usable_cpus()} cpus, load {load_avg()}")
    tmp = Path(tempfile.mkdtemp(prefix="bench_clean.", dir=a.tmp))
    runs: dict[str, list[TreeRun]] = {"scan": [], "clean": []}
    ok = True
    try:
        for i in range(a.repeat):
            for cmd in ("scan", "clean"):
                out = tmp / (f"clean{i}.jsonl" if cmd == "clean" else f"scan{i}.json")
                r = measure_tree(_argv(cmd, train, a.eval, out, a.levels, a.jobs))
                runs[cmd].append(r)
                print(_row(cmd, r, n, size), flush=True)
                if cmd == "clean":
                    m = json.loads(Path(str(out) + ".manifest.json").read_text())
                    dropped = m["counts"]["dropped"]
                    good = r.rc == 0 and m["counts"]["records"] == n and (planted is None or dropped == planted)
                    ok &= good
                    print(f"       dropped {dropped} (planted {planted}), written {m['counts']['kept']:,}{'' if good else '  UNEXPECTED'}")
                    if i < a.repeat - 1:
                        out.unlink()
                elif r.rc not in (0, 1):
                    ok = False
        last = tmp / f"clean{a.repeat - 1}.jsonl"
        rescan = measure_tree(_argv("scan", last, a.eval, tmp / "rescan.json", a.levels, a.jobs))
        print(f"rescan of the cleaned file: exit {rescan.rc} ({'clean' if rescan.rc == 0 else 'NOT CLEAN'})")
        ok &= rescan.rc == 0
        last.unlink()
        cp = measure_tree(["cp", str(train), str(tmp / "cp.jsonl")])
        print(f"cp of the train file (the disk's floor for the copy): {cp.wall:.1f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nmedians over {a.repeat} alternating runs:")
    for cmd, rs in runs.items():
        wall = median([r.wall for r in rs])
        print(f"{cmd:<6} wall {wall:7.1f} s  cpu {median([r.cpu for r in rs]):7.1f} s  {n / wall:>10,.0f} rec/s  "
              f"{size / MiB / wall:7.1f} MiB/s  peak RSS {median([r.rss_sum_mib for r in rs]):7.0f} MiB")
    ratio = median([c.wall / s.wall for s, c in zip(runs["scan"], runs["clean"])])
    print(f"clean / scan wall: {ratio:.2f} (median of per-repeat ratios)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
