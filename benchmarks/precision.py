#!/usr/bin/env python3
"""Precision and recall of every level on labelled real data: can the fuzzy levels tell a sibling from a copy?

Sets (built from ``shared/data`` and ``benchmarks/data``, fixed seeds; labels in ``benchmarks/labels``):

* tune
  - ``mbpp``: MBPP's official test split (task ids 11-510) against its train split (601-974),
    plus 100 re-typed records (one word in 20 of the prompt replaced, at least one; code
    verbatim).
  - ``mbpp-text``: the same test split against the train prompts as plain texts (no
    target, so no other field to help), plus prompt-only near copies of 100 test prompts.
  - ``gsm8k``: GSM8K test against train, plus ``--n`` re-typed records (question and
    solution each ~5% of the words replaced, the ``####`` line kept).
  - ``gsm8k-text``: GSM8K test against the train questions as plain texts, plus ``--n``
    test questions planted as in ``thresholds.py``: near copies (~5% of the words),
    verbatim inside a longer text, and the same with one word changed.
* held-out (never looked at while choosing the rules)
  - ``mbpp-heldout``: MBPP's validation and prompt splits (511-600, 1-10) against train.
  - ``humaneval-mbpp``: HumanEval against all of MBPP (natural cross-benchmark pairs).
  - ``humaneval-pastes``: HumanEval against plain-text documents, one per problem, each
    holding the prompt and canonical solution verbatim between other text.
  - ``latex-math``: 24 hand-written LaTeX problems with ``\\boxed{}`` answers against a train
    side of their siblings (one number changed, another answer), re-typed copies (a word of
    the problem and of the solution changed), restatements (same problem, a one-line answer
    with the same ``\\boxed{}``) and pastes into a longer text.

Every (eval, train) pair that a scan reports, gated or as a sibling, must carry a label: a
plant's label follows from how it was made, natural pairs are labelled by reading them
(``benchmarks/labels/<set>.jsonl``: eval id, train id, ``same``/``different`` task, one-line
reason). ``--candidates FILE`` writes the pairs that low thresholds report and that have no
label yet, with their texts, for a person to read and label.

Precision per level: distinct (eval, train) pairs gated at that level (a pair sits at its
strongest level) that are the same task. Recall: labelled same-task pairs and plants gated
at any level. Siblings (fuzzy matches whose reward targets disagree) are counted apart.

    python benchmarks/precision.py                 # all sets, --n 300, seed 0
    python benchmarks/precision.py --sets mbpp,latex-math
    python benchmarks/precision.py --candidates /tmp/candidates.jsonl
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import leakcheck
from leakcheck import ContainedConfig, NearConfig, ScanConfig
from leakcheck.config import LEVELS

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parents[1] / "shared" / "data"
LABELS = HERE / "labels"


@dataclass
class BenchSet:
    name: str
    role: str  # "tune" or "held-out"
    train: list[dict]
    evals: list[dict]
    #: train id -> (plant kind, eval id it copies)
    plants: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: (eval id, train id) -> label, for pairs made on purpose (not read from the labels file)
    made: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)

    def text(self, rid: str) -> tuple[str, str]:
        for r in (*self.evals, *self.train):
            if str(r["id"]) == rid:
                p = next(r[k] for k in ("text", "question", "problem", "prompt") if k in r)
                t = next((r[k] for k in ("code", "answer", "solution", "canonical_solution") if k in r), "")
                return p, t
        raise KeyError(rid)


def load(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def edit_words(text: str, share: float, vocab: list[str], rng: random.Random, keep: Callable[[str], bool] = lambda w: False) -> str:
    """``text`` with ``share`` of its space-separated words (at least one) replaced by other vocabulary words.

    Words for which ``keep`` is true (LaTeX, numbers, the ``####`` line) are never replaced.
    """
    ws = text.split(" ")
    free = [i for i, w in enumerate(ws) if w.isalpha() and not keep(w)]
    k = max(1, round(share * len(ws)))
    for i in rng.sample(free, min(k, len(free))):
        new = rng.choice(vocab)
        while new.lower() == ws[i].lower():
            new = rng.choice(vocab)
        ws[i] = new
    return " ".join(ws)


def vocabulary(texts: list[str]) -> list[str]:
    return sorted({w for t in texts for w in re.findall(r"[A-Za-z]+", t) if len(w) > 2})


# -- the sets -------------------------------------------------------------------------------------

def mbpp_sets(data: Path, rng: random.Random) -> list[BenchSet]:
    rows = load(data / "mbpp" / "mbpp.jsonl")
    rec = lambda r: {"id": str(r["task_id"]), "text": r["text"], "code": r["code"]}  # noqa: E731
    train = [rec(r) for r in rows if 601 <= r["task_id"] <= 974]
    test = [rec(r) for r in rows if 11 <= r["task_id"] <= 510]
    held = [rec(r) for r in rows if r["task_id"] <= 10 or 511 <= r["task_id"] <= 600]
    vocab = vocabulary([r["text"] for r in train])
    retyped, plants = list(train), {}
    for i in sorted(rng.sample(range(len(test)), 100)):
        e = test[i]
        plants[f"plant-retyped-{e['id']}"] = ("re-typed record (prompt edited, code verbatim)", e["id"])
        retyped.append({"id": f"plant-retyped-{e['id']}", "text": edit_words(e["text"], 0.05, vocab, rng), "code": e["code"]})
    texts = [{"id": r["id"], "text": r["text"]} for r in train]
    text_plants = {}
    for i in sorted(rng.sample(range(len(test)), 100)):
        e = test[i]
        text_plants[f"plant-near-{e['id']}"] = ("near copy, prompt only", e["id"])
        texts.append({"id": f"plant-near-{e['id']}", "text": edit_words(e["text"], 0.05, vocab, rng)})
    return [BenchSet("mbpp", "tune", _shuffled(retyped, rng), test, plants),
            BenchSet("mbpp-text", "tune", _shuffled(texts, rng), test, text_plants),
            BenchSet("mbpp-heldout", "held-out", train, held)]


def _shuffled(rows: list[dict], rng: random.Random) -> list[dict]:
    out = list(rows)
    rng.shuffle(out)
    return out


def gsm8k_sets(data: Path, rng: random.Random, n: int) -> list[BenchSet]:
    train = [{"id": f"train-{i}", "question": r["question"], "answer": r["answer"]} for i, r in enumerate(load(data / "gsm8k" / "train.jsonl"))]
    test = [{"id": f"test-{i}", "question": r["question"], "answer": r["answer"]} for i, r in enumerate(load(data / "gsm8k" / "test.jsonl"))]
    vocab = vocabulary([r["question"] for r in train])
    sample = sorted(rng.sample(range(len(test)), n))
    texts, text_plants = [], {}
    retyped, plants = [], {}
    for i in sample:
        e = test[i]
        q = e["question"]
        texts.append({"id": f"plant-near-{i}", "text": edit_words(q, 0.05, vocab, rng)})
        text_plants[f"plant-near-{i}"] = ("near copy, prompt only", e["id"])
        for kind, name, middle in (("cont", "verbatim in a longer text", q), ("cont1w", "in a longer text, 1 word changed", edit_words(q, 0, vocab, rng))):
            others = [train[j]["question"] for j in rng.sample(range(len(train)), 6)]
            doc = " ".join(f"Problem {p + 1}: {t}" for p, t in enumerate(others[:3] + [middle] + others[3:]))
            texts.append({"id": f"plant-{kind}-{i}", "text": doc})
            text_plants[f"plant-{kind}-{i}"] = (name, e["id"])
        body, last = e["answer"].rsplit("\n", 1)
        retyped.append({"id": f"plant-retyped-{i}", "question": edit_words(q, 0.05, vocab, rng),
                        "answer": edit_words(body, 0.05, vocab, rng) + "\n" + last})
        plants[f"plant-retyped-{i}"] = ("re-typed record (question and solution edited, #### line kept)", e["id"])
    as_text = [{"id": r["id"], "text": r["question"]} for r in train]
    return [BenchSet("gsm8k", "tune", _mixed(train, retyped, rng), test, plants),
            BenchSet("gsm8k-text", "tune", _mixed(as_text, texts, rng), test, text_plants)]


def _mixed(train: list[dict], extra: list[dict], rng: random.Random) -> list[dict]:
    out = list(train)
    for p in extra:
        out.insert(rng.randrange(len(out) + 1), p)
    return out


def humaneval_sets(data: Path, rng: random.Random) -> list[BenchSet]:
    he = load(data / "humaneval" / "HumanEval.jsonl.gz")
    evals = [{"id": r["task_id"], "prompt": r["prompt"], "canonical_solution": r["canonical_solution"]} for r in he]
    mbpp = [{"id": f"mbpp-{r['task_id']}", "text": r["text"], "code": r["code"]} for r in load(data / "mbpp" / "mbpp.jsonl")]
    filler = [r["question"] for r in load(data / "gsm8k" / "train.jsonl")[:2000]]
    docs, plants = [], {}
    for i, r in enumerate(he):
        before, after = rng.sample(filler, 2)
        text = f"Notes, part {i + 1}. {before}\n\nToday's exercise:\n\n{r['prompt']}{r['canonical_solution']}\n\nNext time: {after}"
        docs.append({"id": f"doc-{i}", "text": text})
        plants[f"doc-{i}"] = ("pasted into a document (prompt and solution)", r["task_id"])
    return [BenchSet("humaneval-mbpp", "held-out", mbpp, evals),
            BenchSet("humaneval-pastes", "held-out", docs, evals, plants)]


def math_set(rng: random.Random) -> BenchSet:
    items = load(HERE / "data" / "latex_math.jsonl")
    evals = [{"id": r["id"], "problem": r["problem"], "solution": r["solution"]} for r in items]
    vocab = vocabulary([r["problem"] + " " + r["solution"] for r in items])
    latex = lambda w: "$" in w or "\\" in w  # noqa: E731
    train: list[dict] = []
    made: dict[tuple[str, str], tuple[str, str]] = {}
    plants: dict[str, tuple[str, str]] = {}
    for j, r in enumerate(items):
        i = r["id"]
        box = re.search(r"\\boxed\{(.*)\}", r["solution"])
        assert box
        train.append({"id": f"{i}-sibling", "problem": r["sibling_problem"], "solution": r["sibling_solution"]})
        made[(i, f"{i}-sibling")] = ("different", "sibling: one number changed, another answer")
        train.append({"id": f"{i}-retyped", "problem": edit_words(r["problem"], 0.05, vocab, rng, latex),
                      "solution": edit_words(r["solution"], 0.05, vocab, rng, latex)})
        plants[f"{i}-retyped"] = ("re-typed record", i)
        train.append({"id": f"{i}-restated", "problem": r["problem"], "solution": f"The answer is $\\boxed{{{box[1]}}}$."})
        plants[f"{i}-restated"] = ("restated: same problem, one-line answer", i)
        other = items[(j + 7) % len(items)]
        doc = (f"Worked examples.\n\nExample 1. {other['sibling_problem']}\nSolution. {other['sibling_solution']}\n\n"
               f"Example 2. {r['problem']}\nSolution. {r['solution']}\n\nTry the next one yourself.")
        train.append({"id": f"{i}-pasted", "problem": doc, "solution": "See the examples above."})
        plants[f"{i}-pasted"] = ("pasted into a document (prompt and solution)", i)
        made[(other["id"], f"{i}-pasted")] = ("different", "the document holds this problem's sibling (one number changed)")
    return BenchSet("latex-math", "held-out", _shuffled(train, rng), evals, plants, made)


SET_NAMES = ("mbpp", "mbpp-text", "gsm8k", "gsm8k-text", "mbpp-heldout", "humaneval-mbpp", "humaneval-pastes", "latex-math")


def build_sets(data: Path, names: tuple[str, ...], n: int, seed: int) -> list[BenchSet]:
    out: list[BenchSet] = []
    if {"mbpp", "mbpp-text", "mbpp-heldout"} & set(names):
        out += mbpp_sets(data, random.Random(seed))
    if {"gsm8k", "gsm8k-text"} & set(names):
        out += gsm8k_sets(data, random.Random(seed), n)
    if {"humaneval-mbpp", "humaneval-pastes"} & set(names):
        out += humaneval_sets(data, random.Random(seed))
    if "latex-math" in names:
        out.append(math_set(random.Random(seed)))
    return [s for s in out if s.name in names]


# -- labels and scoring ---------------------------------------------------------------------------

#: The labels file of each set: sets built from one source share its natural pairs.
LABEL_FILE = {"mbpp": "mbpp", "mbpp-text": "mbpp", "mbpp-heldout": "mbpp", "gsm8k": "gsm8k", "gsm8k-text": "gsm8k",
              "humaneval-mbpp": "humaneval", "humaneval-pastes": "humaneval", "latex-math": "latex-math"}


def read_labels(name: str) -> dict[tuple[str, str], tuple[str, str]]:
    p = LABELS / f"{LABEL_FILE[name]}.jsonl"
    if not p.is_file():
        return {}
    out = {}
    for n, r in enumerate(load(p), 1):
        if r.get("label") not in ("same", "different"):
            sys.exit(f"{p}:{n}: label must be 'same' or 'different', not {r.get('label')!r}")
        out[(str(r["eval"]), str(r["train"]))] = (r["label"], r.get("reason", ""))
    return out


def label_of(s: BenchSet, labels: dict, e: str, t: str) -> str:
    if t in s.plants and s.plants[t][1] == e:
        return "same"
    got = s.made.get((e, t)) or labels.get((e, t))
    return got[0] if got else "?"


def pairs(findings) -> dict[tuple[str, str], str]:
    """Distinct (eval id, train id) -> strongest level."""
    out: dict[tuple[str, str], str] = {}
    for f in findings:
        k = (f.eval_id, f.train_id)
        if k not in out or LEVELS.index(f.level) < LEVELS.index(out[k]):
            out[k] = f.level
    return out


@dataclass
class Outcome:
    set: BenchSet
    gated: dict[tuple[str, str], str]
    siblings: dict[tuple[str, str], str]
    kinds: Counter
    secs: float


def run(s: BenchSet, config: ScanConfig) -> Outcome:
    t0 = time.perf_counter()
    r = leakcheck.scan(s.train, s.evals, config)
    secs = time.perf_counter() - t0
    gated = r.gated() if hasattr(r, "gated") else r.findings
    kinds = Counter((f.kind, f.level, (f.detail or {}).get("target_in", "")) for f in gated)
    return Outcome(s, pairs(gated), pairs(getattr(r, "siblings", ())), kinds, secs)


def report(outcomes: list[Outcome]) -> None:
    for role in ("tune", "held-out"):
        group = [o for o in outcomes if o.set.role == role]
        if not group:
            continue
        print(f"\n== {role}: {', '.join(o.set.name for o in group)}")
        print(f"{'level':<11} {'gated':>6} {'same':>5} {'diff':>5} {'?':>3} {'precision':>9}   {'siblings':>8} {'same':>5} {'diff':>5}")
        tot = Counter()
        for lv in LEVELS:
            c = Counter()
            for o in group:
                labels = read_labels(o.set.name)
                for (e, t), level in o.gated.items():
                    if level == lv:
                        c["g"] += 1
                        c["g" + label_of(o.set, labels, e, t)] += 1
                for (e, t), level in o.siblings.items():
                    if level == lv:
                        c["s"] += 1
                        c["s" + label_of(o.set, labels, e, t)] += 1
            tot.update(c)
            print(_row(lv, c))
        print(_row("all", tot))
        for o in group:
            _recall(o)


def _row(name: str, c: Counter) -> str:
    judged = c["gsame"] + c["gdifferent"]
    p = f"{c['gsame'] / judged:.3f}" if judged else "-"
    return (f"{name:<11} {c['g']:>6} {c['gsame']:>5} {c['gdifferent']:>5} {c['g?']:>3} {p:>9}   "
            f"{c['s']:>8} {c['ssame']:>5} {c['sdifferent']:>5}")


def _recall(o: Outcome) -> None:
    s, labels = o.set, read_labels(o.set.name)
    lines = []
    by_kind: dict[str, list[int]] = {}
    for t, (kind, e) in sorted(s.plants.items()):
        hit = (e, t) in o.gated
        by_kind.setdefault(kind, [0, 0, 0])
        by_kind[kind][0] += hit
        by_kind[kind][1] += 1
        by_kind[kind][2] += (e, t) in o.siblings
    for kind, (hit, n, sib) in by_kind.items():
        lines.append(f"{kind} {hit}/{n} = {hit / n:.3f}" + (f" ({sib} as siblings)" if sib else ""))
    natural = [k for k, (lab, _) in {**labels, **s.made}.items() if lab == "same" and k[1] not in s.plants]
    if natural:
        hit = sum(k in o.gated for k in natural)
        sib = sum(k in o.siblings for k in natural)
        lines.append(f"labelled same-task pairs {hit}/{len(natural)} = {hit / len(natural):.3f}" + (f" ({sib} as siblings)" if sib else ""))
    wrong = sorted(k for k in o.gated if label_of(s, labels, *k) == "different")
    if wrong:
        lines.append("gated different-task pairs: " + ", ".join(f"{e}/{t}" for e, t in wrong[:12]) + (" ..." if len(wrong) > 12 else ""))
    unl = sorted(k for k in (*o.gated, *o.siblings) if label_of(s, labels, *k) == "?")
    if unl:
        lines.append(f"UNLABELLED: {len(unl)} pairs, e.g. " + ", ".join(f"{e}/{t}" for e, t in unl[:8]))
    kinds = ", ".join(f"{k}:{lv}{'(' + w + ')' if w else ''} {n}" for (k, lv, w), n in sorted(o.kinds.items()))
    print(f"  {s.name} ({len(s.evals)} eval, {len(s.train)} train, {o.secs:.1f} s): " + "; ".join(lines))
    print(f"    gated findings by kind:level: {kinds or 'none'}")


def candidates(sets: list[BenchSet], out: Path) -> None:
    """Pairs that low thresholds report and that have no label yet, with their texts."""
    low = ScanConfig(near=NearConfig(threshold=0.4, near_miss_margin=0.1), contained=ContainedConfig(threshold=0.3, near_miss_margin=0.1),
                     max_near_misses=10**6)
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        for s in sets:
            labels = read_labels(s.name)
            r = leakcheck.scan(s.train, s.evals, low)
            seen: dict[tuple[str, str], float] = {}
            for f in (*r.findings, *getattr(r, "siblings", ()), *r.near_misses):
                k = (f.eval_id, f.train_id)
                if label_of(s, labels, *k) == "?" and not (k[1] in s.plants and s.plants[k[1]][1] == k[0]):
                    seen[k] = max(seen.get(k, 0.0), f.score)
            for (e, t), score in sorted(seen.items()):
                (ep, et), (tp, tt) = s.text(e), s.text(t)
                fh.write(json.dumps({"set": s.name, "eval": e, "train": t, "score": score, "eval_prompt": ep, "train_prompt": tp,
                                     "eval_target": et, "train_target": tt}, ensure_ascii=False) + "\n")
                n += 1
    print(f"{n} unlabelled candidate pairs written to {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder holding mbpp/, gsm8k/, humaneval/ (shared/data)")
    ap.add_argument("--sets", default=",".join(SET_NAMES), help=f"comma-separated subset of {', '.join(SET_NAMES)}")
    ap.add_argument("--n", type=int, default=300, help="GSM8K test questions to plant (default 300)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--candidates", type=Path, help="write unlabelled candidate pairs (low thresholds) to this JSONL file and stop")
    args = ap.parse_args()
    names = tuple(x.strip() for x in args.sets.split(",") if x.strip())
    bad = [x for x in names if x not in SET_NAMES]
    if bad:
        sys.exit(f"precision.py: unknown set {', '.join(bad)}; choose from {', '.join(SET_NAMES)}")
    if not (args.data / "mbpp" / "mbpp.jsonl").is_file():
        sys.exit(f"precision.py: shared data not found at {args.data}; pass --data DIR")
    t0 = time.perf_counter()
    sets = build_sets(args.data, names, args.n, args.seed)
    if args.candidates:
        candidates(sets, args.candidates)
        return
    print(f"leakcheck {leakcheck.__version__}, default ScanConfig (all levels; the gate fails on every level), seed {args.seed}")
    print("gated = distinct (eval, train) pairs the gate fails on, at their strongest level; same/diff = labelled same/different task;"
          " siblings = fuzzy matches whose reward targets disagree (listed apart, never gated)")
    report([run(s, ScanConfig()) for s in sets])
    print(f"\ntotal runtime {time.perf_counter() - t0:.1f} s ({date.today().isoformat()})")


if __name__ == "__main__":
    main()
