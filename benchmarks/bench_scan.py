#!/usr/bin/env python3
"""Benchmark ``leakcheck scan`` on a 200,000-record chat train set against plain yardsticks.

Every measured run is its own subprocess, so wall time and peak RSS are per run (peak RSS
from ``/usr/bin/time -v`` when it exists, else from ``getrusage(RUSAGE_CHILDREN)`` in a
fresh helper process per run). Contestants run alternately (A B A B ...) ``--repeat``
times; the table shows medians, and ratios are medians of the per-repeat ratios.

    python benchmarks/bench_scan.py --repeat 3
    python benchmarks/bench_scan.py --levels all --yardsticks hash,ngram13 --check
    python benchmarks/bench_scan.py --levels near --yardsticks datasketch

See benchmarks/README.md for the targets.
"""

from __future__ import annotations

import argparse
from array import array
import hashlib
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
CACHE = HERE / "_data"
MiB = 1 << 20

ALL_LEVELS = ("exact", "normalized", "near", "contained")

# --------------------------------------------------------------------------------------
# Train set generation
# --------------------------------------------------------------------------------------

GENERATOR_VERSION = 1
N_RECORDS = 200_000
SEED = 20240601
#: Eval items copied verbatim into the train set, so every checker has something to find.
PLANTED = 20

SYSTEM_PROMPTS = (
    "You are a helpful assistant.",
    "You are a math tutor. Show your steps.",
    "Solve the problem. End with '#### <answer>'.",
    "Reason step by step, then answer.",
)

#: User-turn frames around the train question; ``{k}`` (the record number) makes every
#: user turn unique, so no two rows are byte-identical copies. System prompts and frames
#: are short on purpose: with them the 200,000 records come to about 145 MB.
FRAMES = (
    "Problem {k}: {q}",
    "Question #{k}\n{q}",
    "{q}\n\n(Exercise {k})",
    "Solve step by step.\nProblem {k}: {q}",
)


def _read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def generate_train(src_train: Path, src_test: Path, out: Path, n: int, seed: int, planted: int) -> None:
    """Write ``n`` OpenAI-messages records built from GSM8K train, deterministically."""
    train = _read_jsonl(src_train)
    test = _read_jsonl(src_test)
    rng = random.Random(seed)
    # Every train item about n/len(train) times, shuffled per pass. All shuffles come first
    # (the RNG sequence, hence the file, stays what it always was), in a 4-byte array so
    # 3M records cost 12 MB, not a list of int objects.
    order = array("I")
    while len(order) < n:
        p = list(range(len(train)))
        rng.shuffle(p)
        order.extend(p)
    plant_at = {(j + 1) * n // (planted + 1): test[j * (len(test) // max(planted, 1))] for j in range(planted)}
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for k in range(n):
            if k in plant_at:
                item = plant_at[k]
                system, user = SYSTEM_PROMPTS[0], item["question"]
            else:
                item = train[order[k]]
                system = SYSTEM_PROMPTS[rng.randrange(len(SYSTEM_PROMPTS))]
                user = FRAMES[rng.randrange(len(FRAMES))].format(k=k, q=item["question"])
            rec = {
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                    {"role": "assistant", "content": item["answer"]},
                ],
                "id": f"train-{k:06d}",
            }
            fh.write(json.dumps(rec) + "\n")
    tmp.replace(out)


def ensure_train(data_dir: Path, regenerate: bool, n: int, planted: int) -> tuple[Path, Path]:
    """Return (train, eval) paths, generating the cached train set when needed."""
    src_train = data_dir / "gsm8k" / "train.jsonl"
    src_test = data_dir / "gsm8k" / "test.jsonl"
    for p in (src_train, src_test):
        if not p.is_file():
            sys.exit(f"bench_scan: GSM8K not found at {p}; pass --data DIR (a folder holding gsm8k/train.jsonl and gsm8k/test.jsonl)")
    CACHE.mkdir(exist_ok=True)
    out = CACHE / f"train_chat_{n}.jsonl"
    meta_path = out.with_suffix(".meta.json")
    meta = {
        "generator_version": GENERATOR_VERSION, "records": n, "seed": SEED, "planted": planted,
        "source_train": _file_digest(src_train), "source_test": _file_digest(src_test),
    }
    stale = regenerate or not out.is_file() or not meta_path.is_file()
    if not stale:
        try:
            stale = json.loads(meta_path.read_text()) != meta
        except ValueError:
            stale = True
    if stale:
        t0 = time.perf_counter()
        print(f"generating {out.relative_to(REPO)} ({n:,} records) ...", flush=True)
        generate_train(src_train, src_test, out, n, SEED, planted)
        meta_path.write_text(json.dumps(meta, indent=1) + "\n")
        print(f"  done in {time.perf_counter() - t0:.1f} s, {out.stat().st_size / MiB:.1f} MiB", flush=True)
    return out, src_test


# --------------------------------------------------------------------------------------
# Measuring one subprocess
# --------------------------------------------------------------------------------------

TIME_BIN = "/usr/bin/time"

#: Fallback when /usr/bin/time is missing: a fresh helper whose only child is the run, so
#: its RUSAGE_CHILDREN maxrss is that run's peak RSS alone.
_RUSAGE_HELPER = r"""
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as fh:
    fh.write(f"{ru.ru_maxrss} {ru.ru_utime} {ru.ru_stime}\n")
sys.exit(rc)
"""


@dataclass
class Run:
    wall: float
    rss_mib: float
    cpu: float
    rc: int
    stdout: str
    stderr: str


def have_gnu_time() -> bool:
    if not os.access(TIME_BIN, os.X_OK):
        return False
    r = subprocess.run([TIME_BIN, "-v", "true"], capture_output=True, text=True)
    return r.returncode == 0 and "Maximum resident set size" in r.stderr


def measure(cmd: list[str], use_time: bool) -> Run:
    with tempfile.NamedTemporaryFile("r", suffix=".rusage", delete=False) as tf:
        stats_path = tf.name
    try:
        if use_time:
            full = [TIME_BIN, "-v", "-o", stats_path, *cmd]
        else:
            full = [sys.executable, "-c", _RUSAGE_HELPER, stats_path, *cmd]
        t0 = time.perf_counter()
        p = subprocess.run(full, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        text = Path(stats_path).read_text()
    finally:
        os.unlink(stats_path)
    if use_time:
        def grab(label: str) -> float:
            m = re.search(rf"{re.escape(label)}:\s*([\d.]+)", text)
            return float(m.group(1)) if m else float("nan")
        rss_kib = grab("Maximum resident set size (kbytes)")
        cpu = grab("User time (seconds)") + grab("System time (seconds)")
    else:
        parts = text.split()
        rss_kib, cpu = (float(parts[0]), float(parts[1]) + float(parts[2])) if len(parts) == 3 else (float("nan"),) * 2
    # GNU time reports "Command exited with non-zero status N" but passes the code through.
    return Run(wall, rss_kib / 1024, cpu, p.returncode, p.stdout, p.stderr)


# --------------------------------------------------------------------------------------
# Contestants: leakcheck at some levels, and the yardstick registry
# --------------------------------------------------------------------------------------


@dataclass
class Contestant:
    name: str
    kind: str  # "leakcheck" or "yardstick"
    key: str  # levels spec ("exact,normalized") or yardstick name ("hash")
    ok_codes: tuple[int, ...]
    build: object  # (train, eval, tmpdir) -> argv
    flagged: object  # (Run, tmpdir) -> str
    runs: list[Run] = field(default_factory=list)
    error: str | None = None
    last_flagged: str | None = None


@dataclass(frozen=True)
class Yardstick:
    """A plain script that does one job the naive way; leakcheck is compared to it."""

    script: str
    about: str
    extra_args: tuple[str, ...] = ()

    def argv(self, train: Path, evalp: Path) -> list[str]:
        return [sys.executable, str(HERE / self.script), str(train), str(evalp), *self.extra_args]


#: Add a yardstick here: it becomes selectable with --yardsticks NAME. Its script takes
#: TRAIN EVAL and prints a line containing "N eval items flagged".
YARDSTICKS: dict[str, Yardstick] = {
    "hash": Yardstick("baseline_hash_loop.py", "json.loads + xxh3_64 of prompt and target per line"),
    "ngram13": Yardstick("baseline_ngram13.py", "lm-eval-style 13-gram check, pure Python, prompt only"),
    "datasketch": Yardstick("baseline_datasketch.py", "datasketch MinHash(128)+MinHashLSH, one record at a time"),
    "floor": Yardstick("floor_hash_levels.py", "orjson + leakcheck's chat reading + the two levels' key tests per line: "
                       "the floor of leakcheck's Python path (its C chat reader goes below)"),
}


@dataclass(frozen=True)
class Target:
    """leakcheck at ``levels`` must run within ``max_ratio`` x the yardstick's wall time
    (a ratio below 1 means it must be that many times faster) and under ``max_rss_mib``."""

    levels: tuple[str, ...]
    yardstick: str
    max_ratio: float
    max_rss_mib: float | None

    def ratio_text(self) -> str:
        if self.max_ratio < 1:
            return f">= {1 / self.max_ratio:.0f}x faster than {self.yardstick}"
        return f"<= {self.max_ratio:g}x {self.yardstick}"


TARGETS: tuple[Target, ...] = (
    Target(("exact", "normalized"), "hash", 1.0, 500),  # issue 9: no slower than the bare loop
    Target(ALL_LEVELS, "ngram13", 2.0, 2048),
    Target(("near",), "datasketch", 1 / 3, None),
)


def canon_levels(spec: str) -> tuple[str, ...]:
    items = [s.strip() for s in spec.split(",") if s.strip()]
    if items == ["all"]:
        return ALL_LEVELS
    bad = [s for s in items if s not in ALL_LEVELS]
    if bad or not items:
        sys.exit(f"bench_scan: --levels: unknown level {', '.join(bad) or '(none)'}; choose from {', '.join(ALL_LEVELS)} or all")
    return tuple(lv for lv in ALL_LEVELS if lv in items)


def leakcheck_argv() -> list[str]:
    exe = Path(sys.executable).parent / "leakcheck"
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "leakcheck"]


def _leakcheck_flagged(run: Run, json_path: Path) -> str:
    try:
        s = json.loads(json_path.read_text())["summary"]
        return f"{s['contaminated']['count']} ({s['findings']} findings)"
    except (OSError, ValueError, KeyError):
        return "?"


def _yardstick_flagged(run: Run) -> str:
    m = re.search(r"(\d+) eval items flagged", run.stdout)
    return m.group(1) if m else "?"


def make_contestants(levels_specs: list[str], yardsticks: list[str], tmp: Path, jobs: int | None = None) -> list[Contestant]:
    out: list[Contestant] = []
    seen: set[tuple[str, ...]] = set()
    for spec in levels_specs:
        lv = canon_levels(spec)
        if lv in seen:
            continue
        seen.add(lv)
        key = ",".join(lv)
        jp = tmp / f"leakcheck_{'_'.join(lv)}.json"
        out.append(Contestant(
            name=f"leakcheck[{'all' if lv == ALL_LEVELS else key}]", kind="leakcheck", key=key,
            ok_codes=(0, 1),  # 1 = leakage found, which the planted items guarantee
            build=lambda tr, ev, key=key, jp=jp: [*leakcheck_argv(), "scan", str(tr), str(ev), "--levels", key, "--json", str(jp),
                                                  *(["--jobs", str(jobs)] if jobs else [])],
            flagged=lambda run, jp=jp: _leakcheck_flagged(run, jp),
        ))
    for y in yardsticks:
        ys = YARDSTICKS[y]
        out.append(Contestant(
            name=y, kind="yardstick", key=y, ok_codes=(0,),
            build=lambda tr, ev, ys=ys: ys.argv(tr, ev),
            flagged=_yardstick_flagged,
        ))
    return out


# --------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------


def machine_lines(use_time: bool) -> list[str]:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    vers = []
    for mod in ("leakcheck", "xxhash", "datasketch", "orjson", "numpy"):
        try:
            from importlib.metadata import version

            vers.append(f"{mod} {version(mod)}")
        except Exception:
            vers.append(f"{mod} -")
    return [
        f"machine : nproc {usable} (cpu_count {os.cpu_count()}), {cpu}, {mem} RAM",
        f"python  : {platform.python_implementation()} {platform.python_version()} ({sys.executable})",
        f"os      : {platform.platform()}",
        f"packages: {', '.join(vers)}",
        f"rss from: {'/usr/bin/time -v' if use_time else 'getrusage(RUSAGE_CHILDREN) in a fresh helper per run'}",
    ]


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Benchmark leakcheck scan against plain yardsticks.")
    ap.add_argument("--repeat", type=int, default=3, help="runs per contestant, alternating (default 3)")
    ap.add_argument("--levels", action="append", metavar="LEVELS",
                    help="leakcheck levels, e.g. exact,normalized (default), all, near; repeat the option to compare several")
    ap.add_argument("--yardsticks", default="hash",
                    help=f"comma-separated from {','.join(YARDSTICKS)}, or none (default: hash; datasketch takes ~80 s a run)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"shared data folder holding gsm8k/ (default {DEFAULT_DATA})")
    ap.add_argument("--regenerate", action="store_true", help="rebuild the cached train set under benchmarks/_data/")
    ap.add_argument("--records", type=int, default=N_RECORDS, help=argparse.SUPPRESS)  # small runs while developing
    ap.add_argument("--planted", type=int, default=PLANTED, help=f"eval items copied verbatim into train (default {PLANTED})")
    ap.add_argument("--jobs", type=int, help="pass --jobs N to leakcheck (default: leakcheck's own, all cores)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed or a run fails")
    ap.add_argument("--out", type=Path, help="also write the measurements as JSON here")
    a = ap.parse_args(argv)

    ys_names = [] if a.yardsticks.strip() == "none" else [s.strip() for s in a.yardsticks.split(",") if s.strip()]
    unknown = [y for y in ys_names if y not in YARDSTICKS]
    if unknown:
        sys.exit(f"bench_scan: --yardsticks: unknown {', '.join(unknown)}; choose from {', '.join(YARDSTICKS)} or none")
    if a.repeat < 1:
        sys.exit("bench_scan: --repeat must be at least 1")

    for p in (a.data / "gsm8k" / "train.jsonl", a.data / "gsm8k" / "test.jsonl"):
        if not p.is_file():
            sys.exit(f"bench_scan: GSM8K not found at {p}; pass --data DIR (a folder holding gsm8k/train.jsonl and gsm8k/test.jsonl)")
    use_time = have_gnu_time()
    for line in machine_lines(use_time):
        print(line)
    train, evalp = ensure_train(a.data, a.regenerate, a.records, a.planted)
    size = train.stat().st_size
    with open(train, "rb") as fh:
        n_records = sum(1 for _ in fh)
    print(f"train   : {train.relative_to(REPO)}  {n_records:,} records, {size / MiB:.1f} MiB ({size / 1e6:.1f} MB), {a.planted} planted eval items")
    print(f"eval    : {evalp}  {sum(1 for _ in open(evalp, 'rb')):,} records")
    print(f"repeat  : {a.repeat} (alternating), medians shown; MiB = 2^20 bytes; leakcheck --jobs {a.jobs or 'default (all cores)'}")
    print(flush=True)

    with tempfile.TemporaryDirectory(prefix="bench_scan_") as tmpd:
        tmp = Path(tmpd)
        cs = make_contestants(a.levels or ["exact,normalized"], ys_names, tmp, a.jobs)
        for i in range(a.repeat):
            for c in cs:
                if c.error:
                    continue
                run = measure(c.build(train, evalp), use_time)
                if run.rc not in c.ok_codes:
                    last = (run.stderr.strip().splitlines() or run.stdout.strip().splitlines() or ["(no output)"])[-1]
                    c.error = f"exit {run.rc}: {last}"
                    print(f"  [{i + 1}/{a.repeat}] {c.name:<28} FAILED {c.error}", flush=True)
                    continue
                c.runs.append(run)
                c.last_flagged = c.flagged(run)
                print(f"  [{i + 1}/{a.repeat}] {c.name:<28} {run.wall:7.2f} s  {run.rss_mib:7.1f} MiB  flagged {c.last_flagged}", flush=True)

    print()
    hdr = f"{'contestant':<28} {'wall s':>8} {'cpu s':>8} {'records/s':>11} {'MiB/s':>7} {'peak RSS MiB':>13}  eval items flagged"
    print(hdr)
    print("-" * len(hdr))
    for c in cs:
        if c.error:
            print(f"{c.name:<28} ERROR {c.error}")
            continue
        w = median([r.wall for r in c.runs])
        print(f"{c.name:<28} {w:8.2f} {median([r.cpu for r in c.runs]):8.2f} {n_records / w:11,.0f} "
              f"{size / MiB / w:7.1f} {median([r.rss_mib for r in c.runs]):13.1f}  {c.last_flagged}")
    print()

    # Ratios: every leakcheck run against every yardstick that ran, per repeat, then median.
    by_name = {c.key: c for c in cs if c.kind == "yardstick"}
    ratios: dict[tuple[str, str], float] = {}
    for c in cs:
        if c.kind != "leakcheck" or c.error:
            continue
        for y, yc in by_name.items():
            if yc.error:
                continue
            pairs = [lr.wall / yr.wall for lr, yr in zip(c.runs, yc.runs)]
            r = median(pairs)
            ratios[(c.key, y)] = r
            each = ", ".join(f"{p:.2f}" for p in pairs)
            extra = f"  (= {1 / r:.2f}x faster)" if r < 1 else ""
            # CPU-time ratio: a cross-check when the machine is busy (wall well above cpu).
            cpu_r = median([lr.cpu / yr.cpu for lr, yr in zip(c.runs, yc.runs) if yr.cpu > 0])
            print(f"ratio {c.name}/{y}: {r:.2f}{extra}   [per repeat: {each}; cpu-time ratio {cpu_r:.2f}]")
    print()

    # Targets that apply to the levels that were run.
    missed = 0
    failed_runs = sum(1 for c in cs if c.error)
    lc_by_levels = {tuple(c.key.split(",")): c for c in cs if c.kind == "leakcheck"}
    for t in TARGETS:
        c = lc_by_levels.get(t.levels)
        if c is None:
            continue
        label = f"target leakcheck[{'all' if t.levels == ALL_LEVELS else ','.join(t.levels)}]"
        if c.error:
            print(f"{label}: ERROR, leakcheck run failed ({c.error})")
            continue
        r = ratios.get((c.key, t.yardstick))
        yc = by_name.get(t.yardstick)
        if r is None and yc is not None:
            print(f"{label} {t.ratio_text()}: ERROR, yardstick {t.yardstick} failed ({yc.error})")
        elif r is None:
            print(f"{label} {t.ratio_text()}: SKIP (yardstick {t.yardstick} did not run; add --yardsticks {t.yardstick})")
        else:
            ok = r <= t.max_ratio
            missed += not ok
            shown = f"{1 / r:.2f}x faster" if t.max_ratio < 1 else f"{r:.2f}x"
            print(f"{label} {t.ratio_text()}: {'PASS' if ok else 'FAIL'} ({shown})")
        if t.max_rss_mib is not None:
            rss = median([x.rss_mib for x in c.runs])
            ok = rss < t.max_rss_mib
            missed += not ok
            print(f"{label} peak RSS < {t.max_rss_mib:g} MiB: {'PASS' if ok else 'FAIL'} ({rss:.1f} MiB)")

    if a.out:
        a.out.write_text(json.dumps({
            "machine": machine_lines(use_time),
            "train": {"path": str(train), "records": n_records, "bytes": size, "planted": a.planted},
            "eval": str(evalp),
            "repeat": a.repeat,
            "contestants": [
                {"name": c.name, "error": c.error, "flagged": c.last_flagged,
                 "runs": [{"wall_s": r.wall, "cpu_s": r.cpu, "peak_rss_mib": r.rss_mib, "rc": r.rc} for r in c.runs]}
                for c in cs
            ],
            "ratios": {f"{k[0]}/{k[1]}": v for k, v in ratios.items()},
        }, indent=1) + "\n")

    if a.check and (missed or failed_runs):
        print(f"\n--check: {missed} target(s) missed, {failed_runs} run(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
