#!/usr/bin/env python3
"""Precision and recall of the ``near`` and ``contained`` thresholds on GSM8K.

Everything goes through the public API (``leakcheck.scan``) with fixed seeds, so two runs
print the same numbers (except the timings).

Cases, built from GSM8K ``train.jsonl`` (7,473) and ``test.jsonl`` (1,319):

* positives "near": ``--n`` sampled test questions, each with ~5% of its words (at least
  one) replaced by random other words, planted as train records;
* positives "contained": each sampled test question verbatim in the middle of a train text
  with 3 random train problems before it and 3 after; and the same with 1 word changed;
* negatives: the whole test set against the unmodified train set. Every finding there is a
  false positive except the known natural overlaps (same-template problems: test 602 vs
  train 1314/5162, test 632 vs train 20), which are listed and counted apart.

All plants go into one train list (the full train set plus 3 x ``--n`` records at random
places); the eval side is the whole test set without answers (``{"id", "question"}``), so
only prompt matches count. One scan per setting gives precision (TP / (TP + FP) over
distinct (eval, train) pairs; a pair is a TP when the train record is a plant of that eval
item) and recall (share of plants of each type found as a ``prompt``/``pair`` finding).
A second scan per setting, without plants, gives the negatives table.

    python benchmarks/thresholds.py                 # N = 300, seed 0
    python benchmarks/thresholds.py --n 100 --seed 1 --data /path/to/data
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

import leakcheck
from leakcheck import ContainedConfig, NearConfig, ScanConfig
from leakcheck.detect.grams import tokens

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DEFAULT_NEAR, DEFAULT_CONTAINED = NearConfig(), ContainedConfig()

#: (label, level, config); the defaults are marked in the output.
SETTINGS = [
    *[(f"near shingle=3 t={t}", "near", NearConfig(threshold=t)) for t in (0.5, 0.6, 0.7)],
    ("near shingle=5 t=0.6", "near", NearConfig(shingle=5, threshold=0.6)),
    *[(f"contained n=13 t={t}", "contained", ContainedConfig(threshold=t)) for t in (0.3, 0.5, 0.6, 0.7)],
    ("contained n=8 t=0.6", "contained", ContainedConfig(ngram=8, threshold=0.6)),
]
#: Natural overlaps of GSM8K test and train: same-template problems, not planted.
KNOWN = {("test-602", "train-1314"), ("test-602", "train-5162"), ("test-632", "train-20")}
PLANT_KINDS = ("near", "cont", "cont1w")
PLANT_NAMES = {"near": "near (5% words)", "cont": "contained", "cont1w": "contained, 1 word"}


def load(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def replace_some(text: str, k: int, vocab: list[str], rng: random.Random) -> str:
    """``text`` with ``k`` of its space-separated words replaced by other vocabulary words."""
    ws = text.split(" ")
    for i in rng.sample(range(len(ws)), min(k, len(ws))):
        new = rng.choice(vocab)
        while new.lower() == ws[i].lower():
            new = rng.choice(vocab)
        ws[i] = new
    return " ".join(ws)


def build_plants(train: list[dict], test: list[dict], n: int, rng: random.Random) -> tuple[list[dict], list[int]]:
    vocab = sorted({w for r in train for w in re.findall(r"[A-Za-z]+", r["question"]) if len(w) > 2})
    sample = sorted(rng.sample(range(len(test)), n))
    plants = []
    for i in sample:
        q = test[i]["question"]
        k = max(1, round(0.05 * len(q.split(" "))))
        plants.append({"id": f"plant-near-{i}", "question": replace_some(q, k, vocab, rng), "answer": test[i]["answer"]})
        for kind, middle in (("cont", q), ("cont1w", replace_some(q, 1, vocab, rng))):
            others = [train[j] for j in rng.sample(range(len(train)), 6)]
            parts = [r["question"] for r in others[:3]] + [middle] + [r["question"] for r in others[3:]]
            doc = " ".join(f"Problem {p + 1}: {t}" for p, t in enumerate(parts))
            plants.append({"id": f"plant-{kind}-{i}", "question": doc, "answer": " ".join(r["answer"] for r in others)})
    return plants, sample


def with_plants(train: list[dict], plants: list[dict], rng: random.Random) -> list[dict]:
    out = list(train)
    for p in plants:
        out.insert(rng.randrange(len(out) + 1), p)
    return out


def config_for(level: str, c) -> ScanConfig:
    return ScanConfig(levels=(level,), **{level: c})


def pairs_of(result) -> dict[tuple[str, str], float]:
    """Distinct (eval_id, train_id) -> best score of the prompt/pair findings."""
    out: dict[tuple[str, str], float] = {}
    for f in result.findings:
        if f.kind in ("prompt", "pair"):
            key = (f.eval_id, f.train_id)
            out[key] = max(out.get(key, 0.0), f.score)
    return out


def plant_of(train_id: str) -> tuple[str, str] | None:
    """``plant-near-12`` -> ("near", "test-12")."""
    if not train_id.startswith("plant-"):
        return None
    _, kind, i = train_id.split("-")
    return kind, f"test-{i}"


# -- direct similarities (no LSH, no template suppression) ---------------------------------------

def words(text: str) -> list[str]:
    """The tokens the fuzzy levels compare (words, CJK characters, operators and punctuation)."""
    return tokens(text)


def shingles(text: str, k: int) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i : i + k]) for i in range(len(w) - k + 1)}


def jaccard(a: str, b: str, k: int) -> float:
    x, y = shingles(a, k), shingles(b, k)
    return len(x & y) / len(x | y) if x | y else 0.0


def containment(eval_text: str, train_text: str, n: int) -> float:
    x = shingles(eval_text, n)
    return len(x & shingles(train_text, n)) / len(x) if x else 0.0


def nearest_train(test_q: list[str], train_q: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """For every test question: the best raw k-shingle Jaccard over all train questions, and where."""
    from scipy import sparse

    vocab: dict[tuple[str, ...], int] = {}

    def matrix(texts: list[str]):
        rows, cols = [], []
        for r, t in enumerate(texts):
            for s in shingles(t, k):
                rows.append(r)
                cols.append(vocab.setdefault(s, len(vocab)))
        return rows, cols

    a, b = matrix(test_q), matrix(train_q)
    shape = len(vocab)
    A = sparse.csr_matrix((np.ones(len(a[0]), np.int32), a), shape=(len(test_q), shape))
    B = sparse.csr_matrix((np.ones(len(b[0]), np.int32), b), shape=(len(train_q), shape))
    inter = (A @ B.T).tocoo()
    sa, sb = np.asarray(A.sum(1)).ravel(), np.asarray(B.sum(1)).ravel()
    jac = inter.data / (sa[inter.row] + sb[inter.col] - inter.data)
    best, arg = np.zeros(len(test_q)), np.full(len(test_q), -1)
    order = np.lexsort((jac, inter.row))  # per row ascending; the last one per row is the max
    last = np.flatnonzero(np.diff(inter.row[order], append=-1))
    best[inter.row[order][last]] = jac[order][last]
    arg[inter.row[order][last]] = inter.col[order][last]
    return best, arg


def short(text: str, n: int = 60) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder holding gsm8k/{train,test}.jsonl")
    ap.add_argument("--n", type=int, default=300, help="sampled test questions to plant (default 300)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    d = args.data / "gsm8k"
    if not (d / "train.jsonl").is_file() or not (d / "test.jsonl").is_file():
        sys.exit(f"thresholds.py: GSM8K not found at {d}/{{train,test}}.jsonl; pass --data DIR")
    t0 = time.perf_counter()
    train_raw, test_raw = load(d / "train.jsonl"), load(d / "test.jsonl")
    train = [{"id": f"train-{i}", "question": r["question"], "answer": r["answer"]} for i, r in enumerate(train_raw)]
    test = [{"id": f"test-{i}", "question": r["question"], "answer": r["answer"]} for i, r in enumerate(test_raw)]
    evals = [{"id": r["id"], "question": r["question"]} for r in test]  # no target: prompt matches only
    n = min(args.n, len(test))
    rng = random.Random(args.seed)
    plants, sample = build_plants(train, test, n, rng)
    planted = with_plants(train, plants, rng)
    q_of = {r["id"]: r["question"] for r in train + plants + test}

    print(f"GSM8K: {len(train)} train, {len(test)} test; {n} test questions planted 3 ways (seed {args.seed}); "
          f"combined train = {len(planted)} records; eval = {len(evals)} test questions without answers")
    print("TP/FP: distinct (eval, train) pairs; nat = known natural overlaps (counted neither way); "
          "P = TP/(TP+FP); R = share of plants found; neg = test vs unmodified train")
    rows, negs, fps = [], [], []
    for label, level, c in SETTINGS:
        cfg = config_for(level, c)
        t1 = time.perf_counter()
        found = pairs_of(leakcheck.scan(planted, evals, cfg))
        neg = pairs_of(leakcheck.scan(train, evals, cfg))
        secs = time.perf_counter() - t1
        tp = sum(1 for (e, t) in found if (p := plant_of(t)) and p[1] == e)
        nat = sum(1 for k in found if k in KNOWN)
        fp = len(found) - tp - nat
        rec = {k: sum(1 for i in sample if (f"test-{i}", f"plant-{k}-{i}") in found) / n for k in PLANT_KINDS}
        neg_fp = {k: s for k, s in neg.items() if k not in KNOWN}
        default = c == (DEFAULT_NEAR if level == "near" else DEFAULT_CONTAINED)
        rows.append((label + (" *" if default else ""), tp, fp, nat, tp / (tp + fp) if tp + fp else float("nan"),
                     rec, len({e for e, _ in neg_fp}), max(neg_fp.values(), default=0.0), secs))
        negs.append((label, neg))
        fps.append((label, {k: v for k, v in found.items() if k not in KNOWN and not ((p := plant_of(k[1])) and p[1] == k[0])}))

    head = (f"{'setting':<26} {'TP':>4} {'FP':>4} {'nat':>3} {'P':>6}  "
            + "  ".join(f"{'R ' + PLANT_NAMES[k]:>19}" for k in PLANT_KINDS)
            + f"  {'neg: eval FP':>12} {'neg: max FP':>11} {'sec':>5}")
    for level in ("near", "contained"):
        print(f"\n{level} (* = default)")
        print(head)
        print("-" * len(head))
        for label, tp, fp, nat, p, rec, nflag, nmax, secs in rows:
            if label.startswith(level):
                print(f"{label:<26} {tp:>4} {fp:>4} {nat:>3} {p:>6.3f}  "
                      + "  ".join(f"{rec[k]:>19.3f}" for k in PLANT_KINDS)
                      + f"  {nflag:>12} {nmax:>11.4f} {secs:>5.1f}")

    print("\nfalse positives of the combined runs (top 5 by score; a plant's text holds 7 problems, 6 from train)")
    for label, fp in fps:
        if fp:
            print(f"  {label}: {len(fp)} pairs")
            for (e, t), s in sorted(fp.items(), key=lambda kv: (-kv[1], kv[0]))[:5]:
                print(f"    {s:.4f}  {e} \"{short(q_of[e])}\"  vs  {t} \"{short(q_of[t])}\"")
    if not any(fp for _, fp in fps):
        print("  none")

    print("\nplants vs their test question, direct scores (raw text): min / median / max")
    for kind, fn, name in (("near", lambda a, b: jaccard(a, b, 3), "jac3"), ("near", lambda a, b: jaccard(a, b, 5), "jac5"),
                           ("near", lambda a, b: containment(a, b, 13), "cont13"),
                           ("cont1w", lambda a, b: containment(a, b, 13), "cont13"), ("cont1w", lambda a, b: containment(a, b, 8), "cont8")):
        v = np.array([fn(q_of[f"test-{i}"], q_of[f"plant-{kind}-{i}"]) for i in sample])
        print(f"  {PLANT_NAMES[kind]:<18} {name:<6} {v.min():.4f} / {np.median(v):.4f} / {v.max():.4f}")

    print("\nnegatives (test vs unmodified train): findings per setting, top 5 by score; [nat] = known natural overlap")
    for label, neg in negs:
        flagged = len({e for e, _ in neg})
        print(f"  {label}: {len(neg)} pairs, {flagged} eval items flagged")
        for (e, t), s in sorted(neg.items(), key=lambda kv: (-kv[1], kv[0]))[:5]:
            tag = " [nat]" if (e, t) in KNOWN else ""
            print(f"    {s:.4f}  {e} \"{short(q_of[e])}\"  vs  {t} \"{short(q_of[t])}\"{tag}")

    print("\nknown natural overlaps, direct scores (raw text, no template suppression):")
    print(f"  {'pair':<24} {'jac3':>6} {'jac5':>6} {'cont13':>6} {'cont8':>6}")
    for e, t in sorted(KNOWN):
        a, b = q_of[e], q_of[t]
        print(f"  {e + ' vs ' + t:<24} {jaccard(a, b, 3):>6.4f} {jaccard(a, b, 5):>6.4f} "
              f"{containment(a, b, 13):>6.4f} {containment(a, b, 8):>6.4f}")

    print("\nsame-template family: each test question's nearest train question by raw Jaccard (all 1,319 x 7,473 pairs)")
    test_q, train_q = [r["question"] for r in test], [r["question"] for r in train]
    for k in (3, 5):
        best, arg = nearest_train(test_q, train_q, k)
        counts = ", ".join(f">= {x}: {int((best >= x).sum())}" for x in (0.3, 0.4, 0.5, 0.6))
        print(f"  {k}-shingles: max {best.max():.4f}, median {np.median(best):.4f}; test items with nearest {counts}")
        for i in np.argsort(-best, kind="stable")[:5]:
            print(f"    {best[i]:.4f}  test-{i} \"{short(test_q[i])}\"  vs  train-{arg[i]} \"{short(train_q[arg[i]])}\"")
    low = pairs_of(leakcheck.scan(train, evals, config_for("near", NearConfig(threshold=0.3))))
    top = sorted(low.items(), key=lambda kv: -kv[1])
    print(f"  near level at t=0.3 (shingle 3, templates suppressed, LSH): {len(top)} pairs, "
          + ", ".join(f"{e} vs {t} {s:.4f}" for (e, t), s in top[:5]))

    print(f"\ntotal runtime {time.perf_counter() - t0:.1f} s ({date.today().isoformat()})")


if __name__ == "__main__":
    main()
