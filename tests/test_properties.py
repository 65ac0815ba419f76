"""Properties (Hypothesis): canonicalization and matching hold for arbitrary text and order."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import leakcheck
from leakcheck import Fields, ScanConfig
from leakcheck.canon import is_blank, normalize
from leakcheck.report.json import dumps

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
# Everything Unicode has, surrogates included (they reach us as "\udxxx" escapes in JSON).
ANY_TEXT = st.text(alphabet=st.one_of(st.characters(codec=None), st.characters(categories=["Cs"])), min_size=1, max_size=40)
# A small alphabet so that random texts collide and normalize to each other often.
SMALL = st.text(alphabet=st.sampled_from(list("aAbB$\\ 1\u200b\u00e9e\u0301\uff21\u00a0\t\n\ufeff\u05d0\U0001f600")), min_size=1, max_size=6)
# LaTeX delimiters, commands and the characters that act next to them: case kept in math,
# fullwidth $ and backslash (NFKC), characters whose case folding adds ASCII letters or marks.
LATEX = st.lists(st.sampled_from(["$", "$$", "\\", "\\(", "\\)", "\\[", "\\]", "\\begin{a}", "\\end{a}", "{", "}", "A", "a", "Th",
                                   " ", "5", "\u0398", "\u00df", "\u0130", "\u0345", "\u0301", "\uff04", "\uff3c", "\u2019", "\u2014", "\u200b"]),
                 min_size=1, max_size=30).map("".join)
CFG = ScanConfig(levels=("exact", "normalized"), max_target_hits=10_000, short_target_chars=0,
                 train_fields=Fields(id="id"), eval_fields=Fields(id="id"))


def _write(path: Path, rows: list[dict]) -> Path:
    # ensure_ascii escapes lone surrogates as \udxxx, the way they appear in real JSONL
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _rows(texts: list[tuple[str, str]], prefix: str) -> list[dict]:
    return [{"id": f"{prefix}{i}", "prompt": p, "completion": c} for i, (p, c) in enumerate(texts)]


def _key(r: leakcheck.ScanResult) -> set[tuple[str, str, str, str]]:
    return {(f.eval_id, f.train_id, f.kind, f.level) for f in r.findings}


@SETTINGS
@given(st.one_of(ANY_TEXT, LATEX))
def test_normalize_is_idempotent(t):
    n = normalize(t)
    assert normalize(n) == n


pairs = st.lists(st.tuples(SMALL, SMALL), min_size=1, max_size=6)


def _scan_texts(train: list[tuple[str, str]], ev: list[tuple[str, str]], cfg: ScanConfig = CFG, shards: int = 1, seed: int | None = None):
    with tempfile.TemporaryDirectory() as d:
        rows = _rows(train, "t")
        if seed is not None:
            random.Random(seed).shuffle(rows)
        if shards == 1:
            tpath = _write(Path(d) / "train.jsonl", rows)
        else:
            tpath = Path(d) / "shards"
            tpath.mkdir()
            for k in range(shards):
                _write(tpath / f"part-{k}.jsonl", rows[k::shards] or [rows[0]])
        epath = _write(Path(d) / "eval.jsonl", _rows(ev, "e"))
        return leakcheck.scan(tpath, epath, cfg)


def _usable(texts: list[tuple[str, str]]) -> bool:
    # blank texts (whitespace or invisible characters only) are bad input, tested in test_canon.py
    return all(not is_blank(p) and not is_blank(c) for p, c in texts)


@SETTINGS
@given(pairs, pairs)
def test_findings_match_normalized_equality_and_exact_implies_normalized(train, ev):
    if not (_usable(train) and _usable(ev)):
        return
    r = _scan_texts(train, ev)
    fields = {"prompt": 0, "target": 1}
    expected = set()
    for i, e in enumerate(ev):
        for j, t in enumerate(train):
            same = {f: normalize(e[k]) == normalize(t[k]) for f, k in fields.items()}
            exact = {f: e[k] == t[k] for f, k in fields.items()}
            # the eval target may also be the whole train prompt (target_in_prompt): a pair too
            inside = normalize(e[1]) == normalize(t[0])
            if same["prompt"] and (same["target"] or inside):
                lvl = "exact" if exact["prompt"] or (exact["target"] if same["target"] else e[1] == t[0]) else "normalized"
                expected.add((f"e{i}", f"t{j}", "pair", lvl))
            elif same["prompt"] or same["target"]:
                f = "prompt" if same["prompt"] else "target"
                expected.add((f"e{i}", f"t{j}", f, "exact" if exact[f] else "normalized"))
    got = {x for x in _key(r) if x[2] in ("pair", "prompt", "target")}
    assert got == expected
    only_norm = _scan_texts(train, ev, ScanConfig(levels=("normalized",), max_target_hits=10_000, short_target_chars=0,
                                                  train_fields=Fields(id="id"), eval_fields=Fields(id="id")))
    assert {x[:3] for x in _key(r) if x[3] == "exact"} <= {x[:3] for x in _key(only_norm)}


@SETTINGS
@given(pairs, pairs, st.integers(0, 1000), st.integers(2, 3))
def test_findings_do_not_depend_on_order_or_sharding(train, ev, seed, shards):
    if not (_usable(train) and _usable(ev)):
        return
    base = _key(_scan_texts(train, ev))
    assert _key(_scan_texts(train, ev, seed=seed)) == base
    assert _key(_scan_texts(train, ev, shards=shards, seed=seed)) == base


@SETTINGS
@given(st.lists(st.tuples(ANY_TEXT, ANY_TEXT), min_size=1, max_size=5), st.lists(st.tuples(ANY_TEXT, ANY_TEXT), min_size=1, max_size=5))
def test_arbitrary_unicode_never_crashes_and_reports_are_byte_identical(train, ev):
    if not (_usable(train) and _usable(ev)):
        return
    from leakcheck.report.json import write_json
    from leakcheck.report.markdown import write_markdown

    with tempfile.TemporaryDirectory() as d:
        tpath = _write(Path(d) / "train.jsonl", _rows(train, "t"))
        epath = _write(Path(d) / "eval.jsonl", _rows(ev, "e"))
        a, b = leakcheck.scan(tpath, epath, CFG), leakcheck.scan(tpath, epath, CFG)
        strip = lambda s: [line for line in s.splitlines() if '"created_at"' not in line]  # noqa: E731
        assert strip(dumps(a)) == strip(dumps(b))
        for f in a.findings:
            assert f.level in ("exact", "normalized")
        write_json(a, Path(d) / "r.json")
        write_markdown(a, Path(d) / "r.md")
        assert json.loads((Path(d) / "r.json").read_text(encoding="utf-8"))["summary"]["eval_records"] == len(ev)


LONG_TEXT = st.lists(st.one_of(ANY_TEXT, SMALL, LATEX, st.sampled_from(["word", "  ", " ", "\n", "Ab", "e\u0301", "\u0301", "ﬁ", "ß"])), min_size=1, max_size=120).map("".join)


@SETTINGS
@given(LONG_TEXT)
def test_prefix_key_is_the_head_of_the_normalized_text(t):
    """The normalized level's fast path never changes what matches."""
    from leakcheck.detect.hashing import KEY_CHARS, prefix_key

    assert prefix_key(t) == normalize(t)[:KEY_CHARS]
