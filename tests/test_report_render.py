"""Markdown report with charts, JSON -> ScanResult round trip, `leakcheck report`."""

from __future__ import annotations

import dataclasses

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import leakcheck
from leakcheck.cli import main
from leakcheck.config import Policy
from leakcheck.report import content, plots
from leakcheck.report.json import dumps, to_dict
from leakcheck.report.load import from_dict, load_report
from leakcheck.report.markdown import to_markdown, write_markdown
from leakcheck.result import Finding, InputInfo, ScanResult

from .conftest import write_jsonl

PNG = b"\x89PNG\r\n\x1a\n"


def _q(i: int) -> str:
    return f"Question {i}: a farmer plants {i + 3} rows of {i + 7} trees each. How many trees does the farmer plant in all?"


def _a(i: int) -> str:
    return f"The farmer plants {i + 3} * {i + 7} = {(i + 3) * (i + 7)} trees in all, row by row."


@pytest.fixture
def scanned(tmp_path: Path) -> ScanResult:
    """10 eval records in two data sources; 3 pairs and 1 prompt-only leak, all from source 'alpha'."""
    ev = [{"id": f"e{i}", "question": _q(i), "answer": _a(i), "data_source": "alpha" if i < 6 else "beta"} for i in range(10)]
    tr = [{"id": f"t{i}", "question": _q(i), "answer": _a(i), "data_source": "alpha"} for i in range(3)]
    tr.append({"id": "t3", "question": _q(3), "answer": "A completely different worked answer of some length."})
    tr.append({"id": "t4", "question": "Something unrelated to any eval item?", "answer": "An unrelated answer of some length."})
    write_jsonl(tmp_path / "eval.jsonl", ev)
    write_jsonl(tmp_path / "train.jsonl", tr)
    return leakcheck.scan(tmp_path / "train.jsonl", tmp_path / "eval.jsonl", leakcheck.ScanConfig(levels=("exact", "normalized")))


def _near_result() -> ScanResult:
    info = InputInfo("eval.jsonl", ("eval.jsonl",), "gsm8k", {"prompt": "question", "target": "answer"}, 20, 20)
    tinfo = InputInfo("train.jsonl", ("train.jsonl",), "gsm8k", {"prompt": "question", "target": "answer"}, 50, 50)
    fs = [
        Finding("e0", "t0", "pair", "exact", 1.0, 0, 0, "question", "question", "q0", "q0"),
        Finding("e1", "t1", "prompt", "near", 0.62, 1, 1, "question", "question", "q1", "q1'"),
        Finding("e2", "t2", "prompt", "near", 0.91, 2, 2, "question", "question", "q2", "q2'"),
        Finding("e3", "t3", "target", "contained", 0.55, 3, 3, "answer", "answer", "a3", "a3'"),
        Finding("e4", "t4", "target", "contained", 1.0, 4, 4, "answer", "answer", "a4", "a4'"),
    ]
    params = {"levels": {"exact": {"method": "m"}, "near": {"method": "minhash", "threshold": 0.6},
                         "contained": {"method": "ngram", "threshold": 0.5}},
              "short_target_chars": 20, "max_target_hits": 10, "on_error": "fail", "fail_on": "x"}
    return ScanResult(tinfo, info, ("exact", "near", "contained"), params, tuple(fs), created_at="2026-01-02T03:04:05+00:00")


def test_summary_table_holds_the_numbers_of_the_kind_chart(scanned):
    assert content.kind_level_percents(scanned) == {"pair": {"exact": 30.0, "normalized": 0.0}, "prompt": {"exact": 10.0, "normalized": 0.0}}
    md = to_markdown(scanned)
    assert "| kind | what matched | eval records | % of eval | exact | normalized |" in md
    assert "| `pair` | prompt **and** reward target of the same train record | 3 | 30.0 | 3 (30.0%) | – |" in md
    assert "| `prompt` | prompt only | 1 | 10.0 | 1 (10.0%) | – |" in md
    assert "| **any** |  | **4** | **40.0** | 4 (40.0%) | – |" in md


def test_subset_table_counts_eval_records_per_data_source(scanned):
    assert scanned.eval.subsets == {"alpha": 6, "beta": 4}
    assert {f.subset for f in scanned.findings} == {"alpha"}
    md = to_markdown(scanned)
    assert "## Leakage by subset" in md
    assert "| alpha | 6 | 4 | 66.67 | 3 | 1 |" in md
    assert "| beta | 4 | 0 | 0.0 | 0 | 0 |" in md


def test_no_subset_section_without_data_source(tmp_path):
    write_jsonl(tmp_path / "e.jsonl", [{"question": _q(1), "answer": _a(1)}])
    write_jsonl(tmp_path / "t.jsonl", [{"question": _q(1), "answer": _a(1)}])
    r = leakcheck.scan(tmp_path / "t.jsonl", tmp_path / "e.jsonl", leakcheck.ScanConfig(levels=("exact",)))
    assert r.eval.subsets == {} and "subsets" not in to_dict(r)["eval"] and "subset" not in to_dict(r)["findings"][0]
    assert "## Leakage by subset" not in to_markdown(r)
    assert sorted(plots.charts(r)) == ["by_kind"]


def test_score_histogram_table_and_thresholds():
    r = _near_result()
    edges, counts = content.score_bins(r)
    assert edges[0] == 0.5 and edges[-1] == 1.0 and len(edges) == 11
    assert counts == {"near": [0, 0, 1, 0, 0, 0, 0, 0, 1, 0], "contained": [0, 1, 0, 0, 0, 0, 0, 0, 0, 1]}
    md = to_markdown(r)
    assert "| score | near findings | contained findings |" in md
    assert "| [0.60, 0.65) | 1 | 0 |" in md and "| [0.95, 1.00] | 0 | 1 |" in md
    assert "| threshold | 0.60 | 0.50 |" in md
    assert sorted(plots.charts(r)) == ["by_kind", "scores"]


def test_markdown_writes_deterministic_pngs_beside_it(scanned, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    written = write_markdown(scanned, out / "rep.md")
    assert [Path(p).name for p in written] == ["rep-by_kind.png", "rep-by_subset.png", "rep.md"]
    md = (out / "rep.md").read_text()
    assert "![Contaminated share of eval, by kind and level](rep-by_kind.png)" in md
    assert "![Contaminated share of eval, by subset](rep-by_subset.png)" in md
    first = {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in written}
    assert all(Path(p).read_bytes().startswith(PNG) for p in written[:2])
    write_markdown(scanned, out / "rep.md")
    assert {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in written} == first


def test_stale_chart_is_removed(scanned, tmp_path):
    (tmp_path / "rep-scores.png").write_bytes(PNG)
    write_markdown(scanned, tmp_path / "rep.md")
    assert not (tmp_path / "rep-scores.png").exists()
    write_markdown(scanned, tmp_path / "rep.md", plots=False)
    assert "![" not in (tmp_path / "rep.md").read_text() and "| `pair` |" in (tmp_path / "rep.md").read_text()


def test_json_round_trip_is_exact(scanned):
    d = json.loads(dumps(scanned))
    back = from_dict(d)
    assert back == scanned
    assert dumps(back) == dumps(scanned)


@pytest.mark.parametrize("spec", ["exact,normalized", "pair:near,chance", "none", "target", "any"])
def test_saved_report_gives_back_its_gate(tmp_path, spec):
    from leakcheck.report.json import write_json

    p = Policy.parse(spec)
    write_json(_near_result(), tmp_path / "r.json", p)
    assert load_report(tmp_path / "r.json")[1] == p


def test_report_command_rerenders_what_scan_wrote(tmp_path):
    ev = [{"id": f"e{i}", "question": _q(i), "answer": _a(i)} for i in range(4)]
    write_jsonl(tmp_path / "eval.jsonl", ev)
    write_jsonl(tmp_path / "train.jsonl", ev[:1])
    run = CliRunner().invoke
    res = run(main, ["scan", str(tmp_path / "train.jsonl"), str(tmp_path / "eval.jsonl"), "--levels", "exact,normalized",
                     "--fail-on", "pair:exact", "--json", str(tmp_path / "a.json"), "--markdown", str(tmp_path / "a.md"),
                     "--html", str(tmp_path / "a.html"), "-q"])
    assert res.exit_code == 1, res.output
    (tmp_path / "later").mkdir()
    res = run(main, ["report", str(tmp_path / "a.json"), "--markdown", str(tmp_path / "later" / "a.md"),
                     "--html", str(tmp_path / "later" / "a.html")])
    assert res.exit_code == 0 and res.output == ""
    assert (tmp_path / "later" / "a.md").read_text() == (tmp_path / "a.md").read_text()
    assert (tmp_path / "later" / "a.html").read_text() == (tmp_path / "a.html").read_text()
    assert (tmp_path / "later" / "a-by_kind.png").read_bytes() == (tmp_path / "a-by_kind.png").read_bytes()
    assert "Gate (`--fail-on`): pair at exact or stronger." in (tmp_path / "later" / "a.md").read_text()


@pytest.mark.parametrize(
    "content_, message",
    [
        (None, "no such file; pass the JSON report written by leakcheck scan --json"),
        ("{not json", "not a JSON file ("),
        ('{"a": 1}', "not a leakcheck JSON report; pass the file written by leakcheck scan --json"),
        ('{"schema_version": 99, "findings": []}', "report schema version 99 is not 2"),
    ],
)
def test_report_command_bad_input_is_one_line_exit_2(tmp_path, content_, message):
    p = tmp_path / "r.json"
    if content_ is not None:
        p.write_text(content_)
    res = CliRunner().invoke(main, ["report", str(p), "--markdown", str(tmp_path / "r.md")])
    assert res.exit_code == 2
    assert res.output.startswith(f"leakcheck: error: {p}: {message}"), res.output
    assert res.output.count("\n") == 1


def test_report_command_needs_an_output(tmp_path, scanned):
    (tmp_path / "r.json").write_text(dumps(scanned))
    res = CliRunner().invoke(main, ["report", str(tmp_path / "r.json")])
    assert res.exit_code == 2 and "nothing to write" in res.output


def test_load_report_returns_policy(tmp_path, scanned):
    (tmp_path / "r.json").write_text(dumps(scanned, Policy.parse("exact")))
    r, p = load_report(tmp_path / "r.json")
    assert r == dataclasses.replace(scanned, policy=Policy.parse("exact")) and p == Policy.parse("exact")
