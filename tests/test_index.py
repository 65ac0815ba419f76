"""The eval index: a saved value that scans like the eval files and holds no eval text."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import leakcheck
from leakcheck import ScanConfig
from leakcheck.cli import main
from leakcheck.index import EvalIndex
from leakcheck.report.json import dumps
from leakcheck.scan import build_index, scan_index

from .conftest import EXAMPLES, write_jsonl

run = CliRunner().invoke
QUESTIONS = [
    "Lena bakes 4 trays of 12 cookies and gives away 10 of them to her neighbours. How many cookies are left for the party?",
    "A train leaves the station at 9 and travels 60 miles per hour for three hours before stopping. How far did it travel?",
    "Omar buys 7 notebooks at 3 dollars each and a pen for 2 dollars with a twenty dollar bill. How much change does he get?",
    "The farmer plants 5 rows of 9 apple trees and then 3 more rows of 6 pear trees each spring. How many trees in all?",
]
ANSWERS = ["Four trays of twelve make forty eight cookies, minus ten given away.\n#### 38",
           "Sixty miles each hour over three hours covers one hundred eighty miles.\n#### 180",
           "Notebooks cost twenty one dollars with the pen, so nothing much is left over.\n#### 2",
           "Forty five apple trees and eighteen pear trees together.\n#### 63"]


def _data(tmp_path: Path) -> tuple[Path, Path]:
    ev = write_jsonl(tmp_path / "eval.jsonl", [{"id": f"e{i}", "question": q, "answer": a} for i, (q, a) in enumerate(zip(QUESTIONS, ANSWERS))])
    train = [
        {"messages": [{"role": "user", "content": QUESTIONS[0]}, {"role": "assistant", "content": ANSWERS[0]}]},  # pair/exact
        {"messages": [{"role": "user", "content": QUESTIONS[1].replace("three", "four")}, {"role": "assistant", "content": "ok"}]},  # near
        {"messages": [{"role": "user", "content": "Worksheet. " + QUESTIONS[3] + " Then colour the page."}, {"role": "assistant", "content": "x"}]},
        {"messages": [{"role": "user", "content": "Something unrelated about the weather in spring."}, {"role": "assistant", "content": "sun"}]},
    ]
    tr = write_jsonl(tmp_path / "train.jsonl", train * 3)
    return tr, ev


def _strip(report: str) -> str:
    return re.sub(r'"created_at": "[^"]*"', "", report)


def _key(r: leakcheck.ScanResult) -> list[tuple]:
    return [(f.eval_id, f.train_id, f.kind, f.level, f.score, f.train_line, f.eval_fingerprint, f.train_fingerprint) for f in r.findings]


def test_index_round_trip_scans_like_the_eval_file(tmp_path):
    tr, ev = _data(tmp_path)
    direct = leakcheck.scan(tr, ev)
    assert {(f.eval_id, f.kind, f.level) for f in direct.findings} >= {("e0", "pair", "exact"), ("e1", "prompt", "near"), ("e3", "prompt", "near")}
    res = run(main, ["index", str(ev), "--name", f"gsm={ev}", "-o", str(tmp_path / "e.lcx")])
    assert res.exit_code == 0 and res.output.startswith(f"wrote {tmp_path / 'e.lcx'}: gsm (4 records); levels exact, normalized, near, contained;")
    loaded = EvalIndex.load(tmp_path / "e.lcx")
    (via,) = scan_index(tr, loaded).values()
    assert _key(via) == _key(direct)
    # the report names eval records by id and fingerprint only: no eval text came with the index
    assert all(f.eval_snippet == "" for f in via.findings) and all(f.eval_snippet for f in direct.findings)
    # the index keeps each target's agreement keys (no text): siblings are told apart as in a direct scan
    assert not any(n.startswith("target agreement is off") for n in via.notes + direct.notes)
    assert [(s.eval_id, s.train_id, s.kind) for s in via.siblings] == [(s.eval_id, s.train_id, s.kind) for s in direct.siblings]
    res = run(main, ["scan", str(tr), "--index", str(tmp_path / "e.lcx"), "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 1
    assert [f["eval_id"] for f in json.loads((tmp_path / "r.json").read_text())["findings"]] == [f.eval_id for f in direct.findings]


def test_index_holds_no_eval_text(tmp_path):
    tr, ev = _data(tmp_path)
    build_index([("gsm", ev)], ScanConfig()).save(tmp_path / "e.lcx")
    with zipfile.ZipFile(tmp_path / "e.lcx") as z:
        blob = b"".join(z.read(n) for n in z.namelist())
    raw = b"".join(zipfile.ZipFile(tmp_path / "e.lcx").open(n).read() for n in zipfile.ZipFile(tmp_path / "e.lcx").namelist())
    for text in QUESTIONS + ANSWERS:
        words = [w for w in re.findall(r"[A-Za-z]{6,}", text)]
        for needle in [text[:30], text[-25:], *words]:
            assert needle.encode() not in blob and needle.lower().encode() not in raw, needle
    # the eval set's name, ids and file path are there: that is what a report names
    assert b"e0" in raw and b"gsm" in raw


def test_version_and_parameter_mismatch_are_clear_errors(tmp_path):
    tr, ev = _data(tmp_path)
    build_index([("gsm", ev)], ScanConfig(levels=("exact", "normalized"))).save(tmp_path / "e.lcx")
    res = run(main, ["scan", str(tr), "--index", str(tmp_path / "e.lcx")])
    assert res.exit_code == 2 and res.output.strip() == (
        f"leakcheck: error: {tmp_path / 'e.lcx'} has no near, contained level (built with --levels exact,normalized); "
        "rebuild it with those levels or scan with --levels exact,normalized")
    build_index([("gsm", ev)], ScanConfig()).save(tmp_path / "all.lcx")
    res = run(main, ["scan", str(tr), "--index", str(tmp_path / "all.lcx"), "--near-threshold", "0.7"])
    assert res.exit_code == 2 and "was built with near threshold=0.6, this scan asks for 0.7; rebuild the index" in res.output
    # another format version
    z = zipfile.ZipFile(tmp_path / "all.lcx")
    import numpy as np
    arrays = {n[:-4]: np.load(z.open(n)) for n in z.namelist()}
    header = json.loads(bytes(arrays.pop("header.json")).decode())
    header["version"] = 99
    np.savez(tmp_path / "v99.lcx", **{"header.json": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)}, **arrays)
    res = run(main, ["scan", str(tr), "--index", str(tmp_path / "v99.lcx.npz")])
    assert res.exit_code == 2 and "index format version 99 is not 2" in res.output and "rebuild it with this leakcheck" in res.output
    (tmp_path / "junk.lcx").write_text("not an index")
    res = run(main, ["scan", str(tr), "--index", str(tmp_path / "junk.lcx")])
    assert res.exit_code == 2 and res.output.startswith(f"leakcheck: error: {tmp_path / 'junk.lcx'}: not a leakcheck eval index")


def test_many_eval_sets_in_one_pass_report_per_set(tmp_path):
    tr, ev = _data(tmp_path)
    other = write_jsonl(tmp_path / "other.jsonl", [{"id": "o0", "question": "A question nobody copied into the train set, about owls and moons."}])
    d = EXAMPLES / "chat_small"
    res = run(main, ["scan", str(tr), str(ev), str(other), "--name", f"mine={ev}", "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 1, res.output
    assert "== eval set mine ==" in res.output and "== eval set other ==" in res.output
    assert res.output.strip().endswith("2 eval sets: leakage or partial scan in mine")
    mine = json.loads((tmp_path / "r.mine.json").read_text())
    oth = json.loads((tmp_path / "r.other.json").read_text())
    assert mine["gate"]["exit_code"] == 1 and oth["gate"]["exit_code"] == 0 and oth["findings"] == []
    assert {f["eval_set"] for f in mine["findings"]} == {"mine"}
    # the same findings as scanning each set alone
    alone = leakcheck.scan(tr, ev)
    assert [(f["eval_id"], f["train_id"], f["kind"], f["level"]) for f in mine["findings"]] == [(f.eval_id, f.train_id, f.kind, f.level) for f in alone.findings]
    # several indexes and files together
    build_index([("chat", d / "eval_questions.jsonl")], ScanConfig()).save(tmp_path / "chat.lcx")
    res = run(main, ["scan", str(tr), str(ev), "--index", str(tmp_path / "chat.lcx"), "-q"])
    assert res.exit_code == 1
    res = run(main, ["scan", str(tr), str(ev), str(ev)])
    assert res.exit_code == 2 and "two eval sets are named 'eval'; name them apart with --name NAME=PATH" in res.output


@pytest.mark.parametrize("jobs", [2])
def test_jobs_give_byte_identical_reports(tmp_path, jobs, monkeypatch):
    """Several shards of one file (a small shard size) on worker processes, against the serial scan."""
    import leakcheck.io.shards as shards

    tr, ev = _data(tmp_path)
    rows = [json.loads(line) for line in tr.read_text().splitlines()]
    big = write_jsonl(tmp_path / "big.jsonl", [rows[i % len(rows)] for i in range(400)] + [{"messages": [{"role": "assistant", "content": "a chat with no user turn"}]}])
    monkeypatch.setattr(shards, "SHARD_BYTES", 4096)
    cfg = ScanConfig(on_error="skip")
    serial = leakcheck.scan(big, ev, cfg, jobs=1)
    assert len(shards.plan_shards(leakcheck.io.open_source(big), shards.SHARD_BYTES)) > 5
    parallel = leakcheck.scan(big, ev, cfg, jobs=jobs)
    assert _strip(dumps(serial)) == _strip(dumps(parallel))
    assert sum(serial.train.skipped.values()) == 1 and serial.train.rows == 401  # the bad row is counted once, in its shard
    lines = {f.train_line for f in serial.findings if f.kind == "pair"}
    assert lines == {1 + 4 * k for k in range(100)}  # every copy of row 1, by its line in the file


def test_progress_is_silent_when_not_a_terminal(tmp_path):
    tr, ev = _data(tmp_path)
    res = CliRunner().invoke(main, ["scan", str(tr), str(ev)], env={"CI": "true"})
    assert res.exit_code == 1 and "records" not in res.stderr and "it/s" not in res.stderr and "B/s" not in res.stderr
    res = CliRunner().invoke(main, ["scan", str(tr), str(ev), "--progress"])
    assert res.exit_code == 1 and "train" in res.stderr and "records" in res.stderr


def test_loading_an_index_needs_no_datasketch(tmp_path):
    """The near level's bands/rows and permutations are in the index: loading imports neither datasketch nor scipy."""
    import subprocess
    import sys

    tr, ev = _data(tmp_path)
    build_index([("gsm", ev)], ScanConfig()).save(tmp_path / "e.lcx")
    code = ("import sys; from leakcheck.index import EvalIndex; ix = EvalIndex.load(sys.argv[1]); "
            "print(ix.parts['near'].bands, 'datasketch' in sys.modules, 'scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "e.lcx")], capture_output=True, text=True, check=True).stdout.split()
    assert out[1:] == ["False", "False"] and int(out[0]) > 1
