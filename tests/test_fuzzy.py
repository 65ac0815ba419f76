"""The near and contained levels (issue 3): verified scores, cross-field kinds, templates, real data."""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from datasketch import MinHash

import leakcheck
from leakcheck import ScanConfig
from leakcheck.canon import normalize
from leakcheck.config import ContainedConfig, NearConfig
from leakcheck.detect import fuzzy, grams
from leakcheck.records import Record

from .conftest import write_jsonl
from .helpers import triples

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "fuzzy"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_gsm8k = pytest.mark.skipif(not (SHARED / "gsm8k" / "train.jsonl").is_file(), reason="shared/data/gsm8k is not present")
needs_mbpp = pytest.mark.skipif(not (SHARED / "mbpp" / "mbpp.jsonl").is_file(), reason="shared/data/mbpp is not present")

FUZZY = ScanConfig(levels=("near", "contained"))
ALL = ScanConfig()

Q = ("A bakery sells muffins for 3 dollars each and cookies for 2 dollars each. On Monday it sold 45 muffins "
     "and twice as many cookies as muffins. On Tuesday it sold 10 fewer muffins than on Monday and the same "
     "number of cookies. How much money did the bakery make on the two days together?")
A = ("On Monday it sold 45 * 2 = 90 cookies, so it made 45 * 3 + 90 * 2 = 135 + 180 = 315 dollars. On Tuesday "
     "it sold 45 - 10 = 35 muffins and 90 cookies, so it made 35 * 3 + 90 * 2 = 105 + 180 = 285 dollars. "
     "Together it made 315 + 285 = 600 dollars.\n#### 600")
OTHER_Q = ("Lena has a garden with 4 rows of tulips and 7 tulips in each row. She plants 9 more tulips along the "
           "fence. How many tulips are in her garden now?")
OTHER_A = "4 rows of 7 tulips is 4 * 7 = 28 tulips. With 9 more she has 28 + 9 = 37 tulips.\n#### 37"


_CJK = "\u3040-\u30ff\u4e00-\u9fff"
# the tokens of grams.words, written independently: words, CJK characters, every other symbol
# (a run of 4+ equal symbols as one token of 4)
_TOKEN = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+|([^\\w\\s])\\1{{3,}}|[^\\w\\s]")


def words(text: str) -> list[str]:
    return [m[1] * 4 if m[1] else m[0] for m in _TOKEN.finditer(normalize(text))]


def shingle_set(text: str, k: int) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i : i + k]) for i in range(len(w) - k + 1)}


def jaccard(a: str, b: str, k: int = 3, drop: frozenset = frozenset()) -> float:
    x, y = shingle_set(a, k) - drop, shingle_set(b, k) - drop
    return len(x & y) / len(x | y)


def containment(eval_text: str, train_text: str, n: int = 13, drop: frozenset = frozenset()) -> float:
    x = shingle_set(eval_text, n) - drop
    return len(x & shingle_set(train_text, n)) / len(x)


def templates(populations: list[list[str]], k: int, share: float = 0.05, min_records: int = 20) -> frozenset:
    """Shingles in at least ``share`` (and ``min_records``) of the distinct texts of one population."""
    out: set = set()
    for texts in populations:
        distinct = {tuple(words(t)) for t in texts}
        df = Counter(s for ws in distinct for s in {ws[i : i + k] for i in range(len(ws) - k + 1)})
        out |= {s for s, c in df.items() if c >= max(min_records, math.ceil(share * len(distinct)))}
    return frozenset(out)


def chat(q: str, a: str) -> dict:
    return {"messages": [{"role": "system", "content": "You are a math tutor."},
                         {"role": "user", "content": q}, {"role": "assistant", "content": a}]}


def replace_words(text: str, positions: dict[int, str]) -> str:
    ws = text.split(" ")
    for i, w in positions.items():
        ws[i] = w
    return " ".join(ws)


# -- building blocks -------------------------------------------------------------------------

def test_words_fold_like_normalize():
    texts = ["Straße ẞ and ΣΊΣΥΦΟΣ", "zero\u200bwidth ＡＢＣ ７２ naïve café", "Let's  think\tstep-by-step: x_1 = 2!", "", "¿Qué?"]
    w = grams.words(texts)
    ref = grams.words([" ".join(words(t)) for t in texts])
    assert w.offsets.tolist() == ref.offsets.tolist() == [0, 4, 9, 23, 23, 26]
    assert [len(words(t)) for t in texts] == [4, 5, 14, 0, 3]
    assert np.array_equal(w.hashes, ref.hashes)
    # n-grams are shown as they appear (whitespace collapsed), for the template notes
    assert w.text(9, 4) == "Let's think"  # let, ', s, think


def test_ngram_hashes_agree_with_python_ngrams():
    texts = ["a b c d a b c", "x a b c", "a b"]
    h, text_of = grams.ngrams(grams.words(texts), 3)
    assert text_of.tolist() == [0, 0, 0, 0, 0, 1, 1]
    # equal n-grams, equal hashes; different n-grams, different hashes
    assert h[0] == h[4] == h[6] and len(set(h.tolist())) == 5


def test_signatures_equal_datasketch_minhash():
    det = fuzzy.build("near", [Record("e", 0, Q, A)], ScanConfig())
    rng = np.random.default_rng(0)
    h = rng.integers(0, 2**63, 50, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    text_of = np.repeat(np.arange(3), [20, 0, 30])
    sig = det.signatures(h, text_of, 3)
    for t in (0, 2):
        m = MinHash(num_perm=128, seed=1, hashfunc=lambda v: v)
        m.update_batch([int(x) & 0xFFFFFFFF for x in h[text_of == t]])
        assert np.array_equal(sig[t], m.hashvalues)
    assert (sig[1] == 0xFFFFFFFF).all()


@pytest.mark.parametrize(("threshold", "num_perm", "fp_weight"), [(0.6, 128, 0.5), (0.6, 128, 0.02), (0.8, 256, 0.5), (0.3, 64, 0.1)])
def test_lsh_bands_and_rows_are_datasketchs_choice(threshold, num_perm, fp_weight):
    from datasketch.lsh import _optimal_param

    cfg = ScanConfig(near=NearConfig(threshold=threshold, num_perm=num_perm, lsh_fp_weight=fp_weight))
    det = fuzzy.build("near", [Record("e", 0, Q, A)], cfg)
    assert (det.bands, det.rows) == _optimal_param(threshold, num_perm, fp_weight, 1 - fp_weight)


def test_known_lsh_params_are_datasketchs_choice():
    from datasketch.lsh import _optimal_param

    for (threshold, num_perm, fp_weight), got in fuzzy._KNOWN_LSH_PARAMS.items():
        assert got == _optimal_param(threshold, num_perm, fp_weight, 1 - fp_weight)
    c = NearConfig()
    assert (c.threshold, c.num_perm, c.lsh_fp_weight) in fuzzy._KNOWN_LSH_PARAMS  # the defaults skip the search


@pytest.mark.parametrize(("num_perm", "seed"), [(128, 1), (64, 7), (256, 0), (2, 12345)])
def test_permutations_equal_datasketchs(num_perm, seed):
    m = MinHash(num_perm=num_perm, seed=seed)
    assert m.scheme == "affine32"
    a, b = fuzzy._permutations(num_perm, seed)
    assert a.dtype == b.dtype == np.uint32
    assert np.array_equal(a, m.permutations[0]) and np.array_equal(b, m.permutations[1])


def test_default_near_index_builds_without_datasketch(tmp_path):
    """With the default settings the driver never imports datasketch or scipy (a third of a second)."""
    import subprocess
    import sys

    code = ("import sys; from leakcheck.records import Record; from leakcheck.config import ScanConfig; "
            "from leakcheck.detect import fuzzy; "
            f"d = fuzzy.build('near', [Record('e', 0, {Q!r}, {A!r})], ScanConfig()); "
            "print(d.bands, d.rows, 'datasketch' in sys.modules, 'scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["31", "4", "False", "False"]


# -- the levels on real files ------------------------------------------------------------------

def test_near_prompt_leak_scores_verified_jaccard(jsonl):
    retyped = replace_words(Q, {5: "cupcakes", 30: "Wednesday"})
    ev = jsonl("eval.jsonl", [{"id": "q", "question": Q, "answer": A}, {"id": "o", "question": OTHER_Q, "answer": OTHER_A}])
    tr = jsonl("train.jsonl", [chat("What is the capital of France?", "Paris"), chat(retyped, "I do not know.")])
    r = leakcheck.scan(tr, ev, ALL)
    assert triples(r) == {("q", "1", "prompt", "near")}
    (f,) = r.findings
    assert f.score == round(jaccard(Q, retyped), 4) == 0.8095
    p = r.parameters["levels"]["near"]
    assert (p["shingle"], p["threshold"], p["bands"], p["rows"]) == (3, 0.6, 31, 4)


def test_contained_finds_question_inside_long_train_text(jsonl):
    doc = ("Problem 1: " + OTHER_Q + " Problem 2: What is 17 times 23? Problem 3: " + Q
           + " Problem 4: A car drives 60 miles in an hour. How far does it go in 3 hours? Problem 5: Name a prime.")
    ev = jsonl("eval.jsonl", [{"id": "q", "question": Q, "answer": A}, {"id": "o", "question": OTHER_Q, "answer": OTHER_A}])
    tr = jsonl("train.jsonl", [{"text": doc}])
    r = leakcheck.scan(tr, ev, ALL)
    # OTHER_Q (26 words) is in the document too: both are contained, both with every n-gram found
    assert {(f.eval_id, f.train_id, f.kind, f.level, f.score) for f in r.findings} == {
        ("q", "0", "prompt", "contained", 1.0), ("o", "0", "prompt", "contained", 1.0)}
    assert jaccard(Q, doc) < 0.6  # why near cannot see it


def test_cross_field_kinds_and_pair(jsonl):
    lesson = ("Today we practise multi-step word problems about shops, prices and totals. Read the worked "
              "example below, then try the exercises at the end of the sheet on your own. ")
    ev = jsonl("eval.jsonl", [{"id": "q", "question": Q, "answer": A}, {"id": "o", "question": OTHER_Q, "answer": OTHER_A}])
    tr = jsonl("train.jsonl", [
        # a reference solution inside a long instruction: contained
        chat(lesson + "Worked example: " + A + " Exercises: " + OTHER_Q.replace("Lena", "Omar").replace("tulips", "roses"), "Ok."),
        # an eval question quoted in a train answer with a short lead-in: near
        chat("Give me an example of a two-day sales problem.", "Here is one: " + Q),
        # both fields re-typed: one pair at the near level, not two findings
        chat(replace_words(Q, {12: "4"}), replace_words(A, {3: "sold", 20: "three"})),
    ])
    r = leakcheck.scan(tr, ev, ALL)
    got = {(f.eval_id, f.train_id, f.kind, f.level) for f in r.findings}
    assert got == {("q", "0", "target_in_prompt", "contained"), ("q", "1", "prompt_in_target", "near"),
                   ("q", "2", "pair", "near")}
    by = {f.kind: f for f in r.findings}
    tip = by["target_in_prompt"]
    assert tip.score == 1.0 and (tip.eval_field, tip.train_field) == ("answer", "messages")
    assert by["prompt_in_target"].score == round(jaccard(Q, "Here is one: " + Q), 4)
    pair = by["pair"]
    assert pair.detail["prompt_score"] == round(jaccard(Q, replace_words(Q, {12: "4"})), 4)
    assert pair.detail["target_score"] == round(jaccard(A, replace_words(A, {3: "sold", 20: "three"})), 4)
    assert pair.detail["prompt_level"] == pair.detail["target_level"] == "near"


def test_exact_match_is_reported_once_at_its_strongest_level(jsonl):
    ev = jsonl("eval.jsonl", [{"id": "q", "question": Q, "answer": A}])
    tr = jsonl("train.jsonl", [chat(Q, A)])
    r = leakcheck.scan(tr, ev, ALL)
    assert triples(r) == {("q", "0", "pair", "exact")}


def test_templates_are_suppressed_and_reported():
    """24 eval and 40 train prompts share a 35-word instruction frame and differ otherwise."""
    ev, tr = FIXTURES / "templated_eval.jsonl", FIXTURES / "templated_train.jsonl"
    r = leakcheck.scan(tr, ev, FUZZY)
    assert r.findings == ()
    near, cont = r.parameters["levels"]["near"], r.parameters["levels"]["contained"]
    evals, _ = leakcheck.load_records(ev)
    trains, _ = leakcheck.load_records(tr)
    for level, k, params in (("contained", 13, cont["suppressed_ngrams"]), ("near", 3, near["suppressed_shingles"])):
        assert params["eval prompts"] == len(templates([[e.prompt for e in evals]], k)), level
        assert params["train prompts"] == len(templates([[t.prompt for t in trains]], k)), level
    assert cont["suppressed_ngrams"] == {"eval prompts": 28, "eval targets": 0, "train prompts": 28, "train targets": 0}
    note = next(n for n in r.notes if n.startswith("contained: suppressed 28 template n-grams"))
    assert "'the final answer after ####. Show all of your work and check' (100% of eval prompts)" in note
    assert "contained: 24 eval targets shorter than 13 tokens were checked by exact/normalized only" in r.notes
    # Without suppression the shared frame alone makes unrelated prompts near duplicates: with
    # the answers they are siblings (the final answers differ), without them leaks.
    off = FUZZY.with_(near=NearConfig(template_min_records=10**9), contained=ContainedConfig(template_min_records=10**9))
    loud = leakcheck.scan(tr, ev, off)
    assert loud.findings == () and len(loud.siblings) == 224
    assert {(f.kind, f.level) for f in loud.siblings} == {("prompt", "near")} and all(f.score < 0.8 for f in loud.siblings)
    assert {f.detail["targets_disagree"].split(":")[0] for f in loud.siblings} == {"final answers differ"}
    no_answers = leakcheck.scan(tr, [{"id": e.id, "question": e.prompt} for e in evals], off)
    assert len(no_answers.findings) == 237 and no_answers.siblings == ()
    # siblings are listed up to max_target_hits (10) per eval record, the strongest first
    per_eval = Counter(f.eval_id for f in no_answers.findings)
    assert sum(min(n, 10) for n in per_eval.values()) == 224
    assert {(f.eval_id, f.train_id) for f in loud.siblings} < {(f.eval_id, f.train_id) for f in no_answers.findings}


def test_no_unverified_candidate_reaches_the_report(jsonl):
    """16 permutations, one row per band: LSH proposes far more than it verifies; only verified pairs remain."""
    rnd = random.Random(3)
    evals = [{"id": f"e{i}", "question": " ".join(f"w{rnd.randrange(5000)}" for _ in range(40))} for i in range(20)]
    trains = []
    for i in range(60):
        ws = evals[i % 20]["question"].split()
        for j in rnd.sample(range(40), i % 12):
            ws[j] = f"x{rnd.randrange(5000)}"
        trains.append({"text": " ".join(ws)})
    cfg = ScanConfig(levels=("near",), near=NearConfig(threshold=0.5, num_perm=16, lsh_fp_weight=0.001))
    r = leakcheck.scan(jsonl("train.jsonl", trains), jsonl("eval.jsonl", evals), cfg)
    p = r.parameters["levels"]["near"]
    assert (p["bands"], p["rows"]) == (12, 1)
    assert p["lsh_candidates"] > p["verified"] > 0
    assert len(r.findings) == p["verified"]
    expected = {(f"e{i % 20}", i, round(jaccard(evals[i % 20]["question"], t["text"]), 4)) for i, t in enumerate(trains)
                if jaccard(evals[i % 20]["question"], t["text"]) >= 0.5}
    assert {(f.eval_id, f.train_row, f.score) for f in r.findings} == expected


def test_short_eval_items_are_counted_not_skipped(jsonl):
    ev = jsonl("eval.jsonl", [{"id": "s", "question": "What is 2+2?", "answer": "4"}, {"id": "q", "question": Q, "answer": A}])
    tr = jsonl("train.jsonl", [{"question": "what is 2 + 2", "answer": "4"}])
    r = leakcheck.scan(tr, ev, FUZZY)
    assert "contained: 1 eval prompts shorter than 13 tokens were checked by exact/normalized only" in r.notes
    assert "near: 1 eval targets shorter than 3 tokens were checked by exact/normalized only" in r.notes
    assert r.parameters["levels"]["contained"]["eval_prompts_too_short"] == 1


# -- real data ---------------------------------------------------------------------------------

def _gsm8k(split: str) -> list[dict]:
    return [json.loads(line) for line in (SHARED / "gsm8k" / f"{split}.jsonl").open(encoding="utf-8")]


@needs_gsm8k
def test_gsm8k_train_vs_test_has_no_fuzzy_leak_and_its_same_template_pairs_are_siblings():
    train, test = SHARED / "gsm8k" / "train.jsonl", SHARED / "gsm8k" / "test.jsonl"
    default = leakcheck.scan(train, test, FUZZY)
    assert default.findings == () and default.siblings == ()
    tr, te = _gsm8k("train"), _gsm8k("test")
    tq, q = te[602]["question"], tr[1314]["question"]
    near_t = templates([[r["question"] for r in te], [r["answer"] for r in te], [r["question"] for r in tr], [r["answer"] for r in tr]], 3)
    cont_t = templates([[r["question"] for r in te], [r["answer"] for r in te], [r["question"] for r in tr], [r["answer"] for r in tr]], 13)
    j, c = round(jaccard(tq, q, drop=near_t), 4), round(containment(tq, q, drop=cont_t), 4)
    assert (j, c) == (0.5625, 0.5625)  # raw: 0.5758, 0.5625 (". How many" is a template)
    # At the defaults they are no leaks, but the report lists the closest matches under the
    # thresholds with their real scores, for a person to judge. (632 vs 20 is not among
    # them: LSH tuned for 0.6 may miss a candidate that low; near misses are best effort.)
    assert [(f.eval_row, f.train_row, f.kind, f.level, f.score) for f in default.near_misses] == [
        (602, 1314, "prompt", "contained", c), (602, 1314, "prompt", "near", j)]
    # With lowered thresholds the same-template problems (test 602 "A plane travels 1200 miles
    # in 3 hours..." vs train 1314/5162 "A train travels 270 miles...") match, and their final
    # answers tell them apart: siblings, not leaks.
    low = ScanConfig(levels=("near", "contained"), near=NearConfig(threshold=0.5), contained=ContainedConfig(threshold=0.25))
    r = leakcheck.scan(train, test, low)
    assert r.findings == ()
    assert [(f.eval_row, f.train_row, f.kind, f.level, f.score, f.detail["targets_disagree"]) for f in r.siblings] == [
        (180, 4737, "target", "contained", 0.25, "final answers differ: 20 vs 85"),
        (602, 1314, "prompt", "near", j, "final answers differ: 5 vs 2"),
        (602, 5162, "prompt", "near", j, "final answers differ: 5 vs 2"),
        (632, 20, "prompt", "near", round(jaccard(te[632]["question"], tr[20]["question"], drop=near_t), 4), "final answers differ: 45 vs 38"),
    ]
    assert r.summary()["siblings"] == {"count": 3, "percent": round(100 * 3 / 1319, 2)} and r.summary()["contaminated"]["count"] == 0
    only_contained = leakcheck.scan(train, test, low.with_(levels=("contained",)))
    assert only_contained.findings == ()
    assert {(f.eval_row, f.train_row, f.score) for f in only_contained.siblings} == {
        (180, 4737, 0.25), (602, 1314, c), (602, 5162, c), (632, 20, round(containment(te[632]["question"], tr[20]["question"], drop=cont_t), 4))}


@needs_gsm8k
def test_gsm8k_planted_leaks(tmp_path: Path):
    train, test = _gsm8k("train"), _gsm8k("test")
    rows = [chat(r["question"], r["answer"]) for r in train[:3000]]
    # test 0: ~5% of the words replaced (3 of 56), with the same final answer
    q0 = test[0]["question"]
    retyped = replace_words(q0, {1: "geese", 20: "cakes", 40: "weekly"})
    # test 1: in the middle of a train text with other problems before and after it
    doc = " ".join(f"Problem {i + 1}: {train[i]['question']}" for i in range(3)) + f" Problem 4: {test[1]['question']} " + \
        " ".join(f"Problem {i + 5}: {train[10 + i]['question']}" for i in range(3))
    # test 2: its solution quoted in a train user turn
    quoted = "My teacher wrote this solution, is it right?\n" + test[2]["answer"]
    rows += [chat(retyped, "#### 18"), chat(doc, "All solved."), chat(quoted, "Yes.")]
    tr = write_jsonl(tmp_path / "train.jsonl", rows)
    r = leakcheck.scan(tr, SHARED / "gsm8k" / "test.jsonl", ALL)
    t = templates([[x["question"] for x in test], [x["answer"] for x in test], [x["question"] for x in train[:3000]] + [retyped, doc, quoted],
                   [x["answer"] for x in train[:3000]] + ["#### 18", "All solved.", "Yes."]], 3)
    got = {(f.eval_row, f.train_row, f.kind, f.level, f.score) for f in r.findings}
    # the retyped question and its answer "#### 18": the final answers agree, a pair
    assert got == {(0, 3000, "pair", "near", round(jaccard(q0, retyped, drop=t), 4)),
                   (1, 3001, "prompt", "contained", 1.0),
                   (2, 3002, "target_in_prompt", "near", round(jaccard(test[2]["answer"], quoted, drop=t), 4))}
    pair = next(f for f in r.findings if f.kind == "pair")
    assert pair.detail["target_agrees"] == "same final answer: 18" and pair.detail["target_level"] == "near"
    assert 0.7 <= jaccard(q0, retyped) < 0.75


@needs_mbpp
def test_mbpp_natural_duplicates_keep_their_level(tmp_path: Path):
    rows = [json.loads(line) for line in (SHARED / "mbpp" / "mbpp.jsonl").open(encoding="utf-8")]
    tr = write_jsonl(tmp_path / "train.jsonl", [r for r in rows if 601 <= r["task_id"] <= 974])
    ev = write_jsonl(tmp_path / "test.jsonl", [r for r in rows if 11 <= r["task_id"] <= 510])
    strict = leakcheck.scan(tr, ev, ScanConfig(levels=("exact", "normalized")))
    full = leakcheck.scan(tr, ev, ALL)
    assert strict.findings, "MBPP's train and test splits share items"
    key = lambda f: (f.eval_id, f.train_id, f.kind)  # noqa: E731
    strict_by = {key(f): f.level for f in strict.findings}
    full_by: dict[tuple, list[str]] = {}
    for f in full.findings:
        full_by.setdefault(key(f), []).append(f.level)
    # every exact/normalized finding is still there once, at the same level
    assert {k: full_by[k] for k in strict_by} == {k: [lv] for k, lv in strict_by.items()}


# -- review: edge cases of the near and contained levels -----------------------------------------

def _leaky_train(n: int = 300, seed: int = 7) -> tuple[list[dict], list[dict]]:
    """Eval items and a train side: near copies (some in a train template), quoted targets, pasted
    questions, near misses (for eval items 20-29) and filler."""
    rnd = random.Random(seed)
    vocab = [f"w{i}" for i in range(3000)]
    evals = [{"id": f"e{i}", "question": " ".join(rnd.choice(vocab) for _ in range(40)),
              "answer": " ".join(rnd.choice(vocab) for _ in range(30))} for i in range(30)]
    frame = "please read the following problem carefully and answer with a number only"
    trains = []
    for i in range(n):
        if i % 9 == 0:
            e = evals[(i // 9) % 20]
            ws = e["question"].split()
            for j in rnd.sample(range(40), (i // 9) % 12):
                ws[j] = rnd.choice(vocab)
            p = (frame + " " if i % 2 else "") + " ".join(ws)
            t = e["answer"] if i % 4 == 0 and i < 100 else "no"
        elif i % 11 == 0:
            p, t = "quote: " + evals[i % 20]["answer"], "ok"
        elif i % 17 == 3:  # 4 words of 40 replaced, spread out: Jaccard about 0.52, a near miss
            p, t = replace_words(evals[20 + i % 10]["question"], {k: rnd.choice(vocab) for k in (2, 12, 22, 32)}), "ok"
        elif i % 13 == 5:  # pasted into a long text, a few words cut: contained
            filler = lambda: " ".join(rnd.choice(vocab) for _ in range(60))  # noqa: E731
            p, t = filler() + " " + " ".join(evals[i % 20]["question"].split()[(i // 13) % 8 :]) + " " + filler(), "ok"
        else:
            p, t = frame + " " + " ".join(rnd.choice(vocab) for _ in range(30)), "fine"
        trains.append({"id": str(i), "prompt": p, "response": t})
    return trains, evals


@pytest.mark.parametrize("sample_size", [20_000, 50])
def test_results_do_not_depend_on_batch_size(sample_size):
    trains, evals = _leaky_train()

    def run(bs: int):
        near = NearConfig(near_miss_margin=0.1)  # the planted near misses sit at Jaccard ~0.52
        r = leakcheck.scan(trains, evals, FUZZY.with_(batch_size=bs, sample_size=sample_size, near=near))
        return r.findings, r.near_misses, r.chance, r.notes

    base = run(4096)
    assert len(base[0]) > 20 and base[1], "the data must give findings and near misses"
    assert {f.level for f in base[0]} == {"near", "contained"} and any(f.kind == "target_in_prompt" for f in base[0])
    for bs in (1, 7):
        assert run(bs) == base


def test_words_of_an_empty_batch_and_an_empty_train_side():
    """prime() sees an empty sample when the train side has no records: it crashed in np.concatenate."""
    w = grams.words([])
    assert w.offsets.tolist() == [0] and len(w.hashes) == 0
    assert grams.ngrams(w, 3)[0].tolist() == []
    with pytest.raises(leakcheck.errors.InputError, match="train input has no records"):
        leakcheck.scan([], [{"question": Q, "answer": A}], FUZZY)


def test_word_cache_is_keyed_on_the_texts_not_the_batch_object():
    """A batch list refilled in place (or a new list with a recycled id) was served the old words."""
    det = fuzzy.build("near", [Record("e0", 0, Q, A)], ScanConfig())
    batch = [Record("t0", 0, OTHER_Q, OTHER_A)]
    assert list(det.probe(batch)) == []
    batch[0] = Record("t1", 1, Q, "no")
    assert [(m.eval_field, m.train_field, m.score) for m in det.probe(batch)] == [("prompt", "prompt", 1.0)]


def test_word_cache_never_serves_another_batchs_words(monkeypatch):
    """Interleaved callers (threads of an executor): the words of one batch must not land under another."""
    cache = fuzzy._WordCache()
    a, b = [Record("a", 0, "alpha beta gamma", None)], [Record("b", 0, "one two three four", None)]
    real = grams.words

    def words(texts):
        if texts == ["alpha beta gamma"]:
            cache.get(b, "prompt")  # another caller fills the cache while batch a is tokenized
        return real(texts)

    monkeypatch.setattr(grams, "words", words)
    assert cache.get(a, "prompt").lengths.tolist() == [3]
    assert cache.get(b, "prompt").lengths.tolist() == [4]


def test_train_prompt_equal_to_an_eval_target_is_target_in_prompt_at_near():
    ev = [{"id": "q", "question": Q, "answer": A}]
    r = leakcheck.scan([{"prompt": A, "response": "Thanks."}], ev, ScanConfig(levels=("near",)))
    assert [(f.kind, f.level, f.score, f.eval_field, f.train_field) for f in r.findings] == [
        ("target_in_prompt", "near", 1.0, "answer", "prompt")]
    # with every level the strongest evidence stands alone
    assert triples(leakcheck.scan([{"prompt": A, "response": "Thanks."}], ev, ALL)) == {("q", "0", "target_in_prompt", "exact")}


def test_duplicated_eval_items_are_not_their_own_template():
    """25 copies of one eval question (one per rubric, say) made all its shingles 'templates': never checked."""
    evals = [Record(f"e{i}", i, Q, f"rubric {i}") for i in range(25)]
    evals += [Record(f"o{i}", 25 + i, f"{OTHER_Q} Variant {i}.", None) for i in range(5)]
    retyped = replace_words(Q, {5: "cupcakes"})
    for level in ("near", "contained"):
        det = fuzzy.build(level, evals, ScanConfig())
        assert det.templates == {} and det.template_only == {"prompt": 0, "target": 0}
        got = {m.eval_idx for m in det.probe([Record("t", 0, retyped, None)]) if not m.below}
        assert got == set(range(25)), level
    # a real template, in 25 distinct texts, is still one
    framed = [Record(f"e{i}", i, f"Answer briefly and show your work please. Question {i}: how many apples are in box {i}?", None)
              for i in range(25)]
    assert "answer briefly and" in {t[2].lower() for t in fuzzy.build("near", framed, ScanConfig()).templates.values()}


ZH = ("一个面包店每个松饼卖三元每块饼干卖两元星期一卖出四十五个松饼和两倍于松饼数量的饼干"
      "星期二比星期一少卖十个松饼饼干数量相同两天一共赚了多少钱")


def test_cjk_text_is_tokenized_per_character_and_matchable():
    """Chinese has no spaces: as one \\w+ run the whole question was one 'word', too short for any n-gram."""
    w = grams.words([ZH, "カタカナのテスト"])
    assert w.lengths.tolist() == [len(ZH), 8]
    retyped = ZH.replace("饼干卖两元", "饼干卖四元")  # one character changed
    chars = lambda t, k: {t[i : i + k] for i in range(len(t) - k + 1)}  # noqa: E731
    exp = len(chars(ZH, 3) & chars(retyped, 3)) / len(chars(ZH, 3) | chars(retyped, 3))
    doc = "第一题：小明有三个苹果，小红有五个梨，他们一共有几个水果？第二题：" + ZH + "。第三题：今天星期几？明天呢？后天又是星期几？"
    ev = [{"id": "zh", "question": ZH, "answer": "两天一共赚了六百元。"}]
    r = leakcheck.scan([{"prompt": retyped, "response": "?"}, {"prompt": doc, "response": "?"}], ev, FUZZY)
    assert {(f.train_id, f.kind, f.level, f.score) for f in r.findings} == {
        ("0", "prompt", "near", round(exp, 4)), ("1", "prompt", "contained", 1.0)}
    assert 0.8 < exp < 1


def test_texts_without_words_emoji_and_none_targets():
    ev = [{"id": "p", "question": "?!... —", "answer": "😀😀"}, {"id": "q", "question": Q, "answer": A}]
    tr = [{"prompt": "...", "response": "!!!"}, {"prompt": "😀 " + Q + " 🎉", "response": "…"}]
    r = leakcheck.scan(tr, ev, FUZZY)
    assert {(f.eval_id, f.train_id, f.kind, f.level) for f in r.findings} == {("q", "1", "prompt", "near")}
    # "?!... —" is six tokens of punctuation: comparable, and like nothing in train
    assert r.parameters["levels"]["near"]["eval_prompts_too_short"] == 0
    assert r.parameters["levels"]["near"]["eval_targets_too_short"] == 1  # two emoji: shorter than a shingle
    det = fuzzy.build("near", [Record("q", 0, Q, None)], ScanConfig())
    assert [m.score for m in det.probe([Record("t", 0, Q, None), Record("u", 1, "", None)])] == [1.0]


def test_fuzzy_results_do_not_depend_on_the_hash_seed(tmp_path: Path):
    import subprocess
    import sys

    trains, evals = _leaky_train(120)
    tr, ev = write_jsonl(tmp_path / "train.jsonl", trains), write_jsonl(tmp_path / "eval.jsonl", evals)
    code = ("import leakcheck, sys; r = leakcheck.scan(sys.argv[1], sys.argv[2], leakcheck.ScanConfig(levels=('near', 'contained')));"
            "print(repr((r.findings, r.near_misses, r.notes, r.parameters['levels'])))")
    outs = {subprocess.run([sys.executable, "-c", code, str(tr), str(ev)], env={**__import__("os").environ, "PYTHONHASHSEED": s},
                           capture_output=True, text=True, check=True).stdout for s in ("0", "4242")}
    assert len(outs) == 1 and "near" in next(iter(outs))


def test_bucket_lookup_finds_what_datasketchs_lsh_query_finds():
    """The batched band keys give the candidates MinHashLSH.query gives, text by text."""
    from datasketch import LeanMinHash, MinHashLSH

    rnd = random.Random(5)
    evals = [Record(f"e{i}", i, " ".join(f"w{rnd.randrange(300)}" for _ in range(30)), None) for i in range(40)]
    det = fuzzy.build("near", evals, ScanConfig())
    items = np.flatnonzero(det.size)
    sig = det.signatures(det.item_h, np.repeat(np.arange(2 * det.E), det.size), 2 * det.E)[items]
    lsh = MinHashLSH(threshold=0.6, num_perm=128, weights=(0.02, 0.98))
    for item, hv in zip(items.tolist(), sig):
        lsh.insert(item, LeanMinHash(seed=1, hashvalues=hv, scheme="affine32"))
    texts = [" ".join(e.prompt.split()[: rnd.randrange(5, 30)] + [f"x{rnd.randrange(9)}" for _ in range(rnd.randrange(8))]) for e in evals]
    w = grams.words(texts)
    h, text_of = grams.ngrams(w, 3)
    dh, dt, _ = grams.distinct_pairs(h, text_of)
    tsig = det.signatures(dh, dt, len(texts))
    got = {(int(c) // (2 * det.E), int(c) % (2 * det.E)) for c in det.candidates(tsig)}
    want = {(i, it) for i, hv in enumerate(tsig) for it in lsh.query(LeanMinHash(seed=1, hashvalues=hv, scheme="affine32"))}
    assert got == want and len(want) >= 20


def test_the_single_item_overlap_bound_changes_no_result(monkeypatch):
    """A train text stitched from pieces of many eval items shares most of its shingles with the
    eval side but few with any one item: skipped unhashed. Skipping nothing gives the same results."""
    rnd = random.Random(11)
    evals = [{"id": f"e{i}", "question": " ".join(f"w{rnd.randrange(2000)}" for _ in range(40))} for i in range(60)]
    trains = []
    for i in range(300):
        if i % 3 == 0:  # a near copy (or a near miss) of one item
            ws = evals[i % 60]["question"].split()
            for j in rnd.sample(range(40), i % 10):
                ws[j] = f"z{rnd.randrange(99)}"
        else:  # five 8-word pieces of five items
            ws = []
            for e in rnd.sample(evals, 5):
                k = rnd.randrange(32)
                ws += e["question"].split()[k : k + 8]
        trains.append({"id": str(i), "prompt": " ".join(ws), "response": "ok"})
    cfg = ScanConfig(levels=("near",), near=NearConfig(near_miss_margin=0.2), max_near_misses=10**6)
    base = leakcheck.scan(trains, evals, cfg)
    monkeypatch.setattr(fuzzy.NearDetector, "_best_overlap_bound", lambda self, pairs, alive, n: np.full(n, 10**9))
    loose = leakcheck.scan(trains, evals, cfg)
    assert (base.findings, base.near_misses) == (loose.findings, loose.near_misses)
    assert len(base.findings) > 20 and base.near_misses
    hashed = base.parameters["levels"]["near"]["train_texts_hashed"], loose.parameters["levels"]["near"]["train_texts_hashed"]
    assert hashed[0] <= 100 < 250 <= hashed[1], hashed
