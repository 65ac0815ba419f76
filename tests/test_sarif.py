"""Issue 10: the SARIF 2.1.0 file (--sarif), validated against the official schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from leakcheck.cli import main
from leakcheck.report.sarif import FINGERPRINT_KEY

from .conftest import SHARED_DATA, needs_shared

FIXTURES = Path(__file__).parent / "fixtures"
CI = FIXTURES / "ci"
#: The official schema, vendored (source and licence: fixtures/sarif/SOURCE.md).
SCHEMA = json.loads((FIXTURES / "sarif" / "sarif-schema-2.1.0.json").read_text())


def sarif_of(repo: Path, *args: str, evals: tuple[str, ...] = ("data/eval.jsonl",), code: int = 1) -> dict:
    out = repo / "leaks.sarif"
    r = CliRunner().invoke(main, ["scan", str(repo / "data" / "train.jsonl"), *(str(repo / e) for e in evals), "-j", "1", "-q",
                                  "--sarif", str(out), *args], env={"GITHUB_WORKSPACE": str(repo)})
    assert r.exit_code == code, r.output
    doc = json.loads(out.read_text())
    validate(doc)
    return doc


def validate(doc: dict) -> None:
    jsonschema.Draft4Validator(SCHEMA).validate(doc)


def test_the_vendored_schema_is_the_official_one_and_rejects_a_broken_log():
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    assert SCHEMA["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    with pytest.raises(jsonschema.ValidationError):
        validate({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"level": "fatal", "message": {"text": "m"}}]}]})


def test_results_at_the_train_file_and_line_with_levels_and_fingerprints(repo):
    doc = sarif_of(repo, "--fail-on", "prompt:exact")
    assert doc["version"] == "2.1.0" and len(doc["runs"]) == 1
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "leakcheck" and driver["version"] == "0.1.0"
    assert [r["id"] for r in driver["rules"]] == ["pair", "prompt", "target", "target_in_prompt", "prompt_in_target", "group"]
    # rule defaults: prompt:exact gates pairs (their prompt side) and prompts, nothing else
    assert [r["defaultConfiguration"]["level"] for r in driver["rules"]] == ["error", "error", "warning", "warning", "warning", "warning"]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.as_uri() + "/"}}
    got = [(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"], r["properties"]["eval_id"]) for r in run["results"]]
    loc = lambda line: {"artifactLocation": {"uri": "data/train.jsonl", "uriBaseId": "%SRCROOT%"}, "region": {"startLine": line}}  # noqa: E731
    assert got == [("pair", "error", loc(2), "sheep-1"), ("pair", "warning", loc(3), "books-2"), ("prompt", "note", loc(4), "rain-3")]
    books = run["results"][1]
    assert books["message"]["text"].startswith("Eval record books-2 of eval set eval is in train record 2: pair at exact (prompt near 0.70, "
                                               "target exact 1.00), score 1.00. Eval text: A library lends 120 books")
    assert books["properties"] == {"eval_set": "eval", "eval_id": "books-2", "train_id": "2", "level": "exact", "score": 1.0,
                                   "eval_field": "question", "train_field": "question", "prompt_level": "near", "prompt_score": 0.7027,
                                   "target_level": "exact", "target_score": 1.0, "target_in": "target"}
    report = json.loads(CliRunner().invoke(main, ["scan", str(repo / "data" / "train.jsonl"), str(repo / "data" / "eval.jsonl"), "-j", "1",
                                                  "-q", "--json", "-"]).stdout)
    fp = {f["eval_id"]: f"eval:{f['kind']}:{f['eval_fingerprint']}:{f['train_fingerprint']}" for f in report["findings"]}
    assert [r["partialFingerprints"] for r in run["results"]] == [{FINGERPRINT_KEY: fp[i]} for i in ("sheep-1", "books-2", "rain-3")]
    assert run["properties"]["eval_sets"]["eval"]["contaminated"] == 1 and run["properties"]["fail_on"] == ["prompt:exact"]
    assert run["properties"]["results_left_out"] == 0


def test_fingerprints_follow_the_records_not_their_lines(repo):
    before = {r["properties"]["eval_id"]: r["partialFingerprints"] for r in sarif_of(repo)["runs"][0]["results"]}
    train = repo / "data" / "train.jsonl"
    lines = train.read_text().splitlines(keepends=True)
    train.write_text("".join(reversed(lines)))  # every record on another line
    moved = sarif_of(repo)["runs"][0]["results"]
    assert {r["properties"]["eval_id"]: r["partialFingerprints"] for r in moved} == before
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in moved] == [1, 2, 3]


def test_same_inputs_same_bytes(repo):
    first = sarif_of(repo)
    assert (repo / "leaks.sarif").read_bytes() == json.dumps(first, indent=2, ensure_ascii=False).encode() + b"\n"
    again = sarif_of(repo)
    assert again == first


def test_several_eval_sets_in_one_run_sorted_by_set(repo):
    shutil.copy(CI / "eval.jsonl", repo / "data" / "bench.jsonl")
    doc = sarif_of(repo, "--levels", "exact", evals=("data/eval.jsonl", "data/bench.jsonl"))
    run = doc["runs"][0]
    assert len(doc["runs"]) == 1
    assert [(r["properties"]["eval_set"], r["properties"]["eval_id"]) for r in run["results"]] == [
        ("bench", "sheep-1"), ("bench", "books-2"), ("eval", "sheep-1"), ("eval", "books-2")]
    assert sorted(run["properties"]["eval_sets"]) == ["bench", "eval"]
    assert run["results"][0]["partialFingerprints"] != run["results"][2]["partialFingerprints"]  # one alert per eval set


def test_a_train_file_outside_the_workspace_is_an_absolute_uri(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    out = ws / "leaks.sarif"
    r = CliRunner().invoke(main, ["scan", str(CI / "train.jsonl"), str(CI / "eval.jsonl"), "--levels", "exact", "-q", "--sarif", str(out)],
                           env={"GITHUB_WORKSPACE": str(ws)})
    assert r.exit_code == 1
    doc = json.loads(out.read_text())
    validate(doc)
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": (CI / "train.jsonl").as_uri()}


def test_clean_scan_writes_a_valid_log_without_results(tmp_path):
    from .conftest import write_jsonl

    clean = write_jsonl(tmp_path / "clean.jsonl", [{"question": "How do I boil an egg so that the yolk stays soft?", "answer": "Six minutes."}])
    out = tmp_path / "out.sarif"
    r = CliRunner().invoke(main, ["scan", str(clean), str(CI / "eval.jsonl"), "-j", "1", "-q", "--sarif", str(out)])
    assert r.exit_code == 0
    doc = json.loads(out.read_text())
    validate(doc)
    assert doc["runs"][0]["results"] == []


def test_sarif_over_an_input_is_refused_before_the_scan(repo):
    ev = repo / "data" / "eval.jsonl"
    before = ev.read_bytes()
    r = CliRunner().invoke(main, ["scan", str(repo / "data" / "train.jsonl"), str(ev), "--sarif", str(ev)])
    assert r.exit_code == 2
    assert r.output == f"leakcheck: error: --sarif {ev} is the eval input; choose another path: leakcheck never writes over an input\n"
    assert ev.read_bytes() == before


def test_sarif_and_json_on_one_path_is_refused(repo):
    out = repo / "same.json"
    r = CliRunner().invoke(main, ["scan", str(repo / "data" / "train.jsonl"), str(repo / "data" / "eval.jsonl"), "--json", str(out),
                                  "--sarif", str(out)])
    assert r.exit_code == 2
    assert r.output == f"leakcheck: error: --json {out} and --sarif {out} are the same file; give each output its own path\n"
    assert not out.exists()


def test_sarif_on_stdout_sends_the_terminal_summary_to_stderr(repo):
    r = CliRunner().invoke(main, ["scan", str(repo / "data" / "train.jsonl"), str(repo / "data" / "eval.jsonl"), "-j", "1", "--sarif", "-"])
    assert r.exit_code == 1
    validate(json.loads(r.stdout))
    assert "LEAKAGE FOUND" in r.stderr


def test_over_the_code_scanning_limit_errors_are_kept_first(repo, monkeypatch):
    import leakcheck.report.sarif as sarif

    train = repo / "data" / "train.jsonl"
    train.write_text("".join(reversed(train.read_text().splitlines(keepends=True))))  # rain-3 line 1, books-2 line 2, sheep-1 line 3
    monkeypatch.setattr(sarif, "MAX_RESULTS", 1)
    run = sarif_of(repo, "--fail-on", "prompt:exact")["runs"][0]
    assert [(r["properties"]["eval_id"], r["level"]) for r in run["results"]] == [("sheep-1", "error")]
    assert run["properties"]["results_left_out"] == 2
    monkeypatch.setattr(sarif, "MAX_RESULTS", 2)
    run = sarif_of(repo, "--fail-on", "prompt:exact")["runs"][0]
    assert [(r["properties"]["eval_id"], r["level"]) for r in run["results"]] == [("books-2", "warning"), ("sheep-1", "error")]
    assert run["properties"]["results_left_out"] == 1


@needs_shared
def test_gsm8k_test_items_pasted_into_train_are_results_at_their_lines(tmp_path):
    """The real GSM8K train set with every 50th test item pasted in after every 300th line, scanned against a GSM8K test index."""
    test = (SHARED_DATA / "gsm8k" / "test.jsonl").read_text().splitlines(keepends=True)
    mix = (SHARED_DATA / "gsm8k" / "train.jsonl").read_text().splitlines(keepends=True)
    pasted = test[::50]
    for k, item in enumerate(pasted):
        mix.insert(301 * (k + 1) - 1, item)
    lines = [i + 1 for i, line in enumerate(mix) if line in set(pasted)]
    assert len(lines) == len(pasted) == 27
    (tmp_path / "mix.jsonl").write_text("".join(mix))
    runner = CliRunner()
    assert runner.invoke(main, ["index", str(SHARED_DATA / "gsm8k" / "test.jsonl"), "-o", str(tmp_path / "gsm8k.lcx")]).exit_code == 0
    r = runner.invoke(main, ["scan", str(tmp_path / "mix.jsonl"), "--index", str(tmp_path / "gsm8k.lcx"), "-j", "1", "-q",
                             "--sarif", str(tmp_path / "leaks.sarif"), "--annotations", "github"], env={"GITHUB_WORKSPACE": str(tmp_path)})
    assert r.exit_code == 1
    doc = json.loads((tmp_path / "leaks.sarif").read_text())
    validate(doc)
    results = doc["runs"][0]["results"]
    assert [(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results] == [
        ("pair", "error", n) for n in lines]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} == {"mix.jsonl"}
    errors = [line for line in r.stdout.splitlines() if line.startswith("::error ")]
    assert [int(e.split(",line=")[1].split(",")[0]) for e in errors] == lines


def test_information_uri_comes_from_the_package_metadata(repo, monkeypatch):
    import email.message

    import leakcheck.report.sarif as sarif

    meta = email.message.Message()
    monkeypatch.setattr(sarif.metadata, "metadata", lambda name: meta)
    assert "informationUri" not in sarif_of(repo)["runs"][0]["tool"]["driver"]  # optional in SARIF: left out, never made up
    meta["Project-URL"] = "Documentation, https://example.org/docs"
    meta["Project-URL"] = "Repository, https://example.org/leakcheck"
    assert sarif_of(repo)["runs"][0]["tool"]["driver"]["informationUri"] == "https://example.org/leakcheck"
