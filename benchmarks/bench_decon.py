#!/usr/bin/env python3
"""allenai's decon against ``leakcheck scan --levels all`` on the same 200,000 chat records.

decon reads a folder of JSONL files with a ``text`` field and a folder of eval reference
files (``eval_key``, ``eval_instance_index``, ``question``, ``answer``). The 200k-record
file of bench_scan.py is written for it as two files (first and second half; each record's
text is its messages' contents joined by newlines), so decon's per-file workers use both
cores. GSM8K test is converted to its reference format. This preparation is cached under
benchmarks/_data/ and not timed.

decon runs under its own Python 3.12 venv (benchmarks/.decon-venv, see benchmarks/README.md),
leakcheck under this one, with ``--jobs 1`` and ``--jobs 2`` when the installed leakcheck has
``--jobs`` (else once, single-process). Contestants alternate over ``--repeat`` runs;
medians are shown, ratios are medians of per-repeat ratios.

Before timing, both tools must pass a sanity check on a small planted set: 2,000 GSM8K
train problems with 10 test items pasted verbatim (question and answer) and 10 test answers
under a train question (a reward-target leak). Both must find the 10 verbatim items, and
both must find the 20 planted items of the 200k file; the answer-only plants show what each
tool covers.

    python benchmarks/bench_decon.py --repeat 3
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import bench_scan
from benchlib import HERE, MiB, REPO, Features, TreeRun, flagged_rows, load_avg, measure_tree, median, scan_argv, usable_cpus

DECON_VENV = HERE / ".decon-venv"
DECON_PY = DECON_VENV / "bin" / "python"
INSTALL_HINT = ("python 3.12+ venv with the decontaminate wheel: "
                "~/.pyenv/versions/3.12.1/bin/python -m venv benchmarks/.decon-venv && "
                "benchmarks/.decon-venv/bin/pip install decontaminate")
#: leakcheck all levels with --jobs 2 must be at least this many times faster than decon.
TARGET_SPEEDUP = 4.0
SANITY_TRAIN = 2_000
SANITY_EACH = 10


def chat_text(rec: dict) -> str:
    """The text decon sees for a chat record: every message's content, one per line."""
    return "\n".join(m["content"] for m in rec["messages"])


def write_decon_eval(test_rows: list[dict], out_dir: Path) -> None:
    """GSM8K test in decon's reference format, one file in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / "gsm8k_test.jsonl", "w", encoding="utf-8") as fh:
        for i, r in enumerate(test_rows):
            fh.write(json.dumps({"eval_key": "gsm8k", "eval_instance_index": i, "split": "test", "doc_id": i,
                                 "question": r["question"], "answer": r["answer"]}) + "\n")


def write_decon_train(chat_jsonl: Path, out_dir: Path, parts: int) -> list[int]:
    """Split a chat JSONL file into ``parts`` contiguous decon input files; return their line counts."""
    with open(chat_jsonl, "rb") as fh:
        total = sum(1 for _ in fh)
    out_dir.mkdir(parents=True, exist_ok=True)
    bounds = [total * (p + 1) // parts for p in range(parts)]
    counts = [0] * parts
    outs = [open(out_dir / f"part-{p}.jsonl", "w", encoding="utf-8") for p in range(parts)]
    try:
        with open(chat_jsonl, encoding="utf-8") as fh:
            p = 0
            for k, line in enumerate(fh):
                while k >= bounds[p]:
                    p += 1
                rec = json.loads(line)
                outs[p].write(json.dumps({"id": rec.get("id", str(k)), "text": chat_text(rec)}) + "\n")
                counts[p] += 1
    finally:
        for fh in outs:
            fh.close()
    return counts


def prepare_decon(train: Path, test: Path, parts: int) -> tuple[Path, Path]:
    """(train dir, evals dir) for decon next to the cached train file, rebuilt when it changed."""
    base = train.with_name(f"decon_{train.stem}_{parts}parts")
    meta = {"train_meta": json.loads(train.with_suffix(".meta.json").read_text()), "parts": parts, "format": 1}
    meta_path = base / "meta.json"
    if not (meta_path.is_file() and json.loads(meta_path.read_text()) == meta):
        print(f"preparing decon inputs in {base.relative_to(REPO)} ...", flush=True)
        for sub in ("train", "evals"):
            for f in (base / sub).glob("*.jsonl"):
                f.unlink()
        write_decon_train(train, base / "train", parts)
        write_decon_eval(bench_scan._read_jsonl(test), base / "evals")
        meta_path.write_text(json.dumps(meta) + "\n")
    return base / "train", base / "evals"


def planted_rows(n_test: int, planted: int) -> set[int]:
    """Test rows bench_scan.generate_train pastes into the train file."""
    return {j * (n_test // max(planted, 1)) for j in range(planted)}


@dataclass(frozen=True)
class SanitySet:
    """A small chat train file with known plants, and the decon view of it."""

    chat: Path
    decon_train: Path
    verbatim: frozenset[int]  # test rows pasted with question and answer
    answer_only: frozenset[int]  # test rows whose answer sits under a train question


def make_sanity_set(gsm8k: Path, out: Path, seed: int = 7) -> SanitySet:
    """Write the sanity set under ``out``: SANITY_TRAIN train problems plus 2 x SANITY_EACH plants."""
    train = bench_scan._read_jsonl(gsm8k / "train.jsonl")[:SANITY_TRAIN]
    test = bench_scan._read_jsonl(gsm8k / "test.jsonl")
    step = len(test) // (2 * SANITY_EACH)
    verbatim = [2 * j * step + 3 for j in range(SANITY_EACH)]
    answer_only = [(2 * j + 1) * step + 3 for j in range(SANITY_EACH)]
    rng = random.Random(seed)
    rows = [(bench_scan.SYSTEM_PROMPTS[rng.randrange(4)], t["question"], t["answer"]) for t in train]
    plants = [(bench_scan.SYSTEM_PROMPTS[0], test[i]["question"], test[i]["answer"]) for i in verbatim]
    plants += [(bench_scan.SYSTEM_PROMPTS[0], train[k]["question"], test[i]["answer"]) for k, i in enumerate(answer_only)]
    for j, p in enumerate(plants):
        rows.insert((j + 1) * len(rows) // (len(plants) + 1), p)
    out.mkdir(parents=True, exist_ok=True)
    chat = out / "sanity_chat.jsonl"
    with open(chat, "w", encoding="utf-8") as fh:
        for k, (system, user, assistant) in enumerate(rows):
            msgs = [{"role": "system", "content": system}, {"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
            fh.write(json.dumps({"messages": msgs, "id": f"sanity-{k:05d}"}) + "\n")
    write_decon_train(chat, out / "decon_train", 2)
    return SanitySet(chat, out / "decon_train", frozenset(verbatim), frozenset(answer_only))


# --------------------------------------------------------------------------------------
# Contestants
# --------------------------------------------------------------------------------------


@dataclass
class Contestant:
    name: str
    argv: object  # (workdir: Path, run: int) -> list[str]
    flagged: object  # (workdir: Path, run: int) -> set[int]
    runs: list[TreeRun] = field(default_factory=list)
    error: str | None = None
    last_flagged: set[int] = field(default_factory=set)


def decon_contestant(train_dir: Path, evals_dir: Path, threads: int | None, tag: str = "") -> Contestant:
    def argv(tmp: Path, i: int) -> list[str]:
        extra = ["--threads", str(threads)] if threads else []
        return [str(DECON_PY), str(HERE / "decon_run.py"), str(train_dir), str(evals_dir), str(tmp / f"decon{tag}_out_{i}"),
                "--flagged", str(tmp / f"decon{tag}_flagged_{i}.json"), *extra]

    def flagged(tmp: Path, i: int) -> set[int]:
        return {idx for key, idx in json.loads((tmp / f"decon{tag}_flagged_{i}.json").read_text()) if key == "gsm8k"}

    return Contestant("decon" + (f" --threads {threads}" if threads else ""), argv, flagged)


def leakcheck_contestant(train: Path, test: Path, jobs: int | None, feats: Features, tag: str = "") -> Contestant:
    label = f"leakcheck[all{', --jobs ' + str(jobs) if jobs else ''}]"

    def argv(tmp: Path, i: int) -> list[str]:
        return scan_argv(train, [test], "all", tmp / f"lc{tag}_{jobs}_{i}.json", jobs, feats)

    def flagged(tmp: Path, i: int) -> set[int]:
        return flagged_rows(tmp / f"lc{tag}_{jobs}_{i}.json")

    return Contestant(label, argv, flagged)


def run_once(c: Contestant, tmp: Path, i: int, ok_codes: tuple[int, ...], interval: float) -> TreeRun | None:
    run = measure_tree(c.argv(tmp, i), interval)
    if run.rc not in ok_codes:
        c.error = f"exit {run.rc}: {run.last_line()}"
        return None
    c.last_flagged = c.flagged(tmp, i)
    return run


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def decon_version() -> str:
    if not DECON_PY.is_file():
        sys.exit(f"bench_decon: decon is not installed: {DECON_PY} is missing; make a {INSTALL_HINT}")
    r = subprocess.run([str(DECON_PY), "-c", "import decon; print(decon.__version__)"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench_decon: {DECON_PY} cannot import decon ({r.stderr.strip().splitlines()[-1:]}); make a {INSTALL_HINT}")
    return r.stdout.strip()


def sanity(s: SanitySet, evals_dir: Path, test: Path, feats: Features, jobs: int | None, interval: float, tmp: Path) -> bool:
    """Run both tools on the sanity set; print what each found; True when both work."""
    planted = s.verbatim | s.answer_only
    ok = True
    for c, codes in ((decon_contestant(s.decon_train, evals_dir, None, tag="sanity"), (0,)),
                     (leakcheck_contestant(s.chat, test, jobs, feats, tag="sanity"), (0, 1))):
        run = run_once(c, tmp, 0, codes, interval)
        if run is None:
            print(f"sanity {c.name:<24} FAILED {c.error}")
            ok = False
            continue
        got = c.last_flagged
        v, a = len(got & s.verbatim), len(got & s.answer_only)
        extra = len(got - planted)
        need_answers = c.name.startswith("leakcheck")
        good = v == len(s.verbatim) and (a == len(s.answer_only) or not need_answers)
        ok &= good
        print(f"sanity {c.name:<24} verbatim plants {v}/{len(s.verbatim)}, answer-only (reward target) plants "
              f"{a}/{len(s.answer_only)}, other eval items {extra}: {'ok' if good else 'FAIL'}")
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="allenai decon vs leakcheck scan --levels all on the same 200k chat records.")
    ap.add_argument("--repeat", type=int, default=3, help="runs per contestant, alternating (default 3)")
    ap.add_argument("--data", type=Path, default=bench_scan.DEFAULT_DATA, help="shared data folder holding gsm8k/")
    ap.add_argument("--records", type=int, default=bench_scan.N_RECORDS, help=argparse.SUPPRESS)
    ap.add_argument("--decon-threads", type=int, help="decon worker_threads (default: decon's own choice)")
    ap.add_argument("--interval", type=float, default=0.02, help="RSS sampling interval in seconds (default 0.02)")
    ap.add_argument("--check", action="store_true", help="exit 1 when the speed target is missed (a failed sanity check always exits 1)")
    ap.add_argument("--out", type=Path, help="also write the measurements as JSON here")
    a = ap.parse_args(argv)
    if a.repeat < 1:
        sys.exit("bench_decon: --repeat must be at least 1")

    dver = decon_version()
    feats = Features.detect()
    for line in bench_scan.machine_lines(False)[:-1]:
        print(line)
    print(f"decon   : decontaminate {dver} ({DECON_PY})")
    print(f"leakcheck offers: {feats.describe()}")
    print("rss from: psutil, sum over the process tree sampled every "
          f"{a.interval:g} s (max single process beside it)")
    print(f"load    : {load_avg()} at start (1/5/15 min; above {usable_cpus()} means other work competes for the cores)")
    train, test = bench_scan.ensure_train(a.data, False, a.records, bench_scan.PLANTED)
    decon_train, decon_evals = prepare_decon(train, test, 2)
    n_records = sum(1 for _ in open(train, "rb"))
    size = train.stat().st_size
    n_test = sum(1 for _ in open(test, "rb"))
    print(f"train   : {train.relative_to(REPO)}  {n_records:,} records, {size / MiB:.1f} MiB; decon: 2 files in {decon_train.relative_to(REPO)}")
    print(f"eval    : {test}  {n_test:,} records (decon: {decon_evals.relative_to(REPO)})")
    print(flush=True)

    jobs_list: list[int | None] = [1, 2] if feats.jobs else [None]
    with tempfile.TemporaryDirectory(prefix="bench_decon_") as tmpd:
        tmp = Path(tmpd)
        s = make_sanity_set(a.data / "gsm8k", tmp / "sanity")
        sane = sanity(s, decon_evals, test, feats, jobs_list[-1], a.interval, tmp)
        print(flush=True)
        if not sane:
            print("sanity check failed: not timing tools that do not find the plants")
            return 1

        cs = [decon_contestant(decon_train, decon_evals, a.decon_threads)]
        cs += [leakcheck_contestant(train, test, j, feats) for j in jobs_list]
        for i in range(a.repeat):
            for c in cs:
                if c.error:
                    continue
                run = run_once(c, tmp, i, (0,) if c.name.startswith("decon") else (0, 1), a.interval)
                if run is None:
                    print(f"  [{i + 1}/{a.repeat}] {c.name:<26} FAILED {c.error}", flush=True)
                    continue
                c.runs.append(run)
                print(f"  [{i + 1}/{a.repeat}] {c.name:<26} {run.wall:7.2f} s  cpu {run.cpu:6.2f} s  {run.rss_sum_mib:7.1f} MiB  "
                      f"flagged {len(c.last_flagged)}", flush=True)
    print(f"load    : {load_avg()} at the end")
    return report(cs, n_records, size, planted_rows(n_test, bench_scan.PLANTED), feats, a)


def report(cs: list[Contestant], n_records: int, size: int, planted: set[int], feats: Features, a: argparse.Namespace) -> int:
    print()
    hdr = (f"{'contestant':<26} {'wall s':>7} {'cpu s':>7} {'records/s':>10} {'MiB/s':>6} {'peak RSS MiB':>12} "
           f"{'max proc MiB':>12}  eval items flagged (planted found)")
    print(hdr)
    print("-" * len(hdr))
    broken = 0
    for c in cs:
        if c.error or not c.runs:
            print(f"{c.name:<26} ERROR {c.error}")
            broken += 1
            continue
        w = median([r.wall for r in c.runs])
        found = len(c.last_flagged & planted)
        broken += found != len(planted)
        print(f"{c.name:<26} {w:7.2f} {median([r.cpu for r in c.runs]):7.2f} {n_records / w:10,.0f} {size / MiB / w:6.1f} "
              f"{median([r.rss_sum_mib for r in c.runs]):12.1f} {median([r.rss_max_mib for r in c.runs]):12.1f}  "
              f"{len(c.last_flagged)} ({found}/{len(planted)})")
    print()
    decon = cs[0]
    missed = 0
    ratios: dict[str, float] = {}
    for c in cs[1:]:
        if c.error or decon.error:
            continue
        per = [d.wall / lc.wall for d, lc in zip(decon.runs, c.runs)]
        ratios[c.name] = r = median(per)
        said = f"leakcheck {r:.2f}x faster" if r >= 1 else f"decon {1 / r:.2f}x faster"
        # CPU-time ratio: a cross-check when other work shares the cores (wall well above cpu).
        cpu_r = median([d.cpu / lc.cpu for d, lc in zip(decon.runs, c.runs) if lc.cpu > 0])
        print(f"decon / {c.name}: {r:.2f} ({said})   [per repeat: {', '.join(f'{p:.2f}' for p in per)}; cpu-time ratio {cpu_r:.2f}]")
    two = next((c for c in cs[1:] if c.name.endswith("--jobs 2]")), None)
    label = f"target leakcheck[all, --jobs 2] >= {TARGET_SPEEDUP:g}x faster than decon"
    if not feats.jobs:
        print(f"{label}: SKIP (this leakcheck has no --jobs; the single-process ratio is above)")
    elif two is None or two.name not in ratios:
        print(f"{label}: ERROR (a run failed)")
    else:
        ok = ratios[two.name] >= TARGET_SPEEDUP
        missed += not ok
        print(f"{label}: {'PASS' if ok else 'FAIL'} ({ratios[two.name]:.2f}x)")
    if a.out:
        a.out.write_text(json.dumps({
            "records": n_records, "bytes": size, "repeat": a.repeat, "features": feats.describe(),
            "contestants": [{"name": c.name, "error": c.error, "flagged": len(c.last_flagged),
                             "runs": [{"wall_s": r.wall, "cpu_s": r.cpu, "peak_rss_sum_mib": r.rss_sum_mib,
                                       "peak_rss_max_mib": r.rss_max_mib, "rc": r.rc} for r in c.runs]} for c in cs],
            "ratios_decon_over_leakcheck": ratios,
        }, indent=1) + "\n")
    if broken:
        print(f"\n{broken} contestant(s) failed or missed planted items")
        return 1
    return 1 if a.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
