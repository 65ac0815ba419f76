"""`leakcheck impact`: the metric on clean and leaked subsets, on real files through the CLI, with exact numbers.

The known split (tests/fixtures/impact/known) has 29 eval records: 12 clean (scores 0.4, 0.5,
0.6 four times: mean 0.5), 10 pair leaks (0.9, 0.7 five times: 0.8), 3 prompt-only (0.6,
0.7, 0.8: 0.7), 2 target-only (1.0, 1.0: zero variance) and 2 group-only (0.3, 0.5: 0.4).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from leakcheck.cli import main
from leakcheck.config import Policy
from leakcheck.impact import diff_ci, masks, mean_ci, permutation_p, subsets
from leakcheck.result import Finding, InputInfo, ScanResult
from leakcheck.report.impact import load_json

from .conftest import EXAMPLES, REPO, SHARED_DATA, needs_shared, write_jsonl

KNOWN = REPO / "tests" / "fixtures" / "impact" / "known"
SCORES = REPO / "tests" / "fixtures" / "impact"
CLEAN = [0.4, 0.5, 0.6] * 4
PAIR = [0.9, 0.7] * 5


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def known_report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("known") / "leaks.json"
    res = run("scan", KNOWN / "train.jsonl", KNOWN / "eval.jsonl", "--levels", "exact,normalized", "--json", out, "-q")
    assert res.exit_code == 1, res.output
    return out


def impact_json(tmp_path: Path, report: Path, *args: object) -> dict:
    out = tmp_path / "impact.json"
    res = run("impact", report, "--json", out, *args)
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text())


def rows(d: dict, table: str = "model") -> dict[str, dict]:
    return {r["subset"]: r for r in d["tables"][table]}


def test_known_split_exact_means_differences_and_notes(tmp_path, known_report):
    d = impact_json(tmp_path, known_report, "--scores", KNOWN / "scores.jsonl")
    got = [(r["subset"], r["n"], r["mean"], r["diff_from_clean"], r["note"]) for r in d["tables"]["model"]]
    assert got == [
        ("all", 29, round(18.9 / 29, 6), round(18.9 / 29 - 0.5, 6), ""),
        ("clean", 12, 0.5, None, ""),
        ("leaked", 17, round(12.9 / 17, 6), round(12.9 / 17 - 0.5, 6), ""),
        ("pair", 10, 0.8, 0.3, ""),
        ("prompt-only", 3, 0.7, 0.2, "n=3: too few for an interval (--min-n 10)"),
        ("target-only", 2, 1.0, 0.5, "n=2: too few for an interval (--min-n 10); all 2 scores are 1 (zero variance)"),
        ("group", 2, 0.4, -0.1, "n=2: too few for an interval (--min-n 10)"),
    ]
    r = rows(d)
    for small in ("prompt-only", "target-only", "group"):  # no interval, no p-value: never a made-up number
        assert [r[small][k] for k in ("ci_low", "ci_high", "diff_ci_low", "diff_ci_high", "p_value")] == [None] * 5
    assert d["metric"] == "acc" and d["policy"] == ["all"] and d["eval"]["records"] == 29 and d["missing"] == {}


def _loop_bootstrap(clean: list[float], sub: list[float], seed: int, resamples: int) -> dict[str, tuple[float, float]]:
    """The documented definition, one resample at a time: clean's draws, then the subset's, from one default_rng(seed)."""
    rng = np.random.default_rng(seed)
    c, s = np.array(clean), np.array(sub)
    cm = np.array([c[rng.integers(0, len(c), size=len(c), dtype=np.int64)].mean() for _ in range(resamples)])
    sm = np.array([s[rng.integers(0, len(s), size=len(s), dtype=np.int64)].mean() for _ in range(resamples)])
    return {k: tuple(round(float(v), 6) for v in np.percentile(x, [2.5, 97.5])) for k, x in (("clean", cm), ("sub", sm), ("diff", sm - cm))}


def test_intervals_are_the_documented_bootstrap(tmp_path, known_report):
    d = impact_json(tmp_path, known_report, "--scores", KNOWN / "scores.jsonl", "--seed", 7, "--resamples", 2000)
    r = rows(d)
    want = _loop_bootstrap(CLEAN, PAIR, 7, 2000)
    assert (r["pair"]["diff_ci_low"], r["pair"]["diff_ci_high"]) == want["diff"]
    assert (r["pair"]["ci_low"], r["pair"]["ci_high"]) == want["sub"] and (r["clean"]["ci_low"], r["clean"]["ci_high"]) == want["clean"]
    # all - clean is the leaked difference times the leaked share (a bootstrap stratified by clean/leaked)
    assert r["all"]["diff_ci_low"] == pytest.approx(r["leaked"]["diff_ci_low"] * 17 / 29, abs=2e-6)
    assert r["all"]["p_value"] == r["leaked"]["p_value"]


def test_intervals_and_p_values_agree_with_scipy():
    rng = np.random.default_rng(3)
    clean, sub = rng.normal(0.45, 0.1, 65), rng.normal(0.52, 0.12, 35)
    ref = stats.bootstrap((clean, sub), lambda a, b, axis: b.mean(axis) - a.mean(axis), n_resamples=10_000, method="percentile",
                          vectorized=True, rng=np.random.default_rng(11)).confidence_interval
    assert diff_ci(clean, sub, seed=0) == pytest.approx((ref.low, ref.high), abs=0.004)
    ref1 = stats.bootstrap((sub,), np.mean, n_resamples=10_000, method="percentile", rng=np.random.default_rng(11)).confidence_interval
    assert mean_ci(sub, seed=0) == pytest.approx((ref1.low, ref1.high), abs=0.004)
    for a, b in ((clean, sub), (clean[:30], clean[30:50] + 0.03)):  # a clear and an unclear difference
        p = stats.permutation_test((b, a), lambda x, y, axis: x.mean(axis) - y.mean(axis), n_resamples=10_000, vectorized=True,
                                   rng=np.random.default_rng(11)).pvalue
        assert permutation_p(a, b, seed=0) == pytest.approx(p, abs=0.02)
    # exact test on a tiny split: scipy enumerates all 20 relabellings; with many permutations ours converges to it
    a, b = np.array([0.1, 0.2, 0.4]), np.array([0.5, 0.6, 0.9])
    exact = stats.permutation_test((b, a), lambda x, y, axis: x.mean(axis) - y.mean(axis), vectorized=True).pvalue
    assert exact == pytest.approx(0.1) and permutation_p(a, b, seed=0, permutations=50_000) == pytest.approx(exact, abs=0.01)


def test_same_seed_same_bytes_other_seed_other_interval(tmp_path, known_report):
    a = impact_json(tmp_path, known_report, "--scores", KNOWN / "scores.jsonl")
    b = impact_json(tmp_path, known_report, "--scores", KNOWN / "scores.jsonl")
    c = impact_json(tmp_path, known_report, "--scores", KNOWN / "scores.jsonl", "--seed", 1)
    assert a == b and rows(a)["pair"]["diff_ci_low"] != rows(c)["pair"]["diff_ci_low"]
    assert rows(a)["pair"]["mean"] == rows(c)["pair"]["mean"]


def test_min_n_lowered_gives_small_subsets_intervals_and_says_zero_variance(tmp_path, known_report):
    r = rows(impact_json(tmp_path, known_report, "--scores", KNOWN / "scores.jsonl", "--min-n", 2))
    assert r["target-only"]["ci_low"] == r["target-only"]["ci_high"] == 1.0
    assert r["target-only"]["note"] == "all 2 scores are 1 (zero variance)"
    assert r["prompt-only"]["p_value"] is not None and r["prompt-only"]["note"] == ""


def test_terminal_table(known_report):
    res = run("impact", known_report, "--scores", KNOWN / "scores.jsonl")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[3].split() == ["subset", "n", "acc", "95%", "CI", "−", "clean", "95%", "CI", "p", "note"]
    assert lines[5].split()[:3] == ["clean", "12", "0.5000"] and lines[5].split()[-3:] == ["–", "–", "–"]
    assert lines[7].split()[:3] == ["pair", "10", "0.8000"] and "+0.3000" in lines[7]
    assert "prompt-only   3  0.7000" in res.output and "n=3: too few for an interval (--min-n 10)" in res.output
    assert "acc: 0.6517 on all 29 eval records; 0.5000 [" in res.output
    assert "nan" not in res.output.lower()


@pytest.mark.parametrize("edit, message", [
    (lambda s: s[:-1], "no score for eval id 'group02' (eval index 28); score every eval record, or pass --allow-missing to leave them out"),
    (lambda s: s[:3] + [{"id": "typo", "acc": 0.5}] + s[3:], "line 4: id 'typo' is not an eval record of the report"),
    (lambda s: s + [s[0]], "line 30: id 'clean01' again (first on line 1); keep one score per eval record"),
    (lambda s: s[:2] + [{**s[2], "acc": "high"}] + s[3:], "line 3: acc is 'high', not a number; score every eval record with a number"),
    (lambda s: s[:1] + [{**s[1], "acc": None}] + s[2:], "line 2: acc is missing or null; score every eval record with a number"),
    (lambda s: [{**r, "rouge": 0.1} for r in s], "line 1: several numeric fields (acc, rouge); pick the metric with --metric NAME"),
    (lambda s: [{"name": r["id"], "acc": r["acc"]} for r in s], "line 1: no id field (tried id, eval_id,"),
    (lambda s: [{"id": r["id"], "acc": "x"} for r in s], "line 1: no numeric score field"),
])
def test_bad_scores_are_one_line_errors_naming_file_and_line(tmp_path, known_report, edit, message):
    base = [json.loads(x) for x in (KNOWN / "scores.jsonl").read_text().splitlines()]
    p = write_jsonl(tmp_path / "scores.jsonl", edit(base))
    res = run("impact", known_report, "--scores", p)
    assert res.exit_code == 2
    assert res.output.startswith(f"leakcheck: error: {p}: ") and message in res.output
    assert len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output


def test_nan_score_is_refused(tmp_path, known_report):
    p = tmp_path / "scores.csv"
    lines = ["id,acc"] + [f"{r['id']},{r['acc']}" for r in map(json.loads, (KNOWN / "scores.jsonl").read_text().splitlines())]
    lines[5] = lines[5].split(",")[0] + ",nan"
    p.write_text("\n".join(lines) + "\n")
    res = run("impact", known_report, "--scores", p)
    assert res.exit_code == 2 and f"{p}: line 6: acc is 'nan'; a score must be a finite number" in res.output


def test_csv_scores_give_the_same_numbers(tmp_path, known_report):
    p = tmp_path / "scores.csv"
    p.write_text("id,acc\n" + "".join(f"{r['id']},{r['acc']}\n" for r in map(json.loads, (KNOWN / "scores.jsonl").read_text().splitlines())))
    assert impact_json(tmp_path, known_report, "--scores", p)["tables"] == impact_json(tmp_path, known_report, "--scores", KNOWN / "scores.jsonl")["tables"]


def test_allow_missing_leaves_records_out_and_counts_them(tmp_path, known_report):
    base = [json.loads(x) for x in (KNOWN / "scores.jsonl").read_text().splitlines()]
    kept = [r for r in base if r["id"] not in ("clean01", "pair01")] + [{"id": "stray", "acc": 0.1}]
    p = write_jsonl(tmp_path / "scores.jsonl", kept)
    d = impact_json(tmp_path, known_report, "--scores", p, "--allow-missing")
    assert d["missing"] == {"all": 2, "clean": 1, "leaked": 1, "pair": 1} and d["extra_scores"] == 1
    r = rows(d)
    assert (r["clean"]["n"], r["clean"]["mean"], r["pair"]["n"], r["pair"]["mean"]) == (11, round(5.6 / 11, 6), 9, round(7.1 / 9, 6))
    res = run("impact", known_report, "--scores", p, "--allow-missing")
    assert "2 eval records had no score and are left out (clean 1, leaked 1, pair 1); 1 scores named no eval record and were ignored." in res.output


def test_scores_keyed_by_eval_index(tmp_path, known_report):
    base = [json.loads(x) for x in (KNOWN / "scores.jsonl").read_text().splitlines()]
    p = write_jsonl(tmp_path / "scores.jsonl", [{"eval_index": i, "acc": r["acc"]} for i, r in reversed(list(enumerate(base)))])
    assert impact_json(tmp_path, known_report, "--scores", p)["tables"] == impact_json(tmp_path, known_report, "--scores", KNOWN / "scores.jsonl")["tables"]


def test_refuses_to_write_over_an_input_and_a_changed_eval(tmp_path, known_report):
    scores = write_jsonl(tmp_path / "s.jsonl", [json.loads(x) for x in (KNOWN / "scores.jsonl").read_text().splitlines()])
    res = run("impact", known_report, "--scores", scores, "--json", scores)
    assert res.exit_code == 2 and "--json" in res.output and "leakcheck never writes over an input" in res.output
    assert scores.read_text() == (KNOWN / "scores.jsonl").read_text()
    res = run("impact", known_report, "--scores", scores, "--eval", KNOWN / "train.jsonl")
    assert res.exit_code == 2 and "23 eval records, but the report counted 29" in res.output


def test_collabllm_scan_impact_card_end_to_end(tmp_path):
    """The README's example: BLEU 0.4491 -> 0.4827 overall; how much of the gain is left on the clean 65."""
    leaks, imp, md, card = tmp_path / "leaks.json", tmp_path / "impact.json", tmp_path / "impact.md", tmp_path / "card"
    d = EXAMPLES / "collabllm_medium"
    assert run("scan", d / "train.parquet", d / "eval.parquet", "--json", leaks, "-q").exit_code == 1
    res = run("impact", leaks, "--scores", SCORES / "collabllm_tuned.jsonl", "--baseline-scores", SCORES / "collabllm_base.jsonl",
              "--metric", "bleu", "--json", imp, "--markdown", md)
    assert res.exit_code == 0, res.output
    head = ("gain in bleu (model − baseline): +0.0336 on all 100 eval records; +0.0040 [-0.0003, +0.0081] on the 65 clean ones "
            "(0.4491 → 0.4827 overall, 0.4451 → 0.4491 on clean).")
    assert head in res.output
    out = json.loads(imp.read_text())
    g, b, m = rows(out, "gain"), rows(out, "baseline"), rows(out, "model")
    assert [(s, g[s]["n"]) for s in g] == [("all", 100), ("clean", 65), ("leaked", 35), ("pair", 35)]
    assert (b["all"]["mean"], m["all"]["mean"], g["all"]["mean"], g["clean"]["mean"]) == (0.4491, 0.4827, 0.0336, 0.004)
    assert g["leaked"]["mean"] == round(3.1 / 35, 6) and g["pair"]["p_value"] < 0.001
    assert "| `clean` | 65 | 0.4451 | 0.4491 | +0.0040 | [-0.0003, +0.0081] | – | – | – |  |" in md.read_text()
    assert load_json(str(imp)).headline.row("clean").n == 65  # type: ignore[union-attr]
    res = run("card", card, "--report", leaks, "--impact", imp)
    assert res.exit_code == 0, res.output
    text = (card / "README.md").read_text()
    sect = text[text.index("### Impact of decontamination"):text.index("<!-- leakcheck:end -->")]
    assert "+0.0040 \\[-0.0003, +0.0081\\] on the 65 clean ones" in sect and "| `pair` | 35 | 0.4566 | 0.5452 | +0.0886 |" in sect
    assert "  impact:\n    metric: bleu\n    quantity: gain\n" in text


def test_card_refuses_the_impact_of_another_report(tmp_path, known_report):
    imp = tmp_path / "impact.json"
    assert run("impact", known_report, "--scores", KNOWN / "scores.jsonl", "--json", imp, "-q").exit_code == 0
    d = EXAMPLES / "collabllm_medium"
    other = tmp_path / "other.json"
    run("scan", d / "train.parquet", d / "eval.parquet", "--levels", "exact", "--json", other, "-q")
    res = run("card", tmp_path / "card", "--report", other, "--impact", imp)
    assert res.exit_code == 2 and "the impact file was computed on another report" in res.output
    assert not (tmp_path / "card" / "README.md").exists()


def _finding(row: int, kind: str, level: str = "exact", train_row: int = 0, **detail: object) -> Finding:
    return Finding(f"e{row}", f"t{train_row}", kind, level, 1.0, row, train_row, "question", "question", "", "", detail=dict(detail) or None)


def test_subset_definitions_follow_the_gate_evidence():
    info = InputInfo("e.jsonl", ("e.jsonl",), "gsm8k", {"prompt": "question"}, 8, 8)
    pair_by_prompt = _finding(3, "pair", prompt_level="exact", prompt_score=1.0, target_level="near", target_score=0.7, target_in="target")
    r = ScanResult(info, info, ("exact", "normalized", "near"), {"levels": {}, "short_target_chars": 20, "max_target_hits": 10}, (
        _finding(0, "pair", prompt_level="exact", prompt_score=1.0, target_level="exact", target_score=1.0, target_in="target"),
        _finding(0, "group"),
        _finding(1, "prompt_in_target"),
        _finding(2, "target_in_prompt"),
        pair_by_prompt,
        _finding(4, "prompt", train_row=1), _finding(4, "target", train_row=2),  # both fields, in different train records
        _finding(5, "group"),
    ), near_misses=(_finding(6, "prompt", "near"),), siblings=(_finding(7, "pair", "near"), _finding(5, "prompt", "near")))
    assert subsets(r) == {
        "leaked": {0, 1, 2, 3, 4, 5}, "pair": {0, 3}, "prompt-only": {1}, "target-only": {2}, "group": {0, 5}, "semantic": set(),
        "sibling": {6, 7},  # a sibling of a leaked record (5) is not clean
    }
    # --fail-on prompt,target:exact gates neither pair nor the *_in_* kinds: the exact pair at eval 0 is a prompt and a
    # target leak (only in leaked), the pair at eval 3 (target near) a prompt-only leak
    s = subsets(r, Policy.parse("prompt,target:exact"))
    assert (s["leaked"], s["pair"], s["prompt-only"], s["target-only"], s["group"]) == ({0, 3, 4}, set(), {3}, set(), set())
    assert subsets(r, Policy.parse("none"))["leaked"] == set()
    m = masks(list(range(8)), r)
    assert m["clean"].tolist() == [False] * 6 + [True] * 2 and m["all"].all()


def test_moved_eval_data_is_named_and_found_with_eval(tmp_path):
    ev = tmp_path / "eval.jsonl"
    ev.write_bytes((KNOWN / "eval.jsonl").read_bytes())
    leaks = tmp_path / "leaks.json"
    assert run("scan", KNOWN / "train.jsonl", ev, "--levels", "exact", "--json", leaks, "-q").exit_code == 1
    ev.unlink()
    res = run("impact", leaks, "--scores", KNOWN / "scores.jsonl")
    assert res.exit_code == 2
    assert res.output == f"leakcheck: error: the report's eval input {ev} is not there; pass --eval PATH, the eval data that was scanned\n"
    res = run("impact", leaks, "--scores", KNOWN / "scores.jsonl", "--eval", KNOWN / "eval.jsonl")
    assert res.exit_code == 0 and "pair         10  0.8000" in res.output


@pytest.mark.parametrize("fields, clean", [
    (("--target-field", "none"), (14, round(8 / 14, 6), 15)),  # no target compared: the 2 target-only leaks are clean
    (("--prompt-field", "answer", "--target-field", "question"), (12, 0.5, 17)),
])
def test_eval_read_again_with_the_fields_of_the_scan(tmp_path, fields, clean):
    """The eval ids are read with the fields the report names, so the fingerprints of the findings match."""
    leaks = tmp_path / "leaks.json"
    assert run("scan", KNOWN / "train.jsonl", KNOWN / "eval.jsonl", "--levels", "exact", *fields, "--json", leaks, "-q").exit_code == 1
    r = rows(impact_json(tmp_path, leaks, "--scores", KNOWN / "scores.jsonl"))
    assert (r["clean"]["n"], r["clean"]["mean"], r["leaked"]["n"]) == clean


def test_partial_scan_says_clean_may_hold_leaks(tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_text((KNOWN / "train.jsonl").read_text() + "{not json\n")
    leaks, imp, md = tmp_path / "leaks.json", tmp_path / "impact.json", tmp_path / "impact.md"
    assert run("scan", train, KNOWN / "eval.jsonl", "--levels", "exact", "--on-error", "skip", "--json", leaks, "-q").exit_code == 1
    res = run("impact", leaks, "--scores", KNOWN / "scores.jsonl", "--json", imp, "--markdown", md)
    note = "the scan skipped 1 row of train: a record counted clean may have a copy there"
    assert res.exit_code == 0 and f"note: {note}" in res.output
    assert json.loads(imp.read_text())["notes"] == [note] and f"Note: {note}." in md.read_text()


def test_empty_scores_file(tmp_path, known_report):
    p = tmp_path / "scores.jsonl"
    p.write_text("")
    res = run("impact", known_report, "--scores", p)
    assert res.exit_code == 2 and res.output == f"leakcheck: error: {p}: no scores; write one {{id, metric}} record per eval record\n"


def test_impact_json_reads_back_as_written(tmp_path, known_report):
    from leakcheck.report.impact import to_dict

    imp = tmp_path / "impact.json"
    assert run("impact", known_report, "--scores", KNOWN / "scores.jsonl", "--baseline-scores", KNOWN / "scores.jsonl", "--json", imp, "-q").exit_code == 0
    d = json.loads(imp.read_text())
    assert {k: v for k, v in to_dict(load_json(str(imp))).items() if k != "leakcheck_version"} == {k: v for k, v in d.items() if k != "leakcheck_version"}
    assert [r["mean"] for r in d["tables"]["gain"]] == [0.0] * 7 and rows(d, "gain")["pair"]["note"] == "all 10 scores are 0 (zero variance)"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**d, "tables": {"model": [{"subset": "all"}]}}))
    res = run("card", tmp_path / "card", "--report", known_report, "--impact", bad)
    assert res.exit_code == 2 and f"{bad}: malformed leakcheck impact file (ValueError: tables.model must be a list of rows with" in res.output


@needs_shared
def test_gsm8k_with_planted_test_items_keyed_by_eval_index(tmp_path):
    """Real GSM8K (no ids: the eval index is the id): 100 test items planted in train, per-item scores by eval_index."""
    test = SHARED_DATA / "gsm8k" / "test.jsonl"
    lines = test.read_text().splitlines()
    train = tmp_path / "train.jsonl"
    train.write_text((SHARED_DATA / "gsm8k" / "train.jsonl").read_text() + "\n".join(lines[::13][:100]) + "\n")
    leaks = tmp_path / "leaks.json"
    assert run("scan", train, test, "--levels", "exact", "--json", leaks, "-q").exit_code == 1
    acc = [float(i % 3 == 0) for i in range(len(lines))]  # a 0/1 accuracy
    scores = write_jsonl(tmp_path / "scores.jsonl", [{"eval_index": i, "correct": a} for i, a in enumerate(acc)])
    r = rows(impact_json(tmp_path, leaks, "--scores", scores))
    planted = set(range(0, 1300, 13))
    leaked_acc = [acc[i] for i in sorted(planted)]
    clean_acc = [a for i, a in enumerate(acc) if i not in planted]
    assert (r["all"]["n"], r["leaked"]["n"], r["pair"]["n"], r["clean"]["n"]) == (1319, 100, 100, 1219)
    assert r["leaked"]["mean"] == round(sum(leaked_acc) / 100, 6) and r["clean"]["mean"] == round(sum(clean_acc) / 1219, 6)
    assert r["leaked"]["diff_ci_low"] < r["leaked"]["diff_from_clean"] < r["leaked"]["diff_ci_high"]


def test_readme_example_is_what_the_command_prints(tmp_path):
    readme = (REPO / "README.md").read_text()
    sect = readme[readme.index("## Impact of decontamination"):]
    shown = sect[sect.index("```text\n") + 8:sect.index("\n```", sect.index("```text\n"))]
    leaks = tmp_path / "leaks.json"
    d = EXAMPLES / "collabllm_medium"
    assert run("scan", d / "train.parquet", d / "eval.parquet", "--json", leaks, "-q").exit_code == 1
    res = run("impact", leaks, "--scores", SCORES / "collabllm_tuned.jsonl", "--baseline-scores", SCORES / "collabllm_base.jsonl")
    assert res.exit_code == 0 and "\n".join(res.output.splitlines()[3:10]) == shown


def test_parquet_scores_and_a_metric_named_with_escapes(tmp_path, known_report):
    import pyarrow as pa
    import pyarrow.parquet as pq

    base = [json.loads(x) for x in (KNOWN / "scores.jsonl").read_text().splitlines()]
    p = tmp_path / "scores.parquet"
    pq.write_table(pa.table({"id": [r["id"] for r in base], "acc\x1b[2J": [r["acc"] for r in base]}), p)
    d = impact_json(tmp_path, known_report, "--scores", p)
    assert d["tables"] == impact_json(tmp_path, known_report, "--scores", KNOWN / "scores.jsonl")["tables"]
    res = run("impact", known_report, "--scores", p)
    assert res.exit_code == 0 and "\x1b" not in res.output and "acc\\x1b[2J" in res.output


def test_scores_of_eval_rows_the_scan_skipped(tmp_path):
    ev = tmp_path / "eval.jsonl"
    lines = (KNOWN / "eval.jsonl").read_text().splitlines()
    ev.write_text("\n".join(lines[:2] + ['{"id": "clean03", "question": cut short'] + lines[3:]) + "\n")  # line 3 is not JSON
    leaks = tmp_path / "leaks.json"
    assert run("scan", KNOWN / "train.jsonl", ev, "--levels", "exact", "--on-error", "skip", "--json", leaks, "-q").exit_code == 1
    res = run("impact", leaks, "--scores", KNOWN / "scores.jsonl")
    assert res.exit_code == 2 and (f"{KNOWN / 'scores.jsonl'}: line 3: id 'clean03' is not an eval record of the report ({ev}, 28 records; "
                                   "the scan skipped 1 row of eval, which are not records); remove the line") in res.output
    r = rows(impact_json(tmp_path, leaks, "--scores", KNOWN / "scores.jsonl", "--allow-missing"))
    assert (r["clean"]["n"], r["clean"]["mean"], r["leaked"]["n"]) == (11, round(5.4 / 11, 6), 17)


def test_json_on_standard_output_and_the_table_on_standard_error(known_report):
    res = run("impact", known_report, "--scores", KNOWN / "scores.jsonl", "--json", "-")
    assert res.exit_code == 0
    assert rows(json.loads(res.stdout))["pair"]["mean"] == 0.8  # standard output holds the JSON alone
    assert res.stderr.startswith("impact of decontamination on acc: scores ") and "acc: 0.6517 on all 29 eval records" in res.stderr


def test_no_clean_record_scored_means_no_difference_and_says_why(tmp_path, known_report):
    base = [json.loads(x) for x in (KNOWN / "scores.jsonl").read_text().splitlines()]
    p = write_jsonl(tmp_path / "scores.jsonl", [r for r in base if not r["id"].startswith("clean")])
    res = run("impact", known_report, "--scores", p, "--allow-missing", "--json", tmp_path / "i.json")
    assert res.exit_code == 0
    assert "acc: 0.7588 on the 17 scored eval records (12 without a score); no clean records." in res.output
    r = rows(json.loads((tmp_path / "i.json").read_text()))
    assert (r["clean"]["n"], r["clean"]["mean"], r["clean"]["note"]) == (0, None, "no records")
    assert r["pair"]["diff_from_clean"] is None and r["pair"]["note"] == "no clean records to compare with"


def test_semantic_findings_make_the_semantic_subset():
    """A paraphrase found only at the ``semantic`` level is leaked and in ``semantic``; a ``semantic`` gate excludes nothing stronger."""
    info = InputInfo("e.jsonl", ("e.jsonl",), "gsm8k", {"prompt": "question"}, 4, 4)
    r = ScanResult(info, info, ("exact", "semantic"), {"levels": {}, "short_target_chars": 20, "max_target_hits": 10}, (
        _finding(0, "pair", "semantic", prompt_level="semantic", prompt_score=0.6, target_level="exact", target_score=1.0, target_in="target"),
        _finding(1, "prompt", "semantic"),
        _finding(2, "prompt", "exact"),
    ))
    s = subsets(r)
    assert (s["leaked"], s["semantic"], s["pair"], s["prompt-only"]) == ({0, 1, 2}, {0, 1}, {0}, {1, 2})
    assert subsets(r, Policy.parse("exact"))["semantic"] == set()  # the pair's target is exact: leaked, not semantic
    assert subsets(r, Policy.parse("exact"))["leaked"] == {0, 2}
