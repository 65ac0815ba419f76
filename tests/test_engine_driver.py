"""The process engine: the driver probes shards beside ``jobs - 1`` workers, each shard once."""

from __future__ import annotations

import concurrent.futures
import json
import pickle

import pytest

import leakcheck
from leakcheck.io import chat_lines
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

    def probe(index, job, shard, *ahead):
        local.append(shard.index)  # only calls in this process are seen: workers import engine afresh
        return real_probe(index, job, shard, *ahead)

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


def _report(result) -> dict:
    from leakcheck.report.json import to_dict

    d = to_dict(result)
    d.pop("created_at")
    return d


def _templated(tmp_path, n=800):
    """Train prompts that share a long instruction (a train template: 100% of the sample); the eval
    question has it too, so only the suppressed template keeps the other train questions from
    matching it at ``near``. Every 50th train row is the eval record itself."""
    instruction = ("You are a careful assistant for grade school arithmetic. Read the question below, think about it step "
                   "by step in private, and then answer it with one whole number only, with no units, no words and nothing "
                   "else at all. Question:")
    train, ev = tmp_path / "train.jsonl", tmp_path / "eval.jsonl"
    q, a = f"{instruction} how many legs does a spider have?", "#### 8"
    rows = [{"prompt": q if i % 50 == 7 else f"{instruction} what is {i} plus {i + 1}?",
             "completion": a if i % 50 == 7 else f"#### {2 * i + 1}"} for i in range(n)]
    train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ev.write_text(json.dumps({"question": q, "answer": a}) + "\n")
    return train, ev


def test_workers_start_while_the_train_templates_are_learned_and_apply_them(tmp_path, monkeypatch):
    """The learning still running: the worker loads the index meanwhile, the driver reads its
    first shard ahead, and every shard is probed with the templates (the report is the serial one)."""
    import threading

    from leakcheck.index import TrainLearned
    from leakcheck.scan import _sample, scan_index

    train, ev = _templated(tmp_path)
    monkeypatch.setattr(shards_mod, "SHARD_BYTES", 8192)
    cfg = leakcheck.ScanConfig()
    index = build_index([("eval", ev)], cfg)
    learned = TrainLearned.of(_sample(_open(str(train), cfg.train_fields, "train"), cfg)[0], cfg)
    ahead: list[int] = []
    real_ahead = engine.read_ahead

    def read_ahead(base, job, shard):
        got = real_ahead(base, job, shard)
        ahead.append(shard.index if got is not None and not learning.done() else -1)
        return got

    monkeypatch.setattr(engine, "read_ahead", read_ahead)
    learning: concurrent.futures.Future = concurrent.futures.Future()
    threading.Timer(1.0, learning.set_result, (learned,)).start()
    parallel = scan_index(train, index, cfg, jobs=2, learning=learning)["eval"]
    assert ahead == [0]  # read while the learning was still running
    assert [(f.kind, f.level, f.train_line) for f in parallel.findings] == [("prompt", "exact", 8 + 50 * k) for k in range(16)]
    assert _report(parallel) == _report(scan_index(train, index, cfg)["eval"])
    # without the train template every other train question would be a near match of the eval one
    # without the train template the other train questions are near siblings of the eval one
    bare = _report(scan_index(train, index, leakcheck.ScanConfig(levels=("near",), sample_size=0))["eval"])
    assert bare["siblings"] and not _report(parallel)["siblings"]


def test_a_shard_read_ahead_is_probed_as_read_and_its_words_are_not_hashed_again(tmp_path, monkeypatch):
    from leakcheck.detect import fuzzy, grams

    train, ev = _files(tmp_path)
    cfg = leakcheck.ScanConfig(batch_size=64)
    index, job = _setup(train, ev, cfg)
    (shard,) = shards_mod.plan_shards(open_source(train))
    want = engine.probe_shard(index, job, shard)
    fuzzy.forget_words()
    ahead = engine.read_ahead(index, job, shard)
    assert ahead is not None and ahead.counts.records == 800 == len(ahead.records)
    if chat_lines._module() is not None:  # read in C: the text levels will probe the lines that could match them alone
        assert ahead.sparse is not None and ahead.sparse.levels == {"exact", "normalized"}
        assert ahead.sparse.rows == {i for i in range(800) if i % 50 == 7}  # the copies of the eval question
    hashed: list[int] = []
    real = grams.words
    monkeypatch.setattr(grams, "words", lambda texts: hashed.append(len(texts)) or real(texts))
    got = engine.probe_shard(index, job, shard, ahead)
    assert hashed == []  # every batch's words were ready, for both fuzzy levels and both fields
    assert got.counts == want.counts and got.counts.records == 800
    assert pickle.dumps(got.state) == pickle.dumps(want.state)  # the same matches, in the same order


def test_a_shard_with_a_bad_row_is_not_read_ahead(tmp_path):
    train, ev = _files(tmp_path, bad=(90,))
    cfg = leakcheck.ScanConfig()
    index, job = _setup(train, ev, cfg)
    (shard,) = shards_mod.plan_shards(open_source(train))
    assert engine.read_ahead(index, job, shard) is None
    with pytest.raises(InputError, match="line 90: invalid JSON"):
        engine.probe_shard(index, job, shard)


def test_a_driver_that_learns_itself_reads_nothing_ahead(tmp_path, monkeypatch):
    from leakcheck.scan import scan_index

    train, ev = _templated(tmp_path)
    monkeypatch.setattr(shards_mod, "SHARD_BYTES", 8192)
    monkeypatch.setattr(engine, "read_ahead", lambda *a: pytest.fail("read ahead, then learned here: its words are dropped"))
    cfg = leakcheck.ScanConfig()
    index = build_index([("eval", ev)], cfg)
    parallel = scan_index(train, index, cfg, jobs=2)["eval"]  # no learning process: this one learns
    assert _report(parallel) == _report(scan_index(train, index, cfg)["eval"])


def test_a_worker_probes_the_shard_it_read_ahead_and_drops_those_another_worker_took(tmp_path, monkeypatch):
    """The worker's side, run here: its first shard read ahead while the templates are learned."""
    from leakcheck.detect import fuzzy, grams

    train, ev = _files(tmp_path)
    cfg = leakcheck.ScanConfig(batch_size=64)
    index, job = _setup(train, ev, cfg)
    plan = shards_mod.plan_shards(open_source(train), 8192)
    assert len(plan) >= 4
    monkeypatch.setattr(engine, "_WORKER", {})
    engine._init_worker(index.to_bytes(with_text=True, compress=False), job)
    want = [pickle.dumps(engine.probe_shard(engine._WORKER["base"], job, sh).state) for sh in plan]  # the worker's index
    fuzzy.forget_words()
    engine._worker_read_ahead(plan[1])
    engine._worker_read_ahead(plan[2])  # this worker's guess: another worker gets shard 2 first
    hashed: list[int] = []
    real = grams.words
    monkeypatch.setattr(grams, "words", lambda texts: hashed.append(len(texts)) or real(texts))
    got = engine._worker_step(plan[1])
    assert hashed == [] and pickle.dumps(got.state) == want[1]  # read ahead: nothing tokenized again
    got = engine._worker_step(plan[3])
    assert hashed and pickle.dumps(got.state) == want[3] and engine._WORKER["ahead"] == {}  # shard 2's read-ahead dropped


def test_submit_once_returns_at_once_and_its_future_carries_the_result_or_the_error():
    import os

    fut = engine.submit_once(os.getpid)
    assert fut.result(timeout=120) != os.getpid()  # another process
    bad = engine.submit_once(int, "not a number")
    with pytest.raises(ValueError, match="invalid literal"):
        bad.result(timeout=120)
