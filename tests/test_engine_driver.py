"""The process engine: the driver probes shards beside ``jobs - 1`` workers, each shard once."""

from __future__ import annotations

import concurrent.futures
import json

import pytest

import leakcheck
from leakcheck import engine
from leakcheck.errors import InputError
from leakcheck.io import shards as shards_mod
from leakcheck.io.sources import open_source
from leakcheck.scan import _open, build_index

Q = "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did she sell?"
A = "Natalia sold 48/2 = 24 clips in May. She sold 48+24 = 72 clips altogether. #### 72"


def _files(tmp_path, n=800, bad=()):
    train, ev = tmp_path / "train.jsonl", tmp_path / "eval.jsonl"
    rows = []
    for i in range(n):
        q = Q if i % 50 == 7 else f"Problem {i}: a shop sells {i} pens at {i % 7 + 2} dollars each; how much money is that?"
        rows.append(json.dumps({"messages": [{"role": "user", "content": q}, {"role": "assistant", "content": A if i % 50 == 7 else "#### 1"}],
                                "id": f"t{i}"}) + "\n")
    for b in bad:
        rows[b - 1] = '{"messages": [}\n'
    train.write_text("".join(rows))
    ev.write_text(json.dumps({"question": Q, "answer": A}) + "\n")
    return train, ev


def _setup(train, ev, cfg):
    index = build_index([("eval", ev)], cfg)
    opened = _open(train, cfg.train_fields, "train")
    efields = tuple((s.info.fields.get("prompt") or "prompt", s.info.fields.get("target") or "target") for s in index.sets)
    return index, engine.ScanJob(cfg, opened.spec, efields, opened.detected_from)


def test_two_jobs_start_one_worker_and_the_driver_probes_too(tmp_path, monkeypatch):
    train, ev = _files(tmp_path)
    cfg = leakcheck.ScanConfig(levels=("exact", "normalized"))
    index, job = _setup(train, ev, cfg)
    plan = shards_mod.plan_shards(open_source(train), 4096)
    assert len(plan) >= 8
    pools: list[int] = []
    real_pool = concurrent.futures.ProcessPoolExecutor

    def pool(*args, **kw):
        pools.append(kw["max_workers"])
        return real_pool(*args, **kw)

    local: list[int] = []
    real_probe = engine.probe_shard

    def probe(index, job, shard):
        local.append(shard.index)  # only calls in this process are seen: workers import engine afresh
        return real_probe(index, job, shard)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", pool)
    monkeypatch.setattr(engine, "probe_shard", probe)
    seen: list[tuple[int, int]] = []
    got = [r.shard for r in engine.run_processes(index, job, plan, 2, lambda size, n: seen.append((size, n)))]
    assert pools == [1]
    assert sorted(got) == list(range(len(plan)))  # every shard once
    assert local and len(local) < len(plan)  # the driver probed some, the worker the others
    assert sorted(seen) == sorted((s.size, r) for s, r in zip(plan, _records_per_shard(plan)))


def _records_per_shard(plan):
    return [sum(1 for _ in shards_mod.iter_shard(s)) for s in plan]


def test_bad_rows_in_two_shards_raise_the_first_in_row_order(tmp_path, monkeypatch):
    train, ev = _files(tmp_path, bad=(90, 700))
    monkeypatch.setattr(shards_mod, "SHARD_BYTES", 4096)
    with pytest.raises(InputError) as serial:
        leakcheck.scan(train, ev)
    with pytest.raises(InputError) as procs:
        leakcheck.scan(train, ev, jobs=2)
    assert str(procs.value) == str(serial.value)
    assert str(procs.value).startswith(f"{train}: line 90: invalid JSON")


def test_three_jobs_match_the_serial_scan(tmp_path, monkeypatch):
    train, ev = _files(tmp_path)
    monkeypatch.setattr(shards_mod, "SHARD_BYTES", 4096)
    serial = leakcheck.scan(train, ev)
    parallel = leakcheck.scan(train, ev, jobs=3)
    assert [f.to_dict() for f in parallel.findings] == [f.to_dict() for f in serial.findings]
    assert [f.train_line for f in serial.findings if f.kind == "pair"] == [8 + 50 * k for k in range(16)]


def test_a_script_on_standard_input_scans_with_three_jobs(tmp_path):
    """``__main__`` has no file to re-import: workers start anyway (two of them, both from this thread)."""
    import subprocess
    import sys

    train, ev = _files(tmp_path)
    script = ("import leakcheck, leakcheck.io.shards as s\n"
              "s.SHARD_BYTES = 4096\n"
              f"r = leakcheck.scan({str(train)!r}, {str(ev)!r}, jobs=3)\n"
              "print(*[f.train_line for f in r.findings if f.kind == 'pair'])\n")
    out = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [str(8 + 50 * k) for k in range(16)]


def test_one_job_is_the_serial_engine(tmp_path):
    train, ev = _files(tmp_path)
    cfg = leakcheck.ScanConfig(levels=("exact",))
    index, job = _setup(train, ev, cfg)
    plan = shards_mod.plan_shards(open_source(train), 4096)
    got = [(r.shard, r.counts.records) for r in engine.run_processes(index, job, plan, 1)]
    assert got == [(r.shard, r.counts.records) for r in engine.run_serial(index, job, plan)]


def test_the_fork_server_starts_before_the_eval_index_only_for_a_scan_that_uses_workers(tmp_path, monkeypatch):
    started: list[str] = []
    monkeypatch.setattr(engine, "warm_up", lambda: started.append("warm"))
    small = tmp_path / "small.jsonl"
    small.write_text('{"prompt": "q", "completion": "a"}\n')
    big = tmp_path / "big.jsonl"
    with big.open("wb") as fh:  # sparse: its size counts, not its bytes
        fh.truncate(shards_mod.SHARD_BYTES + 1)
    for train, jobs, eng in [(small, 2, "local"), (big, 1, "local"), (big, 2, "ray"), (tmp_path / "nope.jsonl", 2, "local"),
                             (f"{tmp_path}::test", 2, "local"), ([{"prompt": "q"}], 2, "local")]:
        engine.warm_up_for(train, jobs, eng)
    assert started == []
    engine.warm_up_for(big, 2)
    engine.warm_up_for(tmp_path, 2)  # a folder: its files' sizes
    assert started == ["warm", "warm"]


def test_train_templates_learned_in_another_process_equal_those_learned_here(tmp_path, monkeypatch):
    from leakcheck.scan import _open, _sample, start_learning

    train, ev = _files(tmp_path)
    monkeypatch.setattr(shards_mod, "SHARD_BYTES", 4096)
    cfg = leakcheck.ScanConfig()
    learning = start_learning(train, cfg, 2)
    assert learning is not None and start_learning(train, cfg, 1) is None
    assert start_learning(train, leakcheck.ScanConfig(levels=("exact", "normalized")), 2) is None  # nothing to learn
    index = build_index([("eval", ev)], cfg)
    here = index.with_train_sample(_sample(_open(str(train), cfg.train_fields, "train"), cfg)[0])
    there = index.with_learned(learning.result(timeout=120))
    assert there.train_sample == here.train_sample == 800
    sem = leakcheck.ScanConfig(levels=("exact", "semantic"))  # the semantic level learns its IDF the same way
    sem_index = build_index([("eval", ev)], sem)
    sem_here = sem_index.with_train_sample(_sample(_open(str(train), sem.train_fields, "train"), sem)[0]).parts["semantic"]
    sem_learning = start_learning(train, sem, 2)
    assert sem_learning is not None
    sem_there = sem_index.with_learned(sem_learning.result(timeout=120)).parts["semantic"]
    assert sem_there.primed == sem_here.primed == 800
    assert [a.tolist() for a in sem_there.df_train] == [a.tolist() for a in sem_here.df_train] and len(sem_here.df_train[0])
    for lv in ("near", "contained"):
        mine, theirs = here.parts[lv], there.parts[lv]
        assert (lv == "contained") != any(pop == "train prompts" for pop, _, _ in mine.templates.values())  # near: "; how much", ...
        assert theirs.templates == mine.templates and theirs.suppressed_by == mine.suppressed_by
        assert theirs.item_h.tolist() == mine.item_h.tolist() and theirs.size.tolist() == mine.size.tolist()


def test_a_failed_learning_process_is_learned_here(tmp_path):
    from leakcheck.scan import scan_index

    train, ev = _files(tmp_path)
    cfg = leakcheck.ScanConfig()
    index = build_index([("eval", ev)], cfg)
    failed: concurrent.futures.Future = concurrent.futures.Future()
    failed.set_exception(RuntimeError("the learning process died"))
    got = scan_index(train, index, cfg, learning=failed)["eval"]
    want = scan_index(train, index, cfg)["eval"]
    assert got.findings and [f.to_dict() for f in got.findings] == [f.to_dict() for f in want.findings]
