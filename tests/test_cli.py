"""The CLI through click's CliRunner: exit codes, error lines, reports on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from leakcheck.cli import main

from .conftest import write_jsonl

Q = "Lena bakes 4 trays of 12 cookies and gives away 10. How many cookies are left?"
A = "She bakes 4 * 12 = 48 cookies and gives away 10, so 48 - 10 = 38 are left.\n#### 38"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    ev = write_jsonl(tmp_path / "eval.jsonl", [{"id": "e1", "question": Q, "answer": A}, {"id": "e2", "question": "What is 2 + 2 in base 3?", "answer": "It is 11 in base 3, since 4 = 3 + 1, which is written 11."}])
    leaky = write_jsonl(tmp_path / "train.jsonl", [{"question": "Unrelated?", "answer": "Something unrelated and long enough."}, {"question": Q, "answer": A}])
    clean = write_jsonl(tmp_path / "clean.jsonl", [{"question": "Unrelated?", "answer": "Something unrelated and long enough."}])
    return {"eval": ev, "leaky": leaky, "clean": clean, "dir": tmp_path}


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_leak_exits_1_and_writes_reports(files):
    j = files["dir"] / "r.json"
    md = files["dir"] / "r.md"
    res = run("scan", str(files["leaky"]), str(files["eval"]), "--levels", "exact,normalized", "--json", str(j), "--markdown", str(md))
    assert res.exit_code == 1, res.output
    assert "LEAKAGE FOUND" in res.output and "pair" in res.output
    rep = json.loads(j.read_text())
    assert [(f["eval_id"], f["train_id"], f["kind"], f["level"]) for f in rep["findings"]] == [("e1", "1", "pair", "exact")]
    text = md.read_text()
    assert "| e1 | 1 | `pair` | exact (prompt exact 1.00, target exact 1.00) | 1.00 |" in text and "Lena bakes 4 trays" in text


def test_clean_exits_0(files):
    res = run("scan", str(files["clean"]), str(files["eval"]), "--levels", "exact,normalized")
    assert res.exit_code == 0, res.output
    assert "OK: no leakage" in res.output


def test_fail_on_none_and_levels(files):
    assert run("scan", str(files["leaky"]), str(files["eval"]), "--levels", "exact", "--fail-on", "none").exit_code == 0
    # the leak is a pair: a prompt leak and a target leak at once, so gating either kind fails on it
    # (chance gates every target match: a chance match that becomes a pair must still fail)
    for kind in ("prompt", "target", "pair:exact", "prompt:exact", "target:exact", "chance"):
        assert run("scan", str(files["leaky"]), str(files["eval"]), "--levels", "exact", "--fail-on", kind).exit_code == 1, kind
    for kind in ("target_in_prompt", "prompt_in_target", "group"):
        assert run("scan", str(files["leaky"]), str(files["eval"]), "--levels", "exact", "--fail-on", kind).exit_code == 0, kind


@pytest.mark.parametrize(
    "args, message",
    [
        (["--levels", "fuzzy"], "leakcheck: error: --levels: unknown level fuzzy; choose from exact, normalized, near, contained, semantic or all"),
        (["--fail-on", "bogus"], "leakcheck: error: --fail-on: unknown item 'bogus'"),
        (["--prompt-field", "a..b"], "leakcheck: error: cannot parse field path 'a..b'"),
        (["--near-threshold", "1.5"], "leakcheck: error: --near-threshold must be between 0 and 1, not 1.5"),
        (["--ngram", "0"], "leakcheck: error: --ngram must be at least 1, not 0"),
    ],
)
def test_usage_errors_are_one_line_exit_2(files, args, message):
    res = run("scan", str(files["leaky"]), str(files["eval"]), *args)
    assert res.exit_code == 2
    assert res.output.startswith(message), res.output
    assert "Traceback" not in res.output and res.output.count("\n") == 1


def test_missing_file_and_bad_line_name_file_and_row(files):
    res = run("scan", str(files["dir"] / "nope.jsonl"), str(files["eval"]))
    assert res.exit_code == 2
    assert res.output == f"leakcheck: error: {files['dir'] / 'nope.jsonl'}: no such file or folder; check the path\n"
    bad = files["dir"] / "bad.jsonl"
    bad.write_text('{"question": "a", "answer": "b"}\n{"question": "c", "answer": \n{"question": "d", "answer": "e"}\n')
    res = run("scan", str(bad), str(files["eval"]), "--levels", "exact")
    assert res.exit_code == 2
    assert res.output.startswith(f"leakcheck: error: {bad}: line 2: invalid JSON (")
    assert res.output.rstrip().endswith("fix or remove the line, or pass --on-error skip")


def test_missing_field_names_the_format_and_fix(files):
    mixed = write_jsonl(files["dir"] / "mixed.jsonl", [{"question": "a b c", "answer": "d e f"}, {"text": "no question here"}])
    res = run("scan", str(mixed), str(files["eval"]), "--levels", "exact")
    assert res.exit_code == 2
    assert res.output == (
        f"leakcheck: error: {mixed}: line 2: field question is missing (format gsm8k, detected from lines 1-2); "
        "pass --prompt-field/--target-field/--id-field with the path this file uses, or pass --on-error skip\n"
    )


def test_pyproject_config_is_read(files, monkeypatch):
    (files["dir"] / "pyproject.toml").write_text('[tool.leakcheck]\nlevels = ["exact"]\nfail_on = "none"\n')
    monkeypatch.chdir(files["dir"])
    res = run("scan", "train.jsonl", "eval.jsonl")
    assert res.exit_code == 0, res.output
    assert "levels: exact\n" in res.output
    # the command line wins over pyproject
    assert run("scan", "train.jsonl", "eval.jsonl", "--fail-on", "exact").exit_code == 1
    (files["dir"] / "pyproject.toml").write_text('[tool.leakcheck]\nlevel = "exact"\n')
    res = run("scan", "train.jsonl", "eval.jsonl")
    assert res.exit_code == 1 and "unknown key 'level' ignored; did you mean 'levels'?" in res.output  # a warning since issue 10


def test_near_and_contained_knobs_reach_the_report(files):
    j = files["dir"] / "r.json"
    res = run("scan", str(files["leaky"]), str(files["eval"]), "--near-threshold", "0.8", "--shingle", "4",
              "--ngram", "8", "--contained-threshold", "0.7", "--template-share", "0.5", "--json", str(j))
    assert res.exit_code == 1, res.output
    p = json.loads(j.read_text())["parameters"]["levels"]
    assert (p["near"]["threshold"], p["near"]["shingle"]) == (0.8, 4)
    assert (p["contained"]["ngram"], p["contained"]["threshold"]) == (8, 0.7)
    assert p["near"]["bands"] * p["near"]["rows"] <= 128


def test_gate_includes_or_excludes_each_level(tmp_path):
    words = ("the farmer takes his seven goats and three sheep to the market every saturday morning and sells "
             "each goat for forty dollars and each sheep for fifty five dollars how much money does he bring home "
             "after selling all of the animals if he also spends twelve dollars on lunch").split()
    edited = list(words)
    for i in (5, 20, 33):  # 3 of 45 words replaced
        edited[i] = "zebra"
    ev = write_jsonl(tmp_path / "eval.jsonl", [{"id": "e", "question": " ".join(words)}])
    tr = write_jsonl(tmp_path / "train.jsonl", [{"id": "t", "question": " ".join(edited)}, {"id": "u", "question": "an unrelated question about the weather"}])
    j = tmp_path / "r.json"
    res = run("scan", str(tr), str(ev), "--json", str(j))
    assert res.exit_code == 1, res.output  # every level that ran is gated by default
    (f,) = json.loads(j.read_text())["findings"]
    assert (f["eval_id"], f["train_id"], f["kind"], f["level"]) == ("e", "t", "prompt", "near") and 0.6 <= f["score"] < 1
    # a level in --fail-on means that level or a stronger one (exact > normalized > near > contained)
    for spec, code in (("exact,normalized,near", 1), ("prompt:near", 1), ("near", 1), ("contained", 1), ("all", 1),
                       ("normalized", 0), ("exact", 0), ("prompt:normalized", 0), ("target", 0), ("none", 0)):
        assert run("scan", str(tr), str(ev), "--fail-on", spec).exit_code == code, spec
    assert run("scan", str(tr), str(ev), "--levels", "exact,normalized,contained", "--fail-on", "any").exit_code == 0
    assert run("scan", str(tr), str(ev), "--levels", "exact,normalized,contained").exit_code == 0


@pytest.mark.parametrize("args, message", [
    (["--levels", "exact", "--fail-on", "near"],
     "leakcheck: error: --fail-on names near, which does not run (--levels exact); add it to --levels or drop it from --fail-on"),
    (["--levels", "exact,normalized", "--fail-on", "pair:contained,near"],
     "leakcheck: error: --fail-on names near, contained, which does not run (--levels exact,normalized); add it to --levels or drop it from --fail-on"),
    (["--fail-on", "any,none"], "leakcheck: error: --fail-on: 'none' contradicts any; pass none alone, or drop it"),
    (["--fail-on", "none,pair:exact"], "leakcheck: error: --fail-on: 'none' contradicts pair:exact; pass none alone, or drop it"),
])
def test_fail_on_usage_errors(files, args, message):
    res = run("scan", str(files["leaky"]), str(files["eval"]), *args)
    assert res.exit_code == 2 and res.output.strip() == message, res.output


def test_fail_on_items_are_or_ed(files):
    """`exact,pair`: every kind at exact, and pairs at every level (not only pair:exact)."""
    from leakcheck import Policy
    p = Policy.parse("exact,pair")
    assert p.gates("target", "exact") and p.gates("pair", "contained") and not p.gates("target", "near")
    assert Policy.parse(p.spec()) == p and p.spec() == ["pair", "exact"]


def test_near_misses_are_listed_not_counted(tmp_path):
    words = ("the farmer takes his seven goats and three sheep to the market every saturday morning and sells "
             "each goat for forty dollars and each sheep for fifty five dollars how much money does he bring home "
             "after selling all of the animals if he also spends twelve dollars on lunch").split()
    edited = list(words)
    for i in (4, 14, 24, 35, 36):  # 5 of 45 words replaced: Jaccard of 3-shingles 0.574, just under 0.6
        edited[i] = "zebra"
    ev = write_jsonl(tmp_path / "eval.jsonl", [{"id": "e", "question": " ".join(words)}])
    tr = write_jsonl(tmp_path / "train.jsonl", [{"id": "t", "question": " ".join(edited)}])
    j, md = tmp_path / "r.json", tmp_path / "r.md"
    res = run("scan", str(tr), str(ev), "--levels", "near", "--fail-on", "any", "--json", str(j), "--markdown", str(md))
    assert res.exit_code == 0, res.output
    rep = json.loads(j.read_text())
    assert rep["findings"] == [] and rep["summary"]["near_misses"] == 1
    (m,) = rep["near_misses"]
    assert (m["eval_id"], m["train_id"], m["kind"], m["level"], m["score"]) == ("e", "t", "prompt", "near", 0.5738)
    assert "## Closest matches below the thresholds (not leaks)" in md.read_text()


def test_report_never_overwrites_its_json(files):
    j = files["dir"] / "r.json"
    assert run("scan", str(files["leaky"]), str(files["eval"]), "--levels", "exact", "--json", str(j)).exit_code == 1
    before = j.read_bytes()
    res = run("report", str(j), "--markdown", str(j))
    assert res.exit_code == 2 and res.output == (
        f"leakcheck: error: --markdown {j} is the JSON report it reads; choose another path: leakcheck never writes over an input\n")
    assert j.read_bytes() == before


def test_examples_lists_the_bundled_datasets_with_a_scan_command():
    res = run("examples")
    assert res.exit_code == 0
    lines = res.output.splitlines()
    names = [line.split(":")[0] for line in lines if not line.startswith(" ")]
    assert names == ["chat_small", "collabllm_medium", "healthbench_rubrics", "healthbench_rubrics_verl"]
    scan_line = next(line.strip() for line in lines if "collabllm_medium/train.parquet" in line)
    _, _, train, ev = scan_line.split()
    assert run("scan", train, ev, "--levels", "exact", "-q").exit_code == 1
