"""The bundled examples: the scan finds exactly the leaks the generator planted."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import leakcheck
from leakcheck import ScanConfig
from leakcheck.cli import main

from .conftest import EXAMPLES

EX = ScanConfig(levels=("exact", "normalized"))


def _load(name: str) -> dict:
    return json.loads((EXAMPLES / name).read_text())


def test_collabllm_35_of_100_pairs_and_nothing_else_at_exact():
    exp = _load("collabllm_medium/expected_leaks.json")
    d = EXAMPLES / "collabllm_medium"
    r = leakcheck.scan(d / "train.parquet", d / "eval.parquet", EX)
    assert (r.eval.format, r.train.format) == ("verl", "verl")
    assert r.eval.fields["target"] == "reward_model.ground_truth" and r.eval.fields["id"] == "extra_info.index"
    assert (r.eval.records, r.train.records) == (100, 400)
    # train ids are train extra_info.index values, which equal the train row numbers here
    expected = {(str(e), str(t), "pair", "exact") for e, t in exp["train_rows"].items()}
    assert {(f.eval_id, f.train_id, f.kind, f.level) for f in r.findings} == expected
    assert len(expected) == 35 and {f.train_row for f in r.findings} == set(exp["train_rows"].values())
    s = r.summary()
    assert s["contaminated"] == {"count": 35, "percent": 35.0}
    assert s["by_kind"]["pair"]["levels"] == {"exact": {"count": 35, "percent": 35.0}}
    assert r.chance == () and r.eval_duplicates == ()


def test_collabllm_cli_prints_35_of_100_and_fails_the_gate():
    d = EXAMPLES / "collabllm_medium"
    res = CliRunner().invoke(main, ["scan", str(d / "train.parquet"), str(d / "eval.parquet"), "--levels", "exact,normalized"])
    assert res.exit_code == 1
    assert "pair                         35   35.00  exact 35" in res.output
    assert "LEAKAGE FOUND" in res.output


@pytest.mark.parametrize("name, train, ev", [
    ("healthbench_rubrics", "train.jsonl", "eval.jsonl"),
    ("healthbench_rubrics_verl", "train.parquet", "eval.parquet"),
])
def test_rubric_banks(name, train, ev):
    exp = _load(f"{name}/expected_leaks.json")
    d = EXAMPLES / name
    r = leakcheck.scan(d / train, d / ev, EX)
    kind_of = {"rubric_reordered_prompt_reworded": "target", "full_duplicate": "pair", "prompt_identical_rubric_different": "prompt"}
    expected = {(x["eval_row"], x["train_row"], kind_of[x["kind"]], "exact") for x in exp["leaks"]}
    assert {x["kind"] for x in exp["leaks"]} == set(kind_of)
    assert {(f.eval_row, f.train_row, f.kind, f.level) for f in r.findings} == expected
    assert len(expected) == 11 and r.chance == ()
    # decoys: the eval criteria behind a reworded prompt with other points are another label
    decoys = {(x["eval_row"], x["train_row"]) for x in exp["decoys"]}
    assert len(decoys) == 2 and {x["kind"] for x in exp["decoys"]} == {"rubric_same_criteria_other_points"}
    assert not {(f.eval_row, f.train_row) for f in r.findings} & decoys


def test_chat_small_planted_leaks():
    exp = _load("chat_small/expected.json")
    d = EXAMPLES / "chat_small"
    r = leakcheck.scan(d / "train_chat.jsonl", d / "eval_questions.jsonl", EX)
    kind = {"prompt+target": "pair", "prompt": "prompt", "target": "target"}
    expected = {(x["eval_id"], str(x["train_row"]), kind[x["field"]], x["match"]) for x in exp["leaks"]}
    assert {(f.eval_id, f.train_id, f.kind, f.level) for f in r.findings} == expected
    assert len(expected) == 5
