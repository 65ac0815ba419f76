"""scripts/make_examples.py and scripts/examples/: the bundled examples are what the generators make now.

Each example is regenerated into a temporary folder and compared byte for byte with
leakcheck/data/, so editing a generator or its vocabulary without regenerating fails here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from .conftest import EXAMPLES, REPO


def _entry_point():
    spec = importlib.util.spec_from_file_location("make_examples", REPO / "scripts" / "make_examples.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


make_examples = _entry_point()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("name", make_examples.NAMES)
def test_regenerating_an_example_gives_the_bundled_files_byte_for_byte(name, tmp_path, capsys):
    assert make_examples.main(["--out", str(tmp_path), name]) == 0
    fresh, bundled = _files(tmp_path / name), _files(EXAMPLES / name)
    assert sorted(fresh) == sorted(bundled)
    stale = [f for f in fresh if fresh[f] != bundled[f]]
    assert not stale, f"leakcheck/data/{name}: {stale} differ; run: python scripts/make_examples.py {name}"
    assert [p.name for p in tmp_path.iterdir()] == [name]  # only the folder asked for
    assert capsys.readouterr().out.startswith(f"wrote {tmp_path / name} (")


def test_every_bundled_example_has_a_generator():
    assert sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir() and not p.name.startswith("_")) == sorted(make_examples.NAMES)


def test_an_unknown_name_is_a_usage_error_naming_the_choices(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        make_examples.main(["--out", str(tmp_path), "chat_small", "chat_smal"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == ("make_examples.py: error: unknown example 'chat_smal'; choose from "
                   "collabllm_medium, healthbench_rubrics, healthbench_rubrics_verl, chat_small")
    assert list(tmp_path.iterdir()) == []  # nothing written before the names are checked


def test_a_fact_shared_by_two_topics_is_refused_with_the_file_and_the_fact(monkeypatch):
    from examples import healthbench_rubrics as hb

    topics = hb.vocab("healthbench_topics")["topics"]
    second = dict(topics[1], harmful=[topics[0]["harmful"][0], topics[1]["harmful"][1]])
    monkeypatch.setattr(hb, "vocab", lambda name: {"topics": [topics[0], second]})
    with pytest.raises(ValueError) as exc:
        hb.topics(["red_flags", "home_care", "clinician_options", "context_questions", "harmful"])
    assert str(exc.value) == ("vocab/healthbench_topics.toml: fact text in two topics: "
                              "'Recommends daily opioid painkillers as the main way to control the headaches.'")


@pytest.mark.parametrize("module", ["examples", "examples.collabllm_medium", "examples.healthbench_questions", "examples.healthbench_rubrics_verl"])
def test_the_generators_doctests_pass(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0
