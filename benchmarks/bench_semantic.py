#!/usr/bin/env python3
"""The ``semantic`` level on the llm-decontaminator rephrase sets, next to Yang et al. (2023).

Each train record is matched to its best eval record by the level; a prediction is right when
that eval record is the one the train record rephrases (pair level: a wrong eval record is a
false positive *and* a missed rephrase). Two protocols:

* ``paper``: train = the rephrases only (as in the paper's table);
* ``mixed``: the rephrases hidden among real unrelated train data (GSM8K train for GSM8K,
  MBPP for HumanEval), one setting for all sets;
* ``cross``: as ``mixed``, but only the even eval items are eval: the odd items' rephrases
  are negatives written in the same style by the same rephraser (a precision check against
  features that only tell the rephraser's style from the unrelated data: not used for tuning).

Eval items are split by parity (even: tune, odd: held-out); train negatives by row parity.
``--tune`` searches the two thresholds on the tune half of the mixed protocol and prints the
best grid point; the table always uses the level's defaults (``SemanticConfig``) and shows
both halves, so a default tuned on the held-out half would show.

    python benchmarks/bench_semantic.py            # F1 table (needs ../shared/data)
    python benchmarks/bench_semantic.py --tune     # threshold search on the tune half
    python benchmarks/bench_semantic.py --tune --embedder   # the embedder's thresholds, the same way
    python benchmarks/bench_semantic.py --cost 1000000   # + the 1M-record scan cost
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = REPO.parent / "shared" / "data"
sys.path.insert(0, str(REPO))

from leakcheck.config import ScanConfig, SemanticConfig  # noqa: E402
from leakcheck.detect.semantic import BLENDED, LEXICAL, SemanticIndex  # noqa: E402
from leakcheck.records import Record  # noqa: E402

#: Yang et al. 2023, Table (F1): Multi-QA BERT embeddings and the GPT-4 judge.
PAPER = {"humaneval_python": (0.938, 0.995), "humaneval_c": (0.774, 0.974)}


def _jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) if line.strip() else {} for line in fh]


def gsm8k() -> tuple[list[Record], list[Record | None], list[Record]]:
    """(eval, rephrase per eval item or None, unrelated train) for GSM8K."""
    test = _jsonl(DATA / "gsm8k" / "test.jsonl")
    evals = [Record(f"test-{i}", i + 1, r["question"], r["answer"]) for i, r in enumerate(test)]
    reph: list[Record | None] = []
    for i, r in enumerate(_jsonl(DATA / "rephrase" / "rephrase_gsm8k.jsonl")):
        text = r.get("text", "")
        q, _, a = text.partition("\nAnswer:")
        reph.append(Record(f"reph-{i}", i, q.removeprefix("Question:").strip(), a.strip()) if q.strip() else None)
    train = [Record(f"train-{i}", i, r["question"], r["answer"]) for i, r in enumerate(_jsonl(DATA / "gsm8k" / "train.jsonl"))]
    return evals, reph, train


def humaneval(lang: str) -> tuple[list[Record], list[Record | None], list[Record]]:
    """(eval, rephrase per eval item or None, unrelated MBPP code) for HumanEval in ``lang``."""
    he = _jsonl(DATA / "humaneval" / "HumanEval.jsonl.gz")
    evals = [Record(r["task_id"], i + 1, r["prompt"], r["canonical_solution"]) for i, r in enumerate(he)]
    reph = [Record(f"reph-{i}", i, r["text"]) if r.get("text", "").strip() else None
            for i, r in enumerate(_jsonl(DATA / "rephrase" / f"humaneval_{lang}.jsonl"))]
    train = [Record(f"mbpp-{r['task_id']}", i, f"{r['text']}\n{r['code']}") for i, r in enumerate(_jsonl(DATA / "mbpp" / "mbpp.jsonl"))]
    return evals, reph, train


def gsm8k_no_target() -> tuple[list[Record], list[Record | None], list[Record]]:
    """GSM8K with the train side's targets dropped: no anchoring, the prose threshold decides."""
    evals, reph, train = gsm8k()
    return evals, [r._replace(target=None) if r else None for r in reph], [r._replace(target=None) for r in train]


def _mmlu(name: str) -> list[list[str]]:
    with open(DATA / "rephrase" / f"{name}_test.csv", newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def mmlu_abstract_algebra() -> tuple[list[Record], list[Record | None], list[Record]]:
    """MMLU abstract algebra (question -> option letter) rephrased, among sociology and US history questions."""
    evals = [Record(f"aa-{i}", i + 1, row[0], row[5]) for i, row in enumerate(_mmlu("abstract_algebra"))]
    reph = [Record(f"reph-{i}", i, r["text"]) if r.get("text", "").strip() else None
            for i, r in enumerate(_jsonl(DATA / "rephrase" / "abstract_algebra_test_rephrase_english_filtered_question.jsonl"))]
    neg = [Record(f"{n}-{i}", i, row[0]) for n in ("sociology", "high_school_us_history") for i, row in enumerate(_mmlu(n))]
    return evals, reph, neg


SETS = {"gsm8k": gsm8k, "gsm8k_no_target": gsm8k_no_target, "mmlu_abstract_algebra": mmlu_abstract_algebra,
        "humaneval_python": lambda: humaneval("python"), "humaneval_c": lambda: humaneval("c")}


@dataclass
class Case:
    """One protocol of one set: train records, the eval item each rephrases (-1: unrelated), its half."""

    evals: list[Record]
    train: list[Record]
    truth: list[int]
    half: list[int]


def cases(name: str) -> dict[str, Case]:
    evals, reph, neg = SETS[name]()
    pos = [(i, r) for i, r in enumerate(reph) if r is not None]
    paper = Case(evals, [r for _, r in pos], [i for i, _ in pos], [i % 2 for i, _ in pos])
    mixed_train = [r._replace(row=j) for j, r in enumerate([r for _, r in pos] + neg)]
    mixed = Case(evals, mixed_train, paper.truth + [-1] * len(neg), paper.half + [j % 2 for j in range(len(neg))])
    # only the even items are eval: the odd items' rephrases are negatives in the very same style
    cross = Case(evals[::2], mixed_train, [i // 2 if i % 2 == 0 else -1 for i, _ in pos] + [-1] * len(neg), [0] * len(mixed_train))
    return {"paper": paper, "mixed": mixed, "cross": cross}


def best_pairs(case: Case, cfg: ScanConfig) -> list[tuple[int, float, int, float, bool]]:
    """Per train record: (anchored eval or -1, anchored score, plain eval or -1, plain score, plain eval is code), lexical only."""
    idx = SemanticIndex(case.evals, cfg).with_train_sample(case.train[: cfg.sample_size])
    import numpy as np

    from leakcheck.detect.semantic import NUMBER_WEIGHT, anchor_key, number_keys, record_text

    out = []
    for i in range(0, len(case.train), 4096):
        batch = case.train[i : i + 4096]
        keys = np.array([anchor_key(r.target) for r in batch], dtype=np.uint64)
        texts = [record_text(r, k) for r, k in zip(batch, keys.tolist())]
        x = idx.vectors(texts)
        code = idx.code_views(texts) if idx.has_code else None
        nums = [number_keys(r.prompt) if k else frozenset() for r, k in zip(batch, keys.tolist())]
        a, p = idx._anchored(x, keys, nums, 1, {"semantic_anchored_pairs": 0}), idx._plain(x, code, keys, 1)
        for aa, pp in zip(a, p):
            ea, sa = (aa[0][0], aa[0][1] + NUMBER_WEIGHT * aa[0][2]) if aa else (-1, -1.0)
            ep, sp = (pp[0].eval, pp[0].score) if pp else (-1, -1.0)
            out.append((ea, sa, ep, sp, bool(pp and idx.code_kind[ep] > 0)))
    return out


def f1(case: Case, preds: dict[int, int], half: int | None) -> tuple[float, int, int, int]:
    """F1, TP, FP, FN over the train records of ``half`` (None: all); ``preds``: train row -> eval predicted."""
    tp = fp = fn = 0
    for j, (truth, h) in enumerate(zip(case.truth, case.half)):
        if half is not None and h != half:
            continue
        p = preds.get(j)
        if p is not None and p == truth:
            tp += 1
        else:
            fp += p is not None
            fn += truth >= 0
    return (2 * tp / (2 * tp + fp + fn) if tp else 0.0), tp, fp, fn


def decide(pairs: list[tuple[int, float, int, float, bool]], t: tuple[float, float, float]) -> dict[int, int]:
    """The level's rule on precomputed scores; ``t``: (prose, code, anchored) thresholds."""
    out = {}
    for j, (ea, sa, ep, sp, code) in enumerate(pairs):
        cand = [(s - th, -e) for e, s, th in ((ea, sa, t[2]), (ep, sp, t[1] if code else t[0])) if e >= 0 and s >= th]
        if cand:
            out[j] = -max(cand)[1]
    return out


def level_preds(case: Case, cfg: ScanConfig) -> dict[int, int]:
    """What the level itself reports (its probe, defaults), train row -> eval index."""
    idx = SemanticIndex(case.evals, cfg).with_train_sample(case.train[: cfg.sample_size])
    out = {}
    for i in range(0, len(case.train), 4096):
        for m in idx.probe(case.train[i : i + 4096]):
            if not m.below:
                out[i + m.pos] = m.eval_idx
    return out


def table(cfg: ScanConfig, only: list[str] | None = None) -> None:
    s = cfg.semantic
    prose, code = LEXICAL if s.embedder == "none" else BLENDED
    print(f"semantic level, defaults threshold={prose} code_threshold={code} "
          f"anchored_threshold={s.anchored_threshold}, embedder={s.embedder}")
    print(f"{'set':<23}{'protocol':<8}{'F1 tune':>9}{'F1 held-out':>12}{'F1 all':>8}{'TP/FP/FN all':>16}{'Multi-QA BERT':>15}{'GPT-4':>7}")
    for name in only or SETS:
        for proto, case in cases(name).items():
            preds = level_preds(case, cfg)
            t, h, a = (f1(case, preds, half) for half in (0, 1, None))
            bert, gpt = PAPER.get(name, (None, None))
            ref = f"{bert:>15.3f}{gpt:>7.3f}" if bert is not None and proto == "paper" else f"{'-':>15}{'-':>7}"
            halves = f"{'-':>9}{'-':>12}" if proto == "cross" else f"{t[0]:>9.3f}{h[0]:>12.3f}"
            print(f"{name:<23}{proto:<8}{halves}{a[0]:>8.3f}{f'{a[1]}/{a[2]}/{a[3]}':>16}{ref}")


def tune(cfg: ScanConfig) -> None:
    """Coordinate search of the three thresholds on the tune half of the mixed protocol: best mean F1 over the sets."""
    scored = {name: (c, best_pairs(c, cfg)) for name in SETS for c in [cases(name)["mixed"]]}
    s = cfg.semantic
    t = [*LEXICAL, s.anchored_threshold]

    def mean_f1(tt: list[float], half: int) -> tuple[float, list[float]]:
        f = [f1(c, decide(p, (tt[0], tt[1], tt[2])), half)[0] for c, p in scored.values()]
        return statistics.mean(f), f

    for _ in range(2):
        for k in range(3):
            grid = [x / 100 for x in range(10, 91, 2)]
            t[k] = max(grid, key=lambda v: (mean_f1(t[:k] + [v] + t[k + 1 :], 0)[0], -abs(v - t[k])))
    for half, what in ((0, "tune"), (1, "held-out")):
        m, f = mean_f1(t, half)
        print(f"threshold={t[0]:.2f} code_threshold={t[1]:.2f} anchored_threshold={t[2]:.2f}: {what} F1 mean {m:.3f}, "
              + ", ".join(f"{n} {x:.3f}" for n, x in zip(scored, f)))


def tune_blended() -> None:
    """The embedder's two thresholds on the tune half of the mixed protocol (MMLU, HumanEval): best mean F1.

    Each set's eval records are all prose or all code, so the best candidate of a train record
    does not depend on the thresholds: one probe per set (embeddings computed once), then a grid.
    """
    floor = ScanConfig(levels=("semantic",), semantic=SemanticConfig(threshold=0.01, code_threshold=0.01, near_miss_margin=0.0))
    scored = {}
    for name in ("mmlu_abstract_algebra", "humaneval_python", "humaneval_c"):
        case = cases(name)["mixed"]
        idx = SemanticIndex(case.evals, floor).with_train_sample(case.train[: floor.sample_size])
        rows = []  # (train row, eval, score, scored by characters alone)
        for i in range(0, len(case.train), 4096):
            rows += [(i + m.pos, m.eval_idx, m.score, m.detail.get("embedding") is None) for m in idx.probe(case.train[i : i + 4096])]
        scored[name] = case, rows

    def mean_f1(t: tuple[float, float], half: int) -> tuple[float, list[float]]:
        f = []
        for name, (case, rows) in scored.items():
            th = t[0] if name.startswith("mmlu") else t[1]
            f.append(f1(case, {j: e for j, e, sc, lex in rows if sc >= (LEXICAL[1] if lex and not name.startswith("mmlu") else th)}, half)[0])
        return statistics.mean(f), f

    grid = [x / 100 for x in range(10, 91, 1)]
    t = max(((a, b) for a in grid for b in grid), key=lambda tt: (mean_f1(tt, 0)[0], -abs(tt[0] - BLENDED[0]) - abs(tt[1] - BLENDED[1])))
    for half, what in ((0, "tune"), (1, "held-out")):
        m, f = mean_f1(t, half)
        print(f"embedder threshold={t[0]:.2f} code_threshold={t[1]:.2f}: {what} F1 mean {m:.3f}, "
              + ", ".join(f"{n} {x:.3f}" for n, x in zip(scored, f)))


def cost(n: int, jobs: int, with_targets: bool) -> None:
    """Wall seconds of ``leakcheck scan --levels semantic`` on ``n`` chat records against GSM8K test.

    Wall time only: ``-j`` workers are forkserver grandchildren, which ``RUSAGE_CHILDREN`` does not count.
    """
    src = HERE / "_data" / f"train_chat_{n}.jsonl"
    if not src.exists():
        print(f"cost: {src} is missing (see benchmarks/README.md)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        args = [sys.executable, "-m", "leakcheck", "scan", str(src), str(DATA / "gsm8k" / "test.jsonl"), "--levels", "semantic",
                "--embedder", "none", "-j", str(jobs), "--json", f"{tmp}/r.json", "--fail-on", "none"]
        if not with_targets:
            args += ["--train-target-field", "none"]
        t0 = time.perf_counter()
        proc = subprocess.run(args, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        found = len(json.loads(Path(f"{tmp}/r.json").read_text())["findings"]) if proc.returncode in (0, 1) else None
    what = "with targets" if with_targets else "without targets"
    print(f"cost: {n:,} chat records {what}, -j {jobs}: wall {wall:.0f} s, rc {proc.returncode}, findings {found}")
    if proc.returncode not in (0, 1):
        print(proc.stderr[-500:])


def cpu_rate(n: int, source: int, with_targets: bool) -> None:
    """Records per CPU-second of the level, in-process on the first ``n`` records of a chat file.

    CPU time, not wall time: on a loaded machine it is what a free core would spend. The
    scan includes reading and parsing the train file; ``-j 2`` on 2 free cores halves the wall time.
    """
    import itertools

    import leakcheck
    from leakcheck.config import Fields

    src = HERE / "_data" / f"train_chat_{source}.jsonl"
    with tempfile.TemporaryDirectory() as tmp:
        part = Path(tmp) / "part.jsonl"
        with open(src, encoding="utf-8") as fh, open(part, "w", encoding="utf-8") as out:
            out.writelines(itertools.islice(fh, n))
        cfg = ScanConfig(levels=("semantic",), semantic=SemanticConfig(embedder="none"),
                         train_fields=Fields() if with_targets else Fields(target="none"))
        c0 = time.process_time()
        r = leakcheck.scan(part, DATA / "gsm8k" / "test.jsonl", cfg)
        cpu = time.process_time() - c0
    what = "with targets" if with_targets else "without targets"
    print(f"cpu: {n:,} chat records {what}: {cpu:.1f} CPU s, {n / cpu:,.0f} records per CPU-second, "
          f"{len(r.findings)} findings; 1M records on 2 free cores ~ {1e6 / (n / cpu) / 2 / 60:.1f} min")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--cost", type=int, nargs="*", default=[], help="chat-record files to time (200000, 1000000)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--no-table", action="store_true", help="only the cost runs")
    ap.add_argument("--embedder", action="store_true",
                    help="the table with the packaged embedder (leakcheck[semantic]), on the small sets: MMLU and HumanEval")
    ap.add_argument("--cpu", type=int, default=0, help="records per CPU-second on the first N records of the 1M file")
    args = ap.parse_args()
    if not DATA.is_dir():
        sys.exit(f"{DATA} is not present")
    cfg = ScanConfig(levels=("semantic",), semantic=SemanticConfig(embedder="none"))
    if args.tune and args.embedder:
        tune_blended()
    elif args.tune:
        tune(cfg)
    elif args.embedder:
        table(ScanConfig(levels=("semantic",)), ["mmlu_abstract_algebra", "humaneval_python", "humaneval_c"])
    elif not args.no_table:
        table(cfg)
    if args.cpu:
        cpu_rate(args.cpu, 1000000, True)
        cpu_rate(args.cpu, 1000000, False)
    for n in args.cost:
        cost(n, args.jobs, True)
        cost(n, args.jobs, False)


if __name__ == "__main__":
    main()
