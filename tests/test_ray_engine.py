"""``engine="ray"``: the same scan on a local 2-CPU Ray cluster, with the same report as the local engine.

The train files are several shards each (JSONL byte ranges, Parquet row groups), carry
planted leaks at every level, blank lines (line numbers are not row numbers), a bad row and a
target so common it is chance, so every part of the merge is compared: findings with train
ids, rows, files and lines, chance matches, near misses, counts and skipped rows.
"""

from __future__ import annotations

import functools
import json
import random
import socket
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import leakcheck
from leakcheck import InputError, ScanConfig, UsageError
from leakcheck.engine import ScanJob
from leakcheck.formats import FormatSpec
from leakcheck.io import shards as shards_mod
from leakcheck.io.shards import Shard
from leakcheck.ray_engine import run_ray
from leakcheck.report.json import to_dict
from leakcheck.scan import build_index

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Ray Data's own, about its own settings

SHARD = 256 << 10  # small shards, so a few MB make many of them
N_EVAL = 12


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(n))


def _vocab() -> list[str]:
    rng = random.Random(7)
    syll = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "de", "fu", "ga", "hi", "jo", "be", "vu", "ze"]
    return sorted({"".join(rng.choice(syll) for _ in range(rng.randint(2, 4))) for _ in range(6000)})


VOCAB = _vocab()


def _eval_rows() -> list[dict]:
    rng = random.Random(1)
    return [{"id": f"q{i}", "question": _words(rng, 40) + "?", "answer": _words(rng, 12) + f"\n#### {100 + i}"} for i in range(N_EVAL)]


def _chat(q: str, a: str) -> dict:
    return {"messages": [{"role": "user", "content": q}, {"role": "assistant", "content": a}]}


def _swap(rng: random.Random, text: str, k: int) -> str:
    """``text`` with ``k`` of its words replaced."""
    w = text.split()
    for i in rng.sample(range(len(w)), k):
        w[i] = rng.choice(VOCAB)
    return " ".join(w)


def _plants(ev: list[dict]) -> dict[int, dict]:
    """Train rows (by position) that leak eval records, at every level and kind."""
    rng = random.Random(3)
    q = [e["question"] for e in ev]
    a = [e["answer"] for e in ev]
    words = q[4].split()
    return {
        5: _chat(q[0], a[0]),  # pair, exact
        1500: _chat(q[1].upper().replace(" ", "  "), "unrelated reply " + _words(rng, 10)),  # prompt, normalized
        3100: _chat(_swap(rng, q[2], 2), _words(rng, 12)),  # prompt, near
        4700: _chat("Background. " + _words(rng, 30) + " " + q[3] + " " + _words(rng, 30), _words(rng, 12)),  # contained
        6200: _chat(" ".join(words[:28]) + " " + _words(rng, 14), _words(rng, 12)),  # a contained near miss: 16 of its 29 13-grams
        7800: _chat(_words(rng, 40) + "?", a[5]),  # target only
        9000: _chat(q[0], a[0]),  # the same pair again, in a later shard
        **{700 + 650 * j: _chat(_words(rng, 40) + "?", a[6]) for j in range(14)},  # a target in 14 records: generic
    }


def _train_rows(ev: list[dict], n: int) -> list[dict]:
    rng = random.Random(2)
    plants = _plants(ev)
    return [plants.get(i) or _chat(_words(rng, rng.randint(25, 60)) + "?", _words(rng, rng.randint(20, 50))) for i in range(n)]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    """An eval JSONL; a train JSONL (no ids, blank lines, a bad line) and a train Parquet (ids, many row groups)."""
    d = tmp_path_factory.mktemp("ray")
    ev = _eval_rows()
    rows = _train_rows(ev, 10_000)
    (d / "eval.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ev), encoding="utf-8")
    lines, line_of = [], []
    for i, r in enumerate(rows):
        lines.append(json.dumps(r) + "\n")
        line_of.append(len(lines))
        if i % 997 == 0:
            lines.append("\n")
        if i == 4321:
            lines.append('{"messages": [{"role": "user", "content": "cut\n')
    (d / "train.jsonl").write_text("".join(lines), encoding="utf-8")
    (d / "lines.json").write_text(json.dumps(line_of))
    table = pa.Table.from_pylist([{"id": f"t{i:05d}", **r} for i, r in enumerate(rows)])
    pq.write_table(table, d / "train.parquet", row_group_size=400)
    return {"eval": d / "eval.jsonl", "jsonl": d / "train.jsonl", "parquet": d / "train.parquet", "dir": d}


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.data")
    ray.init(address="local", num_cpus=2, include_dashboard=False)  # a new local Ray, whatever else runs here
    yield ray
    ray.shutdown()


@pytest.fixture
def small_shards(monkeypatch):
    """The driver plans shards of 256 KiB instead of 32 MiB (for both engines)."""
    monkeypatch.setattr(sys.modules["leakcheck.scan"], "plan_shards", functools.partial(shards_mod.plan_shards, target_bytes=SHARD))


def _report(train: Path, ev: Path, **kw) -> dict:
    d = to_dict(leakcheck.scan(train, ev, ScanConfig(on_error="skip"), **kw))
    d.pop("created_at")
    return d


def _row(pos: int) -> int:
    """The row number of the train record at ``pos`` in the JSONL file: the bad line after 4321 is a row too."""
    return pos + (pos > 4321)


def test_jsonl_ray_report_is_the_local_report(data, ray_cluster, small_shards):
    planned = shards_mod.plan_shards(shards_mod.open_source(data["jsonl"]), SHARD)
    assert len(planned) >= 20
    local = _report(data["jsonl"], data["eval"])
    done: list[int] = []
    ray = _report(data["jsonl"], data["eval"], engine="ray", progress=lambda n, recs=0, total=None: total is None and done.append(n))
    assert ray == local
    assert sorted(done) == sorted(s.size for s in planned)  # progress counts every shard once
    assert ray_cluster.is_initialized()  # a Ray someone else started is left running
    # what both found is what was planted, at the file's own lines (blank lines and a bad line before some)
    line = json.loads((data["dir"] / "lines.json").read_text())
    found = {(f["eval_id"], f["train_id"], f["kind"], f["level"], f["train_line"]) for f in ray["findings"]}
    assert found == {(e, str(_row(pos)), kind, level, line[pos]) for e, pos, kind, level in PLANTED}
    assert {f["train_file"] for f in ray["findings"]} == {str(data["jsonl"])}
    assert [(c["eval_id"], c["reason"], c["train_matches"], c["examples"]) for c in ray["chance_target_matches"]] == [
        ("q6", "generic", 14, ["700", "1350", "2000"])]
    assert [(f["eval_id"], f["train_id"], f["level"]) for f in ray["near_misses"]] == [("q4", str(_row(6200)), "contained")]
    assert 0.5 <= ray["near_misses"][0]["score"] < 0.6
    assert (ray["train"]["rows"], ray["train"]["records"], ray["train"]["skipped"]) == (10_001, 10_000, {"invalid_json": 1})
    assert [r["where"] for r in ray["train"]["skipped_rows"]] == [f"line {line[4321] + 1}"]


def test_parquet_row_groups_ray_report_is_the_local_report(data, ray_cluster, small_shards, monkeypatch):
    """Relative paths are the driver's: Ray's workers started in another folder (the one Ray was started in)."""
    monkeypatch.chdir(data["dir"])
    assert len(shards_mod.plan_shards(shards_mod.open_source("train.parquet"), SHARD)) >= 20
    local = _report(Path("train.parquet"), Path("eval.jsonl"))
    ray = _report(Path("train.parquet"), Path("eval.jsonl"), engine="ray", jobs=2)
    assert ray == local
    found = {(f["eval_id"], f["train_id"], f["kind"], f["level"], f["train_file"]) for f in ray["findings"]}
    assert found == {(e, f"t{pos:05d}", kind, level, "train.parquet") for e, pos, kind, level in PLANTED}
    assert [f["train_id"] for f in ray["near_misses"]] == ["t06200"]
    assert (ray["train"]["rows"], ray["train"]["format"]) == (10_000, "openai-messages")


def test_a_file_an_actor_cannot_see_is_a_one_line_error(data, ray_cluster, tmp_path):
    cfg = ScanConfig(levels=("exact",))
    index = build_index([("eval", data["eval"])], cfg)
    job = ScanJob(cfg, FormatSpec("unknown", "prompt", None), (("question", "answer"),))  # no row is read
    gone = tmp_path / "only-on-the-driver.jsonl"
    with pytest.raises(InputError) as exc:
        list(run_ray(index, job, [Shard(0, str(gone), "file")]))
    assert str(exc.value) == (f"{gone}: not found on Ray node {socket.gethostname()}; put the train data where every node sees it "
                              "at the same path (NFS, a mounted bucket), or use --engine local")


#: (eval id, train position, kind, level) of every planted leak
PLANTED = [
    ("q0", 5, "pair", "exact"), ("q0", 9000, "pair", "exact"), ("q1", 1500, "prompt", "normalized"),
    ("q2", 3100, "prompt", "near"), ("q3", 4700, "prompt", "contained"), ("q5", 7800, "target", "exact"),
]


def _two_bad_lines(tmp_path: Path) -> Path:
    """A train file of several shards with bad lines 201 and 2701."""
    rows = [json.dumps(_chat(f"question {i} " + " ".join(VOCAB[i % 100 : i % 100 + 30]), "an answer")) + "\n" for i in range(3000)]
    rows[200] = rows[2700] = '{"messages": [}\n'
    train = tmp_path / "train.jsonl"
    train.write_text("".join(rows), encoding="utf-8")
    assert len(shards_mod.plan_shards(shards_mod.open_source(train), SHARD)) >= 3
    return train


def test_process_engine_bad_row_is_the_serial_error(data, small_shards, tmp_path):
    """A worker's InputError reaches the driver whole (it used to break the process pool: its args were the message)."""
    train = _two_bad_lines(tmp_path)
    with pytest.raises(InputError) as local:
        leakcheck.scan(train, data["eval"])
    with pytest.raises(InputError) as procs:
        leakcheck.scan(train, data["eval"], jobs=2)
    assert str(procs.value) == str(local.value)
    assert str(procs.value).startswith(f"{train}: line 201: invalid JSON")


def test_first_bad_row_in_row_order_is_the_error(data, ray_cluster, small_shards, tmp_path):
    """With --on-error fail, the error is the serial engine's: the first bad row of the file, whichever shard fails first."""
    train = _two_bad_lines(tmp_path)
    with pytest.raises(InputError) as local:
        leakcheck.scan(train, data["eval"])
    with pytest.raises(InputError) as ray:
        leakcheck.scan(train, data["eval"], engine="ray")
    assert str(ray.value) == str(local.value)
    assert str(ray.value).startswith(f"{train}: line 201: invalid JSON")


@pytest.mark.parametrize("missing", ["ray", "ray.data"])
def test_without_ray_one_line_says_what_to_install(data, monkeypatch, missing):
    monkeypatch.setitem(sys.modules, missing, None)  # import fails as if it were not installed
    with pytest.raises(UsageError) as exc:
        leakcheck.scan(data["jsonl"], data["eval"], engine="ray")
    assert str(exc.value) == "--engine ray needs Ray: pip install 'leakcheck[ray]'"


def test_what_the_ray_engine_cannot_scan_is_refused_before_any_work(data):
    with pytest.raises(UsageError) as uri:
        leakcheck.scan("s3://bucket/train.jsonl", data["eval"], engine="ray")
    assert str(uri.value) == ("s3://bucket/train.jsonl: --engine ray reads files that every node sees at the same path (local disk, NFS, "
                              "a mounted bucket), not object-store URIs; mount the bucket (s3fs, gcsfuse) or copy the files to shared storage")
    with pytest.raises(UsageError, match=r"^--engine ray scans files: pass the train data as a path"):
        leakcheck.scan([{"text": "a train record in memory"}], data["eval"], engine="ray")
    with pytest.raises(UsageError) as unknown:
        leakcheck.scan(data["jsonl"], data["eval"], engine="spark")
    assert str(unknown.value) == "unknown engine 'spark'; use one of local, ray"


def test_cli_engine_ray_writes_the_local_report(data, ray_cluster, tmp_path):
    """`leakcheck scan --engine ray` end to end: same JSON report as the local engine, same exit code."""
    import re

    from click.testing import CliRunner

    from leakcheck.cli import main

    out = {}
    for engine in ("local", "ray"):
        j = tmp_path / f"{engine}.json"
        res = CliRunner().invoke(main, ["scan", str(data["jsonl"]), str(data["eval"]), "--engine", engine, "--on-error", "skip", "--json", str(j), "-q"])
        assert res.exit_code == 1, res.output
        out[engine] = re.sub(r'"created_at": "[^"]*"', "", j.read_text())
    assert out["ray"] == out["local"]
