from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("LEAKCHECK_SHARED_DATA", REPO.parent / "shared" / "data"))
EXAMPLES = REPO / "leakcheck" / "data"

needs_shared = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is not present")


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def jsonl(tmp_path: Path):
    """Write rows to a JSONL file in tmp_path: ``jsonl("train.jsonl", rows)``."""

    def make(name: str, rows: list) -> Path:
        return write_jsonl(tmp_path / name, rows)

    return make


@pytest.fixture(autouse=True)
def no_runner_env(monkeypatch):
    """A GitHub runner's GITHUB_STEP_SUMMARY/GITHUB_WORKSPACE must not leak into any scan a test runs (tests that need them set them)."""
    for var in ("GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A checkout holding the CI fixture (tests/fixtures/ci) under data/, as a workspace would."""
    (tmp_path / "data").mkdir()
    for name in ("train.jsonl", "eval.jsonl"):
        shutil.copy(Path(__file__).parent / "fixtures" / "ci" / name, tmp_path / "data" / name)
    return tmp_path
