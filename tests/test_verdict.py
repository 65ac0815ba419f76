"""The verdict: the gate judges the strongest evidence, and more evidence never lowers it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import leakcheck
from leakcheck import Fields, Policy, ScanConfig
from leakcheck.cli import main
from leakcheck.config import KINDS, LEVELS
from leakcheck.gate import exit_code, severity
from leakcheck.report.json import to_dict

from .conftest import EXAMPLES, SHARED_DATA, needs_shared, write_jsonl
from .helpers import triples

QUESTION = ("A patient in her sixties reports chest pain that started two hours ago while climbing stairs, "
            "with sweating and pain spreading to the left arm. She takes aspirin daily. What should she do right now?")
REWORDED = QUESTION.replace("sixties", "fifties").replace("two hours", "three hours")
RUBRIC = [
    {"criterion": "Advises calling emergency services immediately", "points": 10, "tags": ["axis:accuracy"]},
    {"criterion": "Mentions chewing an aspirin unless allergic", "points": 5, "tags": ["axis:completeness"]},
    {"criterion": "Suggests waiting to see if the pain passes", "points": -8, "tags": ["axis:accuracy"]},
]
OTHER = {"prompt": [{"role": "user", "content": "How long should I boil an egg for a runny yolk?"}],
         "rubrics": [{"criterion": "Gives a time between five and seven minutes", "points": 5, "tags": []}]}

GSM_Q = ("Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
         "How many clips did Natalia sell altogether in April and May?")
GSM_A = ("Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n"
         "Natalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72")


def _healthbench(tmp_path: Path) -> tuple[Path, Path]:
    ev = write_jsonl(tmp_path / "eval.jsonl", [{"prompt_id": "hb-1", "prompt": [{"role": "user", "content": QUESTION}], "rubrics": RUBRIC}])
    tr = write_jsonl(tmp_path / "train.jsonl", [
        {"prompt_id": "tr-1", "prompt": [{"role": "user", "content": REWORDED}], "rubrics": list(reversed(RUBRIC))},
        {"prompt_id": "tr-2", **OTHER},
    ])
    return tr, ev


def test_identical_rubric_behind_a_reworded_prompt_is_a_pair_at_exact(tmp_path):
    """The rubric is the label: a byte-identical bank under a near prompt fails the default gate."""
    tr, ev = _healthbench(tmp_path)
    r = leakcheck.scan(tr, ev)
    assert triples(r) == {("hb-1", "tr-1", "pair", "exact")}
    (f,) = r.findings
    assert f.detail is not None and (f.detail["prompt_level"], f.detail["target_level"]) == ("near", "exact")
    assert 0.6 <= f.detail["prompt_score"] < 1 and f.detail["target_score"] == 1.0
    assert r.summary()["by_level"]["exact"]["count"] == 1 and r.summary()["by_level"]["near"]["count"] == 0
    assert exit_code(r, Policy()) == 1
    # the same data with fewer levels: the prompt is no longer seen, the rubric still is
    few = leakcheck.scan(tr, ev, ScanConfig(levels=("exact", "normalized")))
    assert triples(few) == {("hb-1", "tr-1", "target", "exact")}
    for spec in ("exact", "target:exact", "normalized", "target"):
        assert exit_code(r, Policy.parse(spec)) == exit_code(few, Policy.parse(spec)) == 1, spec
    res = CliRunner().invoke(main, ["scan", str(tr), str(ev)])
    assert res.exit_code == 1 and "pair/exact 1.00 (prompt near" in res.output and "target exact 1.00)" in res.output


def test_exact_prompt_with_calc_annotations_stripped_is_a_pair_at_exact(jsonl):
    stripped = GSM_A.replace("<<48/2=24>>", "").replace("<<48+24=72>>", "")
    ev = jsonl("eval.jsonl", [{"question": GSM_Q, "answer": GSM_A}])
    tr = jsonl("train.jsonl", [{"question": GSM_Q, "answer": stripped}])
    r = leakcheck.scan(tr, ev)
    assert triples(r) == {("0", "0", "pair", "exact")}
    assert r.findings[0].detail["target_level"] in ("near", "contained")
    assert exit_code(r, Policy.parse("exact")) == 1


def test_a_pair_is_a_prompt_leak_and_a_target_leak():
    """The CollabLLM example: 35 pairs fail --fail-on target and --fail-on prompt alike."""
    d = EXAMPLES / "collabllm_medium"
    runner = CliRunner()
    for spec in ("target", "prompt", "pair", "target:exact", "all"):
        res = runner.invoke(main, ["scan", str(d / "train.parquet"), str(d / "eval.parquet"), "--fail-on", spec])
        assert res.exit_code == 1, (spec, res.output)
        assert "pair                         35   35.00" in res.output
    res = runner.invoke(main, ["scan", str(d / "train.parquet"), str(d / "eval.parquet"), "--fail-on", "group,prompt_in_target"])
    assert res.exit_code == 0
    assert "gated                         0    0.00" in res.output and "not gated by --fail-on (information only): 35 eval records" in res.output


def test_headline_counts_what_the_gate_judged(jsonl, tmp_path):
    words = ("the farmer takes his seven goats and three sheep to the market every saturday morning and sells "
             "each goat for forty dollars and each sheep for fifty five dollars how much money does he bring home").split()
    edited = list(words)
    edited[5] = "zebra"
    ev = jsonl("eval.jsonl", [{"id": "near", "question": " ".join(words)}, {"id": "copy", "question": "What is the capital of France, and why?"}])
    tr = jsonl("train.jsonl", [{"id": "t1", "question": " ".join(edited)}, {"id": "t2", "question": "What is the capital of France, and why?"}])
    r = leakcheck.scan(tr, ev)
    assert triples(r) == {("near", "t1", "prompt", "near"), ("copy", "t2", "prompt", "exact")}
    p = Policy.parse("exact")
    s = r.summary(p)
    assert s["contaminated"] == {"count": 1, "percent": 50.0} and s["not_gated"] == {"count": 1, "percent": 50.0}
    d = to_dict(r, p)
    assert d["summary"]["contaminated"]["count"] == d["gate"]["gated_findings"] == 1
    assert Policy().describe() == "every finding at every level that ran"
    assert r.summary()["contaminated"]["count"] == 2  # the scan's own (default) gate judges both
    j = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["scan", str(tr), str(ev), "--fail-on", "exact", "--json", str(j), "--markdown", str(tmp_path / "r.md")])
    assert res.exit_code == 1 and "not gated by --fail-on (information only): 1 eval records" in res.output
    md = (tmp_path / "r.md").read_text()
    assert "1 of 2 eval records (50.0%) occur in train. 1 more have matches the gate does not fail on (information only)." in md
    res = CliRunner().invoke(main, ["conda", str(j), "--dataset", "e", "--source", "t", "--no-header"])
    assert res.output.split(";")[6] == "50.0"  # the Test Split column


def _he_doc(problem: dict, filler: str) -> dict:
    return {"text": f"{filler}\n\n{problem['prompt']}{problem['canonical_solution']}\n\nMore notes follow here."}


def test_prompt_and_solution_pasted_into_a_document_is_a_pair(jsonl):
    prompt = ('def running_max(values: list[int]) -> list[int]:\n    """Return a list whose i-th element is the largest of the '
              'first i+1 values of the input list, for example running_max([1, 3, 2]) == [1, 3, 3]."""\n')
    solution = "    out, best = [], None\n    for v in values:\n        best = v if best is None else max(best, v)\n        out.append(best)\n    return out\n"
    ev = jsonl("eval.jsonl", [{"task_id": "X/0", "prompt": prompt, "canonical_solution": solution, "entry_point": "running_max"}])
    tr = jsonl("train.jsonl", [_he_doc({"prompt": prompt, "canonical_solution": solution}, "Some tutorial text about lists. " * 5),
                               {"text": "An unrelated page about cooking rice and beans for a crowd of twenty people."}])
    r = leakcheck.scan(tr, ev)
    assert r.train.format == "text"
    assert triples(r) == {("X/0", "0", "pair", "contained")}
    assert r.findings[0].detail["target_in"] == "prompt" and r.findings[0].evidence()[2] == ("target_in_prompt", "contained")
    assert exit_code(r, Policy()) == 1
    assert exit_code(r, Policy.parse("target_in_prompt")) == 1


@needs_shared
def test_humaneval_pasted_into_documents_fails_the_default_gate(tmp_path):
    problems = [json.loads(line) for line in gzip.open(SHARED_DATA / "humaneval" / "HumanEval.jsonl.gz", "rt")]
    gsm = [json.loads(line) for line in open(SHARED_DATA / "gsm8k" / "train.jsonl")]
    docs = [_he_doc(p, gsm[i]["question"] + " " + gsm[i + 500]["answer"]) for i, p in enumerate(problems)]
    docs += [{"text": g["question"]} for g in gsm[1000:3000]]
    tr = write_jsonl(tmp_path / "train.jsonl", docs)
    r = leakcheck.scan(tr, SHARED_DATA / "humaneval" / "HumanEval.jsonl.gz")
    own = {(f.eval_id, f.kind) for f in r.gated(Policy()) if f.train_id == str(next(i for i, p in enumerate(problems) if p["task_id"] == f.eval_id))}
    assert {e for e, _ in own} == {p["task_id"] for p in problems}  # each problem found in its own document
    pairs = {e for e, k in own if k == "pair"}
    short = {p["task_id"] for p in problems if len(" ".join(p["canonical_solution"].split())) < 20}
    # every problem is a pair, except those whose one-line solution is too short to be evidence
    assert pairs == {p["task_id"] for p in problems} - short and len(short) == 5
    assert exit_code(r, Policy()) == 1


def test_gating_a_level_that_did_not_run_is_a_usage_error():
    for levels, spec in ((("exact",), "near"), (("exact", "near"), "pair:contained")):
        try:
            ScanConfig(levels=levels, policy=Policy.parse(spec))
        except leakcheck.UsageError as exc:
            assert "does not run" in str(exc)
        else:
            raise AssertionError(spec)
    ScanConfig(levels=("exact",), policy=Policy())  # the default gates what ran
    ScanConfig(levels=("exact",), policy=Policy.parse("any"))


def test_verl_rubric_parquet_strongest_level(tmp_path):
    def row(i: int, text: str, rubric: list) -> dict:
        return {"prompt": [{"role": "user", "content": text}], "data_source": "healthbench",
                "reward_model": {"style": "rubric", "rubrics": json.dumps(rubric)}, "extra_info": {"index": i}}
    pq.write_table(pa.Table.from_pylist([row(0, QUESTION, RUBRIC)]), tmp_path / "eval.parquet")
    pq.write_table(pa.Table.from_pylist([row(7, REWORDED, RUBRIC), row(8, OTHER["prompt"][0]["content"], OTHER["rubrics"])]), tmp_path / "train.parquet")
    r = leakcheck.scan(tmp_path / "train.parquet", tmp_path / "eval.parquet")
    assert triples(r) == {("0", "7", "pair", "exact")}


# -- the property: more levels never lower the exit code ------------------------------------------

VOCAB = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
         "upsilon phi chi psi omega red green blue").split()
sentences = st.lists(st.sampled_from(VOCAB), min_size=14, max_size=22).map(" ".join)


@st.composite
def datasets(draw):
    evals = draw(st.lists(st.tuples(sentences, sentences), min_size=1, max_size=4))
    train = []
    for _ in range(draw(st.integers(1, 8))):
        p, t = draw(st.sampled_from(evals))
        how = draw(st.sampled_from(["copy", "edit_prompt", "edit_both", "paste", "swap", "random", "short"]))
        if how == "edit_prompt":
            p = " ".join(draw(st.sampled_from(VOCAB)) if i == 3 else w for i, w in enumerate(p.split()))
        elif how == "edit_both":
            p, t = p.upper(), " ".join(reversed(t.split()))
        elif how == "paste":
            p, t = f"{draw(sentences)} {p} {t}", draw(sentences)
        elif how == "swap":
            p, t = t, p
        elif how == "random":
            p, t = draw(sentences), draw(sentences)
        elif how == "short":
            t = "blue"
        train.append((p, t))
    return evals, train


def _scan(evals, train, levels, hits, short):
    cfg = ScanConfig(levels=levels, max_target_hits=hits, short_target_chars=short, train_fields=Fields(id="id"), eval_fields=Fields(id="id"))
    rows = lambda xs, k: [{"id": f"{k}{i}", "prompt": p, "completion": c} for i, (p, c) in enumerate(xs)]  # noqa: E731
    return leakcheck.scan(rows(train, "t"), rows(evals, "e"), cfg)


def policy_items(levels: tuple[str, ...]):
    """``--fail-on`` items that name only levels that run."""
    return st.lists(st.sampled_from([*KINDS, *levels, *(f"{k}:{lv}" for k in KINDS for lv in levels), "all", "chance"]), min_size=1, max_size=3)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datasets(), st.sets(st.sampled_from(LEVELS), min_size=1, max_size=2), st.sets(st.sampled_from(LEVELS), min_size=1),
       st.data(), st.integers(1, 3), st.sampled_from([0, 5, 30]))
def test_adding_a_level_never_lowers_the_exit_code(data, base, extra, draw, hits, short):
    evals, train = data
    base_levels = tuple(lv for lv in LEVELS if lv in base)
    more_levels = tuple(lv for lv in LEVELS if lv in base | extra)
    policy = Policy.parse(draw.draw(policy_items(base_levels)))
    few = _scan(evals, train, base_levels, hits, short)
    more = _scan(evals, train, more_levels, hits, short)
    assert severity(exit_code(few, policy)) <= severity(exit_code(more, policy))
    # and a wider policy never passes what a narrower one fails
    wider = Policy(policy.items | {("pair", "*")}, policy.chance)
    assert severity(exit_code(more, policy)) <= severity(exit_code(more, wider))


def test_a_chance_target_that_becomes_a_pair_still_fails_a_chance_gate():
    """Found by the property above: an exact target shared by two train records is a chance
    match at ``exact``; with ``semantic`` the reworded prompt beside it makes each a ``pair``,
    which ``--fail-on chance`` must still fail on."""
    a = " ".join(["alpha"] * 14)
    evals = [(" ".join(["alpha"] * 3 + ["beta"] + ["alpha"] * 10), a)]
    train = [(a, a), (a, a)]
    policy = Policy.parse("chance")
    few = _scan(evals, train, ("exact",), 1, 0)
    more = _scan(evals, train, ("exact", "semantic"), 1, 0)
    assert [(c.reason, c.level) for c in few.chance] == [("generic", "exact")] and not few.gated(policy)
    assert not more.chance
    assert [(f.kind, f.level, f.detail["prompt_level"]) for f in more.gated(policy)] == [("pair", "exact", "semantic")] * 2
    assert exit_code(few, policy) == exit_code(more, policy) == 1
