"""Issue 10: GitHub Actions annotations (workflow commands) and the step summary, through the CLI."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from leakcheck.cli import main
from leakcheck.report.github import command, escape_data, escape_property, repo_path

CI = Path(__file__).parent / "fixtures" / "ci"
#: The fixture's findings: sheep-1 a pair at exact (train line 2), books-2 a pair at exact whose prompt is near
#: (line 3), rain-3 a prompt at near (line 4); clean-4 is in no train record.
SHEEP = ("Eval record sheep-1 of eval set eval is in train record 1: pair at exact (prompt exact 1.00, target exact 1.00), score 1.00. "
         "Eval text: A farmer has 17 sheep and buys 5 more each week for 6 weeks. How many sheep does the farmer have at the end?")


def scan(repo: Path, *args: str, env: dict[str, str] | None = None):
    r = CliRunner().invoke(main, ["scan", str(repo / "data" / "train.jsonl"), str(repo / "data" / "eval.jsonl"), "-j", "1", *args],
                           env={"GITHUB_WORKSPACE": str(repo), **(env or {})})
    assert "Traceback" not in r.output, r.output
    return r


def commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("::")]


@pytest.mark.parametrize("raw, data, prop", [
    ("50%", "50%25", "50%25"),
    ("a\rb", "a%0Db", "a%0Db"),
    ("a\nb", "a%0Ab", "a%0Ab"),
    ("a:b", "a:b", "a%3Ab"),
    ("a,b", "a,b", "a%2Cb"),
    ("%0A", "%250A", "%250A"),  # % first, so an escape in the data is not read as one
])
def test_each_escape_as_the_runner_reads_it(raw, data, prop):
    assert escape_data(raw) == data
    assert escape_property(raw) == prop
    assert command("warning", {"file": raw, "line": None}, raw) == f"::warning file={prop}::{data}"


def runner_parse(line: str) -> tuple[str, dict[str, str], str]:
    """How the Actions runner reads a workflow command: a port of ``ActionCommand.TryParseV2`` and its
    unescaping (github.com/actions/runner, src/Runner.Common/ActionCommand.cs at 258d6c8)."""
    def unescape(text: str, mappings: tuple[tuple[str, str], ...]) -> str:
        for token, escaped in mappings:
            text = text.replace(escaped, token)
        return text

    data_map = (("\r", "%0D"), ("\n", "%0A"), ("%", "%25"))
    prop_map = (("\r", "%0D"), ("\n", "%0A"), (":", "%3A"), (",", "%2C"), ("%", "%25"))
    line = line.lstrip()
    assert line.startswith("::")
    end = line.index("::", 2)
    info = line[2:end]
    name, _, props = info.partition(" ")
    parsed = {}
    for item in (p for p in props.strip().split(",") if p):
        key, sep, value = item.partition("=")
        if sep and value:
            parsed[key] = unescape(value, prop_map)
    return name, parsed, unescape(line[end + 2:], data_map)


#: Property values as the runner keeps them: it trims the property list, so no edge whitespace.
_values = st.text(st.characters(codec="utf-8"), min_size=1).filter(lambda v: v == v.strip())


@given(file=_values, title=_values, message=st.text(st.characters(codec="utf-8")))
def test_the_runner_reads_back_exactly_what_was_escaped(file, title, message):
    line = command("error", {"file": file, "line": 12, "title": title}, message)
    assert "\n" not in line and "\r" not in line  # one line: a message cannot start a command of its own
    assert runner_parse(line) == ("error", {"file": file, "line": "12", "title": title}, message)


def test_gated_findings_are_errors_at_train_file_and_line_with_a_notice(repo):
    r = scan(repo, "--annotations", "github", "-q")
    assert r.exit_code == 1
    assert commands(r.stdout) == [
        f"::error file=data/train.jsonl,line=2,title=leakcheck%3A pair leak at exact::{SHEEP}",
        "::error file=data/train.jsonl,line=3,title=leakcheck%3A pair leak at exact::Eval record books-2 of eval set eval is in train record 2: "
        "pair at exact (prompt near 0.70, target exact 1.00), score 1.00. Eval text: A library lends 120 books on Monday and twice as many on "
        "Tuesday, then 45 fewer on Wednesday than on Tuesday. How many books were lent in the three days?",
        "::error file=data/train.jsonl,line=4,title=leakcheck%3A prompt leak at near::Eval record rain-3 of eval set eval is in train record 3: "
        "prompt at near, score 0.83. Eval text: Write a short persuasive paragraph for commuters about why cycling to work in the rain is better "
        "than it sounds, mentioning mudguards and a change of socks.",
        "::notice title=leakcheck%3A eval set eval::leakage found: 3 of 4 eval records (75.0%25) occur in train; "
        "3 gated findings (::error), 0 not gated (::warning)",
    ]
    assert r.stdout.count("\n") == 4  # --quiet: nothing but the annotations asked for


def test_ungated_findings_are_warnings(repo):
    r = scan(repo, "--annotations", "github", "-q", "--fail-on", "prompt:exact")
    assert r.exit_code == 1
    lines = commands(r.stdout)
    assert [line.split(" ", 1)[0] for line in lines] == ["::error", "::warning", "::warning", "::notice"]
    assert lines[1].startswith("::warning file=data/train.jsonl,line=3,title=leakcheck%3A pair leak at exact::Eval record books-2 ")
    assert lines[3].endswith("::leakage found: 1 of 4 eval records (25.0%25) occur in train; 1 gated findings (::error), 2 not gated (::warning)")


def test_ungated_only_and_clean_scans(repo, tmp_path):
    r = scan(repo, "--annotations", "github", "-q", "--fail-on", "none")
    assert r.exit_code == 0
    assert [line.split(" ", 1)[0] for line in commands(r.stdout)] == ["::warning"] * 3 + ["::notice"]
    from .conftest import write_jsonl

    clean = write_jsonl(tmp_path / "clean.jsonl", [{"question": "How do I boil an egg so that the yolk stays soft?", "answer": "Six minutes."}])
    r = CliRunner().invoke(main, ["scan", str(clean), str(CI / "eval.jsonl"), "-j", "1", "-q", "--annotations", "github"])
    assert r.exit_code == 0
    assert r.stdout == ("::notice title=leakcheck%3A eval set eval::no leakage at a gated level: 0 of 4 eval records (0.0%25) occur in train; "
                        "0 gated findings (::error), 0 not gated (::warning)\n")


def test_no_annotations_without_the_option(repo):
    assert commands(scan(repo).stdout) == []


def test_file_property_is_escaped_and_outside_the_workspace_stays_absolute(tmp_path):
    odd = tmp_path / "mix,50%:v2.jsonl"
    shutil.copy(CI / "train.jsonl", odd)
    ws = tmp_path / "workspace"
    ws.mkdir()
    r = CliRunner().invoke(main, ["scan", str(odd), str(CI / "eval.jsonl"), "--levels", "exact", "-q", "--annotations", "github"],
                           env={"GITHUB_WORKSPACE": str(ws)})
    assert r.exit_code == 1
    first = commands(r.stdout)[0]
    assert first.startswith(f"::error file={escape_property(str(odd))},line=2,")
    assert f"file={str(tmp_path).replace(':', '%3A')}/mix%2C50%25%3Av2.jsonl,line=2," in first


def test_paths_are_relative_to_the_current_folder_without_a_workspace(repo, monkeypatch):
    monkeypatch.chdir(repo)
    assert repo_path(str(repo / "data" / "train.jsonl")) == "data/train.jsonl"
    assert repo_path("data/train.jsonl") == "data/train.jsonl"


def test_annotations_go_to_stderr_when_a_report_is_on_stdout(repo):
    r = scan(repo, "--annotations", "github", "--json", "-")
    assert r.exit_code == 1
    assert commands(r.stdout) == [] and r.stdout.startswith("{")
    assert len(commands(r.stderr)) == 4


def test_step_summary_is_appended_to_what_is_there(repo, tmp_path):
    summary = tmp_path / "step_summary.md"
    before = "## Earlier step\n\nkept as it was\n"
    summary.write_text(before)
    r = scan(repo, "--json", str(tmp_path / "leaks.json"), env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert r.exit_code == 1
    text = summary.read_text()
    assert text.startswith(before + "\n# leakcheck: eval set eval\n\n**Leakage found** at a gated level. 3 of 4 eval records (75.0%) occur in train.\n")
    assert "\n## Summary\n" in text and "\n## Leaks\n" in text
    assert "| sheep-1 | 1 | `pair` | exact (prompt exact 1.00, target exact 1.00) | 1.00 |" in text
    assert "What was compared" not in text  # short: verdict, counts and the leaks only
    assert text.count("# leakcheck: eval set") == 1


def test_step_summary_lists_ten_leaks_and_says_where_the_rest_are(tmp_path):
    rows = [{"id": f"q{i}", "question": f"Item {i}: how many apples are left when {i} of {i + 40} apples are eaten by the {i} goats?",
             "answer": f"There are {i + 40} - {i} = 40 apples left over after the goats ate {i}."} for i in range(12)]
    from .conftest import write_jsonl

    ev = write_jsonl(tmp_path / "eval.jsonl", rows)
    summary = tmp_path / "summary.md"
    r = CliRunner().invoke(main, ["scan", str(ev), str(ev), "--levels", "exact", "-q", "--json", str(tmp_path / "r.json"), "--annotations", "github"],
                           env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert r.exit_code == 1
    assert len(commands(r.stdout)) == 13
    assert r.stdout.endswith("12 gated findings (::error), 0 not gated (::warning); GitHub shows the first 10 of each type per step, "
                             "the JSON report lists them all\n")
    text = summary.read_text()
    assert sum(line.startswith("| q") for line in text.splitlines()) == 10
    assert "2 more findings are in the JSON report (this table lists the first 10)." in text


def test_several_eval_sets_one_section_each(repo, tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("x\n")
    r = CliRunner().invoke(main, ["scan", str(repo / "data" / "train.jsonl"), str(repo / "data" / "eval.jsonl"), str(CI / "train.jsonl"),
                                  "--name", f"bench={CI / 'train.jsonl'}", "--levels", "exact", "-q", "--annotations", "github"],
                           env={"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_WORKSPACE": str(repo)})
    assert r.exit_code == 1
    text = summary.read_text()
    assert [line for line in text.splitlines() if line.startswith("# ")] == ["# leakcheck: eval set eval", "# leakcheck: eval set bench"]
    assert [line.split("::", 2)[1] for line in commands(r.stdout) if line.startswith("::notice")] == [
        "notice title=leakcheck%3A eval set eval", "notice title=leakcheck%3A eval set bench"]


def test_no_step_summary_opts_out(repo, tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("only this\n")
    r = scan(repo, "--no-step-summary", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert r.exit_code == 1
    assert summary.read_text() == "only this\n"


def test_step_summary_in_a_missing_folder_is_one_line_before_the_scan(repo, tmp_path):
    missing = tmp_path / "nope" / "summary.md"
    r = scan(repo, env={"GITHUB_STEP_SUMMARY": str(missing)})
    assert r.exit_code == 2
    assert r.output == f"leakcheck: error: {missing}: the folder {missing.parent} does not exist; create it first\n"


def test_step_summary_that_is_an_input_is_refused(repo):
    r = scan(repo, env={"GITHUB_STEP_SUMMARY": str(repo / "data" / "eval.jsonl")})
    assert r.exit_code == 2
    assert r.output == (f"leakcheck: error: GITHUB_STEP_SUMMARY {repo / 'data' / 'eval.jsonl'} is the eval input; "
                        "choose another path: leakcheck never writes over an input\n")


def test_a_hub_train_set_is_annotated_at_the_cached_file_leakcheck_read(tmp_path, monkeypatch):
    import json

    from huggingface_hub import constants as hf_constants

    from .test_hub import SHA, parquet, write_repo

    hub, work = tmp_path / "hub", tmp_path / "work"
    hub.mkdir()
    work.mkdir()
    monkeypatch.chdir(work)
    for name, value in (("HF_HUB_CACHE", str(hub)), ("HF_HUB_OFFLINE", True)):
        monkeypatch.setenv(name, str(value) if value is not True else "1")
        monkeypatch.setattr(hf_constants, name, value)
    rows = [{"question": "Unrelated: how long do I boil an egg for a soft yolk?", "answer": "About six minutes, then cold water."},
            {"question": (q := "A farmer has 17 sheep and buys 5 more each week for 6 weeks. How many sheep does the farmer have at the end?"),
             "answer": (a := "The farmer buys 5 * 6 = 30 sheep, so 17 + 30 = 47 sheep in total.\n#### 47")}]
    write_repo(hub, "org/mix", {"README.md": "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: train-*\n---\n",
                                "train-00000-of-00001.parquet": parquet(rows)})
    from .conftest import write_jsonl

    ev = write_jsonl(work / "eval.jsonl", [{"id": "sheep-1", "question": q, "answer": a}])
    r = CliRunner().invoke(main, ["scan", "org/mix", str(ev), "--levels", "exact", "-q", "--annotations", "github", "--json", "r.json",
                                  "--sarif", "r.sarif"], env={"GITHUB_WORKSPACE": str(work)})
    assert r.exit_code == 1, r.output
    read = json.loads((work / "r.json").read_text())["train"]["files"]
    assert len(read) == 1 and read[0].endswith(f"snapshots/{SHA}/train-00000-of-00001.parquet")
    assert commands(r.stdout)[0].startswith(f"::error file={escape_property(read[0])},line=2,title=leakcheck%3A pair leak at exact::")
    loc = json.loads((work / "r.sarif").read_text())["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert loc == {"artifactLocation": {"uri": Path(read[0]).absolute().as_uri()}, "region": {"startLine": 2}}


def test_gated_chance_matches_are_counted_in_the_notice(tmp_path):
    from .conftest import write_jsonl

    ev = write_jsonl(tmp_path / "eval.jsonl", [{"id": "two", "question": "What is two plus two, written as a number?", "answer": "4"}])
    tr = write_jsonl(tmp_path / "train.jsonl", [{"question": "How many legs does a dog have, counting all of them?", "answer": "4"}])
    base = ["scan", str(tr), str(ev), "--levels", "exact", "-q", "--annotations", "github"]
    r = CliRunner().invoke(main, [*base, "--fail-on", "any"])
    assert r.exit_code == 1
    assert r.stdout == ("::notice title=leakcheck%3A eval set eval::leakage found: 0 of 1 eval records (0.0%25) occur in train; 0 gated findings "
                        "(::error), 0 not gated (::warning); 1 chance target matches gated (--fail-on chance), listed in the report\n")
    r = CliRunner().invoke(main, base)
    assert r.exit_code == 0 and "chance" not in r.stdout
