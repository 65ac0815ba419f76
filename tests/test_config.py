"""Issue 8 §5: ``[tool.leakcheck]`` values are type-checked, and empty field options are refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from leakcheck.cli import build_config, main
from leakcheck.config import SETTINGS, check_settings, load_pyproject

from .conftest import write_jsonl

Q = "Lena bakes 4 trays of 12 cookies and gives away 10. How many cookies are left?"
A = "She bakes 4 * 12 = 48 cookies and gives away 10, so 48 - 10 = 38 are left.\n#### 38"


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    write_jsonl(tmp_path / "eval.jsonl", [{"id": "e1", "question": Q, "answer": A}])
    write_jsonl(tmp_path / "train.jsonl", [{"question": Q, "answer": A}])
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(
    "line, message",
    [
        ('allow_partial = "false"', 'allow_partial must be true or false, without quotes, not the string "false"'),
        ("allow_partial = 1", "allow_partial must be true or false, without quotes, not the number 1"),
        ('near_threshold = "0.8"', 'near_threshold must be a number, without quotes, such as 0.6, not the string "0.8"'),
        ("near_threshold = true", "near_threshold must be a number, without quotes, such as 0.6, not the boolean true"),
        ("ngram = 12.5", "ngram must be a whole number, without quotes, not the number 12.5"),
        ('short_target_chars = "20"', 'short_target_chars must be a whole number, without quotes, not the string "20"'),
        ('prompt_field = ""', 'prompt_field must be a non-empty string such as "question", not the string ""'),
        ("target_field = 3", 'target_field must be a non-empty string such as "question", not the number 3'),
        ('levels = ["exact", 2]', 'levels must be a string or a list of strings such as ["exact", "normalized"], not the list ["exact", 2]'),
        ("fail_on = {level = \"exact\"}", 'fail_on must be a string or a list of strings such as ["exact", "normalized"], '
                                          'not the table {"level": "exact"}'),
        ('on_error = "ignore"', 'on_error must be "fail" or "skip", not the string "ignore"'),
    ],
)
def test_a_value_of_the_wrong_type_is_exit_2_naming_the_key(project, line, message):
    (project / "pyproject.toml").write_text(f"[tool.leakcheck]\nlevels = \"exact\"\n{line}\n" if not line.startswith("levels")
                                            else f"[tool.leakcheck]\n{line}\n")
    res = run("scan", "train.jsonl", "eval.jsonl")
    assert res.exit_code == 2
    assert res.output == f"leakcheck: error: {project / 'pyproject.toml'} [tool.leakcheck]: {message}\n"


def test_the_string_false_is_not_true(project):
    """The bug: ``allow_partial = "false"`` was truthy, so a scan that skipped rows passed as clean."""
    with open(project / "train.jsonl", "a") as fh:
        fh.write('{"question": "a row cut short", "answ\n')  # a bad row, skipped with on_error = "skip"
    base = '[tool.leakcheck]\nlevels = ["exact"]\nfail_on = "none"\non_error = "skip"\n'
    (project / "pyproject.toml").write_text(base + "allow_partial = false\n")
    assert build_config({}, load_pyproject()).allow_partial is False
    assert run("scan", "train.jsonl", "eval.jsonl").exit_code == 3  # partial, not accepted
    (project / "pyproject.toml").write_text(base + 'allow_partial = "false"\n')
    assert run("scan", "train.jsonl", "eval.jsonl").exit_code == 2
    (project / "pyproject.toml").write_text(base + "allow_partial = true\n")
    assert run("scan", "train.jsonl", "eval.jsonl").exit_code == 0


def test_every_key_is_typed_and_accepted_with_its_type(project):
    good = {"levels": ["exact"], "fail_on": "exact", "prompt_field": "question", "target_field": "answer", "id_field": "id",
            "group_field": "conv", "train_prompt_field": "question", "train_target_field": "answer",
            "eval_prompt_field": "question", "eval_target_field": "answer", "on_error": "skip", "allow_partial": True,
            "short_target_chars": 5, "max_target_hits": 3, "shingle": 2, "num_perm": 64, "ngram": 8,
            "near_threshold": 0.7, "contained_threshold": 1, "template_share": 0.5, "lsh_fp_weight": 0.1,
            "jobs": 1, "engine": "local", "ray_address": "auto", "examples": 3, "limits": {"target:exact": "0.5%"},
            "baseline": "leakcheck-baseline.json", "allowlist": "allow.toml", "allow": [{"eval_id": "e1", "reason": "accepted"}],
            "annotations": "github", "step_summary": False,
            "semantic_threshold": 0.4, "semantic_code_threshold": 0.3, "semantic_anchored_threshold": 0.5, "embedder": "none"}
    assert set(good) == set(SETTINGS)
    assert check_settings(good) == good
    cfg = build_config({}, {**good, "fail_on": "pair"})
    assert (cfg.allow_partial, cfg.on_error, cfg.contained.threshold, cfg.near.num_perm) == (True, "skip", 1.0, 64)
    assert (cfg.semantic.threshold, cfg.semantic.anchored_threshold, cfg.semantic.embedder) == (0.4, 0.5, "none")


def test_unknown_key_warns_and_a_non_table_is_exit_2(project):
    """Issue 10 turned an unknown key from an error into a warning that suggests the closest key (see test_policy.py)."""
    (project / "pyproject.toml").write_text('[tool.leakcheck]\nlevel = "exact"\n')
    res = run("scan", "train.jsonl", "eval.jsonl")
    assert res.exit_code == 1 and res.output.startswith(
        f"leakcheck: warning: {project / 'pyproject.toml'} [tool.leakcheck]: unknown key 'level' ignored; did you mean 'levels'?\n")
    (project / "pyproject.toml").write_text('[tool]\nleakcheck = "exact"\n')
    res = run("scan", "train.jsonl", "eval.jsonl")
    assert res.exit_code == 2 and res.output == (
        f'leakcheck: error: {project / "pyproject.toml"} [tool.leakcheck] must be a table of settings (key = value lines), '
        'not the string "exact"\n')


@pytest.mark.parametrize("option", ["--prompt-field", "--target-field", "--id-field", "--group-field",
                                    "--train-prompt-field", "--eval-target-field"])
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_field_option_is_refused(project, option, value):
    res = run("scan", "train.jsonl", "eval.jsonl", option, value)
    assert res.exit_code == 2
    assert res.output == (f"leakcheck: error: {option} is empty; pass a dotted field path such as question, "
                          "or leave the option out to detect the field\n")
