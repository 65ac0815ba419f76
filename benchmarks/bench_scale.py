#!/usr/bin/env python3
"""How ``leakcheck scan`` scales: train size, worker processes, eval sets per pass.

Scaling table: chat train files of 200k, 1M and 3M records (bench_scan.py's generator,
streamed, cached under benchmarks/_data/; a size that does not fit on the disk is skipped
with a message), each scanned against GSM8K test at all levels with ``--jobs 1`` and
``--jobs 2`` when the installed leakcheck has ``--jobs`` (else once, single-process).
Columns: wall, CPU, records/s, peak RSS summed over all processes, the largest single
process, and index build/load time when ``leakcheck index`` exists (else n/a). Under the
table: the least-squares slope of wall time over records (s per million records), each
size's s per million, and the ratio of peak memory at the largest size to the smallest.

Eval sets in one pass (``--eval-sets 1,4,8``): GSM8K test plus shuffled copies under other
names, all in one scan of the smallest train file, when ``scan`` accepts several eval sets;
otherwise it says so.

    python benchmarks/bench_scale.py --sizes 200k,1M --repeat 3
    python benchmarks/bench_scale.py --sizes 200k --eval-sets 1,4,8 --no-scale
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import bench_scan
from benchlib import (REPO, MiB, Features, TreeRun, count_label, leakcheck_argv, least_squares, load_avg, measure_tree, median, parse_count,
                      scan_argv, usable_cpus)

#: Bytes per record of the generated chat files (145 MB / 200k), for the disk check before one exists.
BYTES_PER_RECORD = 760
#: Free space kept on top of a file's size (reports, temp files, other engineers).
DISK_MARGIN = 2 << 30
#: Issue 9's targets at 1M records, all levels, --jobs 2.
TARGET_1M_WALL_S = 25.0
TARGET_1M_RSS_MIB = 1e9 / MiB
#: "Peak memory flat": the largest size may use at most this much more than the smallest.
FLAT_RATIO = 1.25
#: 8 eval sets in one pass may take at most this times one set.
TARGET_EVAL_SETS_RATIO = 2.0

#: Assumed CLI of the index subcommand while it is being built; --index-build/--index-scan override.
INDEX_BUILD = "{leakcheck} index {eval} -o {index} --levels {levels}"
INDEX_SCAN = "{leakcheck} scan {train} --index {index} --levels {levels} --json {json} --quiet{jobs}"


@dataclass
class Row:
    records: int
    jobs: int | None
    train: Path
    runs: list[TreeRun] = field(default_factory=list)
    builds: list[TreeRun] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)
    flagged: str = "?"
    error: str | None = None

    @property
    def label(self) -> str:
        return f"{count_label(self.records):>5} {'-' if self.jobs is None else self.jobs:>4}"


def disk_ok(n: int) -> tuple[bool, str]:
    """Whether a train file of ``n`` records fits (or already exists) in the cache folder."""
    path = bench_scan.CACHE / f"train_chat_{n}.jsonl"
    if path.is_file():
        return True, ""
    bench_scan.CACHE.mkdir(exist_ok=True)
    need = n * BYTES_PER_RECORD
    free = shutil.disk_usage(bench_scan.CACHE).free
    if need + DISK_MARGIN > free:
        return False, (f"skip {count_label(n)} records: needs ~{need / 1e9:.1f} GB plus {DISK_MARGIN / 1e9:.1f} GB margin, "
                       f"{free / 1e9:.1f} GB free on {bench_scan.CACHE}")
    return True, ""


def summary_flagged(json_path: Path) -> str:
    try:
        s = json.loads(json_path.read_text())["summary"]
        return f"{s['contaminated']['count']} ({s['findings']} findings)"
    except (OSError, ValueError, KeyError):
        return "?"


def index_load_time(index: Path) -> float | None:
    """Seconds ``EvalIndex.load`` takes in a fresh process (imports excluded), or None if it fails."""
    code = ("import sys, time; from leakcheck.index import EvalIndex; t = time.perf_counter(); "
            "EvalIndex.load(sys.argv[1]); print(time.perf_counter() - t)")
    r = subprocess.run([sys.executable, "-c", code, str(index)], capture_output=True, text=True)
    try:
        return float(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def fill(template: str, jobs: int | None = None, **paths: str) -> list[str]:
    """argv from a command template: {leakcheck}, {jobs} (" --jobs N" or nothing) and quoted paths.

    >>> fill("{leakcheck} index {train} {index}{jobs}", jobs=2, train="a b.jsonl", index="ix")[-5:]
    ['index', 'a b.jsonl', 'ix', '--jobs', '2']
    """
    kw = {k: shlex.quote(v) for k, v in paths.items()}
    kw["leakcheck"] = shlex.join(leakcheck_argv())
    kw["jobs"] = f" --jobs {jobs}" if jobs else ""
    return shlex.split(template.format(**kw))


def run_row(row: Row, test: Path, levels: str, feats: Features, a: argparse.Namespace, tmp: Path, i: int) -> None:
    jp = tmp / f"scale_{row.records}_{row.jobs}_{i}.json"
    run = measure_tree(scan_argv(row.train, [test], levels, jp, row.jobs, feats), a.interval)
    if run.rc not in (0, 1):
        row.error = f"exit {run.rc}: {run.last_line()}"
        return
    row.runs.append(run)
    row.flagged = summary_flagged(jp)
    msg = f"  [{i + 1}/{a.repeat}] {row.label}  {run.wall:7.2f} s  cpu {run.cpu:6.2f} s  {run.rss_sum_mib:7.1f} MiB  flagged {row.flagged}"
    if feats.index:
        idx = tmp / f"index_{row.records}_{row.jobs}.lcx"
        b = measure_tree(fill(a.index_build, None, eval=str(test), index=str(idx), levels=levels), a.interval)
        if b.rc != 0:
            row.error = f"index build exit {b.rc}: {b.last_line()}"
            return
        row.builds.append(b)
        jq = tmp / f"scale_idx_{row.records}_{row.jobs}_{i}.json"
        s = measure_tree(fill(a.index_scan, row.jobs, train=str(row.train), index=str(idx), levels=levels, json=str(jq)), a.interval)
        if s.rc not in (0, 1):
            row.error = f"scan from index exit {s.rc}: {s.last_line()}"
            return
        load = index_load_time(idx)
        row.loads.append(load if load is not None else float("nan"))
        msg += f"  index build {b.wall:.2f} s, scan from index {s.wall:.2f} s"
        if idx.is_dir():
            shutil.rmtree(idx)
        else:
            idx.unlink(missing_ok=True)
    print(msg, flush=True)


def fmt(x: float | None, spec: str = "8.2f") -> str:
    return f"{x:{spec}}" if x is not None and x == x else f"{'n/a':>{int(spec.split('.')[0])}}"


def scale_table(rows: list[Row], feats: Features) -> int:
    """Print the table, slopes and memory flatness; return the number of missed targets."""
    hdr = (f"{'train':>5} {'jobs':>4} {'wall s':>8} {'cpu s':>8} {'records/s':>10} {'peak RSS MiB':>12} {'max proc MiB':>12} "
           f"{'index build s':>13} {'index load s':>12}  eval items flagged")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        if r.error or not r.runs:
            print(f"{r.label} ERROR {r.error}")
            continue
        w = median([x.wall for x in r.runs])
        build = median([b.wall for b in r.builds]) if r.builds else None
        load = median(r.loads) if r.loads else None
        print(f"{r.label} {w:8.2f} {median([x.cpu for x in r.runs]):8.2f} {r.records / w:10,.0f} "
              f"{median([x.rss_sum_mib for x in r.runs]):12.1f} {median([x.rss_max_mib for x in r.runs]):12.1f} "
              f"{fmt(build, '13.2f')} {fmt(load, '12.2f')}  {r.flagged}")
    print()
    missed = 0
    for jobs in sorted({r.jobs for r in rows}, key=lambda j: j or 0):
        ok = [r for r in rows if r.jobs == jobs and r.runs and not r.error]
        tag = f"--jobs {jobs}" if jobs else "single process"
        if len({r.records for r in ok}) < 2:
            print(f"{tag}: fewer than two sizes ran, no slope")
            continue
        xs = [r.records / 1e6 for r in ok]
        ys = [median([x.wall for x in r.runs]) for r in ok]
        slope, icpt, r2 = least_squares(xs, ys)
        per = ", ".join(f"{count_label(r.records)} {y / x:.1f}" for r, x, y in zip(ok, xs, ys))
        fit = f", R^2 {r2:.4f}" if len(ok) > 2 else " (two sizes: a line fits any two points)"
        print(f"{tag}: wall slope {slope:.2f} s per 1M records, intercept {icpt:.2f} s{fit}; wall s per 1M records at each size: {per}")
        # CPU time is less disturbed by other load on a shared machine than wall time.
        cslope, cicpt, _ = least_squares(xs, [median([x.cpu for x in r.runs]) for r in ok])
        print(f"{tag}: cpu slope {cslope:.2f} s per 1M records, intercept {cicpt:.2f} s")
        rss = [median([x.rss_sum_mib for x in r.runs]) for r in ok]
        ratio = rss[-1] / rss[0]
        flat = ratio <= FLAT_RATIO
        missed += not flat
        print(f"{tag}: peak RSS {rss[0]:.1f} MiB at {count_label(ok[0].records)} -> {rss[-1]:.1f} MiB at "
              f"{count_label(ok[-1].records)} ({ratio:.2f}x; flat = <= {FLAT_RATIO:g}x: {'PASS' if flat else 'FAIL'})")
    label = f"target 1M records, all levels, --jobs 2: wall <= {TARGET_1M_WALL_S:g} s, peak RSS <= 1 GB ({TARGET_1M_RSS_MIB:.0f} MiB)"
    hit = next((r for r in rows if r.records == 1_000_000 and r.jobs == 2 and r.runs and not r.error), None)
    if not feats.jobs:
        print(f"{label}: SKIP (this leakcheck has no --jobs)")
    elif hit is None:
        print(f"{label}: SKIP (no successful 1M --jobs 2 run)")
    else:
        w, m = median([x.wall for x in hit.runs]), median([x.rss_sum_mib for x in hit.runs])
        ok1 = w <= TARGET_1M_WALL_S and m <= TARGET_1M_RSS_MIB
        missed += not ok1
        print(f"{label}: {'PASS' if ok1 else 'FAIL'} ({w:.2f} s, {m:.1f} MiB)")
    return missed


def write_eval_variants(test: Path, k: int, out_dir: Path) -> list[Path]:
    """GSM8K test and k-1 shuffled copies under other names and ids (same items, same work)."""
    rows = bench_scan._read_jsonl(test)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [test]
    for v in range(1, k):
        order = list(range(len(rows)))
        random.Random(v).shuffle(order)
        p = out_dir / f"gsm8k_test_copy{v}.jsonl"
        with open(p, "w", encoding="utf-8") as fh:
            for j in order:
                fh.write(json.dumps({"id": f"copy{v}-{j}", "question": rows[j]["question"], "answer": rows[j]["answer"]}) + "\n")
        paths.append(p)
    return paths


def eval_sets_mode(train: Path, test: Path, counts: list[int], levels: str, feats: Features, a: argparse.Namespace, tmp: Path) -> int:
    print(f"eval sets in one pass ({', '.join(map(str, counts))}) on {train.relative_to(REPO)}:")
    if feats.multi_eval is None:
        print("  not available yet: this leakcheck's scan takes one EVAL")
        return 0
    evals = write_eval_variants(test, max(counts), tmp / "evals")
    jobs = 2 if feats.jobs else None
    walls: dict[int, list[float]] = {k: [] for k in counts}
    for i in range(a.repeat):
        for k in counts:
            jp = tmp / f"evals_{k}_{i}.json"
            run = measure_tree(scan_argv(train, evals[:k], levels, jp, jobs, feats), a.interval)
            if run.rc not in (0, 1):
                print(f"  {k} eval sets: FAILED exit {run.rc}: {run.last_line()}")
                return 1
            walls[k].append(run.wall)
            print(f"  [{i + 1}/{a.repeat}] {k} eval sets  {run.wall:7.2f} s  {run.rss_sum_mib:7.1f} MiB  flagged {summary_flagged(jp)}", flush=True)
    base = median(walls[min(counts)])
    for k in counts:
        print(f"  {k} eval sets: {median(walls[k]):.2f} s ({median(walls[k]) / base:.2f}x of {min(counts)})")
    if 8 in walls and 1 in walls:
        r = median([w8 / w1 for w8, w1 in zip(walls[8], walls[1])])
        ok = r <= TARGET_EVAL_SETS_RATIO
        print(f"target 8 eval sets <= {TARGET_EVAL_SETS_RATIO:g}x one set: {'PASS' if ok else 'FAIL'} ({r:.2f}x)")
        return int(not ok)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Scaling of leakcheck scan over train size, --jobs and eval sets per pass.")
    ap.add_argument("--sizes", default="200k,1M,3M", help="train sizes in records (default 200k,1M,3M)")
    ap.add_argument("--jobs", default="1,2", help="--jobs values to run when leakcheck has --jobs (default 1,2)")
    ap.add_argument("--levels", default="all", help="leakcheck --levels (default all)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per cell; medians shown (default 1)")
    ap.add_argument("--eval-sets", default="", help="also time N eval sets in one pass, e.g. 1,4,8 (on the smallest size)")
    ap.add_argument("--no-scale", action="store_true", help="skip the scaling table (with --eval-sets)")
    ap.add_argument("--data", type=Path, default=bench_scan.DEFAULT_DATA, help="shared data folder holding gsm8k/")
    ap.add_argument("--interval", type=float, default=0.02, help="RSS sampling interval in seconds (default 0.02)")
    ap.add_argument("--index-build", default=INDEX_BUILD, help=f"index build command when leakcheck has index (default: {INDEX_BUILD!r})")
    ap.add_argument("--index-scan", default=INDEX_SCAN, help=f"scan-from-index command (default: {INDEX_SCAN!r})")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed or a run fails")
    ap.add_argument("--out", type=Path, help="also write the measurements as JSON here")
    a = ap.parse_args(argv)
    try:
        sizes = sorted({parse_count(s) for s in a.sizes.split(",") if s.strip()})
        eval_counts = sorted({int(s) for s in a.eval_sets.split(",") if s.strip()})
        jobs_wanted = [int(s) for s in a.jobs.split(",") if s.strip()]
    except ValueError as e:
        sys.exit(f"bench_scale: {e}")
    if a.repeat < 1 or not sizes:
        sys.exit("bench_scale: need --repeat >= 1 and at least one size")

    feats = Features.detect()
    for line in bench_scan.machine_lines(False)[:-1]:
        print(line)
    print(f"leakcheck offers: {feats.describe()}")
    print(f"rss from: psutil, sum over the process tree sampled every {a.interval:g} s (max single process beside it)")
    print(f"repeat  : {a.repeat}, medians shown; MiB = 2^20 bytes; 1 GB = 10^9 bytes")
    print(f"load    : {load_avg()} at start (1/5/15 min; above {usable_cpus()} means other work competes for the cores)")
    jobs_list: list[int | None] = list(jobs_wanted) if feats.jobs else [None]
    if not feats.jobs:
        print("--jobs  : not in this leakcheck; one single-process run per size ('-' in the jobs column)")
    if feats.index:
        print(f"index   : build `{a.index_build}`, scan `{a.index_scan}`")
    print()

    trains: dict[int, Path] = {}
    test = None
    for n in sizes:
        ok, why = disk_ok(n)
        if not ok:
            print(why)
            continue
        trains[n], test = bench_scan.ensure_train(a.data, False, n, bench_scan.PLANTED)
    if not trains or test is None:
        print("no train size fits on the disk")
        return 1
    for n, p in trains.items():
        print(f"train {count_label(n):>5}: {p.relative_to(REPO)}  {p.stat().st_size / MiB:,.1f} MiB")
    print(flush=True)

    rows = [Row(n, j, p) for n, p in trains.items() for j in jobs_list]
    missed = 0
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmpd:
        tmp = Path(tmpd)
        if not a.no_scale:
            for i in range(a.repeat):
                for r in rows:
                    if not r.error:
                        run_row(r, test, a.levels, feats, a, tmp, i)
                        if r.error:
                            print(f"  [{i + 1}/{a.repeat}] {r.label}  FAILED {r.error}", flush=True)
            print()
            missed += scale_table(rows, feats)
            missed += sum(1 for r in rows if r.error)
            print()
        if eval_counts:
            missed += eval_sets_mode(trains[min(trains)], test, eval_counts, a.levels, feats, a, tmp)
    print(f"load    : {load_avg()} at the end")
    if a.out:
        a.out.write_text(json.dumps({
            "features": feats.describe(), "repeat": a.repeat, "levels": a.levels,
            "rows": [{"records": r.records, "jobs": r.jobs, "error": r.error, "flagged": r.flagged,
                      "runs": [{"wall_s": x.wall, "cpu_s": x.cpu, "peak_rss_sum_mib": x.rss_sum_mib, "peak_rss_max_mib": x.rss_max_mib}
                               for x in r.runs],
                      "index_build_s": [b.wall for b in r.builds], "index_load_s": r.loads} for r in rows],
        }, indent=1) + "\n")
    return 1 if a.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
