"""Issue 8 §3: canonical text keeps meaning (rubric points, LaTeX case, typographic forms, invisible text)."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import leakcheck
from leakcheck import InputError, ScanConfig
from leakcheck.canon import _INVISIBLE, _TYPOGRAPHIC, canonical_text, is_blank, may_have_latex, normalize, normalize_no_latex, rubric_text
from leakcheck.cli import main
from leakcheck.detect.hashing import KEY_CHARS, prefix_key

from .conftest import write_jsonl
from .helpers import triples

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "canon"
EX = ScanConfig(levels=("exact", "normalized"))
SKIP = ScanConfig(levels=("exact", "normalized"), on_error="skip")


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines()]


# -- rubric banks: criteria with their points -------------------------------------------------

RUBRIC_LEAKS = {("ev-chest", "tr-reordered", "target", "exact"), ("ev-rash", "tr-rash-recased", "target", "normalized")}


def test_healthbench_rubrics_same_criteria_other_points_are_another_label():
    """tr-other-points and tr-algebra have the eval criteria word for word, with other points: no finding."""
    r = leakcheck.scan(FIXTURES / "rubrics_train.jsonl", FIXTURES / "rubrics_eval.jsonl", EX)
    assert r.eval.format == r.train.format == "healthbench"
    assert triples(r) == RUBRIC_LEAKS
    assert r.chance == ()
    tr = {row["prompt_id"]: row for row in _rows("rubrics_train.jsonl")}
    ev = {row["prompt_id"]: row for row in _rows("rubrics_eval.jsonl")}

    def criteria(row: dict) -> set[str]:
        return {c["criterion"] for c in row["rubrics"] if "level:example" in c["tags"]}

    # the fixture really is what the names say
    assert criteria(tr["tr-other-points"]) == criteria(ev["ev-chest"]) == criteria(tr["tr-reordered"])
    assert criteria(tr["tr-algebra"]) == criteria(ev["ev-algebra"])


def test_rubric_gate_passes_when_only_the_points_differ(tmp_path):
    rows = _rows("rubrics_train.jsonl")
    clean = write_jsonl(tmp_path / "train.jsonl", [r for r in rows if r["prompt_id"] in ("tr-water", "tr-other-points", "tr-algebra")])
    res = CliRunner().invoke(main, ["scan", str(clean), str(FIXTURES / "rubrics_eval.jsonl"), "--levels", "exact,normalized"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["scan", str(FIXTURES / "rubrics_train.jsonl"), str(FIXTURES / "rubrics_eval.jsonl"), "--levels", "exact,normalized"])
    assert res.exit_code == 1 and "LEAKAGE FOUND" in res.output


def _verl_table(rows: list[dict], points: pa.DataType) -> pa.Table:
    """The same records as a verl-rubric parquet: tags a struct {level, axis}, points of the given type."""
    rubric = pa.struct([("criterion", pa.string()), ("points", points), ("tags", pa.struct([("level", pa.string()), ("axis", pa.string())]))])
    schema = pa.schema([
        ("data_source", pa.string()),
        ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
        ("reward_model", pa.struct([("style", pa.string()), ("rubrics", pa.list_(rubric))])),
        ("extra_info", pa.struct([("index", pa.int64()), ("prompt_id", pa.string())])),
    ])
    out = []
    for i, r in enumerate(rows):
        rubs = []
        for c in r["rubrics"]:
            tags = dict(t.split(":", 1) for t in c["tags"])
            rubs.append({"criterion": c["criterion"], "points": c["points"], "tags": {"level": tags["level"], "axis": tags["axis"]}})
        out.append({"data_source": "healthbench", "prompt": r["prompt"], "reward_model": {"style": "rubric", "rubrics": rubs},
                    "extra_info": {"index": i, "prompt_id": r["prompt_id"]}})
    return pa.Table.from_pylist(out, schema=schema)


def test_verl_rubric_parquet_points_count_and_int_equals_float(tmp_path):
    """Eval points int64, train points float64 (as pandas writes them): 10 and 10.0 are the same points."""
    ev_rows, tr_rows = _rows("rubrics_eval.jsonl"), _rows("rubrics_train.jsonl")
    ev, tr = tmp_path / "eval.parquet", tmp_path / "train.parquet"
    pq.write_table(_verl_table(ev_rows, pa.int64()), ev)
    pq.write_table(_verl_table(tr_rows, pa.float64()), tr)
    r = leakcheck.scan(tr, ev, EX)
    assert r.eval.format == r.train.format == "verl-rubric"
    ev_index = {row["prompt_id"]: str(i) for i, row in enumerate(ev_rows)}
    tr_index = {row["prompt_id"]: str(i) for i, row in enumerate(tr_rows)}
    assert triples(r) == {(ev_index[e], tr_index[t], k, lv) for e, t, k, lv in RUBRIC_LEAKS}


def test_rubric_text_carries_points_and_sorts_by_normalized_text():
    bank = [{"criterion": "b", "points": 5, "tags": []}, {"criterion": "A", "points": -2.0}, {"criterion": "z", "points": 3, "tags": ["level:cluster"]},
            {"criterion": "c"}, {"criterion": "d", "points": "4"}, {"criterion": "e", "points": 2.5}]
    assert rubric_text(bank) == "A [-2]\nb [5]\nc\nd [4]\ne [2.5]"
    # other points, other text; the same points in another order or type, the same text
    assert rubric_text([{"criterion": "b", "points": 4}, {"criterion": "A", "points": -2}]) != rubric_text(bank[:2])
    assert rubric_text([{"criterion": "A", "points": -2}, {"criterion": "b", "points": 5.0}]) == rubric_text(bank[:2])
    # a bank stored as a JSON string is the same bank
    assert canonical_text(json.dumps(bank), "target") == rubric_text(bank)


# -- LaTeX keeps its case ----------------------------------------------------------------------

def test_latex_case_pairs_are_different_problems():
    """Θ vs θ, |A| vs |a|, \\(A\\) vs \\(a\\), N vs n in display math, \\Theta vs \\theta in prose: no finding.
    Case in the prose around math, and money ($5), still folds."""
    r = leakcheck.scan(FIXTURES / "latex_train.jsonl", FIXTURES / "latex_eval.jsonl", EX)
    assert r.eval.format == "gsm8k"
    assert triples(r) == {("e-prose", "t-prose", "prompt", "normalized"), ("e-money", "t-money", "prompt", "normalized")}


@pytest.mark.parametrize("a, b", [
    ("$\\Theta(n)$", "$\\theta(n)$"),
    ("the order of $|A|$", "the order of $|a|$"),
    ("$$\\sum_{k=1}^{N} k$$", "$$\\sum_{k=1}^{n} k$$"),
    ("\\(A \\cap B\\)", "\\(a \\cap b\\)"),
    ("\\[X^2\\]", "\\[x^2\\]"),
    ("\\begin{align} F &= ma \\end{align}", "\\begin{align} f &= ma \\end{align}"),
    ("every \\Theta(n^2) algorithm", "every \\theta(n^2) algorithm"),
    ("\uff04X\uff04", "$x$"),  # fullwidth dollars are dollars (NFKC), and then math
])
def test_normalize_keeps_case_in_latex(a, b):
    assert normalize(a) != normalize(b)
    assert normalize(a.upper()) != normalize(a.lower()) or a.upper() == a.lower()


@pytest.mark.parametrize("a, b", [
    ("LET $x$ BE an integer", "let $x$ be AN INTEGER"),
    ("Tom has $5 and SPENDS $3", "tom has $5 and spends $3"),  # money, not math: "$" before a digit never closes
    ("It costs $.50 EACH", "it costs $.50 each"),  # "$" after a space never closes
    ("So he pays 40*8=$<<40*8=320>>320 IN TOTAL", "so he pays 40*8=$<<40*8=320>>320 in total"),  # GSM8K calculator annotation
    ("\\Theta(N) GROWTH", "\\Theta(n) growth"),  # only the command name keeps its case
    ("An escaped \\$X and \\$Y", "an escaped \\$x and \\$y"),
])
def test_normalize_folds_case_outside_latex(a, b):
    assert normalize(a) == normalize(b)


# -- typographic forms fold to ASCII ------------------------------------------------------------

TYPOGRAPHIC_LEAKS = {(f"e-{k}", f"t-{k}", "prompt", "normalized") for k in ("quotes", "dash", "minus", "prime", "spaces", "fullwidth")}


def test_typographic_forms_match_at_normalized_and_accents_do_not():
    r = leakcheck.scan(FIXTURES / "typographic_train.jsonl", FIXTURES / "typographic_eval.jsonl", EX)
    assert triples(r) == TYPOGRAPHIC_LEAKS


@pytest.mark.parametrize("typographic, ascii_text", [
    ("It\u2019s \u2018fine\u2019", "it's 'fine'"),
    ("\u201cquoted\u201d \u201elow\u201f", '"quoted" "low"'),
    ("a\u2010b a\u2011b a\u2012b a\u2013b a\u2014b a\u2015b a\u2212b a\u2e3ab", "a-b a-b a-b a-b a-b a-b a-b a-b"),
    ("f\u2032 f\u2033 f\u2034", "f' f'' f'''"),
    ("wait\u2026", "wait..."),
    ("5\u00a0000\u202fUSD\u2009ok\u3000x", "5 000 usd ok x"),
    ("\uff21\uff22\uff23\uff11\uff12", "abc12"),
    ("x\u207b\u00b9", "x-1"),
    ("don\u02bct", "don't"),
])
def test_typographic_forms(typographic, ascii_text):
    assert normalize(typographic) == ascii_text


def test_accents_are_kept():
    assert normalize("sch\u00f6n") == normalize("scho\u0308n") != normalize("schon")


# -- invisible characters --------------------------------------------------------------------

@pytest.mark.parametrize("text", ["\u200b", "\u200b\u2060\ufeff", " \u00ad\u200d \u2061\t", "\u202e\u2066\u2069", "\ufe0f\U000e0041\U000e007f", "\u3164\u115f"])
def test_invisible_only_text_is_blank_and_normalizes_to_nothing(text):
    assert is_blank(text) and normalize(text) == ""


def test_invisible_characters_inside_text_are_dropped():
    assert normalize("zero\u200bwidth \u202aembedded\u202c wo\u00adrd \u2764\ufe0f") == "zerowidth embedded word \u2764"
    assert not is_blank("\u2800") and not is_blank("\u00e9")  # braille blank is a visible cell; accents are text


def test_invisible_only_prompt_is_the_empty_text_error(tmp_path):
    ev = write_jsonl(tmp_path / "eval.jsonl", [{"question": "Which planet is known as the red planet?", "answer": "Mars, for the iron oxide on its surface."}])
    good = {"question": "How many moons does Mars have?", "answer": "Two: Phobos and Deimos."}
    p = write_jsonl(tmp_path / "train.jsonl", [good, {"question": "\u200b\u2060\ufeff", "answer": "x"}])
    with pytest.raises(InputError) as ei:
        leakcheck.scan(p, ev, EX)
    assert str(ei.value) == f"{p}: line 2: prompt is empty; drop the record or pass --prompt-field, or pass --on-error skip"
    r = leakcheck.scan(p, ev, SKIP)
    assert (r.train.rows, r.train.records, r.train.skipped) == (2, 1, {"empty_text": 1})
    res = CliRunner().invoke(main, ["scan", str(p), str(ev), "--levels", "exact,normalized"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert res.output.strip().splitlines() == [f"leakcheck: error: {p}: line 2: prompt is empty; drop the record or pass --prompt-field, or pass --on-error skip"]


def test_invisible_only_chat_turn_and_target_are_empty(tmp_path):
    ev = write_jsonl(tmp_path / "eval.jsonl", [{"question": "Which planet is known as the red planet?", "answer": "Mars, for the iron oxide on its surface."}])
    chats = write_jsonl(tmp_path / "chat.jsonl", [
        {"messages": [{"role": "user", "content": "Name a red planet."}, {"role": "assistant", "content": "Mars."}]},
        {"messages": [{"role": "user", "content": "Name a gas giant."}, {"role": "assistant", "content": "\u2060\u200b \u00ad"}]},
        {"messages": [{"role": "user", "content": "\ufeff\u200c"}, {"role": "assistant", "content": "Saturn."}]},
    ])
    # an invisible-only prompt is an empty prompt: that row's error
    with pytest.raises(InputError) as ei:
        leakcheck.scan(chats, ev, EX)
    assert str(ei.value) == f"{chats}: line 3: prompt is empty; drop the record or pass --prompt-field, or pass --on-error skip"
    # an invisible-only target is no target: the record is read, its prompt compared, counted as no_target
    r = leakcheck.scan(chats, ev, SKIP)
    assert [(s.where, s.reason) for s in r.train.skipped_rows] == [("line 3", "empty_text")]
    assert r.train.no_target == 1 and r.train.records == 2


# -- what the fast paths rely on, checked over every code point -----------------------------------

def _code_points():
    return (chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)


def test_nfkc_and_case_folding_add_no_invisible_or_typographic_character():
    """normalize strips invisibles and folds typographic forms once, before NFKC and case folding."""
    typographic = set(_TYPOGRAPHIC)
    bad = []
    for ch in _code_points():
        n = unicodedata.normalize("NFKC", ch)
        if n == ch and ch.casefold() == ch:
            continue
        for out in (n, unicodedata.normalize("NFKC", n.casefold())):
            if (_INVISIBLE.search(out) and not _INVISIBLE.match(ch)) or (set(out) & typographic and ch not in typographic):
                bad.append(f"U+{ord(ch):04X}")
    assert bad == []


def test_latex_marks_are_all_known():
    """may_have_latex looks for these: nothing else becomes "$" or a backslash under NFKC or case folding."""
    marks = {ch for ch in _code_points() if {"$", "\\"} & set(unicodedata.normalize("NFKC", ch) + ch.casefold())}
    assert marks == {"$", "\\", "\ufe68", "\ufe69", "\uff04", "\uff3c"}
    assert all(may_have_latex(f"a{m}x{m}") for m in marks)


AROUND_LATEX = ["\\A{c}b", "$x{c}$Y", "{c}$x$ Z", "$X${c}5$", "\\begin{{a}}{c}\\end{{a}}Q", "\\(X{c}\\)", "$\\alpha{c}$ {c}I"]


def test_normalize_is_idempotent_next_to_latex_for_every_character_that_changes():
    """Every character that NFKC, case folding or the typographic table changes, or that combines."""
    chars = [ch for ch in _code_points()
             if unicodedata.combining(ch) or unicodedata.normalize("NFKC", ch) != ch or ch.casefold() != ch or ch in _TYPOGRAPHIC or _INVISIBLE.match(ch)]
    bad = []
    for ch in chars:
        for tpl in AROUND_LATEX:
            n = normalize(tpl.format(c=ch))
            if normalize(n) != n:
                bad.append((f"U+{ord(ch):04X}", tpl))
    assert bad == []


@pytest.mark.parametrize("text", [
    "Tom has $5 and SPENDS $3 on candy, then pays 40*8=$<<40*8=320>>320 for PENS and GOES home",
    "Let $G$ be a GROUP and $|A| = 4$; SHOW that the SUBGROUP generated by A has ORDER at least four, ok",
    "A very LONG question about café prices, where the answer is $x$ and X is the UNKNOWN value of the bill",
    "Costs $5 " * 20 + "and then $x$ APPEARS only at the END",
])
def test_prefix_key_on_money_and_math(text):
    assert prefix_key(text) == normalize(text)[:KEY_CHARS]
    if not may_have_latex(text):
        assert normalize_no_latex(text) == normalize(text)
