"""The eval side's index: learning train templates after the build, saving and loading it,
change no finding (2,000 eval records vs 3,000 train, pinned by the scan before the change)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from leakcheck.config import ScanConfig
from leakcheck.detect import grams
from leakcheck.detect.base import FIELDS
from leakcheck.index import EvalIndex
from leakcheck.scan import build_index, load_records, scan, scan_index

from .fixtures.evalside.make_evalside import write

GOLDEN = json.loads((Path(__file__).parent / "fixtures" / "evalside" / "findings.json").read_text())


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[Path, Path]:
    return write(tmp_path_factory.mktemp("evalside"))


def _summary(r) -> dict:
    def rows(fs):
        return sorted([f.eval_id, f.train_id, f.kind, f.level, round(f.score, 9), f.eval_field, f.train_field] for f in fs)
    return {"findings": rows(r.findings), "near_misses": rows(r.near_misses), "levels": r.parameters["levels"]}


def test_scan_finds_what_it_found_before(files):
    ev, tr = files
    got = _summary(scan(str(tr), str(ev)))
    assert got["levels"]["near"]["suppressed_shingles"]["train prompts"] == 22  # the train sample adds templates
    assert len(got["findings"]) == 1501
    assert got == GOLDEN


def test_saved_index_finds_the_same(files, tmp_path):
    ev, tr = files
    build_index([("eval", str(ev))], ScanConfig()).save(tmp_path / "e.lcx")
    loaded = EvalIndex.load(tmp_path / "e.lcx")
    res = scan_index(str(tr), loaded)["eval"]
    assert _summary(res) == GOLDEN


@pytest.mark.parametrize("level", ["near", "contained"])
def test_templates_learned_later_equal_a_build_that_knew_them(files, level):
    ev, tr = files
    cfg = ScanConfig()
    evals, _ = load_records(str(ev))
    train, _ = load_records(str(tr))
    primed = build_index([("eval", str(ev))], cfg).parts[level].with_train_sample(train)
    det = primed
    assert len(det.templates) > len(build_index([("eval", str(ev))], cfg).parts[level].templates)
    # from scratch: every eval n-gram, minus all templates, distinct per item
    h_parts, item_parts = [], []
    for fi, f in enumerate(FIELDS):
        h, text_of = grams.ngrams(grams.words([getattr(r, f) for r in evals]), det.n)
        h_parts.append(h)
        item_parts.append(text_of + fi * det.E)
    h, item = np.concatenate(h_parts), np.concatenate(item_parts)
    keep = ~np.isin(h, np.array(sorted(det.templates), dtype=np.uint64))
    hs, items, _ = grams.distinct_pairs(h[keep], item[keep])
    size = np.bincount(items, minlength=2 * det.E)
    weak = (size > 0) & (size < det.min_evidence)
    hs, size = hs[~weak[items]], np.where(weak, 0, size)
    assert np.array_equal(det.size, size) and np.array_equal(det.item_h, hs)
    if level == "near":
        live = np.flatnonzero(size)
        sig = det.signatures(hs, np.repeat(np.arange(2 * det.E), size), 2 * det.E)[live]
        assert np.array_equal(det._bands[live], det.band_keys(sig))
