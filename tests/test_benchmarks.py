"""The benchmark harness's own parts (benchmarks/ is not timed here): the generated train
file, decon's inputs and reports, process-tree memory, feature detection and the fit."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

from leakcheck.cli import main

from .conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import bench_decon  # noqa: E402
import bench_scan  # noqa: E402
import benchlib  # noqa: E402
import decon_run  # noqa: E402

FIX = REPO / "tests" / "fixtures" / "bench"
GSM = FIX / "gsm8k"


@pytest.fixture
def chat(tmp_path: Path) -> Path:
    out = tmp_path / "train_chat.jsonl"
    bench_scan.generate_train(GSM / "train.jsonl", GSM / "test.jsonl", out, 300, bench_scan.SEED, 5)
    return out


def test_generated_train_is_chat_jsonl_with_the_planted_items(chat: Path, tmp_path: Path):
    rows = [json.loads(line) for line in chat.read_text(encoding="utf-8").splitlines()]
    test = bench_scan._read_jsonl(GSM / "test.jsonl")
    assert len(rows) == 300 and len({r["id"] for r in rows}) == 300
    assert all([m["role"] for m in r["messages"]] == ["system", "user", "assistant"] for r in rows)
    planted = {k: r for k, r in enumerate(rows) if r["messages"][1]["content"] in {t["question"] for t in test}}
    assert sorted(planted) == [50, 100, 150, 200, 250]
    assert [(r["messages"][1]["content"], r["messages"][2]["content"]) for r in planted.values()] == [
        (test[i]["question"], test[i]["answer"]) for i in sorted(bench_decon.planted_rows(len(test), 5))]
    # leakcheck finds exactly those, as pairs, and nothing else
    j = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["scan", str(chat), str(GSM / "test.jsonl"), "--levels", "exact,normalized", "--json", str(j), "-q"])
    assert res.exit_code == 1, res.output
    assert benchlib.flagged_rows(j) == {0, 6, 12, 18, 24}
    assert {f["kind"] for f in json.loads(j.read_text())["findings"]} == {"pair"}


def test_generator_output_does_not_depend_on_how_the_order_is_stored(chat: Path, tmp_path: Path):
    again = tmp_path / "again.jsonl"
    bench_scan.generate_train(GSM / "train.jsonl", GSM / "test.jsonl", again, 300, bench_scan.SEED, 5)
    assert again.read_bytes() == chat.read_bytes()
    head = tmp_path / "head.jsonl"
    bench_scan.generate_train(GSM / "train.jsonl", GSM / "test.jsonl", head, 299, bench_scan.SEED + 1, 5)
    assert head.read_bytes() != chat.read_bytes()


def test_decon_inputs_split_the_same_records_in_order(chat: Path, tmp_path: Path):
    counts = bench_decon.write_decon_train(chat, tmp_path / "train", 2)
    assert counts == [150, 150]
    got = [json.loads(line) for p in ("part-0", "part-1") for line in (tmp_path / "train" / f"{p}.jsonl").read_text().splitlines()]
    src = [json.loads(line) for line in chat.read_text().splitlines()]
    assert [g["id"] for g in got] == [s["id"] for s in src]
    assert got[50]["text"] == "\n".join(m["content"] for m in src[50]["messages"])
    bench_decon.write_decon_eval(bench_scan._read_jsonl(GSM / "test.jsonl"), tmp_path / "evals")
    ev = [json.loads(line) for line in (tmp_path / "evals" / "gsm8k_test.jsonl").read_text().splitlines()]
    assert len(ev) == 30 and ev[6]["eval_instance_index"] == 6 and ev[6]["eval_key"] == "gsm8k"
    assert ev[6]["question"].endswith("(case 106)") and ev[6]["answer"].endswith("#### 105")


def test_decon_report_folder_is_read_into_flagged_eval_items():
    # a real decon 0.3.0 report: this fixture's 300-record train file, split in two, vs its test set
    items, matches, docs = decon_run.flagged(FIX / "decon_report")
    assert items == {("gsm8k", i) for i in (0, 6, 12, 18, 24)}
    assert (matches, docs) == (5, 5)


def test_peak_memory_is_summed_over_the_process_tree():
    # parent and child each hold 64 MiB of touched memory while the child sleeps
    child = "import time; b = b'x' * (64 << 20); time.sleep(0.4)"
    parent = f"import subprocess, sys; b = b'y' * (64 << 20); subprocess.run([sys.executable, '-c', {child!r}])"
    run = benchlib.measure_tree([sys.executable, "-c", parent], interval=0.01)
    assert run.rc == 0
    assert run.rss_max_mib >= 64
    assert run.rss_sum_mib >= 128 > run.rss_max_mib + 32


@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_another_child_reaped_meanwhile_is_not_counted():
    # Popen reaps abandoned children when the next one starts; their CPU time must not leak in
    code = "import sys, time\nwhile time.process_time() < 0.5: pass\nprint('ready', flush=True); sys.stdin.read()"
    gone = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert gone.stdout is not None and gone.stdin is not None
    assert gone.stdout.readline() == b"ready\n"
    pid, stdin, stdout = gone.pid, gone.stdin, gone.stdout
    del gone  # still running: Popen keeps it in its list of children to reap later
    stdin.close()
    stdout.close()
    while psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
        time.sleep(0.01)
    run = benchlib.measure_tree([sys.executable, "-c", "pass"])
    assert run.rc == 0 and run.cpu < 0.5  # the other child alone used 0.5 s


def test_cpu_of_a_grandchild_nobody_waits_for_is_counted():
    """Like a --jobs worker: the child of a fork server that the command never waits for."""
    worker = ("import os, time\nwhile time.process_time() < 0.5: pass\n"
              "time.sleep(0.2)")  # idle a moment, so the sampler sees the final CPU time
    server = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {worker!r}])"
    # the command starts the "server" and waits for its output to end, but never reaps it
    cmd = (f"import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', {server!r}], stdout=subprocess.PIPE); "
           "p.stdout.read(); p.returncode = 0")
    run = benchlib.measure_tree([sys.executable, "-c", cmd], interval=0.01)
    assert run.rc == 0
    assert run.cpu >= 0.45  # wait4 alone would give the command's own start-up, ~0.05 s


def test_measure_tree_keeps_exit_code_and_output():
    run = benchlib.measure_tree([sys.executable, "-c", "import sys; print('out'); sys.exit('bad input')"])
    assert (run.rc, run.stdout, run.last_line()) == (1, "out\n", "bad input")


SCAN_HELP_TODAY = "Usage: leakcheck scan [OPTIONS] TRAIN EVAL\n\n  Scan TRAIN ...\n\nOptions:\n  --json FILE  Write the JSON report here.\n"
TOP_HELP_TODAY = "Commands:\n  card      Write ...\n  scan      Scan TRAIN ...\n"


def test_features_of_todays_help_and_of_the_installed_leakcheck():
    assert benchlib.Features.from_help(TOP_HELP_TODAY, SCAN_HELP_TODAY) == benchlib.Features(jobs=False, index=False, multi_eval=None)
    top = subprocess.run([*benchlib.leakcheck_argv(), "--help"], capture_output=True, text=True).stdout
    scan = subprocess.run([*benchlib.leakcheck_argv(), "scan", "--help"], capture_output=True, text=True).stdout
    detected = benchlib.Features.detect()
    assert detected == benchlib.Features.from_help(top, scan)
    assert ("--jobs" in scan) == detected.jobs


@pytest.mark.parametrize(("top", "scan", "want"), [
    (TOP_HELP_TODAY, SCAN_HELP_TODAY.replace("--json FILE", "-j, --jobs INTEGER  Worker processes.\n  --json FILE"), (True, False, None)),
    (TOP_HELP_TODAY + "  index     Build an index ...\n", SCAN_HELP_TODAY.replace("TRAIN EVAL", "TRAIN EVAL..."), (False, True, "positional")),
    (TOP_HELP_TODAY, SCAN_HELP_TODAY + "  --eval PATH  An eval set (repeatable).\n", (False, False, "option")),
    # an option that merely mentions jobs or an index is not the feature
    ("Commands:\n  scan  Scan, see the index of terms\n", SCAN_HELP_TODAY + "  --max-jobs-note TEXT  x\n", (False, False, None)),
])
def test_features_detected_from_help(top: str, scan: str, want: tuple):
    f = benchlib.Features.from_help(top, scan)
    assert (f.jobs, f.index, f.multi_eval) == want


def test_scan_argv_for_each_cli_shape():
    lc = benchlib.leakcheck_argv()
    today = benchlib.Features(jobs=False, index=False, multi_eval=None)
    assert benchlib.scan_argv(Path("t"), [Path("e")], "all", Path("r.json"), None, today) == [
        *lc, "scan", "t", "e", "--levels", "all", "--json", "r.json", "--quiet"]
    with pytest.raises(ValueError):
        benchlib.scan_argv(Path("t"), [Path("e1"), Path("e2")], "all", Path("r.json"), None, today)
    pos = benchlib.Features(jobs=True, index=False, multi_eval="positional")
    assert benchlib.scan_argv(Path("t"), [Path("e1"), Path("e2")], "all", Path("r.json"), 2, pos)[len(lc):] == [
        "scan", "t", "e1", "e2", "--levels", "all", "--json", "r.json", "--quiet", "--jobs", "2"]
    opt = benchlib.Features(jobs=False, index=False, multi_eval="option")
    assert benchlib.scan_argv(Path("t"), [Path("e1"), Path("e2")], "near", Path("r.json"), None, opt)[len(lc):] == [
        "scan", "t", "--eval", "e1", "--eval", "e2", "--levels", "near", "--json", "r.json", "--quiet"]


def test_least_squares_and_counts():
    assert benchlib.least_squares([0.2, 1.0, 3.0], [10.0, 42.0, 122.0]) == (40.0, 2.0, 1.0)
    slope, icpt, r2 = benchlib.least_squares([0.2, 1.0, 3.0], [10.0, 45.0, 120.0])
    assert (round(slope, 3), round(icpt, 3), round(r2, 4)) == (38.942, 3.814, 0.9987)  # numpy.polyfit(x, y, 1) agrees
    with pytest.raises(ValueError):
        benchlib.least_squares([1.0, 1.0], [2.0, 3.0])
    assert [benchlib.parse_count(s) for s in ("200k", "1M", "3m", "250000")] == [200_000, 1_000_000, 3_000_000, 250_000]
    with pytest.raises(ValueError, match="not a record count: '1G'"):
        benchlib.parse_count("1G")


def test_bench_clean_drops_the_planted_items_and_rescans_clean(chat: Path, tmp_path: Path):
    chat.with_suffix(".meta.json").write_text(json.dumps({"records": 300, "planted": 5}))
    work = tmp_path / "work"
    work.mkdir()
    res = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_clean.py"), "--train", str(chat), "--eval", str(GSM / "test.jsonl"),
                          "--levels", "exact,normalized", "--jobs", "1", "--repeat", "1", "--tmp", str(work)],
                         capture_output=True, text=True, cwd=REPO, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "dropped 5 (planted 5), written 295" in res.stdout
    assert "rescan of the cleaned file: exit 0 (clean)" in res.stdout and "clean / scan wall:" in res.stdout
    assert list(work.iterdir()) == []  # its outputs are removed
