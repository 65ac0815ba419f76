"""Issue 10: the gate configured once (config files, limits, allowlist) and quiet when nothing changed (baselines)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from leakcheck import Policy, ScanConfig
from leakcheck.canon import normalize
from leakcheck.baseline import AllowEntry, Baseline, apply_allowlist, apply_baseline
from leakcheck.cli import main
from leakcheck.config import LEVELS as LEVEL_NAMES
from leakcheck.config import Limit
from leakcheck.errors import UsageError
from leakcheck.fingerprint import record_fingerprint
from leakcheck.gate import exit_code, severity

from .conftest import SHARED_DATA, needs_shared, write_jsonl
from .test_properties import CFG, SMALL, _scan_texts, _usable
from .test_verdict import _scan, datasets, policy_items


def _q(i: int) -> str:
    return f"Mira packs {i} crates with {i + 3} jars of plum jam each for the county fair. How many jars does she pack?"


def _a(i: int) -> str:
    return f"She packs {i} * {i + 3} = {i * (i + 3)} jars of plum jam for the fair in all.\n#### {i * (i + 3)}"


#: Eval: e0 and e1 are in train (exact pairs), e2 is not.
EVAL = [{"id": f"e{i}", "question": _q(i), "answer": _a(i)} for i in range(3)]
TRAIN = [{"id": f"t{i}", "question": _q(i), "answer": _a(i)} for i in (0, 1, 10, 11, 12, 13)]
LEVELS = ("--levels", "exact,normalized", "-j", "1")


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    write_jsonl(tmp_path / "eval.jsonl", EVAL)
    write_jsonl(tmp_path / "train.jsonl", TRAIN)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def scan(*args: str):
    return run("scan", "train.jsonl", "eval.jsonl", *LEVELS, *args)


def report(path: Path) -> dict:
    return json.loads(path.read_text())


# ---- configuration file: discovery, precedence, unknown keys ----------------------------------


def test_flags_win_over_the_file(project):
    (project / "leakcheck.toml").write_text('fail_on = "none"\n')
    assert scan().exit_code == 0  # the file's gate: nothing fails
    assert scan("--fail-on", "all").exit_code == 1  # the flag wins
    (project / "leakcheck.toml").write_text('fail_on = "none"\nlevels = ["near"]\n')
    res = scan("--json", "r.json")  # --levels on the command line wins over levels in the file
    assert res.exit_code == 0 and report(project / "r.json")["levels"] == ["exact", "normalized"]


def test_config_discovery_nearest_first_leakcheck_toml_before_pyproject(project, monkeypatch):
    sub = project / "sub" / "deeper"
    sub.mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.leakcheck]\nfail_on = "none"\n')
    (project / "sub" / "pyproject.toml").write_text('[project]\nname = "no leakcheck table here"\n')
    args = ["scan", str(project / "train.jsonl"), str(project / "eval.jsonl"), *LEVELS]
    runner = CliRunner()
    monkeypatch.chdir(sub)
    res = runner.invoke(main, args)  # sub/pyproject.toml has no [tool.leakcheck]: passed over, like ruff
    assert res.exit_code == 0 and f"config: {project / 'pyproject.toml'}\n" in res.output
    (project / "sub" / "leakcheck.toml").write_text('fail_on = "all"\n')
    res = runner.invoke(main, args)
    assert res.exit_code == 1 and f"config: {project / 'sub' / 'leakcheck.toml'}\n" in res.output
    (project / "sub" / "pyproject.toml").write_text('[tool.leakcheck]\nfail_on = "none"\n')
    res = runner.invoke(main, args)  # in one folder leakcheck.toml wins
    assert res.exit_code == 1 and f"config: {project / 'sub' / 'leakcheck.toml'}\n" in res.output
    res = runner.invoke(main, [*args, "--config", str(project / "pyproject.toml")])  # --config wins over discovery
    assert res.exit_code == 0 and f"config: {project / 'pyproject.toml'}\n" in res.output


def test_the_report_names_the_config_file(project):
    (project / "leakcheck.toml").write_text('fail_on = "pair"\n')
    res = scan("--json", "r.json")
    assert res.exit_code == 1 and f"config: {project / 'leakcheck.toml'}\n" in res.output
    assert report(project / "r.json")["config_file"] == str(project / "leakcheck.toml")
    (project / "leakcheck.toml").unlink()
    res = scan("--json", "r.json")
    assert "config:" not in res.output and "config_file" not in report(project / "r.json")


@pytest.mark.parametrize("key, suggestion", [("fail-on", "fail_on"), ("level", "levels"), ("near_treshold", "near_threshold"),
                                             ("basline", "baseline")])
def test_an_unknown_key_is_a_warning_with_the_closest_key(project, key, suggestion):
    (project / "leakcheck.toml").write_text(f'{key} = "none"\nfail_on = "pair"\n')
    res = scan()
    assert res.exit_code == 1  # the known keys still apply; the unknown one is ignored, not fatal
    assert res.output.startswith(f"leakcheck: warning: {project / 'leakcheck.toml'}: unknown key {key!r} ignored; "
                                 f"did you mean {suggestion!r}?\n")


def test_an_unknown_key_without_a_close_match_lists_the_keys(project):
    (project / "pyproject.toml").write_text('[tool.leakcheck]\nzzzz = 1\n')
    res = scan("-q")
    assert res.exit_code == 1 and res.output == ""  # --quiet prints nothing, warnings included
    res = scan()
    assert res.output.startswith(f"leakcheck: warning: {project / 'pyproject.toml'} [tool.leakcheck]: unknown key 'zzzz' ignored; "
                                 "known keys: allow, allow_partial, allowlist, annotations, baseline, ")


@pytest.mark.parametrize("text, message", [
    ('jobs = "2"', "jobs must be a whole number, without quotes, not the string \"2\""),
    ('engine = "spark"', 'engine must be "local" or "ray", not the string "spark"'),
    ("limits = 3", 'limits must be a table such as { "target:near" = "0.5%", prompt = 0 }, not the number 3'),
])
def test_a_bad_value_is_exit_2_naming_it(project, text, message):
    (project / "leakcheck.toml").write_text(text + "\n")
    res = scan()
    assert res.exit_code == 2 and res.output == f"leakcheck: error: {project / 'leakcheck.toml'}: {message}\n"


def test_a_missing_or_broken_config_file(project):
    res = scan("--config", "nope.toml")
    assert res.exit_code == 2 and res.output == (f"leakcheck: error: --config {project / 'nope.toml'}: no such file; "
                                                 "name a leakcheck.toml or a pyproject.toml\n")
    (project / "leakcheck.toml").write_text("fail_on = [\n")
    res = scan()
    assert res.exit_code == 2 and res.output.startswith(f"leakcheck: error: {project / 'leakcheck.toml'}: invalid TOML (")


def test_scan_options_from_the_file(project):
    (project / "leakcheck.toml").write_text('examples = 1\nfail_on = "pair"\njobs = 1\nengine = "local"\n')
    res = scan()
    assert res.exit_code == 1 and "  and 1 more finding (--json FILE lists them all)" in res.output


# ---- limits ----------------------------------------------------------------------------------


@pytest.mark.parametrize("limit, code, line", [
    ("pair=2", 0, "limit pair=2: 2 eval records, 2 allowed (within)"),
    ("pair=1", 1, "limit pair=1: 2 eval records, 1 allowed (exceeded)"),
    ("all=0", 1, "limit all=0: 2 eval records, 0 allowed (exceeded)"),
    ("prompt:exact=66.7%", 0, "limit prompt:exact=66.7%: 2 eval records, 2.001 allowed (within)"),
    ("target:normalized=66%", 1, "limit target:normalized=66%: 2 eval records, 1.98 allowed (exceeded)"),
])
def test_a_limit_counts_eval_records_and_fails_above_it(project, limit, code, line):
    res = scan("--fail-on", "none", "--limit", limit, "--json", "r.json")
    assert res.exit_code == code and line + "\n" in res.output
    (check,) = report(project / "r.json")["gate"]["limits"]
    assert check == {"limit": limit, "count": 2, "allowed": float(line.split(", ")[1].split()[0]), "exceeded": code == 1}
    assert report(project / "r.json")["gate"]["exit_code"] == code


def test_limits_in_the_file_and_a_flag_replacing_one(project):
    (project / "leakcheck.toml").write_text('fail_on = "group"\n[limits]\npair = 1\n"target:exact" = "100%"\n')
    res = scan()
    assert res.exit_code == 1 and "limit pair=1: 2 eval records, 1 allowed (exceeded)\n" in res.output
    assert "limit target:exact=100%: 2 eval records, 3 allowed (within)\n" in res.output
    res = scan("--limit", "pair=2")  # the flag replaces the file's limit of the same item, keeps the other
    assert res.exit_code == 0 and "limit pair=2: 2 eval records, 2 allowed (within)\n" in res.output
    assert "limit target:exact=100%" in res.output


@pytest.mark.parametrize("args, message", [
    (("--limit", "pair=1"), "limit pair=1: --fail-on all (the default) already fails on every such finding, so the limit could never allow one; "
                            "narrow --fail-on (e.g. --fail-on pair,prompt) or drop the limit"),
    (("--fail-on", "normalized", "--limit", "prompt:exact=1"), "limit prompt:exact=1: --fail-on normalized already fails on every such finding, "
                                                               "so the limit could never allow one; narrow --fail-on (e.g. --fail-on pair,prompt) or drop the limit"),
    (("--fail-on", "none", "--limit", "pair"), "--limit pair: write e.g. --limit target:near=0.5% or --limit prompt=0 (a count, or a percentage of the eval records)"),
    (("--fail-on", "none", "--limit", "pear=1"), "--limit pear: unknown kind or level; use a level (exact, normalized, near, contained, semantic), a kind "
                                                 "(pair, prompt, target, target_in_prompt, prompt_in_target, group), kind:level or all"),
    (("--fail-on", "none", "--limit", "pair=150%"), "--limit pair: 150% is more than 100%"),
    (("--fail-on", "none", "--limit", "near=1"), "--fail-on or --limit names near, which does not run (--levels exact,normalized); "
                                                "add it to --levels or drop it from --fail-on or --limit"),
])
def test_a_bad_limit_is_exit_2(project, args, message):
    res = scan(*args)
    assert res.exit_code == 2 and res.output == f"leakcheck: error: {message}\n"


# ---- baselines -------------------------------------------------------------------------------


def _baseline(project: Path, *args: str):
    return run("baseline", "train.jsonl", "eval.jsonl", "-o", "leakcheck-baseline.json", *LEVELS, *args)


def test_baseline_file_is_sorted_reviewable_json(project):
    res = _baseline(project)
    assert res.exit_code == 0 and res.output == "wrote leakcheck-baseline.json: 2 accepted findings (eval 2)\n"
    doc = report(project / "leakcheck-baseline.json")
    assert list(doc) == ["leakcheck_baseline", "leakcheck_version", "parameters", "entries"]
    assert doc["parameters"]["levels"] == ["exact", "normalized"]
    fps = {e["eval_id"]: e["eval_fingerprint"] for e in doc["entries"]}
    assert fps == {f"e{i}": record_fingerprint(_q(i), _a(i)) for i in (0, 1)}
    assert [e["eval_fingerprint"] for e in doc["entries"]] == sorted(fps.values())
    assert doc["entries"][0] == {"eval_set": "eval", "eval_id": doc["entries"][0]["eval_id"], "eval_fingerprint": doc["entries"][0]["eval_fingerprint"],
                                 "train_fingerprint": doc["entries"][0]["eval_fingerprint"], "kind": "pair", "level": "exact",
                                 "snippet": _q(int(doc["entries"][0]["eval_id"][1:]))[:80],
                                 "evidence": ["pair:exact", "prompt:exact", "target:exact"]}
    before = (project / "leakcheck-baseline.json").read_bytes()
    write_jsonl(project / "train.jsonl", TRAIN[::-1])
    assert _baseline(project).exit_code == 0
    assert (project / "leakcheck-baseline.json").read_bytes() == before  # regenerated: same bytes, so a clean diff


def _unchanged(res, project: Path) -> None:
    assert res.exit_code == 0, res.output
    assert "baseline leakcheck-baseline.json: 2 baselined, 0 new, 0 gone (fixed)\n" in res.output
    gate = report(project / "r.json")["gate"]
    assert gate["baseline"] == {"file": "leakcheck-baseline.json", "baselined": 2, "new": 0, "gone": 0, "gone_entries": []}
    assert gate["gated_findings"] == 0 and [a["by"] for a in gate["accepted"]] == ["baseline", "baseline"]


def test_a_baseline_survives_a_reorder(project):
    _baseline(project)
    write_jsonl(project / "train.jsonl", TRAIN[::-1])
    write_jsonl(project / "eval.jsonl", EVAL[::-1])
    _unchanged(scan("--baseline", "leakcheck-baseline.json", "--json", "r.json"), project)


def test_a_baseline_survives_a_reshard(project):
    _baseline(project)
    shards = project / "train"
    shards.mkdir()
    for k in range(3):
        write_jsonl(shards / f"part-{k:05d}.jsonl", TRAIN[k::3])
    res = run("scan", "train", "eval.jsonl", *LEVELS, "--baseline", "leakcheck-baseline.json", "--json", "r.json")
    _unchanged(res, project)


def test_a_baseline_survives_an_append(project):
    _baseline(project)
    extra = [{"id": f"t{i}", "question": _q(i), "answer": _a(i)} for i in range(20, 25)]
    write_jsonl(project / "train.jsonl", TRAIN + extra)
    _unchanged(scan("--baseline", "leakcheck-baseline.json", "--json", "r.json"), project)


def test_a_new_leak_fails_naming_only_the_new_one(project):
    _baseline(project)
    write_jsonl(project / "train.jsonl", TRAIN + [{"id": "t-new", "question": _q(2), "answer": _a(2)}])
    res = scan("--baseline", "leakcheck-baseline.json", "--json", "r.json")
    assert res.exit_code == 1 and "baseline leakcheck-baseline.json: 2 baselined, 1 new, 0 gone (fixed)\n" in res.output
    worst = res.output.split("worst leaks:\n")[1].splitlines()
    assert worst[0].startswith("  eval e2 ~ train t-new  pair/exact 1.00") and not worst[1].startswith("  eval")
    d = report(project / "r.json")
    assert d["gate"]["gated_findings"] == 1 and d["summary"]["contaminated"]["count"] == 1
    assert d["gate"]["baseline"]["new"] == 1


def test_a_removed_leak_is_reported_gone(project):
    _baseline(project)
    write_jsonl(project / "train.jsonl", [r for r in TRAIN if r["id"] != "t1"])
    res = scan("--baseline", "leakcheck-baseline.json", "--json", "r.json", "--markdown", "r.md")
    assert res.exit_code == 0
    assert "baseline leakcheck-baseline.json: 1 baselined, 0 new, 1 gone (fixed)\n" in res.output
    assert f"  gone: eval e1  pair/exact  {_q(1)[:70]}\n" in res.output
    (gone,) = report(project / "r.json")["gate"]["baseline"]["gone_entries"]
    assert (gone["eval_id"], gone["eval_fingerprint"]) == ("e1", record_fingerprint(_q(1), _a(1)))
    md = (project / "r.md").read_text()
    assert "1 baselined, 0 new, 1 gone (fixed)" in md


def test_a_finding_that_got_stronger_is_new(project):
    weaker = [dict(r, question=r["question"].upper(), answer=r["answer"].upper()) if r["id"] == "t0" else r for r in TRAIN]
    write_jsonl(project / "train.jsonl", weaker)
    _baseline(project)
    levels = {e["eval_id"]: e["level"] for e in report(project / "leakcheck-baseline.json")["entries"]}
    assert levels == {"e0": "normalized", "e1": "exact"}
    assert scan("--baseline", "leakcheck-baseline.json").exit_code == 0
    write_jsonl(project / "train.jsonl", TRAIN)  # e0 is now an exact copy: stronger evidence than accepted
    res = scan("--baseline", "leakcheck-baseline.json")
    assert res.exit_code == 1 and "1 baselined, 1 new" in res.output and "  eval e0 ~ train t0  pair/exact" in res.output


def test_baseline_refuses_to_overwrite_an_input_and_reports_a_bad_file(project):
    before = (project / "train.jsonl").read_bytes()
    res = run("baseline", "train.jsonl", "eval.jsonl", "-o", "train.jsonl", *LEVELS)
    assert res.exit_code == 2 and res.output.startswith("leakcheck: error: --output train.jsonl") and "\n" == res.output[-1]
    assert (project / "train.jsonl").read_bytes() == before
    _baseline(project)
    res = scan("--baseline", "leakcheck-baseline.json", "--json", "leakcheck-baseline.json")
    assert res.exit_code == 2 and res.output.startswith("leakcheck: error: --json leakcheck-baseline.json")
    doc = report(project / "leakcheck-baseline.json")
    doc["entries"][1]["level"] = "fuzzy"
    (project / "b2.json").write_text(json.dumps(doc))
    res = scan("--baseline", "b2.json")
    assert res.exit_code == 2 and res.output == (
        "leakcheck: error: b2.json: entry 2: kind 'pair' / level 'fuzzy' is not one of pair, prompt, target, target_in_prompt, "
        "prompt_in_target, group / exact, normalized, near, contained, semantic; regenerate it with leakcheck baseline TRAIN EVAL -o FILE\n")
    res = scan("--baseline", "missing.json")
    assert res.exit_code == 2 and res.output == ("leakcheck: error: missing.json: no such baseline file; "
                                                 "create it with leakcheck baseline TRAIN EVAL -o missing.json\n")


def test_a_baseline_made_with_other_parameters_warns(project):
    _baseline(project)
    res = run("scan", "train.jsonl", "eval.jsonl", "--levels", "exact", "-j", "1", "--baseline", "leakcheck-baseline.json")
    assert res.exit_code == 0
    assert ('leakcheck: warning: baseline leakcheck-baseline.json was made with levels ["exact", "normalized"], this scan uses ["exact"]: '
            "findings may show as new or gone; regenerate it with leakcheck baseline\n") in res.output


def test_the_baseline_key_of_the_file_is_relative_to_it(project, monkeypatch):
    _baseline(project)
    sub = project / "sub"
    sub.mkdir()
    (project / "leakcheck.toml").write_text('baseline = "leakcheck-baseline.json"\n')
    monkeypatch.chdir(sub)
    res = run("scan", "../train.jsonl", "../eval.jsonl", *LEVELS)
    assert res.exit_code == 0 and f"baseline {project / 'leakcheck-baseline.json'}: 2 baselined, 0 new, 0 gone (fixed)\n" in res.output


# ---- allowlist -------------------------------------------------------------------------------


def test_allowlisted_findings_are_listed_with_their_reason_and_never_gated(project):
    (project / "pyproject.toml").write_text(
        '[tool.leakcheck]\nlevels = ["exact", "normalized"]\n\n'
        '[[tool.leakcheck.allow]]\neval_id = "e0"\nreason = "public worked example, accepted in review #12"\n\n'
        f'[[tool.leakcheck.allow]]\nfingerprint = "{record_fingerprint(_q(1), _a(1))}"\neval_set = "eval"\nreason = "licensed overlap"\n')
    res = run("scan", "train.jsonl", "eval.jsonl", "-j", "1", "--json", "r.json")
    assert res.exit_code == 0, res.output
    assert "allowed by the allowlist (not gated): 2 findings\n" in res.output
    assert "  eval e0 ~ train t0  pair/exact  reason: public worked example, accepted in review #12\n" in res.output
    accepted = report(project / "r.json")["gate"]["accepted"]
    assert sorted((a["by"], a["reason"]) for a in accepted) == [("allowlist", "licensed overlap"),
                                                                ("allowlist", "public worked example, accepted in review #12")]


def test_an_allowlist_file_and_a_stale_entry(project):
    (project / "allow.toml").write_text('[[allow]]\neval_id = "e1"\nreason = "known"\n\n[[allow]]\neval_id = "e7"\nreason = "was fixed"\n')
    res = scan("--allowlist", "allow.toml")
    assert res.exit_code == 1  # e0 is not allowed
    assert "leakcheck: warning: allowlist entry eval_id 'e7' (was fixed) matched no finding: remove it if the overlap is gone\n" in res.output
    assert "  eval e1 ~ train t1  pair/exact  reason: known\n" in res.output
    assert "allowlist entry eval_id 'e7' (was fixed) matched no finding of this eval set\n" in res.output
    res = scan("--allowlist", "allow.toml", "--json", "r.json", "-q")
    assert res.exit_code == 1 and report(project / "r.json")["gate"]["allowlist_unused"] == ["eval_id 'e7' (was fixed)"]


@pytest.mark.parametrize("entry, message", [
    ('eval_id = "e0"', "allow entry 1 has no reason; add reason = \"why this overlap is accepted\""),
    ('eval_id = "e0"\nfingerprint = "ab"\nreason = "x"', "allow entry 1 must name exactly one of eval_id or fingerprint"),
    ('eval_id = "e0"\nreason = ""', "allow entry 1: reason must be a non-empty string"),
    ('eval_id = "e0"\nwhy = "x"', "allow entry 1: unknown key 'why'; use eval_id, fingerprint, eval_set, reason"),
])
def test_a_bad_allowlist_entry_is_exit_2(project, entry, message):
    (project / "leakcheck.toml").write_text(f"[[allow]]\n{entry}\n")
    res = scan()
    assert res.exit_code == 2 and res.output == f"leakcheck: error: {project / 'leakcheck.toml'}: {message}\n"


# ---- the gate stays monotone with limits, a baseline and an allowlist -------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datasets(), datasets(), st.sets(st.sampled_from(LEVEL_NAMES), min_size=1, max_size=2), st.sets(st.sampled_from(LEVEL_NAMES), min_size=1),
       st.data())
def test_more_evidence_never_lowers_the_exit_code_for_a_fixed_policy_and_baseline(data, other, base, extra, draw):
    """A baseline (from another scan), an allowlist and a limit fixed: running more levels never passes what fewer failed."""
    evals, train = data
    base_levels = tuple(lv for lv in LEVEL_NAMES if lv in base)
    more_levels = tuple(lv for lv in LEVEL_NAMES if lv in base | extra)
    items = draw.draw(policy_items(base_levels))
    limit = draw.draw(st.sampled_from([None, *(f"{k}:{lv}={n}" for k in ("prompt", "target", "pair") for lv in base_levels for n in ("0", "1", "50%"))]))
    try:
        policy = Policy.parse(items)
        if limit is not None:
            policy = Policy(policy.items, policy.chance, (Limit.parse(limit),))
    except UsageError:
        assume(False)  # a limit the items already cover is refused, tested above
    known = _scan(evals, other[1] + train[: len(train) // 2], tuple(draw.draw(st.sets(st.sampled_from(LEVEL_NAMES), min_size=1))), 3, 5)
    baseline = Baseline.of({"eval": known}, ScanConfig(levels=known.levels))
    allow = [AllowEntry("accepted", eval_id=draw.draw(st.sampled_from(["e0", "e1", "e9"])))]

    def judged(levels: tuple[str, ...]) -> int:
        r = _scan(evals, train, levels, 3, 5)
        accepted, _ = apply_allowlist(apply_baseline({"eval": r}, baseline, "b.json"), allow)
        return severity(exit_code(accepted["eval"], policy))

    assert judged(base_levels) <= judged(more_levels)


def test_a_report_with_limits_baseline_and_allowlist_round_trips(project):
    """``leakcheck report`` renders a saved JSON report as the scan did: the same gate, counts and accepted findings."""
    from leakcheck.report.json import to_dict
    from leakcheck.report.load import load_report

    _baseline(project)
    (project / "leakcheck.toml").write_text('fail_on = "group"\n[limits]\nprompt = 0\n\n[[allow]]\neval_id = "e2"\nreason = "known"\n')
    write_jsonl(project / "train.jsonl", [r for r in TRAIN if r["id"] != "t1"] + [{"id": "t-new", "question": _q(2), "answer": _a(2)}])
    res = scan("--baseline", "leakcheck-baseline.json", "--json", "r.json", "--markdown", "r.md")
    assert res.exit_code == 0, res.output  # e0 baselined, e2 allowed, e1 gone: the prompt limit counts nothing
    assert "limit prompt=0: 0 eval records, 0 allowed (within)\n" in res.output
    assert "baseline leakcheck-baseline.json: 1 baselined, 1 new, 1 gone (fixed)\n" in res.output
    d = report(project / "r.json")
    result, policy = load_report(project / "r.json")
    assert to_dict(result, policy) == d
    assert run("report", "r.json", "--markdown", "again.md").exit_code == 0
    again = (project / "again.md").read_text().replace("](again-", "](r-")  # the charts are named after the report
    assert again == (project / "r.md").read_text()
    assert "- limit prompt=0: 0 eval records, 0 allowed (within)\n" in again and "reason: known" in again


def test_every_scan_option_is_a_setting():
    """A new scan option must become a [tool.leakcheck] key too, or be listed here as per-run."""
    from leakcheck.cli import scan as scan_command
    from leakcheck.config import SETTINGS

    per_run = {"paths", "indexes", "json_path", "md_path", "html_path", "names", "progress", "quiet", "config_path", "sarif_path"}
    renamed = {"baseline_path": "baseline", "allowlist_path": "allowlist", "no_step_summary": "step_summary"}
    options = {p.name for p in scan_command.params} - per_run
    assert {renamed.get(o, o) for o in options if o is not None} <= set(SETTINGS)
    assert set(SETTINGS) - {renamed.get(o, o) for o in options if o is not None} == {"allow"}  # entries, no flag: --allowlist FILE


def test_one_baseline_for_several_eval_sets(project):
    write_jsonl(project / "other.jsonl", [{"id": "o1", "question": _q(10), "answer": _a(10)}])
    res = run("baseline", "train.jsonl", "eval.jsonl", "other.jsonl", "-o", "b.json", *LEVELS)
    assert res.exit_code == 0 and res.output == "wrote b.json: 3 accepted findings (eval 2, other 1)\n"
    res = run("scan", "train.jsonl", "eval.jsonl", "other.jsonl", *LEVELS, "--baseline", "b.json")
    assert res.exit_code == 0 and res.output.count("2 baselined, 0 new, 0 gone") == 1 and res.output.count("1 baselined, 0 new, 0 gone") == 1
    res = scan("--baseline", "b.json")  # the entries of a set not scanned are not gone
    assert res.exit_code == 0 and "baseline b.json: 2 baselined, 0 new, 0 gone (fixed)\n" in res.output


def test_markdown_and_html_list_accepted_findings_apart_with_their_reason(project):
    _baseline(project)
    (project / "allow.toml").write_text('[[allow]]\neval_id = "e2"\nreason = "shared public example"\n')
    write_jsonl(project / "train.jsonl", TRAIN + [{"id": "t-new", "question": _q(2), "answer": _a(2)}])
    res = scan("--baseline", "leakcheck-baseline.json", "--allowlist", "allow.toml", "--markdown", "r.md", "--html", "r.html")
    assert res.exit_code == 0, res.output
    md = (project / "r.md").read_text()
    leaks, accepted = md.split("## Leaks\n")[1].split("## Accepted findings (baseline and allowlist; not gated)\n")
    assert "None." in leaks and "| e0 |" not in leaks
    assert "| e2 | t-new | `pair` | exact | allowlist | shared public example |" in accepted
    assert "| e0 | t0 | `pair` | exact | baseline | recorded in the baseline |" in accepted
    html = (project / "r.html").read_text()
    assert "Accepted findings (baseline and allowlist; not gated)" in html and "shared public example" in html


def test_regenerating_a_baseline_says_what_changed_and_update_keeps_other_sets(project):
    write_jsonl(project / "other.jsonl", [{"id": "o1", "question": _q(10), "answer": _a(10)}])
    assert run("baseline", "train.jsonl", "eval.jsonl", "other.jsonl", "-o", "b.json", *LEVELS).exit_code == 0
    write_jsonl(project / "train.jsonl", [r for r in TRAIN if r["id"] != "t1"] + [{"id": "t-new", "question": _q(2), "answer": _a(2)}])
    before = (project / "b.json").read_bytes()
    res = run("baseline", "train.jsonl", "eval.jsonl", "-o", "b.json", *LEVELS)
    assert res.exit_code == 2 and res.output == ("leakcheck: error: --output b.json holds entries of eval set other, not scanned now; "
                                                 "pass --update to keep them, or name every eval set\n")
    assert (project / "b.json").read_bytes() == before
    res = run("baseline", "train.jsonl", "eval.jsonl", "-o", "b.json", "--update", *LEVELS)
    assert res.exit_code == 0 and res.output == "wrote b.json: 3 accepted findings (eval 2, other 1); 1 added, 1 removed\n"
    entries = report(project / "b.json")["entries"]
    assert sorted((e["eval_set"], e["eval_id"]) for e in entries) == [("eval", "e0"), ("eval", "e2"), ("other", "o1")]
    assert entries == sorted(entries, key=lambda e: (e["eval_set"], e["eval_fingerprint"]))


@pytest.mark.parametrize("value, message", [
    ("true", 'limits target:near: the limit must be a count or a percentage such as "0.5%", not the boolean true'),
    ('"half"', "limits target:near = 'half': write e.g. --limit target:near=0.5% or --limit prompt=0 (a count, or a percentage of the eval records)"),
])
def test_a_bad_limit_in_the_file_names_the_file(project, value, message):
    (project / "pyproject.toml").write_text(f'[tool.leakcheck]\nfail_on = "pair"\n\n[tool.leakcheck.limits]\n"target:near" = {value}\n')
    res = scan()
    assert res.exit_code == 2 and res.output == f"leakcheck: error: {project / 'pyproject.toml'} [tool.leakcheck]: {message}\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(SMALL, SMALL), min_size=1, max_size=6), st.lists(st.tuples(SMALL, SMALL), min_size=1, max_size=4),
       st.integers(1, 3), st.integers(0, 10_000), st.lists(st.tuples(SMALL, SMALL), max_size=3))
def test_a_baseline_accepts_the_same_findings_whatever_the_order_shards_and_unrelated_appends(train, ev, shards, seed, extra):
    """Shuffled, resharded, with records appended that leak nothing new: every finding baselined, nothing gone."""
    if not (_usable(train) and _usable(ev) and _usable(extra)):
        return
    before = _scan_texts(train, ev)
    b = Baseline.of({"eval": before}, CFG)
    eval_texts = {normalize(t) for pair in ev for t in pair}  # fields are compared across too (a prompt found as a target)
    unrelated = [(p, c) for p, c in extra if not {normalize(p), normalize(c)} & eval_texts]
    after = _scan_texts(train + unrelated, ev, shards=shards, seed=seed)
    (judged,) = apply_baseline({"eval": after}, b, "b.json").values()
    assert judged.baseline is not None and judged.baseline.new == 0 and judged.baseline.gone == ()
    assert judged.baseline.baselined == len(after.findings) and exit_code(judged, Policy()) == 0


@needs_shared
def test_gsm8k_baseline_survives_shuffle_shards_and_flags_only_new_leaks(tmp_path, monkeypatch):
    """Real data: GSM8K train with 30 test items pasted in, baselined; then shuffled into 4 shards, 5 more pasted, 3 removed."""
    test = SHARED_DATA / "gsm8k" / "test.jsonl"
    train_lines = (SHARED_DATA / "gsm8k" / "train.jsonl").read_text().splitlines()
    test_lines = test.read_text().splitlines()
    monkeypatch.chdir(tmp_path)
    Path("train.jsonl").write_text("\n".join(train_lines + test_lines[:30]) + "\n")
    common = ["--name", f"gsm8k-test={test}", "--levels", "exact,normalized", "-j", "1"]
    res = run("baseline", "train.jsonl", str(test), "-o", "b.json", *common)
    assert res.exit_code == 0 and res.output == "wrote b.json: 30 accepted findings (gsm8k-test 30)\n"
    rows = train_lines + test_lines[3:35]  # 3 leaks removed, 5 added
    random.Random(7).shuffle(rows)
    Path("shards").mkdir()
    for k in range(4):
        Path(f"shards/part-{k}.jsonl").write_text("\n".join(rows[k::4]) + "\n")
    res = run("scan", "shards", str(test), *common, "--baseline", "b.json", "--json", "r.json")
    assert res.exit_code == 1 and "baseline b.json: 27 baselined, 5 new, 3 gone (fixed)\n" in res.output
    d = report(tmp_path / "r.json")
    gated = [f for f in d["findings"] if (f["eval_set"], f["eval_fingerprint"], f["train_fingerprint"], f["kind"], f["level"])
             not in {(a["eval_set"], a["eval_fingerprint"], a["train_fingerprint"], a["kind"], a["level"]) for a in d["gate"]["accepted"]}]
    assert sorted(f["eval_index"] for f in gated) == list(range(30, 35)) and d["gate"]["gated_findings"] == 5
    assert sorted(e["eval_id"] for e in d["gate"]["baseline"]["gone_entries"]) == ["0", "1", "2"]


def test_a_renamed_eval_set_and_a_nested_tool_table_are_warned_about(project):
    _baseline(project)
    res = run("scan", "train.jsonl", "eval.jsonl", *LEVELS, "--name", "gsm8k=eval.jsonl", "--baseline", "leakcheck-baseline.json")
    assert res.exit_code == 1 and ("leakcheck: warning: baseline leakcheck-baseline.json has no entry for eval set gsm8k (it has eval): "
                                   "if the set was renamed, name it as before with --name\n") in res.output
    (project / "leakcheck.toml").write_text('[tool.leakcheck]\nfail_on = "none"\n')
    res = scan()
    assert res.exit_code == 1 and res.output.startswith(
        f"leakcheck: warning: {project / 'leakcheck.toml'}: unknown key 'tool' ignored; "
        "a leakcheck.toml holds its keys at the top level, without [tool.leakcheck]\n")


def test_a_baseline_of_a_partial_scan_says_so(project):
    with open(project / "train.jsonl", "a") as fh:
        fh.write('{"id": "cut", "question": "a row cut sh\n')
    res = _baseline(project, "--on-error", "skip")
    assert res.exit_code == 0 and res.output == ("wrote leakcheck-baseline.json: 2 accepted findings (eval 2); "
                                                 "1 rows skipped (--on-error skip): findings in them are not in the baseline\n")


def test_the_card_and_conda_state_accepted_overlap_too(project):
    """A baseline quiets CI; a dataset card or the CONDA database still states every overlap."""
    _baseline(project)
    res = scan("--baseline", "leakcheck-baseline.json", "--json", "r.json")
    assert res.exit_code == 0 and report(project / "r.json")["summary"]["contaminated"]["count"] == 0
    res = run("conda", "r.json", "--dataset", "e", "--source", "t", "--no-header")
    assert res.exit_code == 0 and res.output.split(";")[6] == "66.67"
    assert run("card", "card", "--report", "r.json").exit_code == 0
    assert "**2 of 3 eval records (66.67%) also occur in the train split.**" in (project / "card" / "README.md").read_text()


def test_a_baseline_applies_to_a_scan_against_a_published_index(project):
    _baseline(project)
    assert run("index", "eval.jsonl", "-o", "eval.lcx", "--levels", "exact,normalized").exit_code == 0
    res = run("scan", "train.jsonl", "--index", "eval.lcx", *LEVELS, "--baseline", "leakcheck-baseline.json")
    assert res.exit_code == 0 and "baseline leakcheck-baseline.json: 2 baselined, 0 new, 0 gone (fixed)\n" in res.output


def test_ci_outputs_from_the_file_and_a_flag_winning(project, monkeypatch):
    """``annotations`` and ``step_summary`` are settings like every other scan option; flags win."""
    summary = project / "summary.md"
    summary.write_text("before\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    (project / "leakcheck.toml").write_text('annotations = "github"\nstep_summary = false\n')
    res = scan()
    assert res.exit_code == 1
    assert sum(line.startswith("::error ") for line in res.output.splitlines()) == 2  # e0 and e1
    assert summary.read_text() == "before\n"  # step_summary = false: nothing appended
    res = scan("--annotations", "none")
    assert res.exit_code == 1 and "::error" not in res.output
    (project / "leakcheck.toml").write_text('annotations = "github"\n')
    scan()
    assert summary.read_text().startswith("before\n") and len(summary.read_text()) > len("before\n")


def test_baselined_findings_are_not_annotated_and_suppressed_in_sarif(project):
    """A baselined leak must not be an ``::error`` line nor an ``error`` SARIF result: the gate passed on it."""
    import jsonschema

    from .test_sarif import SCHEMA

    _baseline(project)
    write_jsonl(project / "train.jsonl", TRAIN + [{"id": "t-new", "question": _q(2), "answer": _a(2)}])
    res = scan("--baseline", "leakcheck-baseline.json", "--annotations", "github", "--sarif", "r.sarif")
    assert res.exit_code == 1
    errors = [line for line in res.output.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1 and "train record t-new" in errors[0]
    assert "; 2 accepted by the baseline or allowlist (not annotated)" in res.output
    doc = json.loads((project / "r.sarif").read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    results = doc["runs"][0]["results"]
    # pair/exact findings: an accepted one is a warning (exact), suppressed with its justification
    assert sorted((r["level"], "suppressions" in r) for r in results) == [("error", False), ("warning", True), ("warning", True)]
    assert all(r["suppressions"] == [{"kind": "external", "status": "accepted", "justification": "baseline: in the baseline"}]
               for r in results if "suppressions" in r)
