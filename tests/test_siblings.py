"""Siblings (issue 8 §2): fuzzy matches whose reward targets disagree are listed apart, never gated.

The fixture holds four MBPP-style eval tasks and their train neighbours: three different tasks
that read alike (negative/positive numbers, odd/even word length, square/rhombus perimeter) and
one same task worded with and without "python" whose code differs only in an argument name.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import leakcheck
from leakcheck import ScanConfig
from leakcheck.cli import main
from leakcheck.detect import grams

from .test_fuzzy import jaccard

FIX = Path(__file__).resolve().parent / "fixtures" / "siblings"
TRAIN, EVAL = FIX / "train.jsonl", FIX / "eval.jsonl"
CODE_DIFFERS = "code differs (compared without comments, docstrings, layout and the names it binds)"


def _rows(p: Path) -> dict[str, dict]:
    return {str(r["task_id"]): r for r in map(json.loads, p.read_text().splitlines())}


def test_siblings_are_listed_apart_and_the_agreeing_pair_is_gated(tmp_path):
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["scan", str(TRAIN), str(EVAL), "--json", str(out), "--markdown", str(tmp_path / "r.md")])
    assert res.exit_code == 1, res.output
    assert "sibling tasks (targets disagree; not gated): 3 eval records" in res.output
    d = json.loads(out.read_text())
    ev, tr = _rows(EVAL), _rows(TRAIN)
    (f,) = d["findings"]
    assert (f["eval_id"], f["train_id"], f["kind"], f["level"]) == ("2", "102", "pair", "near")
    assert f["score"] == round(jaccard(ev["2"]["text"], tr["102"]["text"]), 4) == 0.6875
    assert f["detail"]["target_agrees"] == "same code (compared without comments, docstrings, layout and the names it binds)"
    got = [(s["eval_id"], s["train_id"], s["kind"], s["level"], s["detail"]["prompt_score"], s["detail"]["target_score"],
            s["detail"]["targets_disagree"]) for s in d["siblings"]]
    j = lambda e, t, k: round(jaccard(ev[e][k], tr[t][k]), 4)  # noqa: E731
    assert got == [
        ("1", "101", "prompt", "near", j("1", "101", "text"), j("1", "101", "code"), CODE_DIFFERS),
        ("3", "103", "pair", "near", j("3", "103", "text"), j("3", "103", "code"), CODE_DIFFERS),
        ("4", "104", "pair", "near", j("4", "104", "text"), j("4", "104", "code"), CODE_DIFFERS),
    ]
    assert min(p for *_, p, _t, _w in got) >= 0.6  # every prompt match would have been a gated leak
    assert d["summary"]["siblings"] == {"count": 3, "percent": 75.0}
    assert d["summary"]["contaminated"]["count"] == 1 and d["gate"]["gated_findings"] == 1
    md = (tmp_path / "r.md").read_text()
    assert "## Sibling tasks (not leaks)" in md and f"near (prompt 0.73, target 0.43: {CODE_DIFFERS})" in md
    # the JSON report reads back with its siblings
    again = CliRunner().invoke(main, ["report", str(out), "--markdown", str(tmp_path / "again.md")])
    assert again.exit_code == 0 and (tmp_path / "again.md").read_text().count("| `pair` | near (prompt 0.") == 2


def test_only_siblings_pass_the_gate(jsonl):
    rows = [r for r in map(json.loads, TRAIN.read_text().splitlines()) if r["task_id"] != 102]
    res = CliRunner().invoke(main, ["scan", str(jsonl("train.jsonl", rows)), str(EVAL)])
    assert res.exit_code == 0, res.output
    assert "sibling tasks (targets disagree; not gated): 3 eval records" in res.output and "OK: no leakage at a gated level" in res.output


def test_without_targets_the_same_matches_are_leaks():
    """The other field is what tells them apart: prompts alone cannot."""
    ev = [{"id": str(r["task_id"]), "question": r["text"]} for r in map(json.loads, EVAL.read_text().splitlines())]
    r = leakcheck.scan(TRAIN, ev, ScanConfig())
    assert {(f.eval_id, f.train_id, f.kind, f.level) for f in r.findings} == {
        ("1", "101", "prompt", "near"), ("2", "102", "prompt", "near"), ("3", "103", "prompt", "near"), ("4", "104", "prompt", "near")}
    assert r.siblings == ()


def test_operators_are_tokens():
    """With \\w+ words `x == 0` and `x < 0` were both `x 0`: odd/even code scored 1.0."""
    w = grams.words(["if len(word)%2!=0:", "if len(word)%2==0:", "return x == 0", "return x < 0"])
    parts = np.split(w.hashes, w.offsets[1:-1])
    assert [len(p) for p in parts] == [11, 11, 5, 4]
    assert not np.array_equal(parts[0], parts[1]) and not np.array_equal(parts[2][:3], parts[3][:3])
    ev, tr = _rows(EVAL), _rows(TRAIN)
    assert round(jaccard(ev["3"]["code"], tr["103"]["code"]), 4) == 0.8421  # was 1.0


def test_a_ten_megabyte_token_is_one_token_hashed_on_all_its_bytes():
    big = "a" * 10_000_000
    w = grams.words([f"start {big} end", f"start {big[:-1]}b end", f"start {big} end", "café " + big])
    assert w.lengths.tolist() == [3, 3, 3, 2]
    parts = np.split(w.hashes, w.offsets[1:-1])
    assert parts[0][1] == parts[2][1] == parts[3][1]  # the same token, ASCII or not
    assert parts[0][1] != parts[1][1]  # the last of ten million bytes counts
    assert w.text(1, 1) == big


def test_a_ten_megabyte_token_does_not_hide_a_leak():
    q = ("A bakery sells muffins for 3 dollars each and cookies for 2 dollars each. On Monday it sold 45 muffins "
         "and twice as many cookies as muffins. How much money did the bakery make on Monday?")
    blob = "data:" + "x9" * 5_000_000
    train = [{"prompt": f"Here is a blob {blob} and then: {q}", "response": "ok"}, {"prompt": blob, "response": blob},
             {"prompt": q.replace("Monday", "Sunday", 1), "response": "ok"}]
    r = leakcheck.scan(train, [{"id": "q", "question": q}], ScanConfig(levels=("near", "contained")))
    assert {(f.train_id, f.kind, f.level, f.score) for f in r.findings} == {
        ("0", "prompt", "near", round(jaccard(q, train[0]["prompt"]), 4)), ("2", "prompt", "near", round(jaccard(q, train[2]["prompt"]), 4))}
    only = leakcheck.scan(train, [{"id": "q", "question": q}], ScanConfig(levels=("contained",)))
    assert {(f.train_id, f.score) for f in only.findings} == {("0", 1.0)}


# -- real data (skipped without ../shared/data) ------------------------------------------------

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
needs = lambda *p: pytest.mark.skipif(not all((SHARED / x).is_file() for x in p), reason="shared/data is not present")  # noqa: E731


@needs("mbpp/mbpp.jsonl")
def test_mbpp_official_splits_gate_only_the_same_tasks(tmp_path):
    rows = [json.loads(line) for line in (SHARED / "mbpp" / "mbpp.jsonl").open(encoding="utf-8")]
    tr = tmp_path / "train.jsonl"
    tr.write_text("".join(json.dumps(r) + "\n" for r in rows if 601 <= r["task_id"] <= 974))
    ev = tmp_path / "test.jsonl"
    ev.write_text("".join(json.dumps(r) + "\n" for r in rows if 11 <= r["task_id"] <= 510))
    r = leakcheck.scan(tr, ev)
    # the natural duplicates, and the same tasks with the same code ("Write a python function..."
    # vs "Write a function..."; a renamed argument; an unreachable extra line)
    assert {(f.eval_id, f.train_id, f.kind, f.level) for f in r.gated()} == {
        ("216", "872", "prompt", "exact"), ("217", "602", "prompt", "exact"), ("67", "608", "target", "normalized"),
        ("248", "704", "pair", "exact"), ("170", "649", "pair", "near"), ("362", "658", "pair", "near"), ("427", "928", "pair", "near"),
        ("296", "841", "target", "near")}
    sib = {(f.eval_id, f.train_id): f for f in r.siblings}
    # square vs rhombus, negative vs positive, counting vs heap sort is gone (below 0.6 with the '.' token)
    for pair in (("17", "716"), ("133", "870"), ("188", "683"), ("328", "743"), ("79", "964"), ("271", "634"), ("282", "618")):
        assert sib[pair].detail["targets_disagree"] == CODE_DIFFERS, pair
    assert r.summary()["contaminated"]["count"] == 8 and r.summary()["siblings"]["count"] == 41


@needs("humaneval/HumanEval.jsonl.gz", "gsm8k/train.jsonl")
def test_humaneval_pasted_into_documents_is_found_with_prompt_and_target(tmp_path):
    import gzip

    he = [json.loads(line) for line in gzip.open(SHARED / "humaneval" / "HumanEval.jsonl.gz", "rt", encoding="utf-8")]
    filler = [json.loads(line)["question"] for line in (SHARED / "gsm8k" / "train.jsonl").open(encoding="utf-8")][:400]
    docs = [{"id": f"doc-{i}", "text": f"Notes {i}. {filler[2 * i]}\n\nToday:\n\n{h['prompt']}{h['canonical_solution']}\n\nNext: {filler[2 * i + 1]}"}
            for i, h in enumerate(he)]
    r = leakcheck.scan(docs, [{k: h[k] for k in ("task_id", "prompt", "canonical_solution")} for h in he])
    doc_of = {h["task_id"]: f"doc-{i}" for i, h in enumerate(he)}
    own = {f.eval_id: f for f in r.findings if f.train_id == doc_of[f.eval_id]}
    assert len(own) == 164  # every problem, in its own document
    short = {h["task_id"] for h in he if len(" ".join(h["canonical_solution"].lower().split())) < 20}
    assert len(short) == 5 and {k for k, f in own.items() if f.kind == "prompt"} == short  # a one-line solution never makes a pair
    pairs = {k: f for k, f in own.items() if f.kind == "pair"}
    assert len(pairs) == 159 and {f.detail["target_in"] for f in pairs.values()} == {"prompt"}
    assert {f.level for f in pairs.values()} <= {"near", "contained"}


@needs("gsm8k/train.jsonl", "gsm8k/test.jsonl")
def test_gsm8k_official_splits_pass_the_default_gate():
    res = CliRunner().invoke(main, ["scan", str(SHARED / "gsm8k" / "train.jsonl"), str(SHARED / "gsm8k" / "test.jsonl")])
    assert res.exit_code == 0, res.output
    assert "OK: no leakage at a gated level" in res.output


def test_siblings_are_the_same_through_a_saved_index_and_with_jobs(tmp_path):
    """An eval index holds no eval text: it keeps each target's agreement view as keys."""
    idx = tmp_path / "evals.lcx"
    runner = CliRunner()
    assert runner.invoke(main, ["index", str(EVAL), "-o", str(idx)]).exit_code == 0
    assert b"square_perimeter" not in idx.read_bytes() and b"sum_negativenum" not in idx.read_bytes()
    runs = {}
    for name, args in (("direct", [str(EVAL)]), ("index", ["--index", str(idx)]), ("jobs", [str(EVAL), "-j", "2"])):
        out = tmp_path / f"{name}.json"
        res = runner.invoke(main, ["scan", str(TRAIN), *args, "--json", str(out)])
        assert res.exit_code == 1, res.output
        d = json.loads(out.read_text())
        d = d["reports"][0] if "reports" in d else d
        runs[name] = ([(f["eval_id"], f["train_id"], f["kind"], f["detail"].get("target_agrees")) for f in d["findings"]],
                      [(s["eval_id"], s["train_id"], s["kind"], s["score"], s["detail"]["targets_disagree"]) for s in d["siblings"]])
    assert runs["direct"] == runs["index"] == runs["jobs"]
    assert [s[:2] for s in runs["index"][1]] == [("1", "101"), ("3", "103"), ("4", "104")]


def test_rubric_decoys_are_siblings_at_every_level():
    """healthbench_rubrics: the same criteria with other points is another reward, not a leak."""
    d = Path(leakcheck.__file__).parent / "data" / "healthbench_rubrics"
    exp = json.loads((d / "expected_leaks.json").read_text())
    r = leakcheck.scan(d / "train.jsonl", d / "eval.jsonl")
    assert {(f.eval_row, f.train_row) for f in r.findings} == {(x["eval_row"], x["train_row"]) for x in exp["leaks"]}
    assert {(s.eval_row, s.train_row, s.detail["targets_disagree"]) for s in r.siblings} == {
        (x["eval_row"], x["train_row"], "same rubric criteria with other points") for x in exp["decoys"]}


def test_an_index_without_agreement_keys_says_agreement_is_off(tmp_path):
    """An index written before it kept the agreement keys: the matches stand, and the report says why."""
    import dataclasses

    from leakcheck.index import EvalIndex
    from leakcheck.scan import scan_index

    idx = tmp_path / "evals.lcx"
    assert CliRunner().invoke(main, ["index", str(EVAL), "-o", str(idx)]).exit_code == 0
    loaded = EvalIndex.load(idx)
    (keys,) = scan_index(TRAIN, loaded).values()
    old = dataclasses.replace(loaded, meta=dataclasses.replace(loaded.meta, target_views=()))
    (bare,) = scan_index(TRAIN, old).values()
    assert len(keys.siblings) == 3 and bare.siblings == ()
    assert {(f.eval_id, f.train_id) for f in bare.findings} == {("1", "101"), ("2", "102"), ("3", "103"), ("4", "104")}
    assert any(n.startswith("target agreement is off: this eval index holds neither eval targets nor their agreement keys") for n in bare.notes)
    assert not any(n.startswith("target agreement is off") for n in keys.notes)
