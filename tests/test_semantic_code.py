"""The ``semantic`` level on code: a rephrased program is found by its prose and literals, a look-alike is not."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from leakcheck.cli import main
from leakcheck.config import ScanConfig, SemanticConfig
from leakcheck.detect import embed, semantic
from leakcheck.detect.codeprose import prose_of
from leakcheck.detect.semantic import literal_keys
from leakcheck.records import Record
from leakcheck.detect.shapes import example_sequence, example_shapes, shape_overlap

from .conftest import REPO, SHARED_DATA, write_jsonl

FIX = REPO / "tests" / "fixtures" / "semantic_code"
TRAIN, EVAL = FIX / "train.jsonl", FIX / "eval.jsonl"


@pytest.fixture(autouse=True)
def no_extra(monkeypatch):
    """Lexical level only: the packaged model, if installed, stays off."""
    monkeypatch.setattr(embed, "packaged", lambda: None)


def scan(tmp_path: Path, *args: str, train: Path = TRAIN, name: str = "r", rc: int | None = 1) -> dict:
    out = tmp_path / f"{name}.json"
    res = CliRunner().invoke(main, ["scan", str(train), *args, "--levels", "semantic", "--json", str(out)])
    assert rc is None or res.exit_code == rc, res.output
    return json.loads(out.read_text())


def test_a_rephrased_function_with_renamed_identifiers_is_found_and_one_with_the_same_signature_is_not(tmp_path):
    """t-rephrase renames running_total/values/out to cumulative_sums/seq/result, rewords the docstring,
    turns the for loop into a while loop and keeps the examples; t-same-shape has the signature
    ``(values: List[int]) -> List[int]`` of the same eval item but doubles its input."""
    r = scan(tmp_path, str(EVAL))
    assert [(f["eval_id"], f["train_id"], f["kind"], f["level"]) for f in r["findings"]] == [("Fx/1", "t-rephrase", "prompt", "semantic")]
    f = r["findings"][0]
    d = f["detail"]
    assert (d["lexical"], d["prose"], d["literals"], d["shapes"], d["sequence"], d["embedding"], d["target_agreement"]) == (
        0.4442, 0.4876, 1.0, 1.0, True, None, "unknown")
    # code against code: the mean of the whole-text and prose cosines, plus 0.15 x the literals' Jaccard,
    # plus 0.1 x the overlap of the examples' shapes ([I,I,I,I,I] twice on both sides), plus 0.1 for the same examples
    assert f["score"] == round((0.4442 + 0.4876) / 2 + 0.15 * 1.0 + 0.1 * 1.0 + 0.1, 4)
    p = r["parameters"]["levels"]["semantic"]
    assert (p["code_threshold"], p["code_prose_weight"], p["code_literal_weight"], p["code_shape_weight"], p["code_sequence_weight"]) == (
        0.28, 0.5, 0.15, 0.1, 0.1)
    assert not [m for m in r["near_misses"] if m["train_id"] == "t-same-shape"]


REPHRASE_NEW_VALUES = '''def how_many_under(sample: list, cutoff: float) -> int:
    """ Gives back the amount of entries of sample that fall short of cutoff.
    >>> how_many_under([2.5, 9.0, 0.75], 3.0)
    2
    >>> how_many_under([], 8.5)
    0
    """
    result = 0
    i = 0
    while i < len(sample):
        if sample[i] < cutoff:
            result = result + 1
        i += 1
    return result
'''


def test_a_rephrase_with_new_values_is_found_by_their_shapes_and_one_with_other_shapes_is_not(tmp_path, monkeypatch):
    """t-new-values rephrases Fx/0 (count_below) with every value changed but three floats in its
    first example, as the eval item has; t-two-values is the same text with a two-float example. The
    sequence of examples is left out (it would find t-new-values too): this is the shapes' test."""
    monkeypatch.setattr(semantic, "SEQUENCE_WEIGHT", 0.0)
    chat = lambda i, code: {"id": i, "messages": [{"role": "user", "content": "Write the following Python function."},  # noqa: E731
                                                  {"role": "assistant", "content": code}]}
    rows = [json.loads(line) for line in TRAIN.read_text().splitlines()]
    rows += [chat("t-new-values", REPHRASE_NEW_VALUES),
             chat("t-two-values", REPHRASE_NEW_VALUES.replace("[2.5, 9.0, 0.75], 3.0)\n    2", "[2.5, 9.0], 3.0)\n    1"))]
    train = write_jsonl(tmp_path / "train.jsonl", rows)
    r = scan(tmp_path, str(EVAL), train=train)
    got = {f["train_id"]: (f["eval_id"], f["detail"]["shapes"], f["score"]) for f in r["findings"]}
    assert sorted(got) == ["t-new-values", "t-rephrase"] and got["t-new-values"][:2] == ("Fx/0", 1.0)
    assert not [m for m in r["near_misses"] if m["train_id"] == "t-two-values"]
    # the shapes decide it: without their term the rephrase is a near miss under the code threshold
    monkeypatch.setattr(semantic, "SHAPE_WEIGHT", 0.0)
    r = scan(tmp_path, str(EVAL), train=train, name="no-shapes")
    assert [f["train_id"] for f in r["findings"]] == ["t-rephrase"]
    assert [(m["train_id"], m["score"]) for m in r["near_misses"]] == [("t-new-values", round(got["t-new-values"][2] - 0.1, 4))]


MODP = '''def modp(n: int, p: int):
    """Return 2^n modulo p (be aware of numerics).
    >>> modp(3, 5)
    3
    >>> modp(1101, 101)
    2
    >>> modp(0, 101)
    1
    >>> modp(3, 11)
    8
    """
'''
MODP_REPHRASE = '''def power_of_two_mod(num: int, divisor: int):
    """Give back 2^num modulo divisor (careful with numerics).
    >>> power_of_two_mod(4, 6)
    4
    >>> power_of_two_mod(1102, 102)
    4
    >>> power_of_two_mod(0, 102)
    1
    >>> power_of_two_mod(4, 12)
    4
    """
    result = 1
    count = 0
    while count < num:
        result = (result * 2) % divisor
        count += 1
    return result
'''


def test_a_rephrase_with_new_values_and_no_list_is_found_by_its_sequence_of_examples(tmp_path, monkeypatch):
    """Every name, word and value of modp is rephrased; its four calls of two ints giving an int are kept.
    The same text with three examples writes another sequence; an eval set where two records write
    the same sequence gives it to neither."""
    ev = write_jsonl(tmp_path / "eval.jsonl", [{"task_id": "M/0", "prompt": MODP, "canonical_solution": "    return pow(2, n, p)\n"},
                                               {"task_id": "M/1", "prompt": "def add(a: int, b: int):\n    \"\"\"Add.\"\"\"\n",
                                                "canonical_solution": "    return a + b\n"}])
    three = MODP_REPHRASE.replace("    >>> power_of_two_mod(4, 12)\n    4\n", "")
    train = write_jsonl(tmp_path / "train.jsonl", [{"id": "t-four", "text": MODP_REPHRASE}, {"id": "t-three", "text": three}])
    r = scan(tmp_path, str(ev), train=train)
    got = {f["train_id"]: (f["eval_id"], f["detail"]["sequence"], f["score"]) for f in r["findings"]}
    assert list(got) == ["t-four"] and got["t-four"][:2] == ("M/0", True)
    assert example_sequence(prose_of(three)) not in (0, example_sequence(prose_of(MODP)))  # t-three: another sequence, not found
    # the sequence decides it: without its term the rephrase is under the code threshold
    monkeypatch.setattr(semantic, "SEQUENCE_WEIGHT", 0.0)
    r0 = scan(tmp_path, str(ev), train=train, name="no-seq", rc=0)
    assert r0["findings"] == [] and got["t-four"][2] - 0.1 < r0["parameters"]["levels"]["semantic"]["code_threshold"]
    monkeypatch.undo()
    monkeypatch.setattr(embed, "packaged", lambda: None)
    # a sequence two eval records write tells neither apart
    twin = write_jsonl(tmp_path / "twin.jsonl", [{"task_id": "M/0", "prompt": MODP, "canonical_solution": "    return pow(2, n, p)\n"},
                                                 {"task_id": "M/2", "prompt": MODP.replace("modp", "other").replace("Return 2^n modulo p", "Give 2^n mod p"),
                                                  "canonical_solution": "    return n % p\n"}])
    r2 = scan(tmp_path, str(twin), train=train, name="twin", rc=0)
    assert r2["findings"] == [] and {m["detail"]["sequence"] for m in r2["near_misses"]} == {None}
    cfg = ScanConfig(levels=("semantic",), semantic=SemanticConfig(embedder="none"))
    keys = lambda prompts: semantic.SemanticIndex([Record(f"e{i}", i, p) for i, p in enumerate(prompts)], cfg).unique_sequences.tolist()  # noqa: E731
    assert keys([MODP, MODP.replace("modp", "other")]) == [0, 0] and keys([MODP, "def add(a, b):\n    return a + b\n"])[0] != 0


def test_example_sequences_keep_calls_kinds_and_booleans_in_order():
    key = lambda p: example_sequence(p)  # noqa: E731
    base = "f('ab', 'c')\nTrue\nf('x', 'yz')\nFalse\nf('', 'q')\nFalse"
    assert key(base) == key(base.replace("'ab'", "'zzz'").replace("f(", "g(")) != 0
    assert key(base) != key(base.replace("True", "False", 1))  # a result that is True stays True
    assert key(base) != key(base.replace("'c'", "3"))  # kinds count
    assert key("f(1, 2) == 3") == 0  # too few literals to be a key


def test_example_shapes_read_lists_and_c_arrays_of_literals_and_nothing_else():
    py = example_shapes(">>> f([1, 2, 3], ['a', 'b'])\n[[1, 2], [3, 4]]\n>>> f([0.5, -1.0], [True, None])")
    assert len(py) == 7  # [I,I,I] [S,S] [I,I] [I,I] [[I,I],[I,I]] [F,F] [B,N]
    assert len(set(py)) == 6 and example_shapes("[[1, 2], [3]]") != example_shapes("[[1, 2], [3, 4]]")
    assert example_shapes("int xs[] = {1, 2, 3};") == example_shapes("xs = [7, 8, 9]") != example_shapes("xs = [7, 8]")
    assert example_shapes("[1, 2]") != example_shapes("['1', '2']") != example_shapes("[1.0, 2.0]")
    # an element that is not a literal, a single element, an empty container: no shape
    assert example_shapes("a[i], {x, y}, [n + 1, 2], [5], [], {}") == ()
    assert shape_overlap(example_shapes("[1, 2] [3, 4]"), example_shapes("[5, 6]")) == 0.5
    assert shape_overlap((), example_shapes("[5, 6]")) == 0.0


def test_the_index_of_code_holds_no_eval_text_and_finds_the_same_with_two_jobs(tmp_path):
    idx = tmp_path / "code.lcx"
    res = CliRunner().invoke(main, ["index", str(EVAL), "--levels", "semantic", "-o", str(idx)])
    assert res.exit_code == 0, res.output
    blob = idx.read_bytes()
    for text in (b"running_total", b"Return the list of running totals", b"common_prefix", b"shift_letters", b"flower"):
        assert text not in blob
    direct = scan(tmp_path, str(EVAL), name="direct")
    indexed = scan(tmp_path, "--index", str(idx), "-j", "2", name="indexed")
    key = lambda r: [(f["eval_id"], f["train_id"], f["score"], f["detail"]) for f in r["findings"]]  # noqa: E731
    assert key(direct) == key(indexed) and len(key(direct)) == 1


def test_an_index_saved_without_the_prose_vectors_is_rebuilt_not_misread(tmp_path):
    """An index from before code was compared on its prose: a one-line error naming the file and the fix (exit 2)."""
    idx = tmp_path / "old.lcx"
    assert CliRunner().invoke(main, ["index", str(EVAL), "--levels", "semantic", "-o", str(idx)]).exit_code == 0
    with np.load(idx) as z:
        arrays = {k: z[k] for k in z.files if not k.startswith("semantic/tf_prose")}
    old = tmp_path / "older.lcx"
    with open(old, "wb") as fh:
        np.savez(fh, **arrays)
    res = CliRunner().invoke(main, ["scan", str(TRAIN), "--index", str(old), "--levels", "semantic"])
    assert res.exit_code == 2
    version = json.loads(bytes(arrays["header.json"]).decode())["leakcheck_version"]
    assert res.output == (f"leakcheck: error: {old}: its semantic part lacks 'tf_prose_data' (written by leakcheck {version}); "
                          "rebuild it with this leakcheck: leakcheck index ...\n")


def test_the_prose_of_code_is_its_docstrings_comments_strings_and_prose_lines():
    py = ('Write a function that adds.\nimport math\n\ndef add(a, b):\n    """Add two numbers.\n    >>> add(2, 3)\n    5\n    """\n'
          "    total = a + b  # plain sum\n    return total\n")
    assert prose_of(py).splitlines() == ["Write a function that adds.", "Add two numbers.", "    >>> add(2, 3)", "    5", "plain sum"]
    c = '#include <stdio.h>\n// Sum of two ints\nint add(int a, int b) {\n    /* no overflow check */\n    return a + b;\n}\nint main() { printf("%d\\n", add(2, 3)); }\n'
    assert prose_of(c).splitlines() == ["Sum of two ints", "no overflow check", "%d\\n"]
    assert prose_of("x = 1\nfor i in range(3):\n    x += i\n") == ""


def test_literals_are_numbers_and_short_strings_and_a_docstring_is_none():
    assert literal_keys('"""Doc."""\nreturn x') == frozenset()
    assert literal_keys("return ''") == literal_keys('return ""') != frozenset()
    assert len(literal_keys("f([1, 2.5, -3], 'ab')")) == 4
    assert literal_keys("f(1, 2)") != literal_keys("f(1, 3)")


@pytest.mark.skipif(not (SHARED_DATA / "rephrase").is_dir(), reason="../shared/data is not present")
def test_humaneval_python_rephrases_are_found_among_mbpp(tmp_path):
    """All 164 HumanEval items against their rephrases hidden among the 974 MBPP programs (the benchmark's mixed protocol)."""
    reph = [json.loads(line).get("text", "") if line.strip() else ""
            for line in (SHARED_DATA / "rephrase" / "humaneval_python.jsonl").read_text().splitlines()]
    mbpp = [json.loads(line) for line in (SHARED_DATA / "mbpp" / "mbpp.jsonl").read_text().splitlines()]
    rows = [{"id": f"reph-{i}", "text": t} for i, t in enumerate(reph) if t.strip()]
    rows += [{"id": f"mbpp-{r['task_id']}", "text": f"{r['text']}\n{r['code']}"} for r in mbpp]
    train = write_jsonl(tmp_path / "train.jsonl", rows)
    ev = tmp_path / "HumanEval.jsonl"
    ev.write_bytes(gzip.decompress((SHARED_DATA / "humaneval" / "HumanEval.jsonl.gz").read_bytes()))
    r = scan(tmp_path, str(ev), "--embedder", "none", train=train)
    pairs = {(f["eval_id"], f["train_id"]) for f in r["findings"]}
    right = {p for p in pairs if p[1].startswith("reph-") and p[0] == f"HumanEval/{p[1][5:]}"}
    # measured: 130 of the 147 rephrases, 20 findings naming another task or an MBPP program
    # (120 and 18 before the examples' shapes counted, 110 and 49 before the literals)
    assert len(right) >= 127 and len(pairs - right) <= 23, (len(right), len(pairs - right))


@pytest.mark.skipif(not (SHARED_DATA / "rephrase").is_dir(), reason="../shared/data is not present")
def test_humaneval_python_rephrases_alone_pass_the_papers_embedding_row_on_characters(tmp_path):
    """The paper's protocol (train = the 147 rephrases) through the CLI, no embedder: F1 over all items against Multi-QA BERT's 0.938."""
    reph = [json.loads(line).get("text", "") if line.strip() else ""
            for line in (SHARED_DATA / "rephrase" / "humaneval_python.jsonl").read_text().splitlines()]
    train = write_jsonl(tmp_path / "train.jsonl", [{"id": f"reph-{i}", "text": t} for i, t in enumerate(reph) if t.strip()])
    ev = tmp_path / "HumanEval.jsonl"
    ev.write_bytes(gzip.decompress((SHARED_DATA / "humaneval" / "HumanEval.jsonl.gz").read_bytes()))
    r = scan(tmp_path, str(ev), "--embedder", "none", train=train)
    tp = sum(f["eval_id"] == f"HumanEval/{f['train_id'][5:]}" for f in r["findings"])
    fp = len(r["findings"]) - tp
    f1 = 2 * tp / (2 * tp + fp + (147 - tp))
    # measured: 132 found, 2 naming another item, F1 0.940 (0.875 before the examples' shapes and sequence)
    assert (tp, fp) == (132, 2) and f1 > 0.938, (tp, fp, f1)


def test_the_hashed_ngrams_are_scikit_learns_character_ngrams():
    """Cosines of term_counts vectors equal those of HashingVectorizer(analyzer="char") but for rare hash collisions."""
    from sklearn.feature_extraction.text import HashingVectorizer
    from sklearn.preprocessing import normalize

    from leakcheck.detect.semantic import term_counts

    texts = ["Janet's ducks lay 16 eggs per day.", "JANET'S   ducks\n\n lay 16 eggs\tper day!", "def f(x):\n    return x + 1\n",
             "int f(int x) { return x + 1; }", "Schön, café: naïve façade", "日本語のテキストです", "", "ab"]
    ours = normalize(term_counts(texts))
    hv = HashingVectorizer(analyzer="char", ngram_range=(2, 5), n_features=1 << 20, alternate_sign=False, norm=None)
    m = hv.transform(texts)
    m.data = 1.0 + np.log(m.data)
    theirs = normalize(m)
    assert np.abs((ours @ ours.T).toarray() - (theirs @ theirs.T).toarray()).max() < 0.01
    assert [ours[i].nnz for i in range(len(texts))] == [theirs[i].nnz for i in range(len(texts))]
