"""The shard plan of a parallel scan: equal shards, a multiple of the worker count, same findings."""

from __future__ import annotations

import json

import pytest

import leakcheck
from leakcheck.engine import shard_bytes
from leakcheck.io import chat_lines
from leakcheck.io import shards as shards_mod
from leakcheck.io.sources import open_source

Q = "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did she sell?"
A = "Natalia sold 48/2 = 24 clips in May. She sold 48+24 = 72 clips altogether. #### 72"


def _train(path, n: int) -> None:
    with open(path, "w") as fh:
        for i in range(n):
            q = Q if i % 37 == 5 else f"Problem {i}: a shop sells {i} pens at {i % 7 + 2} dollars each; how much money is that?"
            fh.write(json.dumps({"messages": [{"role": "user", "content": q}, {"role": "assistant", "content": A if i % 37 == 5 else "#### 1"}],
                                 "id": f"t{i}"}) + "\n")


@pytest.mark.parametrize("jobs", [2, 3])
def test_parallel_plan_is_equal_shards_a_multiple_of_jobs(tmp_path, jobs):
    p = tmp_path / "train.jsonl"
    _train(p, 600)
    size = p.stat().st_size
    target = shard_bytes(size, jobs, 8192)
    plan = shards_mod.plan_shards(open_source(p), target)
    assert plan == shards_mod.plan_shards(open_source(p), target)  # deterministic
    assert len(plan) % jobs == 0 and len(plan) >= size // 8192
    longest = max(len(line) for line in p.read_bytes().splitlines(keepends=True))
    assert max(s.size for s in plan) - min(s.size for s in plan) <= len(plan) * longest
    assert sum(s.size for s in plan) == size and [s.index for s in plan] == list(range(len(plan)))
    assert plan[-1].line_base + sum(1 for _ in shards_mod.iter_shard(plan[-1])) == 600


def test_serial_and_small_inputs_keep_the_default_shards():
    assert shard_bytes(10**9, 1) == shards_mod.SHARD_BYTES
    assert shard_bytes(shards_mod.SHARD_BYTES, 2) == shards_mod.SHARD_BYTES  # one shard: scanned in the driver


def test_findings_do_not_depend_on_the_plan(tmp_path, monkeypatch):
    p, ev = tmp_path / "train.jsonl", tmp_path / "eval.jsonl"
    _train(p, 600)
    ev.write_text(json.dumps({"question": Q, "answer": A}) + "\n")
    cfg = leakcheck.ScanConfig()
    whole = leakcheck.scan(p, ev, cfg)
    monkeypatch.setattr(shards_mod, "SHARD_BYTES", 8192)
    parallel = leakcheck.scan(p, ev, cfg, jobs=2)
    rows = [(f.kind, f.level, f.train_line) for f in whole.findings]
    assert rows == [(f.kind, f.level, f.train_line) for f in parallel.findings]
    assert rows == [("pair", "exact", 1 + 5 + 37 * k) for k in range(17)]


def test_the_tail_of_a_parallel_plan_is_cut_in_quarter_shards(tmp_path, monkeypatch):
    """Workers that take shards as they free up finish together when the last shards are short."""
    p = tmp_path / "train.jsonl"
    _train(p, 600)
    size = p.stat().st_size
    target = shard_bytes(size, 2, 8192)
    plan = shards_mod.plan_shards(open_source(p), target, tail_bytes=2 * target)
    plain = shards_mod.plan_shards(open_source(p), target)
    longest = max(len(line) for line in p.read_bytes().splitlines(keepends=True))
    head = [s for s in plan if s.start < size - 2 * target]
    assert [(s.start, s.stop) for s in head] == [(s.start, s.stop) for s in plain[: len(head)]]
    tail = plan[len(head):]
    assert len(tail) >= 7 and all(s.size <= target // 4 + longest for s in tail)
    assert sum(s.size for s in plan) == size and [s.index for s in plan] == list(range(len(plan)))
    assert [r.number for s in plan for r in shards_mod.iter_shard(s)] == list(range(1, 601))
    # the scan plans it so with more than one job
    from leakcheck.scan import _shard_size

    monkeypatch.setattr(shards_mod, "SHARD_BYTES", 8192)
    assert _shard_size(open_source(p), 2) == {"target_bytes": target, "tail_bytes": 2 * target}
    assert _shard_size(open_source(p), 1) == {}


@pytest.mark.parametrize("compiled", [pytest.param(True, marks=pytest.mark.skipif(chat_lines._module() is None, reason="leakcheck._chatlines is not compiled")),
                                      False])
def test_a_plan_cuts_ranges_at_line_ends_and_counts_the_lines_before_them(tmp_path, monkeypatch, compiled):
    """Against the file's bytes: ranges back to back from 0 to the end, each ending just past the
    first newline at or after its size (or at the end), its line number the newlines before it;
    with the newlines counted in C and in Python."""
    from hypothesis import given, settings
    from hypothesis import strategies as st


    if not compiled:
        monkeypatch.setenv("LEAKCHECK_NO_KERNEL", "1")
    path = tmp_path / "t.jsonl"

    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"x")), min_size=1, max_size=40), st.booleans(),
           st.integers(1, 90), st.sampled_from([0, 50, 10**6]))
    def check(lines, last_newline, target, tail):
        data = b"\n".join(lines) + (b"\n" if last_newline else b"")
        if not data:
            return
        path.write_bytes(data)
        plan = shards_mod._line_shards(str(path), len(data), target, 0, tail)
        start = 0
        for i, s in enumerate(plan):
            want = target if len(data) - start > tail else max(1, target // 4)
            k = data.find(b"\n", start + want)
            stop = len(data) if start + want > len(data) or k < 0 else k + 1
            assert (s.index, s.start, s.stop, s.size) == (i, start, stop, stop - start)
            assert s.line_base == data[:start].count(b"\n")
            start = stop
        assert start == len(data)

    check()
