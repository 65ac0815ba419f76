"""Issue 10: leakcheck as a pre-commit hook (.pre-commit-hooks.yaml), checked with pre-commit's own loader."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from pre_commit.clientlib import load_config, load_manifest

from leakcheck.cli import main

from .conftest import REPO

CI = REPO / "tests" / "fixtures" / "ci"
#: Installing the hook builds a fresh virtualenv with leakcheck and all its dependencies (measured: 85 s and 124 s
#: on a loaded 2-core machine with a warm pip cache), so the end-to-end run is opt-in.
E2E = os.environ.get("LEAKCHECK_PRECOMMIT_E2E") == "1"


def hook() -> dict:
    hooks = load_manifest(str(REPO / ".pre-commit-hooks.yaml"))  # raises InvalidManifestError on a bad manifest
    assert [h["id"] for h in hooks] == ["leakcheck"]
    return hooks[0]


def readme_config(tmp_path: Path) -> dict:
    """The ``.pre-commit-config.yaml`` block of README.md, loaded by pre-commit's config loader."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("### As a pre-commit hook"):]
    block = re.search(r"```yaml\n(# \.pre-commit-config\.yaml\n.*?)```", section, re.S)
    assert block is not None
    path = tmp_path / ".pre-commit-config.yaml"
    path.write_text(block.group(1))
    return load_config(str(path))


def test_manifest_is_valid_and_runs_the_scan_on_its_args_only():
    h = hook()
    assert h["entry"] == "leakcheck scan" and h["language"] == "python"
    assert h["pass_filenames"] is False and h["require_serial"] is True
    assert h["args"] == []  # the data repo names its train data and eval sets


@pytest.mark.parametrize("name, runs", [
    ("data/train.jsonl", True), ("data/shard-00001.jsonl.zst", True), ("sft/mix.parquet", True), ("evals/gsm8k.json", True),
    ("rows.csv.gz", True), ("rows.tsv", True), ("x.ndjson.bz2", True), ("saved/data-00000-of-00001.arrow", True),
    ("evals/benchmarks.lcx", True), ("train.jsonl.xz", True),
    ("README.md", False), ("train.py", False), ("data/notes.txt", False), ("model.safetensors", False), ("x.jsonl.bak", False),
])
def test_files_pattern_is_the_data_formats(name, runs):
    assert bool(re.search(hook()["files"], name)) is runs


def test_readme_config_loads_and_its_args_are_a_working_scan(tmp_path, monkeypatch):
    config = readme_config(tmp_path)
    (repo,) = config["repos"]
    (h,) = repo["hooks"]
    assert h["id"] == hook()["id"]
    # the README's args, in a data repo laid out as they say: a train folder and an eval index
    (tmp_path / "data" / "train").mkdir(parents=True)
    shutil.copy(CI / "train.jsonl", tmp_path / "data" / "train" / "part-0.jsonl")
    (tmp_path / "evals").mkdir()
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(main, ["index", str(CI / "eval.jsonl"), "-o", "evals/benchmarks.lcx"]).exit_code == 0
    entry = hook()["entry"].split()
    assert entry[0] == "leakcheck"
    r = CliRunner().invoke(main, [*entry[1:], *h["args"], "-j", "1"])
    assert r.exit_code == 1, r.output
    assert "LEAKAGE FOUND" in r.output


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.skipif(not E2E, reason="installs leakcheck and its dependencies into a fresh virtualenv (one to two minutes); "
                                    "set LEAKCHECK_PRECOMMIT_E2E=1 to run it")
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_pre_commit_installs_and_runs_the_hook(tmp_path):
    hook_repo = tmp_path / "hook"  # this checkout as a hook repository: the files a pip install needs, committed
    hook_repo.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(REPO / name, hook_repo / name)
    shutil.copytree(REPO / "leakcheck", hook_repo / "leakcheck", ignore=shutil.ignore_patterns("__pycache__"))
    git(hook_repo, "init", "-q")
    git(hook_repo, "add", ".")
    git(hook_repo, "commit", "-qm", "hook")
    data = tmp_path / "data-repo"
    (data / "data").mkdir(parents=True)
    for name in ("train.jsonl", "eval.jsonl"):
        shutil.copy(CI / name, data / "data" / name)
    (data / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo}\n    rev: {git(hook_repo, 'rev-parse', 'HEAD')}\n    hooks:\n      - id: leakcheck\n"
        "        args: [data/train.jsonl, data/eval.jsonl, -j, '1']\n")
    git(data, "init", "-q")
    git(data, "add", ".")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    pc = [sys.executable, "-m", "pre_commit", "run", "leakcheck"]
    r = subprocess.run([*pc, "--all-files"], cwd=data, env=env, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "LEAKAGE FOUND" in r.stdout and "- exit code: 1" in r.stdout
    (data / "notes.md").write_text("no data here\n")
    r = subprocess.run([*pc, "--files", "notes.md"], cwd=data, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "(no files to check)Skipped" in r.stdout
