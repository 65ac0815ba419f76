"""`leakcheck card`: the Train/eval overlap section of a dataset card, and `leakcheck conda`."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from huggingface_hub import DatasetCard, DatasetCardData

from leakcheck.cli import main
from leakcheck.report.card import END, START, update_card
from leakcheck.report.json import dumps

from .test_report_render import scanned  # noqa: F401  (fixture)

CARD = """---
# a comment the tool must keep
license: mit
language:
- en
pretty_name: "Farm math"
tags: [math,  rl]
---

# Farm math

Word problems about farms.

## Citation

Cite us.
"""


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def _split(text: str) -> tuple[str, str]:
    assert text.startswith("---\n")
    header, body = text[4:].split("\n---\n", 1)
    return header, body


@pytest.fixture
def report(tmp_path, scanned):  # noqa: F811
    p = tmp_path / "reports" / "leaks.json"
    p.parent.mkdir()
    p.write_text(dumps(scanned))
    (tmp_path / "reports" / "leaks.md").write_text("# report\n")
    return p


def test_card_keeps_the_rest_of_the_card_and_is_idempotent(tmp_path, report, scanned):  # noqa: F811
    card = tmp_path / "ds" / "README.md"
    card.parent.mkdir()
    card.write_text(CARD)
    res = run("card", str(card.parent), "--report", str(report))
    assert res.exit_code == 0, res.output
    assert res.output == f"wrote the Train/eval overlap section of {card}\n"
    text = card.read_text()
    header, body = _split(text)
    old_header, old_body = _split(CARD)
    # The header is the old one, byte for byte, plus our key at its end; the body gains our section at its end.
    assert header.startswith(old_header.rstrip("\n") + "\nleakcheck:\n")
    assert body.startswith(old_body + "\n" + START + "\n") and body.endswith(END + "\n")
    assert "**4 of 10 eval records (40.0%) also occur in the train split.**" in body
    assert "full report: [leaks.md](../reports/leaks.md)." in body
    assert "4 ids: `e0`, `e1`, `e2`, `e3`." in body
    assert "| `pair` | prompt **and** reward target of the same train record | 3 | 30.0 | 3 | 60.0 |" in body
    for side in ("eval", "train"):
        digest = hashlib.sha256(Path(getattr(scanned, side).files[0]).read_bytes()).hexdigest()
        assert f"- {side}: `{getattr(scanned, side).files[0]}` `{digest}`" in body
    assert run("card", str(card), "--report", str(report)).exit_code == 0
    assert card.read_text() == text


def test_card_loads_on_the_hub_side(tmp_path, report, scanned):  # noqa: F811
    card = tmp_path / "README.md"
    card.write_text(CARD)
    assert run("card", str(card), "--report", str(report), "--report-link", "https://example.org/r.html").exit_code == 0
    loaded = DatasetCard.load(card)
    assert isinstance(loaded.data, DatasetCardData)
    assert loaded.data.license == "mit" and loaded.data.language == ["en"] and loaded.data.tags == ["math", "rl"]
    meta = loaded.data.to_dict()["leakcheck"]
    assert meta["report"] == "https://example.org/r.html"
    assert meta["contaminated"]["eval"] == {
        "count": 4, "percent": 40.0,
        "by_kind": {"pair": {"count": 3, "percent": 30.0}, "prompt": {"count": 1, "percent": 10.0}},
        "by_subset": {"alpha": {"count": 4, "records": 6, "percent": 66.67}, "beta": {"count": 0, "records": 4, "percent": 0.0}},
    }
    assert meta["contaminated"]["train"] == {
        "count": 4, "percent": 80.0,
        "by_kind": {"pair": {"count": 3, "percent": 60.0}, "prompt": {"count": 1, "percent": 20.0}},
    }
    assert meta["eval_ids"] == ["e0", "e1", "e2", "e3"]
    assert meta["method"]["levels"] == ["exact", "normalized"]
    assert [f["sha256"] for f in meta["compared"]["eval"]["files"]] == [
        hashlib.sha256(Path(scanned.eval.files[0]).read_bytes()).hexdigest()]
    # The rest of the metadata is what it was.
    rest = {k: v for k, v in yaml.safe_load(_split(card.read_text())[0]).items() if k != "leakcheck"}
    assert rest == yaml.safe_load(_split(CARD)[0])


def test_section_is_replaced_in_place_and_old_key_too(tmp_path, report):
    card = tmp_path / "README.md"
    card.write_text(
        "---\nleakcheck:\n  version: 0.0.1\n  stale: true\n\nlicense: mit\n---\n\n# T\n\n"
        f"{START}\nold section\n{END}\n\n## After\n\nkept\n"
    )
    assert run("card", str(card), "--report", str(report)).exit_code == 0
    text = card.read_text()
    header, body = _split(text)
    assert header.startswith("leakcheck:\n  version: 0.1.0\n") and header.endswith("\n\nlicense: mit")
    assert "stale" not in header and "old section" not in body
    assert body.startswith("\n# T\n\n" + START) and body.endswith(END + "\n\n## After\n\nkept\n")


def test_missing_card_is_created_from_the_template(tmp_path, report):
    res = run("card", str(tmp_path / "new_ds"), "--report", str(report), "--pretty-name", "Farm math")
    assert res.exit_code == 0, res.output
    text = (tmp_path / "new_ds" / "README.md").read_text()
    assert text.startswith("---\npretty_name: Farm math\nleakcheck:\n")
    assert "# Dataset Card for Farm math" in text and "## Dataset Card Contact" in text
    assert text.index("## Dataset Card Contact") < text.index(START)
    assert DatasetCard.load(tmp_path / "new_ds" / "README.md").data.pretty_name == "Farm math"


def test_card_without_header_gets_one(tmp_path, report):
    card = tmp_path / "README.md"
    card.write_text("# Plain card\n")
    assert run("card", str(card), "--report", str(report)).exit_code == 0
    header, body = _split(card.read_text())
    assert header.startswith("leakcheck:\n") and body.startswith("\n# Plain card\n\n" + START)


@pytest.mark.parametrize(
    "text, message",
    [
        (f"# T\n{START}\nno end\n", "the card has a start marker of the leakcheck section but not the other"),
        ("---\nlicense: [mit\n---\n# T\n", "not a valid dataset card ("),
    ],
)
def test_broken_card_is_one_line_exit_2(tmp_path, report, text, message):
    card = tmp_path / "README.md"
    card.write_text(text)
    res = run("card", str(card), "--report", str(report))
    assert res.exit_code == 2 and message in res.output and res.output.count("\n") == 1, res.output
    assert card.read_text() == text


def test_missing_data_file_is_said_not_hashed(tmp_path, report, scanned):  # noqa: F811
    Path(scanned.train.files[0]).unlink()
    assert run("card", str(tmp_path / "ds"), "--report", str(report)).exit_code == 0
    text = (tmp_path / "ds" / "README.md").read_text()
    assert f"- train: `{scanned.train.files[0]}` (file not found when the card was written)" in text
    assert DatasetCard.load(tmp_path / "ds" / "README.md").data.to_dict()["leakcheck"]["compared"]["train"]["files"][0]["sha256"] is None


def test_update_card_data_root_resolves_relative_paths(tmp_path, scanned):  # noqa: F811
    import dataclasses

    rel = dataclasses.replace(scanned, eval=dataclasses.replace(scanned.eval, files=("eval.jsonl",)))
    out = update_card(tmp_path / "c.md", rel, data_root=tmp_path)
    digest = hashlib.sha256((tmp_path / "eval.jsonl").read_bytes()).hexdigest()
    assert f"- eval: `eval.jsonl` `{digest}`" in Path(out).read_text()


HEADER = "Evaluation Dataset;Subset;Contaminated Source;Model or corpus;Train Split;Development Split;Test Split;Approach;Reference;PR"


def test_conda_row(report):
    res = run("conda", str(report), "--dataset", "openai/gsm8k", "--subset", "main", "--source", "my-org/farm-sft",
              "--reference", "https://example.org/report.html")
    assert res.exit_code == 0, res.output
    assert res.output == HEADER + "\nopenai/gsm8k;main;my-org/farm-sft;corpus;;;40.0;data-based;https://example.org/report.html;\n"


def test_conda_by_subset_dev_split_model_to_file(tmp_path, report):
    out = tmp_path / "row.csv"
    res = run("conda", str(report), "--dataset", "d", "--source", "org/model", "--model", "--by-subset", "--split", "dev",
              "--pr", "42", "--no-header", "-o", str(out))
    assert res.exit_code == 0 and res.output == ""
    assert out.read_text() == "d;alpha;org/model;model;;66.67;;data-based;;42\nd;beta;org/model;model;;0.0;;data-based;;42\n"


def test_conda_rejects_separator_in_values(report):
    res = run("conda", str(report), "--dataset", "a;b", "--source", "s")
    assert res.exit_code == 2
    assert res.output == "leakcheck: error: conda: Evaluation Dataset 'a;b' contains ';', '\"' or a line break, which the CONDA file cannot hold\n"


# --- issue 8 §6: paths and links relative to the card, whatever the current folder -------------------


def _dataset_repo(tmp_path: Path) -> Path:
    """A dataset repo ``ds/`` with its data under ``data/``; returns the repo folder."""
    from .conftest import write_jsonl

    ds = tmp_path / "ds"
    (ds / "data").mkdir(parents=True)
    rows = [{"id": f"e{i}", "question": f"How many goats does farmer {i} keep in the barn over winter?",
             "answer": f"Farmer {i} keeps {3 * i} goats, three for each of {i} stalls."} for i in range(6)]
    write_jsonl(ds / "data" / "test.jsonl", rows)
    write_jsonl(ds / "data" / "train.jsonl", rows[:2])
    return ds


def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_card_of_a_scan_run_inside_the_repo_written_from_elsewhere(tmp_path, monkeypatch):
    ds = _dataset_repo(tmp_path)
    monkeypatch.chdir(ds)  # the scan names the data relative to the repo
    scan = run("scan", "data/train.jsonl", "data/test.jsonl", "--levels", "exact", "--json", "leaks.json", "--markdown", "leaks.md")
    assert scan.exit_code == 1, scan.output
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert run("card", "../ds", "--report", "../ds/leaks.json").exit_code == 0
    text = (ds / "README.md").read_text()
    assert "full report: [leaks.md](leaks.md)." in text
    assert f"- eval: `data/test.jsonl` `{_digest(ds / 'data' / 'test.jsonl')}`" in text
    assert f"- train: `data/train.jsonl` `{_digest(ds / 'data' / 'train.jsonl')}`" in text
    meta = DatasetCard.load(ds / "README.md").data.to_dict()["leakcheck"]
    assert (meta["report"], meta["compared"]["eval"]["path"]) == ("leaks.md", "data/test.jsonl")
    assert meta["compared"]["train"]["files"] == [{"path": "data/train.jsonl", "sha256": _digest(ds / "data" / "train.jsonl")}]
    monkeypatch.chdir(ds)  # the same card from inside the repo
    assert run("card", ".", "--report", "leaks.json").exit_code == 0
    assert (ds / "README.md").read_text() == text


def test_card_names_repo_data_relative_to_itself_when_the_scan_used_other_paths(tmp_path, monkeypatch):
    ds = _dataset_repo(tmp_path)
    reports = tmp_path / "reports"
    reports.mkdir()
    monkeypatch.chdir(tmp_path)
    assert run("scan", str(ds / "data" / "train.jsonl"), "ds/data/test.jsonl", "--levels", "exact",
               "--json", "reports/leaks.json").exit_code == 1
    (tmp_path / "link").symlink_to("ds")  # the card reached through a symlink: the link must still resolve
    assert run("card", "link", "--report", "reports/leaks.json").exit_code == 0
    text = (ds / "README.md").read_text()
    assert "full report: [leaks.json](../reports/leaks.json)." in text
    assert f"- eval: `data/test.jsonl` `{_digest(ds / 'data' / 'test.jsonl')}`" in text
    assert f"- train: `data/train.jsonl` `{_digest(ds / 'data' / 'train.jsonl')}`" in text
    assert "| eval | `data/test.jsonl` |" in text


def test_card_keeps_paths_of_data_outside_the_repo(tmp_path, report, scanned):  # noqa: F811
    assert run("card", str(tmp_path / "ds"), "--report", str(report)).exit_code == 0
    text = (tmp_path / "ds" / "README.md").read_text()
    assert f"- eval: `{scanned.eval.files[0]}` `{_digest(Path(scanned.eval.files[0]))}`" in text
