"""Issue 8 §4: the reader never passes data it did not read; §5: pathological input stays bounded.

Every case here exited 0 (or crashed) while a leak sat in the data. Files are real files in
real formats, written to tmp_path; messages and exit codes are pinned exactly.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import json
import lzma
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from click.testing import CliRunner

import leakcheck
from leakcheck import InputError, ScanConfig
from leakcheck.cli import main
from leakcheck.io import readers, sources
from leakcheck.report.json import to_dict
from leakcheck.result import UnreadFile

from .conftest import write_jsonl

EX = ScanConfig(levels=("exact", "normalized"))
SKIP = ScanConfig(levels=("exact", "normalized"), on_error="skip")
Q = "Which planet is known as the red planet, and why does it look red?"
A = "Mars looks red because iron oxide (rust) covers its surface dust and rocks."
FIXTURES = Path(__file__).parent / "fixtures"


def row(q: str = Q, a: str | None = A) -> bytes:
    return (json.dumps({"question": q, "answer": a}) + "\n").encode()


OTHER = row("An unrelated question about tides?", "The moon pulls the sea, twice a day, more or less.")


@pytest.fixture
def ev(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "eval.jsonl", [{"question": Q, "answer": A}])


def cli(*args) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["scan", *map(str, args), "--levels", "exact,normalized"])
    assert "Traceback" not in r.output and "internal error" not in r.output
    return r.exit_code, r.output


def error_of(train, ev, cfg: ScanConfig = EX) -> str:
    with pytest.raises(InputError) as ei:
        leakcheck.scan(train, ev, cfg)
    return str(ei.value)


def kinds(r) -> list[tuple[str, str, str]]:
    return [(f.train_id, f.kind, f.level) for f in r.findings]


# --- format detection from a sample -------------------------------------------------------

def test_null_target_in_row_0_does_not_turn_target_checking_off(tmp_path, ev):
    """verl data whose first row has ground_truth null: the file is still verl, row 2's target leaks."""
    chat = lambda q: [{"role": "user", "content": q}]  # noqa: E731
    p = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist([
        {"prompt": chat("A first prompt, with no reference answer."), "reward_model": {"style": "rule", "ground_truth": None}},
        {"prompt": chat("A different prompt, whose reference is the eval answer."), "reward_model": {"style": "rule", "ground_truth": A}},
    ]), p)
    r = leakcheck.scan(p, ev, EX)
    assert r.train.format == "verl" and r.train.fields["target"] == "reward_model.ground_truth"
    assert kinds(r) == [("1", "target", "exact")]
    assert (r.train.records, r.train.no_target, r.train.skipped) == (2, 1, {})
    assert to_dict(r)["train"]["no_target"] == 1
    code, out = cli(p, ev)
    assert code == 1
    assert ("note: train: 1 of 2 records have no reward_model.ground_truth (missing, null or empty): "
            "their prompts were compared, their targets could not be") in out


def test_missing_target_key_in_row_0_and_a_null_one_in_eval(tmp_path):
    """JSONL writers that drop null keys: row 0 has no "answer" at all. Still gsm8k."""
    tr = tmp_path / "train.jsonl"
    tr.write_bytes(json.dumps({"question": "Only a question here?"}).encode() + b"\n" + OTHER + row("Some other question?", A))
    ev = tmp_path / "eval.jsonl"
    ev.write_bytes(row() + row("An eval item with no answer yet?", None))
    r = leakcheck.scan(tr, ev, EX)
    assert (r.train.format, r.eval.format) == ("gsm8k", "gsm8k")
    assert kinds(r) == [("2", "target", "exact")]
    assert (r.train.no_target, r.eval.no_target, r.eval.records) == (1, 1, 2)


@pytest.mark.parametrize("rows, name, target", [
    ([{"text": "A page of text."}, {"text": "Another page."}], "text", None),
    ([{"question": "Only questions?"}, {"question": "Still no answers?"}], "question-only", None),
    ([{"question": "q?", "answer": None}, {"question": "q2?", "answer": None}], "gsm8k", "answer"),  # answers to come
])
def test_a_target_no_sampled_record_has_does_not_make_the_format(tmp_path, ev, rows, name, target):
    r = leakcheck.scan(write_jsonl(tmp_path / "t.jsonl", rows), ev, EX)
    assert (r.train.format, r.train.fields["target"], r.train.no_target) == (name, target, 2 if target else 0)


def test_the_format_most_sampled_records_fit_wins(tmp_path, ev):
    """One stray record first no longer decides the format of the thousand after it."""
    rows = [{"text": "a stray note"}] + [{"question": f"Question number {i}?", "answer": f"Answer number {i}, spelled out."} for i in range(5)]
    p = write_jsonl(tmp_path / "t.jsonl", rows + [{"question": Q, "answer": A}])
    assert error_of(p, ev) == (f"{p}: line 1: field question is missing (format gsm8k, detected from lines 1-7); "
                               "pass --prompt-field/--target-field/--id-field with the path this file uses, or pass --on-error skip")
    r = leakcheck.scan(p, ev, SKIP)
    assert r.train.skipped == {"missing_field": 1} and kinds(r) == [("6", "pair", "exact")]


def test_a_sample_without_objects_detects_from_the_first_object_after_it(tmp_path, ev):
    p = tmp_path / "t.jsonl"
    p.write_bytes(b"[1, 2]\n" * 1000 + OTHER + row())
    r = leakcheck.scan(p, ev, SKIP)
    assert r.train.format == "gsm8k" and r.train.skipped == {"not_object": 1000}
    assert kinds(r) == [("1001", "pair", "exact")]


def test_column_names_match_up_to_case(tmp_path, ev):
    p = tmp_path / "t.csv"
    with open(p, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["ID", "Question", "Answer"])
        w.writerow(["q-1", "Something else entirely?", "No, nothing like it at all."])
        w.writerow(["q-2", Q, A])
    r = leakcheck.scan(p, ev, EX)
    assert r.train.format == "gsm8k"
    assert r.train.fields == {"prompt": "Question", "target": "Answer", "id": "ID", "group": None}
    assert kinds(r) == [("q-2", "pair", "exact")]


def test_a_given_field_that_is_nowhere_is_an_error(tmp_path):
    tr = write_jsonl(tmp_path / "t.jsonl", [{"id": "a", "question": Q, "answer": A}, {"id": "b", "question": "Q2?", "answer": "A2"}])
    ev = write_jsonl(tmp_path / "e.jsonl", [{"id": "e1", "question": Q, "answer": A}])
    code, out = cli(tr, ev, "--id-field", "uid")  # the eval side is read first
    assert code == 2 and out == (f"leakcheck: error: {ev}: the id field uid is in none of the 1 sampled record "
                                 "(their fields: answer, id, question) (did you mean id?); pass --id-field with one of those paths\n")
    code, out = cli(tr, ev, "--train-target-field", "answers", "--on-error", "skip")
    assert code == 2 and out == (f"leakcheck: error: {tr}: the target field answers is in none of the 2 sampled records "
                                 "(their fields: answer, id, question) (did you mean answer?); pass --target-field with one of those paths\n")


def test_a_row_without_the_given_id_is_that_rows_error(tmp_path, ev):
    p = write_jsonl(tmp_path / "t.jsonl", [{"uid": "a", "question": "Q1?", "answer": "A1"}, {"question": Q, "answer": A}])
    assert error_of(p, ev, EX.with_(train_fields=leakcheck.Fields(id="uid"))) == (
        f"{p}: line 2: id uid is missing or null, not a value; give every row an id, or pass another --id-field, or pass --on-error skip")
    r = leakcheck.scan(p, ev, SKIP.with_(train_fields=leakcheck.Fields(id="uid")))
    assert r.train.skipped == {"bad_id": 1} and r.train.records == 1


# --- every compression, every file listed ---------------------------------------------------

def _zstd_frames(*parts: bytes) -> bytes:
    return b"".join(zstandard.ZstdCompressor().compress(p) for p in parts)


def test_a_folder_reads_every_compression_and_lists_what_it_did_not_read(tmp_path, ev):
    d = tmp_path / "shards"
    (d / "sub").mkdir(parents=True)
    (d / ".cache" / "huggingface").mkdir(parents=True)
    (d / "a.jsonl.gz").write_bytes(gzip.compress(OTHER))
    (d / "b.jsonl.bz2").write_bytes(bz2.compress(row("Second question here?", "Second answer, long enough.")))
    (d / "c.jsonl.xz").write_bytes(lzma.compress(row("Third question here?", "Third answer, long enough too.")))
    (d / "sub" / "d.jsonl.zst").write_bytes(_zstd_frames(row("Fourth question?", "Fourth answer, long enough."), row()))
    (d / "sub" / "e.csv.zst").write_bytes(zstandard.ZstdCompressor().compress(f'question,answer\n"{Q}",x\n'.encode()))
    (d / ".cache" / "huggingface" / "x.lock").write_text("")
    (d / ".extra.jsonl").write_bytes(row())
    (d / "README.md").write_text("# shards\n")
    (d / "f.jsonl.lz4").write_bytes(b"\x04\x22\x4d\x18")
    (d / "g.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    r = leakcheck.scan(d, ev, EX)
    assert [os.path.relpath(f, d) for f in r.train.files] == ["a.jsonl.gz", "b.jsonl.bz2", "c.jsonl.xz", "sub/d.jsonl.zst", "sub/e.csv.zst"]
    assert kinds(r) == [("4", "pair", "exact"), ("5", "prompt", "exact")]
    assert [(u.path.removeprefix(f"{d}/"), u.reason) for u in r.train.unread] == [
        (".cache/", "hidden"),
        (".extra.jsonl", "hidden"),
        ("README.md", "not a data file"),
        ("f.jsonl.lz4", "unsupported compression (.lz4): recompress it with gzip, bzip2, xz or zstd"),
        ("g.zip", "archive: unpack it to scan its files"),
    ]
    assert to_dict(r)["train"]["unread"][0] == {"path": f"{d}/.cache/", "reason": "hidden"}
    code, out = cli(d, ev)
    assert code == 1
    assert ("note: train: 5 file(s) not read (1 archive, 2 hidden, 1 not a data file, 1 unsupported compression (.lz4)): "
            ".cache, .extra.jsonl, README.md, ...") in out


def test_a_glob_lists_what_it_matched_but_did_not_read(tmp_path, ev):
    (tmp_path / "part-0.jsonl.zst").write_bytes(_zstd_frames(row()))
    (tmp_path / "part-1.txt").write_text("notes")
    r = leakcheck.scan(str(tmp_path / "part-*"), ev, EX)
    assert [os.path.basename(f) for f in r.train.files] == ["part-0.jsonl.zst"]
    assert r.train.unread == (UnreadFile(str(tmp_path / "part-1.txt"), "not a data file"),)
    assert kinds(r) == [("0", "pair", "exact")]


@pytest.mark.parametrize("name, data, codec", [
    ("t.jsonl.zst", _zstd_frames(OTHER * 500, row() * 500), "zstd"),
    ("t.jsonl.bz2", bz2.compress(OTHER * 500 + row() * 500), "bzip2"),
    ("t.jsonl.xz", lzma.compress(OTHER * 500 + row() * 500), "xz"),
])
def test_a_cut_off_compressed_shard_is_an_error_not_a_short_one(tmp_path, ev, name, data, codec):
    p = tmp_path / name
    p.write_bytes(data[: len(data) * 2 // 3])
    msg = error_of(p, ev)
    assert msg.startswith(f"{p}: after line ") and "compressed data is truncated or corrupt" in msg
    assert msg.endswith(f"re-download or re-compress the file ({codec} -t tests it)")
    assert error_of(p, ev, SKIP) == msg


@pytest.mark.parametrize("suffix, codec", [(".zst", "zstd"), (".xz", "xz"), (".bz2", "bzip2")])
def test_a_codec_name_on_a_plain_file(tmp_path, ev, suffix, codec):
    p = tmp_path / f"t.jsonl{suffix}"
    p.write_bytes(row())
    assert error_of(p, ev) == f"{p}: is not {codec}-compressed although its name ends in {suffix}; rename it without {suffix} or compress it with {codec}"


def test_compressed_bytes_under_a_plain_name_are_read(tmp_path, ev):
    p = tmp_path / "t.jsonl"
    p.write_bytes(gzip.compress(row()))
    assert kinds(leakcheck.scan(p, ev, EX)) == [("0", "pair", "exact")]


def test_unreadable_subfolder_and_file_fail(tmp_path, ev, monkeypatch):
    d = tmp_path / "data"
    (d / "locked").mkdir(parents=True)
    (d / "ok.jsonl").write_bytes(OTHER)
    (d / "locked" / "x.jsonl").write_bytes(row())
    real_scandir, real_access = os.scandir, os.access

    def scandir(path="."):  # root may read anything, so simulate the OS saying no
        if os.fspath(path) == str(d / "locked"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, out = cli(d, ev)
    assert code == 2 and out == (f"leakcheck: error: {d / 'locked'}: permission denied: the folder cannot be listed; "
                                 "make it readable (chmod +rx) or move it out of the input\n")
    monkeypatch.setattr(os, "scandir", real_scandir)
    monkeypatch.setattr(os, "access", lambda p, mode: False if os.fspath(p) == str(d / "ok.jsonl") else real_access(p, mode))
    assert error_of(d, ev) == f"{d / 'ok.jsonl'}: permission denied; make the file readable (chmod +r) or run as a user who may read it"


def test_dangling_symlinks_and_symlink_loops(tmp_path, ev):
    d = tmp_path / "data"
    d.mkdir()
    (d / "ok.jsonl").write_bytes(OTHER)
    (d / "gone.jsonl").symlink_to(tmp_path / "deleted.jsonl")
    code, out = cli(d, ev)
    assert code == 2 and out == (f"leakcheck: error: {d / 'gone.jsonl'}: is a dangling symlink (to {tmp_path / 'deleted.jsonl'}, "
                                 "which does not exist); fix the link or remove it\n")
    assert error_of(d / "gone.jsonl", ev).startswith(f"{d / 'gone.jsonl'}: is a dangling symlink")
    (d / "gone.jsonl").unlink()
    (tmp_path / "a.jsonl").symlink_to(tmp_path / "b.jsonl")
    (tmp_path / "b.jsonl").symlink_to(tmp_path / "a.jsonl")
    assert error_of(tmp_path / "a.jsonl", ev) == f"{tmp_path / 'a.jsonl'}: is a symlink loop; point the link at a real file or folder, or remove it"
    (d / "up").symlink_to(d, target_is_directory=True)
    assert error_of(d, ev) == f"{d / 'up'}: is a symlink loop (it leads back to {d}); remove the link or point it outside the folder"
    (d / "up").unlink()
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "leak.jsonl").write_bytes(row())
    (d / "linked").symlink_to(other, target_is_directory=True)  # a symlinked folder is read, not skipped
    assert kinds(leakcheck.scan(d, ev, EX)) == [("1", "pair", "exact")]


# --- CSV ----------------------------------------------------------------------------------

def test_a_stray_quote_in_a_csv_fails_with_its_line(tmp_path, ev):
    p = tmp_path / "t.csv"
    p.write_text(f'question,answer\nFirst question?,First answer here.\n"Second question?,an answer\n{Q},{A}\n')
    code, out = cli(p, ev)
    assert code == 2 and out == (f"leakcheck: error: {p}: line 3: a quoted field that starts in this row never closes: the rest of the file "
                                 'would be one field; a stray quote? quote the whole field and double the quotes inside it ("")\n')
    p.write_text(f'question,answer\n"Second question?,an answer\n{Q},"{A}"\n')
    assert error_of(p, ev) == (f"{p}: line 2: text follows the closing quote of a field (',' expected after '\"', and the field ran on to line 3); "
                               'a stray quote? quote the whole field and double the quotes inside it ("")')


def test_csv_rows_name_the_line_they_start_on(tmp_path, ev):
    p = tmp_path / "t.csv"
    with open(p, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "answer"])
        w.writerow(["A question\nthat spans\nthree lines?", "Its answer."])
        w.writerow(["   ", "an answer with an empty question"])
    assert error_of(p, ev).startswith(f"{p}: line 5: prompt is empty; ")


# --- Alpaca history, dataset repos with configs ---------------------------------------------

def test_alpaca_history_turns_are_prompt_text(tmp_path):
    """LLaMA-Factory Alpaca: earlier turns sit in history; the same conversation as a chat is an exact copy."""
    tr = write_jsonl(tmp_path / "train.json", [
        {"instruction": "Unrelated instruction text.", "input": "", "output": "Some unrelated output text.", "history": []},
        {"instruction": "And why is that?", "input": "", "output": A, "history": [[Q, "It is Mars."]]},
    ])
    ev = write_jsonl(tmp_path / "eval.jsonl", [{"conversations": [
        {"from": "human", "value": Q}, {"from": "gpt", "value": "It is Mars."},
        {"from": "human", "value": "And why is that?"}, {"from": "gpt", "value": A}]}])
    r = leakcheck.scan(tr, ev, EX)
    assert r.train.format == "alpaca" and r.train.fields["prompt"] == "history+instruction+input"
    assert kinds(r) == [("1", "pair", "exact")]
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"instruction": "x", "output": "y", "history": [["only one"]]}])
    assert error_of(bad, ev) == (f"{bad}: line 1: history is not a list of [prompt, response] pairs (format alpaca, detected from line 1); "
                                 "fix the row, or pass --prompt-field to compare the instruction only, or pass --on-error skip")


def test_a_dataset_repo_with_several_configs(tmp_path):
    repo = tmp_path / "gsm8k"
    shutil.copytree(FIXTURES / "gsm8k_repo", repo)
    for where in (repo, f"{repo}::test"):
        code, out = cli(where, f"{repo}::main/test")
        assert code == 2 and out == f"leakcheck: error: {where}: the dataset has several configs (main, socratic); pick one, e.g. {repo}::main/test\n"
    code, out = cli(f"{repo}::socratic", f"{repo}::main/test")
    assert code == 2 and out == f"leakcheck: error: {repo}::socratic: config socratic has several splits; splits: train, test; e.g. {repo}::socratic/train\n"
    code, out = cli(f"{repo}::nope/test", f"{repo}::main/test")
    assert code == 2 and out == f"leakcheck: error: {repo}::nope/test: the dataset card names no config 'nope'; configs: main, socratic\n"
    r = leakcheck.scan(f"{repo}::socratic/train", f"{repo}::main/test", EX)
    assert [os.path.relpath(f, repo) for f in r.train.files] == ["socratic/train-00000-of-00001.parquet"]
    assert [os.path.relpath(f, repo) for f in r.eval.files] == ["main/test-00000-of-00001.parquet"]
    assert (r.train.records, r.eval.records) == (4, 2) and kinds(r) == [("3", "prompt", "exact")]


def test_config_folders_without_a_card(tmp_path):
    repo = tmp_path / "repo"
    for config in ("en", "fr"):
        (repo / "data" / config).mkdir(parents=True)
        (repo / "data" / config / "test-00000-of-00001.jsonl").write_bytes(row(f"{config}: {Q}"))
    (repo / "data" / "en" / "test-00001-of-00001.jsonl.zst").write_bytes(_zstd_frames(row()))
    (repo / "data" / "en" / "test-extra.arrow").write_bytes(b"")
    code, out = cli(repo, tmp_path / "x.jsonl")
    assert code == 2 and out == f"leakcheck: error: {repo}: the dataset has several configs (en, fr); pick one, e.g. {repo}::en/test\n"
    src = sources.open_source(f"{repo}::en/test")
    assert [os.path.relpath(f, repo) for f in src.files] == ["data/en/test-00000-of-00001.jsonl", "data/en/test-00001-of-00001.jsonl.zst"]
    assert src.unread == (UnreadFile(str(repo / "data" / "en" / "test-extra.arrow"), "not a data file"),)
    with pytest.raises(InputError) as ei:
        sources.open_source(f"{repo}::de/test")
    assert str(ei.value) == f"{repo}::de/test: no config 'de'; configs: en, fr"


def test_card_configs_by_data_dir_and_by_one_path(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for lang in ("en", "fr"):
        (a / lang).mkdir(parents=True)
        (a / lang / "test.jsonl").write_bytes(row(f"{lang}: {Q}"))
    (a / "en" / "train.jsonl").write_bytes(OTHER)
    (a / "README.md").write_text("---\nconfigs:\n- config_name: en\n  data_dir: en\n- config_name: fr\n  data_dir: fr\n  default: true\n---\n")
    b.mkdir()
    (b / "all.jsonl").write_bytes(row())
    (b / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files: all.jsonl\n---\n")
    assert sources.open_source(f"{a}::fr/test").files == (str(a / "fr" / "test.jsonl"),)
    assert sources.open_source(f"{b}::train").files == (str(b / "all.jsonl"),)  # data_files without splits: train, as on the Hub
    for where, message in [
        (f"{a}::test", f"{a}::test: the dataset has several configs (en, fr (default)); pick one, e.g. {a}::en/test"),
        (f"{a}::en", f"{a}::en: config en has several splits (test, train); pick one, e.g. {a}::en/train"),
        (f"{b}::test", f"{b}::test: config default has no split 'test'; splits: train; e.g. {b}::default/train"),
    ]:
        with pytest.raises(InputError) as ei:
            sources.open_source(where)
        assert str(ei.value) == message


# --- pathological lines ---------------------------------------------------------------------

def test_a_10000_deep_json_line_is_a_row_error(tmp_path, ev):
    p = tmp_path / "t.jsonl"
    p.write_bytes(OTHER + b'{"question": ' + b"[" * 10_000 + b"]" * 10_000 + b', "answer": "x"}\n' + row())
    code, out = cli(p, ev)
    assert code == 2 and out == f"leakcheck: error: {p}: line 2: JSON nested deeper than 1024 levels; flatten the record, or pass --on-error skip\n"
    r = leakcheck.scan(p, ev, SKIP)
    assert r.train.skipped == {"too_deep": 1} and kinds(r) == [("2", "pair", "exact")]
    whole = tmp_path / "t.json"
    whole.write_bytes(b"[" * 10_000 + b"]" * 10_000)
    assert error_of(whole, ev) == f"{whole}: line 1 column 1026: JSON nested deeper than 1024 levels; flatten the records"
    chat = '[{"role": "assistant", "content": ' + "[" * 10_000 + "]" * 10_000 + "}]"  # a chat stored as a JSON string
    deep = write_jsonl(tmp_path / "deep.jsonl", [{"question": "q?", "answer": chat}])
    assert error_of(deep, ev) == f"{deep}: line 1: a field is nested too deeply to read; flatten the record, or pass --on-error skip"


def test_a_line_over_the_limit_is_read_past_in_pieces(tmp_path, ev, monkeypatch):
    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 1000)
    p = tmp_path / "t.jsonl"
    p.write_bytes(OTHER + b"\0" * 5000 + b"\n" + row())
    code, out = cli(p, ev)
    assert code == 2 and out == (f"leakcheck: error: {p}: line 2: the line is longer than the 1,000 bytes limit (5,000 bytes, all NUL bytes); "
                                 "the file is binary, or was zero-filled by a crash: regenerate it or cut those bytes out, or pass --on-error skip\n")
    r = leakcheck.scan(p, ev, SKIP)
    assert r.train.skipped == {"line_too_long": 1} and kinds(r) == [("2", "pair", "exact")]
    p.write_bytes(OTHER + json.dumps({"question": "x " * 3000, "answer": "y"}).encode())  # no newline at the end either
    assert error_of(p, ev) == (f"{p}: line 2: the line is longer than the 1,000 bytes limit (6,031 bytes); "
                               "split the record, or check that this is a line-based file, or pass --on-error skip")
    p.write_bytes(OTHER + b"\0" * 10 + b"\n")
    assert error_of(p, ev) == (f"{p}: line 2: the line holds NUL bytes: binary data, not JSON text; the file is binary, or was "
                               "zero-filled by a crash: regenerate it or cut those bytes out, or pass --on-error skip")


def test_shards_read_lines_within_the_limit_and_never_cut_compressed_bytes(tmp_path, monkeypatch):
    """The sharded train path (byte ranges of big JSONL files, Parquet row groups) reads like the readers."""
    from leakcheck.io.shards import iter_shard, plan_shards

    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 1000)
    p = tmp_path / "t.jsonl"
    p.write_bytes(OTHER * 20 + b"\0" * 5000 + b"\n" + row() * 20)
    shards = plan_shards(sources.open_source(p), target_bytes=512)
    assert len(shards) > 2 and {s.kind for s in shards} == {"lines"}
    rows = [r for s in shards for r in iter_shard(s)]
    bad = [r for r in rows if isinstance(r, readers.BadRow)]
    assert [(b.where, b.reason) for b in bad] == [("line 21", "line_too_long")]
    assert [r.where for r in rows] == [f"line {n}" for n in range(1, 42)]
    z = tmp_path / "z.jsonl"
    z.write_bytes(gzip.compress(OTHER * 200 + row()))
    (shard,) = plan_shards(sources.open_source(z), target_bytes=64)
    assert shard.kind == "file" and sum(1 for _ in iter_shard(shard)) == 201
    pq_path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"question": [f"q{i}?" for i in range(40)], "answer": ["a"] * 40}), pq_path, row_group_size=10)
    shards = plan_shards(sources.open_source(pq_path), target_bytes=64)
    assert len(shards) > 1 and [r.number for s in shards for r in iter_shard(s)] == list(range(1, 41))


def test_csv_line_and_field_limits(tmp_path, ev, monkeypatch):
    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 1000)
    p = tmp_path / "t.csv"
    p.write_text("question,answer\n" + "x" * 2000 + ",y\n")
    assert error_of(p, ev) == (f"{p}: line 2: the line is longer than the 1,000 bytes limit (2,002 bytes); "
                               'a stray quote? quote the whole field and double the quotes inside it ("")')
    p.write_text('question,answer\n"' + "word,\n" * 300 + '",y\n')
    assert error_of(p, ev).startswith(f"{p}: line 2: a field is longer than the 1,000 bytes limit (it ran on to line ")


def test_row_numbers_are_1_based(tmp_path, ev):
    p = tmp_path / "t.json"
    p.write_text(json.dumps([{"question": "fine?", "answer": "fine"}, {"question": None, "answer": "x"}]))
    assert error_of(p, ev).startswith(f"{p}: row 2: prompt is null, not text (format gsm8k, detected from rows 1-2); ")
    pq_path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"question": ["fine?", ""], "answer": ["a", "b"]}), pq_path)
    assert error_of(pq_path, ev).startswith(f"{pq_path}: row 2: prompt is empty; ")
    r = leakcheck.scan([{"question": "fine?", "answer": "a"}, {"question": 5.5j, "answer": "b"}], ev, SKIP)
    assert [(s.where, s.reason) for s in r.train.skipped_rows] == [("row 2", "not_text")]
