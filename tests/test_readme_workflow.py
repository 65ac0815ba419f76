"""Issue 10: the README's GitHub Actions job, parsed and run step by step as a runner would.

Every ``run:`` step runs verbatim (``bash -eo pipefail``, as the runner's default shell) in a
temporary workspace holding the bundled example at the workflow's paths, with the job's
``env``, ``GITHUB_WORKSPACE`` and ``GITHUB_STEP_SUMMARY``. Only the install step is not run
(it installs from GitHub): the test checks its text and puts this environment's ``leakcheck``
first on ``PATH``. ``uses:`` steps are checked for their inputs; ``actions/cache`` is simulated
(a miss on the first run, a hit with the saved index on the second), and the files the upload
steps name must exist.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from .conftest import REPO

SCHEMA = json.loads((REPO / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text())
INSTALL = 'pip install "leakcheck @ git+https://github.com/OWNER/leakcheck"'
#: The step conditions the workflow may use, and how this runner evaluates them.
CONDITIONS = {
    "steps.eval-index.outputs.cache-hit != 'true'": lambda ws, hit: not hit,
    "always() && hashFiles('leaks.json') != ''": lambda ws, hit: (ws / "leaks.json").is_file(),
    "always() && hashFiles('leaks.sarif') != ''": lambda ws, hit: (ws / "leaks.sarif").is_file(),
}


def workflow() -> dict:
    """The one ```yaml block of README.md's "In GitHub Actions" section that is a workflow."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("### In GitHub Actions"):text.index("### As a pre-commit hook")]
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", section, re.S)]
    jobs = [b for b in blocks if isinstance(b, dict) and "jobs" in b]
    assert len(jobs) == 1
    return jobs[0]


def by_uses(steps: list[dict], action: str) -> dict:
    found = [s for s in steps if s.get("uses", "").split("@")[0] == action]
    assert len(found) == 1, action
    return found[0]


def test_the_workflow_has_every_part_of_the_job():
    wf = workflow()
    assert wf["permissions"] == {"contents": "read", "security-events": "write", "actions": "read"}
    job = wf["jobs"]["leakcheck"]
    steps = job["steps"]
    assert [s.get("uses", "").split("@")[0] for s in steps[:2]] == ["actions/checkout", "actions/setup-python"]
    assert [s["run"] for s in steps if "run" in s][0] == INSTALL
    cache = by_uses(steps, "actions/cache")
    assert cache["with"]["path"] == "evals.lcx" and "hashFiles(env.EVALS" in cache["with"]["key"]
    runs = [s for s in steps if "run" in s]
    index_step = next(s for s in runs if s["run"].startswith("leakcheck index"))
    assert index_step["if"] == f"steps.{cache['id']}.outputs.cache-hit != 'true'"
    assert "-o evals.lcx" in index_step["run"]
    scan = next(s for s in runs if s["run"].startswith("leakcheck scan"))
    assert scan["run"].split() == ["leakcheck", "scan", "$TRAIN", "--index", "evals.lcx", "--json", "leaks.json",
                                   "--annotations", "github", "--sarif", "leaks.sarif", '${BASELINE:+--baseline', '"$BASELINE"}']
    assert job["env"]["BASELINE"] == ""
    order = [s.get("uses", s.get("run", "")).split("@")[0].split(" ")[:2] for s in steps]
    assert order.index(["leakcheck", "report"]) > order.index(["leakcheck", "scan"])
    artifact = by_uses(steps, "actions/upload-artifact")
    assert "leaks.json" in artifact["with"]["path"].split() and artifact["if"].startswith("always()")
    sarif = by_uses(steps, "github/codeql-action/upload-sarif")
    assert sarif["with"]["sarif_file"] == "leaks.sarif" and sarif["if"].startswith("always()")
    assert steps.index(artifact) > steps.index(next(s for s in runs if s["run"].startswith("leakcheck report")))


def run_job(ws: Path, cache_hit: bool, **override: str) -> dict[str, subprocess.CompletedProcess]:
    """Run the job's steps in ``ws`` (``override``: job env values); returns each ``run:`` step's result by its first two words."""
    job = workflow()["jobs"]["leakcheck"]
    summary = ws.parent / f"summary-{ws.name}.md"
    summary.write_text("## Earlier step\n")
    env = {**os.environ, **job["env"], **override, "GITHUB_WORKSPACE": str(ws), "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTIONS": "true",
           "CI": "true", "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    out: dict[str, subprocess.CompletedProcess] = {}
    for step in job["steps"]:
        if "if" in step and not CONDITIONS[step["if"]](ws, cache_hit):
            continue
        if "uses" in step or step["run"] == INSTALL:
            continue
        res = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=ws, env=env,
                             capture_output=True, text=True, timeout=600)
        assert "Traceback" not in res.stderr, res.stderr
        out[" ".join(step["run"].split()[:2])] = res
    out["summary"] = subprocess.CompletedProcess([], 0, summary.read_text(), "")
    return out


def workspace(tmp_path: Path, name: str) -> Path:
    ws = tmp_path / name
    example = Path(workflow()["jobs"]["leakcheck"]["env"]["TRAIN"]).parent
    shutil.copytree(REPO / example, ws / example)
    return ws


@pytest.mark.skipif(shutil.which("bash") is None, reason="the runner's shell, bash, is not installed")
def test_the_workflow_runs_on_the_bundled_example(tmp_path):
    ws = workspace(tmp_path, "first")
    steps = run_job(ws, cache_hit=False)
    assert list(steps) == ["leakcheck index", "leakcheck scan", "leakcheck report", "summary"]
    assert steps["leakcheck index"].returncode == 0 and (ws / "evals.lcx").is_file()

    scan = steps["leakcheck scan"]
    assert scan.returncode == 1  # the gate fails the job: 35 of the 100 eval records are in train
    errors = [line for line in scan.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 35
    assert all(line.startswith("::error file=leakcheck/data/collabllm_medium/train.parquet,line=") for line in errors)
    assert scan.stdout.splitlines()[-1] == (
        "::notice title=leakcheck%3A eval set eval::leakage found: 35 of 100 eval records (35.0%25) occur in train; 35 gated findings (::error), "
        "0 not gated (::warning); GitHub shows the first 10 of each type per step, the JSON report lists them all")
    report = json.loads((ws / "leaks.json").read_text())
    assert report["summary"]["contaminated"]["count"] == 35 and report["gate"]["exit_code"] == 1

    sarif = json.loads((ws / "leaks.sarif").read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(sarif)
    results = sarif["runs"][0]["results"]
    assert len(results) == 35 and {r["level"] for r in results} == {"error"}
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} == {"leakcheck/data/collabllm_medium/train.parquet"}

    assert steps["leakcheck report"].returncode == 0
    assert "35 of 100 eval records (35.0%) occur in train." in (ws / "leaks.md").read_text()
    artifact = by_uses(workflow()["jobs"]["leakcheck"]["steps"], "actions/upload-artifact")["with"]["path"].split()
    assert all(list(ws.glob(p)) for p in artifact), [p for p in artifact if not list(ws.glob(p))]
    assert steps["summary"].stdout.startswith("## Earlier step\n\n# leakcheck: eval set eval\n\n**Leakage found** at a gated level. 35 of 100")

    again = workspace(tmp_path, "second")  # the next run: actions/cache restores the index
    shutil.copy(ws / "evals.lcx", again / "evals.lcx")
    steps2 = run_job(again, cache_hit=True)
    assert list(steps2) == ["leakcheck scan", "leakcheck report", "summary"]
    assert steps2["leakcheck scan"].returncode == 1
    assert json.loads((again / "leaks.json").read_text())["findings"] == report["findings"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="the runner's shell, bash, is not installed")
def test_a_bad_input_fails_the_scan_step_and_the_report_steps_skip(tmp_path):
    ws = workspace(tmp_path, "bad")
    steps = run_job(ws, cache_hit=False, TRAIN="data/missing.parquet")
    assert list(steps) == ["leakcheck index", "leakcheck scan", "summary"]  # no leaks.json: render and uploads skip
    scan = steps["leakcheck scan"]
    assert scan.returncode == 2
    assert scan.stderr == "leakcheck: error: data/missing.parquet: no such file or folder; check the path\n"
    assert not (ws / "leaks.json").exists() and not (ws / "leaks.sarif").exists()
    assert steps["summary"].stdout == "## Earlier step\n"  # a scan that judged nothing writes no summary


@pytest.mark.skipif(shutil.which("bash") is None, reason="the runner's shell, bash, is not installed")
def test_with_a_committed_baseline_the_job_passes_until_a_new_leak(tmp_path):
    ws = workspace(tmp_path, "baselined")
    env = workflow()["jobs"]["leakcheck"]["env"]
    made = subprocess.run([os.path.join(os.path.dirname(sys.executable), "leakcheck"), "baseline", env["TRAIN"], env["EVALS"],
                           "-o", "leakcheck-baseline.json"], cwd=ws, capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr
    steps = run_job(ws, cache_hit=False, BASELINE="leakcheck-baseline.json")
    scan = steps["leakcheck scan"]
    assert scan.returncode == 0, scan.stderr
    assert not [line for line in scan.stdout.splitlines() if line.startswith(("::error ", "::warning "))]
    assert "35 accepted by the baseline or allowlist (not annotated)" in scan.stdout.splitlines()[-1]
    results = json.loads((ws / "leaks.sarif").read_text())["runs"][0]["results"]
    assert len(results) == 35 and all(r["suppressions"][0]["status"] == "accepted" and r["level"] != "error" for r in results)
